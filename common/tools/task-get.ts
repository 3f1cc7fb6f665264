/** TaskGet tool spec (Claude Code's task list). Pure; not offered until the workflow wiring (issue 21). */
import { z } from 'zod';
import { defineTool } from '../tool-spec';

export const taskGetInputSchema = z.strictObject({
  taskId: z.string().min(1).describe('The id of the task'),
});

export type TaskGetInput = z.infer<typeof taskGetInputSchema>;

export const taskGetToolSpec = defineTool({
  name: 'TaskGet',
  permission: 'none',
  description: `Returns one task of the task list in full: subject, status, owner, description, and the tasks it blocks and is blocked by. Read a task's latest state before updating it.`,
  inputSchema: taskGetInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  maxResultSizeChars: 20_000,
  summarize: (input) => `TaskGet #${input.taskId}`,
});
