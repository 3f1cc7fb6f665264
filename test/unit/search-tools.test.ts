/**
 * Grep and Glob on ripgrep (issue 23): each of Claude Code's Grep parameters, .gitignore and
 * hidden files, multiline, a pattern only PCRE2 can run, and Glob's ordering and limits. Real
 * files in a temp dir, the real rg binary.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeTool, type ToolExecutionContext } from '../../activities/tools';
import { splitGlobParameter } from '../../activities/tools/grep';
import { ripgrepPath, RipgrepMissingError, ripgrepStatusLine } from '../../activities/tools/ripgrep';
import { grepInputSchema } from '../../common/tools/grep';

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), 'durable-agent-search-'));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

function context(overrides: Partial<ToolExecutionContext> = {}): ToolExecutionContext {
  return { cwd: workspace, signal: new AbortController().signal, ...overrides };
}

async function put(relative: string, content: string, secondsAgo?: number): Promise<string> {
  const filePath = path.join(workspace, relative);
  await mkdir(path.dirname(filePath), { recursive: true });
  await writeFile(filePath, content);
  if (secondsAgo !== undefined) {
    const time = new Date(Date.now() - secondsAgo * 1000);
    await utimes(filePath, time, time);
  }
  return filePath;
}

const grep = async (input: Record<string, unknown>) => executeTool('Grep', input, context());
const glob = async (input: Record<string, unknown>) => executeTool('Glob', input, context());

describe('the ripgrep binary', () => {
  it('comes from the npm per-platform package (nothing downloaded), else PATH, else a clear error', () => {
    const found = ripgrepPath();
    expect(found).toContain(`@vscode/ripgrep-${process.platform}-${process.arch}`);
    const version = spawnSync(found, ['--version'], { encoding: 'utf8' }).stdout;
    expect(version).toMatch(/^ripgrep \d+/);
    expect(version).toMatch(/\+pcre2/);
    expect(() => ripgrepPath({ RIPGREP_PATH: '/nonexistent/rg' })).toThrow(RipgrepMissingError);
    // Neither the npm package nor PATH: the message says what to install (the tools return it as their error).
    expect(() => ripgrepPath({ RIPGREP_PATH: '', PATH: '/nonexistent' }, { packaged: false })).toThrow(/ripgrep \(rg\) was not found.*apt-get install ripgrep/);
    expect(ripgrepPath({ PATH: `/nonexistent${path.delimiter}${path.dirname(found)}` }, { packaged: false })).toBe(path.join(path.dirname(found), 'rg'));
    expect(ripgrepStatusLine()).toBe(`durable-agent worker: Grep and Glob use ripgrep at ${found}`);
  });
});

describe('Grep parameters', () => {
  const text = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta'].join('\n') + '\n';

  it('-A, -B and -C show context lines (N- for context, N: for matches, -- between groups)', async () => {
    const file = await put('greek.txt', text);
    expect((await grep({ pattern: 'gamma', output_mode: 'content', '-A': 1 })).content).toBe(`${file}:3:gamma\n${file}-4-delta`);
    expect((await grep({ pattern: 'gamma', output_mode: 'content', '-B': 2 })).content).toBe(`${file}-1-alpha\n${file}-2-beta\n${file}:3:gamma`);
    expect((await grep({ pattern: '^(beta|zeta)$', output_mode: 'content', '-C': 1 })).content).toBe(
      [`${file}-1-alpha`, `${file}:2:beta`, `${file}-3-gamma`, '--', `${file}-5-epsilon`, `${file}:6:zeta`, `${file}-7-eta`].join('\n'),
    );
    // -C wins over -A/-B, as in Claude Code; context is ignored outside content mode.
    expect((await grep({ pattern: 'gamma', output_mode: 'content', '-C': 0, '-A': 3 })).content).toBe(`${file}:3:gamma`);
    expect((await grep({ pattern: 'gamma', '-C': 3 })).content).toBe(`Found 1 file\n${file}`);
  });

  it('type filters by ripgrep file type; an unknown type is an error the model can act on', async () => {
    const ts = await put('a.ts', 'needle\n');
    await put('b.py', 'needle\n');
    expect((await grep({ pattern: 'needle', type: 'ts' })).content).toBe(`Found 1 file\n${ts}`);
    const unknown = await grep({ pattern: 'needle', type: 'cobol-nope' });
    expect(unknown.isError).toBe(true);
    expect(unknown.content).toMatch(/unrecognized file type: cobol-nope.*rg --type-list/);
  });

  it('glob takes a list split on commas and spaces, braces kept whole', async () => {
    expect(splitGlobParameter('*.ts, *.tsx')).toEqual(['*.ts', '*.tsx']);
    expect(splitGlobParameter('*.{ts,tsx} !*.d.ts')).toEqual(['*.{ts,tsx}', '!*.d.ts']);
    const ts = await put('src/a.ts', 'needle\n', 20);
    const tsx = await put('src/b.tsx', 'needle\n', 10);
    await put('src/c.d.ts', 'needle\n');
    await put('src/d.js', 'needle\n');
    expect((await grep({ pattern: 'needle', glob: '*.{ts,tsx} !*.d.ts' })).content).toBe(`Found 2 files\n${tsx}\n${ts}`);
    expect((await grep({ pattern: 'needle', glob: '*.ts,*.tsx' })).content).toBe(`Found 3 files\n${path.join(workspace, 'src/c.d.ts')}\n${tsx}\n${ts}`);
  });

  it('-i, -n and a pattern starting with a dash', async () => {
    const file = await put('flags.txt', 'use --force here\nNEEDLE\n');
    expect((await grep({ pattern: '--force', output_mode: 'content' })).content).toBe(`${file}:1:use --force here`);
    expect((await grep({ pattern: 'needle', output_mode: 'content', '-i': true, '-n': false })).content).toBe(`${file}:NEEDLE`);
    expect((await grep({ pattern: 'needle', output_mode: 'content' })).content).toBe('No matches found');
  });

  it('head_limit and offset page every mode; head_limit 0 shows all; the default is 250', async () => {
    const file = await put('many.txt', Array.from({ length: 300 }, (_, index) => `line ${index + 1}`).join('\n') + '\n');
    const page = await grep({ pattern: 'line', output_mode: 'content', head_limit: 2, offset: 5 });
    expect(page.content).toBe(`${file}:6:line 6\n${file}:7:line 7\n[more lines follow: showing lines 6–7; use offset to see more]`);
    expect((await grep({ pattern: 'line', output_mode: 'content' })).content.split('\n')).toHaveLength(251);
    expect((await grep({ pattern: 'line', output_mode: 'content', head_limit: 0 })).content.split('\n')).toHaveLength(300);
    expect((await grep({ pattern: 'line', output_mode: 'content', offset: 299, head_limit: 0 })).content).toBe(`${file}:300:line 300`);

    const files = await Promise.all(['a', 'b', 'c'].map((name, index) => put(`${name}.txt`, 'hit\n', 30 - index * 10)));
    expect((await grep({ pattern: 'hit', head_limit: 1, offset: 1 })).content).toBe(`Found 3 files (showing 1 from offset 1)\n${files[1]}`);
    const counts = await grep({ pattern: 'hit', output_mode: 'count', head_limit: 2 });
    expect(counts.content).toMatch(
      /^(.+\.txt:1\n){2}\nFound 3 total occurrences across 3 files\. \(showing 1–2 of 3 files; use offset\/head_limit for more\)$/,
    );
  });

  it("the schema takes all of Claude Code's parameters and still refuses unknown ones", () => {
    const input = {
      pattern: 'x',
      path: '.',
      glob: '*',
      type: 'ts',
      output_mode: 'content',
      '-i': true,
      '-n': true,
      '-A': 1,
      '-B': 1,
      '-C': 1,
      multiline: true,
      head_limit: 0,
      offset: 3,
    };
    expect(grepInputSchema.safeParse(input).success).toBe(true);
    expect(grepInputSchema.safeParse({ pattern: 'x', '-Z': 1 }).success).toBe(false);
    expect(grepInputSchema.safeParse({ pattern: 'x', '-A': -1 }).success).toBe(false);
  });
});

describe('Grep behaviour', () => {
  it('honours .gitignore in a repository, searches hidden files, skips .git, node_modules and binaries', async () => {
    await mkdir(path.join(workspace, '.git'));
    await put('.git/config', 'TODO in git\n');
    await put('.gitignore', 'dist/\n*.log\n');
    const kept = await put('src/app.ts', 'TODO\n', 20);
    const hidden = await put('.config/settings.json', '"TODO"\n', 10);
    await put('dist/bundle.js', 'TODO\n');
    await put('debug.log', 'TODO\n');
    await put('node_modules/dep/index.js', 'TODO\n');
    await writeFile(path.join(workspace, 'blob.bin'), Buffer.from('TODO\0\x01\x02'));
    expect((await grep({ pattern: 'TODO' })).content).toBe(`Found 2 files\n${hidden}\n${kept}`);
    // Named explicitly, an ignored directory or node_modules is searched.
    expect((await grep({ pattern: 'TODO', path: 'node_modules' })).content).toBe(`Found 1 file\n${path.join(workspace, 'node_modules/dep/index.js')}`);
  });

  it('multiline: patterns span lines only with multiline: true, and . then matches newlines', async () => {
    const file = await put('struct.go', 'type T struct {\n  a int\n  field string\n}\n');
    expect((await grep({ pattern: 'struct \\{.*field', output_mode: 'content' })).content).toBe('No matches found');
    expect((await grep({ pattern: 'struct \\{.*field', output_mode: 'content', multiline: true })).content).toBe(
      `${file}:1:type T struct {\n${file}:2:  a int\n${file}:3:  field string`,
    );
  });

  it('a pattern only PCRE2 runs (look-around, backreferences) falls back to PCRE2', async () => {
    const file = await put('words.txt', 'foobar\nfoobaz\nabab\nabcd\n');
    expect((await grep({ pattern: 'foo(?=baz)', output_mode: 'content' })).content).toBe(`${file}:2:foobaz`);
    expect((await grep({ pattern: '(?<!foo)ba', output_mode: 'content' })).content).toBe(`${file}:3:abab`);
    expect((await grep({ pattern: '^(ab)\\1$', output_mode: 'count' })).content).toBe(`${file}:1\n\nFound 1 total occurrence across 1 file.`);
  });

  it('Rust regex syntax errors say so', async () => {
    const result = await grep({ pattern: 'a{2,1}' });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^Invalid regular expression: a\{2,1\} — .*Rust regex syntax/);
  });
});

describe('links', () => {
  it('ripgrep does not follow links while it walks (what the per-directory access check relies on); a root that is a link is searched', async () => {
    const outside = await mkdtemp(path.join(tmpdir(), 'durable-agent-search-outside-'));
    try {
      await writeFile(path.join(outside, 'secret.txt'), 'LINKED\n');
      await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'file-link.txt'));
      await symlink(outside, path.join(workspace, 'dir-link'));
      const plain = await put('plain.txt', 'LINKED\n');
      expect((await grep({ pattern: 'LINKED' })).content).toBe(`Found 1 file\n${plain}`);
      expect((await glob({ pattern: '**/*.txt' })).content).toBe(plain);
      expect((await grep({ pattern: 'LINKED', path: 'dir-link' })).content).toBe(`Found 1 file\n${path.join(workspace, 'dir-link', 'secret.txt')}`);
      expect((await grep({ pattern: 'LINKED', path: 'file-link.txt' })).content).toBe(`Found 1 file\n${path.join(workspace, 'file-link.txt')}`);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});

