/** SendMessage tool spec (Claude Code's): continue an earlier agent with its context. Pure; not offered until the workflow wiring (issue 21). */
import { z } from 'zod';
import { oneLine } from '../cut-text';
import { defineTool } from '../tool-spec';

export const sendMessageInputSchema = z.strictObject({
  to: z.string().min(1).describe('The agent to send to: its task id (or name)'),
  summary: z.string().optional().describe('A few words on what the message asks (shown to the user)'),
  message: z.string().min(1).describe('The message; the agent reads it with its earlier conversation intact'),
});

export type SendMessageInput = z.infer<typeof sendMessageInputSchema>;

export const sendMessageToolSpec = defineTool({
  name: 'SendMessage',
  description: `Sends a message to an agent started earlier in this conversation (by its task id), which continues with its own transcript intact — use it to ask a follow-up or give more work to an agent that already has the context, instead of starting a new one. A finished agent is resumed; the reply comes back as the agent's next result (a notification when it runs in the background).`,
  inputSchema: sendMessageInputSchema,
  isReadOnly: () => false,
  isConcurrencySafe: () => true,
  maxResultSizeChars: 100_000,
  summarize: (input) => `SendMessage → ${input.to}: ${oneLine(input.summary ?? input.message, 50)}`,
});
