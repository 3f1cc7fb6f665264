/**
 * The live channel (issue 10) on the real dev server: deltas reach a reader while the model call
 * is still streaming (the scripted server holds the stream open until the test has seen them), a
 * retried call's partial text is taken back and never shown twice, and a reader that reconnects
 * at its offset misses nothing and repeats nothing, also across continue-as-new.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../client/cli';
import { readLive } from '../../client/live';
import { RESTORE_AND_CLEAR, SAVE_CURSOR } from '../../client/live-printer';
import { type LiveEntry, LiveView, type ViewOp } from '../../client/live-view';
import { statusQuery } from '../../workflows/definitions';
import { isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness, eventually } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});
isolateEnvironment();

/** A gate the test opens: the scripted server waits on it mid-stream. */
function gate(): { until: Promise<void>; open: () => void } {
  let open: () => void = () => {};
  const until = new Promise<void>((resolve) => (open = resolve));
  return { until, open };
}

/** Reads a conversation's channel in the background, keeping every entry and view op. */
function reader(h: Harness, conversationId: string, fromOffset = 0) {
  const entries: LiveEntry[] = [];
  const ops: ViewOp[] = [];
  const view = new LiveView();
  const controller = new AbortController();
  const done = (async () => {
    for await (const entry of readLive(h.client, conversationId, fromOffset, controller.signal)) {
      entries.push(entry);
      ops.push(...view.apply(entry));
    }
  })();
  return { entries, ops, stop: () => controller.abort(), done };
}

/** What a reader shows: the text ops, with retractions applied. */
function visibleText(ops: ViewOp[]): string {
  let text = '';
  for (const op of ops) {
    if (op.op === 'text') text += op.text;
    if (op.op === 'retract') text = text.slice(0, text.length - op.text.length);
  }
  return text;
}

