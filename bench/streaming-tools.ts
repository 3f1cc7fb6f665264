/**
 * Benchmark: streaming tool execution vs batch (seed §2.4).
 *
 *   npm run bench -- streaming-tools        (or: npx tsx bench/streaming-tools.ts [rounds])
 *
 * One query, two model turns. The first turn streams for about 1.5 s and asks, early in the
 * stream, for three concurrency-safe tools that each take about 300 ms (read-only Bash
 * `sleep 0.3; cat …`); the second turn answers. With streaming execution the tools run while
 * the model is still streaming; in batch mode they start after the stream ends. Everything is
 * real (dev server, worker, SDK, scripted model server on loopback); the measured figure is the
 * query's wall time from the client's start to its result, and the workflow's own duration_ms.
 * Results are appended to bench/results/streaming-tools.md.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, bundleWorkflowCode } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createActivities } from '../activities';
import { ConversationClient } from '../client/api';
import { startDevServer } from '../scripts/dev-server';
import { type Responder, startScriptedModelServer } from '../testing/scripted-model-server';
import { WORKFLOWS_PATH, createWorker } from '../worker/worker';

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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 7);
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const server = await startDevServer({ ephemeral: true, headless: true, log: () => undefined });
  const model = await startScriptedModelServer({ respond: responder });
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-bench-'));
  for (const name of ['a', 'b', 'c']) await writeFile(path.join(workspace, `${name}.txt`), `${name}\n`);
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: 'default' });
  const api = new ConversationClient(client);
  const taskQueue = `bench-${randomUUID()}`;
  const workerConnection = await NativeConnection.connect({ address: server.address });
  const worker = await createWorker({
    connection: workerConnection,
    namespace: 'default',
    taskQueue,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') }),
    activities: createActivities({
      anthropic: new Anthropic({ apiKey: 'bench', baseURL: model.url, maxRetries: 0 }),
      stateDir: `${workspace}-state`,
      temporalClient: client,
    }),
  });

  const samples: Record<'streaming' | 'batch', { wall: number[]; workflow: number[] }> = {
    streaming: { wall: [], workflow: [] },
    batch: { wall: [], workflow: [] },
  };
  await worker.runUntil(async () => {
    // One warm-up of each mode, then alternate so drift affects both equally.
    for (let round = -1; round < rounds; round++) {
      for (const mode of ['streaming', 'batch'] as const) {
        const startedAt = performance.now();
        const { conversationId, inputUuid } = await api.start({
          prompt: 'Read a.txt, b.txt and c.txt.',
          taskQueue,
          config: { cwd: workspace, streamingToolExecution: mode === 'streaming', oneShot: true },
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

  const row = (mode: 'streaming' | 'batch') =>
    `| ${mode} | ${rounds} | ${median(samples[mode].wall).toFixed(0)} | ${Math.min(...samples[mode].wall).toFixed(0)} | ${median(samples[mode].workflow).toFixed(0)} |`;
  const saved = median(samples.batch.wall) - median(samples.streaming.wall);
  const report = [
    `## ${new Date().toISOString()} — ${os.cpus().length} cores, node ${process.version}`,
    '',
    '| mode | rounds | median wall ms | min wall ms | median workflow duration_ms |',
    '| --- | --- | --- | --- | --- |',
    row('streaming'),
    row('batch'),
    '',
    `Streaming saved ${saved.toFixed(0)} ms per query (median wall), with three 300 ms tools in a ~1.5 s stream.`,
    '',
  ].join('\n');
  console.log(report);
  const resultsDir = path.join(__dirname, 'results');
  await mkdir(resultsDir, { recursive: true });
  await appendFile(path.join(resultsDir, 'streaming-tools.md'), `${report}\n`);

  await workerConnection.close();
  await connection.close();
  await model.close();
  await server.stop();
  await rm(workspace, { recursive: true, force: true });
  await rm(`${workspace}-state`, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
