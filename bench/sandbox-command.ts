/**
 * Benchmark: what the Bash sandbox adds to one command (`true`), by network setup.
 *
 *   npx tsx bench/sandbox-command.ts [runs] [--note TEXT]        (default 30 runs each, after 3 warm-ups)
 *
 * Each row is the wall time from deciding the sandbox (settings read, plan, placeholders, proxy)
 * to the command's end and the sandbox's release, as executeBash spends it, in a fresh temporary
 * workspace: unsandboxed; sandboxed with no network (no proxy); sandboxed with the domain proxy
 * and socat as its forwarder inside (what an interactive conversation gets, where a new domain
 * asks); the same with Node as the forwarder (hosts without socat). Results are appended to
 * bench/results/sandbox-command.md.
 */
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { decideSandbox } from '../activities/sandbox';
import { FORWARDER_SCRIPT, proxyForwarder } from '../activities/sandbox-network';
import { runShellCommand } from '../activities/shell';
import { median, percentile } from './support';

const args = process.argv.slice(2);
const noteIndex = args.indexOf('--note');
const note = noteIndex >= 0 ? args[noteIndex + 1] : undefined;
const runs = Number(args.find((arg, index) => /^\d+$/.test(arg) && args[index - 1] !== '--note') ?? 30);

type Setup = 'unsandboxed' | 'no network' | 'proxy, socat forwarder' | 'proxy, node forwarder';
const SETUPS: Setup[] = ['unsandboxed', 'no network', 'proxy, socat forwarder', 'proxy, node forwarder'];

async function once(setup: Setup, cwd: string, stateDir: string): Promise<number> {
  const started = performance.now();
  const askDomain = async () => false;
  const sandbox =
    setup === 'unsandboxed' ? undefined : await decideSandbox({ cwd, stateDir, command: 'true', ...(setup === 'no network' ? {} : { askDomain }) });
  if (sandbox?.refusal) throw new Error(sandbox.refusal);
  const launch = sandbox?.launch;
  if (launch && setup === 'proxy, node forwarder') launch.forwarder = { program: process.execPath, args: ['-e', FORWARDER_SCRIPT] };
  const run = await runShellCommand({ command: 'true', cwd, timeoutMs: 30_000, signal: new AbortController().signal, sandbox: launch }).finally(() =>
    launch?.release?.(),
  );
  if (run.exitCode !== 0) throw new Error(`${setup}: exit ${run.exitCode} ${run.stderr}`);
  return performance.now() - started;
}

async function main() {
  const base = await mkdtemp(path.join(os.tmpdir(), 'bench-sandbox-'));
  const cwd = path.join(base, 'workspace');
  const stateDir = path.join(base, 'state');
  await import('node:fs/promises').then((fs) => Promise.all([fs.mkdir(cwd), fs.mkdir(stateDir)]));
  const forwarder = await proxyForwarder();
  const rows: string[] = [];
  try {
    for (const setup of SETUPS) {
      if (setup === 'proxy, socat forwarder' && !forwarder.program.endsWith('socat')) {
        rows.push(`| ${setup} | (no socat on this host) | | |`);
        continue;
      }
      for (let warm = 0; warm < 3; warm++) await once(setup, cwd, stateDir);
      const times: number[] = [];
      for (let index = 0; index < runs; index++) times.push(await once(setup, cwd, stateDir));
      const row = `| ${setup} | ${median(times).toFixed(1)} | ${percentile(times, 90).toFixed(1)} | ${Math.max(...times).toFixed(1)} |`;
      rows.push(row);
      process.stderr.write(`${row}\n`);
    }
  } finally {
    await rm(base, { recursive: true, force: true });
  }
  const report = [
    '',
    `## ${new Date().toISOString()} — one \`true\` per run, ${runs} runs per setup, ${os.cpus().length} cores, node ${process.version}`,
    '',
    `- command: \`npx tsx bench/sandbox-command.ts ${runs}${note ? ` --note '${note}'` : ''}\``,
    ...(note ? [`- note: ${note}`] : []),
    '',
    '| setup | median ms | p90 ms | max ms |',
    '| --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
  await appendFile(path.join(__dirname, 'results', 'sandbox-command.md'), report);
  process.stdout.write(report);
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
