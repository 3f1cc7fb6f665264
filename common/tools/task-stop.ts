/** TaskStop tool spec (Claude Code's): stop a background task. Pure; run by workflows/background/commands.ts (issue 21). */
import { z } from 'zod';
import { defineTool } from '../tool-spec';

export const taskStopInputSchema = z.strictObject({
  task_id: z.string().min(1).describe('The id of the background task to stop'),
});

export type TaskStopInput = z.infer<typeof taskStopInputSchema>;

export const taskStopToolSpec = defineTool({
  name: 'TaskStop',
  permission: 'none-in-any-mode',
  description: `Stops a running background task by its task id. A background command and every process it started get SIGTERM, then SIGKILL after a short grace; a background agent is cancelled. Stopping a task that already ended does nothing.`,
  inputSchema: taskStopInputSchema,
  isReadOnly: () => false,
  isConcurrencySafe: () => true,
  maxResultSizeChars: 10_000,
  summarize: (input) => `TaskStop ${input.task_id}`,
});
