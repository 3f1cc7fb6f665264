/**
 * Message types (seed §2.11). Wire types keep the Anthropic API's snake_case fields; our own
 * envelope types are camelCase. Pure: imported by the workflow bundle and by activities.
 */
import { z } from 'zod';

export const textBlockSchema = z.object({ type: z.literal('text'), text: z.string() });
/** A text block of the model's, with the web search results it cites (kept and sent back verbatim). */
export type AssistantTextBlock = z.infer<typeof textBlockSchema> & { citations?: WebSearchCitation[] };
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

/**
 * A citation of a web search result (the API's `web_search_result_location`): opaque to us, sent
 * back exactly as the API gave it.
 */
export interface WebSearchCitation {
  type: 'web_search_result_location';
  url: string;
  title: string | null;
  cited_text: string;
  encrypted_index: string;
}

/** A call of a server-side tool (the API's `server_tool_use`): run by the API, never by us; no tool_result answers it. */
export interface ServerToolUseBlock {
  type: 'server_tool_use';
  id: string;
  name: string;
  input: unknown;
  caller?: unknown;
}

/** One web search result; `encrypted_content` must come back unchanged in later requests. */
export interface WebSearchResult {
  type: 'web_search_result';
  url: string;
  title: string;
  encrypted_content: string;
  page_age?: string | null;
}

/** What a web search answered: its results, or the API's error (`max_uses_exceeded`, `too_many_requests`, …). */
export interface WebSearchToolResultBlock {
  type: 'web_search_tool_result';
  tool_use_id: string;
  content: WebSearchResult[] | { type: 'web_search_tool_result_error'; error_code: string };
  caller?: unknown;
}

/** Blocks the model can produce (server tool blocks are kept whole and sent back verbatim). */
export type AssistantContentBlock = AssistantTextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock | ServerToolUseBlock | WebSearchToolResultBlock;
/** Blocks a user turn can carry. */
export type UserContentBlock = TextBlock | ToolResultBlock;

/** Token usage as the API reports it. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** Billed uses of server-side tools (web search); absent when there were none. */
  server_tool_use?: { web_search_requests: number };
}

export const EMPTY_USAGE: Usage = {
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
};

/** Web searches billed in `usage`. */
export function webSearchRequestsOf(usage: Partial<Usage> | undefined): number {
  return usage?.server_tool_use?.web_search_requests ?? 0;
}

/** `usage` with `searches` web searches (the field left out when there are none, as before searches existed). */
function withSearches(usage: Omit<Usage, 'server_tool_use'>, searches: number): Usage {
  return searches === 0 ? usage : { ...usage, server_tool_use: { web_search_requests: searches } };
}

export function addUsage(a: Usage, b: Partial<Usage> | undefined): Usage {
  return withSearches(
    {
      input_tokens: a.input_tokens + (b?.input_tokens ?? 0),
      output_tokens: a.output_tokens + (b?.output_tokens ?? 0),
      cache_creation_input_tokens: a.cache_creation_input_tokens + (b?.cache_creation_input_tokens ?? 0),
      cache_read_input_tokens: a.cache_read_input_tokens + (b?.cache_read_input_tokens ?? 0),
    },
    webSearchRequestsOf(a) + webSearchRequestsOf(b),
  );
}

/** `after` less `before` (a query's share of the session's totals). */
export function subtractUsage(after: Usage, before: Usage): Usage {
  return withSearches(
    {
      input_tokens: after.input_tokens - before.input_tokens,
      output_tokens: after.output_tokens - before.output_tokens,
      cache_creation_input_tokens: after.cache_creation_input_tokens - before.cache_creation_input_tokens,
      cache_read_input_tokens: after.cache_read_input_tokens - before.cache_read_input_tokens,
    },
    webSearchRequestsOf(after) - webSearchRequestsOf(before),
  );
}

/** The stop reasons the Messages API reports. */
export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'refusal' | 'pause_turn' | 'model_context_window_exceeded';

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
  /** The summary that opens the window after a compact boundary (seed §2.7). */
  isCompactSummary?: boolean;
  /**
   * A slash command's message (seed §2.10): a custom command's expanded prompt (`prompt`), or the
   * record of a local command and its output (`local`), which is never sent to the model.
   */
  command?: { name: string; args: string; kind: 'local' | 'prompt' };
}

/** A model reply. `apiError` marks a withheld, recoverable condition (seed §2.3). */
export interface AssistantMessage {
  type: 'assistant';
  uuid: string;
  message: AssistantApiMessage;
  apiError?: 'max_output_tokens' | 'prompt_too_long' | 'refusal' | 'context_window_exceeded';
  /** Workflow time the reply arrived (time-based microcompact measures the gap from it, seed §2.7). */
  timestamp?: number;
}

/**
 * seed §2.7 compact boundary: everything before it was replaced by a summary (the user message
 * right after it) and is no longer sent to the API. Never sent itself.
 */
