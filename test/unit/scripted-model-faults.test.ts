/**
 * The scripted model server's injected faults, as the REAL @anthropic-ai/sdk sees them (the
 * integration tests in test/integration/model-faults.test.ts rely on exactly these errors).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { type ScriptedModelServer, type ScriptedTurn, errorBurst, startScriptedModelServer } from '../../testing/scripted-model-server';
import { classifyModelError, retryAfterMs } from '../../activities/call-model';

const base = { model: 'claude-sonnet-4-6', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'hi' }] };
const twoBlocks: ScriptedTurn['content'] = [
  { type: 'text', text: 'first block' },
  { type: 'text', text: 'second block' },
];

let server: ScriptedModelServer;
let client: Anthropic;

beforeEach(async () => {
  server = await startScriptedModelServer();
  client = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
});

afterEach(async () => {
  await server.close();
});

/** Streams one answer; the text seen before the stream failed, and the error. */
async function streamUntilFailure(signal?: AbortSignal): Promise<{ text: string; error: unknown }> {
  let text = '';
  const stream = client.messages.stream(base, { signal });
  stream.on('text', (delta) => (text += delta));
  try {
    await stream.finalMessage();
  } catch (error) {
    return { text, error };
  }
  throw new Error(`the stream did not fail; text: ${text}`);
}

describe('scripted model server faults', () => {
  it('connection_reset: the SDK fails mid-stream with a connection error, after the first block', async () => {
    // Frames spaced out, so the first block reaches the client before the reset discards what is in flight.
    server.enqueue({ content: twoBlocks, fault: { type: 'connection_reset', afterBlocks: 1 }, deltaDelayMs: 20 });
    const { text, error } = await streamUntilFailure();
    expect(text).toBe('first block');
    expect(String(error)).toMatch(/terminated|ECONNRESET|socket/i);
    expect(classifyModelError(error, 0, false)).toMatchObject({ nonRetryable: false });
  });

  it('malformed_sse: the SDK cannot parse the frame and fails; the failure is retryable', async () => {
    server.enqueue({ content: twoBlocks, fault: { type: 'malformed_sse', afterBlocks: 1 } });
    const { text, error } = await streamUntilFailure();
    expect(text).toBe('first block');
    expect(error).toBeInstanceOf(Anthropic.AnthropicError);
    expect(String(error)).toMatch(/JSON/);
    expect(classifyModelError(error, 0, false)).toMatchObject({ type: 'model_call_error', nonRetryable: false });
  });

  it('stall: nothing after the first block until the client gives up', async () => {
    server.enqueue({ content: twoBlocks, fault: { type: 'stall', afterBlocks: 1 } });
    const controller = new AbortController();
    let text = '';
    const stream = client.messages.stream(base, { signal: controller.signal });
    stream.on('text', (delta) => {
      text += delta;
      if (text === 'first block') setTimeout(() => controller.abort(), 300);
    });
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);
    expect(text).toBe('first block');
  });

  it('error headers: a 429 carries retry-after, which becomes the retry delay', async () => {
    server.enqueue(...errorBurst(1, 429, { 'retry-after': '7' }));
    const error = await client.messages.create(base).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect(retryAfterMs(error as InstanceType<typeof Anthropic.APIError>)).toBe(7_000);
    expect(classifyModelError(error, 0, false)).toMatchObject({ type: 'rate_limit_error', nonRetryable: false, nextRetryDelay: 7_000 });
  });

  it('errorBurst: n answers of the same status, then the script goes on', async () => {
    server.enqueue(...errorBurst(2, 529), { content: [{ type: 'text', text: 'recovered' }] });
    for (let attempt = 0; attempt < 2; attempt++) {
      const error = await client.messages.create(base).catch((caught: unknown) => caught);
      expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    }
    const message = await client.messages.create(base);
    expect(message.content).toEqual([{ type: 'text', text: 'recovered' }]);
  });
});
