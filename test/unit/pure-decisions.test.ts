/** Small pure decisions: API message normalization, error classification, hook protocol, cost. */
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { classifyModelError } from '../../activities/call-model';
import { interpretHookRun } from '../../activities/hooks/stop-hooks';
import { costOfUsage } from '../../common/cost';
import { type AssistantMessage, type TranscriptMessage, normalizeMessagesForApi } from '../../common/messages';

const assistant = (content: AssistantMessage['message']['content']): AssistantMessage => ({
  type: 'assistant',
  uuid: 'a',
  message: {
    id: 'm',
    role: 'assistant',
    model: 'x',
    content,
    stop_reason: 'end_turn',
    usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  },
});

describe('normalizeMessagesForApi', () => {
  it('merges consecutive user turns with tool results first', () => {
    const messages: TranscriptMessage[] = [
      { type: 'user', uuid: '1', message: { role: 'user', content: 'go' } },
      assistant([{ type: 'tool_use', id: 't', name: 'Read', input: {} }]),
      { type: 'user', uuid: '2', message: { role: 'user', content: 'queued prompt' } },
      { type: 'user', uuid: '3', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok' }] } },
    ];
    const api = normalizeMessagesForApi(messages);
    expect(api.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(api[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 't', content: 'ok' },
      { type: 'text', text: 'queued prompt' },
    ]);
  });

  it('leaves out what the API rejects: empty text blocks and messages left without content', () => {
    const messages: TranscriptMessage[] = [
      { type: 'user', uuid: '1', message: { role: 'user', content: 'go' } },
      // a reply that had only thinking (stripped for the fallback model) and an empty text block
      assistant([{ type: 'text', text: '' }]),
      { type: 'user', uuid: '2', message: { role: 'user', content: '  ' } },
      { type: 'user', uuid: '3', message: { role: 'user', content: 'again' } },
      assistant([
        { type: 'text', text: '' },
        { type: 'tool_use', id: 't', name: 'Read', input: {} },
      ]),
      { type: 'user', uuid: '4', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: '' }] }] } },
    ];
    expect(normalizeMessagesForApi(messages)).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'go' },
          { type: 'text', text: 'again' },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Read', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: '(no content)' }] },
    ]);
  });

  it('drops unsigned thinking and trims a final assistant text the API would refuse', () => {
    const api = normalizeMessagesForApi([
      { type: 'user', uuid: '1', message: { role: 'user', content: 'go' } },
      assistant([
        { type: 'thinking', thinking: 'unsigned' },
        { type: 'text', text: 'paused here \n' },
      ]),
    ]);
    expect(api[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'paused here' }] });
  });
});

describe('classifyModelError', () => {
  const apiError = (status: number, type: string, message: string) =>
    Anthropic.APIError.generate(status, { type: 'error', error: { type, message } }, undefined, new Headers());

  it('retries overload, rate limits and server errors; not invalid requests or auth', () => {
    expect(classifyModelError(apiError(529, 'overloaded_error', 'Overloaded'), 1, false)).toMatchObject({ type: 'overloaded_error', nonRetryable: false });
    expect(classifyModelError(apiError(429, 'rate_limit_error', 'slow down'), 1, false)).toMatchObject({ type: 'rate_limit_error', nonRetryable: false });
    expect(classifyModelError(apiError(500, 'api_error', 'boom'), 1, false)).toMatchObject({ nonRetryable: false });
    expect(classifyModelError(apiError(400, 'invalid_request_error', 'bad'), 1, false)).toMatchObject({ type: 'invalid_request_error', nonRetryable: true });
    expect(classifyModelError(apiError(401, 'authentication_error', 'no'), 1, false)).toMatchObject({ nonRetryable: true });
    expect(classifyModelError(new Anthropic.APIConnectionError({ message: 'ECONNREFUSED' }), 1, false)).toMatchObject({
      type: 'connection_error',
      nonRetryable: false,
    });
  });

  it('triggers the fallback after three overloaded attempts when one is configured', () => {
    expect(classifyModelError(apiError(529, 'overloaded_error', 'Overloaded'), 2, true).nonRetryable).toBe(false);
    expect(classifyModelError(apiError(529, 'overloaded_error', 'Overloaded'), 3, true)).toMatchObject({ type: 'FallbackTriggered', nonRetryable: true });
    expect(classifyModelError(apiError(529, 'overloaded_error', 'Overloaded'), 9, false).nonRetryable).toBe(false);
  });

  it("uses the API's retry-after as the next retry delay", () => {
    const limited = Anthropic.APIError.generate(
      429,
      { type: 'error', error: { type: 'rate_limit_error', message: 'slow' } },
      undefined,
      new Headers({ 'retry-after': '7' }),
    );
    expect(classifyModelError(limited, 0, false)).toMatchObject({ nonRetryable: false, nextRetryDelay: 7000 });
    const precise = Anthropic.APIError.generate(
      529,
      { type: 'error', error: { type: 'overloaded_error', message: 'busy' } },
      undefined,
      new Headers({ 'retry-after-ms': '1500' }),
    );
    expect(classifyModelError(precise, 1, false).nextRetryDelay).toBe(1500);
    expect(classifyModelError(apiError(500, 'api_error', 'boom'), 0, false).nextRetryDelay).toBeUndefined();
  });

  it("keeps the API's message", () => {
    expect(classifyModelError(apiError(400, 'invalid_request_error', 'max_tokens: too large'), 1, false).message).toContain('max_tokens: too large');
  });
});

describe('interpretHookRun (Claude Code hook protocol)', () => {
  const run = (exitCode: number, stdout = '', stderr = '') => interpretHookRun('hook', { exitCode, stdout, stderr, timedOut: false });
  it('exit 2 blocks with stderr', () => expect(run(2, '', 'lint failed\n').blockingError).toBe('lint failed'));
  it('decision:block blocks with the reason', () => expect(run(0, '{"decision":"block","reason":"tests fail"}').blockingError).toBe('tests fail'));
  it('continue:false prevents continuation', () =>
    expect(run(0, '{"continue":false,"stopReason":"done"}')).toMatchObject({ preventContinuation: true, stopReason: 'done' }));
  it('other exit codes are non-blocking errors', () => {
    const outcome = run(1, '', 'oops');
    expect(outcome.blockingError).toBeUndefined();
    expect(outcome.nonBlockingError).toBe('exit code 1: oops');
  });
  it('plain output on exit 0 is fine', () => expect(run(0, 'all good')).toEqual({ command: 'hook', exitCode: 0, stdout: 'all good', stderr: '' }));
  it('a timeout is non-blocking', () =>
    expect(interpretHookRun('h', { exitCode: null, stdout: '', stderr: '', timedOut: true }).nonBlockingError).toBe('timed out'));
});

describe('costOfUsage', () => {
  it('prices by family, with cache reads and writes', () => {
    const usage = { input_tokens: 1_000_000, output_tokens: 1_000_000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    expect(costOfUsage('claude-sonnet-4-6', usage)).toBeCloseTo(18);
    expect(costOfUsage('claude-haiku-4-5', usage)).toBeCloseTo(6);
    expect(costOfUsage('claude-sonnet-4-6', { ...usage, input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 1_000_000 })).toBeCloseTo(0.3);
  });
});
