/** TaskOutput tool spec (Claude Code's): read a background task's output, optionally waiting for it to end. Pure; run by workflows/background/commands.ts (issue 21). */
import { z } from 'zod';
import { defineTool } from '../tool-spec';

/** Claude Code's defaults: block, 30 s, at most 10 min. */
export const TASK_OUTPUT_DEFAULT_TIMEOUT_MS = 30_000;
export const TASK_OUTPUT_MAX_TIMEOUT_MS = 600_000;

export const taskOutputInputSchema = z.strictObject({
  task_id: z.string().min(1).describe('The id of the background task to read'),
  block: z.boolean().default(true).describe('Wait for the task to finish before returning (default true)'),
  timeout: z
    .number()
    .min(0)
    .max(TASK_OUTPUT_MAX_TIMEOUT_MS)
    .default(TASK_OUTPUT_DEFAULT_TIMEOUT_MS)
    .describe(`How long to wait in milliseconds when blocking (default ${TASK_OUTPUT_DEFAULT_TIMEOUT_MS}, max ${TASK_OUTPUT_MAX_TIMEOUT_MS})`),
});

export type TaskOutputInput = z.infer<typeof taskOutputInputSchema>;

export const taskOutputToolSpec = defineTool({
  name: 'TaskOutput',
  permission: 'none-in-any-mode',
  description: `Reads the output of a background task (a Bash command started with run_in_background, or a background agent) by its task id.

- With block: true (the default) it waits until the task ends or the timeout passes, then returns its status, exit code and output.
- With block: false it returns what the task has written so far.
- You are notified when a background task ends; you do not need to poll. The full output is also in the file named in the result, which you can read with Read.`,
  inputSchema: taskOutputInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  maxResultSizeChars: 30_000,
  summarize: (input) => `TaskOutput ${input.task_id}`,
});
