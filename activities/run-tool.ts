/**
 * runTool activity: one tool_use, on the host that holds the workspace. Read-only calls simply
 * re-run on retry; mutating calls go through the journal. Output over the tool's budget is
 * persisted and replaced by a preview plus a path (seed §2.7, layer 1), so no payload comes near
 * Temporal's limits. Tool failures are data (`isError`); only infrastructure faults throw.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory, CancelledFailure } from '@temporalio/common';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { RunToolInput, RunToolResult } from '../common/activity-types';
import { concurrencyNeedsFacts, getToolSpec } from '../common/tool-specs';
import { gatherCallFacts } from './permission-facts/gather';
import { TOOL_ERROR_FAILURE_TYPE, type ToolErrorDetails, type ToolHeartbeatDetails, toolCallSummary, toolErrorMessage } from '../common/tool-ui';
import { type RestoreResult, createCheckpointStore } from './checkpoints/store';
import { checkpointBeforeTool } from './checkpoints/before-tool';
import { findProcessesWithEnvironment } from './shell';
import { type JournalEntry, ToolJournal, interruptedWriteOutcome, resumption, workspaceStateDir } from './tool-journal';
import type { ToolExecutionContext, ToolExecutionResult } from './tools';
import { fileVersion } from './tools/files';
import type { ToolEffect } from './tools/types';
import { writeFileChecked } from './tools/write';
import type { Client } from '@temporalio/client';
import { livePublisher } from './live-publisher';
import { NETWORK_REQUEST_UPDATE, type NetworkRequest, type NetworkRequestAnswer } from '../common/network-request';
import type { AskDomain } from './sandbox-network';

export const PREVIEW_CHARS = 2_000;
const HEARTBEAT_INTERVAL_MS = 1_000;
const PROGRESS_TAIL_CHARS = 2_000;
/** The live channel carries a shorter tail: a terminal's worth, sent once per batch. */
const LIVE_TAIL_CHARS = 500;

export interface RunToolDeps {
  stateDir: string;
  executeTool(name: string, input: unknown, context: ToolExecutionContext): Promise<ToolExecutionResult>;
  /** Publishes output progress to the conversation's live channel (issue 10). */
  temporalClient?: Client;
  /** WebFetch's small fast model (activities/small-model.ts); absent: the page itself is the answer. */
  readWithSmallModel?: ToolExecutionContext['readWithSmallModel'];
}

export function createRunTool(deps: RunToolDeps) {
  return createToolRunner(deps).runTool;
}

/**
 * The runTool activity, and the function behind it that returns an error as data — which the
 * local phase of a model call uses to run the reads it prefetches (activities/prefetch-reads.ts),
 * so a prefetched call produces the result this activity would.
 */
