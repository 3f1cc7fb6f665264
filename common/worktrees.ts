/**
 * Git worktrees as Claude Code makes them (issue 33 item 4): `<repository>/.claude/worktrees/<name>`
 * on a new branch `worktree-<name>` cut from the checkout's HEAD; an Agent call with `isolation:
 * "worktree"` gets `agent-<id>`, `--worktree [name]` and EnterWorktree the name given. At the end a
 * worktree with changes (uncommitted files, or commits its branch has that the checkout's HEAD has
 * not) is kept and its path and branch are reported; one without is removed with its branch. Pure:
 * the workflow bundle and the client import it; the git commands are activities/worktrees.ts.
 */

/** Where worktrees live, relative to the repository's top level (Claude Code's). */
export const WORKTREES_DIRECTORY = '.claude/worktrees';

/** The longest worktree name (Claude Code's slug limit). */
export const WORKTREE_NAME_MAX_LENGTH = 64;

/** A worktree's name, as the model, the user or an Agent call gives it: a problem in words, or undefined when it is fine. */
export function worktreeNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'a worktree name cannot be empty';
  if (name.length > WORKTREE_NAME_MAX_LENGTH) return `a worktree name has at most ${WORKTREE_NAME_MAX_LENGTH} characters`;
  // One path segment git takes as part of a branch name: no slashes, no `..`, no leading dot or dash, no `.lock` end.
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name))
    return 'a worktree name may contain only letters, digits, dots, underscores and dashes, and starts with a letter or digit';
  if (name.includes('..')) return 'a worktree name cannot contain ".."';
  if (name.endsWith('.lock') || name.endsWith('.')) return 'a worktree name cannot end with ".lock" or "."';
  return undefined;
}

/** The branch of worktree `name` (Claude Code's `worktree-<name>`). */
export function worktreeBranch(name: string): string {
  return `worktree-${name}`;
}

/** The directory of worktree `name` in the repository whose top level is `repositoryRoot`. */
export function worktreePath(repositoryRoot: string, name: string): string {
  return `${repositoryRoot.replace(/\/+$/, '')}/${WORKTREES_DIRECTORY}/${name}`;
}

/**
 * The worktree of an Agent call with `isolation: "worktree"`: `agent-` and the call's id, made a
 * valid name. Derived from the tool_use id, so a retried or replayed call finds the worktree its
 * first attempt made and two calls never share one.
 */
export function agentWorktreeName(toolUseId: string): string {
  return derivedWorktreeName('agent', toolUseId);
}

/** A valid worktree name made of `prefix` and an id (a tool_use id, a workflow id): the same id, the same name. */
export function derivedWorktreeName(prefix: string, id: string): string {
  const slug = id.replace(/[^A-Za-z0-9_-]/g, '-').replace(/^[-_]+/, '');
  return `${prefix}-${slug}`.slice(0, WORKTREE_NAME_MAX_LENGTH).replace(/[-_.]+$/, '');
}

/** What ExitWorktree says when `remove` meets changes and `discard_changes` is not set (Claude Code refuses and lists them). */
export function refusedRemovalText(worktree: Worktree, changes: WorktreeChanges): string {
  const files = changes.uncommittedFiles.slice(0, 20).map((file) => `  ${file}`);
  const more = changes.uncommittedFiles.length > 20 ? [`  … and ${changes.uncommittedFiles.length - 20} more`] : [];
  return [
    `Worktree ${worktree.path} (branch ${worktree.branch}) has changes: ${changes.uncommittedFiles.length} uncommitted file(s), ${changes.newCommits} commit(s) not on the original branch.`,
    ...files,
    ...more,
    'Nothing was removed. Confirm with the user, then call ExitWorktree again with discard_changes: true to remove it anyway, or use action "keep".',
  ].join('\n');
}

/** A worktree as made: where it is, its branch, and the repository's top level it was cut from. */
export interface Worktree {
  readonly name: string;
  readonly path: string;
  /** Empty for a worktree a WorktreeCreate hook made (the hook chose how; no git branch is known). */
  readonly branch: string;
  readonly repositoryRoot: string;
  /** The commit it was cut from (the checkout's HEAD then); empty for a hook's. */
  readonly baseCommit: string;
  /** Made by the user's WorktreeCreate hooks instead of git (issue 33): WorktreeRemove hooks remove it, git never touches it. */
  readonly madeByHook?: true;
}

