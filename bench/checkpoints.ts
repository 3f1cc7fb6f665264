/**
 * The workspace checkpoint store (activities/checkpoints/store.ts, issue 31) on a small repository
 * (≈20 files) and a large one (10,000 files of 1–4 KiB, committed in the workspace's own git):
 * first checkpoint; checkpoint of an unchanged tree and after one edited file (median of N: the
 * target is ≤ 100 ms on the large tree); after a `git commit` in the workspace (its git state
 * changed); store growth (`du`) for one edited file; rewind of one edit (restore); materialize (fork: the files and a repository of its own).
 *
 *   npx tsx bench/checkpoints.ts [runs] [--files N] [--note TEXT] [--print-only]
 *
 * Appends a section to bench/results/checkpoints-<YYYY-MM-DD>.md unless --print-only.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type CheckpointStore, createCheckpointStore } from '../activities/checkpoints/store';

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: { files: { type: 'string' }, note: { type: 'string' }, 'print-only': { type: 'boolean' } },
  allowPositionals: true,
});
const runs = Number(positionals[0] ?? 11);
const largeFiles = Number(values.files ?? 10_000);

const REPO_ROOT = path.resolve(__dirname, '..');

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function p90(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.9 * sorted.length) - 1)];
}

const ms = (value: number): string => value.toFixed(1);

function progress(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}

/** The workspace's own git, as a user's: a HOME of its own, nothing from this machine's config. */
function workspaceGit(cwd: string, home: string, args: string[]): string {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('GIT_')) env[key] = value;
  return execFileSync('git', args, { cwd, env: { ...env, HOME: home, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8', maxBuffer: 1 << 28 });
}

/** `du -sk` (KiB on disk) and `du -sb` (apparent bytes) of a directory. */
function du(dir: string): { kib: number; bytes: number } {
  const kib = Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]);
  const bytes = Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
  return { kib, bytes };
}

/** 1–4 KiB of text, different for every (file, version). */
function content(index: number, version: number): string {
  const size = 1024 + ((index * 2654435761 + version * 97) % 3072);
  let text = '';
  for (let line = 0; text.length < size; line++) {
    text += `${createHash('sha256').update(`${index}:${version}:${line}`).digest('hex')} line ${line} of file ${index}\n`;
  }
  return text.slice(0, size);
}

function fileName(index: number, total: number): string {
  if (total <= 100) return `src/file-${index}.ts`;
  return `src/dir-${String(Math.floor(index / 100)).padStart(3, '0')}/file-${index}.ts`;
}

interface Figures {
  files: number;
  first: number;
  firstFiles: number;
  unchanged: number[];
  edited: number[];
  afterCommit: number[];
  growth: { kib: number; bytes: number; content: number };
  storeAfterFirst: { kib: number; bytes: number };
  restore: number[];
  materialize: number[];
}

async function measure(root: string, label: string, count: number): Promise<Figures> {
  const home = path.join(root, `${label}-home`);
  const workspace = path.join(root, label);
  await mkdir(home, { recursive: true });
  await writeFile(path.join(home, '.gitconfig'), '[user]\n\tname = Bench\n\temail = bench@example.invalid\n[init]\n\tdefaultBranch = main\n');
  progress(`${label}: writing ${count} files`);
  await mkdir(workspace, { recursive: true });
  for (let index = 0; index < count; index++) {
    const file = path.join(workspace, fileName(index, count));
    if (index % 100 === 0) await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content(index, 0));
  }
  workspaceGit(workspace, home, ['init', '-q']);
  workspaceGit(workspace, home, ['add', '-A']);
  workspaceGit(workspace, home, ['commit', '-q', '-m', 'initial']);

  const stateDir = path.join(root, `${label}-state`);
  const store: CheckpointStore = createCheckpointStore({ stateDir, cwd: workspace });
  const conversationId = `bench-${label}`;
  const take = async (reason: string): Promise<{ id: string; ms: number; files: number }> => {
    const started = performance.now();
    const result = await store.take({ conversationId, reason });
    if (result.warnings.length) throw new Error(`warnings: ${result.warnings.join('; ')}`);
    return { id: result.id, ms: performance.now() - started, files: result.files };
  };

  progress(`${label}: first checkpoint`);
  const first = await take('first');
  const storeAfterFirst = du(store.dir);
  await take('warm-up');

  progress(`${label}: ${runs} unchanged, ${runs} one-file edits`);
  const unchanged: number[] = [];
  for (let run = 0; run < runs; run++) unchanged.push((await take('unchanged')).ms);
  const edited: number[] = [];
  let last = first.id;
  for (let run = 0; run < runs; run++) {
    await writeFile(path.join(workspace, fileName((run * 37) % count, count)), content((run * 37) % count, run + 1));
    const result = await take('edited');
    edited.push(result.ms);
    last = result.id;
  }

  // Growth of the store for one edited file, against the file's size.
  const edit = content(1, 1000);
  const before = du(store.dir);
  await writeFile(path.join(workspace, fileName(1, count)), edit);
  last = (await take('growth')).id;
  const after = du(store.dir);
  const growth = { kib: after.kib - before.kib, bytes: after.bytes - before.bytes, content: Buffer.byteLength(edit) };

  progress(`${label}: after git commits`);
  const afterCommit: number[] = [];
  for (let run = 0; run < Math.min(runs, 5); run++) {
    await writeFile(path.join(workspace, fileName(2 + run, count)), content(2 + run, 2000 + run));
    workspaceGit(workspace, home, ['commit', '-q', '-a', '-m', `commit ${run}`]);
    const result = await take('after-commit');
    afterCommit.push(result.ms);
    last = result.id;
  }

  progress(`${label}: rewinds of one edit`);
  const restore: number[] = [];
  for (let run = 0; run < runs; run++) {
    await writeFile(path.join(workspace, fileName(3 + run, count)), 'an edit to rewind\n');
    const started = performance.now();
    const result = await store.restore(last);
    restore.push(performance.now() - started);
    if (result.restored !== 1 || result.removed !== 0) throw new Error(`restore: ${JSON.stringify(result)}`);
  }

  progress(`${label}: materialize`);
  const materialize: number[] = [];
  for (let run = 0; run < 3; run++) {
    const target = path.join(root, `${label}-fork-${run}`);
    const started = performance.now();
    // As a fork makes its workspace: the files and a git repository of its own.
    const result = await store.materialize(last, target, { withGit: true });
    materialize.push(performance.now() - started);
    if (result.files !== count) throw new Error(`materialize wrote ${result.files} files`);
    if (!result.git) throw new Error('materialize made no repository');
    await rm(target, { recursive: true, force: true });
  }
  return { files: count, first: first.ms, firstFiles: first.files, unchanged, edited, afterCommit, growth, storeAfterFirst, restore, materialize };
}

