/**
 * A fast loop with a linear history, end to end: no activity input or result carries the
 * transcript or the system prompt (model calls by reference); a worker whose cache is empty (a
 * restart, another host) still sends the right request, fetched through the workflow's queries;
 * a digest mismatch is retried and never becomes a wrong request; a quick answer's tool calls
 * cost no streamed-tool signals; short read-only tools run as local activities.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { workflowTranscriptSource } from '../../activities';
import { TranscriptCache, type TranscriptSource } from '../../activities/transcript-cache';
import type { CallModelInput } from '../../common/activity-types';
import { type Harness, createHarness, expectValidApiOrder, runToResult } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const script = () => [
  {
    content: [
      { type: 'text' as const, text: 'Reading.' },
      { type: 'tool_use' as const, name: 'Read', input: { file_path: 'notes.txt' } },
    ],
  },
  { content: [{ type: 'tool_use' as const, name: 'Bash', input: { command: 'echo ran' } }] },
  { content: [{ type: 'text' as const, text: 'Done: notes read, command ran.' }] },
];

/**
 * A worker whose model activities read `cache`, which the workflow's sinks do NOT feed (they
 * feed another cache): every model call misses, as on a freshly restarted worker or another
 * host, and is materialised from the workflow's queries through `source`.
 */
function startWorkerWithColdCache(h: Harness, cache: TranscriptCache, source?: TranscriptSource) {
  return h.startWorker({ activityDeps: { transcriptCache: cache, transcriptSource: source }, transcriptCache: new TranscriptCache() });
}

async function callModelInputs(h: Harness, conversationId: string): Promise<CallModelInput[]> {
  const history = await h.client.workflow.getHandle(conversationId).fetchHistory();
  return (history.events ?? [])
    .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
    .map((event) => defaultPayloadConverter.fromPayload(event.activityTaskScheduledEventAttributes!.input!.payloads![0]) as CallModelInput);
}

