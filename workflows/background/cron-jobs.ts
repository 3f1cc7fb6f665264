/**
 * Cron jobs as Temporal Schedules (issue 21 §5), the workflow's side: CronCreate decides the job
 * in the workflow (`planCronJob`, common/cron.ts) and the `createCronSchedule` activity makes its
 * Schedule; CronDelete / CronList run their activities. The cron activities run on the
 * conversation's own queue (the main worker: they need the Temporal client), not the workspace's.
 * A fire arrives as the `cronFired` signal (`onFire`) and becomes the next input, once per
 * (job, scheduled time). The conversation keeps a record of the jobs it made: while it has any it
 * is never idle-timed out, a recurring job's record goes at its 7-day expiry (a timer), and at the
 * end its session-only jobs are deleted (`deleteSessionCronSchedules`, only when it made some).
 */
import { CancellationScope, isCancellation, log, sleep, uuid4, workflowInfo } from '@temporalio/workflow';
import type { ConversationConfig } from '../../common/config';
import { type CronFire, type CronJob, type CronJobSummary, cronListText, cronScheduleId, planCronJob } from '../../common/cron';
import { oneLine } from '../../common/cut-text';
import type { ToolUseBlock } from '../../common/messages';
import type { CronCreateInput } from '../../common/tools/cron-create';
import type { CronDeleteInput } from '../../common/tools/cron-delete';
import { SHORT_ACTIVITY_OPTIONS, activities } from '../deps/activity-options';
import type { ToolOutcome, ToolRoute, ToolRouteCall } from '../deps/query-host';
import type { CronJobRecord } from './cron-job-record';

export type { CronJobRecord } from './cron-job-record';
import { parseRouteInput } from './route-input';

export const CRON_TOOLS: ReadonlySet<string> = new Set(['CronCreate', 'CronDelete', 'CronList']);

/** The signal a job's Schedule delivers to (workflows/definitions.ts cronFiredSignal). */
export const CRON_FIRED_SIGNAL = 'cronFired';

/** What the cron jobs need from the session. */
export interface CronJobsHost {
  readonly conversationId: string;
  readonly config: ConversationConfig;
  readonly isSubagent: boolean;
  notify(key: string, prompt: string): void;
  onChange(): void;
}

/** Claude Code's jobs run in local time: the client's zone, UTC when the client did not say. */
export function cronTimeZone(config: Pick<ConversationConfig, 'timeZone'>): string {
  return config.timeZone ?? 'UTC';
}

function cronActivities(summary: string) {
  // On the conversation's own queue: the main worker has the Temporal client.
  return activities({ ...SHORT_ACTIVITY_OPTIONS, summary });
}

export class CronJobs implements ToolRoute {
  readonly name = 'cron jobs';
  private records: CronJobRecord[];
  /** The expiry timers' scope (not the query's: an abort leaves jobs alone). */
  private readonly scope = new CancellationScope({ cancellable: true });

  constructor(
    carried: CronJobRecord[] | undefined,
    private readonly host: CronJobsHost,
  ) {
    this.records = [...(carried ?? [])];
    for (const record of this.records) this.watchExpiry(record);
  }

  takes(block: ToolUseBlock): boolean {
    return CRON_TOOLS.has(block.name);
  }

  async run({ block, summary }: ToolRouteCall): Promise<ToolOutcome> {
    if (this.host.isSubagent) return { isError: true, content: `${block.name} is not available to a subagent; return your result instead.` };
    switch (block.name) {
      case 'CronCreate': {
        const parsed = parseRouteInput<CronCreateInput>(block);
        return parsed.ok ? this.create(parsed.input, summary) : parsed.outcome;
      }
      case 'CronDelete': {
        const parsed = parseRouteInput<CronDeleteInput>(block);
        return parsed.ok ? this.delete(parsed.input.id, summary) : parsed.outcome;
      }
      default:
        return { content: cronListText(await this.list(summary)), isError: false };
    }
  }

  /** CronCreate (and `/loop <interval>`): plans the job, then makes its Schedule. */
  async create(input: { cron: string; prompt: string; recurring?: boolean; durable?: boolean }, summary: string): Promise<ToolOutcome> {
    const planned = planCronJob({
      id: uuid4().replace(/-/g, '').slice(0, 8),
      conversationId: this.host.conversationId,
      cron: input.cron,
      prompt: input.prompt,
      recurring: input.recurring,
      durable: input.durable,
      timeZone: cronTimeZone(this.host.config),
      nowMs: Date.now(),
      existingJobs: this.records.length,
    });
    if (!planned.ok) return { isError: true, content: planned.error };
    const { job } = planned;
    const { nextFireTimes } = await cronActivities(summary).createCronSchedule({
      job,
      taskQueue: workflowInfo().taskQueue,
      target: {
        signalName: CRON_FIRED_SIGNAL,
        // A durable job starts the conversation again (same id, same config) when it has ended.
        ...(job.durable
          ? { start: { workflowType: workflowInfo().workflowType, taskQueue: workflowInfo().taskQueue, args: [{ config: this.host.config }] } }
          : {}),
      },
    });
    const record = recordOf(job, nextFireTimes);
    this.records.push(record);
    this.watchExpiry(record);
    this.host.onChange();
    return { isError: false, content: createdText(record) };
  }

