/**
 * Message types (seed §2.11). Wire types keep the Anthropic API's snake_case fields; our own
 * envelope types are camelCase. Pure: imported by the workflow bundle and by activities.
 */
import { z } from 'zod';

export const textBlockSchema = z.object({ type: z.literal('text'), text: z.string() });
export const toolUseBlockSchema = z.object({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.unknown(),
});
export const thinkingBlockSchema = z.object({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string().optional(),
});
export const redactedThinkingBlockSchema = z.object({ type: z.literal('redacted_thinking'), data: z.string() });
export const toolResultBlockSchema = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(textBlockSchema)]),
  is_error: z.boolean().optional(),
});

export type TextBlock = z.infer<typeof textBlockSchema>;
export type ToolUseBlock = z.infer<typeof toolUseBlockSchema>;
export type ThinkingBlock = z.infer<typeof thinkingBlockSchema>;
export type RedactedThinkingBlock = z.infer<typeof redactedThinkingBlockSchema>;
export type ToolResultBlock = z.infer<typeof toolResultBlockSchema>;

/** Blocks the model can produce. Unknown server-side block types are kept as opaque records. */
export type AssistantContentBlock = TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock;
/** Blocks a user turn can carry. */
export type UserContentBlock = TextBlock | ToolResultBlock;

/** Token usage as the API reports it. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export const EMPTY_USAGE: Usage = {
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
};

export function addUsage(a: Usage, b: Partial<Usage> | undefined): Usage {
  return {
    input_tokens: a.input_tokens + (b?.input_tokens ?? 0),
    output_tokens: a.output_tokens + (b?.output_tokens ?? 0),
    cache_creation_input_tokens: a.cache_creation_input_tokens + (b?.cache_creation_input_tokens ?? 0),
    cache_read_input_tokens: a.cache_read_input_tokens + (b?.cache_read_input_tokens ?? 0),
  };
}

/** The stop reasons the Messages API reports. */
export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'refusal'
  | 'pause_turn'
  | 'model_context_window_exceeded';

/** One message in API form (what `messages.create` takes). */
export interface ApiMessage {
  role: 'user' | 'assistant';
  content: string | Array<AssistantContentBlock | UserContentBlock>;
}

/** The assistant message as returned by the model activity. */
export interface AssistantApiMessage {
  id: string;
  role: 'assistant';
  model: string;
  content: AssistantContentBlock[];
  stop_reason: StopReason | null;
  usage: Usage;
}

/** A user turn: typed input, tool results, or a meta nudge the loop injected. */
export interface UserMessage {
  type: 'user';
  uuid: string;
  message: { role: 'user'; content: string | UserContentBlock[] };
  /** True for messages the loop wrote (nudges, hook feedback, queued-input wrappers). */
  isMeta?: boolean;
  /** Set on tool-result carriers: which assistant message the results answer. */
  sourceAssistantUuid?: string;
}

/** A model reply. `apiError` marks a withheld, recoverable condition (seed §2.3). */
export interface AssistantMessage {
  type: 'assistant';
  uuid: string;
  message: AssistantApiMessage;
  apiError?: 'max_output_tokens' | 'prompt_too_long' | 'refusal' | 'context_window_exceeded';
}

/** A notice for people (warnings, errors, info); never sent to the model. */
export interface SystemMessage {
  type: 'system';
  uuid: string;
  level: 'info' | 'warning' | 'error';
  content: string;
}

/** Retracts an already-yielded message (streaming fallback, seed §2.3). */
export interface TombstoneMessage {
  type: 'tombstone';
  uuid: string;
  /** uuid of the retracted message */
  target: string;
}

/** Tool progress for status and UIs; never sent to the model. */
export interface ProgressMessage {
  type: 'progress';
  uuid: string;
  toolUseId: string;
  content: string;
}

/** What the query loop yields to the session layer. */
export type Message = UserMessage | AssistantMessage | SystemMessage | TombstoneMessage | ProgressMessage;

/** Messages that belong to the transcript (the history the model sees is derived from these). */
export type TranscriptMessage = UserMessage | AssistantMessage;

export function toolUseBlocksOf(message: AssistantMessage): ToolUseBlock[] {
  return message.message.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
}

export function textOf(message: AssistantMessage): string {
  return message.message.content
    .filter((block): block is TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('');
}

/**
 * Turns transcript messages into the API's alternating user/assistant list. Consecutive messages
 * of one role are merged into one turn (the API requires alternation); in user turns the
 * tool_result blocks come first, as the API demands.
 */
export function normalizeMessagesForApi(messages: readonly TranscriptMessage[]): ApiMessage[] {
  const out: ApiMessage[] = [];
  for (const message of messages) {
    if (message.type === 'assistant') {
      const previous = out[out.length - 1];
      // A paused turn (pause_turn) is continued by a second assistant message: one API turn.
      if (previous && previous.role === 'assistant') {
        previous.content = [...(previous.content as AssistantContentBlock[]), ...message.message.content];
      } else {
        out.push({ role: 'assistant', content: message.message.content });
      }
      continue;
    }
    const blocks: UserContentBlock[] =
      typeof message.message.content === 'string'
        ? [{ type: 'text', text: message.message.content }]
        : message.message.content;
    const previous = out[out.length - 1];
    if (previous && previous.role === 'user' && Array.isArray(previous.content)) {
      const merged = [...(previous.content as UserContentBlock[]), ...blocks];
      previous.content = [
        ...merged.filter((block) => block.type === 'tool_result'),
        ...merged.filter((block) => block.type !== 'tool_result'),
      ];
    } else {
      out.push({ role: 'user', content: [...blocks] });
    }
  }
  return out;
}
