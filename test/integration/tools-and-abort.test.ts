/**
 * Tools on the real dev server (seed §2.4, §2.8): partitioning and ordered results, streaming tool
 * execution, the Bash error cascade, abort while streaming / while tools run, and queued input.
 *
 * "Slow" read-only tools are `cat <fifo>`: the parsed command's facts prove `cat` read-only, and the command
 * blocks until the test writes to the FIFO, so the test decides when it finishes — no sleeps, no
 * timing assertions. Holding the FIFO's write end also tells the test whether the process lives
 * (a write to a FIFO nobody reads fails with EPIPE).
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { execFileSync } from 'node:child_process';
import { closeSync, writeSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../../common/messages';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { historyQuery } from '../../workflows/definitions';
import { liveSleepers, openFifoWriter } from '../helpers/processes';
import { type Harness, createHarness, eventually, expectValidApiOrder } from '../helpers/harness';

let harness: Harness;
const openFds: number[] = [];
afterEach(async () => {
  for (const fd of openFds.splice(0)) {
    try {
      closeSync(fd);
    } catch {
      /* already closed */
    }
  }
  await harness?.close();
});

// ---- helpers -------------------------------------------------------------------------------

/** Creates a FIFO in the workspace; `cat name` blocks on it until the test releases it. */
function makeGate(name: string): string {
  const file = path.join(harness.workspace, name);
  execFileSync('mkfifo', [file]);
  return file;
}

/**
 * Waits until a process has the FIFO open for reading (i.e. the tool's process runs) and returns
 * the write end, which the test keeps: closing it would hand the reader an EOF.
 */
async function waitForReader(fifo: string, timeoutMs = 60_000): Promise<number> {
  const fd = await openFifoWriter(fifo, timeoutMs);
  openFds.push(fd);
  return fd;
}

/** Lets the `cat` on the other end finish with `text` as its output. */
function release(fd: number, text: string): void {
  writeSync(fd, text);
  closeSync(fd);
  openFds.splice(openFds.indexOf(fd), 1);
}

/** True while some process still reads the FIFO behind `fd`. */
function readerAlive(fd: number): boolean {
  try {
    writeSync(fd, '.');
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EPIPE') return false;
    throw error;
  }
}

interface ActivityRecord {
  scheduledEventId: number;
  type: string;
  input: any;
  closeEventId?: number;
  closedAs?: 'completed' | 'failed' | 'canceled' | 'timed_out';
  cancelRequestedEventId?: number;
}

/** Ids of the WorkflowTaskCompleted events: the points where the workflow's commands were recorded. */
async function workflowTaskCompletedIds(conversationId: string): Promise<number[]> {
  const history = await harness.client.workflow.getHandle(conversationId).fetchHistory();
  return (history.events ?? []).filter((event) => event.workflowTaskCompletedEventAttributes).map((event) => Number(String(event.eventId)));
}

/** The workflow's activities from its event history, in scheduling order. */
async function activityRecords(conversationId: string): Promise<ActivityRecord[]> {
  const history = await harness.client.workflow.getHandle(conversationId).fetchHistory();
  const records = new Map<number, ActivityRecord>();
  const closes = [
    ['activityTaskCompletedEventAttributes', 'completed'],
    ['activityTaskFailedEventAttributes', 'failed'],
    ['activityTaskCanceledEventAttributes', 'canceled'],
    ['activityTaskTimedOutEventAttributes', 'timed_out'],
  ] as const;
  for (const event of history.events ?? []) {
    const eventId = Number(String(event.eventId));
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const payload = scheduled.input?.payloads?.[0];
      records.set(eventId, {
        scheduledEventId: eventId,
        type: scheduled.activityType?.name ?? '',
        input: payload ? defaultPayloadConverter.fromPayload(payload as any) : undefined,
      });
      continue;
    }
    const cancelRequested = event.activityTaskCancelRequestedEventAttributes;
    if (cancelRequested) {
      const record = records.get(Number(String(cancelRequested.scheduledEventId)));
      if (record) record.cancelRequestedEventId = eventId;
    }
    for (const [key, kind] of closes) {
      const attributes = (event as any)[key];
      if (!attributes) continue;
      const record = records.get(Number(String(attributes.scheduledEventId)));
      if (record) {
        record.closeEventId = eventId;
        record.closedAs = kind;
      }
    }
  }
  return [...records.values()];
}

