/** CronDelete tool spec (Claude Code's). Pure; not offered until the workflow wiring (issue 21). */
import { z } from 'zod';
import { defineTool } from '../tool-spec';

export const cronDeleteInputSchema = z.strictObject({
  id: z.string().min(1).describe('The job id CronCreate returned (see CronList)'),
});

export type CronDeleteInput = z.infer<typeof cronDeleteInputSchema>;

export const cronDeleteToolSpec = defineTool({
  name: 'CronDelete',
  permission: 'none',
  description: 'Deletes a scheduled job by its id; it will not fire again.',
  inputSchema: cronDeleteInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => false,
  maxResultSizeChars: 10_000,
  summarize: (input) => `CronDelete ${input.id}`,
});
