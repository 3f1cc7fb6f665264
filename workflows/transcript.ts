/**
 * The transcript: the one owner of a conversation's messages (style §14; Claude Code's
 * `QueryEngine.mutableMessages`). Every change goes through this class — appends, tombstones,
 * thinking stripped for a fallback model, tool calls closed after an abort, unanswered inputs
 * dropped. The session layer and the query loop share one instance; everything else reads it.
 *
 * It also names each prefix of itself by a chained digest (`common/digest.ts`), so a model call
 * can carry a reference — length + digest — instead of the messages (architecture notes), and it
 * keeps running sizes so nothing per iteration has to walk the whole list. Pure.
 */
import { EMPTY_CHAIN_DIGEST, chainDigestOfJson } from '../common/digest';
import { type TranscriptMessage, type UserMessage, toolUseBlocksOf } from '../common/messages';
import type { TranscriptSlice } from '../common/worker-messages';
import { createToolResultMessage } from './messages';

/** A prefix of the transcript, by reference: what a model call carries instead of the messages. */
export interface TranscriptRef {
  /** Number of messages in the prefix. */
  length: number;
  /** Chained digest of those messages. */
  digest: string;
  /** Where the API window starts: after the last compact boundary (seed §2.3). */
  from?: number;
}

/** Messages [from, from + messages.length) and the chain digest before them (answer of the slice query). */

/** Told about every change, from the first index that changed (feeds the worker's cache). */
export type TranscriptListener = (from: number, messages: readonly TranscriptMessage[]) => void;

/** Rough tokens of a JSON text: the usual 4 characters per token. */
const CHARS_PER_TOKEN = 4;

export class Transcript {
  private readonly list: TranscriptMessage[] = [];
  /** chain[i] = digest of the first i messages. */
  private readonly chain: string[] = [EMPTY_CHAIN_DIGEST];
  /** bytes[i] / chars[i] = UTF-8 bytes / JSON characters of the first i messages. */
  private readonly bytes: number[] = [0];
  private readonly chars: number[] = [0];
  private listener: TranscriptListener | undefined;
  /** Index of the first message after the last compact boundary. */
  private start = 0;

  constructor(messages: readonly TranscriptMessage[] = []) {
    this.extend(messages);
  }

  /** Where the API window starts: the index after the last compact boundary (0 without one). */
  get windowStart(): number {
    return this.start;
  }

  /** The API window: the messages after the last compact boundary (a copy). */
  window(): TranscriptMessage[] {
    return this.list.slice(this.start);
  }

  /** What continue-as-new carries: the last compact boundary and what follows it (seed §2.7). */
  carried(): TranscriptMessage[] {
    return this.list.slice(Math.max(0, this.start - 1));
  }

  /** The messages, oldest first. Read-only: change them through the methods below. */
  get messages(): readonly TranscriptMessage[] {
    return this.list;
  }

  get length(): number {
    return this.list.length;
  }

  /** A reference to the whole transcript as it is now, with where its API window starts. */
  ref(): TranscriptRef {
    return { length: this.list.length, digest: this.chain[this.list.length], from: this.start };
  }

  /** Digest of the first `length` messages. */
  digestAt(length: number): string {
    if (!Number.isInteger(length) || length < 0 || length > this.list.length) {
      throw new RangeError(`No transcript prefix of length ${length} (the transcript has ${this.list.length} messages)`);
    }
    return this.chain[length];
  }

  /** UTF-8 size of the messages as JSON (what a continue-as-new payload carries). */
  get byteSize(): number {
    return this.bytes[this.list.length];
  }

  /** Estimated tokens of the messages from index `from` on (seed §2.6: the part the last usage report has not counted). */
  estimatedTokensSince(from: number): number {
    const start = Math.min(Math.max(from, 0), this.list.length);
    return Math.ceil((this.chars[this.list.length] - this.chars[start]) / CHARS_PER_TOKEN);
  }

  /** Up to `maxBytes` of messages starting at `from` (at least one, so paging always progresses). */
  slice(from: number, maxBytes = Number.POSITIVE_INFINITY): TranscriptSlice {
    const start = Math.min(Math.max(from, 0), this.list.length);
    let end = start;
    while (end < this.list.length && (end === start || this.bytes[end + 1] - this.bytes[start] <= maxBytes)) end++;
    return { from: start, digestBefore: this.chain[start], messages: this.list.slice(start, end), length: this.list.length };
  }

  /** Registers the one listener told about changes (the workflow feeds the worker's cache with it). */
  onChange(listener: TranscriptListener | undefined): void {
    this.listener = listener;
  }

  append(...messages: TranscriptMessage[]): void {
    if (messages.length === 0) return;
    const from = this.list.length;
    this.extend(messages);
    this.listener?.(from, messages);
  }

  /** A tombstone: takes the message with this uuid out (seed §2.11). */
  remove(uuid: string): void {
    this.replaceFrom((messages) => messages.filter((message) => message.uuid !== uuid));
  }

