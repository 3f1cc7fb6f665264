/**
 * Models the API serves (issue 18): aliases, the fallback table against the scripted server's
 * catalog, resolution through the Models API (unknown id, API unreachable), limits from the model,
 * and the request each model gets (max_tokens, cache breakpoint, thinking, metadata).
 */
import Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashedInstallationId, metadataUserId } from '../../activities/installation-id';
import { checkModels } from '../../client/model-check';
import { UNKNOWN_MODEL_ERROR, createModelResolver } from '../../activities/model-resolver';
import { buildModelRequest, thinkingBlocksFor, withMessageBreakpoint } from '../../activities/request-params';
import { DEFAULT_MODEL, KNOWN_MODELS, MODEL_ALIASES, modelInfoFromTable, modelLimits, resolveModelName } from '../../common/models';
import type { ApiMessage } from '../../common/messages';
import { shouldAutoCompact, thresholdsForModel } from '../../workflows/compaction/auto';
import { MODEL_CATALOG, catalogModel } from '../../testing/model-catalog';
import { type ScriptedModelServer, startScriptedModelServer } from '../../testing/scripted-model-server';

/** The id the engine used to default to, which the API never served (spelled so the tree holds no such literal). */
const RETIRED_ID = ['claude-sonnet', '5', '5'].join('-');

describe('model names', () => {
  it('resolves the aliases to the current ids, keeping [1m]', () => {
    expect(resolveModelName('opus')).toEqual({ model: 'claude-opus-4-8' });
    expect(resolveModelName('sonnet')).toEqual({ model: 'claude-sonnet-5' });
    expect(resolveModelName('haiku')).toEqual({ model: 'claude-haiku-4-5' });
    expect(resolveModelName('fable')).toEqual({ model: 'claude-fable-5' });
    expect(resolveModelName('sonnet[1m]')).toEqual({ model: 'claude-sonnet-5[1m]' });
    expect(resolveModelName('claude-sonnet-4-6')).toEqual({ model: 'claude-sonnet-4-6' });
    expect(resolveModelName('gpt-4o')).toMatchObject({ problem: expect.stringContaining('"gpt-4o" is not a model the API serves') });
  });

  it('every alias, the default and the table name models the API serves, with the catalog limits and capabilities', () => {
    for (const id of [...Object.values(MODEL_ALIASES), DEFAULT_MODEL, 'claude-sonnet-4-6']) expect(catalogModel(id), id).toBeDefined();
    expect(KNOWN_MODELS.map((entry) => entry.id).sort()).toEqual(MODEL_CATALOG.map((entry) => entry.id).sort());
    for (const served of MODEL_CATALOG) {
      const known = modelInfoFromTable(served.id)!;
      expect(known.contextWindow).toBe(served.max_input_tokens);
      expect(known.maxOutputTokens).toBe(served.max_tokens);
      expect(known.capabilities.adaptiveThinking).toBe(served.capabilities.thinking.types.adaptive.supported);
      expect(known.capabilities.enabledThinking).toBe(served.capabilities.thinking.types.enabled.supported);
    }
  });

  it('a 1M-window model is not compacted at 300k tokens; a 200k model is', () => {
    expect(modelLimits('claude-opus-4-8').contextWindow).toBe(1_000_000);
    expect(modelLimits('claude-sonnet-4-6[1m]').contextWindow).toBe(1_000_000);
    const oneMillion = thresholdsForModel('claude-opus-4-8');
    expect(shouldAutoCompact({ tokenCount: 300_000, thresholds: oneMillion, enabled: true, consecutiveFailures: 0 })).toBe(false);
    expect(shouldAutoCompact({ tokenCount: 970_000, thresholds: oneMillion, enabled: true, consecutiveFailures: 0 })).toBe(true);
    expect(shouldAutoCompact({ tokenCount: 300_000, thresholds: thresholdsForModel('claude-sonnet-4-6'), enabled: true, consecutiveFailures: 0 })).toBe(true);
    // Recorded conversations of ids no longer served keep the limits they were recorded with.
    expect(modelLimits(RETIRED_ID)).toEqual({ contextWindow: 200_000, maxOutputTokens: 64_000 });
  });
});

