/**
 * Model API faults (issue 12, "Scale and faults"): each fault the scripted model server can inject
 * — a connection reset mid-stream, a malformed SSE frame, a stream that stalls past the callModel
 * heartbeat timeout, 429 with retry-after, bursts of 500 and 529 — is retried by Temporal (the SDK
 * has `maxRetries: 0`), and the conversation completes with the expected number of requests and
 * nothing of the broken attempts in the transcript. See docs/architecture.md, "Model API faults".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { historyQuery } from '../../workflows/definitions';
import { type ScriptedTurn, errorBurst } from '../../testing/scripted-model-server';
import { type Harness, createHarness, expectValidApiOrder, runToResult } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const PARTIAL = 'Half of a first attempt';
const ANSWER = 'The complete answer.';

/** A two-block answer the fault interrupts after its first block (already on the wire). */
function broken(fault: ScriptedTurn['fault']): ScriptedTurn {
  return {
    content: [
      { type: 'text', text: PARTIAL },
      { type: 'text', text: ' and the rest' },
    ],
    fault,
  };
}

/** Occurrences of `needle` in the conversation's transcript (history query). */
async function occurrencesInTranscript(conversationId: string, needle: string): Promise<number> {
  const transcript = JSON.stringify(await harness!.client.workflow.getHandle(conversationId).query(historyQuery));
  return transcript.split(needle).length - 1;
}

/** Runs one prompt against `script`, expects success with ANSWER, and checks requests and transcript. */
async function expectRecovered(script: ScriptedTurn[], expectedRequests: number, overrides = {}) {
  harness = await createHarness({ script: [...script, { content: [{ type: 'text', text: ANSWER }] }] });
  await harness.startWorker();
  const { result, conversationId } = await runToResult(harness, 'Hi', overrides);

  expect(result).toMatchObject({ subtype: 'success', is_error: false, result: ANSWER, terminal_reason: 'completed', transitions: [] });
  const requests = harness.model.requests;
  expect(requests).toHaveLength(expectedRequests);
  // Every attempt sent the same request: a retry, not a new turn built on a broken one.
  for (const request of requests) expect(request.body).toEqual(requests[0].body);
  expect(harness.model.remaining()).toBe(0);
  expect(await occurrencesInTranscript(conversationId, PARTIAL)).toBe(0);
  expect(await occurrencesInTranscript(conversationId, ANSWER)).toBe(1);
  return { result, conversationId, requests };
}

describe('model API faults are retried by Temporal', () => {
  it('a connection reset mid-stream: one retry, nothing of the broken stream kept', async () => {
    await expectRecovered([broken({ type: 'connection_reset', afterBlocks: 1 })], 2);
  });

  it('a malformed SSE frame mid-stream: one retry, nothing of the broken stream kept', async () => {
    await expectRecovered([broken({ type: 'malformed_sse', afterBlocks: 1 })], 2);
  });

  it('a stream that stalls past the heartbeat timeout: the attempt times out and is retried', async () => {
    // The stalled attempt sends no heartbeat (callModel heartbeats on stream events), so the
    // server times it out after modelHeartbeatTimeoutMs and schedules the next attempt.
    await expectRecovered([broken({ type: 'stall', afterBlocks: 1 })], 2, { modelHeartbeatTimeoutMs: 2_000 });
  });

  it('429 with retry-after: the next attempt waits as long as the API asked, not the retry policy', async () => {
    // initialInterval is 100 ms (harness config); the API asks for 2 s.
    const { requests } = await expectRecovered(errorBurst(1, 429, { 'retry-after': '2' }), 2);
    expect(requests[1].receivedAt - requests[0].receivedAt).toBeGreaterThanOrEqual(2_000);
  });

  it('a burst of 500s shorter than modelMaximumAttempts: retried until the answer comes', async () => {
    await expectRecovered(errorBurst(3, 500), 4);
  });

  it('a burst of 529s (no fallback model): retried until the answer comes', async () => {
    await expectRecovered(errorBurst(3, 529), 4);
  });

  it('a burst of 500s longer than modelMaximumAttempts ends the query with model_error; the conversation goes on', async () => {
    harness = await createHarness({ script: [...errorBurst(4, 500), { content: [{ type: 'text', text: ANSWER }] }] });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Hi');
    expect(result).toMatchObject({ subtype: 'error_during_execution', is_error: true, terminal_reason: 'model_error' });
    expect(result.result).toContain('500');
    expect(harness.model.requests).toHaveLength(4); // modelMaximumAttempts in the harness config

    const inputUuid = await harness.api.send(conversationId, 'Try again');
    const again = await harness.api.waitForResult(conversationId, inputUuid);
    expect(again).toMatchObject({ subtype: 'success', result: ANSWER });
    expect(harness.model.requests).toHaveLength(5);
    expectValidApiOrder(harness.model.requests[4]);
    expect(await occurrencesInTranscript(conversationId, ANSWER)).toBe(1);
  });

  it('a reset after a whole Bash tool_use was streamed: the tool runs once, after the retried call', async () => {
    const command = 'echo ran >> counter.txt';
    const toolUse: ScriptedTurn['content'] = [
      { type: 'text', text: PARTIAL },
      { type: 'tool_use', id: 'toolu_counter', name: 'Bash', input: { command } },
    ];
    harness = await createHarness({
      script: [
        // Both blocks complete, but no message_delta/message_stop: the message never finished.
        { content: toolUse, fault: { type: 'connection_reset', afterBlocks: 2 }, deltaDelayMs: 5 },
        { content: toolUse },
        ...errorBurst(2, 529),
        { content: [{ type: 'text', text: ANSWER }] },
      ],
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Count once');

    expect(result).toMatchObject({ subtype: 'success', result: ANSWER, transitions: ['tool_use'] });
    expect(await readFile(path.join(harness.workspace, 'counter.txt'), 'utf8')).toBe('ran\n');
    const requests = harness.model.requests;
    expect(requests).toHaveLength(5);
    expect(requests[1].body).toEqual(requests[0].body);
    for (const request of requests.slice(2)) {
      expectValidApiOrder(request);
      expect(request.body).toEqual(requests[2].body);
    }
    // The turn after the tool carries the tool's text and call once.
    expect(JSON.stringify(requests[2].body.messages).split(PARTIAL).length - 1).toBe(1);
    expect(await occurrencesInTranscript(conversationId, PARTIAL)).toBe(1);
    expect(await occurrencesInTranscript(conversationId, '"toolu_counter"')).toBe(2); // the tool_use and its tool_result
    expect(await occurrencesInTranscript(conversationId, ANSWER)).toBe(1);
  });
});
