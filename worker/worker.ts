/**
 * Builds a worker that hosts conversation workflows and their activities on one task queue.
 * `durable-agent worker` passes the bundle it cached in its state directory (worker/workflow-bundles.ts), tests one
 * bundled once per run; without a `workflowBundle` the SDK bundles WORKFLOWS_PATH itself.
 */
import { type InjectedSinks, type NativeConnection, type State, Worker, type WorkerOptions } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { Activities } from '../activities';
import type { TranscriptCacheSinks } from '../workflows/definitions';
import { type TranscriptCache, processTranscriptCache } from '../activities/transcript-cache';
import { abandonModelCallRuns, registerHandoffQueue } from '../activities/model-call-runs';
import { disableWorkflowStackTraces } from './workflow-stack-traces';

/**
 * The workflows folder; the SDK's bundler (webpack) resolves its index.ts. The .ts sources also when the worker runs
 * from dist/: the compiled files' `__dirname` is their source's directory (scripts/build.ts), so the bundle and its
 * build id are the same whether the worker runs compiled or under tsx.
 */
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
  /**
   * Worker Versioning (worker/versioning.ts): this worker's deployment version, its conversations
   * pinned to it. Default: unversioned. The handoff worker stays unversioned: its task queue is this
   * process's own, and a version's task queues must all be polled by the next version before it can
   * become current.
   */
  deployment?: WorkerOptions['workerDeploymentOptions'];
  /**
   * Poll a handoff queue of its own (default true). An older version's Worker in the same process
   * (worker/retained-versions.ts) goes without: its model calls hand over to the main one's queue.
   */
  handoff?: boolean;
}

/**
 * The project's worker: the SDK's Worker for the main task queue, plus an activities-only worker
 * in the same process, on the same connection, polling this process's own handoff queue
 * (Temporal's worker-specific task queues): `callModelLocal` hands a model call that is still
 * streaming over to `callModel` there, which attaches to the stream this process holds.
 * `run()`, `runUntil()`, `shutdown()` and `getState()` cover both; the handoff queue is offered to
 * `callModelLocal` only while the worker runs.
 */
export class AgentWorker extends Worker {
  private handoff: { worker: Worker; taskQueue: string; mainTaskQueue: string; capacity: number; unregister: () => void } | undefined;

  /** This worker's handoff task queue (unique to it). */
  get handoffTaskQueue(): string | undefined {
    return this.handoff?.taskQueue;
  }

  /** @internal createWorker wires the handoff worker in before anything runs. */
  attachHandoffWorker(worker: Worker, taskQueue: string, mainTaskQueue: string, capacity = HANDOFF_STREAMS_PER_PROCESS): void {
    this.handoff = { worker, taskQueue, mainTaskQueue, capacity, unregister: () => undefined };
  }

  override async run(): Promise<void> {
    const handoff = this.handoff;
    if (!handoff || super.getState() !== 'INITIALIZED') return super.run();
    let handoffFailure: unknown;
    const handoffRunning = handoff.worker.run().catch((error: unknown) => {
      // A worker that cannot take handoffs must not keep taking local model calls: stop both.
      handoffFailure = error;
      if (super.getState() === 'RUNNING') this.shutdown();
    });
    const mainRunning = super.run();
    handoff.unregister = registerHandoffQueue(handoff.mainTaskQueue, handoff.taskQueue, handoff.capacity);
    try {
      await mainRunning;
    } finally {
      handoff.unregister();
      if (handoff.worker.getState() === 'RUNNING') handoff.worker.shutdown();
      await handoffRunning;
      // Handed-over streams nobody attached to by now never will be here: stop them (the
      // workflow sends those calls afresh after the attach's schedule-to-start timeout).
      abandonModelCallRuns(handoff.taskQueue);
    }
    if (handoffFailure) throw handoffFailure;
  }

  override shutdown(): void {
    super.shutdown();
    const handoff = this.handoff;
    if (!handoff) return;
    handoff.unregister();
    if (handoff.worker.getState() === 'RUNNING') handoff.worker.shutdown();
  }

