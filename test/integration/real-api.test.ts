/**
 * Real-API fidelity (issue 18), end to end on the dev server against the scripted model server,
 * which serves only its catalog's models, bills prompt caching from the breakpoints and checks
 * that signed thinking comes back unchanged: an unknown model started through the API, the
 * Models API unreachable, thinking across tool turns with metadata and cache hits, and a 1M-window
 * model that is not compacted at 300k tokens.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, createHarness, eventually, expectValidApiOrder, runToResult } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** The text of a request's last user message. */
function lastUserText(body: { messages: Array<{ role: string; content: unknown }> }): string {
  const last = [...body.messages].reverse().find((message) => message.role === 'user');
  if (!last || typeof last.content === 'string') return String(last?.content ?? '');
  return (last.content as Array<{ text?: string }>).map((block) => block.text ?? '').join('\n');
}

describe('models the API serves', () => {
  it('a model the API does not serve, started through the API: one clear error naming it, no retries, no message request', async () => {
    harness = await createHarness();
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Hello?', { model: 'claude-opus-9' });
    expect(result).toMatchObject({ is_error: true, subtype: 'error_during_execution' });
    expect(result.result).toContain('"claude-opus-9" is not a model the API serves');
    expect(harness.model.requests).toHaveLength(0);
    expect(harness.model.modelRequests.filter((request) => request.path === '/v1/models/claude-opus-9')).toHaveLength(1);
    // The conversation stays usable: /model to a served one and go on.
    harness.model.enqueue({ content: [{ type: 'text', text: 'Hi.' }] });
    await harness.api.send(conversationId, '/model sonnet');
    const next = await harness.api.send(conversationId, 'Hello again?');
    expect(await harness.api.waitForResult(conversationId, next)).toMatchObject({ is_error: false, result: 'Hi.' });
    expect(harness.model.requests[0].body.model).toBe('claude-sonnet-5');
  });

  it('when the Models API cannot be asked, the built-in table answers and the conversation runs', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'Fine.' }] }] });
    harness.model.setModelsApiAvailable(false);
    await harness.startWorker();
    const { result } = await runToResult(harness, 'Hello?', { model: 'claude-opus-4-8', maxOutputTokens: 200_000 });
    expect(result).toMatchObject({ is_error: false, result: 'Fine.' });
    expect(harness.model.modelRequests.length).toBeGreaterThan(0);
    // The table's maximum caps max_tokens as the API's answer would have.
    expect(harness.model.requests[0].body).toMatchObject({ model: 'claude-opus-4-8', max_tokens: 128_000, thinking: { type: 'adaptive' } });
  });
});

