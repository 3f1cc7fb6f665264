/**
 * Context management end to end (seed §2.6–2.8) with the strict scripted server reporting large
 * input usage: autocompact at the threshold, the circuit breaker after 3 failures, reactive
 * compaction of a prompt-too-long (once), time-based microcompact after a gap, manual compaction
 * through the `compact` update, and snip (the oldest whole rounds dropped past the warning
 * threshold). Every request, compaction requests included, must be accepted by the validator (the
 * harness fails the test otherwise).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RecordedRequest, type ScriptedTurn, promptTooLongTurn } from '../../testing/scripted-model-server';
import { CLEARED_TOOL_RESULT } from '../../workflows/compaction/micro';
import { compactUpdate } from '../../workflows/definitions';
import { type Harness, createHarness, expectValidApiOrder, runToResult } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/**
 * A 50k window: effective 30k (a 20k output reserve), autocompact at 17k, warning 10k, blocking
 * 27k — so reported usage decides when each fires.
 */
const SMALL_WINDOW = { contextWindowTokens: 50_000 };

const isCompactionRequest = (request: RecordedRequest) => JSON.stringify(request.body.messages).includes('write a detailed summary of the conversation');
const summaryTurn = (text: string): ScriptedTurn => ({
  content: [{ type: 'text', text: `<analysis>Going through it.</analysis>\n<summary>${text}</summary>` }],
});
const lastUserText = (request: RecordedRequest) => JSON.stringify(request.body.messages.at(-1)?.content ?? '');

describe('autocompact', () => {
  it('fires at the threshold: the next request carries only the summary, the latest request and the files read', async () => {
    harness = await createHarness({
      respond: (request) => {
        if (isCompactionRequest(request)) return summaryTurn('The user wants notes.txt summarised; it was read.');
        if (lastUserText(request).includes('This session is being continued')) return { content: [{ type: 'text', text: 'Summarised.' }] };
        // The first answer reports a context already past the autocompact threshold (17k).
        return { content: [{ type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } }], usage: { input_tokens: 18_000 } };
      },
    });
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'alpha beta gamma\n');
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Summarise notes.txt', SMALL_WINDOW);
    expect(result).toMatchObject({ subtype: 'success', result: 'Summarised.' });

    const requests = harness.model.requests;
    expect(requests.map(isCompactionRequest)).toEqual([false, true, false]);
    // The compaction request keeps the tools and the whole window, instruction last.
    expect(requests[1].body.tools.length).toBeGreaterThan(0);
    expect(JSON.stringify(requests[1].body.messages)).toContain('alpha beta gamma');
    // After it: one user turn — summary, the latest request verbatim, the file restored.
    const after = requests[2].body.messages;
    expect(after).toHaveLength(1);
    const text = JSON.stringify(after[0].content);
    expect(text).toContain('The user wants notes.txt summarised; it was read.');
    expect(text).not.toContain('Going through it.');
    expect(text).toContain('Summarise notes.txt');
    expect(text).toContain('alpha beta gamma');
    for (const request of requests) expectValidApiOrder(request);

    const status = await harness.api.status(conversationId);
    expect(status.context).toMatchObject({
      compactions: 1,
      breaker: { consecutiveFailures: 0, open: false },
      effectiveWindow: 30_000,
      autoCompactThreshold: 17_000,
    });
    expect(status.context.lastCompaction).toMatchObject({ trigger: 'auto', compacted: true, preTokens: expect.any(Number) });
    const { events } = await harness.api.events(conversationId);
    expect(events.map((event) => event.message.type)).toContain('compact_boundary');
  });

  it('opens the circuit breaker after 3 consecutive failures and says so', async () => {
    let toolTurns = 0;
    harness = await createHarness({
      respond: (request) => {
        if (isCompactionRequest(request)) return { error: { status: 400, type: 'invalid_request_error', message: 'summary refused' } };
        toolTurns++;
        if (toolTurns > 5) return { content: [{ type: 'text', text: 'Finished anyway.' }] };
        // Past autocompact (17k), below the blocking limit (27k): the loop goes on either way.
        return { content: [{ type: 'tool_use', name: 'Glob', input: { pattern: '*.txt' } }], usage: { input_tokens: 18_000 } };
      },
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Look around', SMALL_WINDOW);
    expect(result).toMatchObject({ subtype: 'success', result: 'Finished anyway.' });
    expect(harness.model.requests.filter(isCompactionRequest)).toHaveLength(3);

    const status = await harness.api.status(conversationId);
    expect(status.context).toMatchObject({ compactions: 0, breaker: { consecutiveFailures: 3, open: true } });
    const { events } = await harness.api.events(conversationId);
    expect(events.map((event) => event.message)).toContainEqual(
      expect.objectContaining({ type: 'system', level: 'warning', content: expect.stringContaining('it is off for this conversation') }),
    );
  });
});

