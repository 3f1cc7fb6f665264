/**
 * Snip (seed §2.7, feature-gated in Claude Code): when the history is long but not yet at the
 * autocompact threshold, drop the oldest rounds instead of summarising. What stays must still be
 * a valid request: the first user message (the task), and whole rounds — a cut never separates a
 * tool_use from its tool_result, and the kept part starts after a complete round. Pure.
 */
import type { TranscriptMessage } from '../../common/messages';
import { roughTokenCount } from './auto';

export interface SnipPlan {
  /** Indexes (in the window) of the messages to drop: [from, to). Empty when nothing can go. */
  from: number;
  to: number;
  tokensFreed: number;
}

/** Estimated tokens of one message. */
export function messageTokens(message: TranscriptMessage): number {
  return message.type === 'compact_boundary' ? 0 : roughTokenCount(JSON.stringify(message.message.content));
}

/**
 * Indexes where the window may be cut (keeping messages[index..]): after a message that leaves no
 * tool_use unanswered, before an assistant reply or a fresh prompt — never before tool results.
 */
export function roundCutPoints(messages: readonly TranscriptMessage[]): number[] {
  const points: number[] = [];
  const open = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (message.type === 'assistant') {
      for (const block of message.message.content) if (block.type === 'tool_use') open.add(block.id);
    } else if (message.type === 'user' && Array.isArray(message.message.content)) {
      for (const block of message.message.content) if (block.type === 'tool_result') open.delete(block.tool_use_id);
    }
    // A cut after message i keeps messages[i + 1..]: valid when nothing is open and the next
    // message is an assistant reply or a fresh prompt (not tool results answering a dropped call).
    const next = messages[i + 1];
    const nextIsResults = next?.type === 'user' && Array.isArray(next.message.content) && next.message.content.some((block) => block.type === 'tool_result');
    if (open.size === 0 && next && !nextIsResults) points.push(i + 1);
  }
  return points;
}

/**
 * Plans dropping the oldest rounds after the first user message until at least `tokensToFree`
 * are freed (or as many rounds as can go while the last round stays).
 */
export function planSnip(window: readonly TranscriptMessage[], tokensToFree: number): SnipPlan {
  const first = window.findIndex((message) => message.type === 'user');
  if (first < 0 || tokensToFree <= 0) return { from: 0, to: 0, tokensFreed: 0 };
  const from = first + 1;
  const points = roundCutPoints(window).filter((point) => point > from);
  // Never drop the most recent round: the last cut point must leave something after it.
  let freed = 0;
  let to = from;
  for (const point of points) {
    if (point >= window.length) break;
    for (let i = to; i < point; i++) freed += messageTokens(window[i]);
    to = point;
    if (freed >= tokensToFree) break;
  }
  if (to === from) return { from: 0, to: 0, tokensFreed: 0 };
  return { from, to, tokensFreed: freed };
}
