/**
 * Background Bash in a conversation (issue 21 §1, §2, §7), on the real dev server with real
 * workers and real processes, driven by the scripted model: the call returns at once, the
 * command's end comes back as exactly one <task-notification> (re-invoking the model when idle,
 * or joining the running query before its next model call), TaskOutput / TaskStop, a worker
 * SIGKILL (re-attach, the command ran once), a command that vanished (interrupted),
 * continue-as-new, and the lifecycle: `end` stops a running command, `abort` does not, and the
 * conversation is not idle-timed out while one runs.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, writeSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConversationStatus } from '../../workflows/definitions';
import type { RecordedRequest, ScriptedTurn } from '../../testing/scripted-model-server';
import { type Harness, createHarness, eventually, expectValidApiOrder } from '../helpers/harness';
import { liveSleepers, openFifoWriter } from '../helpers/processes';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

// ---- helpers -------------------------------------------------------------------------------

const NOTIFICATION = '<task-notification>';

/** All the text of a request's messages (tool results and user text alike). */
function requestText(request: RecordedRequest): string {
  return JSON.stringify(request.body.messages);
}

/** The last user message's text (its tool results and queued inputs). */
function lastUserText(request: RecordedRequest): string {
  return JSON.stringify(request.body.messages[request.body.messages.length - 1]);
}

/** The task id a background Bash result named, in this request's history. */
function taskIdIn(request: RecordedRequest): string {
  const match = /Command running in background with ID: (b[0-9a-f]{8})/.exec(requestText(request));
  if (!match) throw new Error(`no background task id in request ${request.index}`);
  return match[1];
}

/** Requests whose newest user turn carries a task notification. */
function notificationRequests(model: Harness['model']): RecordedRequest[] {
  return model.requests.filter((request) => lastUserText(request).includes(NOTIFICATION));
}

const text = (value: string): ScriptedTurn => ({ content: [{ type: 'text', text: value }] });
const background = (command: string, id = 'toolu_bg'): ScriptedTurn => ({
  content: [{ type: 'tool_use', id, name: 'Bash', input: { command, description: 'Background job', run_in_background: true } }],
});

/**
 * The model answers a notification with "Noted." and anything else from `steps` in order (by the
 * number of non-notification requests so far), so a retried or extra call cannot shift the script.
 */
function scripted(steps: Array<(request: RecordedRequest) => ScriptedTurn>): (request: RecordedRequest) => ScriptedTurn {
  let step = 0;
  return (request) => {
    if (lastUserText(request).includes(NOTIFICATION) && !lastUserText(request).includes('tool_result')) return text('Noted.');
    const next = steps[Math.min(step, steps.length - 1)];
    step++;
    return next(request);
  };
}

async function status(id: string): Promise<ConversationStatus> {
  return harness!.api.status(id);
}

async function start(prompt: string, overrides: Parameters<Harness['config']>[0] = {}) {
  return harness!.api.start({ prompt, config: harness!.config(overrides), taskQueue: harness!.taskQueue });
}

/** Waits until the conversation ran `queries` queries and waits for input. */
async function idleAfter(id: string, queries: number, timeoutMs = 60_000): Promise<ConversationStatus> {
  return eventually(
    () => status(id),
    (s) => s.queryCount >= queries && s.phase === 'awaiting_input' && s.queuedInputs === 0,
    timeoutMs,
  );
}

/** The activities of the conversation's history (every run), by type, with their attempts. */
/** With DA_DUMP_HISTORIES=<dir>: every run's history, newest first (run-0), as scripts/record-histories.ts writes them. */
async function dumpHistories(id: string): Promise<void> {
  const dir = process.env.DA_DUMP_HISTORIES;
  if (!dir || !harness) return;
  await mkdir(dir, { recursive: true });
  let index = 0;
  for await (const execution of harness.client.workflow.list({ query: `WorkflowId = '${id}'` })) {
    const history = await harness.client.workflow.getHandle(id, execution.runId).fetchHistory();
    await writeFile(path.join(dir, `run-${index++}.json`), historyToJSON(history));
  }
}

async function activityStarts(id: string, type: string): Promise<number[]> {
  const history = await harness!.client.workflow.getHandle(id).fetchHistory();
  const scheduled = new Map<string, string>();
  const attempts: number[] = [];
  for (const event of history.events ?? []) {
    const attributes = event.activityTaskScheduledEventAttributes;
    if (attributes) scheduled.set(String(event.eventId), attributes.activityType?.name ?? '');
    const started = event.activityTaskStartedEventAttributes;
    if (started && scheduled.get(String(started.scheduledEventId)) === type) attempts.push(Number(started.attempt));
  }
  return attempts;
}

