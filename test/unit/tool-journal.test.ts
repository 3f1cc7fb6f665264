/**
 * Issue 24: the tool journal tells "recorded, not started" (run it) from "started" (a command: at
 * most once; a file write: exactly once, by the file's content). Activity-level, with real files:
 * the first attempt "dies" at a chosen point — its tool stops right there and its runner throws
 * without another journal write, which leaves the journal and the file as a killed worker would —
 * and a second attempt on a fresh runner resumes from what it finds.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunToolInput, RunToolResult } from '../../common/activity-types';
import { type RunToolDeps, createToolRunner } from '../../activities/run-tool';
import { type JournalEntry, ToolJournal, resumption, workspaceStateDir } from '../../activities/tool-journal';
import { createCheckpointStore } from '../../activities/checkpoints/store';
import { executeTool } from '../../activities/tools';

let root: string;
let workspace: string;
let stateDir: string;
const savedSandbox = process.env.DURABLE_AGENT_SANDBOX;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'durable-agent-journal-'));
  workspace = path.join(root, 'workspace');
  stateDir = path.join(root, 'state');
  await mkdir(workspace);
  process.env.DURABLE_AGENT_SANDBOX = 'off'; // the journal is the subject here, not the sandbox
});

afterEach(async () => {
  if (savedSandbox === undefined) delete process.env.DURABLE_AGENT_SANDBOX;
  else process.env.DURABLE_AGENT_SANDBOX = savedSandbox;
  await rm(root, { recursive: true, force: true });
});

class WorkerDied extends Error {}

function call(name: string, input: unknown, toolUseId = 'toolu_journal_01'): RunToolInput {
  return { conversationId: 'conversation-24', toolUseId, name, input, cwd: workspace, maxResultSizeChars: 100_000 };
}

/**
 * The first attempt, dying at `point`: before its effect began (the journal says `recorded`) or
 * just after the journal recorded the start (`started`, the file not yet written).
 */
async function dieAt(point: 'before-start' | 'after-start', input: RunToolInput): Promise<void> {
  const died = new AbortController();
  const dying: RunToolDeps['executeTool'] = (name, toolInput, context) =>
    executeTool(name, toolInput, {
      ...context,
      beginEffect: async (effect) => {
        if (point === 'after-start') await context.beginEffect!(effect);
        died.abort(new WorkerDied(`died ${point}`));
        died.signal.throwIfAborted();
      },
    });
  const runner = createToolRunner({ stateDir, executeTool: dying });
  await expect(
    new MockActivityEnvironment({ attempt: 1 }).run((toolInput: RunToolInput) => runner.runToolToResult(toolInput, died.signal), input),
  ).rejects.toThrow(WorkerDied);
}

/** The retry, on a fresh runner (another worker). */
async function retry(input: RunToolInput): Promise<RunToolResult> {
  const runner = createToolRunner({ stateDir, executeTool });
  return new MockActivityEnvironment({ attempt: 2 }).run((toolInput: RunToolInput) => runner.runToolToResult(toolInput), input);
}

async function journalEntry(input: RunToolInput): Promise<JournalEntry | undefined> {
  return new ToolJournal(stateDir).get(workspace, input.conversationId, input.toolUseId);
}

async function journalStatus(input: RunToolInput): Promise<string | undefined> {
  return (await journalEntry(input))?.status;
}

const file = (name: string) => path.join(workspace, name);

describe('recorded, not started: the retry runs the call', () => {
  it('a Write whose worker died before writing is written by the retry', async () => {
    const input = call('Write', { file_path: 'notes.txt', content: 'step 1\n' });
    await dieAt('before-start', input);
    expect(await journalStatus(input)).toBe('recorded');
    await expect(readFile(file('notes.txt'), 'utf8')).rejects.toThrow(/ENOENT/);

    const result = await retry(input);
    expect(result).toMatchObject({ isError: false, content: `File created successfully at: ${file('notes.txt')}` });
    expect(result.fromJournal).toBeUndefined();
    expect(await readFile(file('notes.txt'), 'utf8')).toBe('step 1\n');
    expect(await journalStatus(input)).toBe('finished');
  });

  it('a Bash append whose worker died before the command started runs once on retry (the measured bug)', async () => {
    const input = call('Bash', { command: 'echo appended >> log.txt' });
    await dieAt('before-start', input);
    await expect(readFile(file('log.txt'), 'utf8')).rejects.toThrow(/ENOENT/);

    const result = await retry(input);
    expect(result.isError).toBe(false);
    expect(result.content).not.toContain('interrupted');
    expect(await readFile(file('log.txt'), 'utf8')).toBe('appended\n');
    // And a third attempt is answered by the journal: still once.
    expect(await retry(input)).toMatchObject({ fromJournal: true });
    expect(await readFile(file('log.txt'), 'utf8')).toBe('appended\n');
  });
});

