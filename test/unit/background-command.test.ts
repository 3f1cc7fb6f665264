/**
 * Issue 21 §1: background Bash with real processes, real files and (where installed) the real
 * bubblewrap sandbox. A supervisor that is abandoned and started again from fresh module state
 * stands for a worker that died: it must re-attach through the record, never start the command
 * again, and report a command whose process is gone without an exit status as interrupted.
 */
import { execSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type BackgroundRecord,
  backgroundPaths,
  readTaskOutput,
  startBackgroundCommand,
  stopBackgroundCommand,
  superviseBackgroundCommand,
} from '../../activities/background/background-command';
import type { BackgroundTaskRef } from '../../common/background';

const sandboxed =
  process.env.DURABLE_AGENT_SANDBOX !== 'off' && ['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'].some((candidate) => existsSync(candidate));

let base: string;
let workspace: string;
let stateDir: string;
let counter = 0;

beforeAll(async () => {
  // Under /var/tmp: the sandbox's /tmp is private.
  base = await mkdtemp('/var/tmp/durable-agent-background-');
  workspace = path.join(base, 'workspace');
  stateDir = path.join(base, 'state');
  await mkdir(workspace, { recursive: true });
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

function ref(): BackgroundTaskRef {
  return { conversationId: 'conversation-bg', taskId: `task-${++counter}`, cwd: workspace };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function record(task: BackgroundTaskRef): Promise<BackgroundRecord> {
  return JSON.parse(await readFile(backgroundPaths(stateDir, task).record, 'utf8')) as BackgroundRecord;
}

describe('background commands', () => {
  it('returns at once, then reports the exit code and the output (stdout and stderr) of a finished command', async () => {
    const task = ref();
    const started = await startBackgroundCommand({ stateDir }, { ...task, command: 'sleep 1; echo hello; echo oops >&2; exit 3' });
    // Returned while the command still runs: no exit status yet.
    expect(existsSync(backgroundPaths(stateDir, task).status)).toBe(false);
    expect(started.refusal).toBeUndefined();
    expect(started.alreadyStarted).toBe(false);
    expect((await record(task)).sandbox).toMatch(sandboxed ? /^sandboxed/ : /^unsandboxed/);
    const outcome = await superviseBackgroundCommand({ stateDir }, task, { pollMs: 100 });
    expect(outcome).toMatchObject({ status: 'failed', exitCode: 3, outputPath: started.outputPath });
    expect(outcome.tail).toContain('hello');
    expect(outcome.tail).toContain('oops');
    expect(await readFile(started.outputPath, 'utf8')).toBe('hello\noops\n');

    const ok = ref();
    await startBackgroundCommand({ stateDir }, { ...ok, command: 'true' });
    expect(await superviseBackgroundCommand({ stateDir }, ok, { pollMs: 50 })).toMatchObject({ status: 'completed', exitCode: 0, tail: '' });
  });

  it('is idempotent per task id: a retried start starts nothing', async () => {
    const task = ref();
    const input = { ...task, command: 'echo run >> runs.txt; sleep 0.5' };
    const first = await startBackgroundCommand({ stateDir }, input);
    const second = await startBackgroundCommand({ stateDir }, input);
    expect(second).toMatchObject({ alreadyStarted: true, outputPath: first.outputPath });
    await superviseBackgroundCommand({ stateDir }, task, { pollMs: 50 });
    expect(await readFile(path.join(workspace, 'runs.txt'), 'utf8')).toBe('run\n');
  });

  it('TaskOutput: not_ready without blocking, timeout when blocking too short, success once done', async () => {
    const task = ref();
    await startBackgroundCommand({ stateDir }, { ...task, command: 'echo partial; sleep 1.5; echo finished' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const now = await readTaskOutput({ stateDir }, { ...task, block: false });
    expect(now).toMatchObject({ retrievalStatus: 'not_ready', status: 'running' });
    expect(now.output).toContain('partial');
    const short = await readTaskOutput({ stateDir }, { ...task, block: true, timeout: 200 });
    expect(short).toMatchObject({ retrievalStatus: 'timeout', status: 'running' });
    const done = await readTaskOutput({ stateDir }, { ...task, block: true, timeout: 10_000 });
    expect(done).toMatchObject({ retrievalStatus: 'success', status: 'completed', exitCode: 0 });
    expect(done.content).toContain('<status>completed</status>');
    expect(done.output).toBe('partial\nfinished\n');
  });

  it('TaskStop kills the whole process group (SIGTERM, then SIGKILL) and the task is reported killed', async () => {
    const task = ref();
    // The trap makes the command ignore SIGTERM, so only the SIGKILL after the grace ends it.
    await startBackgroundCommand({ stateDir }, { ...task, command: "trap '' TERM; sleep 60 & sleep 60; wait" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { pid } = await record(task);
    expect(isAlive(pid!)).toBe(true);
    const stopped = await stopBackgroundCommand({ stateDir }, task, 500);
    expect(stopped.result).toBe('stopped');
    const outcome = await superviseBackgroundCommand({ stateDir }, task, { pollMs: 50 });
    expect(outcome.status).toBe('killed');
    expect(isAlive(pid!)).toBe(false);
    // A sandbox leaves its init a zombie for the host init to reap (activities/shell.ts); nothing may still run.
    const members = execSync(`ps -eo pid,pgid,stat,comm | awk '$2 == ${pid} && $3 !~ /^Z/' || true`).toString();
    expect(members, members).toBe('');
    expect((await stopBackgroundCommand({ stateDir }, task)).result).toBe('already-ended');
  });

  it('re-attaches after its supervisor was abandoned, from fresh module state, without starting the command again', async () => {
    const task = ref();
    await startBackgroundCommand({ stateDir }, { ...task, command: 'echo started >> attach.txt; sleep 1.5; echo done' });
    const abandon = new AbortController();
    const firstSupervisor = superviseBackgroundCommand({ stateDir }, task, { pollMs: 50, signal: abandon.signal });
    setTimeout(() => abandon.abort(new Error('worker died')), 300);
    await expect(firstSupervisor).rejects.toThrow('worker died');

    vi.resetModules();
    const fresh = await import('../../activities/background/background-command');
    const heartbeats: number[] = [];
    const outcome = await fresh.superviseBackgroundCommand({ stateDir }, task, { pollMs: 50, heartbeat: ({ outputBytes }) => heartbeats.push(outputBytes) });
    expect(outcome).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(outcome.tail).toBe('done\n');
    expect(heartbeats.length).toBeGreaterThan(3);
    expect(await readFile(path.join(workspace, 'attach.txt'), 'utf8')).toBe('started\n');
  });

  it('reports a command killed outside the agent (no exit status) as interrupted', async () => {
    const task = ref();
    await startBackgroundCommand({ stateDir }, { ...task, command: 'sleep 60' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { pid } = await record(task);
    process.kill(-pid!, 'SIGKILL'); // the wrapper too: as when the host's OOM killer or a reboot takes it
    const outcome = await superviseBackgroundCommand({ stateDir }, task, { pollMs: 50 });
    expect(outcome.status).toBe('interrupted');
    expect(outcome.exitCode).toBeUndefined();
    expect(outcome.detail).toMatch(/left no exit status/);
  });

  it('does not mistake a reused pid for the command (start time guard)', async () => {
    const task = ref();
    await startBackgroundCommand({ stateDir }, { ...task, command: 'sleep 60' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const original = await record(task);
    process.kill(-original.pid!, 'SIGKILL');
    // Another process now holds the recorded pid (played by a live one: the kernel reuses pids only eventually).
    const stranger = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await writeFile(backgroundPaths(stateDir, task).record, JSON.stringify({ ...original, pid: stranger.pid }));
      const outcome = await superviseBackgroundCommand({ stateDir }, task, { pollMs: 50 });
      expect(outcome.status).toBe('interrupted');
      expect(isAlive(stranger.pid!)).toBe(true);
      // And TaskStop does not kill the stranger.
      expect((await stopBackgroundCommand({ stateDir }, task)).result).toBe('already-ended');
      expect(isAlive(stranger.pid!)).toBe(true);
    } finally {
      stranger.kill('SIGKILL');
    }
  });

  it('an attempt that died between claiming the task and recording its process is reported, not run again', async () => {
    const task = ref();
    const paths = backgroundPaths(stateDir, task);
    await mkdir(paths.directory, { recursive: true });
    const claim = {
      version: 1,
      ...task,
      command: 'echo ran >> claimed.txt',
      host: 'h',
      marker: 'DURABLE_AGENT_SHELL_RUN_ID=background-never',
      outputPath: paths.output,
      startedAt: new Date().toISOString(),
      sandbox: 'x',
    };
    await writeFile(paths.claim, JSON.stringify(claim));
    const retried = await startBackgroundCommand({ stateDir }, { ...task, command: claim.command });
    expect(retried.alreadyStarted).toBe(true);
    const outcome = await superviseBackgroundCommand({ stateDir }, task, { pollMs: 50 });
    expect(outcome.status).toBe('interrupted');
    expect(outcome.detail).toMatch(/not started again/);
    expect(existsSync(path.join(workspace, 'claimed.txt'))).toBe(false);
  });

  it('rejects a task id that is not a safe file name', async () => {
    const result = await startBackgroundCommand({ stateDir }, { conversationId: 'c', taskId: '../escape', cwd: workspace, command: 'true' });
    expect(result.refusal).toMatch(/Invalid background task id/);
    await expect(superviseBackgroundCommand({ stateDir }, { conversationId: 'c', taskId: '../escape', cwd: workspace })).rejects.toThrow(/Invalid/);
  });

  it('a supervisor on a host that never started the task reports it interrupted', async () => {
    const outcome = await superviseBackgroundCommand({ stateDir }, { conversationId: 'elsewhere', taskId: 'missing', cwd: workspace });
    expect(outcome).toMatchObject({ status: 'interrupted' });
    expect(outcome.detail).toMatch(/was started on this worker host/);
  });
  it.runIf(sandboxed)(
    'runs in the same sandbox as Bash: nothing outside the workspace is writable, its control files are hidden, its output readable',
    async () => {
      const task = ref();
      const outside = path.join(base, 'outside.txt');
      const paths = backgroundPaths(stateDir, task);
      await startBackgroundCommand(
        { stateDir },
        {
          ...task,
          command: `echo x > ${outside}; test -e ${paths.record} && echo record-visible || echo record-hidden; test -r ${paths.output} && echo output-readable; echo inside > inside.txt`,
        },
      );
      const outcome = await superviseBackgroundCommand({ stateDir }, task, { pollMs: 50 });
      expect(existsSync(outside)).toBe(false);
      expect(outcome.tail).toMatch(/Read-only file system/);
      expect(outcome.tail).toMatch(/^record-hidden$/m);
      expect(outcome.tail).toMatch(/^output-readable$/m);
      expect(await readFile(path.join(workspace, 'inside.txt'), 'utf8')).toBe('inside\n');
    },
  );
});
