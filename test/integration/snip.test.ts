/**
 * Snip (seed §2.7) end to end: past the warning threshold, with `snip` on, the oldest whole rounds
 * leave the window before anything is summarised. The next request keeps the task (first user
 * message) and the latest round, never separates a tool_use from its tool_result, and is accepted
 * by the strict validator; no compaction request is made while snip frees enough.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { type Harness, createHarness, expectValidApiOrder, runToResult } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Effective window 30k: warning at 10k, autocompact at 17k (see compaction.test.ts). */
const SMALL_WINDOW = { contextWindowTokens: 50_000 };
const isCompactionRequest = (request: RecordedRequest) => JSON.stringify(request.body.messages).includes('write a detailed summary of the conversation');

describe('snip', () => {
  it('drops the oldest rounds past the warning threshold: task and latest round stay, pairs stay whole', async () => {
    const files = ['one.txt', 'two.txt', 'three.txt'];
    harness = await createHarness({
      respond: () => {
        const step = harness!.model.requests.filter((r) => !isCompactionRequest(r)).length - 1;
        if (step < files.length) {
          // From the second answer on, the reported context (12k) is past the warning threshold
          // (10k) but below autocompact (17k): snip, not a summary.
          return { content: [{ type: 'tool_use', name: 'Read', input: { file_path: files[step] } }], usage: { input_tokens: step === 0 ? 4_000 : 12_000 } };
        }
        return { content: [{ type: 'text', text: 'Read them all.' }], usage: { input_tokens: 12_000 } };
      },
    });
    for (const file of files) await writeFile(path.join(harness.workspace, file), `contents of ${file}\n`);
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Read one, two and three', { ...SMALL_WINDOW, snip: true });
    expect(result).toMatchObject({ subtype: 'success', result: 'Read them all.' });

    const requests = harness.model.requests;
    expect(requests.some(isCompactionRequest)).toBe(false);
    for (const request of requests) expectValidApiOrder(request);
    // Request 3 (after the 12k answer) no longer holds the first round (Read one.txt and its result),
    // but keeps the task and the round just made.
    const third = JSON.stringify(requests[2].body.messages);
    expect(JSON.stringify(requests[1].body.messages)).toContain('contents of one.txt');
    expect(third).toContain('Read one, two and three');
    expect(third).not.toContain('contents of one.txt');
    expect(third).toContain('contents of two.txt');
    expect(requests[2].body.messages[0].role).toBe('user');

    const { events } = await harness.api.events(conversationId);
    expect(events.map((event) => event.message)).toContainEqual(expect.objectContaining({ type: 'system', content: expect.stringContaining('Snipped') }));
    expect((await harness.api.status(conversationId)).context).toMatchObject({ compactions: 0 });
  });

  it('is off by default: the same answers leave every round in the window', async () => {
    let step = 0;
    harness = await createHarness({
      respond: () => {
        step++;
        if (step <= 2) return { content: [{ type: 'tool_use', name: 'Read', input: { file_path: `f${step}.txt` } }], usage: { input_tokens: 12_000 } };
        return { content: [{ type: 'text', text: 'Done.' }], usage: { input_tokens: 12_000 } };
      },
    });
    await writeFile(path.join(harness.workspace, 'f1.txt'), 'first file\n');
    await writeFile(path.join(harness.workspace, 'f2.txt'), 'second file\n');
    await harness.startWorker();
    const { result } = await runToResult(harness, 'Read f1 and f2', SMALL_WINDOW);
    expect(result).toMatchObject({ subtype: 'success', result: 'Done.' });
    expect(JSON.stringify(harness.model.requests.at(-1)!.body.messages)).toContain('first file');
  });
});