/** A worktree a WorktreeCreate hook made at `path` for `name` (no branch, no base commit: the hook's business). */
export function hookWorktree(name: string, path: string, cwd: string): Worktree {
  return { name, path, branch: '', repositoryRoot: cwd, baseCommit: '', madeByHook: true };
}

/** "on branch x" for a git worktree; how a hook's is told. */
export function worktreeWhere(worktree: Worktree): string {
  return worktree.madeByHook ? `${worktree.path} (made by a WorktreeCreate hook)` : `${worktree.path} on branch ${worktree.branch}`;
}

/** The `createWorktree` activity's input: `name` cut from `cwd`'s HEAD. */
export interface CreateWorktreeInput {
  readonly cwd: string;
  readonly name: string;
}
/** The worktree made (or found), or why none could be. */
export type CreateWorktreeResult = { readonly worktree: Worktree } | { readonly problem: string };
/** The `closeWorktree` activity's input. */
export interface CloseWorktreeInput {
  readonly worktree: Worktree;
  /** Remove it even with changes (ExitWorktree's `discard_changes`); else a worktree with changes is kept. */
  readonly discard?: boolean;
}

/** What a worktree holds that its checkout does not: uncommitted paths (`git status --porcelain`) and commits ahead of the base. */
export interface WorktreeChanges {
  readonly uncommittedFiles: readonly string[];
  readonly newCommits: number;
}

/** Keep a worktree with changes, remove one without (Claude Code's end of a worktree session and of an isolated agent). */
export function worktreeDisposal(changes: WorktreeChanges): 'keep' | 'remove' {
  return changes.uncommittedFiles.length > 0 || changes.newCommits > 0 ? 'keep' : 'remove';
}

/** What was done with a worktree at its end. */
export type WorktreeClosed =
  | { readonly action: 'kept'; readonly worktree: Worktree; readonly changes: WorktreeChanges }
  /** A hook's worktree no WorktreeRemove hook removes: left where it is. */
  | { readonly action: 'left'; readonly worktree: Worktree }
  | { readonly action: 'removed'; readonly worktree: Worktree }
  | { readonly action: 'failed'; readonly worktree: Worktree; readonly problem: string };

/** The line an isolated agent's result ends with: where its work is, or that nothing was left. */
export function worktreeClosedText(closed: WorktreeClosed): string {
  const { path, branch } = closed.worktree;
  if (closed.worktree.madeByHook) {
    if (closed.action === 'removed') return `The agent worked in the worktree ${path} a WorktreeCreate hook made; the WorktreeRemove hooks removed it.`;
    if (closed.action === 'failed')
      return `The agent worked in the worktree ${path} a WorktreeCreate hook made; its WorktreeRemove hooks failed: ${closed.problem}`;
    return `The agent worked in the worktree a WorktreeCreate hook made, left as it is (no WorktreeRemove hook is configured): worktreePath: ${path}`;
  }
  switch (closed.action) {
    case 'left':
      return `The agent worked in the worktree ${path}, left as it is.`;
    case 'kept': {
      const what = [
        closed.changes.uncommittedFiles.length > 0 ? `${closed.changes.uncommittedFiles.length} changed file(s)` : undefined,
        closed.changes.newCommits > 0 ? `${closed.changes.newCommits} new commit(s)` : undefined,
      ]
        .filter((part) => part !== undefined)
        .join(', ');
      return `The agent worked in a git worktree, kept with its changes (${what}): worktreePath: ${path} worktreeBranch: ${branch}`;
    }
    case 'removed':
      return `The agent worked in a git worktree and made no changes: the worktree (${path}) and its branch ${branch} were removed.`;
    case 'failed':
      return `The agent worked in the git worktree ${path} (branch ${branch}); it could not be tidied up: ${closed.problem}`;
  }
}

/** The line a background agent's launch and answers carry while it lives: where it works. */
export function worktreeWorkingText(worktree: Worktree): string {
  if (worktree.madeByHook) return `The agent works in its own worktree (made by a WorktreeCreate hook): worktreePath: ${worktree.path}`;
  return `The agent works in its own git worktree: worktreePath: ${worktree.path} worktreeBranch: ${worktree.branch}`;
}

/** The worktree a conversation works in, and the directory it worked in before (carried by workflows/session/worktree-session.ts). */
export interface WorktreeSessionState {
  worktree: Worktree;
  originalCwd: string;
}
