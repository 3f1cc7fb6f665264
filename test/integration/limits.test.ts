/**
 * Limits end to end: a token budget keeps the model working (token_budget_continuation), and a
 * conversation past the context window's blocking limit is refused before anything is sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, createHarness, eventually, expectValidApiOrder, runToResult } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('limits', () => {
  it('continues on a "+Nk" token budget until 90% of it is used', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'text', text: 'Part one.' }], usage: { output_tokens: 600 } },
        { content: [{ type: 'text', text: 'Part two.' }], usage: { output_tokens: 600 } },
        { content: [{ type: 'text', text: 'Done.' }], usage: { output_tokens: 600 } },
      ],
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Write the whole guide. +2k');

    expect(result).toMatchObject({ subtype: 'success', result: 'Done.', transitions: ['token_budget_continuation', 'token_budget_continuation'] });
    expect(harness.model.requests).toHaveLength(3);
    const nudge = JSON.stringify(harness.model.requests[1].body.messages.at(-1));
    expect(nudge).toContain('Stopped at 30% of token target (600 / 2,000). Keep working');
    const { events } = await harness.api.events(conversationId);
    expect(events.map((event) => event.message)).toContainEqual(
      expect.objectContaining({ type: 'system', content: expect.stringContaining('Token budget: 1800 of 2000 output tokens (90%)') }),
    );
  });

  it('refuses a request past the blocking limit, and the conversation stays usable', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'Short answer.' }] }] });
    await harness.startWorker();
    const config = { contextWindowTokens: 40_000, autoCompact: false };
    const { result, conversationId } = await runToResult(harness, `Summarize: ${'lorem ipsum '.repeat(8_000)}`, config);

    expect(result).toMatchObject({ is_error: true, terminal_reason: 'blocking_limit', transitions: [] });
    expect(result.result).toContain("too long for the model's context window");
    expect(result.result).toContain('message was not kept in the conversation');
    expect(harness.model.requests).toHaveLength(0);
    expect((await harness.api.status(conversationId)).phase).toBe('awaiting_input');

    // A shorter follow-up works: the oversized input is no longer part of the conversation.
    const next = await harness.api.send(conversationId, 'Just say hi.');
    expect(await harness.api.waitForResult(conversationId, next)).toMatchObject({ subtype: 'success', result: 'Short answer.' });
    expect(JSON.stringify(harness.model.requests[0].body.messages)).not.toContain('lorem ipsum');
  });

  it('sends a prompt larger than a Temporal payload by reference; the conversation stays in its run', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'Read it all.' }] }, { content: [{ type: 'text', text: 'Small again.' }] }] });
    await harness.startWorker();
    // 1.9 MB of prompt (about 475k tokens, within a 1M window): no activity input carries it, so
    // Temporal's 2 MB payload limit does not stop it. Continue-as-new (forced early here) cannot
    // carry a transcript that large: the run goes on and its history grows linearly instead.
    const { result, conversationId } = await runToResult(harness, `Read this: ${'abc '.repeat(475_000)}`, {
      model: 'claude-sonnet-5',
      continueAsNewAfterEvents: 10,
    });
    expect(result).toMatchObject({ subtype: 'success', result: 'Read it all.' });
    expect(JSON.stringify(harness.model.requests[0].body.messages).length).toBeGreaterThan(1_900_000);
    const next = await harness.api.send(conversationId, 'Short question.');
    expect(await harness.api.waitForResult(conversationId, next)).toMatchObject({ subtype: 'success', result: 'Small again.' });
    expect((await harness.api.status(conversationId)).continuedAsNewCount).toBe(0);
  });

  it('drops a queued input that overflows the context, keeping the answered turns', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'sleep 2; echo slept' } }] },
        { content: [{ type: 'text', text: 'Back to normal.' }] },
      ],
    });
    await harness.startWorker();
    const started = await harness.api.start({
      prompt: 'nap',
      // 40k window: a 17k blocking limit, room for the system prompt and every tool's definition, not for the ~24k-token queued input.
      config: harness.config({ contextWindowTokens: 40_000, autoCompact: false }),
      taskQueue: harness.taskQueue,
    });
    await eventually(
      () => harness!.api.status(started.conversationId),
      (status) => status.toolsInFlight.length > 0,
    );
    const queued = await harness.api.send(started.conversationId, `Also read: ${'lorem ipsum '.repeat(8_000)}`);
    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);

    expect(result).toMatchObject({ terminal_reason: 'blocking_limit', input_uuids: [started.inputUuid, queued] });
    expect(result.result).toContain('message was not kept in the conversation');
    const next = await harness.api.send(started.conversationId, 'Just say hi.');
    expect(await harness.api.waitForResult(started.conversationId, next)).toMatchObject({ result: 'Back to normal.' });
    const sent = harness.model.requests[1].body.messages;
    expectValidApiOrder(harness.model.requests[1]);
    expect(JSON.stringify(sent)).toContain('slept');
    expect(JSON.stringify(sent)).not.toContain('lorem ipsum');
  });
});
