/**
 * The conversation's live channel (issue 10), on Temporal's `@temporalio/workflow-streams`: an
 * offset-addressed log clients long-poll (an update), fed by this workflow (events, tool starts
 * and results: in memory, no history) and by activities (model deltas, Bash output: one signal
 * per batch). Its state travels across continue-as-new, so a reader resumes at its offset.
 * A conversation configured without it has no stream (clients fall back to polling the `events`
 * query).
 */
import { defaultPayloadConverter, defineQuery } from '@temporalio/workflow';
import { WorkflowStream, type WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import { STREAM_TOPICS, type ToolStreamItem } from '../../common/stream-items';
import type { ConversationEvent } from '../definitions';
import { cutText, cutTextAgain } from '../../common/cut-text';

/** One item of the live channel as `liveRead` returns it: decoded, at its global offset. */
export interface LiveReadItem {
  topic: string;
  offset: number;
  data: unknown;
}

/** `liveRead`'s answer: the items from an offset (null: the run has no live channel). */
export interface LiveRead {
  items: LiveReadItem[];
  /** Where the next read starts. */
  nextOffset: number;
  /** More items are ready now (this answer was cut at LIVE_READ_MAX_BYTES). */
  moreReady: boolean;
}

/**
 * `liveRead` query: the live channel's items from an offset, at once (no waiting). A reader that
 * is following a busy conversation reads with it, so it writes no history: every long poll of the
 * library (an update) is two history events and a workflow task, and a poll per streamed batch
 * filled the UI's timeline (issue 19, item 15). Answered by the default query handler
 * (workflows/internal-messages.ts), so the UI does not offer it.
 */
export const liveReadQuery = defineQuery<LiveRead | null, [{ from: number }]>('liveRead');

/** A `liveRead` answer stops adding items past this many payload bytes (queries answer in one message). */
export const LIVE_READ_MAX_BYTES = 1_000_000;

/**
 * The stream's tail carried across continue-as-new: readers are at most a poll behind, so a few
 * hundred items cover the switch, and the input stays small (it is history on every switch).
 */
export const CARRIED_STREAM_ITEMS = 300;
export const CARRIED_STREAM_BYTES = 200_000;

export class LiveStream {
  private constructor(private readonly stream: WorkflowStream | undefined) {}

  /** Opens the stream (a new run, or one carried over); none when the conversation turned it off. */
  static open(prior: WorkflowStreamState | undefined, enabled = true): LiveStream {
    return new LiveStream(enabled ? new WorkflowStream(prior) : undefined);
  }

  get enabled(): boolean {
    return this.stream !== undefined;
  }

  publishEvent(event: ConversationEvent): void {
    this.stream?.topic<ConversationEvent>(STREAM_TOPICS.events).publish(slimForStream(event));
  }

  publishTool(item: ToolStreamItem): void {
    this.stream?.topic<ToolStreamItem>(STREAM_TOPICS.tools).publish(item);
  }

  /** `liveRead`: the items from `fromOffset` (from the oldest kept, when it was trimmed away), at most LIVE_READ_MAX_BYTES. */
  read(fromOffset: number): LiveRead | null {
    if (!this.stream) return null;
    // The library keeps its log private and offers only the long poll; its fields are plain ones.
    const { log, baseOffset } = this.stream as unknown as {
      log: Array<{ topic: string; payload: Parameters<typeof defaultPayloadConverter.fromPayload>[0] }>;
      baseOffset: number;
    };
    return readLog(log, baseOffset, fromOffset, (payload) => defaultPayloadConverter.fromPayload(payload));
  }

  /** Releases waiting readers (they retry and land on the next run) before the run closes. */
  detach(): void {
    this.stream?.detachPollers();
  }

  /** Undoes `detach` when continue-as-new did not happen after all (the state did not fit). */
  reattach(): void {
    // The library has no public way back from draining; its flag is a plain field.
    if (this.stream) (this.stream as unknown as { draining: boolean }).draining = false;
  }

  /** The state to carry across continue-as-new: the log's tail, offsets unchanged. */
  carried(): WorkflowStreamState | undefined {
    if (!this.stream) return undefined;
    return trimStreamState(this.stream.getState(), CARRIED_STREAM_ITEMS, CARRIED_STREAM_BYTES);
  }
}

/**
 * Tool results and tool inputs cut shorter than in the `events` feed: every reader's long-poll
 * answer is history (an update's result), and live views show a tool result's first line (the
 * `tool_end` item carries the summary). Texts stay as the feed has them. Cut like the feed: the
 * head, then `… (N characters)`.
 */
export const STREAM_TOOL_CHARS = 300;
/** Prompts in `user_input` events on the stream (the transcript keeps them whole). */
export const STREAM_PROMPT_CHARS = 2_000;

export function slimForStream(event: ConversationEvent): ConversationEvent {
  const message = event.message;
  // A prompt may be megabytes (sent by reference); a poll answer over the update size limit
  // would fail the workflow task and get the run terminated.
  if (message.type === 'user_input' && message.prompt.length > STREAM_PROMPT_CHARS) {
    return { ...event, message: { ...message, prompt: cutText(message.prompt, STREAM_PROMPT_CHARS) } };
  }
  if (message.type === 'user' && typeof message.message.content !== 'string') {
    const content = message.message.content.map((block) =>
      block.type === 'tool_result' && typeof block.content === 'string' ? { ...block, content: cut(block.content) } : block,
    );
    return { ...event, message: { ...message, message: { ...message.message, content } } };
  }
  if (message.type === 'assistant') {
    const content = message.message.content.map((block) => {
      // A search's encrypted results (kilobytes each, up to max_uses searches) are the model's; readers show titles and URLs.
      if (block.type === 'web_search_tool_result' && Array.isArray(block.content)) {
        return { ...block, content: block.content.map((result) => ({ ...result, encrypted_content: '' })) };
      }
      if (block.type !== 'tool_use') return block;
      const input = JSON.stringify(block.input ?? null);
      return input.length > STREAM_TOOL_CHARS ? { ...block, input: { truncated: cut(input) } } : block;
    });
    return { ...event, message: { ...message, message: { ...message.message, content } } };
  }
  return event;
}

function cut(text: string): string {
  return cutTextAgain(text, STREAM_TOOL_CHARS);
}

/** `liveRead` on a log starting at `baseOffset` (pure: the decoding is the caller's). */
export function readLog<P extends { data?: Uint8Array | null }>(
  log: ReadonlyArray<{ topic: string; payload: P }>,
  baseOffset: number,
  fromOffset: number,
  decode: (payload: P) => unknown,
  maxBytes = LIVE_READ_MAX_BYTES,
): LiveRead {
  const items: LiveReadItem[] = [];
  let bytes = 0;
  for (let index = Math.max(0, fromOffset - baseOffset); index < log.length; index++) {
    const entry = log[index];
    const size = (entry.payload.data?.length ?? 0) + entry.topic.length;
    if (items.length > 0 && bytes + size > maxBytes) return { items, nextOffset: baseOffset + index, moreReady: true };
    bytes += size;
    items.push({ topic: entry.topic, offset: baseOffset + index, data: decode(entry.payload) });
  }
  return { items, nextOffset: Math.max(fromOffset, baseOffset + log.length), moreReady: false };
}

/** Keeps the last items of the log within `maxItems` and `maxBytes`, advancing the base offset. */
export function trimStreamState(state: WorkflowStreamState, maxItems: number, maxBytes: number): WorkflowStreamState {
  let keep = 0;
  let bytes = 0;
  for (let index = state.log.length - 1; index >= 0 && keep < maxItems; index--) {
    const size = state.log[index].data.length + state.log[index].topic.length;
    if (bytes + size > maxBytes) break;
    bytes += size;
    keep++;
  }
  const dropped = state.log.length - keep;
  return { ...state, log: state.log.slice(dropped), base_offset: state.base_offset + dropped };
}
