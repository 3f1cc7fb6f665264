/**
 * Workspace routing (issue 12, "Scale and faults"): with `toolTaskQueue` set, tools (read-only
 * ones too: no local activities across hosts), Stop hooks and session-context loading run on the
 * workspace's task queue — here a workspace worker with only those activities — while workflows
 * and model calls stay on the main queue. Proved by the identity Temporal records for each
 * activity attempt and by where the tool journal was written (each worker has its own state dir).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createActivities } from '../../activities';
import { createWorkspaceWorker } from '../../worker/workspace-worker';
import { type Harness, createHarness, expectValidApiOrder, localActivityType, runToResult } from '../helpers/harness';
import { cli, isolateEnvironment } from '../helpers/cli';

const WORKSPACE_IDENTITY = 'workspace-host@routing-test';
/** The identity of the harness's in-process worker: the SDK's default, pid@hostname. */
const MAIN_IDENTITY = `${process.pid}@${os.hostname()}`;

isolateEnvironment();

let harness: Harness | undefined;
let workspaceWorker: { worker: Worker; running: Promise<void>; connection: NativeConnection; stateDir: string } | undefined;
afterEach(async () => {
  if (workspaceWorker) {
    if (workspaceWorker.worker.getState() === 'RUNNING') workspaceWorker.worker.shutdown();
    await workspaceWorker.running.catch(() => undefined);
    await workspaceWorker.connection.close();
    await rm(workspaceWorker.stateDir, { recursive: true, force: true });
    workspaceWorker = undefined;
  }
  await harness?.close();
  harness = undefined;
});

/** Starts a workspace worker (only workspace activities) on `taskQueue`, with its own state dir. */
async function startWorkspaceWorker(taskQueue: string): Promise<string> {
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-workspace-state-'));
  const connection = await NativeConnection.connect({ address: harness!.address });
  const worker = await createWorkspaceWorker({
    connection,
    namespace: 'default',
    taskQueue,
    activities: createActivities({ anthropic: undefined, stateDir }),
    overrides: { identity: WORKSPACE_IDENTITY, shutdownGraceTime: '1 second' },
  });
  workspaceWorker = { worker, running: worker.run(), connection, stateDir };
  return stateDir;
}

/** Every file under `directory` (relative paths), or [] when it does not exist. */
async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => path.relative(directory, path.join(entry.parentPath, entry.name)));
}

/**
 * activityType@taskQueue → identities of the workers that started its attempts, from the
 * workflow's history; local activities (quick model calls, local reads) as activityType@local.
 */
async function activityWorkers(conversationId: string): Promise<Record<string, string[]>> {
  const { events } = await harness!.client.workflow.getHandle(conversationId).fetchHistory();
  const scheduled = new Map<string, { type: string; taskQueue: string }>();
  const byType: Record<string, string[]> = {};
  const completedBy = new Map<string, string>();
  for (const event of events ?? []) {
    const id = String(event.eventId);
    if (event.activityTaskScheduledEventAttributes) {
      const attributes = event.activityTaskScheduledEventAttributes;
      scheduled.set(id, { type: attributes.activityType!.name!, taskQueue: attributes.taskQueue!.name! });
    }
    if (event.activityTaskStartedEventAttributes) {
      const attributes = event.activityTaskStartedEventAttributes;
      const activity = scheduled.get(String(attributes.scheduledEventId))!;
      (byType[`${activity.type}@${activity.taskQueue}`] ??= []).push(attributes.identity!);
    }
    // A local activity ran on the worker that completed the workflow task its marker belongs to.
    if (event.workflowTaskCompletedEventAttributes) completedBy.set(String(event.eventId), event.workflowTaskCompletedEventAttributes.identity!);
    const localType = localActivityType(event);
    if (localType) (byType[`${localType}@local`] ??= []).push(completedBy.get(String(event.markerRecordedEventAttributes!.workflowTaskCompletedEventId))!);
  }
  return byType;
}

