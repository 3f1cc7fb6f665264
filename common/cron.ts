/**
 * Cron jobs as Claude Code's CronCreate knows them (pure; the workflow bundle may import it):
 * 5-field cron in the user's local time zone, one-shot or recurring, recurring jobs expiring after
 * 7 days, and a small deterministic jitter derived from the job id so that every user's "hourly"
 * does not land on the same second. Here a job is a Temporal Schedule (activities/background/
 * cron-schedules.ts), which keeps firing after a worker, the server or the conversation restarts.
 *
 * The grammar is Claude Code's: `*`, `N`, `N-M`, `*\/S`, `N-M/S` and comma lists of those in each of
 * minute (0-59), hour (0-23), day of month (1-31), month (1-12) and day of week (0-7, 0 and 7 are
 * Sunday); no names, no `L`, `W`, `?` or `@hourly`. Day of month and day of week both restricted
 * means either (standard cron), as the Temporal server reads the same string.
 */

/** Claude Code: recurring jobs auto-expire this long after they were created. */
export const CRON_RECURRING_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
/** Claude Code: a recurring job fires late by up to this fraction of its period… */
export const CRON_RECURRING_JITTER_FRACTION = 0.1;
/** …and by at most this much. */
export const CRON_RECURRING_JITTER_CAP_MS = 15 * 60 * 1000;
/** Claude Code: at most this many jobs per session. */
export const CRON_MAX_JOBS = 50;

interface FieldRule {
  name: string;
  min: number;
  max: number;
}

const FIELDS: readonly FieldRule[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day of week', min: 0, max: 7 },
];

/** A parsed expression: the matching values of each field (day of week folded to 0-6). */
export interface CronFields {
  minute: ReadonlySet<number>;
  hour: ReadonlySet<number>;
  dayOfMonth: ReadonlySet<number>;
  month: ReadonlySet<number>;
  dayOfWeek: ReadonlySet<number>;
  /** Whether day of month / day of week were `*` (cron's either-or rule applies only when both are restricted). */
  dayOfMonthAny: boolean;
  dayOfWeekAny: boolean;
}

export type CronParse = { ok: true; fields: CronFields } | { ok: false; error: string };

function parseField(text: string, rule: FieldRule): { values: Set<number> } | { error: string } {
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const match = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
    if (!match) return { error: `${rule.name} field "${text}": "${part}" is not N, N-M, * or a step (*/S, N-M/S)` };
    const [, whole, startText, endText, stepText] = match;
    let start = rule.min;
    let end = rule.max;
    if (whole !== '*') {
      start = Number(startText);
      end = endText === undefined ? (stepText === undefined ? start : rule.max) : Number(endText);
    }
    const step = stepText === undefined ? 1 : Number(stepText);
    if (start < rule.min || end > rule.max || start > end) {
      return { error: `${rule.name} field "${text}": values must be within ${rule.min}-${rule.max}` };
    }
    if (step < 1) return { error: `${rule.name} field "${text}": a step must be at least 1` };
    for (let value = start; value <= end; value += step) values.add(value);
  }
  return { values };
}

/** Parses a 5-field expression, or says which field is wrong (a message the model can act on). */
export function parseCron(expression: string): CronParse {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5 || parts[0] === '') {
    return { ok: false, error: `"${expression}" is not a 5-field cron expression (minute hour day-of-month month day-of-week)` };
  }
  const sets: Set<number>[] = [];
  for (let index = 0; index < 5; index++) {
    const parsed = parseField(parts[index], FIELDS[index]);
    if ('error' in parsed) return { ok: false, error: parsed.error };
    sets.push(parsed.values);
  }
  const dayOfWeek = new Set([...sets[4]].map((day) => day % 7));
  return {
    ok: true,
    fields: {
      minute: sets[0],
      hour: sets[1],
      dayOfMonth: sets[2],
      month: sets[3],
      dayOfWeek,
      dayOfMonthAny: parts[2] === '*',
      dayOfWeekAny: parts[4] === '*',
    },
  };
}

