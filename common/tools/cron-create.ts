/** CronCreate tool spec (Claude Code's; a job is a Temporal Schedule, activities/background/cron-schedules.ts). Pure; not offered until the workflow wiring (issue 21). */
import { z } from 'zod';
import { CRON_MAX_JOBS, CRON_RECURRING_MAX_AGE_MS } from '../cron';
import { oneLine } from '../cut-text';
import { defineTool } from '../tool-spec';

export const cronCreateInputSchema = z.strictObject({
  cron: z.string().min(1).describe('5-field cron expression in the user\'s local time: "minute hour day-of-month month day-of-week"'),
  prompt: z.string().min(1).describe('The prompt to run when the job fires'),
  recurring: z.boolean().default(true).describe('true (default): fire on every match; false: fire once, then delete the job'),
  durable: z.boolean().default(false).describe('true: the job outlives this conversation; false (default): it is deleted when the conversation ends'),
});

export type CronCreateInput = z.infer<typeof cronCreateInputSchema>;

const maxAgeDays = CRON_RECURRING_MAX_AGE_MS / 86_400_000;

export const cronCreateToolSpec = defineTool({
  name: 'CronCreate',
  permission: 'none',
  description: `Schedules a prompt to run later, once or on a recurring schedule, as a standard 5-field cron expression in the user's local time zone ("0 9 * * 1-5" is 9am on weekdays, local time — no time zone conversion needed).

- One-shot reminders ("at 2:30pm today, check the deploy"): pin minute, hour, day of month and month, with recurring: false.
- Recurring jobs ("every 10 minutes", "weekdays at 9am"): recurring: true. They expire ${maxAgeDays} days after they are created.
- When the time is approximate, avoid minute 0 and 30 (pick e.g. 7 or 43): recurring jobs are also delivered a little late (up to 10% of their period, at most 15 minutes) so that they do not all land at once.
- Jobs fire whether or not the conversation is busy; the prompt is delivered as a new input. A durable job starts the conversation again if it has ended.
- At most ${CRON_MAX_JOBS} jobs. Returns the job id, for CronDelete.`,
  inputSchema: cronCreateInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => false,
  maxResultSizeChars: 10_000,
  summarize: (input) => `CronCreate ${input.cron}: ${oneLine(input.prompt, 40)}`,
});
