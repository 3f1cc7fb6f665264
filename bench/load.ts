/**
 * Benchmark: many concurrent conversations on one worker, then on two workers with one SIGKILLed.
 *
 *   npx tsx bench/load.ts [conversations] [iterations] [--profiles sdk-defaults,tuned] [--phases single,kill] [--server dev|postgres] [--note TEXT]
 *   (defaults: 100 conversations × 20 iterations, both profiles, both phases, the CLI's dev server)
 *
 * `--server postgres` runs it on the PostgreSQL stack (infra/postgres-stack.ts: the Temporal server on PostgreSQL
 * with SQL visibility, fsync on) instead of the in-memory dev server.
 *
 * Each conversation is a one-shot query of I iterations against an instant scripted model: in
 * iteration i the model asks for `Read r<i>.txt` (even i; a local activity) or
 * `Bash echo <i> >> bash.log` (odd i; a journaled, mutating activity), then answers with text.
 * Workers are child processes (bench/load-worker.ts: the project's worker with a pre-built bundle
 * and the tuning variables of worker/tuning.ts), so their memory can be read and they can be killed.
 *
 * - single: all conversations at once on one worker, once per tuning profile: throughput
 *   (iterations/s), per-iteration time p50/p99 (between a conversation's consecutive model
 *   requests, as the model server received them: one model call + one tool + the dispatches
 *   between), the worker's peak RSS and CPU seconds.
 * - kill: the same on two workers (profile `tuned`), each Bash a `sleep 0.3; echo`; when half of
 *   all model requests have arrived, one worker gets SIGKILL. Checked: every conversation completes, and no Bash line was
 *   written twice (each conversation's bash.log has each odd i at most once). Interrupted Bash
 *   calls come back as "may have partly run" errors (the tool journal), counted.
 *
 * Results are appended to bench/results/load.md.
 */
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConversationClient } from '../client/api';
import { startDevServer } from '../infra/dev-server';
import { startPostgresStack } from '../infra/postgres-stack';
import { type RecordedRequest, startScriptedModelServer } from '../testing/scripted-model-server';
import { WORKFLOWS_PATH } from '../worker/worker';
import { BENCH_PERMISSIONS, markdownTable, median, percentile, progress, publishResults, runBench, runContext } from './support';

const REPO_ROOT = path.resolve(__dirname, '..');

/** Tuning profiles: environment variables of worker/tuning.ts. */
const PROFILES: Record<string, Record<string, string>> = {
  'sdk-defaults': {},
  // docs/deployment.md, "Worker tuning": the cache sized for every open conversation (not derived
  // from the heap), activity slots bounded to what 2 cores run at once (each Bash is a process),
  // fewer idle long-polls.
  tuned: {
    DURABLE_AGENT_MAX_CACHED_WORKFLOWS: '1000',
    DURABLE_AGENT_MAX_CONCURRENT_ACTIVITIES: '20',
    DURABLE_AGENT_WORKFLOW_TASK_POLLERS: '4',
    DURABLE_AGENT_ACTIVITY_TASK_POLLERS: '4',
  },
};

interface WorkerProcess {
  child: ChildProcess;
  identity: string;
  /** Peak RSS (VmHWM) and CPU seconds, last read from /proc. */
  peakRssBytes: number;
  cpuSeconds: number;
  sampler: NodeJS.Timeout;
}