export function createToolRunner(deps: RunToolDeps) {
  const journal = new ToolJournal(deps.stateDir);

  /**
   * A call that ends in error fails the activity (non-retryable, BENIGN) with its result in the
   * failure's details, so the Temporal UI shows it in red; the workflow turns it back into the
   * is_error tool_result (common/tool-ui.ts).
   */
  async function runTool(input: RunToolInput): Promise<RunToolResult> {
    const result = await runToolToResult(input);
    if (!result.isError) return result;
    const details: ToolErrorDetails = { content: result.content, persistedPath: result.persistedPath, checkpointId: result.checkpointId };
    throw ApplicationFailure.create({
      type: TOOL_ERROR_FAILURE_TYPE,
      message: toolErrorMessage(toolCallSummary(input.name, input.input), result.content),
      nonRetryable: true,
      details: [details],
      category: ApplicationFailureCategory.BENIGN,
    });
  }

  /** One call in the current activity's context; `signal` (besides the activity's cancellation) stops it early. */
  async function runToolToResult(input: RunToolInput, signal?: AbortSignal): Promise<RunToolResult> {
    const context = Context.current();
    // Heartbeats name the tool and carry its output's tail (the UI's pending activity), and deliver
    // cancellation. Local activities (short read-only tools) cannot heartbeat; cancellation reaches
    // them anyway. From the start: a retry's restore of a checkpoint, or a first checkpoint of a
    // large workspace, takes seconds before the tool runs, and a missed heartbeat timeout would
    // start another attempt (and cancel this one's command) meanwhile.
    const progress = { tail: '' };
    const summary = toolCallSummary(input.name, input.input);
    const beat = context.info.isLocal
      ? () => {}
      : () => context.heartbeat({ tool: input.name, summary, outputTail: progress.tail } satisfies ToolHeartbeatDetails);
    beat();
    const heartbeat = setInterval(beat, HEARTBEAT_INTERVAL_MS);
    try {
      return await runWithHeartbeats(input, context, progress, signal);
    } finally {
      clearInterval(heartbeat);
    }
  }

  async function runWithHeartbeats(input: RunToolInput, context: Context, progress: { tail: string }, signal?: AbortSignal): Promise<RunToolResult> {
    const startedAt = Date.now();
    const mutating = await isMutating(input);
    let entry: JournalEntry | undefined;

    if (mutating) {
      const previous = await journal.get(input.cwd, input.conversationId, input.toolUseId);
      if (previous?.status === 'finished' && previous.result) {
        return { toolUseId: input.toolUseId, ...previous.result, fromJournal: true, ...checkpointOf(previous), durationMs: 0 };
      }
      // Interrupted (the worker died) or cancelled without a user abort (shutdown, heartbeat timeout).
      const resumed = previous && (await resumeInterrupted(previous, input, context.cancellationSignal));
      if (resumed) return resumed;
      // Issue 31: the workspace as it was before the call, durable in the entry before the effect can
      // begin. A retry keeps the first attempt's: by now the workspace may hold part of the effect.
      const checkpoint =
        previous?.checkpointId !== undefined
          ? checkpointFields(previous)
          : ((await checkpointBeforeTool({
              stateDir: deps.stateDir,
              cwd: input.cwd,
              conversationId: input.conversationId,
              toolUseId: input.toolUseId,
              tool: input.name,
            })) ?? {});
      entry = {
        toolUseId: input.toolUseId,
        conversationId: input.conversationId,
        name: input.name,
        input: input.input,
        status: 'recorded',
        phases: 2,
        attempt: context.info.attempt,
        startedAt: new Date().toISOString(),
        host: os.hostname(),
        ...checkpoint,
      };
      await journal.put(input.cwd, entry);
    }
    const recorded = entry;
    /** The tool is about to change something: the journal says what first (issue 24). */
    const beginEffect = recorded
      ? async (effect: ToolEffect) => {
          entry = { ...recorded, status: 'started', effect };
          await journal.put(input.cwd, entry);
        }
      : undefined;

    let result: ToolExecutionResult;
    const live = livePublisher(deps.temporalClient, input.stream);
    try {
      result = await deps.executeTool(input.name, input.input, {
        cwd: input.cwd,
        signal: signal ? AbortSignal.any([context.cancellationSignal, signal]) : context.cancellationSignal,
        onProgress: (chunk: string) => {
          progress.tail = (progress.tail + chunk).slice(-PROGRESS_TAIL_CHARS);
          live?.tool({ type: 'tool_progress', toolUseId: input.toolUseId, tail: progress.tail.slice(-LIVE_TAIL_CHARS) });
        },
        processEnv: mutating ? { [TOOL_USE_MARKER]: input.toolUseId } : undefined,
        access: input.access,
        additionalDirectories: input.additionalDirectories,
        settingSources: input.settingSources,
        sandboxConfig: input.sandbox,
        stateDir: deps.stateDir,
        beginEffect,
        askDomain: input.access?.askForDomains ? askConversation(deps.temporalClient, context, input.toolUseId) : undefined,
        readWithSmallModel: deps.readWithSmallModel,
      });
    } catch (error) {
      if (context.cancellationSignal.aborted) {
        if (entry) await journal.put(input.cwd, { ...entry, status: 'cancelled', finishedAt: new Date().toISOString() });
        throw new CancelledFailure(`${input.name} cancelled`);
      }
      throw error;
    } finally {
      // The output reaches readers before the result does (the workflow publishes that).
      if (context.cancellationSignal.aborted) live?.abandon();
      else await live?.close().catch(() => undefined);
    }

    const budgeted = await applyResultBudget(deps.stateDir, input, result);
    if (entry) {
      await journal.put(input.cwd, { ...entry, status: 'finished', finishedAt: new Date().toISOString(), result: budgeted });
    }
    return { toolUseId: input.toolUseId, ...budgeted, ...checkpointOf(entry), durationMs: Date.now() - startedAt };
  }

  /**
   * A retry's answer for a call whose previous attempt did not finish, or undefined to run it
   * (it never began, or a file write that never began). Every answer is journaled as finished.
   */
  async function resumeInterrupted(previous: JournalEntry, input: RunToolInput, signal: AbortSignal): Promise<RunToolResult | undefined> {
    const plan = resumption(previous, os.hostname());
    if (plan.kind === 'run') return undefined;
    const finish = async (result: { content: string; isError: boolean; persistedPath?: string }): Promise<RunToolResult> => {
      await journal.put(input.cwd, { ...previous, status: 'finished', finishedAt: new Date().toISOString(), result });
      return { toolUseId: input.toolUseId, ...result, fromJournal: true, ...checkpointOf(previous), durationMs: 0 };
    };
    const atMostOnce = (leftover: string, why = '') =>
      finish({
        content:
          `The previous attempt to run this ${input.name} call was interrupted (the worker stopped) after it had started, ` +
          `so it may have partly run. It was not run again.${leftover}${why}` +
          (previous.checkpointId
            ? ` The workspace checkpoint ${previous.checkpointId} taken before it holds the workspace as it was, so rewinding to it undoes the partial effect.`
            : '') +
          ' Check the current state of the workspace before deciding whether to retry it.',
        isError: true,
      });
    if (plan.kind === 'restore-and-run') {
      // Contained (issue 31): nothing outside the workspace's files changed. Its processes must be
      // gone before the restore, or they could write after it; then it runs again as if first.
      const leftover = await stopLeftoverProcesses(previous, { wait: true });
      if (leftover.stillRunning) return atMostOnce(leftover.text, ' Its processes could not be stopped, so the workspace was not restored.');
      const store = createCheckpointStore({ stateDir: deps.stateDir, cwd: input.cwd });
      const restored = await store.restore(plan.checkpointId).then(
        (outcome) => ({ outcome }),
        (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
      );
      const inexact = 'error' in restored ? [restored.error] : restoreInexactness(restored.outcome, input.cwd, deps.stateDir);
      if (inexact.length > 0) {
        Context.current().log.warn('checkpoint restore before a re-run was not exact; answering at most once', {
          toolUseId: input.toolUseId,
          checkpointId: plan.checkpointId,
          reasons: inexact,
        });
        return atMostOnce(leftover.text);
      }
      Context.current().log.info('restored the checkpoint taken before an interrupted contained command; running it again', {
        toolUseId: input.toolUseId,
        checkpointId: plan.checkpointId,
      });
      return undefined;
    }
    if (plan.kind === 'at-most-once') {
      // A command that started may have partly run, so it is not run again blindly.
      return atMostOnce((await stopLeftoverProcesses(previous)).text);
    }
    const { effect } = plan;
    const outcome = interruptedWriteOutcome(effect, await fileVersion(effect.path));
    if (outcome === 'not-begun') return undefined;
    if (outcome === 'done') return finish(await applyResultBudget(deps.stateDir, input, effect.result));
    if (outcome === 'torn') {
      // The journal kept the text: finish the write the way the tool writes (checked, not through a link).
      const refused = await writeFileChecked(effect.path, effect.afterText!, { cwd: input.cwd, signal, access: input.access });
      return finish(refused ?? (await applyResultBudget(deps.stateDir, input, effect.result)));
    }
    return finish({
      content:
        `The previous attempt at this ${input.name} call was interrupted (the worker stopped) while it was writing ${effect.path}, ` +
        `and the file now holds neither what it held before the call nor what the call meant to write: something else has changed it since. ` +
        `It was not run again. Read the file and decide whether the change is still needed.`,
      isError: true,
    });
  }

  return { runTool, runToolToResult };
}

/** Environment variable that marks every process a journaled tool call starts. */
export const TOOL_USE_MARKER = 'DURABLE_AGENT_TOOL_USE_ID';

/**
 * A command of a dead worker keeps running (it has its own process group). The retry finds its
 * processes by the marker in their environment — not by pid, which another process may have
 * been given since — and stops them, so the command cannot go on changing the workspace after
 * the model was told it did not finish. Only the host that ran it can do this.
 */
async function stopLeftoverProcesses(previous: JournalEntry, options: { wait?: boolean } = {}): Promise<{ text: string; stillRunning?: boolean }> {
  // A cancelled attempt killed its own processes; before a restore, look anyway (it costs one /proc scan).
  if (previous.status !== 'started' && !options.wait) return { text: '' };
  if (previous.host !== undefined && previous.host !== os.hostname()) {
    return { text: ` It ran on ${previous.host}; if it is still running there, it may keep changing the workspace.`, stillRunning: true };
  }
  const marker = `${TOOL_USE_MARKER}=${previous.toolUseId}`;
  let pids = await findProcessesWithEnvironment(marker);
  if (pids.length === 0) return { text: '' };
  const text = ' Its processes were still running and have been stopped.';
  const deadline = Date.now() + LEFTOVER_STOP_WAIT_MS;
  for (;;) {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* exited meanwhile */
      }
    }
    if (!options.wait) return { text };
    // SIGKILL is delivered, not done: wait until /proc no longer lists them (a zombie's environ reads empty).
    await new Promise((resolve) => setTimeout(resolve, 50));
    pids = await findProcessesWithEnvironment(marker);
    if (pids.length === 0) return { text };
    if (Date.now() > deadline) return { text, stillRunning: true };
  }
}

