/**
 * Benchmark: streaming tool execution vs batch (seed §2.4).
 *
 *   npm run bench [-- [rounds] [--note TEXT]]        (or: npx tsx bench/streaming-tools.ts [rounds])
 *
 * One query, two model turns. The first turn streams for about 1.5 s and asks, early in the
 * stream, for three concurrency-safe tools that each take about 300 ms (read-only Bash
 * `sleep 0.3; cat …`); the second turn answers. With streaming execution the tools run while
 * the model is still streaming; in batch mode they start after the stream ends. Everything is
 * real (dev server, worker, SDK, scripted model server on loopback); the measured figure is the
 * query's wall time from the client's start to its result, and the workflow's own duration_ms.
 * Results are appended to bench/results/streaming-tools.md.
 */
import { type Responder } from '../testing/scripted-model-server';
import { BENCH_PERMISSIONS, benchArgs, markdownTable, median, publishResults, runBench, runContext, withBenchStack } from './support';

const STREAM_FRAMES_TARGET_MS = 1_500;
const DELTA_DELAY_MS = 25;
const TRAILING_TEXT = 'Reading the three files in parallel while I keep explaining what I am going to do with them. '.repeat(6);

const responder: Responder = (request) => {
  const turn = request.body.messages.filter((message: { role: string }) => message.role === 'assistant').length;
  if (turn > 0) return { content: [{ type: 'text', text: 'All three read.' }] };
  return {
    deltaDelayMs: DELTA_DELAY_MS,
    // ~60 frames × 25 ms ≈ 1.5 s: three tool_use blocks first, then text that keeps streaming.
    chunkSize: Math.ceil(TRAILING_TEXT.length / (STREAM_FRAMES_TARGET_MS / DELTA_DELAY_MS - 20)),
    content: [
      { type: 'tool_use', name: 'Bash', input: { command: 'sleep 0.3; cat a.txt' } },
      { type: 'tool_use', name: 'Bash', input: { command: 'sleep 0.3; cat b.txt' } },
      { type: 'tool_use', name: 'Bash', input: { command: 'sleep 0.3; cat c.txt' } },
      { type: 'text', text: TRAILING_TEXT },
    ],
  };
};

async function main(): Promise<void> {
  const { positionals, note } = benchArgs();
  const rounds = Number(positionals[0] ?? 7);
  const context = runContext();
  const files = { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' };
  const samples: Record<'streaming' | 'batch', { wall: number[]; workflow: number[] }> = {
    streaming: { wall: [], workflow: [] },
    batch: { wall: [], workflow: [] },
  };
  await withBenchStack({ respond: responder, files }, async ({ api, taskQueue, workspace }) => {
    // One warm-up of each mode, then alternate so drift affects both equally.
    for (let round = -1; round < rounds; round++) {
      for (const mode of ['streaming', 'batch'] as const) {
        const startedAt = performance.now();
        const { conversationId, inputUuid } = await api.start({
          prompt: 'Read a.txt, b.txt and c.txt.',
          taskQueue,
          config: { cwd: workspace, streamingToolExecution: mode === 'streaming', oneShot: true, permissions: BENCH_PERMISSIONS },
        });
        const result = await api.waitForResult(conversationId, inputUuid!, { pollMs: 20 });
        const wall = performance.now() - startedAt;
        if (result.is_error) throw new Error(`${mode} run failed: ${result.result}`);
        if (round >= 0) {
          samples[mode].wall.push(wall);
          samples[mode].workflow.push(result.duration_ms);
        }
      }
    }
  });

  const row = (mode: 'streaming' | 'batch') => [
    mode,
    rounds,
    median(samples[mode].wall).toFixed(0),
    Math.min(...samples[mode].wall).toFixed(0),
    median(samples[mode].workflow).toFixed(0),
  ];
  const saved = median(samples.batch.wall) - median(samples.streaming.wall);
  await publishResults('streaming-tools', {
    title: 'streaming vs batch tool execution',
    context,
    note,
    body: [
      markdownTable(['mode', 'rounds', 'median wall ms', 'min wall ms', 'median workflow duration_ms'], [row('streaming'), row('batch')]),
      '',
      `Streaming saved ${saved.toFixed(0)} ms per query (median wall), with three 300 ms tools in a ~1.5 s stream.`,
    ],
  });
}

runBench(main);
