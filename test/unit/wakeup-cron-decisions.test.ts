/**
 * Issue 21 §4–6, the pure parts of the wiring: the wakeup timer's UI label, /loop's self-paced
 * prompt, /tasks, the UI's current details with tasks and scheduled work, the cron time zone,
 * `durable-agent cron list`'s rows, and the permission engine's answer for these tools (no prompt,
 * but deny rules hold).
 */
import { describe, expect, it } from 'vitest';
import { cronEntryOf, cronRow } from '../../client/commands/cron';
import { localTimeZone } from '../../client/command-line';
import { decidePermission } from '../../common/permissions';
import { cronTimeZone } from '../../workflows/background/cron-jobs';
import { selfPacedLoopPrompt } from '../../workflows/background/loop-command';
import { wakeupTimerSummary } from '../../workflows/background/wakeups';
import { tasksText } from '../../workflows/input/slash-commands';
import { formatCurrentDetails } from '../../workflows/ui/details';
import type { PermissionContext } from '../../common/permissions';

describe('wakeups and /loop', () => {
  it("labels a wakeup's timer with its reason on one line", () => {
    expect(wakeupTimerSummary('check the build')).toBe('wakeup: check the build');
    expect(wakeupTimerSummary('line one\nline two')).not.toContain('\n');
    expect(wakeupTimerSummary('x'.repeat(500)).length).toBeLessThan(100);
  });

  it('a self-paced /loop tells the model to pace itself with ScheduleWakeup, within the configured range', () => {
    const prompt = selfPacedLoopPrompt('check the deploy', 60);
    expect(prompt.startsWith('check the deploy\n')).toBe(true);
    expect(prompt).toContain('call ScheduleWakeup (delaySeconds between 60 and 3600');
  });
});

describe('/tasks and the UI details', () => {
  it('/tasks lists tasks, wakeups and cron jobs, and says when there are no tasks', () => {
    expect(tasksText({ taskLines: [] })).toBe('Tasks:\n  (none)');
    const text = tasksText({
      taskLines: ['#1 [in_progress] Run the tests'],
      wakeups: [{ id: 'w1', reason: 'poll CI', dueAt: '2026-12-02T03:00:00.000Z' }],
      cronJobs: [{ id: 'c1', cron: '0 9 * * 1-5', timeZone: 'Europe/Paris', prompt: 'standup', recurring: true, durable: false }],
    });
    expect(text).toBe(
      'Tasks:\n  #1 [in_progress] Run the tests\nWakeups:\n  w1 at 2026-12-02T03:00:00.000Z: poll CI\nCron jobs:\n  c1 "0 9 * * 1-5" (Europe/Paris) recurring: standup',
    );
  });

  it('the current details show tasks and scheduled work only when there are some', () => {
    const base = { phase: 'awaiting_input', tools: [], turn: 1, queryCount: 1, model: 'm', costUsd: 0 };
    expect(formatCurrentDetails({ ...base, tasks: [], scheduled: [] })).not.toContain('Tasks');
    const details = formatCurrentDetails({ ...base, tasks: ['#1 [pending] Ship it'], scheduled: ['wakeup 2026-12-02T03:00:00.000Z: poll CI'] });
    expect(details).toContain('**Tasks:**');
    expect(details).toContain('Ship it');
    expect(details).toContain('**Scheduled:** wakeup 2026-12-02T03:00:00.000Z: poll CI');
  });
});

describe('cron', () => {
  it("jobs run in the client's zone, UTC when it sent none; the client sends its own", () => {
    expect(cronTimeZone({ timeZone: 'Asia/Tokyo' })).toBe('Asia/Tokyo');
    expect(cronTimeZone({})).toBe('UTC');
    expect(localTimeZone()).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
  });

  it('cron list reads only our Schedules (by memo) and shows id, cron, next fire, kind, conversation, prompt', () => {
    expect(cronEntryOf({ scheduleId: 'other', memo: { kind: 'something-else' }, info: { nextActionTimes: [] } as never, state: {} as never })).toBeUndefined();
    const entry = cronEntryOf({
      scheduleId: 'cron-conv-1-ab12cd34',
      memo: {
        kind: 'durable-agent-cron',
        conversationId: 'conv-1',
        jobId: 'ab12cd34',
        cron: '*/5 * * * *',
        prompt: 'check\nthe queue',
        recurring: true,
        durable: true,
        timeZone: 'UTC',
      },
      info: { nextActionTimes: [new Date('2026-12-02T03:05:00.000Z')] } as never,
      state: { paused: false } as never,
    });
    expect(entry).toMatchObject({ id: 'ab12cd34', conversationId: 'conv-1', nextFire: '2026-12-02T03:05:00.000Z', durable: true });
    expect(cronRow(entry!)).toEqual(['ab12cd34', '*/5 * * * * (UTC)', '2026-12-02T03:05:00Z', 'recurring, durable', 'conv-1', '"check the queue"']);
  });
});

describe('permissions for the task list, wakeups and cron tools', () => {
  const context = (overrides: Partial<PermissionContext> = {}): PermissionContext =>
    ({ mode: 'default', workingDirectories: ['/work'], rules: { allow: [], deny: [], ask: [] }, ...overrides }) as PermissionContext;
  const facts = { readOnly: true, validInput: true };

  it('ask no permission in default and plan mode (as Claude Code)', () => {
    for (const toolName of ['TaskCreate', 'TaskUpdate', 'ScheduleWakeup', 'CronCreate', 'CronDelete', 'CronList']) {
      expect(decidePermission({ toolName, input: {} }, facts, context()).behavior).toBe('allow');
      expect(decidePermission({ toolName, input: {} }, facts, context({ mode: 'plan' })).behavior).toBe('allow');
    }
  });

  it('but a deny rule denies them, and dontAsk mode leaves them allowed', () => {
    const denied = context({ rules: { allow: [], deny: [{ rule: 'CronCreate', source: 'cli' }], ask: [] } as never });
    expect(decidePermission({ toolName: 'CronCreate', input: {} }, facts, denied).behavior).toBe('deny');
    expect(decidePermission({ toolName: 'CronList', input: {} }, facts, denied).behavior).toBe('allow');
    const asked = context({ rules: { allow: [], deny: [], ask: [{ rule: 'ScheduleWakeup', source: 'cli' }] } as never });
    expect(decidePermission({ toolName: 'ScheduleWakeup', input: {} }, facts, asked).behavior).toBe('ask');
  });
});

describe('the config', () => {
  it('takes an IANA time zone and refuses anything else with a clear message; the wakeup minimum defaults to 60 s', async () => {
    const { conversationConfigSchema } = await import('../../common/config');
    expect(conversationConfigSchema.parse({ cwd: '/w', timeZone: 'Europe/Paris' }).timeZone).toBe('Europe/Paris');
    expect(conversationConfigSchema.parse({ cwd: '/w' }).wakeupMinimumSeconds).toBe(60);
    const bad = conversationConfigSchema.safeParse({ cwd: '/w', timeZone: 'Mars/Olympus' });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toContain('not an IANA time zone');
    expect(conversationConfigSchema.safeParse({ cwd: '/w', wakeupMinimumSeconds: 0 }).success).toBe(false);
  });
});