/** How long a retry waits for a dead worker's leftover processes to be gone before it restores under them. */
const LEFTOVER_STOP_WAIT_MS = 5_000;

type CheckpointFields = Pick<JournalEntry, 'checkpointId' | 'checkpointComplete' | 'checkpointMs'>;

function checkpointFields(entry: JournalEntry): CheckpointFields {
  return { checkpointId: entry.checkpointId, checkpointComplete: entry.checkpointComplete, checkpointMs: entry.checkpointMs };
}

function checkpointOf(entry: JournalEntry | undefined): { checkpointId?: string } {
  return entry?.checkpointId !== undefined ? { checkpointId: entry.checkpointId } : {};
}

/**
 * Why a restore did not put the workspace back exactly (empty: it did). Paths it left alone are
 * ones the checkpoint could not hold (oversized, special files, nested repositories) that exist
 * now: the interrupted attempt may have made them. The state directory, when inside the
 * workspace, is never captured and is hidden from the sandbox.
 */
function restoreInexactness(outcome: RestoreResult, cwd: string, stateDir: string): string[] {
  const state = path.resolve(stateDir);
  const leftAlone = outcome.leftAlone.filter((entry) => {
    const full = path.resolve(cwd, entry);
    return full !== state && !full.startsWith(`${state}${path.sep}`);
  });
  return [...outcome.warnings, ...(leftAlone.length > 0 ? [`left alone: ${leftAlone.join(', ')}`] : [])];
}

