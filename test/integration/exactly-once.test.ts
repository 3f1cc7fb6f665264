/**
 * Issue 31, build item 4: exactly once after a crash. A worker process is SIGKILLed inside a
 * mutating Bash call that runs sandboxed with the network off and writes only inside the
 * workspace; the retry on a new worker process restores the checkpoint taken before the call and
 * runs the command again, so the log holds each line once — where before the model was told the
 * command "may have partly run". The kills land at several moments (parked right after the journal
 * marked the command started, before x; between x and y; after y, before the command ends; a random
 * delay). A command that is not contained (a writable directory outside the workspace) keeps the
 * honest answer, now naming the checkpoint. A background command (`run_in_background`) runs detached
 * from the worker: killed at any moment, its worker's replacement re-attaches, the log holds each
 * line once and the conversation is told of its end once.
 *
 * One harness, one conversation per moment, each in its own workspace directory: the worker that
 * recovers one conversation is the one killed in the next, so N kills cost N + 1 worker starts.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Responder } from '../../testing/scripted-model-server';
import { type JournalEntry, ToolJournal } from '../../activities/tool-journal';
import { type Harness, REPO_ROOT, createHarness, eventually } from '../helpers/harness';
import { liveSleepers } from '../helpers/processes';

const HOLD_TOOL = pathToFileURL(path.join(REPO_ROOT, 'test', 'helpers', 'hold-tool.cjs')).href;

/**
 * Non-idempotent: run twice, or resumed after a partial run, the log would hold a line twice. The
 * trailing sleep leaves a window after y in which the command has not ended (its result not recorded).
 */
const COMMAND = 'echo x >> log; sleep 3.125; echo y >> log; sleep 1.5';
/**
 * Not contained: the conversation has a working directory outside its workspace (`--add-dir`),
 * writable in the sandbox and not in the checkpoint. (`dangerouslyDisableSandbox` asks in every
 * permission mode, and a conversation's config does not carry sandbox settings to Bash.)
 */
const UNCONTAINED = 'echo x >> log; sleep 30.625; echo y >> log';

/** The background variant: the same appends, run with `run_in_background` (its end is a task notification). */
const BACKGROUND = 'echo x >> log; sleep 3.375; echo y >> log';

/** The command each conversation's first turn runs is named in its prompt. */
const respond: Responder = (request) => {
  const first = JSON.stringify(request.body.messages[0]);
  if (request.body.messages.length === 1) {
    if (first.includes('(background')) {
      return { content: [{ type: 'tool_use', name: 'Bash', input: { command: BACKGROUND, run_in_background: true, description: 'append twice' } }] };
    }
    const uncontained = first.includes('uncontained');
    return {
      content: [{ type: 'tool_use', name: 'Bash', input: { command: uncontained ? UNCONTAINED : COMMAND } }],
    };
  }
  return { content: [{ type: 'text', text: 'Done.' }] };
};

let harness: Harness | undefined;
let worker: ChildProcess | undefined;
/** Per moment: the checkpoint's cost, the attempt that finished, the kill's delay. */
const figures: Array<Record<string, unknown>> = [];

afterAll(async () => {
  if (figures.length) console.log(`exactly-once figures:\n${figures.map((figure) => JSON.stringify(figure)).join('\n')}`);
  await harness?.close();
});

async function lines(file: string): Promise<number> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).length;
}

async function killWorker(): Promise<void> {
  const dying = worker!;
  dying.kill('SIGKILL');
  if (dying.exitCode === null && dying.signalCode === null) await new Promise((resolve) => dying.once('exit', resolve));
}

/** Starts a conversation in its own directory, waits for `moment`, SIGKILLs the worker, starts another, and waits for the result. */
async function killDuring(name: string, moment: (log: string) => Promise<unknown>, additionalDirectories?: string[]) {
  const cwd = path.join(harness!.workspace, name);
  await mkdir(cwd);
  const log = path.join(cwd, 'log');
  const prompt = `run the job (${name})`;
  const started = await harness!.api.start({
    prompt,
    config: harness!.config({ cwd, ...(additionalDirectories && { permissions: { mode: 'bypassPermissions', additionalDirectories } }) }),
    taskQueue: harness!.taskQueue,
  });
  const detail = await moment(log);
  await killWorker();
  worker = await harness!.spawnWorkerProcess();
  const result = await harness!.api.waitForResult(started.conversationId, started.inputUuid!);
  const request = harness!.model.requests.find(
    (candidate) => candidate.body.messages.length === 3 && JSON.stringify(candidate.body.messages[0]).includes(prompt),
  )!;
  const toolResult = request.body.messages.at(-1).content[0] as { tool_use_id: string; content: string; is_error?: boolean };
  const entry = (await new ToolJournal(harness!.stateDir).get(cwd, started.conversationId, toolResult.tool_use_id)) as JournalEntry;
  figures.push({
    name,
    ...(detail === undefined ? {} : { detail }),
    attempt: entry.attempt,
    checkpointMs: entry.checkpointMs,
    effect: entry.effect,
    toolResult: toolResult.content.slice(0, 80),
  });
  return { result, toolResult, entry, log };
}