describe('reactive compaction', () => {
  it('a prompt-too-long is compacted once and the request retried', async () => {
    let asked = 0;
    harness = await createHarness({
      respond: (request) => {
        if (isCompactionRequest(request)) return summaryTurn('Earlier: the user asked for a listing.');
        if (lastUserText(request).includes('First')) return { content: [{ type: 'text', text: 'First answer.' }] };
        asked++;
        return asked === 1 ? promptTooLongTurn(210_000) : { content: [{ type: 'text', text: 'Second answer, after compaction.' }] };
      },
    });
    await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'First question');
    const second = await harness.api.send(conversationId, 'Second question');
    const result = await harness.api.waitForResult(conversationId, second);
    expect(result).toMatchObject({ subtype: 'success', result: 'Second answer, after compaction.', transitions: ['reactive_compact_retry'] });
    const retried = harness.model.requests.at(-1)!;
    expect(retried.body.messages).toHaveLength(1);
    expect(JSON.stringify(retried.body.messages)).toContain('Earlier: the user asked for a listing.');
    expect(JSON.stringify(retried.body.messages)).toContain('Second question');
    expect((await harness.api.status(conversationId)).context.lastCompaction).toMatchObject({ trigger: 'reactive', compacted: true });
  });

  it('a second prompt-too-long after compacting ends the query with a clear prompt_too_long', async () => {
    harness = await createHarness({
      respond: (request) => {
        if (isCompactionRequest(request)) return summaryTurn('Earlier: small talk.');
        if (lastUserText(request).includes('First')) return { content: [{ type: 'text', text: 'First answer.' }] };
        return promptTooLongTurn(250_000);
      },
    });
    await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'First question');
    const second = await harness.api.send(conversationId, 'Second question');
    const result = await harness.api.waitForResult(conversationId, second);
    expect(result).toMatchObject({ is_error: true, terminal_reason: 'prompt_too_long', transitions: ['reactive_compact_retry'] });
    expect(result.result).toContain('still too long for the model after compacting it');
    expect(harness.model.requests.filter(isCompactionRequest)).toHaveLength(1);
  });
});

describe('microcompact', () => {
  it('clears old tool results after a pause, keeping the 3 most recent and every tool_use answered', async () => {
    const reads = ['a', 'b', 'c', 'd', 'e'];
    let index = 0;
    harness = await createHarness({
      respond: (request) => {
        if (lastUserText(request).includes('Again')) return { content: [{ type: 'text', text: 'Second answer.' }] };
        if (index < reads.length) return { content: [{ type: 'tool_use', name: 'Read', input: { file_path: `${reads[index++]}.txt` } }] };
        return { content: [{ type: 'text', text: 'Read them all.' }] };
      },
    });
    for (const name of reads) await writeFile(path.join(harness.workspace, `${name}.txt`), `contents of ${name}\n`);
    await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'Read the files', { microcompactGapMs: 1_000 });
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // workflow time moves with real time
    const next = await harness.api.send(conversationId, 'Again');
    expect(await harness.api.waitForResult(conversationId, next)).toMatchObject({ result: 'Second answer.' });

    const request = harness.model.requests.at(-1)!;
    const sent = JSON.stringify(request.body.messages);
    expect(sent.split(CLEARED_TOOL_RESULT).length - 1).toBe(2);
    expect(sent).not.toContain('contents of a');
    expect(sent).not.toContain('contents of b');
    for (const name of ['c', 'd', 'e']) expect(sent).toContain(`contents of ${name}`);
    expectValidApiOrder(request);
  });
});

describe('manual compaction', () => {
  it('the compact update summarises with the given instructions and answers with what it did', async () => {
    harness = await createHarness({
      respond: (request) => {
        if (isCompactionRequest(request)) return summaryTurn('Manual summary of the chat.');
        if (lastUserText(request).includes('Next')) return { content: [{ type: 'text', text: 'Next answer.' }] };
        return { content: [{ type: 'text', text: 'First answer.' }] };
      },
    });
    await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'First question');
    const outcome = await harness.client.workflow
      .getHandle(conversationId)
      .executeUpdate(compactUpdate, { args: [{ instructions: 'focus on the first question' }] });
    expect(outcome).toMatchObject({ trigger: 'manual', compacted: true, messagesSummarized: 2 });
    const compactionRequest = harness.model.requests.find(isCompactionRequest)!;
    expect(JSON.stringify(compactionRequest.body.messages)).toContain('focus on the first question');

    const next = await harness.api.send(conversationId, 'Next question');
    expect(await harness.api.waitForResult(conversationId, next)).toMatchObject({ result: 'Next answer.' });
    const after = harness.model.requests.at(-1)!.body.messages;
    expect(JSON.stringify(after)).toContain('Manual summary of the chat.');
    expect(JSON.stringify(after)).not.toContain('First answer.');
  });

  it('rejects a malformed request and has nothing to do on an empty conversation', async () => {
    harness = await createHarness({ script: [] });
    await harness.startWorker();
    const started = await harness.api.start({ config: harness.config(), taskQueue: harness.taskQueue });
    const handle = harness.client.workflow.getHandle(started.conversationId);
    await expect(handle.executeUpdate(compactUpdate, { args: [{ instructions: 42 as unknown as string }] })).rejects.toMatchObject({
      cause: { message: expect.stringContaining('instructions must be a string'), type: 'InvalidCompactRequest' },
    });
    expect(await handle.executeUpdate(compactUpdate, { args: [{}] })).toMatchObject({
      compacted: false,
      error: expect.stringContaining('Not enough conversation'),
    });
    expect(harness.model.requests).toHaveLength(0);
  });
});

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
