/**
 * Prompt caching as the Messages API bills it, for the scripted model server (issue 18). Pure
 * apart from its clock.
 *
 * The prompt is read in the API's order — tools, system, messages — as a list of blocks; the
 * cache key of a prefix is everything up to and including its last block (model included,
 * `cache_control` itself not). For each breakpoint (a block with `cache_control`, or the last
 * block under a top-level `cache_control`):
 *  - a read: the longest prefix already in the cache that ends at the breakpoint or at one of the
 *    20 blocks before it (the API's lookback);
 *  - a write: the prefix up to the breakpoint, unless it is under the minimum cacheable length
 *    (1024 tokens; nothing shorter is cached).
 * Usage: `cache_read_input_tokens` = the longest read, `cache_creation_input_tokens` = what the
 * last cacheable breakpoint adds beyond it, `input_tokens` = the rest (after the last breakpoint).
 * Entries live 5 minutes, refreshed on each read. Token counts are the server's estimate:
 * a block's JSON characters / 4.
 */
import { createHash } from 'node:crypto';

/** The API's lookback: a breakpoint also finds prefixes ending up to this many blocks before it. */
export const CACHE_LOOKBACK_BLOCKS = 20;
/** Shorter prefixes are not cached. */
export const MIN_CACHEABLE_TOKENS = 1024;
/** The default ephemeral cache's lifetime. */
export const CACHE_TTL_MS = 5 * 60 * 1000;

export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

type Obj = Record<string, unknown>;

/** Every block of the prompt, in the order the API reads it, and whether it carries a breakpoint. */
export function promptBlocks(body: Obj): Array<{ json: string; breakpoint: boolean }> {
  const out: Array<{ json: string; breakpoint: boolean }> = [];
  const add = (block: unknown): void => {
    if (block === null || typeof block !== 'object') {
      out.push({ json: JSON.stringify(block), breakpoint: false });
      return;
    }
    const { cache_control: cacheControl, ...rest } = block as Obj;
    out.push({ json: JSON.stringify(rest), breakpoint: cacheControl !== undefined && cacheControl !== null });
  };
  if (Array.isArray(body.tools)) body.tools.forEach(add);
  if (typeof body.system === 'string') add({ type: 'text', text: body.system });
  else if (Array.isArray(body.system)) body.system.forEach(add);
  if (Array.isArray(body.messages)) {
    for (const message of body.messages as Obj[]) {
      const content = message.content;
      // The role is part of what is cached: a message boundary is a block of its own (never a breakpoint).
      out.push({ json: JSON.stringify({ role: message.role }), breakpoint: false });
      if (typeof content === 'string') add({ type: 'text', text: content });
      else if (Array.isArray(content)) content.forEach(add);
    }
  }
  if (body.cache_control && out.length > 0) out[out.length - 1].breakpoint = true;
  return out;
}

/** The ephemeral cache of one server (one organisation). */
export class PromptCache {
  private readonly entries = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Bills `body` (whose whole input is `totalTokens`) and caches its breakpoints' prefixes. */
  bill(body: Obj, totalTokens: number): CacheUsage {
    const blocks = promptBlocks(body);
    const hashes: string[] = [];
    const tokensUpTo: number[] = [];
    let hash = createHash('sha256').update(String(body.model)).digest('hex');
    let chars = 0;
    for (const block of blocks) {
      hash = createHash('sha256').update(hash).update(block.json).digest('hex');
      chars += block.json.length;
      hashes.push(hash);
      tokensUpTo.push(Math.floor(chars / 4));
    }
    const now = this.now();
    for (const [key, expiresAt] of this.entries) if (expiresAt <= now) this.entries.delete(key);
    const breakpoints = blocks.flatMap((block, index) => (block.breakpoint ? [index] : []));
    let read = -1;
    for (const breakpoint of breakpoints) {
      for (let index = breakpoint; index >= Math.max(0, breakpoint - CACHE_LOOKBACK_BLOCKS); index--) {
        if (this.entries.has(hashes[index])) {
          if (index > read) read = index;
          break;
        }
      }
    }
    if (read >= 0) this.entries.set(hashes[read], now + CACHE_TTL_MS);
    const readTokens = read >= 0 ? tokensUpTo[read] : 0;
    let written = -1;
    for (const breakpoint of breakpoints) {
      if (tokensUpTo[breakpoint] < MIN_CACHEABLE_TOKENS) continue;
      this.entries.set(hashes[breakpoint], now + CACHE_TTL_MS);
      written = Math.max(written, breakpoint);
    }
    const creation = written > read ? tokensUpTo[written] - readTokens : 0;
    const total = Math.max(totalTokens, readTokens + creation);
    return { input_tokens: total - readTokens - creation, cache_creation_input_tokens: creation, cache_read_input_tokens: readTokens };
  }
}

/** Input billed in input-token equivalents: writes at 1.25×, reads at 0.1× (the API's prices). */
export function inputEquivalentTokens(usage: CacheUsage): number {
  return usage.input_tokens + 1.25 * usage.cache_creation_input_tokens + 0.1 * usage.cache_read_input_tokens;
}

/** `value` with every `cache_control` removed (deep copy): compares requests whose breakpoints moved. */
export function withoutCacheControl<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (key, field) => (key === 'cache_control' ? undefined : field))) as T;
}