describe('exactly once after a worker SIGKILL (issue 31)', () => {
  it('a contained, non-idempotent command killed at any moment leaves each line once, and the model gets its normal output', async () => {
    harness = await createHarness({ respond });
    const marker = path.join(harness.stateDir, 'worker-held');
    // Parked right after the journal marked the command started, before it ran: "before x".
    worker = await harness.spawnWorkerProcess({
      imports: [HOLD_TOOL],
      env: { DURABLE_AGENT_TEST_HOLD: 'after-start:Bash', DURABLE_AGENT_TEST_HOLD_MARKER: marker },
    });
    const moments: Array<[string, (log: string) => Promise<unknown>]> = [
      [
        'before-x',
        () =>
          eventually(
            () => readFile(marker, 'utf8').catch(() => ''),
            (text) => text !== '',
          ),
      ],
      [
        'between-x-and-y',
        (log) =>
          eventually(
            () => lines(log),
            (count) => count === 1,
          ),
      ],
      [
        'after-y',
        (log) =>
          eventually(
            () => lines(log),
            (count) => count === 2,
          ),
      ],
      [
        'random',
        async (log) => {
          const delayMs = Math.floor(Math.random() * 6_000);
          await eventually(async () => harness!.model.requests.some((request) => JSON.stringify(request.body.messages[0]).includes('(random)')), Boolean);
          await new Promise((resolve) => setTimeout(resolve, delayMs));
          return { delayMs, linesAtKill: await lines(log) };
        },
      ],
    ];
    for (const [name, moment] of moments) {
      const { result, toolResult, entry, log } = await killDuring(name, moment);
      expect(result, name).toMatchObject({ subtype: 'success', result: 'Done.' });
      expect(await readFile(log, 'utf8'), name).toBe('x\ny\n');
      expect(toolResult.is_error, name).toBeFalsy();
      expect(toolResult.content, name).toBe('Tool ran without output or errors');
      expect(entry, name).toMatchObject({ status: 'finished', effect: { kind: 'process', contained: true }, checkpointComplete: true });
      expect(entry.checkpointId, name).toMatch(/^[0-9a-f]{40}$/);
      // The kill landed inside the command: a later attempt ran it (the random one may land before or after).
      if (name !== 'random') expect(entry.attempt, name).toBeGreaterThanOrEqual(2);
    }
  }, 240_000);

  it('an uncontained command (writable outside the workspace) killed mid-run keeps the at-most-once answer, naming the checkpoint', async () => {
    harness ??= await createHarness({ respond });
    worker ??= await harness.spawnWorkerProcess();
    const outside = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-outside-'));
    onTestFinished(() => rm(outside, { recursive: true, force: true }));
    const { result, toolResult, entry, log } = await killDuring(
      'uncontained',
      (file) =>
        eventually(
          () => lines(file),
          (count) => count === 1,
        ),
      [outside],
    );
    expect(result).toMatchObject({ subtype: 'success', result: 'Done.' });
    expect(toolResult.is_error).toBe(true);
    // Sandboxed, it died with its worker (bwrap --die-with-parent): nothing was left to stop.
    expect(toolResult.content).toContain('may have partly run. It was not run again.');
    expect(toolResult.content).toContain(`The workspace checkpoint ${entry.checkpointId} taken before it holds the workspace as it was`);
    expect(entry.effect).toEqual({ kind: 'process' });
    expect(await readFile(log, 'utf8')).toBe('x\n');
    await eventually(
      async () => liveSleepers('30.625').length,
      (count) => count === 0,
      10_000,
    );
  }, 120_000);

  it('a background command whose worker is SIGKILLed at any moment runs once: each line once, and its end is told once', async () => {
    harness ??= await createHarness({ respond });
    worker ??= await harness.spawnWorkerProcess();
    const moments: Array<[string, (log: string) => Promise<unknown>]> = [
      [
        'background-between-x-and-y',
        (log) =>
          eventually(
            () => lines(log),
            (count) => count === 1,
          ),
      ],
      [
        'background-after-y',
        (log) =>
          eventually(
            () => lines(log),
            (count) => count === 2,
          ),
      ],
      [
        'background-random',
        async (log) => {
          const delayMs = Math.floor(Math.random() * 4_000);
          await eventually(
            async () => harness!.model.requests.some((request) => JSON.stringify(request.body.messages[0]).includes('(background-random)')),
            Boolean,
          );
          await new Promise((resolve) => setTimeout(resolve, delayMs));
          return { delayMs, linesAtKill: await lines(log) };
        },
      ],
    ];
    for (const [name, moment] of moments) {
      const cwd = path.join(harness.workspace, name);
      await mkdir(cwd);
      const log = path.join(cwd, 'log');
      const prompt = `run the job (${name})`;
      await harness.api.start({ prompt, config: harness.config({ cwd }), taskQueue: harness.taskQueue });
      const detail = await moment(log);
      await killWorker();
      worker = await harness.spawnWorkerProcess();
      // The command's end reaches the conversation as a task notification: one model request carries it.
      const notified = await eventually(
        async () =>
          harness!.model.requests.filter((request) => {
            const text = JSON.stringify(request.body.messages);
            return text.includes(prompt) && text.includes('<task-notification>');
          }),
        (requests) => requests.length >= 1,
        60_000,
      );
      expect(await readFile(log, 'utf8'), name).toBe('x\ny\n');
      const notification = JSON.stringify(notified[0].body.messages.at(-1));
      expect(notification, name).toContain('<status>completed</status>');
      // Told once: no later request adds a second notification of the same task.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const last = harness.model.requests.filter((request) => JSON.stringify(request.body.messages).includes(prompt)).at(-1)!;
      expect(JSON.stringify(last.body.messages).split('<task-notification>').length - 1, name).toBe(1);
      figures.push({ name, ...(detail === undefined ? {} : { detail }), lines: 2 });
    }
  }, 240_000);
});
