/**
 * Issue 21 §5 end to end: CronCreate / CronList / CronDelete from a conversation on the real dev
 * server. A job is a Temporal Schedule (user's time zone, 7-day end for recurring jobs, readable
 * id and memo); a fire reaches the conversation as its next input; a one-shot job goes after its
 * fire; a conversation with jobs is not idle-timed out; `/loop 5m` is a recurring job;
 * `durable-agent cron list` lists them; at the end session-only jobs are deleted and a durable
 * job still fires, starting the conversation again (signal-with-start).
 */
import { ScheduleNotFoundError } from '@temporalio/client';
import { afterEach, describe, expect, it } from 'vitest';
import { CRON_RECURRING_MAX_AGE_MS, cronScheduleId } from '../../common/cron';
import type { ResultMessage } from '../../common/result';
import { cli, isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness, eventually, runToResult } from '../helpers/harness';
import { lastUserMessage, promptResponder } from '../../testing/prompt-responder';

isolateEnvironment();
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function say(conversationId: string, prompt: string): Promise<ResultMessage> {
  const uuid = await harness!.api.send(conversationId, prompt);
  return harness!.api.waitForResult(conversationId, uuid);
}

const gone = (scheduleId: string) =>
  harness!.client.schedule
    .getHandle(scheduleId)
    .describe()
    .then(
      () => false,
      (error) => error instanceof ScheduleNotFoundError,
    );