const runToolRecords = (records: ActivityRecord[]) => records.filter((record) => record.type === 'runTool');
const callModelRecords = (records: ActivityRecord[]) => records.filter((record) => record.type === 'callModel');

type ToolResult = { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };
function toolResultsOf(request: RecordedRequest): ToolResult[] {
  const last = request.body.messages[request.body.messages.length - 1];
  return (last.content as any[]).filter((block) => block.type === 'tool_result');
}

/**
 * These tests observe when each tool and model call was scheduled and closed through activity
 * events, which local activities do not have: Read/Glob/Grep and the model calls run as regular
 * activities here.
 */
const OBSERVE_MODEL = { localModelCalls: false };
const OBSERVE_READS = { localReadOnlyTools: false, ...OBSERVE_MODEL };

const slowText = (chars: number) => ({ type: 'text' as const, text: 'x'.repeat(chars) });

async function start(prompt: string, overrides: Parameters<Harness['config']>[0] = {}) {
  return harness.api.start({ prompt, config: harness.config(overrides), taskQueue: harness.taskQueue });
}

// ---- partitioning and ordering ---------------------------------------------------------------

describe('partitioned tool execution', () => {
  it('runs [read, read, write, read] as a concurrent batch then serial batches; results go back in request order', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'text', text: 'Looking around, then writing.' },
            { type: 'tool_use', id: 'toolu_a', name: 'Bash', input: { command: 'cat a.fifo' } },
            { type: 'tool_use', id: 'toolu_b', name: 'Read', input: { file_path: 'b.txt' } },
            { type: 'tool_use', id: 'toolu_w', name: 'Bash', input: { command: 'echo written > c.txt' } },
            { type: 'tool_use', id: 'toolu_c', name: 'Read', input: { file_path: 'c.txt' } },
          ],
        },
        { content: [{ type: 'text', text: 'All done.' }] },
      ],
    });
    const gate = makeGate('a.fifo');
    await writeFile(path.join(harness.workspace, 'b.txt'), 'bbb\n');
    await writeFile(path.join(harness.workspace, 'c.txt'), 'original\n');
    await harness.startWorker();
    const { conversationId, inputUuid } = await start('go', OBSERVE_READS);

    // The slow read runs, its sibling has finished, and the write waits for the whole batch.
    const fd = await waitForReader(gate);
    await eventually(
      () => activityRecords(conversationId),
      (records) => runToolRecords(records).some((record) => record.input.toolUseId === 'toolu_b' && record.closedAs === 'completed'),
    );
    const whileBlocked = runToolRecords(await activityRecords(conversationId));
    expect(whileBlocked.map((record) => record.input.toolUseId).sort()).toEqual(['toolu_a', 'toolu_b']);
    expect(await readFile(path.join(harness.workspace, 'c.txt'), 'utf8')).toBe('original\n');

    release(fd, 'aaa\n');
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'All done.', transitions: ['tool_use'] });

    const results = toolResultsOf(harness.model.requests[1]);
    expect(results.map((block) => block.tool_use_id)).toEqual(['toolu_a', 'toolu_b', 'toolu_w', 'toolu_c']);
    expect(results[0]).toMatchObject({ content: 'aaa' });
    expect(results[1].content).toContain('bbb');
    expect(results[2].is_error).toBeFalsy();
    expect(results[3].content).toContain('written'); // the write happened before Read c
    expect(results[3].content).not.toContain('original');
    expectValidApiOrder(harness.model.requests[1]);

    // They finished out of request order: b before a; the serial batches after both.
    const records = runToolRecords(await activityRecords(conversationId));
    const closed = (id: string) => records.find((record) => record.input.toolUseId === id)!;
    const scheduled = (id: string) => closed(id).scheduledEventId;
    expect(closed('toolu_b').closeEventId!).toBeLessThan(closed('toolu_a').closeEventId!);
    expect(scheduled('toolu_w')).toBeGreaterThan(closed('toolu_a').closeEventId!);
    expect(scheduled('toolu_c')).toBeGreaterThan(closed('toolu_w').closeEventId!);
  });
});