describe('Glob behaviour', () => {
  it('lists hidden and gitignored files, skips .git and node_modules unless named, newest first', async () => {
    await mkdir(path.join(workspace, '.git'));
    await put('.git/x.ts', '');
    await put('.gitignore', 'dist/\n');
    const built = await put('dist/out.ts', '', 30);
    const dot = await put('.hidden/a.ts', '', 20);
    const mine = await put('src/b.ts', '', 10);
    const dependency = await put('node_modules/dep/c.ts', '');
    expect((await glob({ pattern: '**/*.ts' })).content).toBe(`${mine}\n${dot}\n${built}`);
    expect((await glob({ pattern: 'node_modules/**/*.ts' })).content).toBe(dependency);
    expect((await glob({ pattern: '**/*.ts', path: 'src' })).content).toBe(mine);
  });

  it('takes an absolute pattern and a literal path', async () => {
    const file = await put('deep/dir/file.md', '');
    expect((await glob({ pattern: `${workspace}/deep/**/*.md` })).content).toBe(file);
    expect((await glob({ pattern: 'deep/dir/file.md' })).content).toBe(file);
    expect((await glob({ pattern: 'deep/*.md' })).content).toBe('No files found');
    expect((await glob({ pattern: 'nowhere/**/*.md' })).content).toBe('No files found');
  });
});