describe('cron jobs from a conversation', () => {
  it('creates Schedules, fires, lists, deletes, runs /loop 5m, and at the end deletes session-only jobs while a durable one still fires', async () => {
    const ids: Record<string, string> = {};
    harness = await createHarness({
      respond: promptResponder([
        ['CRON-ONCE', 'Handled the one-shot.'],
        ['CRON-DURABLE', 'Durable job ran.'],
        ['LOOPTASK', 'Loop ran.'],
        [
          'SCHEDULE',
          [
            { name: 'CronCreate', input: { cron: '0 9 * * 1-5', prompt: 'standup CRON-A' } },
            { name: 'CronCreate', input: { cron: '30 17 * * 5', prompt: 'weekly CRON-B' } },
            { name: 'CronCreate', input: { cron: '15 10 1 1 *', prompt: 'CRON-ONCE new year', recurring: false } },
            { name: 'CronCreate', input: { cron: '0 8 1 1 *', prompt: 'CRON-DURABLE report', recurring: false, durable: true } },
            { name: 'CronCreate', input: { cron: '61 * * * *', prompt: 'never' } },
          ],
        ],
        ['LIST', [{ name: 'CronList', input: {} }]],
        ['DELETE', () => [{ name: 'CronDelete', input: { id: ids.a } }]],
      ]),
    });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();
    const { conversationId, result } = await runToResult(harness, 'SCHEDULE jobs', { timeZone: 'Europe/Paris', idleTimeoutMs: 2_000 });
    expect(result.result.match(/Scheduled recurring job/g)).toHaveLength(2);
    expect(result.result.match(/Scheduled one-shot job/g)).toHaveLength(2);
    expect(result.result).toContain('[error] minute field "61"');

    const status = await harness.api.status(conversationId);
    expect(status.cronJobs).toHaveLength(4);
    for (const job of status.cronJobs!)
      ids[{ 'standup CRON-A': 'a', 'weekly CRON-B': 'b', 'CRON-ONCE new year': 'once', 'CRON-DURABLE report': 'durable' }[job.prompt]!] = job.id;
    const scheduleOf = (key: string) => cronScheduleId(conversationId, ids[key]);

    // The Schedule: the user's zone, a 7-day end, the memo the UI's Schedules page and CronList read.
    const recurring = await harness.client.schedule.getHandle(scheduleOf('a')).describe();
    expect(recurring.spec.timezone).toBe('Europe/Paris');
    const createdAt = Date.parse(String(recurring.memo!.createdAt));
    expect(recurring.spec.endAt!.getTime() - createdAt).toBe(CRON_RECURRING_MAX_AGE_MS);
    expect(recurring.memo).toMatchObject({
      kind: 'durable-agent-cron',
      conversationId,
      jobId: ids.a,
      cron: '0 9 * * 1-5',
      prompt: 'standup CRON-A',
      durable: false,
    });
    expect(status.cronJobs!.find((job) => job.id === ids.a)!.expiresAt).toBe(new Date(createdAt + CRON_RECURRING_MAX_AGE_MS).toISOString());
    const once = await harness.client.schedule.getHandle(scheduleOf('once')).describe();
    expect(once.state.remainingActions).toBe(1);
    expect(once.spec.endAt).toBeUndefined();

    // Jobs are pending: the idle timeout (2 s) does not end the conversation.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await harness.client.workflow.getHandle(conversationId).describe()).status.name).toBe('RUNNING');

    const listed = await say(conversationId, 'LIST jobs');
    for (const key of ['a', 'b', 'once', 'durable']) expect(listed.result).toContain(`${ids[key]}: "`);
    expect(listed.result).toContain('(Europe/Paris) recurring, session-only');

    // A fire is the next input; a one-shot job is gone after it.
    await harness.client.schedule.getHandle(scheduleOf('once')).trigger();
    await eventually(
      () => harness!.api.status(conversationId),
      (value) => value.lastResult?.result === 'Handled the one-shot.' && value.cronJobs?.length === 3,
    );
    await eventually(() => gone(scheduleOf('once')), Boolean);

    expect((await say(conversationId, 'DELETE job a')).result).toContain(`Deleted job ${ids.a}.`);
    expect(await gone(scheduleOf('a'))).toBe(true);
    expect((await harness.api.status(conversationId)).cronJobs?.map((job) => job.id).sort()).toEqual([ids.b, ids.durable].sort());

    // /loop with an interval: a recurring job, and the prompt runs now.
    const loop = await say(conversationId, '/loop 5m LOOPTASK check the queue');
    expect(loop.result).toBe('Loop ran.');
    const loopJob = (await harness.api.status(conversationId)).cronJobs!.find((job) => job.cron === '*/5 * * * *');
    expect(loopJob).toMatchObject({ prompt: 'LOOPTASK check the queue', recurring: true, durable: false });

    // durable-agent cron list: from the Schedules (the server's list is eventually consistent).
    const printed = await eventually(
      () => cli('cron', 'list', conversationId),
      (output) => output.out.includes(ids.b) && output.out.includes(loopJob!.id),
    );
    expect(printed.code).toBe(0);
    expect(printed.out).toMatch(/ID\s+CRON\s+NEXT FIRE\s+KIND\s+CONVERSATION\s+PROMPT/);
    expect(printed.out).toContain(`30 17 * * 5 (Europe/Paris)`);
    expect(printed.out).toContain('"weekly CRON-B"');
    expect(printed.out).toContain(conversationId);
    expect(printed.out).not.toContain(ids.a);

    // The end: session-only jobs deleted, the durable one stays and still fires (signal-with-start).
    await harness.api.end(conversationId);
    const handle = harness.client.workflow.getHandle(conversationId);
    expect(await handle.result()).toMatchObject({ endedBy: 'end_signal' });
    for (const key of ['b']) expect(await gone(scheduleOf(key))).toBe(true);
    expect(await gone(cronScheduleId(conversationId, loopJob!.id))).toBe(true);
    expect(await gone(scheduleOf('durable'))).toBe(false);
    await harness.client.schedule.getHandle(scheduleOf('durable')).trigger();
    await eventually(async () => harness!.model.requests.some((request) => lastUserMessage(request).text.includes('CRON-DURABLE report')), Boolean);
    const restarted = await eventually(
      () => harness!.api.status(conversationId).catch(() => undefined),
      (value) => value?.lastResult?.result === 'Durable job ran.',
    );
    expect(restarted!.queryCount).toBe(1);
    await harness.api.end(conversationId);
  }, 180_000);

  it('a job that fires while a query runs waits for that query’s end and runs as a query of its own (Claude Code fires only while idle)', async () => {
    harness = await createHarness({
      respond: promptResponder([
        ['CRON-IDLE', 'Pinged.'],
        ['JOB', [{ name: 'CronCreate', input: { cron: '15 10 1 1 *', prompt: 'CRON-IDLE ping', recurring: false } }]],
        ['SLOW', [{ name: 'Bash', input: { command: 'sleep 6.5', description: 'slow work' } }]],
      ]),
    });
    await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'JOB please');
    const [job] = (await harness.api.status(conversationId)).cronJobs!;

    // A query that runs a slow command; the job fires while the command runs.
    const slow = await harness.api.send(conversationId, 'SLOW work');
    await eventually(
      () => harness!.api.status(conversationId),
      (status) => status.toolsInFlight.some((tool) => tool.summary.includes('sleep 6.5')),
    );
    await harness.client.schedule.getHandle(cronScheduleId(conversationId, job!.id)).trigger();
    const slowResult = await harness.api.waitForResult(conversationId, slow);
    expect(slowResult.result).toMatch(/^ok: /);

    // Then the job's prompt, as its own query.
    const after = await eventually(
      () => harness!.api.status(conversationId),
      (status) => status.lastResult?.result === 'Pinged.' && status.phase === 'awaiting_input',
    );
    expect(after.queryCount).toBe(3);
    // Asked once, as a prompt of its own: not with the command's result in the slow query's next call (where it joined before).
    const asked = harness.model.requests.filter((request) => lastUserMessage(request).text.includes('CRON-IDLE ping'));
    expect(asked).toHaveLength(1);
    expect(lastUserMessage(asked[0]!).toolResults).toEqual([]);

    // The fire reached the conversation while the command ran (its signal is before the command's end).
    const history = await harness.client.workflow.getHandle(conversationId).fetchHistory();
    const events = history.events ?? [];
    const fired = events.findIndex((event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'cronFired');
    const bash = events.find((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool');
    const bashEnded = events.findIndex((event) => String(event.activityTaskCompletedEventAttributes?.scheduledEventId ?? '') === String(bash?.eventId));
    expect(fired).toBeGreaterThan(events.indexOf(bash!));
    expect(bashEnded).toBeGreaterThan(fired);
    await harness.api.end(conversationId);
  }, 120_000);
});
