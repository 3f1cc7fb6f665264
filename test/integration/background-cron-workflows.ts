/**
 * Workflows for test/integration/background-cron.test.ts: the real cron fire workflow, and a
 * stand-in conversation that records the cron fires it is signalled (the conversation's own cron
 * signal is next session's wiring).
 */
import { condition, defineQuery, defineSignal, setHandler } from '@temporalio/workflow';
import type { CronFire } from '../../common/cron';

export { cronFireWorkflow } from '../../workflows/cron-fire';

export const cronFiredSignal = defineSignal<[CronFire]>('cronFired');
export const firesQuery = defineQuery<CronFire[]>('fires');
export const finishSignal = defineSignal('finish');

export async function cronTargetWorkflow(label: string): Promise<{ label: string; fires: CronFire[] }> {
  const fires: CronFire[] = [];
  let finished = false;
  setHandler(cronFiredSignal, (fire) => void fires.push(fire));
  setHandler(firesQuery, () => fires);
  setHandler(finishSignal, () => void (finished = true));
  await condition(() => finished);
  return { label, fires };
}
