/**
 * Reads a conversation's live channel (issue 10) from an offset: every event, model delta and
 * tool item, in order, following continue-as-new. A reader that reconnects passes the offset
 * after the last item it saw and gets exactly what came after. Conversations whose run predates
 * the channel have no stream: `NoLiveStreamError`, and the caller polls the `events` query.
 */
import { type Client, QueryRejectedError, WorkflowClient, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { STREAM_TOPICS, type ModelStreamItem, type ToolStreamItem } from '../common/stream-items';
import type { ConversationEvent } from '../workflows/definitions';
import { type LiveRead, liveReadQuery } from '../workflows/ui/live-stream';
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
  // Reads by query go to the open run only: a closed one would be replayed on a worker per query.
  const reader = queryClient(client);
  let queries = true;
  while (!signal?.aborted) {
    let readByQueries = false;
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
        if (!queries) continue;
        // The conversation is busy: read by query (no history) until it has been quiet for a while,
        // then wait in a long poll again. The rest of this poll's answer comes again by query.
        await items.return(undefined);
        const read = yield* readByQuery(reader, conversationId, offset, aborted);
        offset = read.offset;
        if (read.unsupported) queries = false;
        readByQueries = true;
        break;
      }
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError && NO_HANDLER.test(String(error.cause?.message ?? error.message))) {
        throw new NoLiveStreamError(`Conversation "${conversationId}" has no live channel (it runs on code from before it).`);
      }
      throw error;
    }
    if (signal?.aborted) return;
    if (readByQueries) continue; // back to a long poll
    // The library ends a subscription when the run closed — or when a poll timed out (no worker
    // for a while): go on unless the conversation really closed.
    const { status } = await client.workflow.getHandle(conversationId).describe();
    if (status.name !== 'RUNNING') return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Between two reads by query while items keep coming (the activities publish in 50 ms batches). */
export const LIVE_QUERY_INTERVAL_MS = 50;
/** Reads by query stop after this long without a new item: the next item is awaited in a long poll. */
export const LIVE_QUIET_MS = 1_000;

/**
 * Reads the live channel with the `liveRead` query from `offset` until nothing new came for
 * LIVE_QUIET_MS, the run is not open (the long poll then follows continue-as-new or ends), or
 * an abort. `unsupported`: the run's code has no `liveRead` (a worker from before it).
 */
async function* readByQuery(
  reader: WorkflowClient,
  conversationId: string,
  from: number,
  aborted: Promise<'aborted'>,
): AsyncGenerator<LiveEntry, { offset: number; unsupported: boolean }> {
  let offset = from;
  let lastItemAt = Date.now();
  const handle = reader.getHandle(conversationId);
  while (Date.now() - lastItemAt < LIVE_QUIET_MS) {
    let read: LiveRead | null;
    try {
      const answer = await Promise.race([handle.query(liveReadQuery, { from: offset }), aborted]);
      if (answer === 'aborted') return { offset, unsupported: false };
      read = answer;
    } catch (error) {
      if (error instanceof QueryRejectedError || error instanceof WorkflowNotFoundError) return { offset, unsupported: false };
      if (/liveRead|Unknown query/i.test(error instanceof Error ? error.message : String(error))) return { offset, unsupported: true };
      return { offset, unsupported: false }; // (no worker, a timeout): the long poll waits it out
    }
    if (read === null) return { offset, unsupported: true };
    for (const item of read.items) {
      if (item.offset < offset) continue;
      offset = item.offset + 1;
      lastItemAt = Date.now();
      const entry = toEntry(item.topic, item.offset, item.data);
      if (entry) yield entry;
    }
    offset = Math.max(offset, read.nextOffset);
    if (read.moreReady) continue;
    if ((await Promise.race([new Promise((resolve) => setTimeout(resolve, LIVE_QUERY_INTERVAL_MS)), aborted])) === 'aborted')
      return { offset, unsupported: false };
  }
  return { offset, unsupported: false };
}

/** A workflow client like `client` whose queries are rejected (not replayed) once the run closed. */
function queryClient(client: Client): WorkflowClient {
  return new WorkflowClient({
    connection: client.connection,
    namespace: client.options.namespace,
    dataConverter: client.options.dataConverter,
    queryRejectCondition: 'NOT_OPEN',
  });
}

function toEntry(topic: string, offset: number, data: unknown): LiveEntry | undefined {
  if (topic === STREAM_TOPICS.events) return { kind: 'event', offset, event: data as ConversationEvent };
  if (topic === STREAM_TOPICS.model) return { kind: 'model', offset, item: data as ModelStreamItem };
  if (topic === STREAM_TOPICS.tools) return { kind: 'tool', offset, item: data as ToolStreamItem };
  return undefined;
}
