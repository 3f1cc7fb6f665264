/**
 * `/loop [interval] <prompt>` (issue 21 §4), as Claude Code's: without an interval the prompt runs
 * now and the model paces the next runs itself with ScheduleWakeup; with one it becomes a
 * recurring session-only cron job (CronCreate's path) and also runs now.
 */
import { WAKEUP_MAX_SECONDS, parseLoopArguments } from '../../common/background';
import type { PendingInput } from '../definitions';
import type { CronJobs } from './cron-jobs';

/** The instruction that comes with a self-paced loop's prompt. */
export function selfPacedLoopPrompt(prompt: string, minimumSeconds: number): string {
  return [
    prompt,
    '',
    `This is a /loop without a fixed interval: when you have done the above, decide when it should run again and call ScheduleWakeup (delaySeconds between ${minimumSeconds} and ${WAKEUP_MAX_SECONDS}, reason, and this same prompt) — sooner while things change, later when they are quiet. To end the loop, do not schedule another wakeup and say so.`,
  ].join('\n');
}

/** What `/loop` does: a query to run now, or a message when it cannot. */
export async function runLoopCommand(
  host: { cron: CronJobs; wakeupMinimumSeconds: number; info(text: string): void },
  input: PendingInput,
  args: string,
): Promise<{ query: PendingInput } | { answer: string; isError: boolean }> {
  const parsed = parseLoopArguments(args);
  if (!parsed.ok) return { answer: parsed.error, isError: true };
  const { prompt, interval } = parsed.loop;
  const command = { name: 'loop', args };
  if (!interval) return { query: { prompt: selfPacedLoopPrompt(prompt, host.wakeupMinimumSeconds), uuid: input.uuid, command } };
  const created = await host.cron.create({ cron: interval.cron, prompt, recurring: true, durable: false }, `/loop ${interval.text}: schedule`);
  if (created.isError) return { answer: `/loop: ${created.content}`, isError: true };
  host.info(`/loop every ${interval.text}${interval.note ? ` (${interval.note})` : ''}: ${created.content}`);
  return { query: { prompt, uuid: input.uuid, command } };
}
