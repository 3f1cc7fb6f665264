/**
 * The shared hook runner (Stop hooks and every other command hook): the event JSON on stdin, each
 * command in parallel in Bash's OS sandbox (a project's hooks are workspace content), a per-hook
 * timeout, heartbeats while they run, output kept within HOOK_OUTPUT_PREVIEW_CHARS with the whole
 * saved to a file when it is longer, cancellation honoured.
 */
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SettingSource } from '../../common/permissions';
import { decideSandbox } from '../sandbox';
import { type ShellRun, runShellCommand } from '../shell';
import { workspaceStateDir } from '../tool-journal';

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

export interface HookProcessSpec {
  conversationId: string;
  cwd: string;
  /** The event JSON each hook reads on stdin. */
  stdin: string;
  /**
   * `asUser`: the user's own hook (their settings, not the workspace's): run as the worker's user,
   * outside the sandbox, as Claude Code runs it (issue 33).
   */
  commands: Array<{ command: string; timeout?: number; asUser?: boolean; env?: Record<string, string> }>;
  additionalDirectories?: string[];
  settingSources?: SettingSource[];
  sandbox?: Record<string, unknown>;
  /** What a cancellation error says ("Stop hooks cancelled"). */
  label: string;
}

/** How one command went, before the caller reads it. */
export type HookProcessResult =
  | { kind: 'not-run'; command: string; message: string }
  | {
      kind: 'ran';
      command: string;
      run: ShellRun;
      /** Sandbox notices (ran unsandboxed, ignored settings), '' when none. */
      notices: string;
      /** Saves one stream's whole text and returns the file (for output over the preview). */
      save: (stream: 'stdout' | 'stderr', text: string) => Promise<string>;
    };

/**
 * Runs the commands (in parallel) and maps each result with `finish`, inside one activity's
 * heartbeats and cancellation; the sandbox is set up once for all of them.
 */
export async function runHookProcesses<T>(
  stateDir: string,
  spec: HookProcessSpec,
  finish: (result: HookProcessResult, index: number) => Promise<T>,
): Promise<T[]> {
  const context = Context.current();
  const heartbeat = setInterval(() => context.heartbeat(), 1_000);
  let release: (() => Promise<void>) | undefined;
  try {
    const outputDirectory = path.join(workspaceStateDir(stateDir, spec.cwd), 'hook-output', spec.conversationId.replace(/[^a-zA-Z0-9_-]/g, '_'));
    const runStamp = `${Date.now()}-${context.info.attempt}`;
    // A project's hooks are workspace content: they get the sandbox Bash commands get (set up only when one runs).
    const sandbox = spec.commands.some((hook) => !hook.asUser)
      ? await decideSandbox({
          cwd: spec.cwd,
          additionalDirectories: spec.additionalDirectories,
          settingSources: spec.settingSources,
          config: spec.sandbox,
          stateDir,
        })
      : undefined;
    release = sandbox?.launch?.release;
    return await Promise.all(
      spec.commands.map(async (hook, index) => {
        const notices = hook.asUser ? '' : (sandbox?.notices.join('\n') ?? '');
        if (!hook.asUser && sandbox?.refusal) return finish({ kind: 'not-run', command: hook.command, message: sandbox.refusal }, index);
        const run = await runShellCommand({
          command: hook.command,
          cwd: spec.cwd,
          stdin: spec.stdin,
          // Capped below the activity's start-to-close timeout (11 minutes).
          timeoutMs: Math.min(hook.timeout ?? DEFAULT_HOOK_TIMEOUT_SECONDS, MAX_HOOK_TIMEOUT_SECONDS) * 1000,
          signal: context.cancellationSignal,
          env: { ...hook.env, CLAUDE_PROJECT_DIR: spec.cwd },
          sandbox: hook.asUser ? undefined : sandbox?.launch,
        });
        if (run.startError) return finish({ kind: 'not-run', command: hook.command, message: `could not start: ${run.startError.message}` }, index);
        const save = async (stream: 'stdout' | 'stderr', text: string) => {
          await mkdir(outputDirectory, { recursive: true });
          const file = path.join(outputDirectory, `${runStamp}-hook${index}-${stream}.txt`);
          await writeFile(file, text);
          return file;
        };
        return finish({ kind: 'ran', command: hook.command, run, notices, save }, index);
      }),
    );
  } catch (error) {
    if (context.cancellationSignal.aborted) throw new CancelledFailure(spec.label);
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
