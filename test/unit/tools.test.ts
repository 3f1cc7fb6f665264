import { readFileSync, readdirSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeTool, type ToolExecutionContext } from '../../activities/tools';

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), 'durable-agent-tools-'));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

function context(overrides: Partial<ToolExecutionContext> = {}): ToolExecutionContext {
  return { cwd: workspace, signal: new AbortController().signal, ...overrides };
}

/**
 * For the tests that read the shell's host pid (`$$`, `$!`) to watch its process group: in the
 * sandbox those are PID-namespace numbers. test/unit/sandbox.test.ts runs the same cases sandboxed.
 */
function hostContext(overrides: Partial<ToolExecutionContext> = {}): ToolExecutionContext {
  return context({ sandboxConfig: { enabled: false }, ...overrides });
}

async function put(relative: string, content: string | Buffer): Promise<string> {
  const filePath = path.join(workspace, relative);
  await mkdir(path.dirname(filePath), { recursive: true });
  await writeFile(filePath, content);
  return filePath;
}

/** Set a file's mtime to `secondsAgo` seconds in the past. */
async function age(filePath: string, secondsAgo: number): Promise<void> {
  const time = new Date(Date.now() - secondsAgo * 1000);
  await utimes(filePath, time, time);
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Live (non-zombie) processes in a process group, read from /proc (Linux). */
function liveProcessesInGroup(groupId: number): number[] {
  const live: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the parenthesised command name: state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === groupId && fields[0] !== 'Z') live.push(Number(entry));
  }
  return live;
}

function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

const isRoot = process.getuid?.() === 0;

