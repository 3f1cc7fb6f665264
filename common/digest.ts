/**
 * Content digests shared by the workflow and the worker (pure, no Node APIs: the workflow bundle
 * cannot use node:crypto). SHA-256 is @noble/hashes' (audited, maintained pure JavaScript; pinned
 * exactly, as every library the workflow bundle imports) — issue 23 §4, about 4× the hand-written
 * one it replaced, with the same digests. The workflow names a transcript prefix by a chained SHA-256 digest; the
 * worker recomputes the same chain over the messages it materialises and refuses to send a request
 * whose digest differs (architecture notes: model calls by reference).
 */
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';

/** SHA-256 of the UTF-8 encoding of `text`, as lowercase hex (same as node:crypto's). */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}

/** Digest of an empty transcript: the start of every chain. */
export const EMPTY_CHAIN_DIGEST = sha256Hex('');

/**
 * One link of a transcript's digest chain: the digest of a prefix extended by one message. The
 * message is digested as its JSON text, which is what crosses every boundary (payloads, queries).
 */
export function chainDigest(previous: string, message: unknown): string {
  return chainDigestOfJson(previous, JSON.stringify(message));
}

/** `chainDigest` for a message already serialized (callers that also need its size). */
export function chainDigestOfJson(previous: string, json: string): string {
  return sha256Hex(`${previous}\n${json}`);
}

/** Digest of a whole JSON value (the request context: system prompt, user context, tools). */
export function valueDigest(value: unknown): string {
  return sha256Hex(JSON.stringify(value));
}
