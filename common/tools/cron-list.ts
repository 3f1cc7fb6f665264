/** CronList tool spec (Claude Code's). Pure; not offered until the workflow wiring (issue 21). */
import { z } from 'zod';
import { defineTool } from '../tool-spec';

export const cronListInputSchema = z.strictObject({});

export type CronListInput = z.infer<typeof cronListInputSchema>;

export const cronListToolSpec = defineTool({
  name: 'CronList',
  permission: 'none',
  description:
    "Lists this conversation's scheduled jobs: id, cron expression, whether recurring and durable, when each fires next and expires, and its prompt.",
  inputSchema: cronListInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  maxResultSizeChars: 20_000,
  summarize: () => 'CronList',
});
