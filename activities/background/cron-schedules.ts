/**
 * Cron jobs as Temporal Schedules (issue 21 §5): CronCreate / CronList / CronDelete on the
 * server's ScheduleClient, and the delivery a fire runs (workflows/cron-fire.ts). A Schedule keeps
 * firing across worker, server and conversation restarts and writes no history while it waits;
 * the UI's Schedules page shows it under a readable id (`cron-<conversation>-<job>`) with the
 * prompt and conversation in its memo.
 */
import { type Client, ScheduleAlreadyRunning, ScheduleNotFoundError, WorkflowNotFoundError } from '@temporalio/client';
import {
  CRON_FIRE_WORKFLOW_TYPE,
  type CronDeliveryResult,
  type CreateCronScheduleInput,
  type CronFire,
  type CronFireInput,
  type CronJob,
  type CronJobSummary,
  cronScheduleId,
} from '../../common/cron';

/** Missed fires (server down) are taken only this late; Claude Code does not catch up at all. */
export const CRON_CATCHUP_WINDOW = '1 minute';

/** The memo every job's Schedule carries (shown in the UI, read back by CronList). */
export interface CronScheduleMemo {
  kind: 'durable-agent-cron';
  conversationId: string;
  jobId: string;
  cron: string;
  prompt: string;
  recurring: boolean;
  durable: boolean;
  timeZone: string;
  createdAt: string;
  expiresAt?: string;
}

function memoOf(job: CronJob): CronScheduleMemo {
  return {
    kind: 'durable-agent-cron',
    conversationId: job.conversationId,
    jobId: job.id,
    cron: job.cron,
    prompt: job.prompt,
    recurring: job.recurring,
    durable: job.durable,
    timeZone: job.timeZone,
    createdAt: new Date(job.createdAtMs).toISOString(),
    ...(job.expiresAtMs !== undefined ? { expiresAt: new Date(job.expiresAtMs).toISOString() } : {}),
  };
}

