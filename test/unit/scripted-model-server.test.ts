/**
 * The scripted model server driven by the REAL @anthropic-ai/sdk: every assertion here is about
 * what the SDK sees, so the double stays faithful to the wire protocol.
 */
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { estimateInputTokens, promptTooLongTurn, startScriptedModelServer, type ScriptedModelServer } from '../../testing/scripted-model-server';

const MODEL = 'claude-sonnet-4-6';
const base = { model: MODEL, max_tokens: 1024, messages: [{ role: 'user' as const, content: 'hi' }] };

let server: ScriptedModelServer;
let client: Anthropic;

beforeEach(async () => {
  server = await startScriptedModelServer();
  client = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
});

afterEach(async () => {
  await server.close();
});

/** A request the real API refuses: the system prompt's empty block carries cache_control. */
const emptyCachedSystem = {
  ...base,
  system: [
    { type: 'text' as const, text: 'You are terse.' },
    { type: 'text' as const, text: '', cache_control: { type: 'ephemeral' as const } },
  ],
};

/** Captures the rejection of a promise (fails the test if it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the promise to reject');
}

describe('scripted model server', () => {
  it('answers a non-streaming request with a full Message', async () => {
    server.enqueue({ content: [{ type: 'text', text: 'Hello there.' }] });
    const message = await client.messages.create(base);
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [{ type: 'text', text: 'Hello there.' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: estimateInputTokens(base),
        output_tokens: Math.ceil('Hello there.'.length / 4),
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
    expect(message.id).toMatch(/^msg_/);
    expect(server.remaining()).toBe(0);
  });

  it('defaults to a single OK text block', async () => {
    server.enqueue({});
    const message = await client.messages.create(base);
    expect(message.content).toEqual([{ type: 'text', text: 'OK' }]);
  });

  it('streams text in several deltas; finalMessage equals the non-streaming answer', async () => {
    const text = 'The quick brown fox jumps over the lazy dog, then naps in the sun for a while.';
    const turn = { content: [{ type: 'text' as const, text }] };
    server.enqueue(turn, turn);

    const plain = await client.messages.create(base);

    const stream = client.messages.stream(base);
    const deltas: string[] = [];
    const eventTypes: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    stream.on('streamEvent', (event) => eventTypes.push(event.type));
    const final = await stream.finalMessage();

    expect(final.content).toEqual(plain.content);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBe(plain.usage.output_tokens);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(text);
    expect(eventTypes[0]).toBe('message_start');
    expect(eventTypes.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(eventTypes).toContain('content_block_start');
    expect(eventTypes).toContain('content_block_stop');
  });

  it('streams tool_use input as partial_json that parses back to the object', async () => {
    const input = {
      path: 'src/é/日本語.ts',
      emoji: '🎉 done',
      nested: { list: [1, 2, { deep: true, nothing: null }], quote: 'say "hi"\nnewline' },
    };
    server.enqueue({
      content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', name: 'Read', input },
      ],
      chunkSize: 5,
    });
    const stream = client.messages.stream(base);
    const partials: string[] = [];
    stream.on('inputJson', (partial) => partials.push(partial));
    const final = await stream.finalMessage();

    expect(partials.length).toBeGreaterThan(1);
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content).toHaveLength(2);
    const tool = final.content[1];
    expect(tool.type).toBe('tool_use');
    if (tool.type !== 'tool_use') throw new Error('unreachable');
    expect(tool.id).toMatch(/^toolu_\d+$/);
    expect(tool.name).toBe('Read');
    expect(tool.input).toEqual(input);
  });

  it('keeps explicit tool_use ids and generates distinct ones otherwise', async () => {
    server.enqueue({
      content: [
        { type: 'tool_use', id: 'toolu_explicit', name: 'A', input: {} },
        { type: 'tool_use', name: 'B', input: { x: 1 } },
        { type: 'tool_use', name: 'C', input: { y: 2 } },
      ],
    });
    const message = await client.messages.create(base);
    const ids = message.content.map((b) => (b.type === 'tool_use' ? b.id : ''));
    expect(ids[0]).toBe('toolu_explicit');
    expect(new Set(ids).size).toBe(3);
  });

  it('round-trips a thinking block with its signature through finalMessage', async () => {
    server.enqueue({
      content: [
        { type: 'thinking', thinking: 'First I should consider the options carefully.', signature: 'sig-abc==' },
        { type: 'thinking', thinking: 'Unsigned thought.' },
        { type: 'text', text: 'Answer.' },
      ],
    });
    const stream = client.messages.stream(base);
    const final = await stream.finalMessage();
    expect(final.content[0]).toEqual({
      type: 'thinking',
      thinking: 'First I should consider the options carefully.',
      signature: 'sig-abc==',
    });
    const second = final.content[1];
    expect(second.type === 'thinking' && second.signature.length > 0).toBe(true);
    expect(final.content[2]).toEqual({ type: 'text', text: 'Answer.' });
  });

  it('reports stop_reason max_tokens and overridden usage (streaming and not)', async () => {
    const turn = {
      content: [{ type: 'text' as const, text: 'Truncated answ' }],
      stop_reason: 'max_tokens' as const,
      usage: { input_tokens: 1234, output_tokens: 56, cache_read_input_tokens: 7, cache_creation_input_tokens: 8 },
      model: 'claude-reported',
    };
    server.enqueue(turn, turn);
    const expectedUsage = {
      input_tokens: 1234,
      output_tokens: 56,
      cache_read_input_tokens: 7,
      cache_creation_input_tokens: 8,
    };

    const plain = await client.messages.create(base);
    expect(plain.stop_reason).toBe('max_tokens');
    expect(plain.model).toBe('claude-reported');
    expect(plain.usage).toEqual(expectedUsage);

    const final = await client.messages.stream(base).finalMessage();
    expect(final.stop_reason).toBe('max_tokens');
    expect(final.usage).toMatchObject(expectedUsage);
  });

  it('surfaces an injected 529 as APIError with status 529 and type overloaded_error', async () => {
    server.enqueue({ error: { status: 529 } });
    const err = await rejectionOf(client.messages.create(base));
    expect(err).toBeInstanceOf(Anthropic.APIError);
    const apiErr = err as InstanceType<typeof Anthropic.APIError>;
    expect(apiErr.status).toBe(529);
    expect(apiErr.type).toBe('overloaded_error');
    expect(apiErr.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(apiErr.requestID).toMatch(/^req_/);
    expect(apiErr.headers?.get('retry-after')).toBeNull();
  });

  it('maps statuses to the API error types', async () => {
    const cases: Array<[number, string]> = [
      [401, 'authentication_error'],
      [403, 'permission_error'],
      [413, 'request_too_large'],
      [429, 'rate_limit_error'],
      [500, 'api_error'],
    ];
    for (const [status] of cases) server.enqueue({ error: { status } });
    for (const [status, type] of cases) {
      const err = (await rejectionOf(client.messages.create(base))) as InstanceType<typeof Anthropic.APIError>;
      expect(err.status).toBe(status);
      expect(err.type).toBe(type);
    }
  });

  it('answers prompt-too-long as 400 invalid_request_error with the API wording', async () => {
    server.enqueue(promptTooLongTurn(210345, 200000));
    const err = (await rejectionOf(client.messages.create(base))) as InstanceType<typeof Anthropic.APIError>;
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.status).toBe(400);
    expect(err.type).toBe('invalid_request_error');
    expect(err.apiMessage).toBe('prompt is too long: 210345 tokens > 200000 maximum');
    expect(err.message).toContain('prompt is too long: 210345 tokens > 200000 maximum');
    // A scripted error turn is not a validator rejection.
    expect(server.rejections).toEqual([]);
  });

  it('refuses a request the real API refuses, with the API message, and records the rejection', async () => {
    server.enqueue({ content: [{ type: 'text', text: 'never sent' }] });
    const err = (await rejectionOf(client.messages.create(emptyCachedSystem))) as InstanceType<typeof Anthropic.APIError>;
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.type).toBe('invalid_request_error');
    expect(err.apiMessage).toBe('system.1: cache_control cannot be set for empty text blocks');
    // Recorded before it was refused; the refusal consumed no scripted turn.
    expect(server.requests).toHaveLength(1);
    expect(server.remaining()).toBe(1);
    expect(server.rejections).toEqual([{ index: 0, path: '/v1/messages', message: 'system.1: cache_control cannot be set for empty text blocks' }]);

    // The stream path is refused the same way, and a valid request after it is served.
    const stream = client.messages.stream({
      ...base,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} }] },
        { role: 'user', content: 'and then?' },
      ],
      tools: [{ name: 'Read', input_schema: { type: 'object' } }],
    });
    stream.on('error', () => {});
    const streamErr = (await rejectionOf(stream.finalMessage())) as InstanceType<typeof Anthropic.APIError>;
    expect(streamErr.status).toBe(400);
    expect(streamErr.apiMessage).toMatch(/^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1\./);
    expect((await client.messages.create(base)).content).toEqual([{ type: 'text', text: 'never sent' }]);
    expect(server.rejections.map((rejection) => rejection.index)).toEqual([0, 1]);
  });

  it('validates count_tokens too (no max_tokens there) and records its rejections', async () => {
    const { max_tokens: _maxTokens, ...countable } = emptyCachedSystem;
    const err = (await rejectionOf(client.messages.countTokens(countable))) as InstanceType<typeof Anthropic.APIError>;
    expect(err.status).toBe(400);
    expect(err.apiMessage).toBe('system.1: cache_control cannot be set for empty text blocks');
    const extra = await fetch(`${server.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(base),
    });
    expect(extra.status).toBe(400);
    expect(((await extra.json()) as { error: { message: string } }).error.message).toBe('max_tokens: Extra inputs are not permitted');
    expect(server.rejections).toEqual([
      { index: 0, path: '/v1/messages/count_tokens', message: 'system.1: cache_control cannot be set for empty text blocks' },
      { index: 1, path: '/v1/messages/count_tokens', message: 'max_tokens: Extra inputs are not permitted' },
    ]);
    expect(server.requests).toHaveLength(0);
  });

  it('makes the stream reject when an error event arrives mid-stream', async () => {
    server.enqueue({
      content: [
        { type: 'text', text: 'First block arrives fine.' },
        { type: 'text', text: 'This one never comes.' },
      ],
      streamErrorAfterBlocks: 1,
    });
    const stream = client.messages.stream(base);
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    stream.on('error', () => {}); // finalMessage() below observes the rejection
    const err = (await rejectionOf(stream.finalMessage())) as InstanceType<typeof Anthropic.APIError>;
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.type).toBe('overloaded_error');
    expect(texts.join('')).toBe('First block arrives fine.');
  });

  it('answers 500 with a loud message when the script is exhausted', async () => {
    server.enqueue({});
    await client.messages.create(base);
    const err = (await rejectionOf(client.messages.create(base))) as InstanceType<typeof Anthropic.APIError>;
    expect(err.status).toBe(500);
    expect(err.type).toBe('api_error');
    expect(err.apiMessage).toBe('scripted model server: script exhausted (request #1)');
  });

  it('consults the responder first and falls back to the queue', async () => {
    server.enqueue({ content: [{ type: 'text', text: 'from queue' }] });
    server.setResponder((req) => (JSON.stringify(req.body.messages).includes('magic') ? { content: [{ type: 'text', text: 'from responder' }] } : undefined));
    const a = await client.messages.create({ ...base, messages: [{ role: 'user', content: 'magic word' }] });
    const b = await client.messages.create(base);
    expect(a.content).toEqual([{ type: 'text', text: 'from responder' }]);
    expect(b.content).toEqual([{ type: 'text', text: 'from queue' }]);
    expect(server.remaining()).toBe(0);
  });

  it('counts tokens via client.messages.countTokens (estimate and override)', async () => {
    const params = {
      model: MODEL,
      system: 'You are terse.',
      messages: [{ role: 'user' as const, content: 'count me please' }],
      tools: [{ name: 'Read', description: 'read a file', input_schema: { type: 'object' as const, properties: {} } }],
    };
    const counted = await client.messages.countTokens(params);
    expect(counted.input_tokens).toBe(estimateInputTokens(params));
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(server.countTokenRequests).toHaveLength(1);
    expect(server.countTokenRequests[0].body.system).toBe('You are terse.');
    expect(server.requests).toHaveLength(0);

    const custom = await startScriptedModelServer({ countTokens: () => 4242 });
    try {
      const other = new Anthropic({ apiKey: 'test', baseURL: custom.url, maxRetries: 0 });
      expect((await other.messages.countTokens(params)).input_tokens).toBe(4242);
    } finally {
      await custom.close();
    }
  });

  it('survives a client aborting a stream mid-way, and keeps serving', async () => {
    const log: string[] = [];
    const slow = await startScriptedModelServer({ log: (line) => log.push(line) });
    try {
      const other = new Anthropic({ apiKey: 'test', baseURL: slow.url, maxRetries: 0 });
      slow.enqueue(
        { content: [{ type: 'text', text: 'x'.repeat(400) }], chunkSize: 4, deltaDelayMs: 10 },
        { content: [{ type: 'text', text: 'still alive' }] },
      );
      const controller = new AbortController();
      const stream = other.messages.stream(base, { signal: controller.signal });
      stream.on('error', () => {});
      let received = 0;
      stream.on('text', () => {
        received += 1;
        if (received === 3) controller.abort();
      });
      const err = await rejectionOf(stream.finalMessage());
      expect(err).toBeInstanceOf(Anthropic.APIUserAbortError);
      expect(received).toBeLessThan(100);

      // Give the server a moment to notice the disconnect, then it must still answer.
      await new Promise((r) => setTimeout(r, 50));
      const next = await other.messages.create(base);
      expect(next.content).toEqual([{ type: 'text', text: 'still alive' }]);
      expect(log.some((line) => line.includes('client disconnected'))).toBe(true);
      expect(log.some((line) => line.includes('internal error'))).toBe(false);
    } finally {
      await slow.close();
    }
  });

  it('close() ends a stream in progress instead of waiting for it', async () => {
    const local = await startScriptedModelServer({
      script: [{ content: [{ type: 'text', text: 'y'.repeat(1000) }], chunkSize: 1, deltaDelayMs: 50 }],
    });
    const other = new Anthropic({ apiKey: 'test', baseURL: local.url, maxRetries: 0 });
    const stream = other.messages.stream(base);
    stream.on('error', () => {});
    await new Promise<void>((resolve) => stream.once('text', () => resolve()));
    const started = Date.now();
    await local.close();
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(stream.finalMessage()).rejects.toBeDefined();
  });

  it('records every request with its body before answering', async () => {
    server.enqueue({ error: { status: 529 } }, {});
    await rejectionOf(client.messages.create({ ...base, system: 'sys prompt' }));
    await client.messages.stream(base).finalMessage();

    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests;
    expect(first).toMatchObject({ index: 0, path: '/v1/messages', stream: false });
    expect(first.body).toMatchObject({ model: MODEL, max_tokens: 1024, system: 'sys prompt' });
    expect(first.body.messages).toEqual(base.messages);
    // SDK 1.14 authenticates with `authorization: Bearer <key>` (older SDKs used x-api-key).
    expect(first.headers['authorization'] ?? first.headers['x-api-key']).toMatch(/test$/);
    expect(first.headers['anthropic-version']).toBeTruthy();
    expect(typeof first.receivedAt).toBe('number');
    expect(second).toMatchObject({ index: 1, stream: true });
    expect(second.body.stream).toBe(true);
    expect(server.rejections).toEqual([]);
  });

  it('answers unknown routes with a 404 in the API error shape', async () => {
    const res = await fetch(`${server.url}/v1/nope`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(404);
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });

  it('emits the exact SSE framing with a ping after message_start', async () => {
    server.enqueue({ content: [{ type: 'text', text: 'hey' }] });
    const res = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...base, stream: true }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const raw = await res.text();
    const frames = raw.split('\n\n').filter(Boolean);
    const names = frames.map((f) => /^event: (\S+)\ndata: \{.*\}$/s.exec(f)?.[1]);
    expect(names).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    const messageDelta = JSON.parse(frames[5].split('\ndata: ')[1]);
    expect(messageDelta).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 1 },
    });
  });
});