  /**
   * Thinking signatures are bound to the model that made them; sending them to another model is a
   * 400 (seed §2.8, fallback). Signed thinking and redacted thinking blocks are dropped; an
   * assistant message left with no blocks stays (with none), and the request leaves it out.
   */
  stripSignatureBlocks(): void {
    this.replaceFrom((messages) =>
      messages.map((message) => {
        if (message.type !== 'assistant') return message;
        const content = message.message.content.filter((block) => block.type !== 'redacted_thinking' && !(block.type === 'thinking' && block.signature));
        return content.length === message.message.content.length ? message : { ...message, message: { ...message.message, content } };
      }),
    );
  }

  /**
   * Every tool_use needs a tool_result for the next request to be valid: each one still
   * unanswered gets an error result with `content` (after an abort, or a loop that failed).
   */
  closeDanglingToolUses(content: string, uuid: () => string): UserMessage[] {
    const answered = new Set<string>();
    for (const message of this.list) {
      if (message.type === 'user' && Array.isArray(message.message.content)) {
        for (const block of message.message.content) if (block.type === 'tool_result') answered.add(block.tool_use_id);
      }
    }
    const results: UserMessage[] = [];
    for (const message of this.list) {
      if (message.type !== 'assistant') continue;
      for (const block of toolUseBlocksOf(message)) {
        if (!answered.has(block.id)) results.push(createToolResultMessage(uuid(), block, content, true, message.uuid));
      }
    }
    this.append(...results);
    return results;
  }

  /**
   * Takes out user inputs the model never answered (after the last assistant message) whose uuid
   * is listed: an input that made the request too large would fail every later query the same
   * way. Returns whether any was dropped.
   */
  dropUnansweredInputs(uuids: readonly string[]): boolean {
    const inputs = new Set(uuids);
    // Only the API window counts: an input a compaction already summarised is not in the request.
    const lastAnswered = Math.max(this.list.map((message) => message.type).lastIndexOf('assistant'), this.start - 1);
    const before = this.list.length;
    this.replaceFrom((messages) => messages.filter((message, index) => !(index > lastAnswered && message.type === 'user' && inputs.has(message.uuid))));
    return this.list.length !== before;
  }

  /**
   * Rewrites the API window (microcompact: old tool results cleared). The rewrite returns the
   * same objects for messages it leaves alone, so only what changed is re-digested.
   */
  rewriteWindow(rewrite: (window: readonly TranscriptMessage[]) => TranscriptMessage[]): void {
    const start = this.start;
    this.replaceFrom((messages) => [...messages.slice(0, start), ...rewrite(messages.slice(start))]);
  }

  /** Takes out messages [from, to) of the API window (snip: the oldest rounds). */
  removeFromWindow(from: number, to: number): void {
    const start = this.start;
    if (to <= from) return;
    this.replaceFrom((messages) => [...messages.slice(0, start + from), ...messages.slice(start + to)]);
  }

  /**
   * `/clear`: the conversation starts over with no messages. The digest chain restarts from the
   * empty prefix, and the listener hears "from 0, nothing", so a worker's cache drops what it held
   * and the next model call by reference names only what follows.
   */
  clear(): void {
    this.replaceFrom(() => []);
  }

  /**
   * A rewind (issue 31): the transcript becomes `messages` — a prefix of it, or what an earlier
   * run held before a prompt. The prefix it shares keeps its digests; the listener hears the rest.
   */
  rewindTo(messages: readonly TranscriptMessage[]): void {
    this.replaceFrom(() => [...messages]);
  }

  /** Plain messages for continue-as-new and the history query. */
  toJSON(): TranscriptMessage[] {
    return [...this.list];
  }

  private extend(messages: readonly TranscriptMessage[]): void {
    for (const message of messages) {
      const json = JSON.stringify(message);
      const index = this.list.length;
      this.list.push(message);
      this.chain.push(chainDigestOfJson(this.chain[index], json));
      this.bytes.push(this.bytes[index] + utf8Length(json));
      this.chars.push(this.chars[index] + json.length);
      if (message.type === 'compact_boundary') this.start = index + 1;
    }
  }

  /**
   * Applies a rewrite and keeps the untouched prefix (and its digests): only messages from the
   * first one that changed are re-digested, and the listener hears from there.
   */
  private replaceFrom(rewrite: (messages: readonly TranscriptMessage[]) => TranscriptMessage[]): void {
    const next = rewrite(this.list);
    let same = 0;
    while (same < next.length && same < this.list.length && next[same] === this.list[same]) same++;
    if (same === next.length && same === this.list.length) return;
    this.list.length = same;
    this.chain.length = same + 1;
    this.bytes.length = same + 1;
    this.chars.length = same + 1;
    if (this.start > same) {
      let index = same - 1;
      while (index >= 0 && this.list[index].type !== 'compact_boundary') index--;
      this.start = index + 1;
    }
    const changed = next.slice(same);
    this.extend(changed);
    this.listener?.(same, changed);
  }
}

/** UTF-8 length of a string without allocating its encoding. */
function utf8Length(text: string): number {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) length += 1;
    else if (code < 0x800) length += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      length += 4;
      i++;
    } else length += 3;
  }
  return length;
}