  /** The main worker's state, except that it is not STOPPED before the handoff worker is (FAILED if that failed). */
  override getState(): State {
    const main = super.getState();
    const handoff = this.handoff?.worker.getState();
    if (main !== 'STOPPED' || handoff === undefined || handoff === 'STOPPED' || handoff === 'INITIALIZED') return main;
    return handoff === 'FAILED' ? 'FAILED' : 'DRAINING';
  }
}

/** A handoff task queue name unique to this worker: `<queue>-handoff-<host>-<pid>-<random>`. */
export function handoffTaskQueueName(taskQueue: string): string {
  return `${taskQueue}-handoff-${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** The WorkerOptions overrides that apply to an activities-only worker too. */
const ACTIVITY_WORKER_OPTIONS = [
  'identity',
  'shutdownGraceTime',
  'shutdownForceTime',
  'maxHeartbeatThrottleInterval',
  'defaultHeartbeatThrottleInterval',
  'maxConcurrentActivityTaskExecutions',
  'maxConcurrentActivityTaskPolls',
  'activityTaskPollerBehavior',
  'maxActivitiesPerSecond',
] as const satisfies ReadonlyArray<keyof WorkerOptions>;

function activityWorkerOverrides(overrides: Partial<WorkerOptions> | undefined): Partial<WorkerOptions> {
  const picked: Partial<WorkerOptions> = {};
  for (const key of ACTIVITY_WORKER_OPTIONS) {
    if (overrides?.[key] !== undefined) Object.assign(picked, { [key]: overrides[key] });
  }
  return picked;
}

/**
 * Handed-over model streams one worker process attaches to at once (its handoff worker's activity
 * slots). At that many streams in the process, a model call starts as a regular activity instead:
 * a handoff nobody could pick up would wait out its schedule-to-start timeout and be sent again.
 */
export const HANDOFF_STREAMS_PER_PROCESS = 100;

export async function createWorker(options: CreateWorkerOptions): Promise<AgentWorker> {
  if (!(options.workflowStackTraces ?? process.env.DURABLE_AGENT_WORKFLOW_STACK_TRACES !== '0')) disableWorkflowStackTraces();
  const worker = (await AgentWorker.create({
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
    ...(options.deployment ? { workerDeploymentOptions: options.deployment } : {}),
    // Pollers, sticky queue and eager reservations stay at the SDK defaults (bench/results/dispatch-latency.md):
    // on the project's dev server, maxConcurrentActivityTaskPolls 2 or 20, autoscaling pollers and
    // nonStickyToStickyPollRatio 1 measured within noise of them (interleaved: 16.6 ms per hop defaults, 15.1
    // autoscaling, 16.0 with 20 activity polls; 13–20 ms for all, in varying order, across benchmark runs).
    // maxEagerActivityReservationsPerWorkflowTask 0 loses eager activities (19.8 ms); maxCachedWorkflows 0 (no
    // sticky queue) costs 123–140 ms per hop.
    ...options.overrides,
  })) as AgentWorker;
  if (options.handoff === false) return worker;
  const handoffQueue = handoffTaskQueueName(options.taskQueue);
  const handoffOverrides = activityWorkerOverrides(options.overrides);
  const handoffCapacity = handoffOverrides.maxConcurrentActivityTaskExecutions ?? HANDOFF_STREAMS_PER_PROCESS;
  const handoff = await Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: handoffQueue,
    // Only attaches to streams this process holds (and their retries): callModel.
    activities: { callModel: options.activities.callModel },
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    shutdownGraceTime: '10 seconds',
    maxHeartbeatThrottleInterval: '1 second',
    maxConcurrentActivityTaskExecutions: handoffCapacity,
    ...handoffOverrides,
  });
  worker.attachHandoffWorker(handoff, handoffQueue, options.taskQueue, handoffCapacity);
  return worker;
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
