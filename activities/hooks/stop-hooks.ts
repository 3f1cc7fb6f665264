/**
 * runStopHooks activity (seed §2.9 handleStopHooks ⑤): every configured Stop hook runs in
 * parallel with Claude Code's hook input JSON on stdin. Exit code 2, or `{"decision":"block"}`
 * on stdout, is a blocking error fed back to the model; `{"continue": false}` ends the query;
 * any other failure is reported and is not fatal. Hooks run in Bash's OS sandbox (activities/sandbox.ts).
 */
import os from 'node:os';
import path from 'node:path';
import type { RunStopHooksInput, RunStopHooksResult, StopHookOutcome } from '../../common/activity-types';
import { parseHookJson } from '../../common/hooks';
import { DEFAULT_HOOK_TIMEOUT_SECONDS, HOOK_OUTPUT_PREVIEW_CHARS, MAX_HOOK_TIMEOUT_SECONDS, boundHookOutput, runHookProcesses } from './runner';

// Kept exported from here: callers and tests of the Stop hook path import them from this module.
export { DEFAULT_HOOK_TIMEOUT_SECONDS, HOOK_OUTPUT_PREVIEW_CHARS, MAX_HOOK_TIMEOUT_SECONDS, boundHookOutput };

/** Longest blocking reason or stop reason passed on to the model or the user. */
const MAX_REASON_CHARS = 10_000;

export interface StopHooksDeps {
  /** Root for persisted hook output (the worker's state dir). */
  stateDir: string;
}

/** The activity, closing over where oversized hook output is saved. */
export function createRunStopHooks(deps: StopHooksDeps) {
  return (input: RunStopHooksInput) => runStopHooksIn(deps.stateDir, input);
}

/**
 * The activity with the default state dir (`DURABLE_AGENT_STATE_DIR` or ~/.durable-agent, as
 * `defaultStateDir` in ./index, which this module cannot import without a cycle).
 */
export async function runStopHooks(input: RunStopHooksInput): Promise<RunStopHooksResult> {
  return runStopHooksIn(process.env.DURABLE_AGENT_STATE_DIR || path.join(os.homedir(), '.durable-agent'), input);
}

async function runStopHooksIn(stateDir: string, input: RunStopHooksInput): Promise<RunStopHooksResult> {
  const stdin = JSON.stringify({
    session_id: input.conversationId,
    transcript_path: input.transcriptPath ?? '',
    cwd: input.cwd,
    hook_event_name: 'Stop',
    stop_hook_active: input.stopHookActive,
    last_assistant_message: input.lastAssistantMessage,
  });
  const outcomes = await runHookProcesses<StopHookOutcome>(
    stateDir,
    {
      conversationId: input.conversationId,
      cwd: input.cwd,
      stdin,
      // Stop hooks of the conversation's config: its command hooks (the session's other kinds run through runHooks).
      commands: input.hooks.flatMap((matcher) => matcher.hooks).filter((hook) => hook.type === 'command'),
      additionalDirectories: input.additionalDirectories,
      settingSources: input.settingSources,
      sandbox: input.sandbox,
      label: 'Stop hooks cancelled',
    },
    async (result) => {
      if (result.kind === 'not-run') return { command: result.command, exitCode: null, stdout: '', stderr: '', nonBlockingError: result.message };
      const { run, notices } = result;
      const outcome = interpretHookRun(result.command, run);
      // Ran unsandboxed (no sandbox on this host) or ignored settings: reported, not fatal.
      if (notices !== '' && outcome.blockingError === undefined) {
        outcome.nonBlockingError = outcome.nonBlockingError ? `${outcome.nonBlockingError}\n${notices}` : notices;
      }
      outcome.stdout = await boundHookOutput(outcome.stdout, run.truncated, () => result.save('stdout', outcome.stdout));
      outcome.stderr = await boundHookOutput(outcome.stderr, run.truncated, () => result.save('stderr', outcome.stderr));
      return outcome;
    },
  );
  return { outcomes };
}

/** Claude Code's hook output protocol, as a pure function of one run. */
export function interpretHookRun(command: string, run: { exitCode: number | null; stdout: string; stderr: string; timedOut: boolean }): StopHookOutcome {
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
  const json = parseHookJson(run.stdout);
  if (json) {
    if (json.continue === false) {
      outcome.preventContinuation = true;
      if (typeof json.stopReason === 'string') outcome.stopReason = json.stopReason.slice(0, MAX_REASON_CHARS);
    }
    if (json.decision === 'block') {
      outcome.blockingError = typeof json.reason === 'string' && json.reason ? json.reason.slice(0, MAX_REASON_CHARS) : `Blocked by Stop hook "${command}"`;
    }
  }
  return outcome;
}
