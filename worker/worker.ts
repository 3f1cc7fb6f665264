/**
 * Builds a worker that hosts conversation workflows and their activities on one task queue.
 * Tests pass a pre-built `workflowBundle` (bundled once per run); the CLI lets the SDK bundle.
 */
import { type NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import path from 'node:path';
import type { Activities } from '../activities';

/** The workflows folder; the SDK's bundler resolves its index.ts. */
export const WORKFLOWS_PATH = path.resolve(__dirname, '..', 'workflows');

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: Activities;
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Extra WorkerOptions (tests shorten shutdown grace, sticky timeouts, ...). */
  overrides?: Partial<WorkerOptions>;
}

export function createWorker(options: CreateWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: options.activities,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    // In-flight Bash commands get this long to finish on SIGTERM before being cancelled.
    shutdownGraceTime: '10 seconds',
    // Cancellation reaches an activity only through a heartbeat response, and heartbeats are
    // throttled to 0.8 × heartbeatTimeout by default (24 s for 30 s): an abort would wait that
    // long while a Bash command keeps changing the workspace. One second keeps abort prompt.
    maxHeartbeatThrottleInterval: '1 second',
    ...options.overrides,
  });
}