describe('live channel', () => {
  it('delivers text deltas while the model call is still streaming', async () => {
    const held = gate();
    harness = await createHarness({
      script: [{ content: [{ type: 'text', text: 'Deltas arrive before the call ends.' }], chunkSize: 5, hold: { afterBlocks: 1, until: held.until } }],
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await harness.api.start({ prompt: 'stream please', config: harness.config(), taskQueue: harness.taskQueue });
    const live = reader(harness, conversationId);
    // The whole text is visible while the server still holds the response open (no message_stop yet).
    await eventually(
      async () => visibleText(live.ops),
      (text) => text === 'Deltas arrive before the call ends.',
    );
    expect(live.entries.some((entry) => entry.kind === 'event' && entry.event.message.type === 'assistant')).toBe(false);
    const status = await harness.client.workflow.getHandle(conversationId).query(statusQuery);
    expect(status.phase).toBe('calling_model');
    // Coalesced: fewer model items than the 7 deltas the server sent.
    expect(live.entries.filter((entry) => entry.kind === 'model').length).toBeLessThan(7);
    held.open();
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result.result).toBe('Deltas arrive before the call ends.');
    await eventually(async () => live.ops.some((op) => op.op === 'text_end'), Boolean);
    expect(visibleText(live.ops)).toBe('Deltas arrive before the call ends.');
    live.stop();
    await harness.api.end(conversationId);
    await live.done;
  });

  it('takes back a retried call’s partial text, so the answer shows once', async () => {
    const held = gate();
    harness = await createHarness({
      script: [
        // Attempt 1 streams a first block, is held until the test saw it, then overloads mid-stream.
        {
          content: [
            { type: 'text', text: 'Partial words of attempt one' },
            { type: 'text', text: 'never sent' },
          ],
          streamErrorAfterBlocks: 1,
          hold: { afterBlocks: 1, until: held.until },
        },
        // Attempt 2 streams slowly enough to publish its deltas (a quicker one shows as its message).
        { content: [{ type: 'text', text: 'The final answer.' }], chunkSize: 4, deltaDelayMs: 30 },
      ],
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await harness.api.start({ prompt: 'retry me', config: harness.config(), taskQueue: harness.taskQueue });
    const live = reader(harness, conversationId);
    await eventually(
      async () => visibleText(live.ops),
      (text) => text === 'Partial words of attempt one',
    );
    held.open();
    await harness.api.waitForResult(conversationId, inputUuid!);
    await eventually(async () => live.ops.some((op) => op.op === 'text_end'), Boolean);
    expect(live.ops.filter((op) => op.op === 'retract')).toEqual([{ op: 'retract', text: 'Partial words of attempt one' }]);
    expect(visibleText(live.ops)).toBe('The final answer.');
    const attempts = new Set(live.entries.flatMap((entry) => (entry.kind === 'model' ? [entry.item.call.attempt] : [])));
    expect([...attempts].sort()).toEqual([1, 2]);
    live.stop();
    await harness.api.end(conversationId);
    await live.done;
  });

  it('ask on a terminal streams the answer and erases a retried attempt', async () => {
    const held = gate();
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'text', text: 'Half an ans' },
            { type: 'text', text: 'x' },
          ],
          streamErrorAfterBlocks: 1,
          hold: { afterBlocks: 1, until: held.until },
        },
        { content: [{ type: 'text', text: 'Whole answer.' }] },
      ],
    });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();
    // A terminal that honours save-cursor / restore-and-clear: what a person would see.
    let screen = '';
    let saved = 0;
    const write = (text: string) => {
      for (const part of text.split(/(\u001b7|\u001b8\u001b\[J)/)) {
        if (part === SAVE_CURSOR) saved = screen.length;
        else if (part === RESTORE_AND_CLEAR) screen = screen.slice(0, saved);
        else screen += part;
      }
    };
    const out: string[] = [];
    const running = main(['ask', '--cwd', harness.workspace, 'go'], { out: (text) => out.push(text), err: () => {}, tty: { write } });
    await eventually(
      async () => screen,
      (text) => text.includes('Half an ans'),
    );
    held.open();
    expect(await running).toBe(0);
    expect(screen).toBe('Whole answer.\n');
    expect(out).toEqual([]);
  });

  it('a reader that reconnects at its offset misses nothing, also across continue-as-new', async () => {
    harness = await createHarness({
      // ~15 frames 40 ms apart: each answer streams past a model call's local phase (500 ms), so it is live.
      respond: (request) => ({
        content: [{ type: 'text', text: `Answer number ${request.index} with some words to stream.` }],
        chunkSize: 3,
        deltaDelayMs: 40,
      }),
    });
    await harness.startWorker();
    const config = harness.config({ continueAsNewAfterEvents: 10 });
    const { conversationId, inputUuid } = await harness.api.start({ prompt: 'first', config, taskQueue: harness.taskQueue });
    const full = reader(harness, conversationId);
    await harness.api.waitForResult(conversationId, inputUuid!);

    // A reader that stops part-way (a closed terminal) and comes back later at its offset.
    const partial = reader(harness, conversationId);
    await eventually(
      async () => partial.entries.length,
      (count) => count >= 3,
    );
    partial.stop();
    await partial.done;
    const seen = partial.entries.slice();
    for (const prompt of ['second', 'third']) {
      const uuid = await harness.api.send(conversationId, prompt);
      await harness.api.waitForResult(conversationId, uuid);
    }
    const status = await harness.api.status(conversationId);
    expect(status.continuedAsNewCount).toBeGreaterThan(0);
    const resumed = reader(harness, conversationId, seen[seen.length - 1].offset + 1);
    const last = full.entries.length > 0 ? () => full.entries[full.entries.length - 1].offset : () => -1;
    await eventually(
      async () => last(),
      (offset) =>
        offset >= 0 &&
        full.entries.some(
          (entry) => entry.kind === 'event' && entry.event.message.type === 'result' && entry.event.message.result.startsWith('Answer number 2'),
        ),
    );
    await eventually(
      async () => resumed.entries.length > 0 && resumed.entries[resumed.entries.length - 1].offset,
      (offset) => offset === last(),
    );
    const combined = [...seen, ...resumed.entries];
    expect(combined.map((entry) => entry.offset)).toEqual(full.entries.map((entry) => entry.offset));
    expect(combined.map((entry) => entry.offset)).toEqual(combined.map((_, index) => index)); // from 0, no gaps, no repeats
    expect(JSON.stringify(combined)).toBe(JSON.stringify(full.entries));
    expect(visibleText(full.ops)).toContain('Answer number 2 with some words to stream.');
    full.stop();
    resumed.stop();
    await harness.api.end(conversationId);
    await Promise.all([full.done, resumed.done]);
  });
});
