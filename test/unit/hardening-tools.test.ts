/**
 * Issue 12 regression tests for the tools: inputs that crashed or froze the worker (1, 2), leaked
 * its credentials (4), blocked in the OS beyond abort's reach (6), or left processes running (9).
 */
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeTool, type ToolExecutionContext } from '../../activities/tools';
import { EDIT_MAX_FILE_BYTES } from '../../activities/tools/edit';
import { PCRE2_TIME_LIMIT_MS } from '../../activities/tools/ripgrep';

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), 'durable-agent-hardening-'));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

function context(overrides: Partial<ToolExecutionContext> = {}): ToolExecutionContext {
  return { cwd: workspace, signal: new AbortController().signal, ...overrides };
}

/** A file of `size` bytes: `head`, then a hole (NUL bytes on read, no disk space used). */
async function sparseFile(name: string, head: string, size: number): Promise<string> {
  const filePath = path.join(workspace, name);
  await writeFile(filePath, head);
  await truncate(filePath, size);
  return filePath;
}

/** Counts event-loop turns while `work` runs: zero means the loop was blocked throughout. */
async function withTickCounter<T>(work: () => Promise<T>): Promise<{ value: T; ticks: number; maxGapMs: number }> {
  let ticks = 0;
  let last = performance.now();
  let maxGapMs = 0;
  const interval = setInterval(() => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
    ticks += 1;
  }, 20);
  try {
    const value = await work();
    maxGapMs = Math.max(maxGapMs, performance.now() - last);
    return { value, ticks, maxGapMs };
  } finally {
    clearInterval(interval);
  }
}

