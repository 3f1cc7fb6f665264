/**
 * Time-based microcompact (seed §2.7, src/services/compact/microCompact.ts). When the last
 * assistant reply is older than the gap (default 60 minutes of workflow time), the prompt cache
 * has expired anyway, so the content of old results of compactable tools is cleared — their ids
 * and structure stay, so every tool_use still has its tool_result. The most recent few results
 * are kept. The cache-editing mode needs the API's cache_edits and is not used. Pure.
 */
import type { ToolResultBlock, TranscriptMessage, UserMessage } from '../../common/messages';
import { toolNamesWhere } from '../../common/tool-specs';
import { roughTokenCount } from './auto';

/** Claude Code's compactable tools that exist here (file read, shell, grep, glob, file edit, file write): their specs' `microCompactable`. */
export const COMPACTABLE_TOOLS = toolNamesWhere((spec) => spec.microCompactable === true);
export const CLEARED_TOOL_RESULT = '[Old tool result content cleared]';
export const DEFAULT_MICROCOMPACT_GAP_MS = 60 * 60 * 1000;
/** Results of compactable tools kept whole (the most recent ones). */
export const MICROCOMPACT_KEEP_RECENT = 3;

export interface MicrocompactResult {
  messages: TranscriptMessage[];
  cleared: number;
  tokensFreed: number;
}

/** Workflow time of the last assistant reply in the window, if it was recorded. */
export function lastAssistantTimestamp(messages: readonly TranscriptMessage[]): number | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message.type === 'assistant') return message.timestamp;
  }
  return undefined;
}

/** seed §2.7 evaluateTimeBasedTrigger: the gap since the last reply has passed. */
export function isMicrocompactDue(messages: readonly TranscriptMessage[], now: number, gapMs: number): boolean {
  const last = lastAssistantTimestamp(messages);
  return last !== undefined && now - last > gapMs;
}

/**
 * Clears the content of every compactable tool result but the `keepRecent` most recent ones.
 * Messages that change are new objects; the rest are the same objects (so the transcript keeps
 * their digests).
 */
export function microcompactMessages(messages: readonly TranscriptMessage[], keepRecent = MICROCOMPACT_KEEP_RECENT): MicrocompactResult {
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    if (message.type !== 'assistant') continue;
    for (const block of message.message.content) if (block.type === 'tool_use') toolNames.set(block.id, block.name);
  }
  // Compactable results, newest last: the last `keepRecent` stay.
  const compactable: string[] = [];
  for (const message of messages) {
    if (message.type !== 'user' || typeof message.message.content === 'string') continue;
    for (const block of message.message.content) {
      if (block.type === 'tool_result' && COMPACTABLE_TOOLS.has(toolNames.get(block.tool_use_id) ?? '')) compactable.push(block.tool_use_id);
    }
  }
  const clear = new Set(compactable.slice(0, Math.max(0, compactable.length - keepRecent)));
  let cleared = 0;
  let tokensFreed = 0;
  const out = messages.map((message): TranscriptMessage => {
    if (message.type !== 'user' || typeof message.message.content === 'string') return message;
    let changed = false;
    const content = message.message.content.map((block) => {
      if (block.type !== 'tool_result' || !clear.has(block.tool_use_id)) return block;
      const text = typeof block.content === 'string' ? block.content : block.content.map((part) => part.text).join('');
      if (text === CLEARED_TOOL_RESULT) return block;
      changed = true;
      cleared++;
      tokensFreed += Math.max(0, roughTokenCount(text) - roughTokenCount(CLEARED_TOOL_RESULT));
      const replaced: ToolResultBlock = { ...block, content: CLEARED_TOOL_RESULT };
      return replaced;
    });
    return changed ? ({ ...message, message: { ...message.message, content } } satisfies UserMessage) : message;
  });
  return { messages: out, cleared, tokensFreed };
}