interface PhaseResult {
  label: string;
  wallMs: number;
  iterationMs: number[];
  completed: number;
  failed: string[];
  workers: WorkerProcess[];
  duplicateBashLines: number;
  missingBashLines: number;
  interruptedToolResults: number;
  modelRequests: number;
  killedAtRequests?: number;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    options: { profiles: { type: 'string' }, phases: { type: 'string' }, server: { type: 'string' }, note: { type: 'string' } },
    allowPositionals: true,
  });
  const conversations = Number(positionals[0] ?? 100);
  const iterations = Number(positionals[1] ?? 20);
  if (![conversations, iterations].every((value) => Number.isInteger(value) && value > 0)) {
    throw new Error(`conversations and iterations must be positive integers: ${positionals.join(' ')}`);
  }
  const profiles = (values.profiles ?? 'sdk-defaults,tuned').split(',');
  for (const profile of profiles) if (!PROFILES[profile]) throw new Error(`unknown profile ${profile}: ${Object.keys(PROFILES).join(', ')}`);
  const phases = (values.phases ?? 'single,kill').split(',');
  const serverKind = values.server ?? 'dev';
  if (serverKind !== 'dev' && serverKind !== 'postgres') throw new Error(`--server must be dev or postgres: ${serverKind}`);
  const context = runContext();

  const cleanups: Array<() => Promise<unknown>> = [];
  const results: PhaseResult[] = [];
  try {
    const root = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-load-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    let server: { address: string; stop(): Promise<void> };
    if (serverKind === 'postgres') {
      // PostgreSQL runs as its own user when we are root: it must reach the state directory.
      const stateDir = path.join(root, 'postgres-stack');
      await mkdir(stateDir, { mode: 0o755 });
      await chmod(root, 0o755);
      server = await startPostgresStack({ stateDir, log: (line) => progress(`[postgres-stack] ${line}`) });
    } else {
      server = await startDevServer({ ephemeral: true, headless: true, log: () => undefined });
    }
    cleanups.push(() => server.stop());
    const bundlePath = path.join(root, 'workflow-bundle.js');
    await writeFile(bundlePath, (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') })).code);
    const connection = await Connection.connect({ address: server.address });
    cleanups.push(() => connection.close());
    const api = new ConversationClient(new Client({ connection, namespace: 'default' }));

    const run = async (label: string, profile: string, workerCount: number, killHalfway: boolean): Promise<PhaseResult> => {
      const phaseRoot = path.join(root, label.replace(/\W+/g, '-'));
      const stateDir = path.join(phaseRoot, 'state');
      const taskQueue = `load-${randomUUID()}`;
      const requestsByConversation = new Map<string, number[]>();
      // In the kill phase each command takes a moment, so the SIGKILL finds some of them running.
      const bashPrefix = killHalfway ? 'sleep 0.3; ' : '';
      let modelRequests = 0;
      const model = await startScriptedModelServer({
        respond: (request) => {
          modelRequests++;
          const key = conversationKey(request);
          const times = requestsByConversation.get(key) ?? [];
          times.push(request.receivedAt);
          requestsByConversation.set(key, times);
          const done = countToolResults(request);
          if (done >= iterations) return { content: [{ type: 'text', text: `Done with ${key}.` }] };
          return done % 2 === 0
            ? { content: [{ type: 'tool_use', name: 'Read', input: { file_path: `r${done}.txt` } }] }
            : { content: [{ type: 'tool_use', name: 'Bash', input: { command: `${bashPrefix}echo ${done} >> bash.log` } }] };
        },
      });
      const workers: WorkerProcess[] = [];
      try {
        for (let index = 0; index < conversations; index++) {
          const directory = path.join(phaseRoot, `c${index}`);
          await mkdir(directory, { recursive: true });
          for (let iteration = 0; iteration < iterations; iteration += 2)
            await writeFile(path.join(directory, `r${iteration}.txt`), `file ${iteration} of c${index}\n`);
        }
        for (let index = 0; index < workerCount; index++) {
          workers.push(
            await spawnWorker({ address: server.address, taskQueue, stateDir, modelUrl: model.url, bundlePath, profile, identity: `${label}-worker-${index}` }),
          );
        }
        progress(`${label}: ${conversations} conversations × ${iterations} iterations on ${workerCount} worker(s), profile ${profile}`);
        const startedAt = performance.now();
        const started = await Promise.all(
          Array.from({ length: conversations }, (_, index) =>
            api.start({
              prompt: `Load task c${index}: ${iterations} steps.`,
              taskQueue,
              config: {
                cwd: path.join(phaseRoot, `c${index}`),
                oneShot: true,
                maxTurns: iterations + 5,
                permissions: BENCH_PERMISSIONS,
                // Recovery after the SIGKILL waits for these; the defaults are 30 s.
                modelHeartbeatTimeoutMs: 10_000,
                toolHeartbeatTimeoutMs: 10_000,
              },
            }),
          ),
        );
        let killedAtRequests: number | undefined;
        const expectedRequests = conversations * (iterations + 1);
        const killer = killHalfway
          ? setInterval(() => {
              if (killedAtRequests === undefined && modelRequests >= expectedRequests / 2) {
                killedAtRequests = modelRequests;
                progress(`${label}: SIGKILL ${workers[0].identity} after ${modelRequests} of ${expectedRequests} model requests`);
                workers[0].child.kill('SIGKILL');
              }
            }, 50)
          : undefined;
        let completed = 0;
        const failed: string[] = [];
        const report = setInterval(() => progress(`${label}: ${completed}/${conversations} done, ${modelRequests} model requests`), 10_000);
        await Promise.all(
          started.map(async ({ conversationId }) => {
            const summary = await api.summary(conversationId);
            if (summary.lastResult && !summary.lastResult.is_error) completed++;
            else failed.push(`${conversationId}: ${summary.lastResult?.subtype ?? summary.endedBy}: ${summary.lastResult?.result.slice(0, 200)}`);
          }),
        );
        const wallMs = performance.now() - startedAt;
        clearInterval(report);
        if (killer) clearInterval(killer);
        for (const worker of workers) sampleWorker(worker);

        // Once-only: each odd iteration's line at most once in its conversation's bash.log.
        let duplicateBashLines = 0;
        let missingBashLines = 0;
        for (let index = 0; index < conversations; index++) {
          const lines = (await readFile(path.join(phaseRoot, `c${index}`, 'bash.log'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
          const seen = new Set<string>();
          for (const line of lines) {
            if (seen.has(line)) duplicateBashLines++;
            seen.add(line);
          }
          for (let iteration = 1; iteration < iterations; iteration += 2) if (!seen.has(String(iteration))) missingBashLines++;
        }
        const iterationMs: number[] = [];
        for (const times of requestsByConversation.values())
          for (let index = 1; index < times.length; index++) iterationMs.push(times[index] - times[index - 1]);
        const interruptedToolResults = countInterrupted(model.requests);
        return {
          label,
          wallMs,
          iterationMs,
          completed,
          failed,
          workers,
          duplicateBashLines,
          missingBashLines,
          interruptedToolResults,
          modelRequests,
          killedAtRequests,
        };
      } finally {
        for (const worker of workers) {
          clearInterval(worker.sampler);
          if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
        }
        await model.close();
      }
    };

    if (phases.includes('single')) {
      for (const profile of profiles) results.push(await run(`one worker, ${profile}`, profile, 1, false));
    }
    if (phases.includes('kill')) results.push(await run('two workers, one SIGKILLed halfway (tuned)', 'tuned', 2, true));
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }

  const rows = results.map((result) => [
    result.label,
    `${result.completed}/${conversations}`,
    (result.wallMs / 1000).toFixed(1),
    ((conversations * iterations) / (result.wallMs / 1000)).toFixed(1),
    median(result.iterationMs).toFixed(0),
    percentile(result.iterationMs, 99).toFixed(0),
    result.workers.map((worker) => `${(worker.peakRssBytes / 1e6).toFixed(0)}`).join(' / '),
    result.workers.map((worker) => worker.cpuSeconds.toFixed(1)).join(' / '),
    result.modelRequests,
    result.duplicateBashLines,
    result.missingBashLines,
    result.interruptedToolResults,
  ]);
  const body = [
    `Server: ${serverKind === 'postgres' ? 'the PostgreSQL stack (Temporal server 1.31.0 on PostgreSQL, SQL visibility; `durable-agent server --postgres`)' : 'the CLI dev server (in memory)'}.`,
    '',
    `${conversations} conversations × ${iterations} iterations, all started at once. Profiles (worker/tuning.ts variables): ` +
      Object.entries(PROFILES)
        .map(
          ([name, variables]) =>
            `**${name}** ${
              Object.keys(variables).length
                ? Object.entries(variables)
                    .map(([key, value]) => `${key}=${value}`)
                    .join(' ')
                : '(none set)'
            }`,
        )
        .join('; '),
    '',
    markdownTable(
      [
        'phase',
        'completed',
        'wall s',
        'iterations / s',
        'iteration p50 ms',
        'iteration p99 ms',
        'worker peak RSS MB',
        'worker CPU s',
        'model requests',
        'Bash lines written twice',
        'Bash lines missing',
        'interrupted tool results',
      ],
      rows,
    ),
    '',
    `Iteration = time between a conversation's consecutive model requests as the scripted model server received them ` +
      `(model answers instantly; one tool — a local-activity Read or a Bash \`echo\` — and the dispatches between). ` +
      `Expected model requests without faults: ${conversations * (iterations + 1)}. In the kill phase each Bash is \`sleep 0.3; echo …\`.` +
      results
        .filter((result) => result.killedAtRequests !== undefined)
        .map((result) => ` Kill phase: SIGKILL after ${result.killedAtRequests} model requests.`)
        .join(''),
    ...results.flatMap((result) =>
      result.failed.length ? ['', `Failed in "${result.label}":`, ...result.failed.slice(0, 10).map((line) => `- ${line}`)] : [],
    ),
  ];
  await publishResults('load', { title: `load: ${conversations} conversations × ${iterations} iterations`, context, note: values.note, body });
  if (results.some((result) => result.failed.length > 0 || result.duplicateBashLines > 0)) process.exitCode = 1;
}

async function spawnWorker(options: {
  address: string;
  taskQueue: string;
  stateDir: string;
  modelUrl: string;
  bundlePath: string;
  profile: string;
  identity: string;
}): Promise<WorkerProcess> {
  // `node --import tsx` (not the tsx CLI, which forks a second node): the pid is the worker's own.
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bench', 'load-worker.ts')], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...PROFILES[options.profile],
      TEMPORAL_ADDRESS: options.address,
      DURABLE_AGENT_TASK_QUEUE: options.taskQueue,
      DURABLE_AGENT_STATE_DIR: options.stateDir,
      ANTHROPIC_BASE_URL: options.modelUrl,
      LOAD_WORKFLOW_BUNDLE: options.bundlePath,
      LOAD_WORKER_IDENTITY: options.identity,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (chunk) => {
    output += chunk;
    if (output.length > 20_000) output = output.slice(-10_000);
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start:\n${output}`)), 120_000);
    child.stdout!.on('data', (chunk) => {
      if (String(chunk).includes('ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code}:\n${output}`));
    });
  });
  child.removeAllListeners('exit');
  const worker: WorkerProcess = { child, identity: options.identity, peakRssBytes: 0, cpuSeconds: 0, sampler: undefined as unknown as NodeJS.Timeout };
  worker.sampler = setInterval(() => sampleWorker(worker), 500);
  return worker;
}

