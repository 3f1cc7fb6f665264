/**
 * The request contexts of model calls by reference (docs/architecture.md, "Model calls by
 * reference"): each is named by its digest, fed to the worker's cache through the sink, and kept
 * for the `requestContext` query of a worker that missed it (the current query's, and a few before).
 */
import { proxySinks } from '@temporalio/workflow';
import type { RequestContext } from '../../common/activity-types';
import { valueDigest } from '../../common/digest';
import type { TranscriptCacheSinks } from '../definitions';

/** Request contexts kept for workers that miss them (the current query's, and a few before). */
const REQUEST_CONTEXTS_KEPT = 4;

const { transcriptCache } = proxySinks<TranscriptCacheSinks>();

export class RequestContexts {
  private readonly contexts = new Map<string, RequestContext>();
  private last: string | undefined;

  /** Names a context by digest and makes it available to workers; it becomes the one in effect. */
  register(context: RequestContext): string {
    const digest = valueDigest(context);
    this.last = digest;
    if (!this.contexts.has(digest)) {
      this.contexts.set(digest, context);
      while (this.contexts.size > REQUEST_CONTEXTS_KEPT) this.contexts.delete(this.contexts.keys().next().value as string);
      transcriptCache.putContext(digest, context);
    }
    return digest;
  }

  /** The digest in effect (registered by the last model call), if any. */
  get current(): string | undefined {
    return this.last;
  }

  get(digest: string): RequestContext | null {
    return this.contexts.get(digest) ?? null;
  }
}