describe('workspace routing', () => {
  it('tools, hooks and session context run on the workspace queue; workflows and model calls on the main one', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'notes.txt' } },
            { type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: 'echo routed >> counter.txt' } },
          ],
        },
        { content: [{ type: 'text', text: 'Routed.' }] },
      ],
    });
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'read on the workspace host\n');
    await writeFile(path.join(harness.workspace, 'CLAUDE.md'), 'Project rule: routing marker 7f3a.\n');
    const workspaceQueue = `${harness.taskQueue}-workspace`;

    // The main worker has every activity, tools included: only the routing keeps tools off it.
    await harness.startWorker();
    const stateDir = await startWorkspaceWorker(workspaceQueue);

    const stopHooks = [{ hooks: [{ type: 'command' as const, command: 'echo hook >> hook.txt' }] }];
    const { result, conversationId } = await runToResult(harness, 'Read and count', { toolTaskQueue: workspaceQueue, stopHooks });

    expect(result).toMatchObject({ subtype: 'success', is_error: false, result: 'Routed.', transitions: ['tool_use'] });
    expect(await readFile(path.join(harness.workspace, 'counter.txt'), 'utf8')).toBe('routed\n');
    expect(await readFile(path.join(harness.workspace, 'hook.txt'), 'utf8')).toBe('hook\n');
    const [first, second] = harness.model.requests;
    expect(JSON.stringify(first.body.messages)).toContain('routing marker 7f3a'); // CLAUDE.md, via the session context
    expectValidApiOrder(second);
    expect(JSON.stringify(second.body.messages)).toContain('read on the workspace host');

    const workers = await activityWorkers(conversationId);
    expect(workers).toEqual({
      [`loadSessionContext@${workspaceQueue}`]: [WORKSPACE_IDENTITY],
      // Issue 22: the MCP configuration (.mcp.json, ~/.claude.json) is read on the workspace's host.
      [`loadMcpConfig@${workspaceQueue}`]: [WORKSPACE_IDENTITY],
      // Hook settings (issue 22) are read where the settings files are.
      [`loadHookSettings@${workspaceQueue}`]: [WORKSPACE_IDENTITY],
      [`runTool@${workspaceQueue}`]: [WORKSPACE_IDENTITY, WORKSPACE_IDENTITY], // Read (not a local activity) and Bash
      [`runStopHooks@${workspaceQueue}`]: [WORKSPACE_IDENTITY],
      // Issue 31: the checkpoint before the prompt is taken on the workspace's host.
      [`checkpointWorkspace@${workspaceQueue}`]: [WORKSPACE_IDENTITY],
      // Permission facts (real paths, the parsed command) are gathered where the tools act: one per call.
      [`gatherPermissionFacts@${workspaceQueue}`]: [WORKSPACE_IDENTITY, WORKSPACE_IDENTITY],
      // Quick model calls: local activities of the workflow's worker, on the main queue.
      [`callModelLocal@local`]: [MAIN_IDENTITY, MAIN_IDENTITY],
    });
    // The mutating tool's journal is on the workspace host's state dir, none on the main worker's.
    expect((await filesUnder(stateDir)).some((file) => file.includes('journal') && file.endsWith('toolu_bash.json'))).toBe(true);
    expect((await filesUnder(harness.stateDir)).filter((file) => file.includes('journal'))).toEqual([]);
  });

  it('without toolTaskQueue, tools and session context run on the main queue', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: 'echo here' } }] },
        { content: [{ type: 'text', text: 'Done.' }] },
      ],
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Run it');
    expect(result).toMatchObject({ subtype: 'success', result: 'Done.' });
    const workers = await activityWorkers(conversationId);
    expect(Object.keys(workers).sort()).toEqual([
      `callModelLocal@local`,
      `checkpointWorkspace@${harness.taskQueue}`,
      `gatherPermissionFacts@local`,
      `loadHookSettings@${harness.taskQueue}`,
      `loadMcpConfig@local`,
      `loadSessionContext@${harness.taskQueue}`,
      `runTool@${harness.taskQueue}`,
    ]);
    for (const identities of Object.values(workers)) for (const identity of identities) expect(identity).toBe(MAIN_IDENTITY);
  });

  it('the CLI: start --workspace-queue routes the conversation; start and worker refuse an empty --workspace-queue', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: 'echo cli' } }] },
        { content: [{ type: 'text', text: 'Via the CLI.' }] },
      ],
    });
    const workspaceQueue = `${harness.taskQueue}-workspace`;
    await harness.startWorker();
    await startWorkspaceWorker(workspaceQueue);
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;

    const started = await cli('start', '--follow', '--cwd', harness.workspace, '--workspace-queue', workspaceQueue, 'Run it');
    expect(started.code, started.err).toBe(0);
    expect(started.out).toContain('Via the CLI.');
    const conversationId = started.out.split('\n')[0].trim();
    const workers = await activityWorkers(conversationId);
    expect(workers[`runTool@${workspaceQueue}`]).toEqual([WORKSPACE_IDENTITY]);
    expect(workers[`loadSessionContext@${workspaceQueue}`]).toEqual([WORKSPACE_IDENTITY]);

    for (const command of ['worker', 'start']) {
      const refused = await cli(command, '--workspace-queue', ' ', ...(command === 'start' ? ['--cwd', harness.workspace, 'Hi'] : []));
      expect(refused.code).toBe(2);
      expect(refused.err).toContain('--workspace-queue needs a task queue name');
    }
  });
});
