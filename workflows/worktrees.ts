/**
 * A worktree's making and removal, for the worktree session (EnterWorktree, ExitWorktree,
 * `--worktree`) and isolated agents (issue 33 items 4 and 5), with Claude Code's hooks:
 * **WorktreeCreate** hooks, when configured, replace git's creation — the first to print an
 * absolute path (stdout; an HTTP hook's `hookSpecificOutput.worktreePath`) names the worktree, any
 * failure fails the creation — and **WorktreeRemove** hooks run when a worktree is removed: after
 * git removed one it made, or instead of git for one a hook made (no WorktreeRemove hook: a hook's
 * worktree is left where it is; git never touches it). WorktreeRemove's outcome does not change
 * what git did (Claude Code's: cleanup, its exit code ignored); a hook's worktree whose hooks fail is
 * reported as not tidied up. The hooks' runs are recorded like every hook's (hook-runner.ts).
 */
import { CancellationScope } from '@temporalio/workflow';
import type { ConversationConfig } from '../common/config';
import { type HookEvent, type HookRunOutcome, decideWorktreeCreate, worktreeHookEvent } from '../common/hooks';
import { type CreateWorktreeResult, type Worktree, type WorktreeClosed, hookWorktree } from '../common/worktrees';
import { activities, worktreeOptions } from './deps/activity-options';

/** The conversation's hooks as the worktree code uses them (SessionHooks.worktreeHooks). */
export interface WorktreeHooks {
  worktreeHooks(event: Extract<HookEvent, { hook_event_name: 'WorktreeCreate' | 'WorktreeRemove' }>): Promise<HookRunOutcome[] | undefined>;
  /** The conversation moved into or out of a worktree (CwdChanged). */
  cwdChanged?(oldCwd: string, newCwd: string): Promise<void>;
}

/** Makes (or finds, on a retry or replay) the worktree `name` of `config.cwd`'s repository, or says why none could be. */
export async function makeWorktree(hooks: WorktreeHooks | undefined, config: ConversationConfig, name: string): Promise<CreateWorktreeResult> {
  const outcomes = await hooks?.worktreeHooks(worktreeHookEvent({ type: 'create', name }));
  // No WorktreeCreate hook configured: git makes it.
  const decided = outcomes && decideWorktreeCreate(outcomes);
  if (decided === undefined) return activities(worktreeOptions(config, `Create worktree ${name}`)).createWorktree({ cwd: config.cwd, name });
  if ('error' in decided) return { problem: `The WorktreeCreate hook did not make the worktree: ${decided.error}` };
  const refused = hookWorktreePathProblem(decided.path, config.cwd);
  if (refused) return { problem: `The WorktreeCreate hook's worktree ${decided.path} is refused: ${refused}.` };
  return { worktree: hookWorktree(name, decided.path, config.cwd) };
}

/**
 * Removes `worktree` at its end (kept instead when git finds changes, unless `discard`), then its
 * WorktreeRemove hooks. Not cancelled with the call that asked: an abort leaves a tidy workspace too.
 */
export function removeWorktree(hooks: WorktreeHooks | undefined, config: ConversationConfig, worktree: Worktree, discard?: boolean): Promise<WorktreeClosed> {
  return CancellationScope.nonCancellable(async () => {
    const removeHooks = () => hooks?.worktreeHooks(worktreeHookEvent({ type: 'remove', worktreePath: worktree.path })) ?? Promise.resolve(undefined);
    if (worktree.madeByHook) {
      const outcomes = await removeHooks();
      if (outcomes === undefined) return { action: 'left', worktree };
      const failed = outcomes.find((outcome) => outcome.error !== undefined || outcome.timedOut || outcome.exitCode !== 0);
      if (failed) {
        const why =
          failed.error ??
          (failed.timedOut ? 'timed out' : `exit code ${failed.exitCode}${failed.stderr.trim() ? `: ${failed.stderr.trim().slice(0, 300)}` : ''}`);
        return { action: 'failed', worktree, problem: `WorktreeRemove hook [${failed.command}]: ${why}` };
      }
      return { action: 'removed', worktree };
    }
    const closed = await activities(worktreeOptions(config, `Close worktree ${worktree.name}`)).closeWorktree({
      worktree,
      ...(discard === true && { discard: true }),
    });
    if (closed.action === 'removed') await removeHooks();
    return closed;
  });
}

/**
 * A hook's worktree becomes the working directory the permission gate judges paths against: it
 * must be a folder of its own — not the filesystem's root or a top-level folder, not the
 * workspace or a folder above it (that would widen "inside the workspace").
 */
export function hookWorktreePathProblem(worktreePath: string, cwd: string): string | undefined {
  if (!worktreePath.startsWith('/')) return 'it is not an absolute path';
  const segments = (value: string) => value.split('/').filter((segment) => segment !== '' && segment !== '.');
  const parts = segments(worktreePath);
  if (parts.includes('..')) return 'it climbs with ".."';
  if (parts.length < 2) return 'it is the root or a top-level folder';
  const workspace = segments(cwd);
  if (parts.length <= workspace.length && parts.every((part, index) => workspace[index] === part)) return 'it is the workspace or a folder above it';
  return undefined;
}