// ---- streaming tool execution ----------------------------------------------------------------

describe('streaming tool execution', () => {
  const streamingTurn = {
    // The tools stream first; a long text keeps the stream open well after them.
    content: [
      { type: 'tool_use' as const, id: 'toolu_gate', name: 'Bash', input: { command: 'cat gate.fifo' } },
      { type: 'tool_use' as const, id: 'toolu_read', name: 'Read', input: { file_path: 'notes.txt' } },
      slowText(600),
    ],
    deltaDelayMs: 25,
    chunkSize: 2,
  };

  // Regular model calls, and the default local-first ones: this stream outlasts the local phase,
  // so it is handed over, and the tool_use reports held until then start the tools early.
  it.each([
    ['a regular model call', OBSERVE_READS],
    ['a handed-over local-first model call', { localReadOnlyTools: false }],
  ])('starts concurrency-safe tools while the model is still streaming (%s)', async (_label, overrides) => {
    harness = await createHarness({ script: [streamingTurn, { content: [{ type: 'text', text: 'Read both.' }] }] });
    const gate = makeGate('gate.fifo');
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'the notes\n');
    await harness.startWorker();
    const { conversationId, inputUuid } = await start('read them', overrides);

    // The tool's process is running, and the model call has not completed yet.
    const fd = await waitForReader(gate);
    const whileStreaming = await activityRecords(conversationId);
    expect(callModelRecords(whileStreaming)).toHaveLength(1);
    expect(callModelRecords(whileStreaming)[0].closedAs).toBeUndefined();
    const status = await harness.api.status(conversationId);
    expect(status.toolsInFlight.map((tool) => tool.toolUseId)).toContain('toolu_gate');

    release(fd, 'gate output\n');
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'Read both.' });

    const records = await activityRecords(conversationId);
    const modelClosed = callModelRecords(records)[0].closeEventId!;
    const tools = runToolRecords(records);
    expect(tools.map((record) => record.input.toolUseId)).toEqual(['toolu_gate', 'toolu_read']); // each started once
    for (const tool of tools) expect(tool.scheduledEventId).toBeLessThan(modelClosed);
    const results = toolResultsOf(harness.model.requests[1]);
    expect(results.map((block) => block.tool_use_id)).toEqual(['toolu_gate', 'toolu_read']);
    expect(results[0].content).toBe('gate output');
    expect(results[1].content).toContain('the notes');
  });

  it('with streamingToolExecution: false, the same reply starts its tools only after the model call completes', async () => {
    harness = await createHarness({ script: [streamingTurn, { content: [{ type: 'text', text: 'Read both.' }] }] });
    const gate = makeGate('gate.fifo');
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'the notes\n');
    await harness.startWorker();
    const { conversationId, inputUuid } = await start('read them', { streamingToolExecution: false, ...OBSERVE_MODEL });

    const fd = await waitForReader(gate);
    const atToolStart = await activityRecords(conversationId);
    expect(callModelRecords(atToolStart)[0].closedAs).toBe('completed');
    release(fd, 'gate output\n');
    await harness.api.waitForResult(conversationId, inputUuid!);

    const records = await activityRecords(conversationId);
    const modelClosed = callModelRecords(records)[0].closeEventId!;
    for (const tool of runToolRecords(records)) expect(tool.scheduledEventId).toBeGreaterThan(modelClosed);
    expect(toolResultsOf(harness.model.requests[1]).map((block) => block.tool_use_id)).toEqual(['toolu_gate', 'toolu_read']);
  });

  it('never starts an unsafe tool early, nor a safe one streamed after it', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'tool_use', id: 'toolu_write', name: 'Write', input: { file_path: 'out.txt', content: 'new\n' } },
            { type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: 'echo more >> out.txt' } },
            { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'out.txt' } },
            slowText(300),
          ],
          deltaDelayMs: 10,
          chunkSize: 2,
        },
        { content: [{ type: 'text', text: 'Wrote it.' }] },
      ],
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await start('write', OBSERVE_READS);
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result.subtype).toBe('success');

    const records = await activityRecords(conversationId);
    const modelClosed = callModelRecords(records)[0].closeEventId!;
    const tools = runToolRecords(records);
    expect(tools.map((record) => record.input.toolUseId)).toEqual(['toolu_write', 'toolu_bash', 'toolu_read']);
    for (const tool of tools) expect(tool.scheduledEventId).toBeGreaterThan(modelClosed);
    const results = toolResultsOf(harness.model.requests[1]);
    expect(results.map((block) => block.tool_use_id)).toEqual(['toolu_write', 'toolu_bash', 'toolu_read']);
    expect(results[2].content).toContain('new');
    expect(results[2].content).toContain('more');
  });

  it('a safe call streamed right after an unsafe one still waits for it (blocks arriving back to back)', async () => {
    const pairs = [1, 2, 3, 4, 5, 6];
    harness = await createHarness({
      script: [
        {
          // Safe calls first (their reports are in flight when the unsafe one streams), then write/read pairs.
          content: [
            ...pairs.map((n) => ({ type: 'tool_use' as const, id: `toolu_s${n}`, name: 'Glob', input: { pattern: `*${n}.none` } })),
            ...pairs.flatMap((n) => [
              { type: 'tool_use' as const, id: `toolu_w${n}`, name: 'Write', input: { file_path: `f${n}.txt`, content: `written ${n}\n` } },
              { type: 'tool_use' as const, id: `toolu_r${n}`, name: 'Read', input: { file_path: `f${n}.txt` } },
            ]),
          ],
        },
        { content: [{ type: 'text', text: 'Wrote and read them.' }] },
      ],
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await start('write then read', OBSERVE_MODEL);
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result.subtype).toBe('success');

    const results = toolResultsOf(harness.model.requests[1]);
    expect(results.map((block) => block.tool_use_id)).toEqual([...pairs.map((n) => `toolu_s${n}`), ...pairs.flatMap((n) => [`toolu_w${n}`, `toolu_r${n}`])]);
    for (const n of pairs) {
      const read = results.find((block) => block.tool_use_id === `toolu_r${n}`)!;
      expect(read.is_error, read.content).toBeFalsy();
      expect(read.content).toContain(`written ${n}`);
    }
    const records = await activityRecords(conversationId);
    const modelClosed = callModelRecords(records)[0].closeEventId!;
    for (const tool of runToolRecords(records).filter((record) => !record.input.toolUseId.startsWith('toolu_s'))) {
      expect(tool.scheduledEventId).toBeGreaterThan(modelClosed);
    }
  });

  it('cancels and drops early work of a model attempt that is retried, keeping one result per tool_use', async () => {
    harness = await createHarness({
      script: [
        // Attempt 1 streams a tool_use, keeps streaming a while (so the tool is reported and starts
        // early), then the stream fails (overloaded): Temporal retries the call.
        {
          content: [
            { type: 'tool_use', id: 'toolu_x', name: 'Bash', input: { command: 'cat gate.fifo' } },
            { type: 'text', text: 'never arrives' },
          ],
          streamErrorAfterBlocks: 1,
          deltaDelayMs: 150,
        },
        // Attempt 2 answers differently, under the same tool_use id.
        {
          content: [
            { type: 'tool_use', id: 'toolu_x', name: 'Bash', input: { command: 'cat a.txt' } },
            { type: 'tool_use', id: 'toolu_y', name: 'Read', input: { file_path: 'a.txt' } },
            slowText(400),
          ],
          deltaDelayMs: 20,
          chunkSize: 2,
        },
        { content: [{ type: 'text', text: 'Read a.' }] },
      ],
    });
    const gate = makeGate('gate.fifo');
    await writeFile(path.join(harness.workspace, 'a.txt'), 'contents of a\n');
    await harness.startWorker();
    const { conversationId, inputUuid } = await start('read a');

    const fd = await waitForReader(gate); // the discarded attempt's tool did start
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'Read a.', transitions: ['tool_use'] });

    const [first, second] = harness.model.requests;
    expect(JSON.stringify(first.body.messages)).toBe(JSON.stringify(second.body.messages)); // a retry of one call
    const results = toolResultsOf(harness.model.requests[2]);
    expect(results.map((block) => block.tool_use_id)).toEqual(['toolu_x', 'toolu_y']);
    expect(results[0]).toMatchObject({ content: 'contents of a' });
    expect(results[0].is_error).toBeFalsy();
    expect(results[1].content).toContain('contents of a');
    expectValidApiOrder(harness.model.requests[2]);

    // The early tool was cancelled: its activity closed as canceled and its process is gone.
    await eventually(
      () => activityRecords(conversationId),
      (records) => runToolRecords(records).some((record) => record.input.input.command === 'cat gate.fifo' && record.closedAs === 'canceled'),
    );
    await eventually(
      async () => readerAlive(fd),
      (alive) => !alive,
    );
    const gateRuns = runToolRecords(await activityRecords(conversationId)).filter((record) => record.input.input.command === 'cat gate.fifo');
    expect(gateRuns).toHaveLength(1);
  });
});

