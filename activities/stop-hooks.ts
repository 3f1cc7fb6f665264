/**
 * runStopHooks activity (seed §2.9 handleStopHooks ⑤): every configured Stop hook runs in
 * parallel with Claude Code's hook input JSON on stdin. Exit code 2, or `{"decision":"block"}`
 * on stdout, is a blocking error fed back to the model; `{"continue": false}` ends the query;
 * any other failure is reported and is not fatal. Hooks run in Bash's OS sandbox (activities/sandbox.ts).
 */
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { RunStopHooksInput, RunStopHooksResult, StopHookOutcome } from '../common/activity-types';
import { decideSandbox } from './sandbox';
import { runShellCommand } from './shell';
import { workspaceStateDir } from './tool-journal';

/** Claude Code's default per-hook timeout, in seconds. */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 60;
/** Longest a hook may run (the activity's start-to-close timeout is 11 minutes). */
export const MAX_HOOK_TIMEOUT_SECONDS = 600;

/**
 * Characters of a hook's stdout or stderr kept in the activity result (half from the start, half
 * from the end). A hook printing 5 MB made the result too large for Temporal: the activity
 * failed, was retried, and every turn end broke (issue 12, defect 5).
 */
export const HOOK_OUTPUT_PREVIEW_CHARS = 20_000;
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
  let release: (() => Promise<void>) | undefined;
  try {
    const commands = input.hooks.flatMap((matcher) => matcher.hooks);
    const outputDirectory = path.join(
      workspaceStateDir(stateDir, input.cwd),
      'hook-output',
      input.conversationId.replace(/[^a-zA-Z0-9_-]/g, '_'),
    );
    const runStamp = `${Date.now()}-${context.info.attempt}`;
    // A project's hooks are workspace content: they get the sandbox Bash commands get.
    const sandbox = await decideSandbox({
      cwd: input.cwd,
      additionalDirectories: input.additionalDirectories,
      settingSources: input.settingSources,
      config: input.sandbox,
      stateDir,
    });
    release = sandbox.launch?.release;
    const notices = sandbox.notices.join('\n');
    const outcomes = await Promise.all(
      commands.map(async (hook, index): Promise<StopHookOutcome> => {
        if (sandbox.refusal) return { command: hook.command, exitCode: null, stdout: '', stderr: '', nonBlockingError: sandbox.refusal };
        const run = await runShellCommand({
          command: hook.command,
          cwd: input.cwd,
          stdin: hookInput,
          // Capped below the activity's start-to-close timeout (11 minutes).
          timeoutMs: Math.min(hook.timeout ?? DEFAULT_HOOK_TIMEOUT_SECONDS, MAX_HOOK_TIMEOUT_SECONDS) * 1000,
          signal: context.cancellationSignal,
          env: { CLAUDE_PROJECT_DIR: input.cwd },
          sandbox: sandbox.launch,
        });
        if (run.startError) {
          return { command: hook.command, exitCode: null, stdout: '', stderr: '', nonBlockingError: `could not start: ${run.startError.message}` };
        }
        const outcome = interpretHookRun(hook.command, run);
        // Ran unsandboxed (no sandbox on this host) or ignored settings: reported, not fatal.
        if (notices !== '' && outcome.blockingError === undefined) {
          outcome.nonBlockingError = outcome.nonBlockingError ? `${outcome.nonBlockingError}\n${notices}` : notices;
        }
        const save = async (stream: 'stdout' | 'stderr', text: string) => {
          await mkdir(outputDirectory, { recursive: true });
          const file = path.join(outputDirectory, `${runStamp}-hook${index}-${stream}.txt`);
          await writeFile(file, text);
          return file;
        };
        outcome.stdout = await boundHookOutput(outcome.stdout, run.truncated, () => save('stdout', outcome.stdout));
        outcome.stderr = await boundHookOutput(outcome.stderr, run.truncated, () => save('stderr', outcome.stderr));
        return outcome;
      }),
    );
    return { outcomes };
  } catch (error) {
    if (context.cancellationSignal.aborted) throw new CancelledFailure('Stop hooks cancelled');
    throw error;
  } finally {
    clearInterval(heartbeat);
    await release?.();
  }
}

/**
 * `text` if it fits HOOK_OUTPUT_PREVIEW_CHARS; otherwise its head and tail around a note naming
 * the file the whole output was saved to (as Bash output over the result budget is).
 */
export async function boundHookOutput(text: string, captureTruncated: boolean, save: () => Promise<string>): Promise<string> {
  if (text.length <= HOOK_OUTPUT_PREVIEW_CHARS) return text;
  const file = await save();
  const half = HOOK_OUTPUT_PREVIEW_CHARS / 2;
  const omitted = text.length - 2 * half;
  const capped = captureTruncated ? ' (beyond 10 MB, only its first and last 5 MB were captured)' : '';
  return `${text.slice(0, half)}\n\n[... ${omitted} characters omitted; the hook printed ${text.length} characters${capped}. Full output saved to: ${file} ...]\n\n${text.slice(-half)}`;
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
      if (typeof json.stopReason === 'string') outcome.stopReason = json.stopReason.slice(0, MAX_REASON_CHARS);
    }
    if (json.decision === 'block') {
      outcome.blockingError =
        typeof json.reason === 'string' && json.reason ? json.reason.slice(0, MAX_REASON_CHARS) : `Blocked by Stop hook "${command}"`;
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
