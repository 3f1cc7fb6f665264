/** TaskCreate tool spec (Claude Code's task list; common/tasks.ts applies it). Pure; not offered until the workflow wiring (issue 21). */
import { z } from 'zod';
import { oneLine } from '../cut-text';
import { defineTool } from '../tool-spec';

export const taskCreateInputSchema = z.strictObject({
  subject: z.string().min(1).describe('A short title in the imperative, e.g. "Run the tests"'),
  description: z.string().describe('What needs to be done, and how to tell it is done'),
  activeForm: z.string().optional().describe('Present continuous form shown while the task is in progress, e.g. "Running the tests"'),
  metadata: z.record(z.string(), z.unknown()).optional().describe('Optional key-value pairs to keep with the task'),
});

export type TaskCreateInput = z.infer<typeof taskCreateInputSchema>;

export const taskCreateToolSpec = defineTool({
  name: 'TaskCreate',
  permission: 'none',
  description: `Adds a task to this conversation's task list, to plan and track multi-step work. New tasks are pending and get the next id (1, 2, …).

Use it for work with three or more distinct steps, or when the user gives a list of things to do; not for a single trivial step. Mark a task in_progress with TaskUpdate when you start it and completed when it is fully done. The task list survives restarts of the agent and is shown to the user.`,
  inputSchema: taskCreateInputSchema,
  // Changes only the conversation's own state, never the workspace.
  isReadOnly: () => true,
  isConcurrencySafe: () => false,
  maxResultSizeChars: 10_000,
  summarize: (input) => `TaskCreate: ${oneLine(input.subject, 60)}`,
});
