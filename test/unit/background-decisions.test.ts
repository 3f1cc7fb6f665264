/** Issue 21, the pure half: cron jobs, the task list, ScheduleWakeup's delay, `/loop`, notifications. */
import { describe, expect, it } from 'vitest';
import { clampWakeupDelay, intervalToCron, parseLoopArguments, planWakeup, taskNotificationText } from '../../common/background';
import {
  CRON_MAX_JOBS,
  CRON_RECURRING_JITTER_CAP_MS,
  CRON_RECURRING_MAX_AGE_MS,
  cronScheduleId,
  jitterFraction,
  nextCronMatch,
  parseCron,
  planCronJob,
  recurringJitterMs,
} from '../../common/cron';
import { type TaskCall, type TaskListState, applyTaskCall, emptyTaskList } from '../../common/tasks';

const at = (iso: string) => Date.parse(iso);

describe('cron expressions (Claude Code grammar)', () => {
  it.each(['* * * * *', '*/5 * * * *', '0 9 * * 1-5', '30 14 28 2 *', '0 0,12 1-15/2 * 7', '57 8 * * *'])('accepts %s', (expression) => {
    expect(parseCron(expression).ok).toBe(true);
  });

  it.each([
    ['* * * *', /5-field/],
    ['* * * * * *', /5-field/],
    ['60 * * * *', /minute field/],
    ['* 24 * * *', /hour field/],
    ['* * 0 * *', /day of month/],
    ['* * * 13 *', /month field/],
    ['* * * * 8', /day of week/],
    ['*/0 * * * *', /step/],
    ['5-1 * * * *', /within/],
    ['@hourly', /5-field/],
    ['0 9 * * MON', /day of week/],
    ['0 9 ? * *', /day of month/],
  ])('rejects %s with a message naming the field', (expression, message) => {
    const parsed = parseCron(expression);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(message);
  });

  it('finds the next match; day of month and day of week restricted together mean either', () => {
    const fields = (expression: string) => {
      const parsed = parseCron(expression);
      if (!parsed.ok) throw new Error(parsed.error);
      return parsed.fields;
    };
    expect(nextCronMatch(fields('*/15 * * * *'), at('2026-03-01T10:07:30Z'))).toBe(at('2026-03-01T10:15:00Z'));
    expect(nextCronMatch(fields('0 9 * * 1-5'), at('2026-03-07T12:00:00Z'))).toBe(at('2026-03-09T09:00:00Z')); // Saturday → Monday
    // 1st of the month OR a Friday: from Wed 4 March, Friday 6 March comes first.
    expect(nextCronMatch(fields('0 0 1 * 5'), at('2026-03-04T00:00:00Z'))).toBe(at('2026-03-06T00:00:00Z'));
    expect(nextCronMatch(fields('0 0 * * 7'), at('2026-03-04T00:00:00Z'))).toBe(at('2026-03-08T00:00:00Z')); // 7 is Sunday
    expect(nextCronMatch(fields('0 0 30 2 *'), at('2026-01-01T00:00:00Z'))).toBeUndefined();
  });

  it('jitter: deterministic per id, within 10% of the period, capped at 15 minutes', () => {
    const every = (expression: string) => {
      const parsed = parseCron(expression);
      if (!parsed.ok) throw new Error(parsed.error);
      return parsed.fields;
    };
    const now = at('2026-03-01T10:00:00Z');
    const ids = ['a1b2c3d4', '00000000', 'ffffffff', '12345678', 'deadbeef'];
    for (const id of ids) {
      expect(recurringJitterMs(every('*/10 * * * *'), id, now)).toBe(recurringJitterMs(every('*/10 * * * *'), id, now));
      expect(recurringJitterMs(every('*/10 * * * *'), id, now)).toBeLessThan(60_000); // 10% of 10 min
      expect(recurringJitterMs(every('0 9 * * *'), id, now)).toBeLessThanOrEqual(CRON_RECURRING_JITTER_CAP_MS);
    }
    expect(new Set(ids.map((id) => recurringJitterMs(every('0 * * * *'), id, now))).size).toBeGreaterThan(1);
    for (const id of ids) expect(jitterFraction(id)).toBeGreaterThanOrEqual(0);
    for (const id of ids) expect(jitterFraction(id)).toBeLessThan(1);
  });

  it('plans a job: recurring by default with a 7-day expiry; one-shot without; errors as data', () => {
    const base = {
      id: 'a1b2c3d4',
      conversationId: 'conv-1',
      prompt: 'check the deploy',
      timeZone: 'Europe/Paris',
      nowMs: at('2026-03-01T10:00:00Z'),
      existingJobs: 0,
    };
    const recurring = planCronJob({ ...base, cron: '*/5  *  * * *' });
    expect(recurring).toMatchObject({
      ok: true,
      job: { cron: '*/5 * * * *', recurring: true, durable: false, expiresAtMs: base.nowMs + CRON_RECURRING_MAX_AGE_MS },
    });
    const once = planCronJob({ ...base, cron: '30 14 2 3 *', recurring: false, durable: true });
    expect(once).toMatchObject({ ok: true, job: { recurring: false, durable: true, jitterMs: 0 } });
    expect(once.ok && once.job.expiresAtMs).toBeUndefined();
    expect(planCronJob({ ...base, cron: 'every day' })).toMatchObject({ ok: false });
    expect(planCronJob({ ...base, cron: '0 0 30 2 *' })).toMatchObject({ ok: false, error: expect.stringMatching(/does not match/) });
    expect(planCronJob({ ...base, cron: '* * * * *', existingJobs: CRON_MAX_JOBS })).toMatchObject({ ok: false, error: expect.stringMatching(/Too many/) });
    expect(cronScheduleId('conv-1', 'a1b2c3d4')).toBe('cron-conv-1-a1b2c3d4');
  });
});