/** Peak RSS (VmHWM) and CPU time (utime + stime) from /proc, while the process lives. */
function sampleWorker(worker: WorkerProcess): void {
  const pid = worker.child.pid;
  if (pid === undefined || worker.child.exitCode !== null || worker.child.signalCode !== null) return;
  void Promise.all([readFile(`/proc/${pid}/status`, 'utf8'), readFile(`/proc/${pid}/stat`, 'utf8')])
    .then(([status, stat]) => {
      const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
      if (hwm) worker.peakRssBytes = Math.max(worker.peakRssBytes, Number(hwm[1]) * 1024);
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      worker.cpuSeconds = (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
    })
    .catch(() => undefined);
}

/** The conversation a request belongs to: `c<k>` from its first user message. */
function conversationKey(request: RecordedRequest): string {
  const first = request.body.messages?.[0];
  const text = typeof first?.content === 'string' ? first.content : JSON.stringify(first?.content ?? '');
  return /Load task (c\d+)/.exec(text)?.[1] ?? 'unknown';
}

function countToolResults(request: RecordedRequest): number {
  let count = 0;
  for (const message of request.body.messages ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) if (block.type === 'tool_result') count++;
  }
  return count;
}

/** Tool results that say the call was interrupted (the journal's "may have partly run"), in each conversation's last request. */
function countInterrupted(requests: RecordedRequest[]): number {
  const last = new Map<string, RecordedRequest>();
  for (const request of requests) last.set(conversationKey(request), request);
  let count = 0;
  for (const request of last.values()) {
    for (const message of request.body.messages ?? []) {
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content) {
        if (block.type === 'tool_result' && block.is_error && /partly run|may have/i.test(JSON.stringify(block.content))) count++;
      }
    }
  }
  return count;
}

runBench(main);
