/**
 * The checkpoint activities a conversation calls (issue 31), on the workspace's host like the
 * tools: a checkpoint before each prompt, a rewind's restore (after a checkpoint of the workspace
 * as it is, so the rewind can be undone), and what changed since each checkpoint (for `/rewind`
 * and `durable-agent checkpoints`). The checkpoints before mutating tool calls are taken by
 * runTool itself (activities/run-tool.ts). A retried attempt finds the checkpoint an earlier one
 * took by its request id, instead of taking another of a workspace it may have half restored.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  CHANGED_PATHS_LISTED,
  type CheckpointWorkspaceInput,
  type CheckpointWorkspaceResult,
  type ForkWorkspaceInput,
  type ForkWorkspaceResult,
  type RestoreWorkspaceInput,
  type RestoreWorkspaceResult,
  type WorkspaceChangesInput,
  type WorkspaceChangesResult,
} from '../../common/checkpoints';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { workspaceStateDir } from '../tool-journal';
import { type CheckpointStore, checkpointsDisabled, createCheckpointStore } from './store';

export const CHECKPOINT_FAILURE_TYPE = 'CheckpointFailure';

/** How often a workspace's store is pruned (at a prompt's checkpoint), and how young an unreachable object survives it. */
export const PRUNE_INTERVAL_MS = 24 * 60 * 60 * 1000;
const PRUNE_GRACE_SECONDS = 60 * 60;

/**
 * The documented policy (docs/checkpoints.md, Pruning): once a day per workspace, at a prompt's
 * checkpoint, keep per conversation the newest 100 checkpoints before prompts (and the newest 100
 * before tools) no older than 30 days. A failure is logged: it never stops the prompt.
 */
async function pruneWhenDue(store: CheckpointStore, context: Context): Promise<void> {
  const stamp = path.join(store.dir, 'last-prune');
  const last = await stat(stamp).then(
    (info) => info.mtimeMs,
    () => undefined,
  );
  const now = Date.now();
  if (last !== undefined && now - last < PRUNE_INTERVAL_MS) return;
  try {
    await mkdir(store.dir, { recursive: true });
    await writeFile(stamp, new Date(now).toISOString());
    if (last === undefined) return; // a new store: the first prune is a day from now
    const pruned = await store.prune({ graceSeconds: PRUNE_GRACE_SECONDS });
    context.log.info('Pruned workspace checkpoints', { ...pruned });
  } catch (error) {
    context.log.warn('Could not prune workspace checkpoints', { error: String(error) });
  }
}

