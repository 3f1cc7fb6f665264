/**
 * Builds a worker that hosts conversation workflows and their activities on one task queue.
 * Tests pass a pre-built `workflowBundle` (bundled once per run); the CLI lets the SDK bundle.
 */
import { type InjectedSinks, type NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import path from 'node:path';
import type { Activities } from '../activities';
import type { TranscriptCacheSinks } from '../workflows/definitions';
import { type TranscriptCache, processTranscriptCache } from '../activities/transcript-cache';
import { disableWorkflowStackTraces } from './workflow-stack-traces';

/** The workflows folder; the SDK's bundler resolves its index.ts. */
export const WORKFLOWS_PATH = path.resolve(__dirname, '..', 'workflows');

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: Activities;
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** The cache the workflows' sinks feed; must be the one the activities read (default: the process's). */
  transcriptCache?: TranscriptCache;
  /** Payload codecs and failure converter (encrypted history: infra/encryption-codec.ts); default: none. */
  dataConverter?: WorkerOptions['dataConverter'];
  /** Extra WorkerOptions (tests shorten shutdown grace, sticky timeouts, ...). */
  overrides?: Partial<WorkerOptions>;
  /**
   * Keep the SDK's workflow stack traces (the `__stack_trace` query, the UI's "Stack Trace" tab).
   * Default: kept, unless DURABLE_AGENT_WORKFLOW_STACK_TRACES=0 — turning them off saves about half
   * of the workflow thread's CPU per loop iteration but patches how the SDK starts its threads
   * (workflow-stack-traces.ts), so it is an opt-in.
   */
  workflowStackTraces?: boolean;
}

export function createWorker(options: CreateWorkerOptions): Promise<Worker> {
  if (!(options.workflowStackTraces ?? process.env.DURABLE_AGENT_WORKFLOW_STACK_TRACES !== '0')) disableWorkflowStackTraces();
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: options.activities,
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    // In-flight Bash commands get this long to finish on SIGTERM before being cancelled.
    shutdownGraceTime: '10 seconds',
    // Cancellation reaches an activity only through a heartbeat response, and heartbeats are
    // throttled to 0.8 × heartbeatTimeout by default (24 s for 30 s): an abort would wait that
    // long while a Bash command keeps changing the workspace. One second keeps abort prompt.
    maxHeartbeatThrottleInterval: '1 second',
    sinks: transcriptCacheSinks(options.transcriptCache ?? processTranscriptCache),
    // Pollers, sticky queue and eager reservations stay at the SDK defaults (bench/results/dispatch-latency.md):
    // on the project's dev server, maxConcurrentActivityTaskPolls 2 or 20, autoscaling pollers and
    // nonStickyToStickyPollRatio 1 measured within noise of them (interleaved: 16.6 ms per hop defaults, 15.1
    // autoscaling, 16.0 with 20 activity polls; 13–20 ms for all, in varying order, across benchmark runs).
    // maxEagerActivityReservationsPerWorkflowTask 0 loses eager activities (19.8 ms); maxCachedWorkflows 0 (no
    // sticky queue) costs 123–140 ms per hop.
    ...options.overrides,
  });
}

/**
 * The workflow feeds the worker's transcript cache through these (model calls by reference). They
 * run on replay too: a worker that picks a conversation up refills its cache from the history.
 */
export function transcriptCacheSinks(cache: TranscriptCache): InjectedSinks<TranscriptCacheSinks> {
  return {
    transcriptCache: {
      feed: { fn: (info, from, messages) => cache.feed(info.workflowId, from, messages), callDuringReplay: true },
      putContext: { fn: (_info, digest, context) => cache.putContext(digest, context), callDuringReplay: true },
    },
  };
}
