/**
 * Bash tool implementation. Each command runs in its own process group (`detached: true`) so a
 * timeout or cancellation can kill everything it started, not just the shell: an orphan left by a
 * cancelled activity would keep running on the worker host with no conversation to report to.
 * It runs inside the OS sandbox (activities/sandbox.ts) unless the settings, the worker or the
 * call (`dangerouslyDisableSandbox`, when allowed) say otherwise.
 */
import { stat } from 'node:fs/promises';
import { BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS, type BashInput, interpretExitCode } from '../../common/tools/bash';
import { finalProgram } from '../permission-facts/bash-facts';
import { decideSandbox, sandboxResultNotices } from '../sandbox';
import { CAPTURE_HEAD_BYTES, runShellCommand } from '../shell';
import type { ToolExecutionContext, ToolExecutionResult } from './types';

const NO_OUTPUT = 'Tool ran without output or errors';

/** The line heading a result whose output was over the capture limit (MAX_CAPTURE_BYTES); the caller applies the model-facing result budget. */
export function omittedOutputNotice(outputBytes: number, omittedBytes: number): string {
  const keptMb = CAPTURE_HEAD_BYTES / 1024 / 1024;
  return (
    `[Output too large: the command printed ${outputBytes} bytes; only about its first and its last ${keptMb} MB are kept. ` +
    `The ${omittedBytes} bytes in between are omitted, where it says "bytes of output omitted here". ` +
    'To see everything, redirect the output to a file and search it with Grep or Read it in parts.]'
  );
}

/** Bash: run `bash -c command` in cwd; stdout then stderr, `Exit code N` and is_error on failure. */
export async function executeBash(input: BashInput, context: ToolExecutionContext): Promise<ToolExecutionResult> {
  context.signal.throwIfAborted();
  const timeoutMs = Math.min(input.timeout ?? BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS);
  const cwdStat = await stat(context.cwd).catch(() => undefined);
  if (!cwdStat?.isDirectory()) {
    return { isError: true, content: `Working directory does not exist: ${context.cwd}` };
  }
  const sandbox = await decideSandbox({
    cwd: context.cwd,
    // The working directories the decision used (file tools' ToolAccess), or those passed for the sandbox.
    additionalDirectories: [...(context.access?.workingDirectories ?? []), ...(context.additionalDirectories ?? [])],
    settingSources: context.settingSources,
    config: context.sandboxConfig,
    command: input.command,
    dangerouslyDisableSandbox: input.dangerouslyDisableSandbox,
    stateDir: context.stateDir,
    readDenyRules: context.access?.readDeny,
    askDomain: context.askDomain,
  });
  if (sandbox.refusal) return { isError: true, content: [sandbox.refusal, ...sandbox.notices].join('\n') };
  // From here the command may change anything, and nothing can tell afterwards how far it got:
  // the journal marks it started, so a retry after a crash does not run it again (issue 24) — unless
  // it is contained, when the retry restores the checkpoint taken before it and runs it again (issue 31).
  try {
    await context.beginEffect?.({ kind: 'process', ...(sandbox.launch?.contained ? { contained: true } : {}) });
  } catch (error) {
    await sandbox.launch?.release?.();
    throw error;
  }
  const run = await runShellCommand({
    command: input.command,
    cwd: context.cwd,
    timeoutMs,
    signal: context.signal,
    onOutput: context.onProgress,
    env: context.processEnv,
    sandbox: sandbox.launch,
  }).finally(() => sandbox.launch?.release?.());
  if (run.startError) return { isError: true, content: `Failed to start bash: ${run.startError.message}` };

  const parts = [run.stdout.trimEnd(), run.stderr.trimEnd()].filter((part) => part !== '');
  // Last, after the output: why it ran unsandboxed, or a workspace file's ignored sandbox keys.
  const notices = [...sandbox.notices, ...sandboxResultNotices(sandbox.launch, run)];
  // First, so that the preview of a result over the budget (its first characters) says so too.
  if (run.truncated) parts.unshift(omittedOutputNotice(run.outputBytes, run.omittedBytes));
  if (run.backgroundKilled) parts.push('[processes the command left running in the background were terminated when it finished]');
  parts.push(...notices);
  if (run.timedOut || run.exitCode === null) {
    parts.push(run.timedOut ? `Command timed out after ${timeoutMs}ms` : `Command terminated by signal ${run.exitSignal}`);
    return { isError: true, content: parts.join('\n') };
  }
  if (run.exitCode !== 0) {
    const exit = interpretExitCode(run.exitCode === 1 ? await finalProgram(input.command).catch(() => undefined) : undefined, run.exitCode);
    parts.push(exit.meaning ? `Exit code ${run.exitCode} (${exit.meaning})` : `Exit code ${run.exitCode}`);
    return { isError: exit.isError, content: parts.join('\n') };
  }
  return { isError: false, content: parts.length === notices.length ? [NO_OUTPUT, ...notices].join('\n') : parts.join('\n') };
}
