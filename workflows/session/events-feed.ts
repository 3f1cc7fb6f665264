/**
 * The conversation's progress feed (the `events` query, the live channel's `events` topic): every
 * message the session shows people, numbered, cut to a feed-sized copy (the transcript keeps them
 * whole). Its tail and its next number survive continue-as-new, so a client polling across the
 * switch misses nothing.
 */
import type { ConversationEvent } from '../definitions';
import { cutText } from '../../common/cut-text';

const MAX_EVENTS_KEPT = 1000;
/**
 * Events carried across continue-as-new (the feed's tail: clients poll every 250 ms, so a few
 * dozen cover the switch). 200 made the feed ~90% of each continue-as-new input (bench/long-task:
 * 297 of 334 kB).
 */
const EVENTS_CARRIED_OVER = 50;
/** Texts, tool inputs and tool results in the progress feed are cut to this (the transcript keeps them whole). */
const FEED_TOOL_RESULT_CHARS = 2_000;

export class EventsFeed {
  private readonly events: ConversationEvent[];
  private nextSeq: number;

  constructor(
    carried: { nextEventSeq?: number; recentEvents?: ConversationEvent[] } | undefined,
    /** Where each event is also published (the live channel). */
    private readonly publish: (event: ConversationEvent) => void,
  ) {
    this.nextSeq = carried?.nextEventSeq ?? 0;
    this.events = carried?.recentEvents ?? [];
  }

  push(message: ConversationEvent['message']): void {
    const event = { seq: this.nextSeq++, message: trimForFeed(message) };
    this.events.push(event);
    this.publish(event);
    if (this.events.length > MAX_EVENTS_KEPT) this.events.splice(0, this.events.length - MAX_EVENTS_KEPT);
  }

  since(afterSeq: number): { events: ConversationEvent[]; nextSeq: number } {
    return { events: this.events.filter((event) => event.seq >= afterSeq), nextSeq: this.nextSeq };
  }

  get nextEventSeq(): number {
    return this.nextSeq;
  }

  /** What continue-as-new carries: the tail and the next number. */
  carried(): { nextEventSeq: number; recentEvents: ConversationEvent[] } {
    return { nextEventSeq: this.nextSeq, recentEvents: this.events.slice(-EVENTS_CARRIED_OVER) };
  }
}

/** Keeps the events feed (and so query payloads and continue-as-new input) small. */
function trimForFeed(message: ConversationEvent['message']): ConversationEvent['message'] {
  if (message.type === 'assistant') {
    // Tool inputs (a Write's whole file) and long texts are cut; the transcript keeps them.
    const content = message.message.content.map((block) => {
      if (block.type === 'text') return { ...block, text: trimText(block.text) };
      if (block.type === 'tool_use') {
        const input = JSON.stringify(block.input ?? null);
        return input.length > FEED_TOOL_RESULT_CHARS ? { ...block, input: { truncated: trimText(input) } } : block;
      }
      if (block.type === 'thinking') return { ...block, thinking: trimText(block.thinking), signature: undefined };
      // A search's results are shown by title and URL; their encrypted content (kilobytes each) is the model's.
      if (block.type === 'web_search_tool_result' && Array.isArray(block.content)) {
        return { ...block, content: block.content.map((result) => ({ ...result, encrypted_content: '' })) };
      }
      return block;
    });
    return { ...message, message: { ...message.message, content } };
  }
  if (message.type !== 'user') return message;
  if (typeof message.message.content === 'string') return { ...message, message: { ...message.message, content: trimText(message.message.content) } };
  const content = message.message.content.map((block) =>
    block.type === 'tool_result' && typeof block.content === 'string' ? { ...block, content: trimText(block.content) } : block,
  );
  return { ...message, message: { ...message.message, content } };
}

function trimText(text: string): string {
  return cutText(text, FEED_TOOL_RESULT_CHARS);
}
