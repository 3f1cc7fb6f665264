/**
 * The action of a cron job's Temporal Schedule (issue 21 §5). A Schedule can only start a
 * workflow, and starting the conversation itself would collide with its running id, so the
 * Schedule starts this one: it waits the job's deterministic jitter (a durable timer, common/
 * cron.ts), then one activity delivers the prompt to the conversation — signal-with-start for a
 * durable job, so it fires after the conversation ended or continued as new. Two commands a fire,
 * nothing while the job waits.
 */
import { proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { CronDeliveryResult, CronFireActivities, CronFireInput } from '../common/cron';
import { CRON_FIRE_OPTIONS } from './deps/activity-options';

const { deliverCronPrompt } = proxyActivities<CronFireActivities>(CRON_FIRE_OPTIONS);

export async function cronFireWorkflow(input: CronFireInput): Promise<CronDeliveryResult> {
  if (input.jitterMs > 0) await sleep(input.jitterMs);
  return deliverCronPrompt({ ...input, scheduledAt: workflowInfo().startTime.toISOString() });
}
