/**
 * The workspace worker: runs only the activities that touch a workspace — tools, Stop hooks,
 * permission facts and session-context loading — on a task queue bound to the host that holds the workspace
 * (`toolTaskQueue` in the conversation config; `--workspace-queue` on the CLI). Workflows and
 * model calls stay on the main task queue, wherever those workers run; this one needs no model
 * key and hosts no workflows. docs/deployment.md, "Workspace routing".
 */
import { type NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Activities } from '../activities';

/** Activities a workspace worker hosts: everything that reads or changes the workspace. */
export const WORKSPACE_ACTIVITY_NAMES = [
  'runTool',
  'runStopHooks',
  'loadSessionContext',
  'gatherPermissionFacts',
  // Issue 22: MCP servers run where the workspace is (a stdio server is a process on that host); hooks too.
  'loadMcpConfig',
  'listMcpServers',
  'callMcpTool',
  'saveMcpApprovals',
  'loadHookSettings',
  'runHooks',
  // Issue 21: a background command runs, is supervised, read and stopped on the workspace's host.
  'startBackgroundCommand',
  'superviseBackgroundCommand',
  'readTaskOutput',
  'stopBackgroundCommand',
  // Issue 31: checkpoints of the workspace, and a rewind's restore.
  'checkpointWorkspace',
  'restoreWorkspace',
  'workspaceChanges',
  'forkWorkspace',
  // Issue 33 §3: a skill's body, from the ~/.claude (or workspace) its entry was read from.
  'loadSkillBody',
] as const satisfies ReadonlyArray<keyof Activities>;

/** The workspace activities out of a full activity set. */
export function workspaceActivities(activities: Activities): Pick<Activities, (typeof WORKSPACE_ACTIVITY_NAMES)[number]> {
  return {
    runTool: activities.runTool,
    runStopHooks: activities.runStopHooks,
    loadSessionContext: activities.loadSessionContext,
    // Permission facts are gathered where the tools act (real paths, the parsed command): issue 17.
    gatherPermissionFacts: activities.gatherPermissionFacts,
    loadMcpConfig: activities.loadMcpConfig,
    listMcpServers: activities.listMcpServers,
    callMcpTool: activities.callMcpTool,
    saveMcpApprovals: activities.saveMcpApprovals,
    loadHookSettings: activities.loadHookSettings,
    runHooks: activities.runHooks,
    startBackgroundCommand: activities.startBackgroundCommand,
    superviseBackgroundCommand: activities.superviseBackgroundCommand,
    readTaskOutput: activities.readTaskOutput,
    stopBackgroundCommand: activities.stopBackgroundCommand,
    checkpointWorkspace: activities.checkpointWorkspace,
    restoreWorkspace: activities.restoreWorkspace,
    workspaceChanges: activities.workspaceChanges,
    forkWorkspace: activities.forkWorkspace,
    loadSkillBody: activities.loadSkillBody,
  };
}

export interface CreateWorkspaceWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  /** The workspace's task queue (the conversations' `toolTaskQueue`). */
  taskQueue: string;
  activities: Activities;
  /** Payload codecs and failure converter (encrypted history: infra/encryption-codec.ts); default: none. */
  dataConverter?: WorkerOptions['dataConverter'];
  /** Extra WorkerOptions (identity, shutdown grace, ...). */
  overrides?: Partial<WorkerOptions>;
}

/** A worker polling only the workspace's task queue, for activities only. */
export function createWorkspaceWorker(options: CreateWorkspaceWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: workspaceActivities(options.activities),
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    // As the main worker (worker/worker.ts): Bash gets 10 s to finish on SIGTERM, and an abort
    // reaches a running command within a second.
    shutdownGraceTime: '10 seconds',
    maxHeartbeatThrottleInterval: '1 second',
    ...options.overrides,
  });
}