describe('thinking and caching in a conversation', () => {
  it('signed thinking goes back unchanged across tool turns; metadata.user_id; each turn reads the previous prefix from the cache', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'thinking', thinking: 'Read a.txt first.' },
            { type: 'tool_use', id: 'toolu_a', name: 'Read', input: { file_path: 'a.txt' } },
          ],
        },
        {
          content: [
            { type: 'thinking', thinking: 'Now b.txt.' },
            { type: 'tool_use', id: 'toolu_b', name: 'Read', input: { file_path: 'b.txt' } },
          ],
        },
        {
          content: [
            { type: 'thinking', thinking: 'Both read.' },
            { type: 'text', text: 'a and b.' },
          ],
        },
      ],
    });
    await writeFile(path.join(harness.workspace, 'a.txt'), 'a\n'.repeat(2_000));
    await writeFile(path.join(harness.workspace, 'b.txt'), 'b\n'.repeat(2_000));
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Read a.txt and b.txt.', { effort: 'medium' });
    expect(result).toMatchObject({ is_error: false, result: 'a and b.' });
    const [first, second, third] = harness.model.requests.map((request) => request.body);
    expect(first).toMatchObject({
      model: 'claude-sonnet-4-6',
      thinking: { type: 'adaptive' },
      output_config: { effort: 'medium' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    });
    const userId = JSON.parse(first.metadata.user_id);
    expect(userId).toEqual({ device_id: expect.stringMatching(/^[0-9a-f]{64}$/), session_id: conversationId });
    // The thinking of each tool turn is sent back first in its assistant message, as it came.
    const assistants = third.messages.filter((message: { role: string }) => message.role === 'assistant');
    expect(assistants.map((message: { content: Array<{ type: string; thinking?: string }> }) => message.content[0])).toMatchObject([
      { type: 'thinking', thinking: 'Read a.txt first.', signature: expect.any(String) },
      { type: 'thinking', thinking: 'Now b.txt.', signature: expect.any(String) },
    ]);
    expect(second.messages[1].content[0].signature).toBe(assistants[0].content[0].signature);
    // ≤ 4 breakpoints, the last on the last block of the last message; each request reads the one before.
    for (const body of [first, second, third]) {
      expect(JSON.stringify(body).match(/"cache_control"/g)!.length).toBeLessThanOrEqual(4);
      expect(body.messages.at(-1).content.at(-1).cache_control).toEqual({ type: 'ephemeral' });
      expectValidApiOrder({ body } as never);
    }
    expect(result.usage.cache_read_input_tokens).toBeGreaterThan(result.usage.input_tokens);
    expect(result.usage.cache_creation_input_tokens).toBeGreaterThan(0);
  });

  it("thinking off (flag or the settings' alwaysThinkingEnabled): disabled on the wire; a model that cannot turn it off is left to its default", async () => {
    harness = await createHarness({ script: ['One.', 'Two.', 'Three.', 'Four.'].map((text) => ({ content: [{ type: 'text' as const, text }] })) });
    await harness.startWorker();
    await runToResult(harness, 'Hello?', { thinking: false });
    await runToResult(harness, 'Hello?', { thinking: false, model: 'claude-fable-5' });
    await mkdir(path.join(harness.workspace, '.claude'), { recursive: true });
    await writeFile(path.join(harness.workspace, '.claude', 'settings.json'), JSON.stringify({ alwaysThinkingEnabled: false }));
    await runToResult(harness, 'Hello?');
    await runToResult(harness, 'Hello?', { thinking: true });
    const thinking = harness.model.requests.map((request) => request.body.thinking);
    expect(thinking).toEqual([{ type: 'disabled' }, undefined, { type: 'disabled' }, { type: 'adaptive' }]);
  });
});

describe('thinking across a worker crash', () => {
  it("a worker SIGKILLed while thinking streams: the retried answer's signed thinking is the one that goes back", async () => {
    let firstTurnAttempts = 0;
    harness = await createHarness({
      respond: (request) => {
        const count = request.body.messages.length;
        if (count === 1) {
          firstTurnAttempts++;
          return {
            deltaDelayMs: 100,
            chunkSize: 4,
            content: [
              { type: 'thinking', thinking: `Attempt ${firstTurnAttempts}: read the notes before answering, slowly.` },
              { type: 'tool_use', id: 'toolu_notes', name: 'Read', input: { file_path: 'notes.txt' } },
            ],
          };
        }
        return { content: [{ type: 'text', text: 'Read the notes.' }] };
      },
    });
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'notes\n');
    const first = await harness.spawnWorkerProcess();
    const started = await harness.api.start({ prompt: 'Read the notes.', config: harness.config(), taskQueue: harness.taskQueue });
    await eventually(
      async () => harness!.model.requests.length,
      (count) => count >= 1,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    await harness.spawnWorkerProcess();
    expect(await harness.api.waitForResult(started.conversationId, started.inputUuid!)).toMatchObject({ is_error: false, result: 'Read the notes.' });
    expect(firstTurnAttempts).toBe(2);
    // The strict server verified the signature: it is the one it issued for the completed attempt.
    const followUp = harness.model.requests.at(-1)!.body;
    expect(followUp.messages[1].content[0]).toMatchObject({ type: 'thinking', thinking: expect.stringMatching(/^Attempt 2:/) });
  });
});

describe('limits from the model', () => {
  it('a 1M-window model is not compacted at 300k tokens', async () => {
    harness = await createHarness({
      respond: (request) => (lastUserText(request.body).includes('<summary>') ? { content: [{ type: 'text', text: '<summary>never</summary>' }] } : undefined),
      script: [{ content: [{ type: 'text', text: 'Big.' }], usage: { input_tokens: 300_000 } }, { content: [{ type: 'text', text: 'Still here.' }] }],
    });
    await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'First.', { model: 'claude-opus-4-8' });
    const next = await harness.api.send(conversationId, 'Second.');
    expect(await harness.api.waitForResult(conversationId, next)).toMatchObject({ result: 'Still here.' });
    expect(harness.model.requests).toHaveLength(2);
    const status = await harness.api.status(conversationId);
    expect(status.context).toMatchObject({ contextWindow: 1_000_000, compactions: 0 });
  });
});
