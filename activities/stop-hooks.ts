/**
 * runStopHooks activity (seed §2.9 handleStopHooks ⑤): every configured Stop hook runs in
 * parallel with Claude Code's hook input JSON on stdin. Exit code 2, or `{"decision":"block"}`
 * on stdout, is a blocking error fed back to the model; `{"continue": false}` ends the query;
 * any other failure is reported and is not fatal.
 */
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import type { RunStopHooksInput, RunStopHooksResult, StopHookOutcome } from '../common/activity-types';
import { runShellCommand } from './shell';

/** Claude Code's default per-hook timeout, in seconds. */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 60;
/** Longest a hook may run (the activity's start-to-close timeout is 11 minutes). */
export const MAX_HOOK_TIMEOUT_SECONDS = 600;

export async function runStopHooks(input: RunStopHooksInput): Promise<RunStopHooksResult> {
  const context = Context.current();
  const hookInput = JSON.stringify({
    session_id: input.conversationId,
    transcript_path: input.transcriptPath ?? '',
    cwd: input.cwd,
    hook_event_name: 'Stop',
    stop_hook_active: input.stopHookActive,
    last_assistant_message: input.lastAssistantMessage,
  });
  const heartbeat = setInterval(() => context.heartbeat(), 1_000);
  try {
    const commands = input.hooks.flatMap((matcher) => matcher.hooks);
    const outcomes = await Promise.all(
      commands.map(async (hook): Promise<StopHookOutcome> => {
        const run = await runShellCommand({
          command: hook.command,
          cwd: input.cwd,
          stdin: hookInput,
          // Capped below the activity's start-to-close timeout (11 minutes).
          timeoutMs: Math.min(hook.timeout ?? DEFAULT_HOOK_TIMEOUT_SECONDS, MAX_HOOK_TIMEOUT_SECONDS) * 1000,
          signal: context.cancellationSignal,
          env: { CLAUDE_PROJECT_DIR: input.cwd },
        });
        if (run.startError) {
          return { command: hook.command, exitCode: null, stdout: '', stderr: '', nonBlockingError: `could not start: ${run.startError.message}` };
        }
        return interpretHookRun(hook.command, run);
      }),
    );
    return { outcomes };
  } catch (error) {
    if (context.cancellationSignal.aborted) throw new CancelledFailure('Stop hooks cancelled');
    throw error;
  } finally {
    clearInterval(heartbeat);
  }
}

/** Claude Code's hook output protocol, as a pure function of one run. */
export function interpretHookRun(
  command: string,
  run: { exitCode: number | null; stdout: string; stderr: string; timedOut: boolean },
): StopHookOutcome {
  const outcome: StopHookOutcome = { command, exitCode: run.exitCode, stdout: run.stdout, stderr: run.stderr };
  if (run.timedOut) {
    outcome.nonBlockingError = 'timed out';
    return outcome;
  }
  if (run.exitCode === 2) {
    outcome.blockingError = (run.stderr.trim() || run.stdout.trim() || `Stop hook "${command}" exited with code 2`).slice(0, 10_000);
    return outcome;
  }
  if (run.exitCode !== 0) {
    outcome.nonBlockingError = `exit code ${run.exitCode}${run.stderr.trim() ? `: ${run.stderr.trim().slice(0, 2_000)}` : ''}`;
    return outcome;
  }
  const json = parseJsonObject(run.stdout);
  if (json) {
    if (json.continue === false) {
      outcome.preventContinuation = true;
      if (typeof json.stopReason === 'string') outcome.stopReason = json.stopReason;
    }
    if (json.decision === 'block') {
      outcome.blockingError = typeof json.reason === 'string' && json.reason ? json.reason : `Blocked by Stop hook "${command}"`;
    }
  }
  return outcome;
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(trimmed);
    return value && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