/** Kills a background command the way a host dying would: SIGKILL to its wrapper's group and to its processes, no exit status written. */
async function killLikeAHostDying(stateDir: string, sleepers: number[]): Promise<void> {
  const records: string[] = [];
  const walk = async (directory: string): Promise<void> => {
    for (const entry of await readdir(directory, { withFileTypes: true })) {
      const full = path.join(directory, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.name === 'record.json') records.push(full);
    }
  };
  await walk(stateDir);
  for (const file of records) {
    const { pid } = JSON.parse(await readFile(file, 'utf8')) as { pid?: number };
    if (pid) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
  for (const pid of sleepers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

// ---- tests ---------------------------------------------------------------------------------

describe('background Bash in a conversation', () => {
  it('returns at once, finishes, and its one notification re-invokes the model when idle', async () => {
    harness = await createHarness({ respond: scripted([() => background('echo hello; sleep 1.25; echo bye'), () => text('Started it.')]) });
    await harness.startWorker();
    const { conversationId, inputUuid } = await start('Run the job in the background.');
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'Started it.' });
    // The tool result came at once: the command was still running when the model got it.
    const first = harness.model.requests[1];
    expect(lastUserText(first)).toMatch(/Command running in background with ID: b[0-9a-f]{8}\. Output is being written to: \/.*\.output/);
    const taskId = taskIdIn(first);
    expectValidApiOrder(first);

    // The end re-invokes the model: one query whose prompt is the notification.
    const idle = await idleAfter(conversationId, 2);
    const notified = notificationRequests(harness.model);
    expect(notified).toHaveLength(1);
    const notification = lastUserText(notified[0]);
    expect(notification).toContain(`<task-id>${taskId}</task-id>`);
    expect(notification).toContain('<status>completed</status>');
    expect(notification).toContain('exit code 0');
    expect(notification).toContain('hello\\nbye');
    expect(idle.lastResult?.result).toBe('Noted.');
    expect(idle.backgroundTasks).toEqual([
      expect.objectContaining({ id: taskId, kind: 'bash', status: 'completed', exitCode: 0, description: 'Background job' }),
    ]);
    // Supervised once (no retries needed), started once.
    expect(await activityStarts(conversationId, 'startBackgroundCommand')).toEqual([1]);
    expect(await activityStarts(conversationId, 'superviseBackgroundCommand')).toEqual([1]);
  }, 90_000);

  it('a notification that arrives while a query runs joins it before its next model call (exactly one)', async () => {
    const fifo = () => path.join(harness!.workspace, 'gate.fifo');
    harness = await createHarness({
      respond: scripted([
        () => ({
          content: [
            { type: 'tool_use', id: 'toolu_bg', name: 'Bash', input: { command: 'echo quick', run_in_background: true } },
            { type: 'tool_use', id: 'toolu_cat', name: 'Bash', input: { command: 'cat gate.fifo' } },
          ],
        }),
        () => text('Both done.'),
      ]),
    });
    execFileSync('mkfifo', [fifo()]);
    await harness.startWorker();
    const { conversationId, inputUuid } = await start('Start the quick job, then wait on the gate.');
    // The quick job ends while `cat` still blocks the query.
    await eventually(
      () => status(conversationId),
      (s) => s.backgroundTasks?.[0]?.status === 'completed' && s.queuedInputs === 1,
    );
    const fd = await openFifoWriter(fifo());
    writeSync(fd, 'gate open\n');
    closeSync(fd);
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'Both done.' });
    const idle = await idleAfter(conversationId, 1);
    expect(idle.queryCount).toBe(1); // no query of its own
    expect(harness.model.requests).toHaveLength(2);
    const second = lastUserText(harness.model.requests[1]);
    expect(second).toContain('gate open');
    expect(second).toContain(NOTIFICATION);
    expect(second).toContain('quick');
    expect(harness.model.requests.filter((request) => requestText(request).includes(NOTIFICATION))).toHaveLength(1);
    expectValidApiOrder(harness.model.requests[1]);
  }, 90_000);

  it('TaskOutput (non-blocking, blocking with a timeout, after the end), TaskStop (killed, no notification), and an unknown id', async () => {
    harness = await createHarness({
      respond: scripted([
        () => background('echo begun; sleep 31.5'),
        (request) => ({ content: [{ type: 'tool_use', id: 'toolu_o1', name: 'TaskOutput', input: { task_id: taskIdIn(request), block: false } }] }),
        (request) => ({
          content: [{ type: 'tool_use', id: 'toolu_o2', name: 'TaskOutput', input: { task_id: taskIdIn(request), block: true, timeout: 300 } }],
        }),
        (request) => ({ content: [{ type: 'tool_use', id: 'toolu_s', name: 'TaskStop', input: { task_id: taskIdIn(request) } }] }),
        (request) => ({
          content: [
            { type: 'tool_use', id: 'toolu_o3', name: 'TaskOutput', input: { task_id: taskIdIn(request) } },
            { type: 'tool_use', id: 'toolu_o4', name: 'TaskOutput', input: { task_id: 'bdeadbeef', block: false } },
            { type: 'tool_use', id: 'toolu_s2', name: 'TaskStop', input: { task_id: 'bdeadbeef' } },
          ],
        }),
        () => text('Stopped it.'),
      ]),
    });
    await harness.startWorker();
    // Default mode: Bash is allowed by a rule; TaskOutput and TaskStop need no rule and ask nobody.
    const { conversationId, inputUuid } = await start('Start it, look, stop it.', { permissions: { mode: 'default', allow: ['Bash'] } });
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'Stopped it.' });
    const results = harness.model.requests.map(lastUserText);
    expect(results[2]).toContain('<retrieval_status>not_ready</retrieval_status>');
    expect(results[2]).toContain('<status>running</status>');
    expect(results[3]).toContain('<retrieval_status>timeout</retrieval_status>');
    expect(results[3]).toContain('begun');
    expect(results[4]).toMatch(/Stopped task b[0-9a-f]{8}/);
    expect(results[5]).toContain('<status>killed</status>');
    expect(results[5]).toContain('No task found with ID: bdeadbeef');
    expect(liveSleepers('31.5')).toEqual([]);
    expect(result.permission_denials ?? []).toEqual([]);
    // Its supervisor reports the end (it polls every second).
    const idle = await eventually(
      () => status(conversationId),
      (s) => s.backgroundTasks?.[0]?.status === 'killed',
    );
    expect(idle.phase).toBe('awaiting_input');
    // The model stopped it itself: no notification re-invokes it.
    expect(notificationRequests(harness.model)).toEqual([]);
    expect(idle.queryCount).toBe(1);
  }, 90_000);

  it('finishes once across a SIGKILL of the worker (the next worker re-attaches), with one notification', async () => {
    harness = await createHarness({ respond: scripted([() => background('echo started >> runs.txt; sleep 6.75; echo done'), () => text('Started.')]) });
    const first = await harness.spawnWorkerProcess();
    const { conversationId, inputUuid } = await start('Run it in the background.');
    await harness.api.waitForResult(conversationId, inputUuid!);
    await eventually(
      async () => liveSleepers('6.75').length,
      (count) => count === 1,
      30_000,
    );
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    expect(liveSleepers('6.75')).toHaveLength(1); // the worker's death did not take the command with it
    await harness.spawnWorkerProcess();

    const idle = await idleAfter(conversationId, 2, 90_000);
    expect(await readFile(path.join(harness.workspace, 'runs.txt'), 'utf8')).toBe('started\n');
    const notified = notificationRequests(harness.model);
    expect(notified).toHaveLength(1);
    expect(lastUserText(notified[0])).toContain('<status>completed</status>');
    expect(lastUserText(notified[0])).toContain('<output-tail>\\ndone');
    expect(idle.backgroundTasks?.[0]).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(Math.max(...(await activityStarts(conversationId, 'superviseBackgroundCommand')))).toBeGreaterThanOrEqual(2);
    expect(await activityStarts(conversationId, 'startBackgroundCommand')).toEqual([1]);
  }, 180_000);

  it('reports a command whose processes are gone without an exit status as interrupted', async () => {
    harness = await createHarness({ respond: scripted([() => background('sleep 41.5'), () => text('Started.')]) });
    await harness.startWorker();
    const { conversationId, inputUuid } = await start('Run it in the background.');
    await harness.api.waitForResult(conversationId, inputUuid!);
    const sleepers = await eventually(
      async () => liveSleepers('41.5'),
      (found) => found.length === 1,
      30_000,
    );
    await killLikeAHostDying(harness.stateDir, sleepers);
    const idle = await idleAfter(conversationId, 2);
    const notified = notificationRequests(harness.model);
    expect(notified).toHaveLength(1);
    expect(lastUserText(notified[0])).toContain('<status>interrupted</status>');
    expect(idle.backgroundTasks?.[0]).toMatchObject({ status: 'interrupted' });
    expect(idle.backgroundTasks?.[0].exitCode).toBeUndefined();
  }, 90_000);

  it('across continue-as-new: the next run re-attaches, and there is still exactly one notification', async () => {
    harness = await createHarness({ respond: scripted([() => background('sleep 6.25; echo after-switch'), () => text('Started.')]) });
    await harness.startWorker();
    const { conversationId, inputUuid } = await start('Run it in the background.', { continueAsNewAfterEvents: 20 });
    // DA_DUMP_HISTORIES=<dir> writes each run's history there (test/histories/background-continue-as-new*.json
    // came from a run with DA_NO_CACHE=1: a local activity's result reaching the workflow a task later).
    const idle = await (async () => {
      await harness!.api.waitForResult(conversationId, inputUuid!);
      return idleAfter(conversationId, 2, 90_000);
    })().finally(() => dumpHistories(conversationId));
    expect(idle.continuedAsNewCount).toBeGreaterThanOrEqual(1);
    const notified = notificationRequests(harness.model);
    expect(notified).toHaveLength(1);
    expect(lastUserText(notified[0])).toContain('after-switch');
    expect(idle.backgroundTasks?.[0]).toMatchObject({ status: 'completed' });
    // The command was started in one run and its end seen by a later run's own supervisor (re-attached).
    const runs: Array<{ starts: number; supervisedToTheEnd: number }> = [];
    for await (const execution of harness.client.workflow.list({ query: `WorkflowId = '${conversationId}'` })) {
      const history = await harness.client.workflow.getHandle(conversationId, execution.runId).fetchHistory();
      const scheduled = new Map<string, string>();
      let starts = 0;
      let supervisedToTheEnd = 0;
      for (const event of history.events ?? []) {
        const attributes = event.activityTaskScheduledEventAttributes;
        if (attributes) {
          scheduled.set(String(event.eventId), attributes.activityType?.name ?? '');
          if (attributes.activityType?.name === 'startBackgroundCommand') starts++;
        }
        const completed = event.activityTaskCompletedEventAttributes;
        if (completed && scheduled.get(String(completed.scheduledEventId)) === 'superviseBackgroundCommand') supervisedToTheEnd++;
      }
      runs.push({ starts, supervisedToTheEnd });
    }
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const startRun = runs.findIndex((run) => run.starts > 0);
    const endRun = runs.findIndex((run) => run.supervisedToTheEnd > 0);
    expect(runs.filter((run) => run.starts > 0)).toEqual([{ starts: 1, supervisedToTheEnd: 0 }]);
    expect(runs.filter((run) => run.supervisedToTheEnd > 0)).toHaveLength(1);
    expect(endRun).not.toBe(startRun);
  }, 120_000);

  it('`abort` leaves a background command running, the conversation is not idle-timed out while it runs, and `end` stops it', async () => {
    const fifo = () => path.join(harness!.workspace, 'gate.fifo');
    harness = await createHarness({
      respond: scripted([
        () => ({
          content: [
            { type: 'tool_use', id: 'toolu_long', name: 'Bash', input: { command: 'sleep 52.5', run_in_background: true } },
            { type: 'tool_use', id: 'toolu_cat', name: 'Bash', input: { command: 'cat gate.fifo' } },
          ],
        }),
        () => text('After the abort.'),
      ]),
    });
    execFileSync('mkfifo', [fifo()]);
    await harness.startWorker();
    // An idle timeout far shorter than the command: it must not end the conversation while the command runs.
    const { conversationId, inputUuid } = await start('Start the long job and wait on the gate.', { idleTimeoutMs: 1_000 });
    await eventually(
      async () => liveSleepers('52.5').length,
      (count) => count === 1,
      30_000,
    );
    await eventually(
      () => status(conversationId),
      (s) => s.toolsInFlight.some((tool) => tool.summary.includes('cat gate.fifo')),
    );
    await harness.api.abort(conversationId);
    await harness.api.waitForResult(conversationId, inputUuid!);
    expect(liveSleepers('52.5')).toHaveLength(1); // abort left it running
    expect((await status(conversationId)).backgroundTasks?.[0]).toMatchObject({ command: 'sleep 52.5', status: 'running' });
    // The Temporal UI's current details name it while it runs.
    const metadata = (await harness.client.workflow.getHandle(conversationId).query('__temporal_workflow_metadata')) as { currentDetails?: string };
    expect(metadata.currentDetails).toMatch(/\*\*Background \(1 running\):\*\* b[0-9a-f]{8} sleep 52\.5/);

    // Three idle timeouts later the conversation still waits (its timer does not run while a command does).
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const waiting = await status(conversationId);
    expect(waiting.ended).toBe(false);
    expect(waiting.phase).toBe('awaiting_input');
    expect(liveSleepers('52.5')).toHaveLength(1);

    await harness.api.end(conversationId);
    const summary = await harness.client.workflow.getHandle(conversationId).result();
    expect(summary.endedBy).toBe('end_signal');
    expect(liveSleepers('52.5')).toEqual([]);
    expect(await activityStarts(conversationId, 'stopBackgroundCommand')).toEqual([1]);
  }, 120_000);
});