/** Creates the job's Schedule. Idempotent: a retried activity finds its own Schedule and returns it. */
export async function createCronSchedule(client: Client, input: CreateCronScheduleInput): Promise<{ scheduleId: string; nextFireTimes: string[] }> {
  const { job } = input;
  const scheduleId = cronScheduleId(job.conversationId, job.id);
  const fire: CronFireInput = {
    scheduleId,
    conversationId: job.conversationId,
    jobId: job.id,
    prompt: job.prompt,
    recurring: job.recurring,
    durable: job.durable,
    jitterMs: job.jitterMs,
    target: input.target,
  };
  try {
    await client.schedule.create({
      scheduleId,
      spec: {
        cronExpressions: [job.cron],
        timezone: job.timeZone,
        // Claude Code: recurring jobs expire after 7 days; the Schedule takes no action after endAt.
        ...(job.expiresAtMs !== undefined ? { endAt: new Date(job.expiresAtMs) } : {}),
      },
      action: {
        type: 'startWorkflow',
        workflowType: CRON_FIRE_WORKFLOW_TYPE,
        taskQueue: input.taskQueue,
        // The server appends the fire time, so each fire's workflow id is unique and readable.
        workflowId: `${scheduleId}-fire`,
        args: [fire],
      },
      policies: { catchupWindow: CRON_CATCHUP_WINDOW },
      state: {
        note: `${job.recurring ? 'Recurring' : 'One-shot'} job of conversation ${job.conversationId}: ${job.prompt.slice(0, 200)}`,
        // One-shot: one action, then the delivery deletes the Schedule.
        ...(job.recurring ? {} : { remainingActions: 1 }),
      },
      memo: memoOf(job) as unknown as Record<string, unknown>,
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    const existing = await client.schedule.getHandle(scheduleId).describe();
    const memo = existing.memo as Partial<CronScheduleMemo> | undefined;
    if (memo?.conversationId !== job.conversationId || memo.prompt !== job.prompt || memo.cron !== job.cron) {
      throw new Error(`Schedule ${scheduleId} already exists with another job`);
    }
  }
  const description = await client.schedule.getHandle(scheduleId).describe();
  return { scheduleId, nextFireTimes: description.info.nextActionTimes.map((time) => time.toISOString()) };
}

/** The conversation's jobs, read back from their Schedules (memo), soonest first. */
export async function listCronSchedules(client: Client, input: { conversationId: string }): Promise<CronJobSummary[]> {
  const prefix = cronScheduleId(input.conversationId, '');
  const jobs: CronJobSummary[] = [];
  for await (const schedule of client.schedule.list()) {
    if (!schedule.scheduleId.startsWith(prefix)) continue;
    const memo = schedule.memo as Partial<CronScheduleMemo> | undefined;
    // The id prefix of "conv" also matches "conv-2"'s jobs: the memo says whose it is.
    if (memo?.kind !== 'durable-agent-cron' || memo.conversationId !== input.conversationId) continue;
    jobs.push({
      id: memo.jobId!,
      scheduleId: schedule.scheduleId,
      cron: memo.cron!,
      prompt: memo.prompt!,
      recurring: memo.recurring ?? true,
      durable: memo.durable ?? false,
      timeZone: memo.timeZone!,
      nextFireTimes: (schedule.info?.nextActionTimes ?? []).map((time) => time.toISOString()),
      ...(memo.expiresAt ? { expiresAt: memo.expiresAt } : {}),
    });
  }
  return jobs.sort((a, b) => (a.nextFireTimes[0] ?? '~').localeCompare(b.nextFireTimes[0] ?? '~'));
}

/** Deletes a Schedule: false when it was already gone. */
async function deleteSchedule(client: Client, scheduleId: string): Promise<boolean> {
  try {
    await client.schedule.getHandle(scheduleId).delete();
    return true;
  } catch (error) {
    if (error instanceof ScheduleNotFoundError) return false;
    throw error;
  }
}

/** CronDelete. Deleting a job that is already gone says so (no error: the model may retry). */
export async function deleteCronSchedule(client: Client, input: { conversationId: string; id: string }): Promise<{ deleted: boolean; message: string }> {
  if (await deleteSchedule(client, cronScheduleId(input.conversationId, input.id))) return { deleted: true, message: `Deleted job ${input.id}.` };
  return { deleted: false, message: `No job ${input.id} (it may have fired once and been removed, or expired).` };
}

/** When the conversation ends: its session-only jobs go with it; durable ones stay. */
export async function deleteSessionCronSchedules(client: Client, input: { conversationId: string }): Promise<{ deleted: string[] }> {
  const deleted: string[] = [];
  for (const job of await listCronSchedules(client, input)) {
    if (job.durable) continue;
    if ((await deleteCronSchedule(client, { conversationId: input.conversationId, id: job.id })).deleted) deleted.push(job.id);
  }
  return { deleted };
}

/**
 * Runs in the fire workflow: gets the prompt to the conversation. A durable job signals-with-start
 * (the conversation may have ended or continued as new); a session-only job only signals, and
 * deletes its own Schedule when the conversation is gone. A one-shot job's Schedule is deleted
 * once it has delivered.
 */
export async function deliverCronPrompt(client: Client, input: CronFireInput & { scheduledAt?: string }): Promise<CronDeliveryResult> {
  const fire: CronFire = {
    jobId: input.jobId,
    prompt: input.prompt,
    recurring: input.recurring,
    ...(input.scheduledAt ? { scheduledAt: input.scheduledAt } : {}),
  };
  const dropSchedule = () => deleteSchedule(client, input.scheduleId);
  let startedConversation = false;
  if (input.durable && input.target.start) {
    const { start } = input.target;
    // Only informational (the conversation may end between the two calls): whether this fire started it again.
    const running = await client.workflow
      .getHandle(input.conversationId)
      .describe()
      .then(
        (description) => description.status.name === 'RUNNING',
        () => false,
      );
    await client.workflow.signalWithStart(start.workflowType, {
      workflowId: input.conversationId,
      taskQueue: start.taskQueue,
      args: start.args,
      signal: input.target.signalName,
      signalArgs: [fire],
    });
    startedConversation = !running;
  } else {
    try {
      await client.workflow.getHandle(input.conversationId).signal(input.target.signalName, fire);
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      return { delivered: false, deletedSchedule: await dropSchedule() };
    }
  }
  const deletedSchedule = input.recurring ? false : await dropSchedule();
  return { delivered: true, ...(startedConversation ? { startedConversation } : {}), ...(deletedSchedule ? { deletedSchedule } : {}) };
}
