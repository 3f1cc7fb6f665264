/**
 * The model-call recovery paths of issue 3 (seed §2.3, §2.8), one test per path, on the real dev
 * server with a real worker and the real Anthropic SDK against the scripted model server. Each test
 * asserts the transition sequence (result and status), the terminal reason, and what the model
 * server received.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ConversationEvent } from '../../workflows/definitions';
import { historyQuery } from '../../workflows/definitions';
import { type RecordedRequest, type Responder, promptTooLongTurn } from '../../testing/scripted-model-server';
import { withoutCacheControl } from '../../testing/prompt-cache';
import { type Harness, createHarness, runToResult, expectValidApiOrder } from '../helpers/harness';

const PRIMARY = 'claude-sonnet-4-6';
const FALLBACK = 'claude-haiku-4-5';
const NUDGE = 'Resume directly where you left off';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function lastMessage(request: RecordedRequest): { role: string; content: any } {
  return request.body.messages[request.body.messages.length - 1];
}

/** Text of a request message (string content or its text blocks). */
function textOfApiMessage(message: { content: any }): string {
  if (typeof message.content === 'string') return message.content;
  return (message.content as any[])
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

async function systemEvents(conversationId: string): Promise<Array<{ level: string; content: string }>> {
  const { events } = await harness!.api.events(conversationId);
  return events
    .map((event: ConversationEvent) => event.message)
    .filter((message): message is Extract<ConversationEvent['message'], { type: 'system' }> => message.type === 'system')
    .map(({ level, content }) => ({ level, content }));
}

async function history(conversationId: string) {
  return harness!.client.workflow.getHandle(conversationId).query(historyQuery);
}

/** Sends a follow-up and waits for its result. */
async function followUp(conversationId: string, prompt: string) {
  const inputUuid = await harness!.api.send(conversationId, prompt);
  return harness!.api.waitForResult(conversationId, inputUuid);
}

describe('model-call recovery', () => {
  it('max_output_tokens escalation: retries the same request once with max_tokens 64000', async () => {
    harness = await createHarness({
      script: [{ content: [{ type: 'text', text: 'A truncated dra' }], stop_reason: 'max_tokens' }, { content: [{ type: 'text', text: 'The full answer.' }] }],
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Write it all.');

    expect(result).toMatchObject({
      subtype: 'success',
      is_error: false,
      result: 'The full answer.',
      terminal_reason: 'completed',
      transitions: ['max_output_tokens_escalate'],
      stop_reason: 'end_turn',
    });
    expect((await harness.api.status(conversationId)).lastQueryTransitions).toEqual(['max_output_tokens_escalate']);

    const [first, retry] = harness.model.requests;
    expect(harness.model.requests).toHaveLength(2);
    expect(first.body.max_tokens).toBe(8192);
    expect(retry.body.max_tokens).toBe(64000);
    // The same request again: the truncated reply is withheld, not kept.
    expect(retry.body.messages).toEqual(first.body.messages);
    expect(JSON.stringify(await history(conversationId))).not.toContain('A truncated dra');
  });

  it('max_output_tokens recovery: escalate once, three nudges keeping the truncated output, then an error', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'text', text: 'draft zero' }], stop_reason: 'max_tokens' },
        { content: [{ type: 'text', text: 'part one' }], stop_reason: 'max_tokens' },
        // A truncated reply may carry a complete tool_use: it must not be left unanswered.
        {
          content: [
            { type: 'text', text: 'part two' },
            { type: 'tool_use', id: 'toolu_cut', name: 'Glob', input: { pattern: '*' } },
          ],
          stop_reason: 'max_tokens',
        },
        { content: [{ type: 'text', text: 'part three' }], stop_reason: 'max_tokens' },
        { content: [{ type: 'text', text: 'part four' }], stop_reason: 'max_tokens' },
      ],
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Write a very long essay.');

    const expectedTransitions = ['max_output_tokens_escalate', 'max_output_tokens_recovery', 'max_output_tokens_recovery', 'max_output_tokens_recovery'];
    expect(result).toMatchObject({
      subtype: 'error_during_execution',
      is_error: true,
      terminal_reason: 'model_error',
      transitions: expectedTransitions,
    });
    expect(result.result).toContain('output token limit');
    expect((await harness.api.status(conversationId)).lastQueryTransitions).toEqual(expectedTransitions);

    const requests = harness.model.requests;
    expect(requests).toHaveLength(5);
    expect(requests.map((request) => request.body.max_tokens)).toEqual([8192, 64000, 64000, 64000, 64000]);
    // Escalation retries the same request; each nudge follows the truncated output it answers.
    expect(requests[1].body.messages).toEqual(requests[0].body.messages);
    const truncated = ['part one', 'part two', 'part three'];
    for (let nudge = 0; nudge < 3; nudge++) {
      const request = requests[2 + nudge];
      const messages = request.body.messages;
      expect(textOfApiMessage(messages[messages.length - 2])).toBe(truncated[nudge]);
      expect(lastMessage(request).role).toBe('user');
      expect(textOfApiMessage(lastMessage(request))).toContain(NUDGE);
      expect(JSON.stringify(messages)).not.toContain('draft zero');
      expectValidApiOrder(request);
    }
    // The unfinished tool call was answered with an error, ahead of the nudge.
    expect(lastMessage(requests[3]).content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_cut', is_error: true });

    const events = await systemEvents(conversationId);
    expect(events).toContainEqual({ level: 'error', content: expect.stringContaining('output token limit') });

    // The conversation stays usable and its history valid for the API.
    harness.model.enqueue({ content: [{ type: 'text', text: 'Short now.' }] });
    const next = await followUp(conversationId, 'Just summarize.');
    expect(next).toMatchObject({ subtype: 'success', result: 'Short now.', transitions: [] });
    const followUpRequest = harness.model.requests[5];
    expect(followUpRequest.body.max_tokens).toBe(8192); // the override belongs to one query
    expectValidApiOrder(followUpRequest);
    expect(JSON.stringify(followUpRequest.body.messages)).toContain('part four');
  });

  it('max_output_tokens recovery without escalation when the configured cap is already 64000', async () => {
    harness = await createHarness({
      script: [{ content: [{ type: 'text', text: 'half of it' }], stop_reason: 'max_tokens' }, { content: [{ type: 'text', text: 'and the rest.' }] }],
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Go.', { maxOutputTokens: 64000 });

    expect(result).toMatchObject({
      subtype: 'success',
      is_error: false,
      result: 'and the rest.',
      terminal_reason: 'completed',
      transitions: ['max_output_tokens_recovery'],
    });
    expect((await harness.api.status(conversationId)).lastQueryTransitions).toEqual(['max_output_tokens_recovery']);
    const [first, second] = harness.model.requests;
    expect(harness.model.requests).toHaveLength(2);
    expect([first.body.max_tokens, second.body.max_tokens]).toEqual([64000, 64000]);
    const messages = second.body.messages;
    expect(messages[messages.length - 2]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'half of it' }] });
    expect(textOfApiMessage(lastMessage(second))).toContain(NUDGE);
  });

  it('falls back to the configured model when the primary stays overloaded; the next query tries the primary first', async () => {
    const overloadPrimary: Responder = (request) =>
      request.body.model === PRIMARY ? { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } } : undefined;
    harness = await createHarness({
      respond: overloadPrimary,
      script: [{ content: [{ type: 'text', text: 'Answered by the fallback.' }] }],
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Hello?', { fallbackModel: FALLBACK });

    expect(result).toMatchObject({
      subtype: 'success',
      is_error: false,
      result: 'Answered by the fallback.',
      terminal_reason: 'completed',
      transitions: ['fallback_retry'],
      model: FALLBACK,
    });
    expect((await harness.api.status(conversationId)).lastQueryTransitions).toEqual(['fallback_retry']);
    // Three overloaded answers from the primary (Temporal's retries), then the fallback.
    expect(harness.model.requests.map((request) => request.body.model)).toEqual([PRIMARY, PRIMARY, PRIMARY, FALLBACK]);
    expect(harness.model.requests[3].body.messages).toEqual(harness.model.requests[0].body.messages);
    expect(await systemEvents(conversationId)).toContainEqual({
      level: 'warning',
      content: `Switched to ${FALLBACK} due to high demand for ${PRIMARY}`,
    });

    // A follow-up query tries the primary again, which has recovered.
    harness.model.setResponder(undefined);
    harness.model.enqueue({ content: [{ type: 'text', text: 'Primary is back.' }] });
    const next = await followUp(conversationId, 'And now?');
    expect(next).toMatchObject({ subtype: 'success', result: 'Primary is back.', transitions: [], model: PRIMARY });
    expect(harness.model.requests).toHaveLength(5);
    expect(harness.model.requests[4].body.model).toBe(PRIMARY);
    expect((await harness.api.status(conversationId)).currentModel).toBe(PRIMARY);
  });

  it('counts only consecutive overloaded answers toward the fallback (a 429 in between resets the run)', async () => {
    harness = await createHarness({
      script: [
        { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
        { error: { status: 429, type: 'rate_limit_error', message: 'Slow down' } },
        { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
        { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
        { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
        { content: [{ type: 'text', text: 'Fallback here.' }] },
      ],
    });
    await harness.startWorker();
    const { result } = await runToResult(harness, 'Hi', { fallbackModel: FALLBACK, modelMaximumAttempts: 10 });

    expect(result).toMatchObject({ result: 'Fallback here.', transitions: ['fallback_retry'], model: FALLBACK });
    expect(harness.model.requests.map((request) => request.body.model)).toEqual([PRIMARY, PRIMARY, PRIMARY, PRIMARY, PRIMARY, FALLBACK]);
  });

  it('strips signed thinking blocks from the history it sends the fallback model', async () => {
    let primaryCalls = 0;
    harness = await createHarness({
      respond: (request) => {
        if (request.body.model !== PRIMARY) return { content: [{ type: 'text', text: 'No markdown files.' }] };
        primaryCalls++;
        if (primaryCalls === 1) {
          return {
            content: [
              { type: 'thinking', thinking: 'I should look for markdown files.', signature: 'sig-primary' },
              { type: 'tool_use', id: 'toolu_glob', name: 'Glob', input: { pattern: '*.md' } },
            ],
          };
        }
        return { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } };
      },
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Any markdown?', { fallbackModel: FALLBACK });

    expect(result).toMatchObject({
      subtype: 'success',
      result: 'No markdown files.',
      terminal_reason: 'completed',
      transitions: ['tool_use', 'fallback_retry'],
      model: FALLBACK,
    });
    expect((await harness.api.status(conversationId)).lastQueryTransitions).toEqual(['tool_use', 'fallback_retry']);
    const requests = harness.model.requests;
    expect(requests.map((request) => request.body.model)).toEqual([PRIMARY, PRIMARY, PRIMARY, PRIMARY, FALLBACK]);
    // The primary was sent its own signed thinking back; the fallback gets none of it.
    const assistantOf = (request: RecordedRequest) => request.body.messages[1];
    expect(assistantOf(requests[1]).content).toContainEqual({ type: 'thinking', thinking: 'I should look for markdown files.', signature: 'sig-primary' });
    const fallbackRequest = requests[4];
    expect(JSON.stringify(fallbackRequest.body.messages)).not.toContain('sig-primary');
    expect(assistantOf(fallbackRequest).content).toEqual([{ type: 'tool_use', id: 'toolu_glob', name: 'Glob', input: { pattern: '*.md' } }]);
    expectValidApiOrder(fallbackRequest);
  });

  it('leaves out an earlier answer that had only signed thinking when the fallback model takes over', async () => {
    let primaryCalls = 0;
    harness = await createHarness({
      respond: (request) => {
        if (request.body.model !== PRIMARY) return { content: [{ type: 'text', text: 'Second answer.' }] };
        primaryCalls++;
        // The first query's whole answer is one signed thinking block; then the primary overloads.
        if (primaryCalls === 1) return { content: [{ type: 'thinking', thinking: 'Nothing to say.', signature: 'sig-only' }] };
        return { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } };
      },
    });
    await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'First question.', { fallbackModel: FALLBACK });
    const next = await harness.api.send(conversationId, 'Second question.');
    expect(await harness.api.waitForResult(conversationId, next)).toMatchObject({ subtype: 'success', result: 'Second answer.', model: FALLBACK });
    // Stripped of its thinking, the first answer has no blocks: the fallback request goes without
    // it (an empty assistant message would be a 400), and the strict server accepted every request.
    const fallbackRequest = harness.model.requests.at(-1)!;
    expect(fallbackRequest.body.messages.map((message: { role: string }) => message.role)).toEqual(['user']);
    expect(JSON.stringify(fallbackRequest.body.messages)).toContain('Second question.');
    expect(harness.model.rejections).toEqual([]);
  });

  it('without a fallback model, sustained overload ends with model_error after modelMaximumAttempts requests', async () => {
    harness = await createHarness({ respond: () => ({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } }) });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Hello?');

    expect(result).toMatchObject({
      subtype: 'error_during_execution',
      is_error: true,
      terminal_reason: 'model_error',
      transitions: [],
      model: PRIMARY,
    });
    expect(result.result).toContain('overloaded_error');
    expect((await harness.api.status(conversationId)).lastQueryTransitions).toEqual([]);
    expect(harness.model.requests).toHaveLength(4); // the harness's modelMaximumAttempts
    expect(new Set(harness.model.requests.map((request) => request.body.model))).toEqual(new Set([PRIMARY]));
    expect((await systemEvents(conversationId)).some((event) => event.content.startsWith('Switched to'))).toBe(false);
  });

  it('retries transient errors (429, then 500) and succeeds', async () => {
    harness = await createHarness({
      script: [
        { error: { status: 429, type: 'rate_limit_error' } },
        { error: { status: 500, type: 'api_error' } },
        { content: [{ type: 'text', text: 'Third time lucky.' }] },
      ],
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Hi');

    expect(result).toMatchObject({ subtype: 'success', is_error: false, result: 'Third time lucky.', terminal_reason: 'completed', transitions: [] });
    expect((await harness.api.status(conversationId)).lastQueryTransitions).toEqual([]);
    const requests = harness.model.requests;
    expect(requests).toHaveLength(3);
    expect(requests[1].body).toEqual(requests[0].body);
    expect(requests[2].body).toEqual(requests[0].body);
  });

  it('does not retry an invalid request (400): one request, an error result with the API message', async () => {
    harness = await createHarness({
      script: [{ error: { status: 400, type: 'invalid_request_error', message: 'messages.0.content: unsupported block type' } }],
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Hi');

    expect(result).toMatchObject({ subtype: 'error_during_execution', is_error: true, terminal_reason: 'model_error', transitions: [] });
    expect(result.result).toContain('messages.0.content: unsupported block type');
    expect((await harness.api.status(conversationId)).lastQueryTransitions).toEqual([]);
    expect(harness.model.requests).toHaveLength(1);
    expect(await systemEvents(conversationId)).toContainEqual({
      level: 'error',
      content: expect.stringContaining('messages.0.content: unsupported block type'),
    });
  });

  it('prompt too long ends the query with prompt_too_long; the conversation stays open', async () => {
    // Like the real API: any request that still contains the huge prompt is too long.
    harness = await createHarness({
      respond: (request) => (JSON.stringify(request.body.messages).includes('A huge prompt.') ? promptTooLongTurn(250000) : undefined),
      script: [{ content: [{ type: 'text', text: 'Fine now.' }] }],
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'A huge prompt.');

    expect(result).toMatchObject({ subtype: 'error_during_execution', is_error: true, terminal_reason: 'prompt_too_long', transitions: [] });
    expect(result.result).toContain('prompt is too long: 250000 tokens > 200000 maximum');
    expect(result.result).toContain('message was not kept in the conversation');
    expect(harness.model.requests).toHaveLength(1); // returned as data, not retried
    const status = await harness.api.status(conversationId);
    expect(status).toMatchObject({ phase: 'awaiting_input', ended: false, lastQueryTransitions: [] });
    expect(await systemEvents(conversationId)).toContainEqual({
      level: 'error',
      content: expect.stringContaining('prompt is too long: 250000 tokens > 200000 maximum'),
    });

    const next = await followUp(conversationId, 'A short one.');
    expect(next).toMatchObject({ subtype: 'success', result: 'Fine now.', terminal_reason: 'completed' });
    expect(harness.model.requests).toHaveLength(2);
    expectValidApiOrder(harness.model.requests[1]);
    expect(textOfApiMessage(lastMessage(harness.model.requests[1]))).toContain('A short one.');
    expect(JSON.stringify(harness.model.requests[1].body.messages)).not.toContain('A huge prompt.');
  });

  it('pause_turn sends the paused content back and continues', async () => {
    harness = await createHarness({
      script: [{ content: [{ type: 'text', text: 'Searching the web...' }], stop_reason: 'pause_turn' }, { content: [{ type: 'text', text: 'Found it.' }] }],
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Look it up.');

    expect(result).toMatchObject({
      subtype: 'success',
      is_error: false,
      result: 'Found it.',
      terminal_reason: 'completed',
      transitions: ['pause_turn'],
      num_turns: 1,
    });
    expect((await harness.api.status(conversationId)).lastQueryTransitions).toEqual(['pause_turn']);
    const requests = harness.model.requests;
    expect(requests).toHaveLength(2);
    // The paused content goes back as the last message, which carries the cache breakpoint now.
    expect(lastMessage(requests[1])).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Searching the web...', cache_control: { type: 'ephemeral' } }],
    });
    expect(withoutCacheControl(requests[1].body.messages.slice(0, -1))).toEqual(withoutCacheControl(requests[0].body.messages));
  });

  it('refusal ends the query with a warning; like the Agent SDK, a success result whose stop_reason is refusal', async () => {
    harness = await createHarness({
      script: [{ content: [{ type: 'text', text: 'I cannot help with that.' }], stop_reason: 'refusal' }],
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Something disallowed.');

    // Agent SDK semantics: refusals are detected through `stop_reason: 'refusal'` on a success result.
    expect(result).toMatchObject({
      subtype: 'success',
      is_error: false,
      stop_reason: 'refusal',
      terminal_reason: 'completed',
      transitions: [],
    });
    expect((await harness.api.status(conversationId)).lastQueryTransitions).toEqual([]);
    expect(harness.model.requests).toHaveLength(1);
    expect(await systemEvents(conversationId)).toContainEqual({ level: 'warning', content: expect.stringContaining('refusal') });
  });

  it('max turns: ends with error_max_turns after exactly maxTurns model calls, leaving a valid history', async () => {
    harness = await createHarness({
      respond: () => ({ content: [{ type: 'tool_use', name: 'Glob', input: { pattern: '*.txt' } }] }),
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Loop forever.', { maxTurns: 2 });

    expect(result).toMatchObject({
      subtype: 'error_max_turns',
      is_error: true,
      terminal_reason: 'max_turns',
      num_turns: 2,
      transitions: ['tool_use'],
      stop_reason: 'tool_use',
    });
    expect((await harness.api.status(conversationId)).lastQueryTransitions).toEqual(['tool_use']);
    expect(harness.model.requests).toHaveLength(2);
    expect(await systemEvents(conversationId)).toContainEqual({ level: 'warning', content: expect.stringContaining('maximum number of turns') });

    harness.model.setResponder(undefined);
    harness.model.enqueue({ content: [{ type: 'text', text: 'Stopping.' }] });
    const next = await followUp(conversationId, 'Stop now.');
    expect(next).toMatchObject({ subtype: 'success', result: 'Stopping.' });
    const followUpRequest = harness.model.requests[2];
    expectValidApiOrder(followUpRequest);
    const roles = followUpRequest.body.messages.map((message: any) => message.role);
    expect(roles).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    const lastUser = lastMessage(followUpRequest).content as any[];
    expect(lastUser[0].type).toBe('tool_result'); // the second turn's result, then the new prompt
    expect(textOfApiMessage(lastMessage(followUpRequest))).toContain('Stop now.');
  });

  it('retries a mid-stream overloaded error event and succeeds', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'text', text: 'Half an ans' },
            { type: 'text', text: 'wer' },
          ],
          streamErrorAfterBlocks: 1,
        },
        { content: [{ type: 'text', text: 'A whole answer.' }] },
      ],
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Hi');

    expect(result).toMatchObject({ subtype: 'success', is_error: false, result: 'A whole answer.', terminal_reason: 'completed', transitions: [] });
    expect((await harness.api.status(conversationId)).lastQueryTransitions).toEqual([]);
    const requests = harness.model.requests;
    expect(requests).toHaveLength(2);
    expect(requests[1].body).toEqual(requests[0].body);
    expect(JSON.stringify(await history(conversationId))).not.toContain('Half an ans');
  });
});