function matchesDay(fields: CronFields, dayOfMonth: number, dayOfWeek: number): boolean {
  const byMonthDay = fields.dayOfMonth.has(dayOfMonth);
  const byWeekDay = fields.dayOfWeek.has(dayOfWeek);
  if (fields.dayOfMonthAny || fields.dayOfWeekAny) return byMonthDay && byWeekDay;
  return byMonthDay || byWeekDay;
}

/** Minutes searched for the next match (a year and a day: `0 0 29 2 *` may be 4 years away, which Claude Code also gives up on). */
const SEARCH_LIMIT_MINUTES = 366 * 24 * 60;

/**
 * The first wall-clock minute strictly after `afterMs` that matches, reading both as wall-clock
 * time in UTC arithmetic (the caller's zone is applied by the Schedule, not here). Undefined when
 * nothing matches within a year.
 */
export function nextCronMatch(fields: CronFields, afterMs: number): number | undefined {
  let time = Math.floor(afterMs / 60_000) * 60_000 + 60_000;
  for (let step = 0; step < SEARCH_LIMIT_MINUTES; step++, time += 60_000) {
    const date = new Date(time);
    if (!fields.month.has(date.getUTCMonth() + 1)) continue;
    if (!matchesDay(fields, date.getUTCDate(), date.getUTCDay())) continue;
    if (!fields.hour.has(date.getUTCHours())) continue;
    if (fields.minute.has(date.getUTCMinutes())) return time;
  }
  return undefined;
}

/** A fraction in [0, 1) from a job id (Claude Code derives it from the id's hex digits), so a job's jitter is the same every fire. */
export function jitterFraction(jobId: string): number {
  let hash = 2166136261;
  for (const character of jobId) hash = Math.imul(hash ^ character.charCodeAt(0), 16777619) >>> 0;
  return hash / 2 ** 32;
}

/**
 * How late a recurring job fires after each matching minute: its id's fraction of 10% of the
 * interval between two matches, at most 15 minutes (Claude Code's recurring jitter). One-shot jobs
 * fire on time here (Claude Code may fire those up to 90 s early on :00 and :30; a Schedule cannot
 * fire before its time without rewriting the expression — a documented difference).
 */
export function recurringJitterMs(fields: CronFields, jobId: string, referenceMs: number): number {
  const first = nextCronMatch(fields, referenceMs);
  const second = first === undefined ? undefined : nextCronMatch(fields, first);
  if (first === undefined || second === undefined) return 0;
  const window = Math.min((second - first) * CRON_RECURRING_JITTER_FRACTION, CRON_RECURRING_JITTER_CAP_MS);
  return Math.floor(jitterFraction(jobId) * window);
}

/** A job as the conversation and `CronList` see it (also the Schedule's memo, minus the derived fields). */
export interface CronJob {
  /** 8 hex digits, as Claude Code's ids. */
  id: string;
  conversationId: string;
  cron: string;
  prompt: string;
  recurring: boolean;
  /** Durable jobs outlive the conversation (signal-with-start); session-only ones are deleted when it ends. */
  durable: boolean;
  /** IANA zone the expression is read in (the user's). */
  timeZone: string;
  createdAtMs: number;
  /** Recurring jobs: created + 7 days. */
  expiresAtMs?: number;
  /** How late after each matching minute the prompt is delivered. */
  jitterMs: number;
}

/** What a fired job delivers to its conversation (the payload of the conversation's cron signal). */
export interface CronFire {
  jobId: string;
  prompt: string;
  recurring: boolean;
  /** When the Schedule meant to fire (its action's scheduled time), ISO 8601. */
  scheduledAt?: string;
}

/** The Schedule id of a job: readable on the UI's Schedules page, unique per conversation and job. */
export function cronScheduleId(conversationId: string, jobId: string): string {
  return `cron-${conversationId}-${jobId}`;
}