export interface CompactBoundaryMessage {
  type: 'compact_boundary';
  uuid: string;
  trigger: 'auto' | 'manual' | 'reactive';
  /** Context tokens before compaction, and the estimate after it. */
  preTokens: number;
  postTokens: number;
  /** Messages the summary replaced (the window before compaction). */
  messagesSummarized: number;
  timestamp: number;
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
export type Message = UserMessage | AssistantMessage | CompactBoundaryMessage | SystemMessage | TombstoneMessage | ProgressMessage;

/** Messages that belong to the transcript (the history the model sees is derived from these). */
export type TranscriptMessage = UserMessage | AssistantMessage | CompactBoundaryMessage;

/** Messages after the last compact boundary: what the API sees (seed §2.3 getMessagesAfterCompactBoundary). */
export function getMessagesAfterCompactBoundary<T extends TranscriptMessage>(messages: readonly T[]): T[] {
  let index = messages.length - 1;
  while (index >= 0 && messages[index].type !== 'compact_boundary') index--;
  return messages.slice(index + 1);
}

export function toolUseBlocksOf(message: AssistantMessage): ToolUseBlock[] {
  return message.message.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
}

export function textOf(message: AssistantMessage): string {
  return message.message.content
    .filter((block): block is AssistantTextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('');
}

/** A text block the Messages API accepts: it rejects empty and whitespace-only text. */
export function isSendableText(text: string): boolean {
  return text.trim() !== '';
}

/**
 * A block kept on the wire: the API rejects empty text blocks (a model can stream one) and
 * thinking blocks without a signature.
 */
function isSendableBlock(block: AssistantContentBlock | UserContentBlock): boolean {
  if (block.type === 'text') return isSendableText(block.text);
  if (block.type === 'thinking') return Boolean(block.signature);
  return true;
}

/** What a tool_result with no text says on the wire (the API rejects empty text, "" included). */
export const EMPTY_TOOL_RESULT = '(no content)';

/** A tool_result the API accepts: empty text blocks dropped, nothing left → a placeholder. */
function sendableToolResult(block: ToolResultBlock): ToolResultBlock {
  if (typeof block.content === 'string') return isSendableText(block.content) ? block : { ...block, content: EMPTY_TOOL_RESULT };
  const content = block.content.filter((inner) => isSendableText(inner.text));
  if (content.length === block.content.length && content.length > 0) return block;
  return { ...block, content: content.length > 0 ? content : EMPTY_TOOL_RESULT };
}

/**
 * Turns transcript messages into the API's alternating user/assistant list. Consecutive messages
 * of one role are merged into one turn (the API requires alternation); in user turns the
 * tool_result blocks come first, as the API demands. Blocks the API would reject are left out:
 * empty text blocks, and so messages left without content (an assistant turn that had only
 * thinking blocks, stripped for the fallback model, or a reply that was only an empty text).
 */
export interface NormalizeOptions {
  /**
   * Thinking blocks are signed for the model that wrote them: keep them only on assistant
   * messages for which this says true (seed §2.8: a fallback to another model strips them).
   */
  keepThinkingOf?: (model: string) => boolean;
}

export function normalizeMessagesForApi(messages: readonly TranscriptMessage[], options: NormalizeOptions = {}): ApiMessage[] {
  const out: ApiMessage[] = [];
  for (const message of messages) {
    if (message.type === 'compact_boundary') continue; // callers pass the window after it
    if (message.type === 'user' && message.command?.kind === 'local') continue; // for people, not the model
    if (message.type === 'assistant') {
      const keepThinking = !options.keepThinkingOf || options.keepThinkingOf(message.message.model);
      const content = message.message.content.filter(
        (block) => isSendableBlock(block) && (keepThinking || (block.type !== 'thinking' && block.type !== 'redacted_thinking')),
      );
      if (content.length === 0) continue;
      const previous = out[out.length - 1];
      // A paused turn (pause_turn) is continued by a second assistant message: one API turn.
      if (previous && previous.role === 'assistant') {
        previous.content = [...(previous.content as AssistantContentBlock[]), ...content];
      } else {
        out.push({ role: 'assistant', content });
      }
      continue;
    }
    const raw: UserContentBlock[] = typeof message.message.content === 'string' ? [{ type: 'text', text: message.message.content }] : message.message.content;
    const blocks = raw.filter(isSendableBlock).map((block) => (block.type === 'tool_result' ? sendableToolResult(block) : block));
    if (blocks.length === 0) continue;
    const previous = out[out.length - 1];
    if (previous && previous.role === 'user' && Array.isArray(previous.content)) {
      const merged = [...(previous.content as UserContentBlock[]), ...blocks];
      previous.content = [...merged.filter((block) => block.type === 'tool_result'), ...merged.filter((block) => block.type !== 'tool_result')];
    } else {
      out.push({ role: 'user', content: [...blocks] });
    }
  }
  // A request may end with an assistant turn (a pause_turn continuation); the API rejects a final
  // assistant text that ends in whitespace.
  const last = out[out.length - 1];
  if (last?.role === 'assistant' && Array.isArray(last.content)) {
    const final = last.content[last.content.length - 1];
    if (final?.type === 'text' && final.text !== final.text.trimEnd()) {
      last.content = [...last.content.slice(0, -1), { ...final, text: final.text.trimEnd() }];
    }
  }
  return out;
}

/** seed §2.5 Layer 3: CLAUDE.md and the date travel as a user message, keeping the system prompt cacheable. */
export function prependUserContext(messages: ApiMessage[], userContext: string | undefined): ApiMessage[] {
  if (!userContext?.trim()) return messages;
  const reminder = { type: 'text' as const, text: `<system-reminder>\n${userContext}\n</system-reminder>` };
  const [first, ...rest] = messages;
  if (first && first.role === 'user') {
    const blocks = typeof first.content === 'string' ? [{ type: 'text' as const, text: first.content }] : first.content;
    // tool_result blocks must lead a user turn, so the reminder goes after them
    const results = blocks.filter((block) => block.type === 'tool_result');
    const others = blocks.filter((block) => block.type !== 'tool_result');
    return [{ role: 'user', content: [...results, reminder, ...others] }, ...rest];
  }
  return [{ role: 'user', content: [reminder] }, ...messages];
}

/** The `messages` of a Messages API request for a transcript window (what the worker sends). */
export function buildApiMessages(window: readonly TranscriptMessage[], userContext: string | undefined, options: NormalizeOptions = {}): ApiMessage[] {
  return prependUserContext(normalizeMessagesForApi(window, options), userContext);
}
