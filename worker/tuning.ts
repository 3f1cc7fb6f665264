/**
 * Worker tuning from the environment: workflow cache size, task slots, pollers (the knobs
 * bench/load.ts measured) and the sticky queue's timeout (docs/deployment.md, "Worker tuning"). Unset variables leave the SDK's
 * defaults; a value that is not a whole number is refused with the variable's name.
 */
import type { WorkerOptions } from '@temporalio/worker';

/** Environment variable → the WorkerOptions field it sets. */
export const WORKER_TUNING_VARIABLES = {
  DURABLE_AGENT_MAX_CACHED_WORKFLOWS: 'maxCachedWorkflows',
  DURABLE_AGENT_MAX_CONCURRENT_WORKFLOW_TASKS: 'maxConcurrentWorkflowTaskExecutions',
  DURABLE_AGENT_MAX_CONCURRENT_ACTIVITIES: 'maxConcurrentActivityTaskExecutions',
  DURABLE_AGENT_MAX_CONCURRENT_LOCAL_ACTIVITIES: 'maxConcurrentLocalActivityExecutions',
  DURABLE_AGENT_WORKFLOW_TASK_POLLERS: 'workflowTaskPollerBehavior',
  DURABLE_AGENT_ACTIVITY_TASK_POLLERS: 'activityTaskPollerBehavior',
  /** Milliseconds a workflow task waits on this worker's sticky queue before any worker may take it (SDK: 10 s). */
  DURABLE_AGENT_STICKY_QUEUE_TIMEOUT_MS: 'stickyQueueScheduleToStartTimeout',
} as const;

export type WorkerTuning = Pick<WorkerOptions, (typeof WORKER_TUNING_VARIABLES)[keyof typeof WORKER_TUNING_VARIABLES]>;

/** A tuning variable with a value the worker cannot use. */
export class WorkerTuningError extends Error {
  override readonly name = 'WorkerTuningError';
}

/** The tuning the environment asks for (only the variables that are set). */
export function workerTuningFromEnvironment(env: NodeJS.ProcessEnv = process.env): WorkerTuning {
  const tuning: WorkerTuning = {};
  for (const [variable, field] of Object.entries(WORKER_TUNING_VARIABLES)) {
    const text = env[variable]?.trim();
    if (text === undefined || text === '') continue;
    // The cache may be 0 (off); slots and pollers need at least one.
    const minimum = field === 'maxCachedWorkflows' ? 0 : 1;
    const value = /^[0-9]+$/.test(text) ? Number(text) : NaN;
    if (!Number.isSafeInteger(value) || value < minimum) {
      throw new WorkerTuningError(`${variable} must be a whole number of at least ${minimum}, got "${env[variable]}".`);
    }
    if (field === 'workflowTaskPollerBehavior' || field === 'activityTaskPollerBehavior') {
      tuning[field] = { type: 'simple-maximum', maximum: value };
    } else {
      tuning[field] = value;
    }
  }
  return tuning;
}