describe('started: a command runs at most once', () => {
  it('a Bash command whose start was recorded is not run again; the model is told', async () => {
    const input = call('Bash', { command: 'echo appended >> log.txt' });
    await dieAt('after-start', input);
    expect(await journalStatus(input)).toBe('started');

    const result = await retry(input);
    expect(result).toMatchObject({ isError: true, fromJournal: true });
    expect(result.content).toContain('may have partly run. It was not run again.');
    // Unsandboxed, it is not contained: the answer names the checkpoint taken before it (issue 31).
    const { checkpointId } = (await journalEntry(input))!;
    expect(checkpointId).toMatch(/^[0-9a-f]{40}$/);
    expect(result.checkpointId).toBe(checkpointId);
    expect(result.content).toContain(`The workspace checkpoint ${checkpointId} taken before it holds the workspace as it was`);
    await expect(readFile(file('log.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('an entry from before phases (started, no effect) keeps the old at-most-once answer', async () => {
    const input = call('Write', { file_path: 'old.txt', content: 'new\n' });
    await new ToolJournal(stateDir).put(workspace, {
      toolUseId: input.toolUseId,
      conversationId: input.conversationId,
      name: 'Write',
      input: input.input,
      status: 'started',
      attempt: 1,
      startedAt: new Date().toISOString(),
    });
    const result = await retry(input);
    expect(result).toMatchObject({ isError: true, fromJournal: true });
    expect(result.content).toContain('It was not run again.');
    await expect(readFile(file('old.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
  });
});

describe('started: a file edit happens exactly once, decided by the file content', () => {
  const edit = () => call('Edit', { file_path: 'greeting.txt', old_string: 'hello', new_string: 'hello, world' });

  it('the file still holds the old text: the retry makes the edit', async () => {
    await writeFile(file('greeting.txt'), 'hello\n');
    await dieAt('after-start', edit());
    expect(await journalStatus(edit())).toBe('started');
    expect(await readFile(file('greeting.txt'), 'utf8')).toBe('hello\n');

    const result = await retry(edit());
    expect(result.isError).toBe(false);
    expect(result.content).toContain(`The file ${file('greeting.txt')} has been updated.`);
    expect(await readFile(file('greeting.txt'), 'utf8')).toBe('hello, world\n');
  });

  it('the file already holds the new text: the retry finishes with the recorded result and does not edit again', async () => {
    await writeFile(file('greeting.txt'), 'hello\n');
    await dieAt('after-start', edit());
    await writeFile(file('greeting.txt'), 'hello, world\n'); // the write landed before the worker died

    const result = await retry(edit());
    expect(result).toMatchObject({ isError: false, fromJournal: true });
    expect(result.content).toContain('has been updated');
    // Run again, the edit would have made "hello, world, world".
    expect(await readFile(file('greeting.txt'), 'utf8')).toBe('hello, world\n');
    expect(await journalStatus(edit())).toBe('finished');
  });

  it('the file holds a third content: a conflict for the model, the file left alone', async () => {
    await writeFile(file('greeting.txt'), 'hello\n');
    await dieAt('after-start', edit());
    await writeFile(file('greeting.txt'), 'hello there\n'); // someone else changed it meanwhile

    const result = await retry(edit());
    expect(result).toMatchObject({ isError: true, fromJournal: true });
    expect(result.content).toContain('holds neither what it held before the call nor what the call meant to write');
    expect(await readFile(file('greeting.txt'), 'utf8')).toBe('hello there\n');
  });

  it('a Write cut after it truncated the file (a prefix of the new content) is finished', async () => {
    await writeFile(file('report.txt'), 'old report\n');
    const input = call('Write', { file_path: 'report.txt', content: 'new report, line 1\nline 2\n' });
    await dieAt('after-start', input);
    await writeFile(file('report.txt'), 'new report, li'); // truncated, then part of the write

    const result = await retry(input);
    expect(result).toMatchObject({ isError: false, fromJournal: true, content: `The file ${file('report.txt')} has been updated successfully.` });
    expect(await readFile(file('report.txt'), 'utf8')).toBe('new report, line 1\nline 2\n');
  });

  it('a Write of a new file whose retry finds it absent creates it; found created, leaves it', async () => {
    const input = call('Write', { file_path: 'fresh.txt', content: 'fresh\n' }, 'toolu_journal_fresh');
    await dieAt('after-start', input);
    expect(await retry(input)).toMatchObject({ isError: false, content: `File created successfully at: ${file('fresh.txt')}` });
    expect(await readFile(file('fresh.txt'), 'utf8')).toBe('fresh\n');

    const again = call('Write', { file_path: 'again.txt', content: 'again\n' }, 'toolu_journal_again');
    await dieAt('after-start', again);
    await writeFile(file('again.txt'), 'again\n');
    expect(await retry(again)).toMatchObject({ isError: false, fromJournal: true, content: `File created successfully at: ${file('again.txt')}` });
  });
});

describe('resumption (pure)', () => {
  const base: JournalEntry = {
    toolUseId: 'toolu_1',
    conversationId: 'c',
    name: 'Bash',
    input: { command: 'echo x >> log' },
    status: 'started',
    phases: 2,
    attempt: 1,
    host: 'here',
    startedAt: '2026-01-01T00:00:00.000Z',
  };
  const contained: JournalEntry = { ...base, effect: { kind: 'process', contained: true }, checkpointId: 'a'.repeat(40), checkpointComplete: true };

  it('restores and runs a contained command with a complete checkpoint from this host', () => {
    expect(resumption(contained, 'here')).toEqual({ kind: 'restore-and-run', checkpointId: 'a'.repeat(40) });
    expect(resumption({ ...contained, status: 'cancelled' }, 'here')).toEqual({ kind: 'restore-and-run', checkpointId: 'a'.repeat(40) });
  });

  it('keeps the at-most-once answer when anything is not proved', () => {
    expect(resumption({ ...contained, effect: { kind: 'process' } }, 'here')).toEqual({ kind: 'at-most-once' });
    expect(resumption({ ...contained, effect: { kind: 'process', contained: false } }, 'here')).toEqual({ kind: 'at-most-once' });
    expect(resumption({ ...contained, checkpointId: undefined }, 'here')).toEqual({ kind: 'at-most-once' });
    expect(resumption({ ...contained, checkpointComplete: false }, 'here')).toEqual({ kind: 'at-most-once' });
    expect(resumption({ ...contained, checkpointComplete: undefined }, 'here')).toEqual({ kind: 'at-most-once' });
    // Another host: it may still be running there, where nothing here can stop it.
    expect(resumption(contained, 'elsewhere')).toEqual({ kind: 'at-most-once' });
    expect(resumption({ ...contained, host: undefined }, 'here')).toEqual({ kind: 'at-most-once' });
    expect(resumption({ ...contained, phases: undefined }, 'here')).toEqual({ kind: 'at-most-once' });
  });

  it('runs what never began and leaves file writes to the file check', () => {
    expect(resumption({ ...contained, status: 'recorded', effect: undefined }, 'here')).toEqual({ kind: 'run' });
    const effect = {
      kind: 'file' as const,
      path: '/w/a',
      before: { exists: false as const },
      after: { exists: false as const },
      result: { content: '', isError: false },
    };
    expect(resumption({ ...contained, effect }, 'here')).toEqual({ kind: 'file', effect });
  });
});

describe('checkpoints before mutating calls (issue 31)', () => {
  it('a retry of a call that never began keeps the first checkpoint and takes no other', async () => {
    const input = call('Write', { file_path: 'notes.txt', content: 'step 1\n' });
    await dieAt('before-start', input);
    const first = (await journalEntry(input))!;
    expect(first).toMatchObject({ status: 'recorded', checkpointComplete: true });
    expect(first.checkpointMs).toBeGreaterThan(0);
    const result = await retry(input);
    expect(result).toMatchObject({ isError: false, checkpointId: first.checkpointId });
    expect(await journalEntry(input)).toMatchObject({ status: 'finished', checkpointId: first.checkpointId });
    expect(await createCheckpointStore({ stateDir, cwd: workspace }).list(input.conversationId)).toHaveLength(1);
    // The journal's answer names it too.
    expect(await retry(input)).toMatchObject({ fromJournal: true, checkpointId: first.checkpointId });
  });

  it('a store that fails does not fail the tool: it runs without a checkpoint', async () => {
    await mkdir(workspaceStateDir(stateDir, workspace), { recursive: true });
    await writeFile(path.join(workspaceStateDir(stateDir, workspace), 'checkpoints.git'), 'not a repository');
    const input = call('Write', { file_path: 'notes.txt', content: 'step 1\n' });
    const result = await retry(input);
    expect(result).toMatchObject({ isError: false });
    expect(result.checkpointId).toBeUndefined();
    expect(await readFile(file('notes.txt'), 'utf8')).toBe('step 1\n');
  });

  it('DURABLE_AGENT_CHECKPOINTS=0: none is taken, and an interrupted command gets the plain answer', async () => {
    process.env.DURABLE_AGENT_CHECKPOINTS = '0';
    try {
      const input = call('Bash', { command: 'echo appended >> log.txt' });
      await dieAt('after-start', input);
      expect((await journalEntry(input))!.checkpointId).toBeUndefined();
      const result = await retry(input);
      expect(result.content).toContain('It was not run again.');
      expect(result.content).not.toContain('checkpoint');
    } finally {
      delete process.env.DURABLE_AGENT_CHECKPOINTS;
    }
  });
});

describe('started, contained (sandboxed, network off): restored and run again, exactly once', () => {
  beforeEach(() => {
    delete process.env.DURABLE_AGENT_SANDBOX; // the sandbox is the subject here
  });

  it('a half-run append is undone and the command runs again: the log holds each line once', async () => {
    await writeFile(file('keep.txt'), 'before\n');
    const input = call('Bash', { command: 'echo x >> log.txt; echo y >> log.txt' });
    await dieAt('after-start', input);
    expect(await journalEntry(input)).toMatchObject({ status: 'started', effect: { kind: 'process', contained: true }, checkpointComplete: true });
    // What the dead attempt did before it died: half of the command, and a stray file.
    await writeFile(file('log.txt'), 'x\n');
    await writeFile(file('stray.txt'), 'partial\n');

    const result = await retry(input);
    expect(result).toMatchObject({ isError: false, content: 'Tool ran without output or errors' });
    expect(result.fromJournal).toBeUndefined();
    expect(result.checkpointId).toBe((await journalEntry(input))!.checkpointId);
    expect(await readFile(file('log.txt'), 'utf8')).toBe('x\ny\n');
    await expect(readFile(file('stray.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
    expect(await readFile(file('keep.txt'), 'utf8')).toBe('before\n');
    expect(await journalEntry(input)).toMatchObject({ status: 'finished', attempt: 2 });
  });

  it('a checkpoint that skipped a file (over the size limit) proves nothing: at most once, naming it', async () => {
    await writeFile(file('big.bin'), Buffer.alloc(2 * 1024 * 1024, 1));
    const input = call('Bash', { command: 'echo x >> log.txt' });
    await dieAt('after-start', input);
    const entry = (await journalEntry(input))!;
    expect(entry).toMatchObject({ effect: { kind: 'process', contained: true }, checkpointComplete: false });
    const result = await retry(input);
    expect(result).toMatchObject({ isError: true, fromJournal: true, checkpointId: entry.checkpointId });
    expect(result.content).toContain(`may have partly run. It was not run again. The workspace checkpoint ${entry.checkpointId} taken before it`);
  });

  it('an attempt on another host is not restored under it (it may still run there)', async () => {
    const input = call('Bash', { command: 'echo x >> log.txt' });
    await dieAt('after-start', input);
    const entry = (await journalEntry(input))!;
    await new ToolJournal(stateDir).put(workspace, { ...entry, host: 'another-host' });
    const result = await retry(input);
    expect(result).toMatchObject({ isError: true, fromJournal: true });
    expect(result.content).toContain('It ran on another-host; if it is still running there');
    expect(result.content).toContain(`The workspace checkpoint ${entry.checkpointId}`);
  });

  it('an extra writable directory outside the workspace makes it not contained', async () => {
    const outside = path.join(root, 'outside');
    await mkdir(outside);
    const input = { ...call('Bash', { command: `echo x >> ${path.join(outside, 'log.txt')}` }), additionalDirectories: [outside] };
    await dieAt('after-start', input);
    expect((await journalEntry(input))!.effect).toEqual({ kind: 'process' });
    expect((await retry(input)).content).toContain('It was not run again.');
  });
});
