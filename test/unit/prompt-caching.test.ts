/**
 * The scripted model server bills prompt caching as the API does and checks thinking round trips
 * (issue 18); the engine's requests put their breakpoints where each turn reads the previous one.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildModelRequest } from '../../activities/request-params';
import { modelToolDefinitions } from '../../activities/tool-definitions';
import type { ApiMessage } from '../../common/messages';
import { modelInfoFromTable } from '../../common/models';
import { CACHE_TTL_MS, PromptCache, inputEquivalentTokens } from '../../testing/prompt-cache';
import { type ScriptedModelServer, startScriptedModelServer } from '../../testing/scripted-model-server';

const long = (label: string, chars = 8_000) => `${label}: ${'x'.repeat(chars)}`;
const system = [{ type: 'text', text: long('system'), cache_control: { type: 'ephemeral' } }];
const text = (value: string, cached = false) => ({ type: 'text', text: value, ...(cached ? { cache_control: { type: 'ephemeral' } } : {}) });
const total = (body: Record<string, unknown>) => Math.ceil(JSON.stringify([body.system, body.messages]).length / 4);

describe('PromptCache (the API billing)', () => {
  it('writes a prefix at a breakpoint, reads it on the next request, and moves forward with the conversation', () => {
    const cache = new PromptCache(() => 0);
    const first = { model: 'claude-sonnet-4-6', system, messages: [{ role: 'user', content: [text(long('turn 1'), true)] }] };
    const one = cache.bill(first, total(first));
    expect(one.cache_read_input_tokens).toBe(0);
    expect(one.cache_creation_input_tokens).toBeGreaterThan(3_000);
    const second = {
      model: 'claude-sonnet-4-6',
      system,
      messages: [
        { role: 'user', content: [text(long('turn 1'))] },
        { role: 'assistant', content: [text('ok')] },
        { role: 'user', content: [text(long('turn 2'), true)] },
      ],
    };
    const two = cache.bill(second, total(second));
    // The whole first request is read; only the new turn is written.
    expect(two.cache_read_input_tokens).toBe(one.cache_creation_input_tokens);
    expect(two.cache_creation_input_tokens).toBeGreaterThan(1_900);
    expect(two.cache_creation_input_tokens).toBeLessThan(2_200);
    expect(inputEquivalentTokens(two)).toBeLessThan(total(second) * 0.5);
  });

  it('caches nothing under 1024 tokens, nothing for another model, and forgets after 5 minutes', () => {
    let now = 0;
    const cache = new PromptCache(() => now);
    const small = { model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: [text('short', true)] }] };
    cache.bill(small, 10);
    expect(cache.bill(small, 10)).toEqual({ input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    const big = { model: 'claude-sonnet-4-6', system, messages: [{ role: 'user', content: [text('hi', true)] }] };
    cache.bill(big, total(big));
    expect(cache.bill({ ...big, model: 'claude-opus-4-8' }, total(big)).cache_read_input_tokens).toBe(0);
    expect(cache.bill(big, total(big)).cache_read_input_tokens).toBeGreaterThan(0);
    now += CACHE_TTL_MS + 1;
    expect(cache.bill(big, total(big)).cache_read_input_tokens).toBe(0);
  });

  it('a breakpoint finds a cached prefix up to 20 blocks before it, not 21', () => {
    const blocks = (count: number, cachedAt: number) =>
      Array.from({ length: count }, (_, index) => text(index === 0 ? long('first') : `b${index}`, index === cachedAt));
    const hit = new PromptCache(() => 0);
    hit.bill({ model: 'm', messages: [{ role: 'user', content: blocks(1, 0) }] }, 3_000);
    // Blocks 1..19 follow the cached block 0: the breakpoint on block 19 is 19 blocks (plus the role marker) after it.
    expect(hit.bill({ model: 'm', messages: [{ role: 'user', content: blocks(20, 19) }] }, 3_000).cache_read_input_tokens).toBeGreaterThan(0);
    const miss = new PromptCache(() => 0);
    miss.bill({ model: 'm', messages: [{ role: 'user', content: blocks(1, 0) }] }, 3_000);
    expect(miss.bill({ model: 'm', messages: [{ role: 'user', content: blocks(22, 21) }] }, 3_000).cache_read_input_tokens).toBe(0);
  });
});

describe('the engine request and the scripted server', () => {
  let server: ScriptedModelServer;
  let anthropic: Anthropic;
  beforeAll(async () => {
    server = await startScriptedModelServer();
    anthropic = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
  });
  afterAll(() => server.close());

  const sonnet = modelInfoFromTable('claude-sonnet-4-6')!;
  const tools = modelToolDefinitions(['Read'], undefined);
  const engineSystem = [
    { type: 'text' as const, text: 'identity', cache_control: { type: 'ephemeral' as const } },
    { type: 'text' as const, text: long('static prompt'), cache_control: { type: 'ephemeral' as const } },
  ];
  const send = async (messages: ApiMessage[]) => {
    const { params } = buildModelRequest({ model: 'claude-sonnet-4-6', maxTokens: 4_096 }, { system: engineSystem, messages, tools }, sonnet);
    const breakpoints = JSON.stringify(params).match(/cache_control/g)?.length ?? 0;
    return { message: await anthropic.messages.stream(params as Anthropic.MessageCreateParamsNonStreaming).finalMessage(), breakpoints, params };
  };

  it('each turn reads the previous prefix: at most 4 breakpoints, the last on the last message', async () => {
    const messages: ApiMessage[] = [{ role: 'user', content: [{ type: 'text', text: long('task') }] }];
    let previousCached = 0;
    for (let turn = 0; turn < 4; turn++) {
      server.enqueue({ content: [{ type: 'tool_use', id: `toolu_${turn}`, name: 'Read', input: { file_path: `f${turn}` } }] });
      const { message, breakpoints, params } = await send(messages);
      expect(breakpoints).toBe(3);
      const last = params.messages.at(-1)!.content as unknown as Array<Record<string, unknown>>;
      expect(last.at(-1)!.cache_control).toEqual({ type: 'ephemeral' });
      // Everything the previous request cached (read or written) is read now; only the new turn is written.
      if (turn > 0) expect(message.usage.cache_read_input_tokens).toBe(previousCached);
      expect(message.usage.cache_creation_input_tokens).toBeGreaterThan(0);
      previousCached = (message.usage.cache_read_input_tokens ?? 0) + (message.usage.cache_creation_input_tokens ?? 0);
      messages.push(
        { role: 'assistant', content: message.content as ApiMessage['content'] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${turn}`, content: long(`file ${turn}`, 4_000) }] },
      );
    }
    expect(server.rejections).toEqual([]);
  });

  it('signed thinking goes back unchanged across tool turns; an altered signature or a lost thinking block is the API 400', async () => {
    server.enqueue({
      content: [
        { type: 'thinking', thinking: 'Read the file first.' },
        { type: 'tool_use', id: 'toolu_think', name: 'Read', input: { file_path: 'a' } },
      ],
    });
    const first = await send([{ role: 'user', content: [{ type: 'text', text: 'go' }] }]);
    expect(first.params.thinking).toEqual({ type: 'adaptive' });
    const answer = first.message.content as ApiMessage['content'] as Array<Record<string, unknown>>;
    expect(answer[0]).toMatchObject({ type: 'thinking', signature: expect.any(String) });
    const followUp = (assistant: Array<Record<string, unknown>>): ApiMessage[] => [
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: assistant as ApiMessage['content'] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_think', content: 'a' }] },
    ];
    server.enqueue({ content: [{ type: 'text', text: 'Done.' }] });
    expect((await send(followUp(answer))).message.content).toMatchObject([{ type: 'text', text: 'Done.' }]);
    const altered = [{ ...answer[0], signature: `${String(answer[0].signature)}x` }, answer[1]];
    await expect(send(followUp(altered))).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('messages.1.content.0: Invalid `signature` in `thinking` block'),
    });
    await expect(send(followUp([answer[1]]))).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('Expected `thinking` or `redacted_thinking`, but found `tool_use`'),
    });
    // The same block sent to another model: its signature is not that model's.
    const other = buildModelRequest(
      { model: 'claude-opus-4-8', maxTokens: 4_096 },
      { system: engineSystem, messages: followUp(answer), tools },
      modelInfoFromTable('claude-opus-4-8')!,
    ).params;
    await expect(anthropic.messages.stream(other as Anthropic.MessageCreateParamsNonStreaming).finalMessage()).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('Invalid `signature`'),
    });
    server.rejections.length = 0;
  });
});