  private async delete(id: string, summary: string): Promise<ToolOutcome> {
    const result = await cronActivities(summary).deleteCronSchedule({ conversationId: this.host.conversationId, id });
    this.forget(id);
    return { isError: false, content: result.message };
  }

  /** The Schedules (the server's word), and jobs made so recently that its list does not show them yet. */
  private async list(summary: string): Promise<CronJobSummary[]> {
    const listed = await cronActivities(summary).listCronSchedules({ conversationId: this.host.conversationId });
    const unlisted = this.records.filter((record) => !listed.some((job) => job.id === record.id));
    return [...listed, ...unlisted.map((record) => summaryOf(this.host.conversationId, record))];
  }

  /** The `cronFired` signal: the prompt becomes the next input, once per job and scheduled time. */
  onFire(fire: CronFire): void {
    if (typeof fire?.jobId !== 'string' || typeof fire.prompt !== 'string' || fire.prompt.trim() === '') {
      log.warn('Dropped malformed cronFired signal', { received: fire });
      return;
    }
    // A one-shot job's Schedule deletes itself after this fire.
    if (fire.recurring === false) this.forget(fire.jobId);
    this.host.notify(`cron:${fire.jobId}:${fire.scheduledAt ?? ''}`, fire.prompt);
  }

  private forget(id: string): void {
    const before = this.records.length;
    this.records = this.records.filter((record) => record.id !== id);
    if (this.records.length !== before) this.host.onChange();
  }

  /** A recurring job's Schedule stops at its end (7 days): so does the record, and with it the wait it holds open. */
  private watchExpiry(record: CronJobRecord): void {
    if (record.expiresAtMs === undefined) return;
    this.scope
      .run(() => sleep(Math.max(1, record.expiresAtMs! - Date.now()), { summary: `cron job ${record.id} expires` }))
      .then(
        () => this.forget(record.id),
        (error) => {
          if (!isCancellation(error)) log.warn('Cron expiry timer failed', { id: record.id, error: String(error) });
        },
      );
  }

  /** Jobs are scheduled: the conversation is not idle-timed out. */
  pending(): boolean {
    return this.records.length > 0;
  }

  /** The conversation ends: its session-only jobs are deleted (no command when it made none); durable ones stay. */
  async onEnd(): Promise<void> {
    if (this.records.length === 0) return;
    const sessionOnly = this.records.filter((record) => !record.durable).map((record) => record.id);
    const expiring = this.records.some((record) => record.expiresAtMs !== undefined);
    this.records = [];
    if (expiring) this.scope.cancel();
    if (sessionOnly.length === 0) return;
    const { deleted } = await cronActivities('Delete session-only cron jobs').deleteSessionCronSchedules({ conversationId: this.host.conversationId });
    // The server's Schedule list is eventually consistent: a job made moments ago may not be in it yet.
    for (const id of sessionOnly.filter((id) => !deleted.includes(id))) {
      await cronActivities(`Delete cron job ${id}`).deleteCronSchedule({ conversationId: this.host.conversationId, id });
    }
  }

  /** For `status`. */
  statusList(): NonNullable<import('../definitions').ConversationStatus['cronJobs']> {
    return this.records.map((record) => ({
      id: record.id,
      cron: record.cron,
      prompt: record.prompt,
      recurring: record.recurring,
      durable: record.durable,
      timeZone: record.timeZone,
      ...(record.expiresAtMs !== undefined ? { expiresAt: new Date(record.expiresAtMs).toISOString() } : {}),
    }));
  }

  carried(): CronJobRecord[] | undefined {
    return this.records.length > 0 ? this.records : undefined;
  }
}

function recordOf(job: CronJob, nextFireTimes: string[]): CronJobRecord {
  return {
    id: job.id,
    cron: job.cron,
    prompt: job.prompt,
    recurring: job.recurring,
    durable: job.durable,
    timeZone: job.timeZone,
    createdAtMs: job.createdAtMs,
    ...(job.expiresAtMs !== undefined ? { expiresAtMs: job.expiresAtMs } : {}),
    nextFireTimes: nextFireTimes.slice(0, 3),
  };
}

function summaryOf(conversationId: string, record: CronJobRecord): CronJobSummary {
  return {
    id: record.id,
    scheduleId: cronScheduleId(conversationId, record.id),
    cron: record.cron,
    prompt: record.prompt,
    recurring: record.recurring,
    durable: record.durable,
    timeZone: record.timeZone,
    nextFireTimes: record.nextFireTimes.filter((time) => Date.parse(time) > Date.now()),
    ...(record.expiresAtMs !== undefined ? { expiresAt: new Date(record.expiresAtMs).toISOString() } : {}),
  };
}

function createdText(record: CronJobRecord): string {
  const kind = record.recurring ? 'recurring' : 'one-shot';
  const scope = record.durable ? 'durable: it outlives this conversation' : 'session-only: deleted when this conversation ends';
  const next = record.nextFireTimes[0] ? ` Next fire: ${record.nextFireTimes[0]}.` : '';
  const expires = record.expiresAtMs !== undefined ? ` It expires ${new Date(record.expiresAtMs).toISOString()}.` : '';
  return `Scheduled ${kind} job ${record.id} ("${record.cron}", ${record.timeZone}; ${scope}).${next}${expires} Prompt: ${oneLine(record.prompt, 200)}`;
}