describe('resolution through the Models API', () => {
  let server: ScriptedModelServer;
  let anthropic: Anthropic;
  beforeAll(async () => {
    server = await startScriptedModelServer();
    anthropic = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
  });
  afterAll(() => server.close());

  it('asks the API once per model and worker, and the API alias answers with its dated id', async () => {
    const resolver = createModelResolver(anthropic);
    const before = server.modelRequests.length;
    const haiku = await resolver.resolve('claude-haiku-4-5');
    expect(haiku).toMatchObject({ id: 'claude-haiku-4-5-20251001', source: 'api', contextWindow: 200_000, maxOutputTokens: 64_000 });
    expect(haiku.capabilities).toMatchObject({ adaptiveThinking: false, enabledThinking: true, effort: [] });
    await resolver.resolve('claude-haiku-4-5');
    // An agent file or a custom command may name an alias: the request names its id.
    expect(await resolver.resolve('haiku')).toMatchObject({ id: 'claude-haiku-4-5-20251001' });
    expect(buildModelRequest({ model: 'haiku', maxTokens: 1_000 }, { system: [], messages: [], tools: [] }, haiku).params.model).toBe('claude-haiku-4-5');
    expect(await resolver.resolve('claude-opus-4-8')).toMatchObject({
      contextWindow: 1_000_000,
      maxOutputTokens: 128_000,
      capabilities: { adaptiveThinking: true },
    });
    expect(server.modelRequests.length - before).toBe(3);
  });

  it('an id the API does not serve is a non-retryable failure naming it', async () => {
    const failure = await createModelResolver(anthropic)
      .resolve('claude-sonnet-9-9')
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({
      type: UNKNOWN_MODEL_ERROR,
      nonRetryable: true,
      message: expect.stringContaining('"claude-sonnet-9-9" is not a model the API serves'),
    });
    const direct = await anthropic.models.retrieve('claude-sonnet-9-9').catch((error: unknown) => error);
    expect(direct).toMatchObject({ status: 404, error: { error: { type: 'not_found_error', message: 'model: claude-sonnet-9-9' } } });
  });

  it('the Messages endpoint answers an unknown model with the API 404, and a max_tokens above the model maximum with a 400', async () => {
    const unknown = await anthropic.messages
      .create({ model: RETIRED_ID, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(unknown).toMatchObject({ status: 404, error: { error: { type: 'not_found_error' } } });
    const tooMany = await anthropic.messages
      .stream({ model: 'claude-sonnet-4-6', max_tokens: 64_001, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage()
      .catch((error: unknown) => error);
    expect(tooMany).toMatchObject({
      status: 400,
      message: expect.stringContaining('max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-6'),
    });
    server.rejections.length = 0;
  });

  it("the server refuses what a model's capabilities do not offer, and accepts what the engine builds for each model", async () => {
    const ask = (body: Record<string, unknown>) =>
      anthropic.messages
        .stream({ max_tokens: 2_000, messages: [{ role: 'user', content: 'hi' }], ...body } as Anthropic.MessageCreateParamsNonStreaming)
        .finalMessage()
        .catch((error: unknown) => error);
    expect(await ask({ model: 'claude-haiku-4-5', thinking: { type: 'adaptive' } })).toMatchObject({
      status: 400,
      message: expect.stringContaining("thinking.type: 'adaptive' is not supported"),
    });
    expect(await ask({ model: 'claude-opus-4-8', thinking: { type: 'enabled', budget_tokens: 1_024 } })).toMatchObject({ status: 400 });
    expect(await ask({ model: 'claude-fable-5', thinking: { type: 'disabled' } })).toMatchObject({ status: 400 });
    expect(await ask({ model: 'claude-haiku-4-5', output_config: { effort: 'high' } })).toMatchObject({
      status: 400,
      message: expect.stringContaining('does not support the effort parameter'),
    });
    expect(await ask({ model: 'claude-sonnet-4-6', context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] } })).toMatchObject({
      status: 400,
    });
    server.rejections.length = 0;
    for (const served of MODEL_CATALOG) {
      for (const options of [{}, { thinking: false }, { effort: 'max' as const }]) {
        server.enqueue({ content: [{ type: 'text', text: 'ok' }] });
        const { params } = buildModelRequest(
          { model: served.id, maxTokens: 8_192 },
          { system: [], messages: [{ role: 'user', content: 'hi' }], tools: [] },
          modelInfoFromTable(served.id)!,
          options,
        );
        expect(
          await anthropic.messages.stream(params as Anthropic.MessageCreateParamsNonStreaming).finalMessage(),
          `${served.id} ${JSON.stringify(options)}`,
        ).toMatchObject({ type: 'message' });
      }
    }
    expect(server.rejections).toEqual([]);
  });

  it('[1m] on a 200k model: the beta header opens the 1M window the workflow sizes its context by', async () => {
    const big = { system: [], messages: [{ role: 'user' as const, content: 'y'.repeat(1_200_000) }], tools: [] };
    const long = buildModelRequest({ model: 'claude-sonnet-4-6[1m]', maxTokens: 8_192 }, big, modelInfoFromTable('claude-sonnet-4-6[1m]')!);
    server.enqueue({ content: [{ type: 'text', text: 'read it all' }] });
    const answer = await anthropic.messages
      .stream(long.params as Anthropic.MessageCreateParamsNonStreaming, { headers: { 'anthropic-beta': long.betas.join(',') } })
      .finalMessage();
    expect(answer.content).toMatchObject([{ text: 'read it all' }]);
    const plain = buildModelRequest({ model: 'claude-sonnet-4-6', maxTokens: 8_192 }, big, modelInfoFromTable('claude-sonnet-4-6')!);
    await expect(anthropic.messages.stream(plain.params as Anthropic.MessageCreateParamsNonStreaming).finalMessage()).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('exceed context limit'),
    });
    server.rejections.length = 0;
  });

  it('the CLI check: aliases resolve, the fallback defaults to claude-sonnet-4-6, an unknown id is refused when the API answers', async () => {
    const env = { ANTHROPIC_BASE_URL: server.url };
    expect(await checkModels({ model: 'opus' }, env)).toEqual({ model: 'claude-opus-4-8', fallbackModel: 'claude-sonnet-4-6' });
    expect(await checkModels({ model: 'claude-sonnet-4-6' }, env)).toEqual({ model: 'claude-sonnet-4-6' });
    expect(await checkModels({}, env)).toEqual({ fallbackModel: 'claude-sonnet-4-6' });
    await expect(checkModels({ model: 'claude-opus-9' }, env)).rejects.toThrow('"claude-opus-9" is not a model the API serves');
    await expect(checkModels({ model: 'gpt-4o' }, {})).rejects.toThrow('"gpt-4o" is not a model the API serves');
    // Without a key or base URL the worker decides.
    expect(await checkModels({ model: 'claude-opus-9' }, {})).toMatchObject({ model: 'claude-opus-9' });
  });

  it('when the Models API cannot be asked, the built-in table answers (and the API is asked again later)', async () => {
    server.setModelsApiAvailable(false);
    let now = 0;
    const resolver = createModelResolver(anthropic, () => now);
    try {
      expect(await resolver.resolve('claude-sonnet-5')).toMatchObject({ id: 'claude-sonnet-5', source: 'table', contextWindow: 1_000_000 });
      await expect(resolver.resolve('not-a-claude-model')).rejects.toMatchObject({ type: UNKNOWN_MODEL_ERROR });
      server.setModelsApiAvailable(true);
      now += 61_000;
      expect(await resolver.resolve('claude-sonnet-5')).toMatchObject({ source: 'api' });
    } finally {
      server.setModelsApiAvailable(true);
    }
    // No key and no base URL: the table.
    expect(await createModelResolver(undefined).resolve('claude-opus-4-8')).toMatchObject({ source: 'table' });
  });
});