describe('task list (TaskCreate / TaskGet / TaskList / TaskUpdate)', () => {
  function run(calls: TaskCall[], state: TaskListState = emptyTaskList()) {
    const results: string[] = [];
    for (const call of calls) {
      const result = applyTaskCall(state, call);
      state = result.state;
      results.push(`${result.isError ? 'ERROR ' : ''}${result.content}`);
    }
    return { state, results };
  }

  it('creates with increasing ids, lists, gets, updates status and dependencies on both sides', () => {
    const { state, results } = run([
      { name: 'TaskList', input: {} },
      { name: 'TaskCreate', input: { subject: 'Write the parser', description: 'Parse 5-field cron', activeForm: 'Writing the parser' } },
      { name: 'TaskCreate', input: { subject: 'Test the parser', description: '' } },
      { name: 'TaskUpdate', input: { taskId: '2', addBlockedBy: ['#1'] } },
      { name: 'TaskUpdate', input: { taskId: '1', status: 'in_progress', owner: 'main' } },
      { name: 'TaskList', input: {} },
      { name: 'TaskGet', input: { taskId: '1' } },
      { name: 'TaskUpdate', input: { taskId: '1', status: 'completed' } },
      { name: 'TaskList', input: {} },
      { name: 'TaskUpdate', input: { taskId: '1', status: 'completed' } },
    ]);
    expect(results).toEqual([
      'No tasks found',
      'Task #1 created successfully: Write the parser',
      'Task #2 created successfully: Test the parser',
      'Updated task #2 blockedBy',
      'Updated task #1 status, owner',
      '#1 [in_progress] Write the parser (owner: main)\n#2 [pending] Test the parser [blocked by #1]',
      'Task #1: Write the parser\nStatus: in_progress\nOwner: main\nActive form: Writing the parser\nDescription: Parse 5-field cron\nBlocks: #2',
      'Updated task #1 status',
      '#1 [completed] Write the parser (owner: main)\n#2 [pending] Test the parser',
      'Task #1 unchanged',
    ]);
    expect(state.tasks[0].blocks).toEqual(['2']);
    expect(state.tasks[1].blockedBy).toEqual(['1']);
    // Serializable: what the workflow carries across continue-as-new comes back equal.
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
  });

  it('deletes a task and its references; ids are never reused; unknown ids are error results', () => {
    const { state, results } = run([
      { name: 'TaskCreate', input: { subject: 'A', description: '' } },
      { name: 'TaskCreate', input: { subject: 'B', description: '' } },
      { name: 'TaskUpdate', input: { taskId: '1', addBlocks: ['2'] } },
      { name: 'TaskUpdate', input: { taskId: '1', status: 'deleted' } },
      { name: 'TaskCreate', input: { subject: 'C', description: '' } },
      { name: 'TaskGet', input: { taskId: '1' } },
      { name: 'TaskUpdate', input: { taskId: '9', status: 'completed' } },
      { name: 'TaskUpdate', input: { taskId: '2', addBlocks: ['2'] } },
      { name: 'TaskUpdate', input: { taskId: '2', addBlocks: ['7'] } },
      { name: 'TaskUpdate', input: { taskId: '2', metadata: { team: 'x', gone: null } } },
    ]);
    expect(results).toEqual([
      'Task #1 created successfully: A',
      'Task #2 created successfully: B',
      'Updated task #1 blocks',
      'Task #1 deleted',
      'Task #3 created successfully: C',
      'ERROR Task #1 not found',
      'ERROR Task #9 not found',
      'ERROR Task #2 cannot block itself',
      'ERROR Task #7 not found',
      'Updated task #2 metadata',
    ]);
    expect(state.tasks.map((task) => [task.id, task.blockedBy])).toEqual([
      ['2', []],
      ['3', []],
    ]);
    expect(state.tasks[0].metadata).toEqual({ team: 'x' });
  });

  it('never mutates the state it was given', () => {
    const before = applyTaskCall(emptyTaskList(), { name: 'TaskCreate', input: { subject: 'A', description: '' } }).state;
    const frozen = JSON.stringify(before);
    applyTaskCall(before, { name: 'TaskUpdate', input: { taskId: '1', status: 'completed', subject: 'B' } });
    expect(JSON.stringify(before)).toBe(frozen);
  });
});