describe('executeTool dispatch and validation', () => {
  it('returns an error result for an unknown tool', async () => {
    const result = await executeTool('WebBrowse', { url: 'x' }, context());
    expect(result).toEqual({
      isError: true,
      content:
        'No such tool available: WebBrowse. Available tools: Read, Write, Edit, NotebookEdit, Bash, Glob, Grep, WebFetch, Agent, TaskOutput, TaskStop, SendMessage, TaskCreate, TaskGet, TaskList, TaskUpdate, ScheduleWakeup, CronCreate, CronDelete, CronList, EnterWorktree, ExitWorktree, Skill',
    });
  });

  it('names each bad field of invalid input', async () => {
    const result = await executeTool('Edit', { file_path: 'a.txt', new_string: 1 }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toBe(
      'InputValidationError: Edit failed because: old_string: expected string, received undefined; new_string: expected string, received number',
    );
  });

  it('rejects unknown keys', async () => {
    const result = await executeTool('Read', { file_path: 'a.txt', encoding: 'latin1' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^InputValidationError: Read failed because: .*encoding/);
  });

  it('rejects non-object input', async () => {
    const result = await executeTool('Glob', null, context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/InputValidationError: Glob failed because: expected object/);
  });

  it('throws when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(executeTool('Read', { file_path: 'x' }, context({ signal: controller.signal }))).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});

describe('Read', () => {
  it('returns cat -n numbered lines and resolves relative paths against cwd', async () => {
    await put('src/app.ts', 'const a = 1;\nconst b = 2;\n');
    const result = await executeTool('Read', { file_path: 'src/app.ts' }, context());
    expect(result).toEqual({ isError: false, content: '     1\tconst a = 1;\n     2\tconst b = 2;' });
  });

  it('honours offset (1-based) and limit and tells how to continue', async () => {
    const filePath = await put('lines.txt', Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n'));
    const result = await executeTool('Read', { file_path: filePath, offset: 3, limit: 2 }, context());
    expect(result.isError).toBe(false);
    expect(result.content).toMatch(/^     3\tline 3\n     4\tline 4\n/);
    expect(result.content).toContain('offset=5');
  });

  it('defaults to 2000 lines and truncates lines longer than 2000 characters', async () => {
    const lines = Array.from({ length: 2500 }, (_, i) => (i === 0 ? 'x'.repeat(3000) : `l${i + 1}`));
    await put('big.txt', lines.join('\n'));
    const result = await executeTool('Read', { file_path: 'big.txt' }, context());
    const body = result.content.split('\n\n<system-reminder>')[0].split('\n');
    expect(body).toHaveLength(2000);
    expect(body[0].length).toBeLessThan(2100);
    expect(body[0]).toContain('truncated');
    expect(body[1999]).toBe('  2000\tl2000');
  });

  it('reports an offset past the end of the file', async () => {
    await put('short.txt', 'a\nb\n');
    const result = await executeTool('Read', { file_path: 'short.txt', offset: 10 }, context());
    expect(result.isError).toBe(false);
    expect(result.content).toContain('shorter than the provided offset (10). The file has 2 lines');
  });

  it('returns a reminder for an empty file', async () => {
    await put('empty.txt', '');
    const result = await executeTool('Read', { file_path: 'empty.txt' }, context());
    expect(result).toEqual({
      isError: false,
      content: '<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>',
    });
  });

  it('errors for a missing file, naming the path and cwd', async () => {
    const result = await executeTool('Read', { file_path: 'nope.txt' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toContain(`File does not exist: ${path.join(workspace, 'nope.txt')}`);
    expect(result.content).toContain(workspace);
  });

  it('errors for a directory, pointing at ls and Glob', async () => {
    await mkdir(path.join(workspace, 'dir'));
    const result = await executeTool('Read', { file_path: 'dir' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^EISDIR: .*dir is a directory, use Bash ls or Glob/);
  });

  it('errors for a binary file', async () => {
    await put('image.bin', Buffer.from([0x89, 0x50, 0x00, 0x01, 0x02]));
    const result = await executeTool('Read', { file_path: 'image.bin' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/binary/);
  });

  it.skipIf(isRoot)('errors when permission is denied', async () => {
    const filePath = await put('secret.txt', 'x');
    await chmod(filePath, 0o000);
    const result = await executeTool('Read', { file_path: filePath }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/permission denied/);
  });
});

describe('Write', () => {
  it('creates a file and its parent directories', async () => {
    const result = await executeTool('Write', { file_path: 'a/b/c.txt', content: 'hello\n' }, context());
    const filePath = path.join(workspace, 'a/b/c.txt');
    expect(result).toEqual({ isError: false, content: `File created successfully at: ${filePath}` });
    expect(await readFile(filePath, 'utf8')).toBe('hello\n');
  });

  it('overwrites an existing file', async () => {
    const filePath = await put('notes.md', 'old');
    const result = await executeTool('Write', { file_path: filePath, content: 'new' }, context());
    expect(result).toEqual({ isError: false, content: `The file ${filePath} has been updated successfully.` });
    expect(await readFile(filePath, 'utf8')).toBe('new');
  });

  it('errors when the path is a directory', async () => {
    await mkdir(path.join(workspace, 'dir'));
    const result = await executeTool('Write', { file_path: 'dir', content: 'x' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/EISDIR/);
  });

  it('turns fs errors into results instead of throwing', async () => {
    await put('file.txt', 'x');
    const result = await executeTool('Write', { file_path: 'file.txt/child.txt', content: 'x' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^Write failed: /);
  });

  it.skipIf(isRoot)('errors when permission is denied', async () => {
    const directory = path.join(workspace, 'locked');
    await mkdir(directory);
    await chmod(directory, 0o500);
    const result = await executeTool('Write', { file_path: 'locked/x.txt', content: 'x' }, context());
    await chmod(directory, 0o700);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/permission denied/);
  });
});

describe('Edit', () => {
  it('replaces a unique string and shows a numbered snippet', async () => {
    const filePath = await put('src/x.ts', 'const a = 1;\nconst b = 2;\nconst c = 3;\n');
    const result = await executeTool('Edit', { file_path: 'src/x.ts', old_string: 'const b = 2;', new_string: 'const b = 20;' }, context());
    expect(result.isError).toBe(false);
    expect(result.content).toContain(`The file ${filePath} has been updated.`);
    expect(result.content).toContain('     2\tconst b = 20;');
    expect(await readFile(filePath, 'utf8')).toBe('const a = 1;\nconst b = 20;\nconst c = 3;\n');
  });

  it('keeps $ patterns in new_string literal', async () => {
    const filePath = await put('x.txt', 'price: X\n');
    await executeTool('Edit', { file_path: filePath, old_string: 'X', new_string: '$& $1 $$' }, context());
    expect(await readFile(filePath, 'utf8')).toBe('price: $& $1 $$\n');
  });

  it('errors with the count when old_string is not unique', async () => {
    const filePath = await put('dup.txt', 'foo\nfoo\nfoo\n');
    const result = await executeTool('Edit', { file_path: filePath, old_string: 'foo', new_string: 'bar' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toContain('Found 3 matches');
    expect(result.content).toContain('replace_all');
    expect(await readFile(filePath, 'utf8')).toBe('foo\nfoo\nfoo\n');
  });

  it('replaces every occurrence with replace_all', async () => {
    const filePath = await put('dup.txt', 'foo\nfoo\nfoo\n');
    const result = await executeTool('Edit', { file_path: filePath, old_string: 'foo', new_string: 'bar', replace_all: true }, context());
    expect(result.isError).toBe(false);
    expect(result.content).toContain('All 3 occurrences');
    expect(await readFile(filePath, 'utf8')).toBe('bar\nbar\nbar\n');
  });

  it('errors when old_string is not found', async () => {
    const filePath = await put('x.txt', 'hello\n');
    const result = await executeTool('Edit', { file_path: filePath, old_string: 'bye', new_string: 'x' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/String to replace not found/);
  });

  it('errors when old_string equals new_string', async () => {
    const filePath = await put('x.txt', 'hello\n');
    const result = await executeTool('Edit', { file_path: filePath, old_string: 'hello', new_string: 'hello' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/No changes to make/);
  });

  it('errors for a missing file', async () => {
    const result = await executeTool('Edit', { file_path: 'missing.ts', old_string: 'a', new_string: 'b' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/File does not exist/);
  });

  it('creates a missing file when old_string is empty', async () => {
    const result = await executeTool('Edit', { file_path: 'new/file.ts', old_string: '', new_string: 'export {};\n' }, context());
    const filePath = path.join(workspace, 'new/file.ts');
    expect(result).toEqual({ isError: false, content: `File created successfully at: ${filePath}` });
    expect(await readFile(filePath, 'utf8')).toBe('export {};\n');
  });

  it('refuses an empty old_string on an existing non-empty file', async () => {
    const filePath = await put('x.txt', 'content\n');
    const result = await executeTool('Edit', { file_path: filePath, old_string: '', new_string: 'other' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/already exists/);
    expect(await readFile(filePath, 'utf8')).toBe('content\n');
  });

  it('matches LF old_string against a CRLF file', async () => {
    const filePath = await put('crlf.txt', 'one\r\ntwo\r\nthree\r\n');
    const result = await executeTool('Edit', { file_path: filePath, old_string: 'one\ntwo', new_string: 'uno\ndos' }, context());
    expect(result.isError).toBe(false);
    expect(await readFile(filePath, 'utf8')).toBe('uno\r\ndos\r\nthree\r\n');
  });
});

describe('Bash', () => {
  it('returns stdout', async () => {
    const result = await executeTool('Bash', { command: 'echo hello; pwd' }, context());
    expect(result).toEqual({ isError: false, content: `hello\n${workspace}` });
  });

  it('returns stdout then stderr', async () => {
    const result = await executeTool('Bash', { command: 'echo err >&2; echo out' }, context());
    expect(result).toEqual({ isError: false, content: 'out\nerr' });
  });

  it('reports a non-zero exit code as an error', async () => {
    const result = await executeTool('Bash', { command: 'echo partial; echo oops >&2; exit 3' }, context());
    expect(result).toEqual({ isError: true, content: 'partial\noops\nExit code 3' });
  });

  it('says so when there is no output', async () => {
    const result = await executeTool('Bash', { command: 'true' }, context());
    expect(result).toEqual({ isError: false, content: 'Tool ran without output or errors' });
  });

  it('has no stdin', async () => {
    const result = await executeTool('Bash', { command: 'cat; echo done' }, context());
    expect(result).toEqual({ isError: false, content: 'done' });
  });

  it('errors when the working directory does not exist', async () => {
    const result = await executeTool('Bash', { command: 'ls' }, context({ cwd: path.join(workspace, 'gone') }));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/Working directory does not exist/);
  });

  it('times out, kills the process group and keeps the partial output', async () => {
    let groupId = 0;
    const result = await executeTool(
      'Bash',
      { command: 'echo "pgid:$$"; sleep 30 & sleep 30', timeout: 500 },
      hostContext({
        onProgress: (chunk) => {
          const match = /pgid:(\d+)/.exec(chunk);
          if (match) groupId = Number(match[1]);
        },
      }),
    );
    expect(result.isError).toBe(true);
    expect(result.content).toContain('pgid:');
    expect(result.content).toContain('Command timed out after 500ms');
    expect(groupId).toBeGreaterThan(0);
    await waitFor(() => liveProcessesInGroup(groupId).length === 0, 5_000);
  }, 20_000);

  it('streams output through onProgress before the command ends', async () => {
    const chunks: string[] = [];
    let finished = false;
    const run = executeTool('Bash', { command: 'echo first; sleep 2; echo second' }, context({ onProgress: (chunk) => chunks.push(chunk) }));
    void run.then(() => {
      finished = true;
    });
    await waitFor(() => chunks.join('').includes('first'));
    expect(finished).toBe(false);
    expect(chunks.join('')).not.toContain('second');
    const result = await run;
    expect(result.content).toBe('first\nsecond');
    expect(chunks.join('')).toBe('first\nsecond\n');
  }, 20_000);

  it('on abort, kills the whole process group and throws', async () => {
    const controller = new AbortController();
    let output = '';
    const run = executeTool(
      'Bash',
      { command: 'echo "pgid:$$"; sleep 30 & echo "bg:$!"; sleep 30' },
      hostContext({ signal: controller.signal, onProgress: (chunk) => (output += chunk) }),
    );
    await waitFor(() => /bg:\d+/.test(output));
    const groupId = Number(/pgid:(\d+)/.exec(output)![1]);
    const backgroundPid = Number(/bg:(\d+)/.exec(output)![1]);
    // bash may exec the final `sleep` in place, so the group holds at least two live processes.
    await waitFor(() => liveProcessesInGroup(groupId).length >= 2);
    expect(isAlive(backgroundPid)).toBe(true);

    controller.abort();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    await waitFor(() => liveProcessesInGroup(groupId).length === 0, 5_000);
    expect(isAlive(groupId)).toBe(false);
    expect(isAlive(backgroundPid)).toBe(false);
  }, 20_000);

  it('kills SIGTERM-resistant children after the grace period', async () => {
    const controller = new AbortController();
    let output = '';
    const run = executeTool(
      'Bash',
      { command: `echo "pgid:$$"; bash -c 'trap "" TERM; echo ready; sleep 30' ; true` },
      hostContext({ signal: controller.signal, onProgress: (chunk) => (output += chunk) }),
    );
    await waitFor(() => output.includes('ready'));
    const groupId = Number(/pgid:(\d+)/.exec(output)![1]);
    controller.abort();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    await waitFor(() => liveProcessesInGroup(groupId).length === 0, 5_000);
  }, 20_000);

  it('does not hang on background jobs that keep the output pipes open', async () => {
    let output = '';
    const result = await executeTool('Bash', { command: 'echo "pgid:$$"; sleep 30 & echo started' }, hostContext({ onProgress: (chunk) => (output += chunk) }));
    expect(result.isError).toBe(false);
    expect(result.content).toContain('started');
    const groupId = Number(/pgid:(\d+)/.exec(output)![1]);
    await waitFor(() => liveProcessesInGroup(groupId).length === 0, 5_000);
  }, 20_000);

  it('stops background jobs with redirected output when the call returns (issue 12, defect 9)', async () => {
    const pidFile = path.join(workspace, 'bg.pid');
    const result = await executeTool('Bash', { command: `sleep 30 > /dev/null 2>&1 & echo $! > ${pidFile}` }, hostContext());
    expect(result).toEqual({
      isError: false,
      content: '[processes the command left running in the background were terminated when it finished]',
    });
    const pid = Number(await readFile(pidFile, 'utf8'));
    await waitFor(() => !isAlive(pid), 5_000);
  }, 20_000);
});

describe('Glob', () => {
  it('returns absolute paths, newest first', async () => {
    const older = await put('src/old.ts', '');
    const newer = await put('src/deep/new.ts', '');
    await put('src/readme.md', '');
    await age(older, 100);
    await age(newer, 10);
    const result = await executeTool('Glob', { pattern: '**/*.ts' }, context());
    expect(result).toEqual({ isError: false, content: `${newer}\n${older}` });
  });

  it('searches under path and matches only the top level for *.ts', async () => {
    const top = await put('src/a.ts', '');
    await put('src/nested/b.ts', '');
    await put('other/c.ts', '');
    const result = await executeTool('Glob', { pattern: '*.ts', path: 'src' }, context());
    expect(result).toEqual({ isError: false, content: top });
  });

  it('skips node_modules and .git unless the pattern names them', async () => {
    const mine = await put('index.js', '');
    const dependency = await put('node_modules/lib/index.js', '');
    await put('.git/hooks/pre-commit.js', '');
    expect((await executeTool('Glob', { pattern: '**/*.js' }, context())).content).toBe(mine);
    expect((await executeTool('Glob', { pattern: 'node_modules/**/*.js' }, context())).content).toBe(dependency);
  });

  it('says "No files found" when nothing matches', async () => {
    await put('a.txt', '');
    expect(await executeTool('Glob', { pattern: '**/*.rs' }, context())).toEqual({ isError: false, content: 'No files found' });
  });

  it('caps results at 100 with a truncation note', async () => {
    for (let index = 0; index < 120; index += 1) await put(`many/f${index}.txt`, '');
    const result = await executeTool('Glob', { pattern: 'many/*.txt' }, context());
    const lines = result.content.split('\n');
    expect(lines).toHaveLength(101);
    expect(lines[100]).toMatch(/truncated.*100 of 120/);
  });

  it('errors for a missing directory', async () => {
    const result = await executeTool('Glob', { pattern: '*', path: 'missing' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/Directory does not exist/);
  });

  it('takes globs in ripgrep syntax: braces, classes, globstars, anchored at the search directory', async () => {
    const nested = await put('a/b/c.tsx', '');
    const top = await put('c.ts', '');
    await put('c.js', '');
    const seven = await put('file7.txt', '');
    await put('filex.txt', '');
    const names = async (pattern: string) => (await executeTool('Glob', { pattern }, context())).content.split('\n').sort();
    expect(await names('**/*.{ts,tsx}')).toEqual([nested, top].sort());
    expect(await names('*.{ts,tsx}')).toEqual([top]);
    expect(await names('file[0-9].txt')).toEqual([seven]);
    expect(await names('file[!0-9].txt')).toEqual([path.join(workspace, 'filex.txt')]);
    expect(await names('c.?s')).toEqual([path.join(workspace, 'c.js'), top].sort());
    expect(await names('a/**')).toEqual([nested]);
  });
});

describe('Grep', () => {
  async function fixture() {
    const app = await put('src/app.ts', 'const x = 1; // TODO fix\nconsole.log(x);\n// todo later\n');
    const util = await put('src/util.ts', 'export const TODO = true;\n');
    const readme = await put('README.md', 'No todos here\n');
    await put('node_modules/dep/index.ts', 'TODO in dependency\n');
    await put('.git/config', 'TODO in git\n');
    await put('blob.bin', Buffer.concat([Buffer.from('TODO'), Buffer.from([0, 1, 2])]));
    await age(app, 50);
    await age(util, 10);
    return { app, util, readme };
  }

  it('lists matching files newest first by default, skipping .git, node_modules and binaries', async () => {
    const { app, util } = await fixture();
    const result = await executeTool('Grep', { pattern: 'TODO' }, context());
    expect(result).toEqual({ isError: false, content: `Found 2 files\n${util}\n${app}` });
  });

  it('is case-insensitive with -i', async () => {
    const { readme } = await fixture();
    const result = await executeTool('Grep', { pattern: 'todo', '-i': true }, context());
    expect(result.content).toMatch(/^Found 3 files\n/);
    expect(result.content).toContain(readme);
  });

  it('shows matching lines in content mode, with line numbers when -n', async () => {
    const { app } = await fixture();
    const withNumbers = await executeTool('Grep', { pattern: 'TODO|todo', path: 'src/app.ts', output_mode: 'content', '-n': true }, context());
    expect(withNumbers.content).toBe(`${app}:1:const x = 1; // TODO fix\n${app}:3:// todo later`);
    // Line numbers by default, as Claude Code's Grep; -n: false leaves them out.
    const byDefault = await executeTool('Grep', { pattern: 'console', output_mode: 'content' }, context());
    expect(byDefault.content).toBe(`${app}:2:console.log(x);`);
    const withoutNumbers = await executeTool('Grep', { pattern: 'console', output_mode: 'content', '-n': false }, context());
    expect(withoutNumbers.content).toBe(`${app}:console.log(x);`);
  });

  it('counts matching lines per file', async () => {
    const { app, util } = await fixture();
    const result = await executeTool('Grep', { pattern: 'todo', '-i': true, path: 'src', output_mode: 'count' }, context());
    expect(result.content).toBe(`${app}:2\n${util}:1\n\nFound 3 total occurrences across 2 files.`);
  });

  it('filters files with glob', async () => {
    const { util, app } = await fixture();
    const result = await executeTool('Grep', { pattern: 'TODO', glob: '*.{ts,tsx}' }, context());
    expect(result.content).toBe(`Found 2 files\n${util}\n${app}`);
    const none = await executeTool('Grep', { pattern: 'TODO', glob: '*.md' }, context());
    expect(none.content).toBe('No files found');
    const byPath = await executeTool('Grep', { pattern: 'TODO', glob: 'src/util.*' }, context());
    expect(byPath.content).toBe(`Found 1 file\n${util}`);
  });

  it('applies head_limit', async () => {
    await fixture();
    const content = await executeTool('Grep', { pattern: '.', output_mode: 'content', head_limit: 2 }, context());
    expect(content.content.split('\n')).toHaveLength(3);
    expect(content.content.split('\n')[2]).toBe('[more lines follow: showing lines 1–2; use offset to see more]');
    const files = await executeTool('Grep', { pattern: 'TODO', head_limit: 1 }, context());
    expect(files.content.split('\n')).toHaveLength(2);
    expect(files.content).toMatch(/^Found 2 files \(showing first 1\)/);
  });

  it('returns "No matches found" in content mode when nothing matches', async () => {
    await fixture();
    const result = await executeTool('Grep', { pattern: 'zzz', output_mode: 'content' }, context());
    expect(result).toEqual({ isError: false, content: 'No matches found' });
  });

  it('reports an invalid regex as an error result', async () => {
    const result = await executeTool('Grep', { pattern: 'foo(' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^Invalid regular expression: foo\( — unclosed group\. Patterns use Rust regex syntax/);
  });

  it('errors for a missing path', async () => {
    const result = await executeTool('Grep', { pattern: 'x', path: 'missing' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/Path does not exist/);
  });
});
