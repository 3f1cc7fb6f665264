/**
 * Reads a conversation's live channel (issue 10) from an offset: every event, model delta and
 * tool item, in order, following continue-as-new. A reader that reconnects passes the offset
 * after the last item it saw and gets exactly what came after. Conversations whose run predates
 * the channel have no stream: `NoLiveStreamError`, and the caller polls the `events` query.
 */
import { type Client, WorkflowUpdateFailedError } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { STREAM_TOPICS, type ModelStreamItem, type ToolStreamItem } from '../common/stream-items';
import type { ConversationEvent } from '../workflows/definitions';
import type { LiveEntry } from './live-view';

/** The conversation's run has no live channel (it started before it existed). */
export class NoLiveStreamError extends Error {
  override readonly name = 'NoLiveStreamError';
}

const NO_HANDLER = /no registered handler|unknown update|handler.*not found/i;

/**
 * Yields the conversation's items from `fromOffset` until the conversation closes (or `signal`
 * aborts). Each entry's `offset` + 1 is where to resume.
 */
export async function* readLive(client: Client, conversationId: string, fromOffset = 0, signal?: AbortSignal): AsyncGenerator<LiveEntry> {
  let offset = fromOffset;
  // A poll waits until something new arrives; an abort must not wait for that.
  const aborted = new Promise<'aborted'>((resolve) => {
    if (signal?.aborted) resolve('aborted');
    signal?.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  while (!signal?.aborted) {
    const stream = WorkflowStreamClient.create(client, conversationId);
    const items = stream.subscribe<unknown>(undefined, offset, { pollCooldown: '20 milliseconds', resultType: true });
    try {
      while (true) {
        const next = await Promise.race([items.next(), aborted]);
        if (next === 'aborted') {
          items.return(undefined).catch(() => undefined); // ends once the pending poll answers
          return;
        }
        if (next.done) break;
        const item = next.value;
        if (item.offset < offset) continue; // already seen (a poll answered twice across a reconnect)
        offset = item.offset + 1;
        const entry = toEntry(item.topic, item.offset, item.data);
        if (entry) yield entry;
      }
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError && NO_HANDLER.test(String(error.cause?.message ?? error.message))) {
        throw new NoLiveStreamError(`Conversation "${conversationId}" has no live channel (it runs on code from before it).`);
      }
      throw error;
    }
    // The library ends a subscription when the run closed — or when a poll timed out (no worker
    // for a while): go on unless the conversation really closed.
    const { status } = await client.workflow.getHandle(conversationId).describe();
    if (status.name !== 'RUNNING') return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function toEntry(topic: string, offset: number, data: unknown): LiveEntry | undefined {
  if (topic === STREAM_TOPICS.events) return { kind: 'event', offset, event: data as ConversationEvent };
  if (topic === STREAM_TOPICS.model) return { kind: 'model', offset, item: data as ModelStreamItem };
  if (topic === STREAM_TOPICS.tools) return { kind: 'tool', offset, item: data as ToolStreamItem };
  return undefined;
}