function commandLine(): string {
  const args = process.argv.slice(2).map((arg) => (/^[\w./:=@+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`));
  return ['npx tsx', path.relative(REPO_ROOT, process.argv[1]), ...args].join(' ');
}

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    return `${head}${dirty ? '+dirty' : ''}`;
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  const nproc = execFileSync('nproc', { encoding: 'utf8' }).trim();
  const gitVersion = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim();
  const load = os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
  const context = [
    `- command: \`${commandLine()}\``,
    `- machine: nproc ${nproc} (${os.cpus()[0]?.model.trim() ?? 'unknown cpu'}), ${gitVersion}, node ${process.version}, ${os.platform()} ${os.release()}, load average at start ${load}`,
    `- commit: ${commit()}`,
    ...(values.note ? [`- note: ${values.note}`] : []),
  ];
  const root = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-bench-checkpoints-'));
  try {
    const small = await measure(root, 'small', 20);
    const large = await measure(root, 'large', largeFiles);
    const row = (name: string, pick: (figures: Figures) => string): string => `| ${name} | ${pick(small)} | ${pick(large)} |`;
    const stats = (samples: number[]): string => `${ms(median(samples))} (p90 ${ms(p90(samples))}, n=${samples.length})`;
    const body = [
      `| measure | small repository (${small.files} files) | large repository (${large.files} files) |`,
      '| --- | --- | --- |',
      row('first checkpoint, ms', (figures) => `${ms(figures.first)} (${figures.firstFiles} files)`),
      row('store after the first checkpoint (du -sk / du -sb)', (figures) => `${figures.storeAfterFirst.kib} KiB / ${figures.storeAfterFirst.bytes} B`),
      row('checkpoint, unchanged tree: median ms', (figures) => stats(figures.unchanged)),
      row('checkpoint after 1 file edited: median ms', (figures) => stats(figures.edited)),
      row('checkpoint after a `git commit` in the workspace: median ms', (figures) => stats(figures.afterCommit)),
      row(
        'store growth for 1 edited file (du -sk / du -sb; file size)',
        (figures) => `${figures.growth.kib} KiB / ${figures.growth.bytes} B; ${figures.growth.content} B`,
      ),
      row('rewind of 1 edited file (restore): median ms', (figures) => stats(figures.restore)),
      row('materialize (fork: files and a repository of its own) of the checkpoint: median ms', (figures) => stats(figures.materialize)),
    ];
    const section = [`## ${new Date().toISOString()} — checkpoint store, ${runs} runs`, '', ...context, '', ...body, ''].join('\n');
    console.log(section);
    if (!values['print-only']) {
      const file = path.join(REPO_ROOT, 'bench', 'results', `checkpoints-${new Date().toISOString().slice(0, 10)}.md`);
      const header = existsSync(file)
        ? ''
        : '# Workspace checkpoints (bench/checkpoints.ts)\n\nIssue 31 target: a checkpoint after a one-file edit of a 10,000-file repository in ≤ 100 ms (median).\n\n';
      await appendFile(file, `${header}${section}\n`);
      progress(`appended to ${path.relative(REPO_ROOT, file)}`);
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
