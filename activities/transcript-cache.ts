/**
 * The worker's transcript cache (model calls by reference, docs/architecture.md). The workflow
 * names what a model call needs — a transcript prefix by length + chained digest, the request
 * context by digest — and the model activity materialises the request here:
 *
 *  - fed for free: the workflow pushes every transcript change and request context through a
 *    sink (`TranscriptCacheSinks`), which runs on the worker that runs the workflow, before the
 *    workflow task completes — so before the model activity it scheduled can start;
 *  - filled on a miss (another worker, a restart, an evicted entry) from a source that writes
 *    no history: the workflow's `transcriptSlice` / `requestContext` queries;
 *  - checked: the digest chain is recomputed over what was materialised; a mismatch is a
 *    retryable failure, never a request built from the wrong messages.
 */
import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { RequestContext } from '../common/activity-types';
import { EMPTY_CHAIN_DIGEST, valueDigest } from '../common/digest';
import type { TranscriptMessage } from '../common/messages';
import type { TranscriptSlice } from '../common/worker-messages';

/** Where a miss is filled from (the workflow's queries, in production). */
export interface TranscriptSource {
  slice(conversationId: string, from: number, maxBytes: number): Promise<TranscriptSlice>;
  context(conversationId: string, digest: string): Promise<RequestContext | null>;
}

export interface TranscriptCacheOptions {
  /** Conversations kept (least recently used dropped first). */
  maxConversations?: number;
  /** Request contexts kept. */
  maxContexts?: number;
  /** Page size of slice queries. */
  sliceBytes?: number;
}

export interface TranscriptCacheStats {
  hits: number;
  misses: number;
  /** Messages fetched from the source on misses. */
  fetchedMessages: number;
  contextHits: number;
  contextMisses: number;
}

interface Entry {
  messages: TranscriptMessage[];
  /** chain[i] = digest of the first i messages (same chain as `Transcript`). */
  chain: string[];
}

/** Thrown (as a retryable failure) when the messages at hand do not match the reference. */
export const DIGEST_MISMATCH = 'TranscriptDigestMismatch';

/** Same chain as `chainDigestOfJson` in common/digest.ts, with node:crypto's faster SHA-256. */
function link(previous: string, message: TranscriptMessage): string {
  return createHash('sha256')
    .update(`${previous}\n${JSON.stringify(message)}`)
    .digest('hex');
}

export class TranscriptCache {
  private readonly conversations = new Map<string, Entry>();
  private readonly contexts = new Map<string, RequestContext>();
  private readonly maxConversations: number;
  private readonly maxContexts: number;
  private readonly sliceBytes: number;
  readonly stats: TranscriptCacheStats = { hits: 0, misses: 0, fetchedMessages: 0, contextHits: 0, contextMisses: 0 };

  constructor(options: TranscriptCacheOptions = {}) {
    this.maxConversations = options.maxConversations ?? 500;
    this.maxContexts = options.maxContexts ?? 500;
    this.sliceBytes = options.sliceBytes ?? 1_000_000;
  }

  /** The sink: messages from index `from` on are now `messages`. A gap (from past the end) drops the entry. */
  feed(conversationId: string, from: number, messages: readonly TranscriptMessage[]): void {
    let entry = this.conversations.get(conversationId);
    if (!entry && from === 0) entry = { messages: [], chain: [EMPTY_CHAIN_DIGEST] };
    if (!entry || from > entry.messages.length) {
      // Not the start of what we hold: we cannot extend it; the next call fills it on a miss.
      this.conversations.delete(conversationId);
      return;
    }
    entry.messages.length = from;
    entry.chain.length = from + 1;
    for (const message of messages) {
      entry.chain.push(link(entry.chain[entry.messages.length], message));
      entry.messages.push(message);
    }
    this.touch(this.conversations, conversationId, entry, this.maxConversations);
  }

  putContext(digest: string, context: RequestContext): void {
    // Verified once, here: the reads of every model call then cost a map lookup (a context is
    // immutable once made, and only verified contexts are kept).
    if (valueDigest(context) !== digest) return;
    this.touch(this.contexts, digest, context, this.maxContexts);
  }

  /** Forgets a conversation (tests use it to force the miss path). */
  forget(conversationId: string): void {
    this.conversations.delete(conversationId);
  }