// ---- Bash error cascade ----------------------------------------------------------------------

describe('Bash error cascade', () => {
  it('a failing Bash call cancels its running siblings, each with a result naming the failed command', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'tool_use', id: 'toolu_slow', name: 'Bash', input: { command: 'cat gate.fifo' } },
            { type: 'tool_use', id: 'toolu_fail', name: 'Bash', input: { command: 'cat missing-file' } },
            { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'present.txt' } },
          ],
        },
        { content: [{ type: 'text', text: 'The file is missing.' }] },
      ],
    });
    makeGate('gate.fifo');
    await writeFile(path.join(harness.workspace, 'present.txt'), 'here\n');
    await harness.startWorker();
    const { conversationId, inputUuid } = await start('look');
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'The file is missing.' });

    const results = toolResultsOf(harness.model.requests[1]);
    expect(results.map((block) => block.tool_use_id)).toEqual(['toolu_slow', 'toolu_fail', 'toolu_read']);
    expect(results[0]).toMatchObject({ is_error: true, content: 'Cancelled: parallel tool call Bash(cat missing-file) errored' });
    expect(results[1].is_error).toBe(true);
    expect(results[1].content).toContain('missing-file');
    expectValidApiOrder(harness.model.requests[1]);
  });

  it('a failing Bash call also cancels the later calls of the same message (mkdir fails → cp is pointless)', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'tool_use', name: 'Bash', input: { command: 'mkdir build/out' } },
            { type: 'tool_use', name: 'Write', input: { file_path: 'build/out/app.js', content: 'x' } },
            { type: 'tool_use', name: 'Bash', input: { command: 'touch copied' } },
          ],
        },
        { content: [{ type: 'text', text: 'mkdir failed first.' }] },
      ],
    });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'build', config: harness.config(), taskQueue: harness.taskQueue });
    await harness.api.waitForResult(started.conversationId, started.inputUuid!);

    const [mkdir, write, touch] = toolResultsOf(harness.model.requests[1]);
    expect(mkdir.is_error).toBe(true);
    for (const cancelled of [write, touch]) {
      expect(cancelled).toMatchObject({ is_error: true, content: 'Cancelled: parallel tool call Bash(mkdir build/out) errored' });
    }
    await expect(readFile(path.join(harness.workspace, 'copied'), 'utf8')).rejects.toThrow();
  });

  it('a failing Read does not cancel its siblings', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'tool_use', id: 'toolu_slow', name: 'Bash', input: { command: 'cat gate.fifo' } },
            { type: 'tool_use', id: 'toolu_missing', name: 'Read', input: { file_path: 'missing.txt' } },
          ],
        },
        { content: [{ type: 'text', text: 'One was missing.' }] },
      ],
    });
    const gate = makeGate('gate.fifo');
    await harness.startWorker();
    const { conversationId, inputUuid } = await start('look', OBSERVE_READS);

    const fd = await waitForReader(gate);
    const settled = await eventually(
      () => activityRecords(conversationId),
      (records) =>
        callModelRecords(records)[0]?.closedAs === 'completed' &&
        // A tool that ended in error fails its activity (the UI shows it in red); its result goes to the model.
        runToolRecords(records).some((record) => record.input.toolUseId === 'toolu_missing' && record.closedAs === 'failed'),
    );
    const lastClose = Math.max(...settled.filter((record) => record.closeEventId !== undefined).map((record) => record.closeEventId!));
    // Let the workflow react to the failed Read and the finished model call (a cascade would be a
    // cancel request recorded by the workflow task that handled them); the sibling was not cancelled.
    await eventually(
      () => workflowTaskCompletedIds(conversationId),
      (ids) => ids.some((id) => id > lastClose),
    );
    const gateRecord = runToolRecords(await activityRecords(conversationId)).find((record) => record.input.toolUseId === 'toolu_slow')!;
    expect(gateRecord.cancelRequestedEventId).toBeUndefined();
    release(fd, 'slow output\n');
    await harness.api.waitForResult(conversationId, inputUuid!);

    const results = toolResultsOf(harness.model.requests[1]);
    expect(results.map((block) => block.tool_use_id)).toEqual(['toolu_slow', 'toolu_missing']);
    expect(results[0]).toMatchObject({ content: 'slow output' });
    expect(results[0].is_error).toBeFalsy();
    expect(results[1].is_error).toBe(true);
    expect(results[1].content).toContain('File does not exist');
  });
});

