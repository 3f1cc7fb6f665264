/**
 * Work that outlives a turn (issue 21), the pure half: background task outcomes and the
 * notification the conversation gets when one ends, ScheduleWakeup's delay and record, and
 * `/loop [interval] <prompt>`. The workflow bundle imports this file; the Node half is
 * activities/background/.
 */

import type { SettingSource } from './permission-rules';

/** How a background command ended; `running` only while it runs. */
export const BACKGROUND_STATUSES = ['running', 'completed', 'failed', 'killed', 'interrupted'] as const;
export type BackgroundStatus = (typeof BACKGROUND_STATUSES)[number];

/** Task ids name files on the worker: letters, digits, `_` and `-` only. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

// Activity inputs and results (activities/background/background-command.ts): plain JSON.

export interface StartBackgroundCommandInput {
  conversationId: string;
  taskId: string;
  command: string;
  description?: string;
  cwd: string;
  additionalDirectories?: string[];
  settingSources?: SettingSource[];
  /** Claude Code's `sandbox` object from the conversation's config. */
  sandboxConfig?: unknown;
  dangerouslyDisableSandbox?: boolean;
  readDenyRules?: string[];
}

export interface StartBackgroundCommandResult {
  taskId: string;
  outputPath: string;
  /** True when this task id had already been started (a retried activity): nothing new was started. */
  alreadyStarted: boolean;
  /** Set when the command was not started (the sandbox is required and unavailable, bad task id). */
  refusal?: string;
  /** Sandbox notices for the tool result (as Bash's). */
  notices: string[];
}

export interface BackgroundTaskRef {
  conversationId: string;
  taskId: string;
  cwd: string;
}

export interface ReadTaskOutputInput extends BackgroundTaskRef {
  /** Wait for the task to end (Claude Code's default: true). */
  block?: boolean;
  /** How long to wait, ms (Claude Code's default 30 000, at most 600 000). */
  timeout?: number;
}

export interface ReadTaskOutputResult {
  retrievalStatus: 'success' | 'timeout' | 'not_ready';
  status: BackgroundOutcome['status'] | 'running';
  exitCode?: number;
  output: string;
  outputPath: string;
  /** The tool result text, in Claude Code's TaskOutput shape. */
  content: string;
}

export interface StopResult {
  /** `stopped`: it was running and is now dead; `already-ended`: nothing to stop. */
  result: 'stopped' | 'already-ended' | 'not-found';
  message: string;
}

/** What `superviseBackgroundCommand` returns and the notification is made of. */
export interface BackgroundOutcome {
  taskId: string;
  status: Exclude<BackgroundStatus, 'running'>;
  /** The command's exit status (128+n when a signal ended it); absent when it never reported one. */
  exitCode?: number;
  outputPath: string;
  /** The end of the output, bounded like Bash's result (the whole file stays at outputPath). */
  tail: string;
  outputBytes: number;
  /** Why, for `interrupted` (e.g. "its process is gone and it left no exit status"). */
  detail?: string;
}

/**
 * The user-role text that re-invokes the model (or joins a running query as an attachment) when a
 * background task ends, in Claude Code's `<task-notification>` shape.
 */
