/**
 * Local-first model calls (issue 7, docs/architecture.md "Loop overhead"), on the real dev server:
 * a quick answer is a local activity inside the workflow task (no callModel activity, no server
 * round trip); a slow one is handed over to a regular `callModel` on the worker-specific queue of
 * the process that holds the stream — one request, deltas and queries get through meanwhile; a
 * failed request is retried by the regular activity's policy; an abort stops a handed-over stream;
 * a handed-over call whose worker is gone is sent afresh on the workflow's queue.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CallModelInput } from '../../common/activity-types';
import { statusQuery } from '../../workflows/definitions';
import { LOCAL_MODEL_CALLS_PATCH } from '../../workflows/local-model-calls';
import { modelCallRunStats } from '../../activities/model-call-runs';
import { type Harness, createHarness, eventually, expectValidApiOrder, runToResult } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** A gate the test opens: the scripted server waits on it mid-stream. */
function gate(): { until: Promise<void>; open: () => void } {
  let open: () => void = () => {};
  const until = new Promise<void>((resolve) => (open = resolve));
  return { until, open };
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

async function historyOf(h: Harness, conversationId: string): Promise<HistoryEvent[]> {
  return (await h.client.workflow.getHandle(conversationId).fetchHistory()).events ?? [];
}

/** Local activities of `type` (their `core_local_activity` markers). */
function localActivityMarkers(events: HistoryEvent[], type: string): HistoryEvent[] {
  return events.filter((event) => {
    const attributes = event.markerRecordedEventAttributes;
    if (attributes?.markerName !== 'core_local_activity') return false;
    const data = attributes.details?.data?.payloads?.[0]?.data;
    return (JSON.parse(Buffer.from(data ?? []).toString('utf8')) as { activity_type?: string }).activity_type === type;
  });
}

/** The callModel activities scheduled, with their task queues and inputs. */
function scheduledModelCalls(events: HistoryEvent[]): Array<{ taskQueue: string; input: CallModelInput }> {
  return events
    .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
    .map((event) => ({
      taskQueue: event.activityTaskScheduledEventAttributes!.taskQueue!.name!,
      input: defaultPayloadConverter.fromPayload(event.activityTaskScheduledEventAttributes!.input!.payloads![0]) as CallModelInput,
    }));
}

function patchMarkers(events: HistoryEvent[], id: string): number {
  return events.filter((event) => {
    const attributes = event.markerRecordedEventAttributes;
    if (attributes?.markerName !== 'core_patch') return false;
    const payload = attributes.details?.['patch-data']?.payloads?.[0];
    return payload ? JSON.stringify(defaultPayloadConverter.fromPayload(payload)).includes(id) : false;
  }).length;
}

describe('local-first model calls', () => {
  it('answers a quick call inside the workflow task: no callModel activity, one request per call', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'text', text: 'Reading.' }, { type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } }] },
        { content: [{ type: 'text', text: 'The notes say hello.' }] },
      ],
    });
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'hello\n');
    await harness.startWorker();
    const { conversationId, result } = await runToResult(harness, 'Read notes.txt.');
    expect(result).toMatchObject({ subtype: 'success', result: 'The notes say hello.' });
    expect(harness.model.requests).toHaveLength(2);
    for (const request of harness.model.requests) expectValidApiOrder(request);
    expect(JSON.stringify(harness.model.requests[1].body.messages)).toContain('hello');

    const events = await historyOf(harness, conversationId);
    expect(scheduledModelCalls(events)).toEqual([]);
    const markers = localActivityMarkers(events, 'callModelLocal');
    expect(markers).toHaveLength(2);
    expect(localActivityMarkers(events, 'runTool')).toHaveLength(1);
    expect(patchMarkers(events, LOCAL_MODEL_CALLS_PATCH)).toBe(1);
    // The marker holds the answer, never the transcript or the system prompt.
    const markerText = markers.map((marker) => JSON.stringify(defaultPayloadConverter.fromPayload(marker.markerRecordedEventAttributes!.details!.result!.payloads![0]))).join('\n');
    expect(markerText).toContain('The notes say hello.');
    expect(markerText).not.toContain('hello\\n');
    expect(markerText).not.toContain('Read notes.txt.');
  });

  it('hands a slow call over to the worker that holds its stream: one request, and status answers while it streams', async () => {
    const held = gate();
    harness = await createHarness({
      script: [{ content: [{ type: 'text', text: 'Slow and steady.' }, { type: 'text', text: ' Done.' }], chunkSize: 4, hold: { afterBlocks: 1, until: held.until } }],
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await harness.api.start({ prompt: 'take your time', config: harness.config(), taskQueue: harness.taskQueue });

    // The local phase ended at its deadline and the stream went on in a regular activity on this
    // worker's handoff queue; the workflow task is no longer held, so a query is answered.
    const handedOver = await eventually(async () => scheduledModelCalls(await historyOf(harness!, conversationId)), (calls) => calls.length === 1);
    expect(handedOver[0].taskQueue).not.toBe(harness.taskQueue);
    expect(handedOver[0].input.attach?.key).toBeTruthy();
    const status = await harness.client.workflow.getHandle(conversationId).query(statusQuery);
    expect(status.phase).toBe('calling_model');
    expect(modelCallRunStats().streaming).toBe(1);

    held.open();
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result.result).toBe('Slow and steady. Done.');
    // The stream was continued, not sent again.
    expect(harness.model.requests).toHaveLength(1);
    const events = await historyOf(harness, conversationId);
    expect(localActivityMarkers(events, 'callModelLocal')).toHaveLength(1);
    expect(scheduledModelCalls(events)).toHaveLength(1);
    expect(events.filter((event) => event.activityTaskCompletedEventAttributes)).not.toHaveLength(0);
    expect(modelCallRunStats().streaming).toBe(0);
  });

  it('retries a request that failed in the local phase with the regular activity’s retry policy', async () => {
    harness = await createHarness({
      script: [{ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } }, { content: [{ type: 'text', text: 'Second time lucky.' }] }],
    });
    await harness.startWorker();
    const { conversationId, result } = await runToResult(harness, 'hello');
    expect(result).toMatchObject({ subtype: 'success', result: 'Second time lucky.' });
    expect(harness.model.requests).toHaveLength(2);
    const events = await historyOf(harness, conversationId);
    // One local phase (the 529), then the handed-over activity: attempt 1 reported the 529, attempt 2 sent the request again.
    expect(localActivityMarkers(events, 'callModelLocal')).toHaveLength(1);
    const calls = scheduledModelCalls(events);
    expect(calls).toHaveLength(1);
    expect(calls[0].input.attach?.key).toBeTruthy();
    const started = events.filter((event) => event.activityTaskStartedEventAttributes);
    expect(started.at(-1)!.activityTaskStartedEventAttributes!.attempt).toBe(2);
    expect(modelCallRunStats().streaming).toBe(0);
  });

  it('an abort stops a handed-over stream: no run is left on the worker', async () => {
    const held = gate();
    harness = await createHarness({
      script: [{ content: [{ type: 'text', text: 'This will be cut off.' }, { type: 'text', text: 'never' }], chunkSize: 4, hold: { afterBlocks: 1, until: held.until } }],
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await harness.api.start({ prompt: 'go on', config: harness.config(), taskQueue: harness.taskQueue });
    await eventually(async () => scheduledModelCalls(await historyOf(harness!, conversationId)), (calls) => calls.length === 1);
    await harness.api.abort(conversationId, 'changed my mind');
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result).toMatchObject({ is_error: true, terminal_reason: 'aborted_streaming' });
    await eventually(async () => modelCallRunStats().streaming, (count) => count === 0);
    held.open();
    expect(harness.model.requests).toHaveLength(1);
  });

  it('sends a handed-over call afresh on the workflow’s queue when its worker is gone', async () => {
    const held = gate();
    harness = await createHarness({
      script: [
        { content: [{ type: 'text', text: 'Lost with the first worker.' }, { type: 'text', text: 'x' }], chunkSize: 4, hold: { afterBlocks: 1, until: held.until } },
        { content: [{ type: 'text', text: 'Answered by the second worker.' }] },
      ],
    });
    const first = await harness.startWorker();
    const { conversationId, inputUuid } = await harness.api.start({
      prompt: 'survive this',
      config: harness.config({ modelHandoffStartTimeoutMs: 2_000 }),
      taskQueue: harness.taskQueue,
    });
    const [handedOver] = await eventually(async () => scheduledModelCalls(await historyOf(harness!, conversationId)), (calls) => calls.length === 1);
    // The first worker goes away (its handoff queue with it); a second one serves the main queue.
    await harness.startWorker();
    await harness.stopWorker(first);
    held.open();
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result.result).toBe('Answered by the second worker.');
    const calls = scheduledModelCalls(await historyOf(harness, conversationId));
    expect(calls.map((call) => call.taskQueue)).toEqual([handedOver.taskQueue, harness.taskQueue]);
    expect(calls[1].input.attach).toBeUndefined();
    expect(calls[1].input.attemptOffset).toBe(1);
    expect(harness.model.requests).toHaveLength(2);
  });

  it('with localModelCalls off, every call is a regular activity on the workflow’s queue', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'Regular.' }] }] });
    await harness.startWorker();
    const { conversationId, result } = await runToResult(harness, 'hi', { localModelCalls: false });
    expect(result.result).toBe('Regular.');
    const events = await historyOf(harness, conversationId);
    expect(localActivityMarkers(events, 'callModelLocal')).toEqual([]);
    expect(scheduledModelCalls(events).map((call) => call.taskQueue)).toEqual([harness.taskQueue]);
  });
});