// ---- abort ------------------------------------------------------------------------------------

describe('abort', () => {
  it('while streaming: ends with aborted_streaming, kills early tools, keeps the conversation open and its history valid', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'text', text: 'Let me look.' },
            { type: 'tool_use', id: 'toolu_early', name: 'Bash', input: { command: 'cat gate.fifo' } },
            slowText(4000),
          ],
          deltaDelayMs: 20,
          chunkSize: 2,
        },
        { content: [{ type: 'text', text: 'Fresh start.' }] },
      ],
    });
    const gate = makeGate('gate.fifo');
    await harness.startWorker();
    const { conversationId, inputUuid } = await start('look around');

    const fd = await waitForReader(gate); // the model is streaming and the early tool runs
    expect(harness.model.requests).toHaveLength(1);
    await harness.api.abort(conversationId);
    const aborted = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(aborted).toMatchObject({ terminal_reason: 'aborted_streaming', is_error: true, result: 'Interrupted by user' });
    expect(readerAlive(fd)).toBe(false); // the early tool's process is dead when the result arrives

    const status = await harness.api.status(conversationId);
    expect(status).toMatchObject({ phase: 'awaiting_input', ended: false, toolsInFlight: [] });
    const history: TranscriptMessage[] = await harness.client.workflow.getHandle(conversationId).query(historyQuery);
    expect(history.filter((message) => message.type === 'assistant')).toHaveLength(0);

    const next = await harness.api.send(conversationId, 'try again');
    const result = await harness.api.waitForResult(conversationId, next);
    expect(result).toMatchObject({ subtype: 'success', result: 'Fresh start.' });
    expect(harness.model.requests).toHaveLength(2);
    expectValidApiOrder(harness.model.requests[1]);
    const sent = JSON.stringify(harness.model.requests[1].body.messages);
    expect(sent).toContain('look around');
    expect(sent).toContain('try again');
    // The model is told it was interrupted, between the two prompts (Claude Code's marker).
    expect(sent.indexOf('[Request interrupted by user]')).toBeGreaterThan(sent.indexOf('look around'));
    expect(sent.indexOf('[Request interrupted by user]')).toBeLessThan(sent.indexOf('try again'));
  });

  it('while tools run: ends with aborted_tools, the command dies, its result is "Interrupted by user", and the next input works', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'tool_use', id: 'toolu_sleep', name: 'Bash', input: { command: 'echo started > pid; sleep 30.125' } },
            { type: 'tool_use', id: 'toolu_after', name: 'Bash', input: { command: 'echo never > after.txt' } },
          ],
        },
        { content: [{ type: 'text', text: 'Stopped as asked.' }] },
      ],
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await start('wait');

    await eventually(
      async () => liveSleepers('30.125').length,
      (count) => count === 1,
    );
    await harness.api.abort(conversationId);
    const aborted = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(aborted).toMatchObject({ terminal_reason: 'aborted_tools', is_error: true });
    expect(liveSleepers('30.125')).toEqual([]); // dead when the result arrives
    await expect(readFile(path.join(harness.workspace, 'after.txt'), 'utf8')).rejects.toThrow(); // never ran

    const status = await harness.api.status(conversationId);
    expect(status).toMatchObject({ phase: 'awaiting_input', ended: false, toolsInFlight: [] });

    const next = await harness.api.send(conversationId, 'what happened?');
    const result = await harness.api.waitForResult(conversationId, next);
    expect(result).toMatchObject({ subtype: 'success', result: 'Stopped as asked.' });
    const request = harness.model.requests[1];
    expectValidApiOrder(request);
    const results = (request.body.messages[2].content as any[]).filter((block) => block.type === 'tool_result');
    expect(results.map((block) => block.tool_use_id)).toEqual(['toolu_sleep', 'toolu_after']);
    expect(results[0]).toMatchObject({ content: 'Interrupted by user', is_error: true });
    expect(results[1]).toMatchObject({ content: 'Interrupted by user', is_error: true });
    expect(JSON.stringify(request.body.messages[2].content)).toContain('what happened?');
  });
});