export function taskNotificationText(outcome: BackgroundOutcome, summary: string): string {
  const exit = outcome.exitCode === undefined ? '' : ` (exit code ${outcome.exitCode})`;
  const lines = [
    '<task-notification>',
    `<task-id>${outcome.taskId}</task-id>`,
    `<status>${outcome.status}</status>`,
    `<summary>${summary} ${outcome.status}${exit}${outcome.detail ? `: ${outcome.detail}` : ''}</summary>`,
    `<output-file>${outcome.outputPath}</output-file>`,
  ];
  if (outcome.tail !== '') lines.push('<output-tail>', outcome.tail, '</output-tail>');
  lines.push('</task-notification>');
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// ScheduleWakeup

/** Claude Code clamps ScheduleWakeup's delay to this range (seconds). */
export const WAKEUP_MIN_SECONDS = 60;
export const WAKEUP_MAX_SECONDS = 3600;

/** A pending wakeup: a durable timer in the conversation whose prompt becomes the next input. */
export interface WakeupRecord {
  id: string;
  reason: string;
  prompt: string;
  delaySeconds: number;
  createdAtMs: number;
  dueAtMs: number;
}

/**
 * The delay actually used: within [min, 3600] s, where min is 60 unless the conversation's config
 * lowers it (tests). Non-finite or non-positive requests get the minimum.
 */
export function clampWakeupDelay(delaySeconds: number, minimumSeconds = WAKEUP_MIN_SECONDS): { delaySeconds: number; clamped: boolean } {
  const minimum = Math.max(1, Math.min(minimumSeconds, WAKEUP_MAX_SECONDS));
  const requested = Number.isFinite(delaySeconds) ? Math.round(delaySeconds) : minimum;
  const delay = Math.min(WAKEUP_MAX_SECONDS, Math.max(minimum, requested));
  return { delaySeconds: delay, clamped: delay !== delaySeconds };
}

/** Decides a ScheduleWakeup call: the record to keep (and time a timer by) and the text the model reads. */
export function planWakeup(input: { id: string; delaySeconds: number; reason: string; prompt: string; nowMs: number; minimumSeconds?: number }): {
  wakeup: WakeupRecord;
  content: string;
} {
  const { delaySeconds, clamped } = clampWakeupDelay(input.delaySeconds, input.minimumSeconds);
  const dueAtMs = input.nowMs + delaySeconds * 1000;
  const wakeup: WakeupRecord = { id: input.id, reason: input.reason, prompt: input.prompt, delaySeconds, createdAtMs: input.nowMs, dueAtMs };
  const note = clamped
    ? ` (asked for ${input.delaySeconds} s; the delay is kept within ${clampWakeupDelay(0, input.minimumSeconds).delaySeconds}-${WAKEUP_MAX_SECONDS} s)`
    : '';
  return {
    wakeup,
    content: `Wakeup scheduled in ${delaySeconds} s, at ${new Date(dueAtMs).toISOString()}${note}. Reason: ${input.reason}`,
  };
}

// ---------------------------------------------------------------------------------------------
// /loop

/** `/loop`'s arguments: with an interval it is a recurring cron job; without one the model paces it (ScheduleWakeup). */
export interface LoopArguments {
  prompt: string;
  /** A fixed interval: the loop is a recurring cron job. Absent: the model paces it with ScheduleWakeup. */
  interval?: { text: string; seconds: number; cron: string; note?: string };
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `5m`, `30s`, `2h`, `1d` (and `every 5m` at the end of the prompt) → seconds; undefined otherwise. */
function intervalSeconds(token: string): number | undefined {
  const match = /^(\d+)\s*([smhd])$/i.exec(token);
  if (!match) return undefined;
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2].toLowerCase()];
  return seconds > 0 ? seconds : undefined;
}

/**
 * The cron expression for an interval, as Claude Code's /loop turns one into a job: minutes are
 * cron's smallest unit (seconds round up), and an interval that does not divide its unit evenly
 * is rounded to the nearest one that does (said in `note`).
 */
export function intervalToCron(seconds: number): { cron: string; note?: string } {
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  const rounded = seconds % 60 !== 0 ? `${seconds} s rounds up to ${minutes} min (cron's smallest unit)` : undefined;
  const nearestDivisor = (value: number, of: number) =>
    Array.from({ length: of }, (_, index) => index + 1)
      .filter((divisor) => of % divisor === 0)
      .reduce((best, divisor) => (Math.abs(divisor - value) < Math.abs(best - value) ? divisor : best), 1);
  if (minutes < 60) {
    const step = nearestDivisor(minutes, 60);
    const note = step !== minutes ? `every ${minutes} min is not even within an hour; using every ${step} min` : rounded;
    return { cron: step === 1 ? '* * * * *' : `*/${step} * * * *`, ...(note ? { note } : {}) };
  }
  const hours = Math.round(minutes / 60);
  if (hours < 24) {
    const step = nearestDivisor(hours, 24);
    const note = step * 60 !== minutes ? `using every ${step} h` : undefined;
    return { cron: step === 1 ? '0 * * * *' : `0 */${step} * * *`, ...(note ? { note } : {}) };
  }
  const days = Math.round(hours / 24);
  const note = days * 24 * 60 !== minutes ? `using every ${days} d` : undefined;
  return { cron: days === 1 ? '0 0 * * *' : `0 0 */${days} * *`, ...(note ? { note } : {}) };
}

/**
 * Parses `/loop`'s arguments: `[interval] <prompt>`, or `<prompt> every <interval>`. Errors are
 * usage text for the user.
 */
export function parseLoopArguments(text: string): { ok: true; loop: LoopArguments } | { ok: false; error: string } {
  const usage = 'Usage: /loop [interval] <prompt>  (interval like 5m, 2h, 1d; without one the model decides when to run again)';
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, error: usage };
  const first = trimmed.split(/\s+/)[0];
  let intervalText: string | undefined;
  let prompt = trimmed;
  if (intervalSeconds(first) !== undefined) {
    intervalText = first;
    prompt = trimmed.slice(first.length).trim();
  } else {
    const trailing = /^(.*\S)\s+every\s+(\d+\s*[smhd])$/i.exec(trimmed);
    if (trailing && intervalSeconds(trailing[2].replace(/\s+/g, '')) !== undefined) {
      intervalText = trailing[2].replace(/\s+/g, '');
      prompt = trailing[1];
    }
  }
  if (prompt === '') return { ok: false, error: `${usage}\nThe prompt is missing.` };
  if (intervalText === undefined) return { ok: true, loop: { prompt } };
  const seconds = intervalSeconds(intervalText)!;
  const { cron, note } = intervalToCron(seconds);
  return { ok: true, loop: { prompt, interval: { text: intervalText, seconds, cron, ...(note ? { note } : {}) } } };
}
