/**
 * Issue 21's activities, built by a factory like the others (style §8) and registered in
 * activities/index.ts in their own block. Background commands run on the workspace's queue (their
 * files and processes are on that host); the cron activities only need the Temporal client.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { BackgroundTaskRef, ReadTaskOutputInput, StartBackgroundCommandInput } from '../../common/background';
import type { CreateCronScheduleInput, CronFireInput } from '../../common/cron';
import { readTaskOutput, startBackgroundCommand, stopBackgroundCommand, superviseBackgroundCommand } from './background-command';
import { createCronSchedule, deleteCronSchedule, deleteSessionCronSchedules, deliverCronPrompt, listCronSchedules } from './cron-schedules';

export interface BackgroundActivityDeps {
  stateDir: string;
  /** Needed by the cron activities (Schedules, signal-with-start). */
  temporalClient?: Client;
}

export function createBackgroundActivities(deps: BackgroundActivityDeps) {
  const client = (): Client => {
    if (!deps.temporalClient) throw ApplicationFailure.nonRetryable('This worker has no Temporal client: cron jobs cannot be managed here', 'NoTemporalClient');
    return deps.temporalClient;
  };
  return {
    /** Starts the command detached; returns at once. Idempotent per task id. */
    startBackgroundCommand: (input: StartBackgroundCommandInput) => startBackgroundCommand(deps, input),
    /**
     * Heartbeats while the command runs and returns its outcome; schedule it with a heartbeat
     * timeout so a dead worker's attempt is retried on another, which re-attaches.
     */
    superviseBackgroundCommand: (input: BackgroundTaskRef) => {
      const context = Context.current();
      return superviseBackgroundCommand(deps, input, { heartbeat: (details) => context.heartbeat(details), signal: context.cancellationSignal });
    },
    /** TaskOutput (heartbeats while it blocks). */
    readTaskOutput: (input: ReadTaskOutputInput) => {
      const context = Context.current();
      return readTaskOutput(deps, input, { heartbeat: () => context.heartbeat(), signal: context.cancellationSignal });
    },
    /** TaskStop, and `end` for each running command. */
    stopBackgroundCommand: (input: BackgroundTaskRef) => stopBackgroundCommand(deps, input),
    createCronSchedule: (input: CreateCronScheduleInput) => createCronSchedule(client(), input),
    listCronSchedules: (input: { conversationId: string }) => listCronSchedules(client(), input),
    deleteCronSchedule: (input: { conversationId: string; id: string }) => deleteCronSchedule(client(), input),
    deleteSessionCronSchedules: (input: { conversationId: string }) => deleteSessionCronSchedules(client(), input),
    /** Run by workflows/cron-fire.ts when a job's Schedule fires. */
    deliverCronPrompt: (input: CronFireInput & { scheduledAt?: string }) => deliverCronPrompt(client(), input),
  };
}

export type BackgroundActivities = ReturnType<typeof createBackgroundActivities>;