/** Decides a new job from CronCreate's input (pure): a parse error, or the job to create. */
export function planCronJob(input: {
  id: string;
  conversationId: string;
  cron: string;
  prompt: string;
  recurring?: boolean;
  durable?: boolean;
  timeZone: string;
  nowMs: number;
  existingJobs: number;
}): { ok: true; job: CronJob } | { ok: false; error: string } {
  const parsed = parseCron(input.cron);
  if (!parsed.ok) return parsed;
  if (input.existingJobs >= CRON_MAX_JOBS) return { ok: false, error: `Too many scheduled jobs (at most ${CRON_MAX_JOBS}); delete one with CronDelete first.` };
  if (nextCronMatch(parsed.fields, input.nowMs) === undefined) {
    return { ok: false, error: `"${input.cron}" does not match any time within the next year.` };
  }
  const recurring = input.recurring ?? true;
  return {
    ok: true,
    job: {
      id: input.id,
      conversationId: input.conversationId,
      cron: input.cron.trim().split(/\s+/).join(' '),
      prompt: input.prompt,
      recurring,
      durable: input.durable ?? false,
      timeZone: input.timeZone,
      createdAtMs: input.nowMs,
      ...(recurring ? { expiresAtMs: input.nowMs + CRON_RECURRING_MAX_AGE_MS } : {}),
      jitterMs: recurring ? recurringJitterMs(parsed.fields, input.id, input.nowMs) : 0,
    },
  };
}

/** Where a fired job's prompt goes: the conversation's signal, and how to start it again (durable jobs). */
export interface CronDeliveryTarget {
  /** The conversation workflow's signal that takes a CronFire. */
  signalName: string;
  /**
   * Durable jobs: how to start the conversation again when it has ended or continued as new
   * (signal-with-start). Session-only jobs have none: a job whose conversation is gone deletes itself.
   */
  start?: { workflowType: string; taskQueue: string; args: unknown[] };
}

/** `createCronSchedule`: the job, the queue its fire workflow runs on, and how it reaches the conversation. */
export interface CreateCronScheduleInput {
  job: CronJob;
  /** The queue the fire workflow runs on (the conversation's). */
  taskQueue: string;
  target: CronDeliveryTarget;
}

/** The fire workflow's input (a Schedule can only start a workflow; this one delivers and ends). */
export interface CronFireInput {
  scheduleId: string;
  conversationId: string;
  jobId: string;
  prompt: string;
  recurring: boolean;
  durable: boolean;
  jitterMs: number;
  target: CronDeliveryTarget;
}

/** What delivering a fire did. */
export interface CronDeliveryResult {
  delivered: boolean;
  /** The conversation was started again (durable job, conversation had ended). */
  startedConversation?: boolean;
  /** The job's Schedule was deleted (one-shot after firing; session-only job whose conversation is gone). */
  deletedSchedule?: boolean;
}

/** The activity the fire workflow runs (activities/background/cron-schedules.ts). */
export interface CronFireActivities {
  deliverCronPrompt(input: CronFireInput & { scheduledAt?: string }): Promise<CronDeliveryResult>;
}

/** The fire workflow's type name, as the Schedule's action names it. */
export const CRON_FIRE_WORKFLOW_TYPE = 'cronFireWorkflow';

/** A job as CronList shows it (read back from its Schedule). */
export interface CronJobSummary {
  id: string;
  scheduleId: string;
  cron: string;
  prompt: string;
  recurring: boolean;
  durable: boolean;
  timeZone: string;
  /** ISO 8601; the next few times the Schedule will act (before jitter). */
  nextFireTimes: string[];
  expiresAt?: string;
}

/** CronList's result text. */
export function cronListText(jobs: readonly CronJobSummary[]): string {
  if (jobs.length === 0) return 'No scheduled jobs.';
  return jobs
    .map(
      (job) =>
        `${job.id}: "${job.cron}" (${job.timeZone}) ${job.recurring ? 'recurring' : 'one-shot'}${job.durable ? ', durable' : ', session-only'}` +
        (job.nextFireTimes[0] ? `, next ${job.nextFireTimes[0]}` : ', no further fires') +
        (job.expiresAt ? `, expires ${job.expiresAt}` : '') +
        `\n  prompt: ${job.prompt}`,
    )
    .join('\n');
}