export function createCheckpointActivities(deps: { stateDir: string }) {
  const storeFor = (cwd: string): CheckpointStore => createCheckpointStore({ stateDir: deps.stateDir, cwd });

  /** The checkpoint an earlier attempt of this request took, if any (only looked for on a retry). */
  async function earlier(store: CheckpointStore, conversationId: string, requestKey: string): Promise<string | undefined> {
    if (Context.current().info.attempt <= 1) return undefined;
    const listed = await store.list(conversationId);
    return listed.find((checkpoint) => checkpoint.label.toolUseId === requestKey)?.id;
  }

  async function checkpointWorkspace(input: CheckpointWorkspaceInput): Promise<CheckpointWorkspaceResult> {
    if (checkpointsDisabled()) {
      throw ApplicationFailure.create({
        type: CHECKPOINT_FAILURE_TYPE,
        message: 'checkpoints are off on this worker (DURABLE_AGENT_CHECKPOINTS=0)',
        nonRetryable: true,
      });
    }
    const store = storeFor(input.cwd);
    const key = `${input.reason}:${input.requestId}`;
    const found = await earlier(store, input.conversationId, key);
    if (found) return { id: found, files: 0, ms: 0, skipped: 0, warnings: [] };
    await pruneWhenDue(store, Context.current());
    const taken = await store.take({ conversationId: input.conversationId, reason: input.reason, toolUseId: key, prompt: input.prompt });
    Context.current().log.info('Workspace checkpoint', { id: taken.id, files: taken.files, ms: taken.ms, reason: input.reason });
    return { id: taken.id, files: taken.files, ms: taken.ms, skipped: taken.skipped.length, warnings: taken.warnings };
  }

  async function restoreWorkspace(input: RestoreWorkspaceInput): Promise<RestoreWorkspaceResult> {
    const store = storeFor(input.cwd);
    const key = `before-rewind:${input.requestId}`;
    const undoCheckpointId =
      (await earlier(store, input.conversationId, key)) ??
      (await store.take({ conversationId: input.conversationId, reason: 'before-rewind', toolUseId: key, prompt: input.prompt })).id;
    try {
      const restored = await store.restore(input.checkpointId);
      return { undoCheckpointId, ...restored };
    } catch (error) {
      // A missing checkpoint (pruned, another host's store) or a git command running in the workspace: said, not retried blindly.
      const message = error instanceof Error ? error.message : String(error);
      throw ApplicationFailure.create({
        type: CHECKPOINT_FAILURE_TYPE,
        message: `Could not restore checkpoint ${input.checkpointId}: ${message}`,
        nonRetryable: /lock|not a valid|unknown revision|bad object|does not exist/i.test(message),
      });
    }
  }

  async function workspaceChanges(input: WorkspaceChangesInput): Promise<WorkspaceChangesResult> {
    const store = storeFor(input.cwd);
    const result: WorkspaceChangesResult = {};
    for (const id of input.checkpointIds) {
      try {
        const changes = await store.diff(id);
        result[id] = { count: changes.length, paths: changes.slice(0, CHANGED_PATHS_LISTED).map((change) => change.path) };
      } catch (error) {
        result[id] = { error: error instanceof Error ? error.message : String(error) };
      }
    }
    return result;
  }

  /**
   * A fork's workspace: the checkpoint's files (and, for a repository, a git repository of its
   * own) in a new directory beside the parent's, or `targetDir`. A retry starts the directory
   * over if an earlier attempt of this request made it (a marker in the state directory says so).
   */
  async function forkWorkspace(input: ForkWorkspaceInput): Promise<ForkWorkspaceResult> {
    const store = storeFor(input.cwd);
    const parent = path.resolve(input.cwd);
    const target = input.targetDir ? path.resolve(parent, input.targetDir) : `${parent}-fork-${input.requestId.replace(/[^0-9a-f]/gi, '').slice(0, 8)}`;
    if (target === parent || target.startsWith(`${parent}${path.sep}`)) {
      throw ApplicationFailure.create({
        type: CHECKPOINT_FAILURE_TYPE,
        message: `A fork's workspace cannot be inside its parent's (${target})`,
        nonRetryable: true,
      });
    }
    const key = `fork:${input.requestId}`;
    const checkpointId =
      input.checkpointId ??
      (await earlier(store, input.conversationId, key)) ??
      (await store.take({ conversationId: input.conversationId, reason: 'fork', toolUseId: key })).id;
    const marker = path.join(workspaceStateDir(deps.stateDir, parent), 'forks', `${input.requestId.replace(/[^a-zA-Z0-9_-]/g, '_')}.json`);
    if (await readFile(marker, 'utf8').catch(() => undefined)) await rm(target, { recursive: true, force: true });
    const entries = await readdir(target).catch(() => [] as string[]);
    if (entries.length > 0) {
      throw ApplicationFailure.create({
        type: CHECKPOINT_FAILURE_TYPE,
        message: `The fork's workspace ${target} exists and is not empty: choose another with --cwd`,
        nonRetryable: true,
      });
    }
    await mkdir(path.dirname(marker), { recursive: true });
    await writeFile(marker, JSON.stringify({ target, checkpointId, conversationId: input.conversationId }));
    const made = await store.materialize(checkpointId, target, { withGit: true });
    Context.current().log.info('Forked workspace', { target, files: made.files, git: made.git });
    return { cwd: target, files: made.files, git: made.git, checkpointId };
  }

  return { checkpointWorkspace, restoreWorkspace, workspaceChanges, forkWorkspace };
}
