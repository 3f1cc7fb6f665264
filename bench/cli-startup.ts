/**
 * CLI start-up and a one-shot `-p` end to end, side by side with Claude Code (issue 32): wall-clock time of
 * `durable-agent --version`, `--help`, `list`, `status <id>` and `-p "<task>"` — each the median of N runs (default 5)
 * of a fresh process, as a person types them — next to `claude --version`, `claude --help` and `claude -p "<task>"`
 * on the same task against the same scripted model server. Also the worker's start: time from `durable-agent worker`
 * to its "polling" line with an empty state directory (it bundles the workflow code) and again with the bundle
 * cached there.
 *
 * The stack is real: an ephemeral Temporal dev server, the scripted model server (testing/) on loopback, and
 * `durable-agent worker` as its own process. The task: "read a.txt, then b.txt, then answer" — 3 model calls for
 * both clients (Claude Code's side requests without tools, if any, get a one-word answer and are counted apart).
 *
 *   npm run bench:cli-startup [-- --runs 5] [--bin <other checkout>/bin/durable-agent.js] [--note TEXT]
 *
 * Claude Code: CLAUDE_CODE_BIN, else ~/.cache/durable-agent/claude-code/node_modules/.bin/claude
 * (`npm install --prefix ~/.cache/durable-agent/claude-code @anthropic-ai/claude-code`), else `claude` on PATH;
 * without one its rows say so. `--bin` measures another checkout's binary (e.g. the tsx-run one before issue 32).
 * Results: bench/results/cli-startup-<date>.md.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startDevServer } from '../infra/dev-server';
import { type Responder, startScriptedModelServer } from '../testing/scripted-model-server';
import { countToolResults } from './read-files';
import { markdownTable, median, progress, publishResults, runBench, runContext } from './support';

const REPO_ROOT = path.resolve(__dirname, '..');
const MARKER = 'cli-startup task';

interface Run {
  ms: number;
  code: number | null;
  out: string;
  err: string;
}

/** Runs a command to its end; wall-clock from spawn to exit. */
function timed(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ ms: performance.now() - started, code, out, err });
    });
  });
}

/** Claude Code's executable, or undefined with the places looked at. */
function findClaudeCode(): { bin?: string; looked: string } {
  const candidates = [
    process.env.CLAUDE_CODE_BIN,
    path.join(os.homedir(), '.cache', 'durable-agent', 'claude-code', 'node_modules', '.bin', 'claude'),
    ...(process.env.PATH ?? '').split(path.delimiter).map((directory) => path.join(directory, 'claude')),
  ].filter((candidate): candidate is string => !!candidate);
  return { bin: candidates.find((candidate) => existsSync(candidate)), looked: 'CLAUDE_CODE_BIN, ~/.cache/durable-agent/claude-code, PATH' };
}

/** Read a.txt, then b.txt, then answer: the same three turns whichever client asks. */
function taskResponder(workspace: string): Responder {
  return (request) => {
    const body = request.body ?? {};
    const offersRead = Array.isArray(body.tools) && body.tools.some((tool: { name?: string }) => tool.name === 'Read');
    const messages: Array<{ content: unknown }> = body.messages ?? [];
    if (!offersRead || !JSON.stringify(messages).includes(MARKER)) return { content: [{ type: 'text', text: 'ok' }] };
    const done = countToolResults(messages);
    if (done < 2) return { content: [{ type: 'tool_use', name: 'Read', input: { file_path: path.join(workspace, done === 0 ? 'a.txt' : 'b.txt') } }] };
    return { content: [{ type: 'text', text: 'a.txt says alpha, b.txt says beta.' }] };
  };
}

/** Starts `durable-agent worker`; resolves with the process and the time to its "polling" line. */
async function startWorker(bin: string, env: NodeJS.ProcessEnv, cwd: string): Promise<{ child: ChildProcess; readyMs: number; output: () => string }> {
  const started = performance.now();
  const child = spawn(process.execPath, [bin, 'worker'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const readyMs = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the worker did not start in 180 s:\n${output}`)), 180_000);
    child.stdout!.on('data', () => {
      if (output.includes('polling task queue')) {
        clearTimeout(timer);
        resolve(performance.now() - started);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the worker exited with ${code}:\n${output}`));
    });
  });
  return { child, readyMs, output: () => output };
}

