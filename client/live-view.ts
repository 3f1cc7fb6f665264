/**
 * Turns the live channel's items into what a reader shows (pure, unit-tested): streamed text as
 * it comes, and — the seed's tombstone (§2.8) — the partial text of a model attempt that was
 * retried or fell back taken back before the next attempt's text, so no answer shows twice.
 */
import { parseCutText } from '../common/cut-text';
import type { ResultMessage } from '../common/result';
import { type ModelAttempt, type ModelStreamItem, type ToolStreamItem, compareAttempts, sameAttempt } from '../common/stream-items';
import type { ConversationEvent } from '../workflows/definitions';

/** One decoded item of the conversation's stream, at its offset. */
export type LiveEntry =
  | { kind: 'event'; offset: number; event: ConversationEvent }
  | { kind: 'model'; offset: number; item: ModelStreamItem }
  | { kind: 'tool'; offset: number; item: ToolStreamItem };

/** What to show, in order. */
export type ViewOp =
  /** Append streamed answer text. */
  | { op: 'text'; text: string }
  /** Take back the last `text` (all of it was appended by `text` ops since the attempt began). */
  | { op: 'retract'; text: string }
  /** The streamed text of a model call is complete (and equals the message's text). */
  | { op: 'text_end' }
  | { op: 'thinking'; text: string }
  /** A conversation event. `textShown`: an assistant message's text has already been shown by `text` ops. */
  | { op: 'event'; event: ConversationEvent; textShown: boolean }
  | { op: 'tool'; item: ToolStreamItem };

const attemptKey = (call: ModelAttempt) => `${call.requestId}#${call.fallback}#${call.attempt}`;

export class LiveView {
  private open: { call: ModelAttempt; text: string; index: number } | undefined;
  private readonly abandoned = new Set<string>();
  private readonly finished = new Set<string>();

  /** The ops for one entry. */
  apply(entry: LiveEntry): ViewOp[] {
    if (entry.kind === 'tool') return [{ op: 'tool', item: entry.item }];
    if (entry.kind === 'model') return this.model(entry.item);
    return this.event(entry.event);
  }

  private model(item: ModelStreamItem): ViewOp[] {
    const call = item.call;
    if (this.abandoned.has(attemptKey(call)) || this.finished.has(call.requestId)) return []; // late items of a dead attempt
    const ops: ViewOp[] = [];
    if (this.open && !sameAttempt(this.open.call, call)) {
      // An older attempt of the same call (published late by a worker that lost it) is ignored.
      if (this.open.call.requestId === call.requestId && compareAttempts(call, this.open.call) < 0) return [];
      ops.push(...this.abandonOpen());
    }
    this.open ??= { call, text: '', index: -1 };
    const open = this.open;
    if (item.type === 'text_delta') {
      // Text blocks of one message are separated by a blank line, as the final answer shows them.
      const text = (open.text !== '' && item.index !== open.index ? '\n\n' : '') + item.text;
      open.index = item.index;
      open.text += text;
      ops.push({ op: 'text', text });
    } else if (item.type === 'thinking_delta') {
      ops.push({ op: 'thinking', text: item.thinking });
    }
    return ops;
  }

  private abandonOpen(): ViewOp[] {
    if (!this.open) return [];
    const { call, text } = this.open;
    this.abandoned.add(attemptKey(call));
    this.open = undefined;
    return text === '' ? [] : [{ op: 'retract', text }];
  }

  private event(event: ConversationEvent): ViewOp[] {
    const message = event.message;
    if (message.type !== 'assistant') {
      // A query that ends with an attempt open (aborted, failed) leaves no assistant message for
      // it: its text stays, as Claude Code leaves an interrupted answer on screen.
      const ops: ViewOp[] = [];
      if (message.type === 'result' && this.open) {
        this.finished.add(this.open.call.requestId);
        if (this.open.text !== '') ops.push({ op: 'text_end' });
        this.open = undefined;
      }
      return [...ops, { op: 'event', event, textShown: false }];
    }
    const blocks = message.message.content.filter((block) => block.type === 'text' && block.text !== '') as Array<{ text: string }>;
    const open = this.open;
    this.open = undefined;
    if (open) this.finished.add(open.call.requestId);
    if (open && open.text !== '' && streamedMatches(open.text, blocks)) return [{ op: 'text_end' }, { op: 'event', event, textShown: true }];
    // The message differs from what streamed (an attempt that published nothing, a trimmed feed): it wins.
    const ops: ViewOp[] = open && open.text !== '' ? [{ op: 'retract', text: open.text }] : [];
    return [...ops, { op: 'event', event, textShown: false }];
  }
}

/**
 * Whether the streamed text is the message's text blocks (separated by a blank line). The feed
 * cuts long texts to a head and `… (N characters)`, so a cut block matches on its head and length.
 */
export function streamedMatches(streamed: string, blocks: ReadonlyArray<{ text: string }>): boolean {
  let rest = streamed;
  for (const [index, { text }] of blocks.entries()) {
    if (index > 0) {
      if (!rest.startsWith('\n\n')) return false;
      rest = rest.slice(2);
    }
    const cut = parseCutText(text);
    const length = cut && rest.startsWith(cut.head) ? cut.length : text.length;
    if (rest.length < length || !rest.startsWith(cut && length > cut.head.length ? cut.head : text)) return false;
    rest = rest.slice(length);
  }
  return rest === '';
}

/** Whether `event` is the result answering the input `inputUuid`. */
export function answers(event: ConversationEvent, inputUuid: string): event is ConversationEvent & { message: ResultMessage } {
  return event.message.type === 'result' && (event.message.input_uuid === inputUuid || (event.message.input_uuids?.includes(inputUuid) ?? false));
}
