/**
 * Git worktrees on the workspace's host (issue 33 item 4), through the system `git`: made for an
 * Agent call with `isolation: "worktree"`, `--worktree` and EnterWorktree; closed — kept with its
 * changes, removed without — at their end. Both are safe to retry: a `createWorktree` after a crash
 * finds the worktree its first attempt made (one whose checkout did not finish is made again), a
 * `closeWorktree` after one finds it gone and reports it removed. The repository's hooks and
 * fsmonitor do not run (a checkout would run `post-checkout` as the worker's user); the rest of
 * the user's git config applies, as it does to their own `git worktree add`.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  type CloseWorktreeInput,
  type CreateWorktreeInput,
  type CreateWorktreeResult,
  type Worktree,
  type WorktreeChanges,
  type WorktreeClosed,
  worktreeBranch,
  worktreeDisposal,
  worktreeNameProblem,
  worktreePath,
} from '../common/worktrees';

/** Commands that run as the user's git would, without the repository's hooks or fsmonitor, and none of the caller's GIT_ environment. */
function git(cwd: string, args: string[]): Promise<string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('GIT_')) env[key] = value;
  env.GIT_TERMINAL_PROMPT = '0';
  env.LC_ALL = 'C';
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', ...args],
      { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`git ${args[0]} failed: ${stderr.trim() || error.message}`));
        else resolve(stdout);
      },
    );
    child.stdin?.end();
  });
}

/** One entry of `git worktree list --porcelain`. */
interface ListedWorktree {
  path: string;
  branch?: string;
  /** Still locked "initializing": the `worktree add` that made it did not finish. */
  initializing: boolean;
}

async function listWorktrees(root: string): Promise<ListedWorktree[]> {
  const listed: ListedWorktree[] = [];
  for (const block of (await git(root, ['worktree', 'list', '--porcelain'])).split('\n\n')) {
    const lines = block.split('\n');
    const where = lines.find((line) => line.startsWith('worktree '));
    if (!where) continue;
    const branch = lines.find((line) => line.startsWith('branch '))?.slice('branch refs/heads/'.length);
    listed.push({ path: where.slice('worktree '.length), branch, initializing: lines.some((line) => line.startsWith('locked initializing')) });
  }
  return listed;
}

async function branchExists(root: string, branch: string): Promise<boolean> {
  try {
    await git(root, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]);
    return true;
  } catch {
    return false;
  }
}

/** The main checkout's top level (a worktree's, too, lives under the main repository's `.claude/worktrees`). */
async function repositoryRoot(cwd: string): Promise<string> {
  const common = (await git(cwd, ['rev-parse', '--path-format=absolute', '--git-common-dir'])).trim();
  return path.basename(common) === '.git' ? path.dirname(common) : (await git(cwd, ['rev-parse', '--show-toplevel'])).trim();
}

/** Makes worktree `name` from `cwd`'s HEAD, or finds the one an earlier attempt made. */
export async function createWorktree(input: CreateWorktreeInput): Promise<CreateWorktreeResult> {
  const problem = worktreeNameProblem(input.name);
  if (problem) return { problem: `Invalid worktree name "${input.name}": ${problem}.` };
  if (!existsSync(input.cwd)) return { problem: `Cannot make a worktree: the working directory ${input.cwd} does not exist.` };
  let root: string;
  let head: string;
  try {
    root = await repositoryRoot(input.cwd);
    head = (await git(input.cwd, ['rev-parse', '--verify', 'HEAD^{commit}'])).trim();
  } catch (error) {
    return { problem: `Cannot make a worktree: ${input.cwd} is not in a git repository with a commit (${(error as Error).message}).` };
  }
  const branch = worktreeBranch(input.name);
  const where = worktreePath(root, input.name);
  const listed = (await listWorktrees(root)).find((entry) => path.resolve(entry.path) === path.resolve(where));
  if (listed && !listed.initializing) {
    if (listed.branch !== branch)
      return { problem: `Cannot make worktree "${input.name}": ${where} already holds another worktree (${listed.branch ?? 'detached'}).` };
    // An earlier attempt made it: its base is where its branch left the checkout's HEAD.
    const base = (await git(input.cwd, ['merge-base', 'HEAD', branch])).trim();
    return { worktree: { name: input.name, path: where, branch, repositoryRoot: root, baseCommit: base } };
  }
  // A worktree whose checkout a crash interrupted is made again; a registration whose directory is gone is dropped.
  if (listed) await git(root, ['worktree', 'remove', '--force', '--force', where]);
  await git(root, ['worktree', 'prune']);
  try {
    if (await branchExists(root, branch)) await git(root, ['worktree', 'add', where, branch]);
    else await git(root, ['worktree', 'add', '-b', branch, where, head]);
  } catch (error) {
    return { problem: `Cannot make worktree "${input.name}": ${(error as Error).message}` };
  }
  const base = (await git(input.cwd, ['merge-base', 'HEAD', branch])).trim();
  return { worktree: { name: input.name, path: where, branch, repositoryRoot: root, baseCommit: base } };
}

/** What the worktree holds that its base does not. */
export async function worktreeChanges(worktree: Worktree): Promise<WorktreeChanges> {
  const status = await git(worktree.path, ['status', '--porcelain', '--untracked-files=all']);
  const uncommittedFiles = status
    .split('\n')
    .filter((line) => line.length > 3)
    .map((line) => line.slice(3));
  const newCommits = Number((await git(worktree.repositoryRoot, ['rev-list', '--count', `${worktree.baseCommit}..refs/heads/${worktree.branch}`])).trim());
  return { uncommittedFiles, newCommits };
}

/** At a worktree's end: kept when it has changes, else removed with its branch. A retry after the removal reports it removed. */
export async function closeWorktree(input: CloseWorktreeInput): Promise<WorktreeClosed> {
  const { worktree } = input;
  try {
    const listed = (await listWorktrees(worktree.repositoryRoot)).some((entry) => path.resolve(entry.path) === path.resolve(worktree.path));
    if (listed) {
      const changes = await worktreeChanges(worktree);
      if (!input.discard && worktreeDisposal(changes) === 'keep') return { action: 'kept', worktree, changes };
      await git(worktree.repositoryRoot, ['worktree', 'remove', '--force', '--force', worktree.path]);
    }
    // Its branch goes too, unless it holds commits after all (a retry after the directory went).
    if (await branchExists(worktree.repositoryRoot, worktree.branch)) {
      const ahead = Number((await git(worktree.repositoryRoot, ['rev-list', '--count', `${worktree.baseCommit}..refs/heads/${worktree.branch}`])).trim());
      if (ahead > 0 && !input.discard) return { action: 'kept', worktree, changes: { uncommittedFiles: [], newCommits: ahead } };
      await git(worktree.repositoryRoot, ['branch', '-D', worktree.branch]);
    }
    return { action: 'removed', worktree };
  } catch (error) {
    return { action: 'failed', worktree, problem: (error as Error).message };
  }
}

/** The worktree activities (common/activity-interface.ts). */
export function createWorktreeActivities(): {
  createWorktree(input: CreateWorktreeInput): Promise<CreateWorktreeResult>;
  closeWorktree(input: CloseWorktreeInput): Promise<WorktreeClosed>;
} {
  return { createWorktree, closeWorktree };
}