async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { runs: { type: 'string', default: '5' }, bin: { type: 'string' }, note: { type: 'string' } },
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive whole number, got ${values.runs}`);
  const bin = path.resolve(values.bin ?? path.join(REPO_ROOT, 'bin', 'durable-agent.js'));
  const context = runContext();
  const claude = findClaudeCode();
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-cli-startup-'));
    cleanups.push(() => rm(workspace, { recursive: true, force: true }));
    await writeFile(path.join(workspace, 'a.txt'), 'alpha\n');
    await writeFile(path.join(workspace, 'b.txt'), 'beta\n');
    const stateDir = path.join(workspace, '.state');
    const claudeConfig = path.join(workspace, '.claude-config');

    progress('starting an ephemeral Temporal dev server and the scripted model server');
    const server = await startDevServer({ ephemeral: true, headless: true, log: () => undefined });
    cleanups.push(() => server.stop());
    const model = await startScriptedModelServer({ respond: taskResponder(workspace) });
    cleanups.push(() => model.close());

    const { TEMPORAL_ADDRESS: _a, DURABLE_AGENT_ENCRYPTION_KEY: _k, DURABLE_AGENT_ENCRYPTION_KEY_FILE: _f, ...inherited } = process.env;
    // npm's variables would make the CLI think `npm run cli` started it (its hints, its directory).
    for (const name of Object.keys(inherited)) if (name.startsWith('npm_') || name === 'INIT_CWD') delete inherited[name];
    const env: NodeJS.ProcessEnv = {
      ...inherited,
      TEMPORAL_ADDRESS: server.address,
      DURABLE_AGENT_STATE_DIR: stateDir,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: 'scripted',
      NO_COLOR: '1',
    };

    // The worker: cold (empty state directory: it bundles), then warm (the bundle cached there).
    progress('worker start, cold (empty state directory)');
    const cold = await startWorker(bin, env, workspace);
    const coldLines = cold.output().trim().split('\n').slice(0, 2);
    await stopWorker(cold.child);
    progress(`  ready in ${seconds(cold.readyMs)}; again, warm`);
    const warm = await startWorker(bin, env, workspace);
    cleanups.push(() => stopWorker(warm.child));
    progress(`  ready in ${seconds(warm.readyMs)}`);

    const prompt = `${MARKER}: read a.txt, then b.txt, then tell me what they say.`;
    const ours = (args: string[]) => timed(process.execPath, [bin, ...args], { cwd: workspace, env });
    const theirs = claude.bin
      ? (args: string[]) =>
          timed(claude.bin!, args, {
            cwd: workspace,
            env: { ...env, CLAUDE_CONFIG_DIR: claudeConfig, DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
          })
      : undefined;

    // One -p first: a conversation for `status`, and the worker's first workflow (caches warm for both sides).
    progress('warm-up -p');
    const first = await ours(['-p', prompt, '--output-format', 'json']);
    if (first.code !== 0) throw new Error(`durable-agent -p failed (${first.code}):\n${first.out}\n${first.err}`);
    const conversationId = (JSON.parse(first.out.trim().split('\n').pop()!) as { session_id?: string }).session_id;
    if (!conversationId) throw new Error(`no session_id in durable-agent -p's JSON:\n${first.out}`);
    if (theirs) await theirs(['-p', prompt, '--output-format', 'json', '--allowedTools', 'Read']);

    const rows: Array<{ label: string; ms: number[]; calls?: number[]; durationMs?: number[]; failures: string[] }> = [];
    const measure = async (label: string, run: () => Promise<Run>, oneShot = false) => {
      const row = {
        label,
        ms: [] as number[],
        calls: oneShot ? ([] as number[]) : undefined,
        durationMs: oneShot ? ([] as number[]) : undefined,
        failures: [] as string[],
      };
      rows.push(row);
      return async () => {
        const before = model.requests.filter((request) => JSON.stringify(request.body?.messages ?? []).includes(MARKER)).length;
        const result = await run();
        row.ms.push(result.ms);
        if (result.code !== 0) row.failures.push(`exit ${result.code}: ${(result.err || result.out).trim().split('\n').slice(-3).join(' / ')}`);
        if (oneShot) {
          const after = model.requests.filter((request) => JSON.stringify(request.body?.messages ?? []).includes(MARKER)).length;
          row.calls!.push(after - before);
          try {
            row.durationMs!.push((JSON.parse(result.out.trim().split('\n').pop()!) as { duration_ms: number }).duration_ms);
          } catch {
            /* no JSON result: counted as a failure above */
          }
        }
      };
    };
    const steps = [
      await measure('durable-agent --version', () => ours(['--version'])),
      await measure('durable-agent --help', () => ours(['--help'])),
      await measure('durable-agent list', () => ours(['list'])),
      await measure(`durable-agent status <id>`, () => ours(['status', conversationId])),
      await measure('durable-agent -p "<task>"', () => ours(['-p', prompt, '--output-format', 'json']), true),
      ...(theirs
        ? [
            await measure('claude --version', () => theirs(['--version'])),
            await measure('claude --help', () => theirs(['--help'])),
            await measure('claude -p "<task>"', () => theirs(['-p', prompt, '--output-format', 'json', '--allowedTools', 'Read']), true),
          ]
        : []),
    ];
    // Interleaved: run i of every command, then run i + 1, so a busy moment of the machine is spread over all.
    for (let i = 0; i < runs; i++) {
      progress(`run ${i + 1} of ${runs}`);
      for (const step of steps) await step();
    }

    const claudeVersion = theirs ? (await theirs(['--version'])).out.trim() : undefined;
    const table = markdownTable(
      ['command', `median of ${runs} (wall)`, 'min', 'max', 'model calls', 'result duration_ms (median)', 'failures'],
      rows.map((row) => [
        `\`${row.label}\``,
        seconds(median(row.ms)),
        seconds(Math.min(...row.ms)),
        seconds(Math.max(...row.ms)),
        row.calls ? [...new Set(row.calls)].join(', ') : '',
        row.durationMs?.length ? `${Math.round(median(row.durationMs))} ms` : '',
        row.failures.length ? row.failures.join('; ') : '0',
      ]),
    );
    await publishResults(`cli-startup-${new Date().toISOString().slice(0, 10)}`, {
      title: 'CLI start-up and -p, side by side with Claude Code',
      context: [
        ...context,
        `- durable-agent binary: ${path.relative(process.cwd(), bin) || bin}`,
        `- Claude Code: ${claudeVersion ?? `NOT FOUND (looked in ${claude.looked}): its rows are missing`}${claude.bin ? ` (${claude.bin})` : ''}`,
      ],
      note: values.note,
      body: [
        table,
        '',
        `Worker start (\`durable-agent worker\` to its "polling" line): cold (empty state directory) ${seconds(cold.readyMs)}, ` +
          `warm (bundle cached in the state directory) ${seconds(warm.readyMs)}.`,
        '',
        'The cold worker said:',
        '',
        ...coldLines.map((line) => `    ${line}`),
        '',
        'The warm worker said:',
        '',
        ...warm
          .output()
          .trim()
          .split('\n')
          .slice(0, 1)
          .map((line) => `    ${line}`),
      ],
    });
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

runBench(main);
