/**
 * Grep and Glob through our tool code (executeTool, the same path an activity takes) against plain
 * ripgrep on the same query, on a large tree (default: this project's node_modules, ~20k files).
 * Issue 23's target: each tool at most 1.5× ripgrep's time. Median of N runs each, interleaved,
 * after one warm-up of each (page cache warm). With `--access`, the tools also check every file
 * they return (real path, Read deny rules), as a conversation with a permission context does.
 *
 *   npx tsx bench/search.ts [runs] [--tree DIR] [--access] [--note TEXT]
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { executeTool, type ToolExecutionContext } from '../activities/tools';
import { ripgrepPath } from '../activities/tools/ripgrep';

const argv = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const index = argv.indexOf(name);
  return index === -1 ? undefined : argv[index + 1];
};
const runs = Number(argv.find((arg) => /^\d+$/.test(arg)) ?? 7);
const tree = path.resolve(flag('--tree') ?? 'node_modules');
const withAccess = argv.includes('--access');
const note = flag('--note');
const rg = ripgrepPath();

interface Case {
  name: string;
  tool: 'Grep' | 'Glob';
  input: Record<string, unknown>;
  /** The plain ripgrep command for the same query. */
  rgArgs: string[];
}

// The plain commands ask ripgrep the same question with the same semantics: Grep searches hidden
// files (--hidden); Glob lists hidden and .gitignored files newest first, as Claude Code's Glob
// (--hidden --no-ignore --sortr=modified). The last row is the issue's baseline command, which
// honours the packages' .gitignore files and so lists fewer files.
const cases: Case[] = [
  {
    name: 'Grep files_with_matches `createHash\\(`',
    tool: 'Grep',
    input: { pattern: 'createHash\\(', output_mode: 'files_with_matches', path: tree, head_limit: 0 },
    rgArgs: ['--hidden', '-l', 'createHash\\(', tree],
  },
  {
    name: 'Grep content `createHash\\(` -n',
    tool: 'Grep',
    input: { pattern: 'createHash\\(', output_mode: 'content', path: tree, head_limit: 0 },
    rgArgs: ['--hidden', '-n', 'createHash\\(', tree],
  },
  {
    name: 'Grep count `import`',
    tool: 'Grep',
    input: { pattern: 'import', output_mode: 'count', path: tree, head_limit: 0 },
    rgArgs: ['--hidden', '-c', 'import', tree],
  },
  {
    name: 'Glob `**/*.d.ts`',
    tool: 'Glob',
    input: { pattern: '**/*.d.ts', path: tree },
    rgArgs: ['--files', '--hidden', '--no-ignore', '--sortr=modified', '-g', '*.d.ts', tree],
  },
  {
    name: "Glob `**/*.d.ts` vs the issue's `rg --files -g *.d.ts`",
    tool: 'Glob',
    input: { pattern: '**/*.d.ts', path: tree },
    rgArgs: ['--files', '-g', '*.d.ts', tree],
  },
];

const context: ToolExecutionContext = {
  cwd: path.dirname(tree),
  signal: new AbortController().signal,
  ...(withAccess ? { access: { workingDirectories: [path.dirname(tree)], readDeny: ['.env'] } } : {}),
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function timeTool(c: Case): Promise<{ ms: number; lines: number }> {
  const started = performance.now();
  const result = await executeTool(c.tool, c.input, context);
  const ms = performance.now() - started;
  if (result.isError) throw new Error(`${c.name}: ${result.content}`);
  return { ms, lines: result.content.split('\n').length };
}

function timeRipgrep(c: Case): { ms: number; lines: number } {
  const started = performance.now();
  const done = spawnSync(rg, c.rgArgs, { encoding: 'utf8', maxBuffer: 1 << 30 });
  const ms = performance.now() - started;
  if (done.status !== 0 && done.status !== 1) throw new Error(`rg ${c.rgArgs.join(' ')}: ${done.stderr}`);
  return { ms, lines: done.stdout.split('\n').length - 1 };
}

async function main(): Promise<void> {
  if (!existsSync(tree)) throw new Error(`no such tree: ${tree}`);
  const files = spawnSync(rg, ['--files', '--hidden', '--no-ignore', tree], { encoding: 'utf8', maxBuffer: 1 << 30 }).stdout.split('\n').length - 1;
  const rows: string[] = [];
  for (const c of cases) {
    await timeTool(c);
    timeRipgrep(c);
    const tool: number[] = [];
    const plain: number[] = [];
    let toolLines = 0;
    let rgLines = 0;
    for (let run = 0; run < runs; run += 1) {
      const ours = await timeTool(c);
      const theirs = timeRipgrep(c);
      tool.push(ours.ms);
      plain.push(theirs.ms);
      toolLines = ours.lines;
      rgLines = theirs.lines;
    }
    const ratio = median(tool) / median(plain);
    const command = `rg ${c.rgArgs.map((arg) => (arg === tree ? 'TREE' : arg.includes(' ') || arg.includes('*') ? `'${arg}'` : arg)).join(' ')}`;
    const row = `| ${c.name} | \`${command}\` | ${median(tool).toFixed(0)} | ${median(plain).toFixed(0)} | ${ratio.toFixed(2)}× | ${toolLines} / ${rgLines} |`;
    console.log(row);
    rows.push(row);
  }
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
  const version = spawnSync(rg, ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0];
  const header = [
    '',
    `## ${new Date().toISOString()} — ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), node ${process.version}, ${version}, commit ${commit}`,
    '',
    `Command: \`npx tsx bench/search.ts ${argv.join(' ')}\`. Tree: ${path.relative(process.cwd(), tree) || tree} (${files} files). ` +
      `Median of ${runs} interleaved runs after one warm-up each; access checks ${withAccess ? 'ON (every returned file: real path + Read deny rules)' : 'off'}.` +
      (note ? ` Note: ${note}` : ''),
    '',
    '| query | plain command | tool (ms) | plain rg (ms) | tool / rg | output lines (tool / rg) |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ];
  appendFileSync(path.join(__dirname, 'results', 'search.md'), header.join('\n'));
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
