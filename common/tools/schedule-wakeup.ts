/** ScheduleWakeup tool spec (Claude Code's; common/background.ts planWakeup decides it). Pure; not offered until the workflow wiring (issue 21). */
import { z } from 'zod';
import { WAKEUP_MAX_SECONDS, WAKEUP_MIN_SECONDS } from '../background';
import { oneLine } from '../cut-text';
import { defineTool } from '../tool-spec';

export const scheduleWakeupInputSchema = z.strictObject({
  delaySeconds: z.number().describe(`Seconds from now until the wakeup (kept within ${WAKEUP_MIN_SECONDS}-${WAKEUP_MAX_SECONDS})`),
  reason: z.string().min(1).describe('Why, in a few words (shown to the user)'),
  prompt: z.string().min(1).describe('The prompt you will receive when the wakeup fires'),
});

export type ScheduleWakeupInput = z.infer<typeof scheduleWakeupInputSchema>;

export const scheduleWakeupToolSpec = defineTool({
  name: 'ScheduleWakeup',
  permission: 'none',
  description: `Schedules this conversation to wake you up later with a prompt: use it to pace a /loop yourself (check a deploy again in 5 minutes, poll a slow job) instead of waiting in a command.

- The delay is kept between ${WAKEUP_MIN_SECONDS} s and ${WAKEUP_MAX_SECONDS} s.
- The wakeup is a durable timer: it fires even if the agent's workers restart in the meantime. When it fires, the prompt arrives as your next input.
- To keep looping, schedule the next wakeup when you handle this one; to stop, do not schedule another.`,
  inputSchema: scheduleWakeupInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => false,
  maxResultSizeChars: 10_000,
  summarize: (input) => `ScheduleWakeup ${input.delaySeconds}s: ${oneLine(input.reason, 50)}`,
});
