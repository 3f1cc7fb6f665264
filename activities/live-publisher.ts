/**
 * Publishes an activity's live output (model deltas, Bash output) to its conversation's stream
 * (issue 10). Deltas are coalesced here — consecutive text of one block becomes one item — and
 * sent as one signal per batch, so history grows with batches, not tokens: the first batch goes
 * out `firstDelayMs` after the first item, the rest every `intervalMs`. A call that is over before
 * its first batch is due publishes nothing: its message (a workflow event) shows it all at once,
 * so quick calls cost no signals (as `STREAMED_TOOL_REPORT_DELAY_MS` does for early tool starts).
 */
import type { Client } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { STREAM_TOPICS, type ModelStreamItem, type StreamTarget, type ToolStreamItem } from '../common/stream-items';

/** Default batch interval: about 5 signals a second while a model streams. */
export const LIVE_BATCH_INTERVAL_MS = 200;
/** The first batch waits this long: a call that ends sooner costs no signal. */
export const LIVE_FIRST_BATCH_DELAY_MS = 50;

type Item = { topic: string; value: ModelStreamItem | ToolStreamItem };

/** Merges `next` into `last` when both are deltas of the same block (pure; exported for tests). */
export function coalesce(last: Item | undefined, next: Item): boolean {
  if (!last || last.topic !== next.topic) return false;
  const a = last.value;
  const b = next.value;
  if (a.type === 'text_delta' && b.type === 'text_delta' && a.index === b.index && a.call.attempt === b.call.attempt) {
    last.value = { ...a, text: a.text + b.text };
    return true;
  }
  if (a.type === 'thinking_delta' && b.type === 'thinking_delta' && a.index === b.index && a.call.attempt === b.call.attempt) {
    last.value = { ...a, thinking: a.thinking + b.thinking };
    return true;
  }
  if (a.type === 'tool_progress' && b.type === 'tool_progress' && a.toolUseId === b.toolUseId) {
    last.value = b; // progress is a tail: the newest replaces the older
    return true;
  }
  return false;
}

export class LivePublisher {
  private readonly client: WorkflowStreamClient;
  private pending: Item[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sentAny = false;
  private closed = false;
  private held = false;

  constructor(
    temporalClient: Client,
    target: StreamTarget,
    private readonly intervalMs = LIVE_BATCH_INTERVAL_MS,
    private readonly firstDelayMs = LIVE_FIRST_BATCH_DELAY_MS,
  ) {
    // The library's own timer is only a backstop: this class decides when a batch goes (items reach the library
    // only in send(), each batch force-flushed). Short, because the library's flusher sleeps one interval on a timer
    // it keeps after it is disposed: with 10 s, `npm start` sat 10 s silent after its last line before exiting.
    this.client = WorkflowStreamClient.create(temporalClient, target.workflowId, { batchInterval: '1 second', maxRetryDuration: '1 minute' });
  }

  model(item: ModelStreamItem): void {
    this.add({ topic: STREAM_TOPICS.model, value: item });
  }

  tool(item: ToolStreamItem): void {
    this.add({ topic: STREAM_TOPICS.tools, value: item });
  }

  /** Keeps items instead of sending them until `release()` (the local phase of a model call). */
  hold(): void {
    this.held = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Sends what was held at once, and batches as usual from then on. */
  release(): void {
    if (!this.held || this.closed) return;
    this.held = false;
    if (this.pending.length > 0) this.timer ??= setTimeout(() => this.send(), 0);
  }

  private add(item: Item): void {
    if (this.closed) return;
    if (!coalesce(this.pending[this.pending.length - 1], item)) this.pending.push(item);
    if (this.held) return;
    this.timer ??= setTimeout(() => this.send(), this.sentAny ? this.intervalMs : this.firstDelayMs);
  }

  private send(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const items = this.pending;
    this.pending = [];
    if (items.length === 0) return;
    this.sentAny = true;
    items.forEach((item, index) => this.client.topic(item.topic).publish(item.value, { forceFlush: index === items.length - 1 }));
  }

  /**
   * The work is done: sends the rest (when a batch went out already: the stream then holds the
   * whole output) or drops it (nothing went out: the result shows it), and waits until the
   * workflow has it — before the activity returns, so readers see it before the result.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.sentAny) this.send();
    if (this.timer) clearTimeout(this.timer);
    this.pending = [];
    this.closed = true;
    await this.client[Symbol.asyncDispose]();
  }

  /** Stops without waiting (failure, cancellation): what is buffered still goes out in the background. */
  abandon(): void {
    if (this.closed) return;
    if (this.sentAny) this.send();
    if (this.timer) clearTimeout(this.timer);
    this.closed = true;
    const flushing = this.client[Symbol.asyncDispose]().catch(() => undefined);
    backgroundFlushes.add(flushing);
    void flushing.finally(() => backgroundFlushes.delete(flushing));
  }
}

/** Flushes abandoned publishers still have in flight (their signals outlive the activity). */
const backgroundFlushes = new Set<Promise<void>>();

/**
 * Waits (at most `timeoutMs`) for abandoned publishers' last signals, before a worker closes its
 * connection: a signal still in flight when the connection closes is retried by the client's gRPC
 * retry interceptor on the closed channel, which throws from a timer (an uncaught exception).
 */
export async function settleLivePublishers(timeoutMs = 5_000): Promise<void> {
  if (backgroundFlushes.size === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled([...backgroundFlushes]), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
}

/** A publisher for `target`, or undefined when the call has none (streaming off, or no client). */
export function livePublisher(client: Client | undefined, target: StreamTarget | undefined): LivePublisher | undefined {
  return client && target ? new LivePublisher(client, target) : undefined;
}
