/**
 * Benchmark: the live channel (issue 10) — how long a text delta takes from the model server to a
 * reader's screen, and what streaming costs in history.
 *
 *   npx tsx bench/live-stream.ts [TURNS] [--note TEXT]
 *
 * One one-shot query of TURNS model calls (default 6): each streams a 1600-character text block
 * in 16-character deltas, one every 50 ms (320 characters/s, about a real model's pace), then
 * asks to `Read` a small file; the last call answers with text only. It runs three times:
 *  - streaming on, one reader (`readLive`, what `ask`/`--follow`/chat use) printing to a sink;
 *  - streaming on, no reader (publishing alone);
 *  - streaming off (`liveStream: false`: the events feed only, as before issue 10).
 * Latency: for every delta, the time from the scripted server writing its SSE frame to the reader
 * having written its last character (same process, same clock). History: protobuf bytes of every
 * run's `History`, as in bench/history-growth.ts. Results are appended to bench/results/live-stream.md.
 */
import { readLive } from '../client/live';
import { LiveView } from '../client/live-view';
import type { Responder } from '../testing/scripted-model-server';
import {
  type BenchStack,
  benchArgs,
  formatBytes,
  markdownTable,
  median,
  percentile,
  progress,
  publishResults,
  runBench,
  runContext,
  summarizeHistory,
  withBenchStack,
  BENCH_PERMISSIONS,
} from './support';

const TEXT_CHARS = 1600;
const CHUNK = 16;
const DELTA_DELAY_MS = 50;

/** The delta stream as the server sent it: cumulative characters and when. */
const sent: Array<{ upTo: number; at: number }> = [];
let sentChars = 0;

function turnText(index: number): string {
  const words = `turn ${index} streams words at a model's pace so a reader can watch them arrive `;
  return words.repeat(Math.ceil(TEXT_CHARS / words.length)).slice(0, TEXT_CHARS);
}

function toolResults(body: { messages?: Array<{ content: unknown }> }): number {
  let count = 0;
  for (const message of body.messages ?? []) {
    if (Array.isArray(message.content)) for (const block of message.content) if ((block as { type?: string }).type === 'tool_result') count++;
  }
  return count;
}

let turns = 6;
const respond: Responder = (request) => {
  const done = toolResults(request.body);
  const text = turnText(done);
  const onTextDelta = (delta: string, at: number) => {
    sentChars += delta.length;
    sent.push({ upTo: sentChars, at });
  };
  const content =
    done < turns - 1
      ? [
          { type: 'text' as const, text },
          { type: 'tool_use' as const, name: 'Read', input: { file_path: 'notes.txt' } },
        ]
      : [{ type: 'text' as const, text }];
  return { content, chunkSize: CHUNK, deltaDelayMs: DELTA_DELAY_MS, onTextDelta };
};

interface Run {
  label: string;
  latencies: number[];
  bytes: number;
  events: number;
  signals: number;
  updates: number;
  runs: number;
  wallMs: number;
  resultOk: boolean;
}

async function runOnce(stack: BenchStack, label: string, liveStream: boolean, withReader: boolean): Promise<Run> {
  sent.length = 0;
  sentChars = 0;
  const startedAt = performance.now();
  const { conversationId, handle } = await stack.api.start({
    prompt: 'Stream a few answers.',
    taskQueue: stack.taskQueue,
    config: { cwd: stack.workspace, oneShot: true, maxTurns: turns + 5, liveStream, permissions: BENCH_PERMISSIONS },
  });
  const latencies: number[] = [];
  const reading = withReader
    ? (async () => {
        const view = new LiveView();
        let shown = 0;
        let sink = '';
        for await (const entry of readLive(stack.client, conversationId)) {
          for (const op of view.apply(entry)) {
            if (op.op !== 'text') continue;
            sink += op.text; // the "terminal"
            shown += op.text.replace(/^\n\n/, '').length;
            const now = Date.now();
            // Every delta the server had sent up to what is now on screen gets its latency.
            while (latencies.length < sent.length && sent[latencies.length].upTo <= shown) latencies.push(now - sent[latencies.length].at);
          }
        }
        return sink.length;
      })()
    : Promise.resolve(0);
  const summary = await stack.api.summary(conversationId);
  await reading;
  const wallMs = performance.now() - startedAt;
  const history = await summarizeHistory(stack.client, conversationId, handle.firstExecutionRunId);
  return {
    label,
    latencies,
    bytes: history.bytes,
    events: history.events,
    signals: history.eventCounts.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED ?? 0,
    updates: history.eventCounts.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED ?? 0,
    runs: history.runs,
    wallMs,
    resultOk: summary.lastResult?.is_error === false,
  };
}

async function main(): Promise<void> {
  const { positionals, note } = benchArgs();
  turns = positionals[0] ? Number(positionals[0]) : turns;
  if (!Number.isInteger(turns) || turns < 1) throw new Error(`TURNS must be a positive integer: ${positionals[0]}`);
  const context = runContext();
  const runs: Run[] = [];
  await withBenchStack({ respond, files: { 'notes.txt': 'a small file\n' } }, async (stack) => {
    for (const [label, live, reader] of [
      ['streaming on, 1 reader', true, true],
      ['streaming on, no reader', true, false],
      ['streaming off', false, false],
    ] as const) {
      progress(`${label}: running…`);
      const run = await runOnce(stack, label, live, reader);
      progress(`${label}: ${formatBytes(run.bytes)}, ${run.signals} signals, ${(run.wallMs / 1000).toFixed(1)} s`);
      runs.push(run);
    }
  });
  const off = runs.find((run) => run.label === 'streaming off')!;
  const streamedChars = turns * TEXT_CHARS;
  await publishResults('live-stream', {
    title: 'live channel: delta latency and history cost',
    context,
    note,
    body: [
      `${turns} model calls × ${TEXT_CHARS} characters of text (${streamedChars} in all), ${CHUNK}-character deltas every ${DELTA_DELAY_MS} ms; publisher batches: first after 50 ms, then every 200 ms.`,
      '',
      markdownTable(
        [
          'run',
          'result ok',
          'deltas timed',
          'latency median ms',
          'latency p99 ms',
          'latency max ms',
          'history bytes',
          'vs off',
          'extra bytes / streamed char',
          'signals',
          'poll updates',
          'events',
          'runs',
          'wall s',
        ],
        runs.map((run) => [
          run.label,
          run.resultOk ? 'yes' : 'NO',
          run.latencies.length || '–',
          run.latencies.length ? median(run.latencies).toFixed(0) : '–',
          run.latencies.length ? percentile(run.latencies, 99).toFixed(0) : '–',
          run.latencies.length ? Math.max(...run.latencies).toFixed(0) : '–',
          `${formatBytes(run.bytes)} (${run.bytes})`,
          `${(run.bytes / off.bytes).toFixed(2)}×`,
          ((run.bytes - off.bytes) / streamedChars).toFixed(2),
          run.signals,
          run.updates,
          run.events,
          run.runs,
          (run.wallMs / 1000).toFixed(1),
        ]),
      ),
      '',
      "Latency: scripted server writes the SSE frame → the reader (`readLive` + `LiveView`, the code `ask` and chat print with) has the delta's last character; one process, one clock. " +
        "It includes the publisher's batching wait (≤ 200 ms by design), the signal, the workflow task, and the long-poll update's answer. " +
        'Signals: one per published batch. Poll updates: each long-poll a reader makes is an accepted + completed update in history.',
    ],
  });
}

runBench(main);
