/** TaskUpdate tool spec (Claude Code's task list). Pure; not offered until the workflow wiring (issue 21). */
import { z } from 'zod';
import { defineTool } from '../tool-spec';

export const taskUpdateInputSchema = z.strictObject({
  taskId: z.string().min(1).describe('The id of the task to update'),
  subject: z.string().min(1).optional().describe('A new title'),
  description: z.string().optional().describe('A new description'),
  activeForm: z.string().optional().describe('Present continuous form shown while in progress'),
  status: z.enum(['pending', 'in_progress', 'completed', 'deleted']).optional().describe('pending → in_progress → completed; deleted removes the task'),
  addBlocks: z.array(z.string()).optional().describe('Ids of tasks that cannot start until this one completes'),
  addBlockedBy: z.array(z.string()).optional().describe('Ids of tasks that must complete before this one can start'),
  owner: z.string().optional().describe('Who works on it (an agent name)'),
  metadata: z.record(z.string(), z.unknown()).optional().describe('Keys to merge into the task (null deletes a key)'),
});

export type TaskUpdateInput = z.infer<typeof taskUpdateInputSchema>;

export const taskUpdateToolSpec = defineTool({
  name: 'TaskUpdate',
  permission: 'none',
  description: `Updates a task of the task list: its status, subject, description, active form, owner, metadata, or the tasks it blocks / is blocked by.

- Set status to in_progress when you start a task and to completed only when it is fully done (tests pass, nothing partial). If you are blocked, keep it in_progress and create a task for what blocks you.
- Set status to deleted to remove a task that is no longer relevant.
- After completing a task, call TaskList to find the next one.`,
  inputSchema: taskUpdateInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => false,
  maxResultSizeChars: 10_000,
  summarize: (input) => `TaskUpdate #${input.taskId}${input.status ? ` → ${input.status}` : ''}`,
});
