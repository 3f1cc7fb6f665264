/** Worker tuning variables (worker/tuning.ts): what each sets, and clear errors for bad values. */
import { describe, expect, it } from 'vitest';
import { WorkerTuningError, workerTuningFromEnvironment } from '../../worker/tuning';

describe('workerTuningFromEnvironment', () => {
  it('sets nothing when no variable is set (the SDK defaults apply)', () => {
    expect(workerTuningFromEnvironment({})).toEqual({});
  });

  it('maps each variable to its WorkerOptions field', () => {
    expect(
      workerTuningFromEnvironment({
        DURABLE_AGENT_MAX_CACHED_WORKFLOWS: '1000',
        DURABLE_AGENT_MAX_CONCURRENT_WORKFLOW_TASKS: '40',
        DURABLE_AGENT_MAX_CONCURRENT_ACTIVITIES: ' 20 ',
        DURABLE_AGENT_MAX_CONCURRENT_LOCAL_ACTIVITIES: '100',
        DURABLE_AGENT_WORKFLOW_TASK_POLLERS: '4',
        DURABLE_AGENT_ACTIVITY_TASK_POLLERS: '3',
        DURABLE_AGENT_STICKY_QUEUE_TIMEOUT_MS: '2000',
        DURABLE_AGENT_UNRELATED: 'x',
      }),
    ).toEqual({
      maxCachedWorkflows: 1000,
      maxConcurrentWorkflowTaskExecutions: 40,
      maxConcurrentActivityTaskExecutions: 20,
      maxConcurrentLocalActivityExecutions: 100,
      workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 4 },
      activityTaskPollerBehavior: { type: 'simple-maximum', maximum: 3 },
      stickyQueueScheduleToStartTimeout: 2000,
    });
  });

  it('allows a cache of 0 (off) but no 0 slots or pollers; an empty value is unset', () => {
    expect(workerTuningFromEnvironment({ DURABLE_AGENT_MAX_CACHED_WORKFLOWS: '0', DURABLE_AGENT_ACTIVITY_TASK_POLLERS: '' })).toEqual({
      maxCachedWorkflows: 0,
    });
    expect(() => workerTuningFromEnvironment({ DURABLE_AGENT_MAX_CONCURRENT_ACTIVITIES: '0' })).toThrow(
      'DURABLE_AGENT_MAX_CONCURRENT_ACTIVITIES must be a whole number of at least 1, got "0".',
    );
  });

  it.each(['1e3', '0x10', '-5', '2.5', 'many'])('refuses %j with the variable name', (value) => {
    expect(() => workerTuningFromEnvironment({ DURABLE_AGENT_MAX_CACHED_WORKFLOWS: value })).toThrow(WorkerTuningError);
    expect(() => workerTuningFromEnvironment({ DURABLE_AGENT_MAX_CACHED_WORKFLOWS: value })).toThrow(
      `DURABLE_AGENT_MAX_CACHED_WORKFLOWS must be a whole number of at least 0, got "${value}"`,
    );
  });
});