// ---- queued input ----------------------------------------------------------------------------

describe('queued input', () => {
  it('input sent while a tool runs reaches the model in the next request of the same query', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_slow', name: 'Bash', input: { command: 'cat gate.fifo' } }] },
        { content: [{ type: 'text', text: 'Done, and noted the second request.' }] },
      ],
    });
    const gate = makeGate('gate.fifo');
    await harness.startWorker();
    const { conversationId, inputUuid } = await start('first request');

    const fd = await waitForReader(gate);
    const queuedUuid = await harness.api.send(conversationId, 'also: second request');
    await eventually(
      () => harness.api.status(conversationId),
      (status) => status.queuedInputs === 1,
    );
    release(fd, 'slow output\n');

    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'Done, and noted the second request.', transitions: ['tool_use'] });
    expect(harness.model.requests).toHaveLength(2);
    const last = harness.model.requests[1].body.messages.at(-1);
    expect(last.role).toBe('user');
    expect(last.content.map((block: any) => block.type)).toEqual(['tool_result', 'text']);
    expect(last.content[0]).toMatchObject({ tool_use_id: 'toolu_slow', content: 'slow output' });
    expect(last.content[1].text).toBe('also: second request');
    expectValidApiOrder(harness.model.requests[1]);

    // The queued input was consumed by the running query: its result is that query's result.
    const queuedResult = await harness.api.waitForResult(conversationId, queuedUuid);
    expect(queuedResult.uuid).toBe(result.uuid);
    const status = await harness.api.status(conversationId);
    expect(status).toMatchObject({ queryCount: 1, queuedInputs: 0, phase: 'awaiting_input' });
    expect(harness.model.requests).toHaveLength(2); // no second query for it
  });
});

describe('abort with production heartbeat settings', () => {
  it('kills a running command promptly even with a 60 s heartbeat timeout', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo started > job.pid; sleep 20.125; touch finished' } }] },
        { content: [{ type: 'text', text: 'Stopped.' }] },
      ],
    });
    await harness.startWorker();
    const started = await harness.api.start({
      prompt: 'run it',
      config: harness.config({ toolHeartbeatTimeoutMs: 60_000 }),
      taskQueue: harness.taskQueue,
    });
    await eventually(
      async () => liveSleepers('20.125').length,
      (count) => count === 1,
    );
    await harness.api.abort(started.conversationId);
    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);

    expect(result.terminal_reason).toBe('aborted_tools');
    // Cancellation arrived before the command could finish: it never reached its last step.
    expect(liveSleepers('20.125')).toEqual([]);
    await expect(readFile(path.join(harness.workspace, 'finished'), 'utf8')).rejects.toThrow();
  });
});