describe('model calls by reference', () => {
  it('carries references, not the transcript or the system prompt, in every callModel input', async () => {
    harness = await createHarness({ script: script() });
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'the notes\n');
    await harness.startWorker();
    // Model calls as regular activities, whose inputs the history keeps (a local one's input is
    // not recorded at all; its marker holds only the answer: local-model-calls.test.ts).
    const { result, conversationId } = await runToResult(harness, 'Read notes.txt and run a command.', { localModelCalls: false });
    expect(result).toMatchObject({ subtype: 'success', result: 'Done: notes read, command ran.' });

    const inputs = await callModelInputs(harness, conversationId);
    expect(inputs).toHaveLength(3);
    for (const input of inputs) {
      expect(input.messages).toBeUndefined();
      expect(input.system).toBeUndefined();
      expect(input.transcript?.digest).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(input)).not.toContain('the notes');
    }
    expect(inputs.map((input) => input.transcript!.length)).toEqual([1, 3, 5]);
    // The model still got the whole conversation, system prompt and tools included.
    const last = harness.model.requests[2];
    expect(JSON.stringify(last.body.messages)).toContain('the notes');
    expect(last.body.system.length).toBeGreaterThan(0);
    expect(last.body.tools.length).toBeGreaterThan(0);
    for (const request of harness.model.requests) expectValidApiOrder(request);
  });

  it('a worker with an empty cache fetches the transcript from the workflow and sends the same requests', async () => {
    // Reference run: the normal worker, cache fed by the workflow's sinks.
    harness = await createHarness({ script: script() });
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'the notes\n');
    await harness.startWorker();
    await runToResult(harness, 'Read notes.txt and run a command.');
    const warm = harness.model.requests.map((request) => request.body.messages);
    await harness.close();

    harness = await createHarness({ script: script() });
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'the notes\n');
    const cold = new TranscriptCache();
    await startWorkerWithColdCache(harness, cold, workflowTranscriptSource(harness.client));
    const { result } = await runToResult(harness, 'Read notes.txt and run a command.');
    expect(result).toMatchObject({ subtype: 'success' });

    expect(cold.stats.misses).toBe(3);
    expect(cold.stats.fetchedMessages).toBe(5); // 1 + 2 + 2: each miss fetches only what is new
    expect(cold.stats.contextMisses).toBe(1);
    // Tool ids differ between runs (the scripted server numbers them); everything else is equal.
    const strip = (messages: unknown) => JSON.stringify(messages).replace(/toolu_\d+/g, 'toolu');
    expect(harness.model.requests.map((request) => strip(request.body.messages))).toEqual(warm.map(strip));
  });

  it('retries a digest mismatch and never sends a request built from other messages', async () => {
    harness = await createHarness({ script: script() });
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'the notes\n');
    const honest = workflowTranscriptSource(harness.client);
    let tampered = 0;
    const source: TranscriptSource = {
      context: honest.context,
      async slice(conversationId, from, maxBytes) {
        const slice = await honest.slice(conversationId, from, maxBytes);
        // The second model call's first fetch gets a forged tool result.
        if (from > 0 && tampered === 0) {
          tampered++;
          return {
            ...slice,
            messages: slice.messages.map((message) => (message.type === 'user' ? { ...message, message: { role: 'user', content: 'forged' } } : message)),
          } as typeof slice;
        }
        return slice;
      },
    };
    await startWorkerWithColdCache(harness, new TranscriptCache(), source);
    const { result, conversationId } = await runToResult(harness, 'Read notes.txt and run a command.');
    expect(result).toMatchObject({ subtype: 'success', result: 'Done: notes read, command ran.' });
    expect(tampered).toBe(1);
    // Three requests, none of them with the forged content.
    expect(harness.model.requests).toHaveLength(3);
    for (const request of harness.model.requests) expect(JSON.stringify(request.body.messages)).not.toContain('forged');
    // The second callModel needed a second attempt.
    const history = await harness.client.workflow.getHandle(conversationId).fetchHistory();
    const attempts = (history.events ?? [])
      .filter((event) => event.activityTaskStartedEventAttributes)
      .map((event) => event.activityTaskStartedEventAttributes!.attempt);
    expect(attempts).toContain(2);
  });

  it('a quick answer whose tools come at the end sends no streamed-tool signals', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } },
            { type: 'tool_use', name: 'Glob', input: { pattern: '*.txt' } },
          ],
        },
        { content: [{ type: 'text', text: 'Found it.' }] },
      ],
    });
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'the notes\n');
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Look around.');
    expect(result).toMatchObject({ subtype: 'success', result: 'Found it.' });
    const history = await harness.client.workflow.getHandle(conversationId).fetchHistory();
    const signals = (history.events ?? []).filter((event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'toolUseStreamed');
    expect(signals).toHaveLength(0);
  });
});

describe('local activities for short read-only tools', () => {
  it('runs Read and Glob in the workflow task (no activity task), Bash as an activity', async () => {
    harness = await createHarness({ script: script() });
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'the notes\n');
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Read notes.txt and run a command.');
    expect(result).toMatchObject({ subtype: 'success', result: 'Done: notes read, command ran.' });
    expect(JSON.stringify(harness.model.requests[1].body.messages)).toContain('the notes');

    const history = await harness.client.workflow.getHandle(conversationId).fetchHistory();
    const events = history.events ?? [];
    const scheduled = events.map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    // runTool = the Bash call; the quick model calls are local activities too (local-model-calls.test.ts).
    // loadHookSettings: the hook settings (issue 22), read once at session start; checkpointWorkspace: the checkpoint before the prompt (issue 31).
    expect(scheduled).toEqual(['loadSessionContext', 'loadHookSettings', 'checkpointWorkspace', 'runTool']);
    const markers = events.filter((event) => event.markerRecordedEventAttributes).map((event) => event.markerRecordedEventAttributes!.markerName);
    expect(markers).toContain('core_local_activity');
  });
});
