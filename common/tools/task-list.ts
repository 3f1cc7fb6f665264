/** TaskList tool spec (Claude Code's task list). Pure; not offered until the workflow wiring (issue 21). */
import { z } from 'zod';
import { defineTool } from '../tool-spec';

export const taskListInputSchema = z.strictObject({});

export type TaskListInput = z.infer<typeof taskListInputSchema>;

export const taskListToolSpec = defineTool({
  name: 'TaskList',
  permission: 'none',
  description: `Lists every task of the task list, one line each: id, status, subject, owner and the open tasks blocking it. Use it to pick the next task (the lowest-numbered pending one that is not blocked) and to check progress.`,
  inputSchema: taskListInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  maxResultSizeChars: 20_000,
  summarize: () => 'TaskList',
});
