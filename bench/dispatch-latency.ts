/**
 * Benchmark: what one orchestration hop costs on the dev server, under several server and worker settings.
 *
 *   npm run bench:dispatch                  (or: npx tsx bench/dispatch-latency.ts [rounds] [hops])
 *
 * A workflow awaits `hops` (default 50) no-op activities in sequence; each activity returns the worker's clock, so
 * every hop (activity completion → workflow task → next activity task → activity start) is visible. Each
 * combination runs once to warm up, then `rounds` (default 3) times on a fresh workflow; the table gives medians
 * over the rounds. Server settings are passed as dynamic config to `startDevServer` (one server per server
 * setting, so they cannot leak into each other); worker settings go to `Worker.create`. Everything is real:
 * dev server, worker, client. Results are appended to bench/results/dispatch-latency.md.
 *
 * This is what chose the dev server settings in infra/dev-server.ts (DEV_SERVER_DYNAMIC_CONFIG) and kept the worker
 * at the SDK defaults (worker/worker.ts).
 */
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, type WorkerOptions, bundleWorkflowCode } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { appendFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEV_SERVER_DYNAMIC_CONFIG, type DynamicConfigValue, startDevServer } from '../infra/dev-server';
import { cliVersion } from '../infra/temporal-cli';
import type { DispatchLatencyActivities } from './workflows/dispatch-latency';

/** The server's own defaults (Temporal server 1.29.1 in CLI 1.5.1) for what DEV_SERVER_DYNAMIC_CONFIG or this
 *  benchmark changes, to measure an untuned server. */
const SERVER_DEFAULTS = {
  'history.transferProcessorMaxPollRPS': 20,
  'matching.numTaskqueueReadPartitions': 4,
  'matching.numTaskqueueWritePartitions': 4,
  'system.enableActivityEagerExecution': false,
} as const;

const ONE_PARTITION = { 'matching.numTaskqueueReadPartitions': 1, 'matching.numTaskqueueWritePartitions': 1 } as const;

interface ServerSetting {
  name: string;
  /** Laid over DEV_SERVER_DYNAMIC_CONFIG. */
  dynamicConfig: Record<string, DynamicConfigValue>;
  /** Run every worker setting on this server, not only the SDK defaults. */
  allWorkerSettings?: boolean;
}

const SERVER_SETTINGS: ServerSetting[] = [
  { name: 'server defaults', dynamicConfig: SERVER_DEFAULTS, allWorkerSettings: true },
  { name: 'forwarder unthrottled', dynamicConfig: { ...SERVER_DEFAULTS, 'matching.forwarderMaxRatePerSecond': 10_000 } },
  { name: '1 partition', dynamicConfig: { ...SERVER_DEFAULTS, ...ONE_PARTITION } },
  { name: 'eager activities', dynamicConfig: { ...SERVER_DEFAULTS, 'system.enableActivityEagerExecution': true } },
  { name: 'transfer queue 1000/s', dynamicConfig: { ...SERVER_DEFAULTS, 'history.transferProcessorMaxPollRPS': 1000 } },
  { name: 'project dev server (DEV_SERVER_DYNAMIC_CONFIG: transfer queue 1000/s + eager activities)', dynamicConfig: {}, allWorkerSettings: true },
  { name: 'project dev server + 1 partition', dynamicConfig: ONE_PARTITION },
];

interface WorkerSetting {
  name: string;
  options: Partial<WorkerOptions>;
  /** Shown only on servers with `allWorkerSettings`. */
  extra?: boolean;
}

const WORKER_SETTINGS: WorkerSetting[] = [
  { name: 'SDK defaults', options: {} },
  { name: 'maxConcurrentActivityTaskPolls 2', options: { maxConcurrentActivityTaskPolls: 2 }, extra: true },
  { name: 'maxConcurrentActivityTaskPolls 20', options: { maxConcurrentActivityTaskPolls: 20 }, extra: true },
  {
    name: 'autoscaling pollers (workflow + activity)',
    options: { workflowTaskPollerBehavior: { type: 'autoscaling' }, activityTaskPollerBehavior: { type: 'autoscaling' } },
    extra: true,
  },
  { name: 'nonStickyToStickyPollRatio 1', options: { nonStickyToStickyPollRatio: 1 }, extra: true },
  { name: 'no sticky queue (maxCachedWorkflows 0)', options: { maxCachedWorkflows: 0 }, extra: true },
  { name: 'no eager reservations (maxEager… 0)', options: { maxEagerActivityReservationsPerWorkflowTask: 0 }, extra: true },
];

