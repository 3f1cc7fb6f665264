/**
 * Workflow for test/integration/background-bash.test.ts: what the conversation will do for a
 * `run_in_background` Bash call (docs/background.md), reduced to its two activities, on the real
 * worker's queue: start (returns at once), then supervise with a heartbeat timeout.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { BackgroundActivities } from '../../activities/background';
import type { BackgroundOutcome, BackgroundTaskRef, StartBackgroundCommandResult } from '../../common/background';

export async function backgroundCommandWorkflow(input: {
  ref: BackgroundTaskRef;
  command: string;
  activityQueue: string;
}): Promise<{ started: StartBackgroundCommandResult; outcome: BackgroundOutcome }> {
  const { startBackgroundCommand } = proxyActivities<BackgroundActivities>({ taskQueue: input.activityQueue, startToCloseTimeout: '30 seconds' });
  const { superviseBackgroundCommand } = proxyActivities<BackgroundActivities>({
    taskQueue: input.activityQueue,
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '3 seconds',
    retry: { initialInterval: '200 milliseconds', backoffCoefficient: 1 },
  });
  const started = await startBackgroundCommand({ ...input.ref, command: input.command });
  const outcome = await superviseBackgroundCommand(input.ref);
  return { started, outcome };
}
