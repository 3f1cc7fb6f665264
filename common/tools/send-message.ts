/** SendMessage tool spec (Claude Code's): continue an earlier agent with its context (workflows/background/agents.ts runs it). Pure. */
import { z } from 'zod';
import { oneLine } from '../cut-text';
import { defineTool } from '../tool-spec';

export const sendMessageInputSchema = z.strictObject({
  to: z.string().min(1).describe('The agent to send to: its agent id (or its description, when only one agent has it)'),
  summary: z.string().optional().describe('A few words on what the message asks (shown to the user)'),
  message: z.string().min(1).describe('The message; the agent reads it with its earlier conversation intact'),
});

export type SendMessageInput = z.infer<typeof sendMessageInputSchema>;

export const sendMessageToolSpec = defineTool({
  name: 'SendMessage',
  permission: 'none',
  description: `Sends a message to an agent started earlier in this conversation (an Agent call, in the foreground or with run_in_background: true), by its agent id, which continues with its own transcript intact — use it to ask a follow-up or give more work to an agent that already has the context, instead of starting a new one.

- An agent that has answered (a foreground agent, or a background one waiting) works on the message, and this call returns its answer.
- An agent still working in the background reads the message before its next step; its answer comes as a notification when it finishes.
- An agent that was stopped cannot take messages: start a new one.`,
  inputSchema: sendMessageInputSchema,
  isReadOnly: () => false,
  isConcurrencySafe: () => true,
  maxResultSizeChars: 100_000,
  summarize: (input) => `SendMessage → ${input.to}: ${oneLine(input.summary ?? input.message, 50)}`,
});