describe('ScheduleWakeup', () => {
  it('clamps the delay to 60–3600 s (a lower minimum only by config)', () => {
    expect(clampWakeupDelay(5)).toEqual({ delaySeconds: 60, clamped: true });
    expect(clampWakeupDelay(600)).toEqual({ delaySeconds: 600, clamped: false });
    expect(clampWakeupDelay(86_400)).toEqual({ delaySeconds: 3600, clamped: true });
    expect(clampWakeupDelay(Number.NaN)).toEqual({ delaySeconds: 60, clamped: true });
    expect(clampWakeupDelay(-3)).toEqual({ delaySeconds: 60, clamped: true });
    expect(clampWakeupDelay(2, 1)).toEqual({ delaySeconds: 2, clamped: false });
    expect(clampWakeupDelay(0.4, 1)).toEqual({ delaySeconds: 1, clamped: true });
  });

  it('records the wakeup and tells the model when it is due', () => {
    const now = at('2026-03-01T10:00:00Z');
    const { wakeup, content } = planWakeup({ id: 'w1', delaySeconds: 10, reason: 'poll CI', prompt: 'check CI again', nowMs: now });
    expect(wakeup).toEqual({ id: 'w1', reason: 'poll CI', prompt: 'check CI again', delaySeconds: 60, createdAtMs: now, dueAtMs: now + 60_000 });
    expect(content).toBe('Wakeup scheduled in 60 s, at 2026-03-01T10:01:00.000Z (asked for 10 s; the delay is kept within 60-3600 s). Reason: poll CI');
  });
});

describe('/loop [interval] <prompt>', () => {
  it.each([
    ['5m check the deploy', { prompt: 'check the deploy', interval: { text: '5m', seconds: 300, cron: '*/5 * * * *' } }],
    ['2h /review-pr 12', { prompt: '/review-pr 12', interval: { text: '2h', seconds: 7200, cron: '0 */2 * * *' } }],
    ['1d summarize', { prompt: 'summarize', interval: { text: '1d', seconds: 86400, cron: '0 0 * * *' } }],
    ['check the build every 20m', { prompt: 'check the build', interval: { text: '20m', seconds: 1200, cron: '*/20 * * * *' } }],
    ['keep an eye on the queue', { prompt: 'keep an eye on the queue' }],
    ['5 minutes of fame', { prompt: '5 minutes of fame' }],
  ])('%s', (text, loop) => {
    expect(parseLoopArguments(text)).toEqual({ ok: true, loop });
  });

  it('rounds intervals cron cannot express and says so', () => {
    expect(intervalToCron(30)).toEqual({ cron: '* * * * *', note: "30 s rounds up to 1 min (cron's smallest unit)" });
    expect(intervalToCron(7 * 60)).toEqual({ cron: '*/6 * * * *', note: 'every 7 min is not even within an hour; using every 6 min' });
    expect(intervalToCron(90 * 60)).toMatchObject({ cron: '0 */2 * * *' });
  });

  it('usage errors', () => {
    expect(parseLoopArguments('')).toMatchObject({ ok: false, error: expect.stringMatching(/^Usage/) });
    expect(parseLoopArguments('10m')).toMatchObject({ ok: false, error: expect.stringMatching(/prompt is missing/) });
  });
});

describe('task notifications', () => {
  it("is Claude Code's <task-notification> with status, exit code, output path and tail", () => {
    const text = taskNotificationText(
      { taskId: 'b1', status: 'failed', exitCode: 2, outputPath: '/state/b1.output', tail: 'npm ERR!\n', outputBytes: 9 },
      'Background command "npm test"',
    );
    expect(text).toBe(
      '<task-notification>\n<task-id>b1</task-id>\n<status>failed</status>\n<summary>Background command "npm test" failed (exit code 2)</summary>\n' +
        '<output-file>/state/b1.output</output-file>\n<output-tail>\nnpm ERR!\n\n</output-tail>\n</task-notification>',
    );
  });
});
