/**
 * The transcript's operations (one owner of the messages), its digest chain, and the worker's
 * cache that materialises model requests from a reference — hits, misses, a stale cache, and a
 * mismatch that must never turn into a request built from other messages.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TranscriptCache, type TranscriptSource } from '../../activities/transcript-cache';
import { EMPTY_CHAIN_DIGEST, chainDigest, sha256Hex, valueDigest } from '../../common/digest';
import type { AssistantMessage, TranscriptMessage, UserMessage } from '../../common/messages';
import { Transcript } from '../../workflows/transcript';

const user = (uuid: string, content: UserMessage['message']['content']): UserMessage => ({ type: 'user', uuid, message: { role: 'user', content } });
const assistant = (uuid: string, content: AssistantMessage['message']['content']): AssistantMessage => ({
  type: 'assistant',
  uuid,
  message: {
    id: `m-${uuid}`,
    role: 'assistant',
    model: 'x',
    content,
    stop_reason: 'end_turn',
    usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  },
});
const result = (uuid: string, toolUseId: string, content = 'ok'): UserMessage => user(uuid, [{ type: 'tool_result', tool_use_id: toolUseId, content }]);

let counter = 0;
const uuid = () => `gen-${counter++}`;

describe('sha256Hex (pure, for the workflow bundle)', () => {
  it('matches node:crypto on ASCII, multi-byte text and lengths around the block size', () => {
    for (const text of ['', 'abc', 'héllo wörld ✓ 😀', 'x'.repeat(55), 'x'.repeat(56), 'y'.repeat(64), 'z'.repeat(1000)]) {
      expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
    }
  });

  it("@noble/hashes gives node:crypto's digests on random text of every length to 300, a lone surrogate and 5 MB", () => {
    let seed = 23;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const alphabet = 'aZ09 \n\t"{}é✓😀\u0000';
    for (let length = 0; length <= 300; length += 1) {
      const text = Array.from({ length }, () => alphabet[next() % alphabet.length]).join('');
      expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
    }
    for (const text of ['\ud800 lone', 'tail \udfff', JSON.stringify({ message: 'x'.repeat(5 * 1024 * 1024) })]) {
      expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
    }
  });
});

describe('Transcript', () => {
  it('appends, names every prefix by a chained digest, and tells its listener from where', () => {
    const transcript = new Transcript([user('u1', 'go')]);
    const heard: Array<[number, number]> = [];
    transcript.onChange((from, messages) => heard.push([from, messages.length]));
    transcript.append(assistant('a1', [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }]), result('r1', 't1'));
    expect(transcript.length).toBe(3);
    expect(heard).toEqual([[1, 2]]);
    const expected = transcript.messages.reduce((digest, message) => chainDigest(digest, message), EMPTY_CHAIN_DIGEST);
    expect(transcript.ref()).toEqual({ length: 3, digest: expected, from: 0 });
    // A prefix keeps its digest when more is appended; a transcript rebuilt from the same messages agrees.
    expect(transcript.digestAt(1)).toBe(new Transcript([user('u1', 'go')]).ref().digest);
    expect(new Transcript(transcript.toJSON()).ref()).toEqual(transcript.ref());
    expect(() => transcript.digestAt(4)).toThrow(RangeError);
  });

  it('keeps running sizes: bytes for continue-as-new, tokens appended since a point', () => {
    const transcript = new Transcript([user('u1', 'héllo')]);
    expect(transcript.byteSize).toBe(Buffer.byteLength(JSON.stringify(transcript.messages[0])));
    const before = transcript.length;
    transcript.append(user('u2', 'x'.repeat(400)));
    expect(transcript.estimatedTokensSince(before)).toBe(Math.ceil(JSON.stringify(transcript.messages[1]).length / 4));
    expect(transcript.estimatedTokensSince(transcript.length)).toBe(0);
  });

  it('removes a tombstoned message and re-digests only from there', () => {
    const transcript = new Transcript([user('u1', 'go'), assistant('a1', [{ type: 'text', text: 'draft' }]), user('u2', 'more')]);
    const keptDigest = transcript.digestAt(1);
    const heard: number[] = [];
    transcript.onChange((from) => heard.push(from));
    transcript.remove('a1');
    expect(transcript.messages.map((message) => message.uuid)).toEqual(['u1', 'u2']);
    expect(transcript.digestAt(1)).toBe(keptDigest);
    expect(heard).toEqual([1]);
    transcript.remove('nothing-with-this-uuid');
    expect(heard).toEqual([1]);
  });

  it('strips signed and redacted thinking for a fallback model, keeping the rest', () => {
    const transcript = new Transcript([
      user('u1', 'go'),
      assistant('a1', [
        { type: 'thinking', thinking: 'hmm', signature: 'sig' },
        { type: 'redacted_thinking', data: 'x' },
        { type: 'text', text: 'answer' },
      ]),
      assistant('a2', [{ type: 'thinking', thinking: 'only thinking', signature: 'sig' }]),
    ]);
    transcript.stripSignatureBlocks();
    expect((transcript.messages[1] as AssistantMessage).message.content).toEqual([{ type: 'text', text: 'answer' }]);
    // Left with no blocks: it stays in the transcript; the request leaves it out (normalizeMessagesForApi).
    expect((transcript.messages[2] as AssistantMessage).message.content).toEqual([]);
    const digest = transcript.ref().digest;
    transcript.stripSignatureBlocks(); // idempotent
    expect(transcript.ref().digest).toBe(digest);
  });

  it('closes every unanswered tool_use with an error result, once', () => {
    const transcript = new Transcript([
      user('u1', 'go'),
      assistant('a1', [
        { type: 'tool_use', id: 'done', name: 'Read', input: {} },
        { type: 'tool_use', id: 'lonely', name: 'Bash', input: {} },
      ]),
      result('r1', 'done'),
    ]);
    const closed = transcript.closeDanglingToolUses('Interrupted by user', uuid);
    expect(closed).toHaveLength(1);
    expect(closed[0].message.content).toEqual([{ type: 'tool_result', tool_use_id: 'lonely', content: 'Interrupted by user', is_error: true }]);
    expect(transcript.closeDanglingToolUses('again', uuid)).toEqual([]);
  });

  it('drops only the listed inputs the model never answered', () => {
    const transcript = new Transcript([
      user('old', 'answered'),
      assistant('a1', [{ type: 'text', text: 'yes' }]),
      user('big', 'huge'),
      user('other', 'keep me'),
    ]);
    expect(transcript.dropUnansweredInputs(['old', 'big'])).toBe(true);
    expect(transcript.messages.map((message) => message.uuid)).toEqual(['old', 'a1', 'other']);
    expect(transcript.dropUnansweredInputs(['big'])).toBe(false);
  });

  it('pages slices by bytes, always at least one message, with the digest before them', () => {
    const transcript = new Transcript([user('u1', 'a'.repeat(100)), user('u2', 'b'.repeat(100)), user('u3', 'c')]);
    const first = transcript.slice(0, 150);
    expect(first).toMatchObject({ from: 0, digestBefore: EMPTY_CHAIN_DIGEST, length: 3 });
    expect(first.messages).toHaveLength(1);
    const rest = transcript.slice(1);
    expect(rest.messages.map((message) => message.uuid)).toEqual(['u2', 'u3']);
    expect(rest.digestBefore).toBe(transcript.digestAt(1));
    expect(transcript.slice(3).messages).toEqual([]);
  });
});

/** A source backed by a real Transcript (what the workflow's queries answer), counting calls. */
function sourceFor(transcript: Transcript, tamper?: (slice: ReturnType<Transcript['slice']>, call: number) => ReturnType<Transcript['slice']>) {
  let calls = 0;
  const contexts = new Map<string, { system: Array<{ type: 'text'; text: string }>; toolNames: string[] }>();
  const source: TranscriptSource & { calls: () => number; contexts: typeof contexts } = {
    slice: async (_id, from, maxBytes) => {
      const slice = transcript.slice(from, maxBytes);
      return tamper ? tamper(slice, calls++) : (calls++, slice);
    },
    context: async (_id, digest) => contexts.get(digest) ?? null,
    calls: () => calls,
    contexts,
  };
  return source;
}