interface Sample {
  wallMs: number;
  msPerHop: number;
  firstDozenMedianMs: number;
  restMedianMs: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const activities: DispatchLatencyActivities = { noop: async () => Date.now() };

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3);
  const hops = Number(process.argv[3] ?? 50);
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('./workflows/dispatch-latency'),
    logger: new DefaultLogger('WARN'),
  });

  const sections: string[] = [];
  let cli = '?';
  for (const serverSetting of SERVER_SETTINGS) {
    const server = await startDevServer({ ephemeral: true, headless: true, log: () => undefined, dynamicConfig: serverSetting.dynamicConfig });
    cli = cliVersion(server.cliPath) ?? server.cliPath;
    const connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection, namespace: 'default' });
    const workerConnection = await NativeConnection.connect({ address: server.address });
    const rows: string[] = [];
    try {
      for (const workerSetting of WORKER_SETTINGS) {
        if (workerSetting.extra && !serverSetting.allWorkerSettings) continue;
        const taskQueue = `dispatch-${randomUUID()}`;
        const worker = await Worker.create({
          connection: workerConnection,
          namespace: 'default',
          taskQueue,
          workflowBundle,
          activities,
          ...workerSetting.options,
        });
        const samples: Sample[] = [];
        await worker.runUntil(async () => {
          for (let round = -1; round < rounds; round++) {
            const startedAt = performance.now();
            const ranAt = await client.workflow.execute('dispatchLatencyWorkflow', {
              taskQueue,
              workflowId: `dispatch-${randomUUID()}`,
              args: [hops],
            });
            const wallMs = performance.now() - startedAt;
            if (round < 0) continue; // warm-up
            const gaps = ranAt.slice(1).map((at: number, index: number) => at - ranAt[index]);
            samples.push({
              wallMs,
              msPerHop: (ranAt[ranAt.length - 1] - ranAt[0]) / (ranAt.length - 1),
              firstDozenMedianMs: median(gaps.slice(0, 12)),
              restMedianMs: median(gaps.slice(12)),
            });
          }
        });
        const row =
          `| ${workerSetting.name} | ${median(samples.map((s) => s.wallMs)).toFixed(0)} ` +
          `| ${median(samples.map((s) => s.msPerHop)).toFixed(1)} ` +
          `| ${median(samples.map((s) => s.firstDozenMedianMs)).toFixed(1)} ` +
          `| ${median(samples.map((s) => s.restMedianMs)).toFixed(1)} ` +
          `| ${samples.map((s) => s.msPerHop.toFixed(1)).join(', ')} |`;
        console.log(`${serverSetting.name} / ${row}`);
        rows.push(row);
      }
    } finally {
      await workerConnection.close();
      await connection.close();
      await server.stop();
    }
    const effective: Record<string, DynamicConfigValue> = { ...DEV_SERVER_DYNAMIC_CONFIG, ...serverSetting.dynamicConfig };
    const config = [...new Set([...Object.keys(SERVER_DEFAULTS), ...Object.keys(serverSetting.dynamicConfig)])]
      .map((key) => `${key}=${JSON.stringify(effective[key])}`)
      .join(' ');
    sections.push(
      [
        `### Server: ${serverSetting.name}`,
        '',
        `\`${config}\``,
        '',
        `| worker | median wall ms (${hops} hops) | median ms/hop | median of hops 1–12 | median of hops 13–${hops - 1} | ms/hop per round |`,
        '| --- | --- | --- | --- | --- | --- |',
        ...rows,
        '',
      ].join('\n'),
    );
  }

  const report = [
    `## ${new Date().toISOString()} — ${os.cpus().length} cores, node ${process.version}, ${cli}`,
    '',
    `Command: \`npx tsx bench/dispatch-latency.ts ${rounds} ${hops}\` (${rounds} rounds after one warm-up; medians over the rounds).`,
    '',
    ...sections,
  ].join('\n');
  console.log(`\n${report}`);
  const resultsDir = path.join(__dirname, 'results');
  await mkdir(resultsDir, { recursive: true });
  await appendFile(path.join(resultsDir, 'dispatch-latency.md'), `${report}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
