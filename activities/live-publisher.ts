/**
 * Publishes an activity's live output (model deltas, Bash output) to its conversation's stream
 * (issue 10). Deltas are coalesced here — consecutive text of one block becomes one item — and
 * sent as one signal per batch, so history grows with batches, not tokens: the first item goes
 * out at once (time to first token), the rest every `intervalMs`.
 */
import type { Client } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { STREAM_TOPICS, type ModelStreamItem, type StreamTarget, type ToolStreamItem } from '../common/stream-items';

/** Default batch interval: about 5 signals a second while a model streams. */
export const LIVE_BATCH_INTERVAL_MS = 200;

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

  constructor(
    temporalClient: Client,
    target: StreamTarget,
    private readonly intervalMs = LIVE_BATCH_INTERVAL_MS,
  ) {
    // The library's own timer is only a backstop: this class decides when a batch goes.
    this.client = WorkflowStreamClient.create(temporalClient, target.workflowId, { batchInterval: '10 seconds', maxRetryDuration: '1 minute' });
  }

  model(item: ModelStreamItem): void {
    this.add({ topic: STREAM_TOPICS.model, value: item });
  }

  tool(item: ToolStreamItem): void {
    this.add({ topic: STREAM_TOPICS.tools, value: item });
  }

  private add(item: Item): void {
    if (this.closed) return;
    if (!coalesce(this.pending[this.pending.length - 1], item)) this.pending.push(item);
    if (!this.sentAny) {
      this.sentAny = true;
      this.send();
    } else if (!this.timer) {
      this.timer = setTimeout(() => this.send(), this.intervalMs);
    }
  }

  private send(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const items = this.pending;
    this.pending = [];
    items.forEach((item, index) => this.client.topic(item.topic).publish(item.value, { forceFlush: index === items.length - 1 }));
  }

  /** Sends what is buffered and waits until the workflow has it (before the activity returns). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.send();
    this.closed = true;
    await this.client[Symbol.asyncDispose]();
  }

  /** Stops without waiting (cancellation): what is buffered still goes out in the background. */
  abandon(): void {
    this.close().catch(() => undefined);
  }
}

/** A publisher for `target`, or undefined when the call has none (streaming off, or no client). */
export function livePublisher(client: Client | undefined, target: StreamTarget | undefined): LivePublisher | undefined {
  return client && target ? new LivePublisher(client, target) : undefined;
}