describe('TranscriptCache (worker side of model calls by reference)', () => {
  const conversation = 'conversation-1';
  const build = () =>
    new Transcript([user('u1', 'go'), assistant('a1', [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }]), result('r1', 't1', 'file text')]);

  it('answers from what the sink fed, without asking the workflow', async () => {
    const transcript = build();
    const cache = new TranscriptCache();
    transcript.onChange((from, messages) => cache.feed(conversation, from, messages));
    cache.feed(conversation, 0, transcript.messages);
    transcript.append(assistant('a2', [{ type: 'text', text: 'done' }]));
    const source = sourceFor(transcript);
    expect(await cache.materialize(conversation, transcript.ref(), source)).toEqual(transcript.messages);
    expect(source.calls()).toBe(0);
    expect(cache.stats).toMatchObject({ hits: 1, misses: 0 });
  });

  it('fills a miss (empty cache, e.g. a restarted worker) from the source, in pages', async () => {
    const transcript = build();
    const cache = new TranscriptCache({ sliceBytes: 10 }); // one message per page
    const source = sourceFor(transcript);
    expect(await cache.materialize(conversation, transcript.ref(), source)).toEqual(transcript.messages);
    expect(source.calls()).toBe(3);
    // Then only the new part is fetched.
    transcript.append(assistant('a2', [{ type: 'text', text: 'done' }]));
    expect(await cache.materialize(conversation, transcript.ref(), source)).toEqual(transcript.messages);
    expect(source.calls()).toBe(4);
    expect(cache.stats.fetchedMessages).toBe(4);
  });

  it('starts over when what it holds diverges from the workflow (a stale entry)', async () => {
    const transcript = build();
    const cache = new TranscriptCache();
    cache.feed(conversation, 0, [user('u1', 'go'), user('stale', 'something else')]);
    const source = sourceFor(transcript);
    expect(await cache.materialize(conversation, transcript.ref(), source)).toEqual(transcript.messages);
  });

  it('never returns messages that do not match the reference: a mismatch is a retryable failure', async () => {
    const transcript = build();
    const cache = new TranscriptCache();
    const tampered = sourceFor(transcript, (slice) => ({
      ...slice,
      messages: slice.messages.map((message) => (message.uuid === 'r1' ? result('r1', 't1', 'NOT the file text') : message)),
    }));
    const failure = await cache.materialize(conversation, transcript.ref(), tampered).catch((error: unknown) => error);
    expect(failure).toMatchObject({ type: 'TranscriptDigestMismatch', nonRetryable: false });
    // The next attempt, with an honest source, gets the right messages.
    expect(await cache.materialize(conversation, transcript.ref(), sourceFor(transcript))).toEqual(transcript.messages);
  });

  it('refuses a reference longer than the workflow transcript (it moved on, or the call is stale)', async () => {
    const transcript = build();
    const cache = new TranscriptCache();
    const failure = await cache.materialize(conversation, { length: 5, digest: 'x' }, sourceFor(transcript)).catch((error: unknown) => error);
    expect(failure).toMatchObject({ type: 'TranscriptDigestMismatch' });
  });

  it('materialises request contexts by digest, verified', async () => {
    const transcript = build();
    const context = { system: [{ type: 'text' as const, text: 'system' }], toolNames: ['Read'] };
    const digest = valueDigest(context);
    const source = sourceFor(transcript);
    const cache = new TranscriptCache();
    await expect(cache.context(conversation, digest, source)).rejects.toMatchObject({ type: 'TranscriptDigestMismatch' });
    source.contexts.set(digest, context);
    expect(await cache.context(conversation, digest, source)).toEqual(context);
    source.contexts.set(digest, { ...context, toolNames: ['Bash'] }); // a wrong answer is refused
    expect(await new TranscriptCache().context(conversation, digest, source).catch((error: unknown) => error)).toMatchObject({
      type: 'TranscriptDigestMismatch',
    });
  });
});

describe('chained digests agree between the workflow (pure SHA-256) and the worker (node:crypto)', () => {
  it('gives the same reference on both sides', async () => {
    const transcript = build2();
    const cache = new TranscriptCache();
    cache.feed('c', 0, transcript.messages as TranscriptMessage[]);
    expect(await cache.materialize('c', transcript.ref(), undefined)).toHaveLength(transcript.length);
  });
});

function build2() {
  return new Transcript([user('u1', 'ünïcödé ✓'), assistant('a1', [{ type: 'text', text: '😀 done' }])]);
}

describe('Transcript.dropUnansweredInputs after a compaction', () => {
  it('keeps an input that a compaction already summarised (it is outside the window)', () => {
    const transcript = new Transcript([
      user('old', 'answered'),
      assistant('a1', [{ type: 'text', text: 'yes' }]),
      user('big', 'huge input, summarised'),
      { type: 'compact_boundary', uuid: 'b', trigger: 'reactive', preTokens: 10, postTokens: 1, messagesSummarized: 3, timestamp: 0 },
      user('summary', 'the summary'),
    ]);
    expect(transcript.dropUnansweredInputs(['big'])).toBe(false);
    expect(transcript.messages.map((message) => message.uuid)).toContain('big');
  });
});