const user = (text: string): ApiMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const toolTurn = (id: string, thinking?: string): ApiMessage => ({
  role: 'assistant',
  content: [
    ...(thinking ? [{ type: 'thinking' as const, thinking, signature: `sig-${thinking}` }] : []),
    { type: 'tool_use', id, name: 'Read', input: { file_path: 'a' } },
  ],
});
const result = (id: string): ApiMessage => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'file' }] });
const system = [
  { type: 'text' as const, text: 'identity', cache_control: { type: 'ephemeral' as const } },
  { type: 'text' as const, text: 'static prompt', cache_control: { type: 'ephemeral' as const } },
];

describe('the request a model gets', () => {
  it('puts one breakpoint on the last block of the last message, at most 4 in all, without changing its input', () => {
    const messages = [user('do it'), toolTurn('t1'), result('t1')];
    const marked = withMessageBreakpoint(messages, 2);
    expect(JSON.stringify(marked).match(/cache_control/g)).toHaveLength(1);
    expect((marked[2].content as Array<Record<string, unknown>>)[0].cache_control).toEqual({ type: 'ephemeral' });
    expect(JSON.stringify(messages)).not.toContain('cache_control');
    expect(JSON.stringify(withMessageBreakpoint(messages, 4))).not.toContain('cache_control');
    // A final assistant turn whose last block is thinking gets it on the block before.
    const ending = withMessageBreakpoint(
      [
        user('x'),
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'a' },
            { type: 'thinking', thinking: 't', signature: 's' },
          ],
        },
      ],
      0,
    );
    expect((ending[1].content as Array<Record<string, unknown>>)[0].cache_control).toEqual({ type: 'ephemeral' });
  });

  it('caps max_tokens at the model maximum, sends adaptive thinking with effort on models that offer it, and metadata', () => {
    const opus = modelInfoFromTable('claude-opus-4-8')!;
    const { params, betas } = buildModelRequest({ model: 'claude-opus-4-8', maxTokens: 500_000 }, { system, messages: [user('hi')], tools: [] }, opus, {
      effort: 'max',
      userId: metadataUserId('abc', 'conv-1'),
    });
    expect(params).toMatchObject({
      model: 'claude-opus-4-8',
      max_tokens: 128_000,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'max' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      metadata: { user_id: JSON.stringify({ device_id: 'abc', session_id: 'conv-1' }) },
    });
    expect(betas).toContain('context-management-2025-06-27');
    // Enabled with a budget where adaptive is not offered; no effort where the model takes none.
    const haiku = buildModelRequest(
      { model: 'claude-haiku-4-5', maxTokens: 8_192 },
      { system, messages: [user('hi')], tools: [] },
      modelInfoFromTable('claude-haiku-4-5')!,
    ).params;
    expect(haiku).toMatchObject({ model: 'claude-haiku-4-5', thinking: { type: 'enabled', budget_tokens: 4_096 } });
    expect(haiku).not.toHaveProperty('output_config');
    // Turned off: disabled where the model allows it; a model that always thinks keeps its default.
    expect(
      buildModelRequest({ model: 'claude-sonnet-5', maxTokens: 8_192 }, { system, messages: [user('hi')], tools: [] }, modelInfoFromTable('claude-sonnet-5')!, {
        thinking: false,
      }).params.thinking,
    ).toEqual({ type: 'disabled' });
    expect(
      buildModelRequest({ model: 'claude-fable-5', maxTokens: 8_192 }, { system, messages: [user('hi')], tools: [] }, modelInfoFromTable('claude-fable-5')!, {
        thinking: false,
      }).params,
    ).not.toHaveProperty('thinking');
    // [1m] on a 200k model asks for the 1M beta, and the suffix never reaches the wire.
    const long = buildModelRequest(
      { model: 'claude-sonnet-4-6[1m]', maxTokens: 8_192 },
      { system, messages: [user('hi')], tools: [] },
      modelInfoFromTable('claude-sonnet-4-6')!,
    );
    expect(long.params.model).toBe('claude-sonnet-4-6');
    expect(long.betas).toContain('context-1m-2025-08-07');
  });

  it('keeps the thinking of the current tool loop; drops earlier turns only where the model keeps none, and all of it when thinking is off', () => {
    const messages = [
      user('first'),
      toolTurn('t1', 'old'),
      result('t1'),
      { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'done' }] },
      user('second'),
      toolTurn('t2', 'new'),
      result('t2'),
    ];
    expect(thinkingBlocksFor(messages, true, true)).toEqual(messages);
    const current = JSON.stringify(thinkingBlocksFor(messages, false, true));
    expect(current).toContain('sig-new');
    expect(current).not.toContain('sig-old');
    expect(JSON.stringify(thinkingBlocksFor(messages, true, false))).not.toContain('thinking');
  });
});

describe('metadata.user_id', () => {
  it('is a stable hash per installation: the same in one state directory, another in the next', async () => {
    const dirs = await Promise.all([mkdtemp(path.join(os.tmpdir(), 'install-a-')), mkdtemp(path.join(os.tmpdir(), 'install-b-'))]);
    try {
      const first = await hashedInstallationId(dirs[0]);
      expect(first).toMatch(/^[0-9a-f]{64}$/);
      expect(await hashedInstallationId(dirs[0])).toBe(first);
      expect(await hashedInstallationId(dirs[1])).not.toBe(first);
    } finally {
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });
});
