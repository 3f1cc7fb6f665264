/**
 * Issue 21 §4: ScheduleWakeup on the real dev server — a labelled durable timer whose prompt
 * re-invokes the model; the conversation is not idle-timed out while it is pending; it survives a
 * SIGKILL of the worker (the timer is the server's: a new worker picks the fire up); /loop
 * without an interval asks the model to pace itself with it.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, createHarness, eventually, runToResult } from '../helpers/harness';
import { lastUserMessage, promptResponder } from '../../testing/prompt-responder';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const wakeupCall = (delaySeconds: number) => [{ name: 'ScheduleWakeup', input: { delaySeconds, reason: 'check the build', prompt: 'WAKE check the build' } }];
const wakeRequests = (current: Harness) => current.model.requests.filter((request) => lastUserMessage(request).text.includes('WAKE check the build'));

describe('ScheduleWakeup', () => {
  it('fires its prompt as the next input, labelled in the UI, and holds off the idle timeout while pending', async () => {
    harness = await createHarness({
      respond: promptResponder([
        ['WAKE', 'Woke up and checked.'],
        ['PACE', wakeupCall(1)],
      ]),
    });
    await harness.startWorker();
    // The idle timeout (1.5 s) is shorter than the wakeup (asked 1 s, clamped to the configured minimum of 4 s).
    // continueAsNewAfterEvents: the wakeup is carried to the next run, which starts its timer again for what remains.
    const {
      conversationId,
      result,
      handle: firstRun,
    } = await runToResult(harness, 'PACE yourself', { wakeupMinimumSeconds: 4, idleTimeoutMs: 1_500, continueAsNewAfterEvents: 10 });
    expect(result.result).toMatch(/ok: Wakeup scheduled in 4 s, at .*\(asked for 1 s; the delay is kept within 4-3600 s\)\. Reason: check the build/);
    const status = await eventually(
      () => harness!.api.status(conversationId),
      (value) => value.continuedAsNewCount >= 1,
    );
    expect(status.wakeups).toEqual([expect.objectContaining({ reason: 'check the build', prompt: 'WAKE check the build' })]);

    const handle = harness.client.workflow.getHandle(conversationId);
    // It fires, the model gets the prompt once, then (nothing pending any more) the idle timeout ends the conversation.
    const summary = await handle.result();
    expect(summary).toMatchObject({ endedBy: 'idle_timeout', queryCount: 2, lastResult: expect.objectContaining({ result: 'Woke up and checked.' }) });
    expect(wakeRequests(harness)).toHaveLength(1);
    const { events } = await harness.api.events(conversationId);
    expect(events.some((event) => event.message.type === 'user_input' && event.message.prompt === 'WAKE check the build')).toBe(true);

    // The first run started the labelled timer (the next one started it again for what remained).
    const history = await harness.client.workflow.getHandle(conversationId, firstRun.firstExecutionRunId).fetchHistory();
    const timers = (history.events ?? [])
      .filter((event) => event.timerStartedEventAttributes)
      .map((event) => (event.userMetadata?.summary ? defaultPayloadConverter.fromPayload(event.userMetadata.summary) : undefined));
    expect(timers).toContain('wakeup: check the build');
  }, 120_000);

  it('fires after the worker that scheduled it was killed (SIGKILL): a new worker picks it up', async () => {
    harness = await createHarness({
      respond: promptResponder([
        ['WAKE', 'Woke up after the crash.'],
        ['PACE', wakeupCall(8)],
      ]),
    });
    const first = await harness.spawnWorkerProcess();
    const { conversationId } = await runToResult(harness, 'PACE yourself', { wakeupMinimumSeconds: 2 });
    expect((await harness.api.status(conversationId)).wakeups).toHaveLength(1);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    await harness.startWorker();
    const status = await eventually(
      () => harness!.api.status(conversationId),
      (value) => value.lastResult?.result === 'Woke up after the crash.',
      90_000,
    );
    expect(status.wakeups ?? []).toEqual([]);
    expect(status.queryCount).toBe(2);
    expect(wakeRequests(harness)).toHaveLength(1);
    await harness.api.end(conversationId);
  }, 180_000);

  it('an abort interrupts the query that scheduled it, not the wakeup', async () => {
    harness = await createHarness({
      respond: (request) => {
        const { text, toolResults } = lastUserMessage(request);
        // The wakeup's prompt may share a user message with the interrupted turn's tool result: text first.
        if (text.includes('WAKE')) return { content: [{ type: 'text', text: 'Woke after the abort.' }] };
        if (toolResults.length > 0)
          return { content: [{ type: 'text', text: 'A long answer that streams slowly. '.repeat(20) }], chunkSize: 2, deltaDelayMs: 100 };
        return { content: wakeupCall(1).map((call) => ({ type: 'tool_use' as const, ...call })) };
      },
    });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'PACE then talk', config: harness.config({ wakeupMinimumSeconds: 4 }), taskQueue: harness.taskQueue });
    await eventually(
      async () => harness!.model.requests.length,
      (count) => count >= 2,
    );
    await harness.api.abort(started.conversationId);
    const aborted = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
    expect(aborted.terminal_reason).toBe('aborted_streaming');
    const status = await eventually(
      () => harness!.api.status(started.conversationId),
      (value) => value.lastResult?.result === 'Woke after the abort.',
    );
    expect(status.wakeups ?? []).toEqual([]);
    expect(wakeRequests(harness)).toHaveLength(1);
    await harness.api.end(started.conversationId);
  }, 120_000);

  it('/loop without an interval runs the prompt now and asks the model to pace it with ScheduleWakeup', async () => {
    harness = await createHarness({
      respond: promptResponder([
        ['WAKE', 'Looped.'],
        ['LOOPED-TASK', wakeupCall(1)],
      ]),
    });
    await harness.startWorker();
    const { conversationId, result } = await runToResult(harness, '/loop LOOPED-TASK check the build', { wakeupMinimumSeconds: 2 });
    expect(result.result).toContain('ok: Wakeup scheduled in 2 s');
    const first = lastUserMessage(harness.model.requests[0]).text;
    expect(first).toContain('LOOPED-TASK check the build');
    expect(first).toContain('call ScheduleWakeup');
    await eventually(
      () => harness!.api.status(conversationId),
      (value) => value.lastResult?.result === 'Looped.',
    );
    await harness.api.end(conversationId);
  }, 120_000);
});