describe('defect 1: huge files do not kill the worker', () => {
  it('Read of a 600 MB file with no newline cuts the line and says so', async () => {
    // Past V8's longest string (~512 MB): the old line reader threw an uncaught RangeError.
    const filePath = await sparseFile('one-line.txt', 'a'.repeat(8192 + 100), 600 * 1024 * 1024);
    const result = await executeTool('Read', { file_path: filePath }, context());
    expect(result.isError).toBe(false);
    expect(result.content).toMatch(/^ {5}1\ta{2000}… \[line truncated: 629145600 bytes\]$/);
  }, 60_000);

  it('Read still reads the lines after a long one, and CRLF files', async () => {
    const filePath = path.join(workspace, 'mixed.txt');
    await writeFile(filePath, `${'x'.repeat(50_000)}\r\nsecond\r\nthird`);
    const result = await executeTool('Read', { file_path: filePath, offset: 2 }, context());
    expect(result).toEqual({ isError: false, content: '     2\tsecond\n     3\tthird' });
  });

  it('Edit refuses a file over its size limit with a clear error', async () => {
    const filePath = await sparseFile('big.txt', 'hello world\n'.repeat(1000), EDIT_MAX_FILE_BYTES + 1);
    const result = await executeTool('Edit', { file_path: filePath, old_string: 'hello', new_string: 'bye', replace_all: true }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toContain(`over Edit's limit of ${EDIT_MAX_FILE_BYTES} bytes`);
  }, 30_000);

  it('Grep searches a file far over the old 20 MB limit, and cuts its long lines', async () => {
    // 64 MB of text (not sparse: NUL bytes would make it binary), the needle on its last line.
    const filePath = path.join(workspace, 'huge.log');
    const handle = await open(filePath, 'w');
    const block = `${'filler line of text\n'.repeat(50_000)}`;
    for (let written = 0; written < 64 * 1024 * 1024; written += block.length) await handle.write(block);
    await handle.write(`${'x'.repeat(5_000)} needle\n`);
    await handle.close();
    const files = await executeTool('Grep', { pattern: 'needle' }, context());
    expect(files).toEqual({ isError: false, content: `Found 1 file\n${filePath}` });
    const content = await executeTool('Grep', { pattern: 'needle', output_mode: 'content' }, context());
    expect(content.isError).toBe(false);
    expect(content.content.startsWith(`${filePath}:`)).toBe(true);
    // The 5 kB line is cut at Read's line length with ripgrep's preview marker.
    expect(content.content.length).toBeLessThan(2_200 + filePath.length);
    expect(content.content).toMatch(/omitted|more match/);
  }, 60_000);
});

describe('defect 2: searches do not block the event loop', () => {
  it('a pattern that backtracks in JavaScript runs in linear time on ripgrep', async () => {
    // `^(a+)+$` on 30 a's and a `!` ran ~42 s on the old JavaScript search (issue 12, defect 2).
    await writeFile(path.join(workspace, 'evil.txt'), `${'a'.repeat(30)}!\n${'a'.repeat(30)}\n`);
    const { value: result, maxGapMs } = await withTickCounter(() => executeTool('Grep', { pattern: '^(a+)+$', output_mode: 'content', '-n': true }, context()));
    expect(result).toEqual({ isError: false, content: `${path.join(workspace, 'evil.txt')}:2:${'a'.repeat(30)}` });
    expect(maxGapMs).toBeLessThan(2_000);
  });

  it('a PCRE2 search (look-around) keeps a time limit; the event loop keeps turning meanwhile', async () => {
    // A FIFO named as the path: ripgrep reads it and blocks, as a runaway backtracking search would.
    const fifo = path.join(workspace, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const { value: result, ticks } = await withTickCounter(() => executeTool('Grep', { pattern: '(?<=a)b', path: fifo, output_mode: 'content' }, context()));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/ran longer than 5 s.*PCRE2/);
    expect(ticks).toBeGreaterThan(PCRE2_TIME_LIMIT_MS / 20 / 4);
  }, 60_000);

  it('Grep still finds matches, glob filter included', async () => {
    await mkdir(path.join(workspace, 'src'), { recursive: true });
    await writeFile(path.join(workspace, 'src', 'a.ts'), 'const x = 1;\nconst needle = 2;\n');
    await writeFile(path.join(workspace, 'src', 'b.md'), 'needle\n');
    const result = await executeTool('Grep', { pattern: 'need+le', glob: '*.ts', output_mode: 'content', '-n': true }, context());
    expect(result).toEqual({ isError: false, content: `${path.join(workspace, 'src', 'a.ts')}:2:const needle = 2;` });
  });

  it('Abort stops a running Grep search promptly (ripgrep is killed)', async () => {
    const fifo = path.join(workspace, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const controller = new AbortController();
    const started = performance.now();
    const run = executeTool('Grep', { pattern: 'x', path: fifo }, context({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 300);
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(performance.now() - started).toBeLessThan(5_000);
  }, 60_000);

  it('a Glob of repeated **/ on a deep tree does not block the event loop', async () => {
    const deep = path.join(workspace, ...Array.from({ length: 30 }, () => 'd'));
    await mkdir(deep, { recursive: true });
    await writeFile(path.join(deep, 'y'), '');
    const pattern = `${'**/'.repeat(10)}x`;
    const { value: result, maxGapMs } = await withTickCounter(() => executeTool('Glob', { pattern }, context()));
    expect(result).toEqual({ isError: false, content: 'No files found' });
    expect(maxGapMs).toBeLessThan(2_000);
  }, 120_000);
});

describe('defect 4: tool processes run without the worker credentials', () => {
  const secrets: Record<string, string> = {
    ANTHROPIC_API_KEY: 'sk-ant-secret',
    ANTHROPIC_AUTH_TOKEN: 'auth-secret',
    TEMPORAL_API_KEY: 'temporal-secret',
    TEMPORAL_TLS_CLIENT_KEY_PATH: '/secret/client.key',
    TEMPORAL_TLS_CLIENT_CERT_PATH: '/secret/client.pem',
    DURABLE_AGENT_ENCRYPTION_KEY: 'encryption-secret',
    DURABLE_AGENT_ENCRYPTION_KEY_FILE: '/secret/key',
    MY_COMPANY_TOKEN: 'company-secret',
    CORP_VAULT_ADDR: 'vault-secret',
  };
  const saved: Record<string, string | undefined> = {};

  beforeEach(() => {
    for (const name of [...Object.keys(secrets), 'DURABLE_AGENT_TOOL_ENV_DENYLIST', 'HARDENING_KEPT']) saved[name] = process.env[name];
    Object.assign(process.env, secrets, { DURABLE_AGENT_TOOL_ENV_DENYLIST: 'MY_COMPANY_TOKEN, CORP_*', HARDENING_KEPT: 'visible' });
  });

  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('Bash env shows none of them, while the worker has them', async () => {
    expect(process.env.ANTHROPIC_API_KEY).toBe('sk-ant-secret');
    const result = await executeTool('Bash', { command: 'env' }, context());
    expect(result.isError).toBe(false);
    expect(result.content).toContain('HARDENING_KEPT=visible');
    for (const [name, value] of Object.entries(secrets)) {
      expect(result.content).not.toContain(`${name}=`);
      expect(result.content).not.toContain(value);
    }
  });
});

describe('defect 6: file tools refuse non-regular files', () => {
  let fifo: string;

  beforeEach(() => {
    fifo = path.join(workspace, 'pipe');
    execFileSync('mkfifo', [fifo]);
  });

  afterEach(async () => {
    // Were a tool blocked opening the FIFO, this releases it (O_RDWR never blocks on Linux).
    const handle = await open(fifo, constants.O_RDWR | constants.O_NONBLOCK).catch(() => undefined);
    await handle?.close();
  });

  it('Write to a named pipe is refused instead of blocking', async () => {
    const result = await executeTool('Write', { file_path: fifo, content: 'data' }, context());
    expect(result).toEqual({ isError: true, content: `Cannot write ${fifo}: it is a named pipe (FIFO), not a regular file.` });
  }, 10_000);

  it('Read and Edit of a named pipe are refused', async () => {
    const read = await executeTool('Read', { file_path: fifo }, context());
    expect(read).toEqual({ isError: true, content: `Cannot read ${fifo}: it is a named pipe (FIFO), not a regular file.` });
    const edit = await executeTool('Edit', { file_path: fifo, old_string: 'a', new_string: 'b' }, context());
    expect(edit).toEqual({ isError: true, content: `Cannot edit ${fifo}: it is a named pipe (FIFO), not a regular file.` });
  }, 10_000);

  it('Write through a symlink to a device is refused', async () => {
    const link = path.join(workspace, 'null-link');
    execFileSync('ln', ['-s', '/dev/null', link]);
    const result = await executeTool('Write', { file_path: link, content: 'data' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).toContain('character device');
  });
});

/** Pids of live processes whose command line is exactly `sleep <seconds>`. */
async function sleepers(seconds: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const commandLine = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    const status = await readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
    if (commandLine === `sleep\0${seconds}\0` && !/^State:\s+Z/m.test(status)) found.push(Number(entry));
  }
  return found;
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('defect 9: background processes do not outlive their command', () => {
  it.each([
    ['nohup', 'nohup sleep 301.25 > /dev/null 2>&1 &', '301.25'],
    ['setsid', 'setsid sleep 302.25 > /dev/null 2>&1 < /dev/null &', '302.25'],
    ['exec and disown', '(true; exec sleep 304.25) > /dev/null 2>&1 & disown', '304.25'],
    ['setsid with a fork', 'setsid -f sleep 305.25 > /dev/null 2>&1 < /dev/null', '305.25'],
  ])(
    '%s',
    async (_name, command, seconds) => {
      const result = await executeTool('Bash', { command: `${command}\nsleep 0.3; echo started` }, context());
      expect(result).toMatchObject({ isError: false });
      try {
        await waitFor(async () => (await sleepers(seconds)).length === 0, 5_000);
      } finally {
        for (const pid of await sleepers(seconds)) process.kill(pid, 'SIGKILL');
      }
    },
    20_000,
  );
});