/**
 * Mutating = a known tool whose valid input is not read-only. Invalid input never runs, so it needs
 * no journal. A Bash command is read-only only on its parsed command's facts, gathered here where
 * it runs (issue 29: one Bash analysis); a command that cannot be examined is journaled.
 */
async function isMutating(input: RunToolInput): Promise<boolean> {
  const spec = getToolSpec(input.name);
  if (!spec) return false;
  const parsed = spec.inputSchema.safeParse(input.input);
  if (!parsed.success) return false;
  const facts = concurrencyNeedsFacts(input.name)
    ? await gatherCallFacts({ toolUseId: input.toolUseId, name: input.name, input: input.input }, input.cwd, input.access?.homeDir)
    : undefined;
  return !spec.isReadOnly(parsed.data, facts);
}

/** seed §2.7 layer 1 (applyToolResultBudget), applied where the output is produced. */
async function applyResultBudget(
  stateDir: string,
  input: RunToolInput,
  result: ToolExecutionResult,
): Promise<{ content: string; isError: boolean; persistedPath?: string }> {
  if (result.content.length <= input.maxResultSizeChars) return result;
  const directory = path.join(workspaceStateDir(stateDir, input.cwd), 'tool-results', input.conversationId.replace(/[^a-zA-Z0-9_-]/g, '_'));
  await mkdir(directory, { recursive: true });
  const persistedPath = path.join(directory, `${input.toolUseId.replace(/[^a-zA-Z0-9_-]/g, '_')}.txt`);
  await writeFile(persistedPath, result.content);
  const content =
    `<persisted-output>\nOutput too large (${result.content.length} characters). Full output saved to: ${persistedPath}\n` +
    `Use Read with offset/limit (or Grep) on that file to see more.\n\nPreview (first ${PREVIEW_CHARS} characters):\n` +
    `${result.content.slice(0, PREVIEW_CHARS)}\n...\n</persisted-output>`;
  return { content, isError: result.isError, persistedPath };
}

/**
 * A sandboxed command's request for a domain its allow-list does not name, sent to the conversation
 * that runs the call (the `requestNetworkAccess` update; it waits while a person decides). No client
 * (a local activity, a test without one) or a failed update: refused.
 */
function askConversation(client: Client | undefined, context: Context, toolUseId: string): AskDomain | undefined {
  const workflowId = context.info.workflowExecution?.workflowId;
  if (!client || context.info.isLocal || workflowId === undefined) return undefined;
  return async (host, port) => {
    const request: NetworkRequest = { toolUseId, host, port };
    const answer = await client.workflow
      .getHandle(workflowId)
      .executeUpdate<NetworkRequestAnswer, [NetworkRequest]>(NETWORK_REQUEST_UPDATE, { args: [request] });
    return answer.behavior === 'allow';
  };
}