  /**
   * The first `ref.length` messages of the conversation's transcript, verified against
   * `ref.digest`; fetched from `source` where the cache has less or something else.
   */
  async materialize(conversationId: string, ref: { length: number; digest: string }, source: TranscriptSource | undefined): Promise<TranscriptMessage[]> {
    const cached = this.conversations.get(conversationId);
    if (cached && cached.messages.length >= ref.length && cached.chain[ref.length] === ref.digest) {
      this.stats.hits++;
      this.touch(this.conversations, conversationId, cached, this.maxConversations);
      return cached.messages.slice(0, ref.length);
    }
    this.stats.misses++;
    if (!source) {
      throw ApplicationFailure.retryable(
        `The transcript of ${conversationId} is not in this worker's cache and there is no Temporal client to fetch it with`,
        DIGEST_MISMATCH,
      );
    }
    // What we hold may extend the workflow's prefix (fetch the rest) or diverge from it within the
    // reference (then nothing of it can be trusted: start over).
    const fresh = (): Entry => ({ messages: [], chain: [EMPTY_CHAIN_DIGEST] });
    let entry: Entry = cached && cached.messages.length < ref.length ? cached : fresh();
    let next = entry.messages.length;
    let restarted = false;
    while (next < ref.length) {
      const slice = await source.slice(conversationId, next, this.sliceBytes);
      if (slice.length < ref.length) break; // the workflow's transcript is shorter: it moved on
      if (entry.chain[slice.from] !== slice.digestBefore) {
        // What we hold diverges from the workflow's transcript before `next`: start over, once.
        if (restarted) break;
        restarted = true;
        entry = fresh();
        next = 0;
        continue;
      }
      if (slice.messages.length === 0) break;
      entry.messages.length = slice.from;
      entry.chain.length = slice.from + 1;
      for (const message of slice.messages) {
        entry.chain.push(link(entry.chain[entry.messages.length], message));
        entry.messages.push(message);
      }
      this.stats.fetchedMessages += slice.messages.length;
      next = entry.messages.length;
    }
    if (entry.messages.length < ref.length || entry.chain[ref.length] !== ref.digest) {
      this.conversations.delete(conversationId);
      throw ApplicationFailure.retryable(
        `The transcript of ${conversationId} does not match the model call's reference (${ref.length} messages, digest ${ref.digest.slice(0, 12)}…); not sending a request built from other messages`,
        DIGEST_MISMATCH,
      );
    }
    this.touch(this.conversations, conversationId, entry, this.maxConversations);
    return entry.messages.slice(0, ref.length);
  }

  /**
   * The first `ref.length` messages when this cache holds them under `ref.digest`, else undefined;
   * never asks the workflow (callModelLocal: a query would wait for the very workflow task the
   * local activity holds). A miss is not counted: the regular call that follows counts it.
   */
  cached(conversationId: string, ref: { length: number; digest: string }): TranscriptMessage[] | undefined {
    const cached = this.conversations.get(conversationId);
    if (!cached || cached.messages.length < ref.length || cached.chain[ref.length] !== ref.digest) return undefined;
    this.stats.hits++;
    this.touch(this.conversations, conversationId, cached, this.maxConversations);
    return cached.messages.slice(0, ref.length);
  }

  /** The request context with `digest` when this cache holds it, verified; never asks the workflow. */
  cachedContext(digest: string): RequestContext | undefined {
    const cached = this.contexts.get(digest);
    if (!cached) return undefined;
    this.stats.contextHits++;
    return cached;
  }

  /** The request context with `digest`, verified. */
  async context(conversationId: string, digest: string, source: TranscriptSource | undefined): Promise<RequestContext> {
    const cached = this.contexts.get(digest);
    if (cached) {
      this.stats.contextHits++;
      return cached;
    }
    this.stats.contextMisses++;
    const fetched = source ? await source.context(conversationId, digest) : null;
    if (!fetched || valueDigest(fetched) !== digest) {
      throw ApplicationFailure.retryable(
        `The request context ${digest.slice(0, 12)}… of ${conversationId} could not be materialised (not cached, and the workflow does not have it)`,
        DIGEST_MISMATCH,
      );
    }
    this.touch(this.contexts, digest, fetched, this.maxContexts);
    return fetched;
  }

  private touch<V>(map: Map<string, V>, key: string, value: V, max: number): void {
    map.delete(key);
    map.set(key, value);
    while (map.size > max) map.delete(map.keys().next().value as string);
  }
}

/** One cache per worker process: the worker's sinks feed it and its model activities read it. */
export const processTranscriptCache = new TranscriptCache();
