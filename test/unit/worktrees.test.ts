/**
 * Git worktrees (issue 33 item 4): the pure decisions (common/worktrees.ts: names, branch, path,
 * keep or remove, what the model is told) and the activities on a real repository in a temp dir
 * (activities/worktrees.ts: made once across retries, kept with changes, removed without, a
 * retried close after the removal).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeWorktree, createWorktree } from '../../activities/worktrees';
import { configFrom } from '../../client/command-line';
import { UsageError } from '../../client/usage-error';
import {
  type Worktree,
  agentWorktreeName,
  worktreeBranch,
  worktreeClosedText,
  worktreeDisposal,
  worktreeNameProblem,
  worktreePath,
} from '../../common/worktrees';
import { isProtectedPath } from '../../common/permission-rules';
import { agentNotificationText, launchedText } from '../../workflows/background/agent-tasks';

const worktree: Worktree = {
  name: 'agent-toolu_1',
  path: '/repo/.claude/worktrees/agent-toolu_1',
  branch: 'worktree-agent-toolu_1',
  repositoryRoot: '/repo',
  baseCommit: 'abc',
};

describe('worktree decisions', () => {
  it('names, branches and places worktrees as Claude Code does (.claude/worktrees/<name>, branch worktree-<name>)', () => {
    expect(worktreeBranch('feature-x')).toBe('worktree-feature-x');
    expect(worktreePath('/home/me/repo/', 'feature-x')).toBe('/home/me/repo/.claude/worktrees/feature-x');
  });

  it("derives an agent's worktree from its call's id: the same call the same name, other calls other names, always valid", () => {
    expect(agentWorktreeName('toolu_01AbC')).toBe('agent-toolu_01AbC');
    expect(agentWorktreeName('toolu_01AbC')).toBe(agentWorktreeName('toolu_01AbC'));
    expect(agentWorktreeName('toolu_a')).not.toBe(agentWorktreeName('toolu_b'));
    for (const id of ['toolu_01AbC', 'weird/../id.lock', '--x', `toolu_${'z'.repeat(200)}`]) expect(worktreeNameProblem(agentWorktreeName(id))).toBeUndefined();
  });

  it('refuses names git or the directory layout cannot take', () => {
    expect(worktreeNameProblem('ok-name_1.2')).toBeUndefined();
    for (const bad of ['', '../escape', 'a/b', '.hidden', '-flag', 'x..y', 'name.lock', 'trailing.', 'sp ace', 'x'.repeat(65)])
      expect(worktreeNameProblem(bad), bad).toBeDefined();
  });

  it('keeps a worktree with uncommitted files or new commits, removes one without', () => {
    expect(worktreeDisposal({ uncommittedFiles: [], newCommits: 0 })).toBe('remove');
    expect(worktreeDisposal({ uncommittedFiles: ['notes.txt'], newCommits: 0 })).toBe('keep');
    expect(worktreeDisposal({ uncommittedFiles: [], newCommits: 2 })).toBe('keep');
  });

  it('tells the model the path and branch of a kept worktree, and that a clean one went', () => {
    const kept = worktreeClosedText({ action: 'kept', worktree, changes: { uncommittedFiles: ['a', 'b'], newCommits: 1 } });
    expect(kept).toContain(`worktreePath: ${worktree.path}`);
    expect(kept).toContain(`worktreeBranch: ${worktree.branch}`);
    expect(kept).toContain('2 changed file(s), 1 new commit(s)');
    expect(worktreeClosedText({ action: 'removed', worktree })).toContain('were removed');
    expect(worktreeClosedText({ action: 'failed', worktree, problem: 'disk full' })).toContain('disk full');
  });

  it("names a background agent's worktree in its launch and its notification", () => {
    const task = {
      id: 'a1234abcd',
      description: 'edit',
      agentType: 'general-purpose',
      childWorkflowId: 'c',
      model: 'm',
      status: 'running' as const,
      lastSeq: 0,
      worktree,
    };
    expect(launchedText(task)).toContain(`worktreePath: ${worktree.path}`);
    const notification = agentNotificationText(task, { result: 'done', isError: false });
    expect(notification).toContain(`<worktreePath>${worktree.path}</worktreePath>`);
    expect(notification).toContain(`<worktreeBranch>${worktree.branch}</worktreeBranch>`);
    expect(agentNotificationText({ ...task, worktree: undefined }, { result: 'done', isError: false })).not.toContain('<worktree>');
  });
});

describe('worktree activities (real git)', () => {
  const made: string[] = [];
  afterEach(() => {
    for (const directory of made.splice(0)) rmSync(directory, { recursive: true, force: true });
  });
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd, encoding: 'utf8' }).trim();
  const repository = () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'worktrees-unit-'));
    made.push(root);
    git(root, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(path.join(root, 'notes.txt'), 'original\n');
    git(root, 'add', 'notes.txt');
    git(root, 'commit', '--quiet', '-m', 'first');
    return root;
  };

  it('makes the worktree once: a retried create finds the one the first attempt made', async () => {
    const root = repository();
    const first = await createWorktree({ cwd: root, name: 'agent-toolu_1' });
    expect(first).toEqual({
      worktree: {
        name: 'agent-toolu_1',
        path: path.join(root, '.claude/worktrees/agent-toolu_1'),
        branch: 'worktree-agent-toolu_1',
        repositoryRoot: root,
        baseCommit: git(root, 'rev-parse', 'HEAD'),
      },
    });
    const { worktree: made1 } = first as { worktree: Worktree };
    writeFileSync(path.join(made1.path, 'notes.txt'), 'edited\n');
    expect(await createWorktree({ cwd: root, name: 'agent-toolu_1' })).toEqual(first);
    // The retry did not check out again over the edit.
    expect(readFileSync(path.join(made1.path, 'notes.txt'), 'utf8')).toBe('edited\n');
    expect(git(made1.path, 'branch', '--show-current')).toBe('worktree-agent-toolu_1');
  });

  it("makes again a worktree whose checkout a crash interrupted (still locked 'initializing')", async () => {
    const root = repository();
    const { worktree } = (await createWorktree({ cwd: root, name: 'crashed' })) as { worktree: Worktree };
    // What an interrupted `git worktree add` leaves: the registration locked, the checkout partial.
    git(root, 'worktree', 'lock', '--reason', 'initializing', worktree.path);
    rmSync(path.join(worktree.path, 'notes.txt'));
    expect(await createWorktree({ cwd: root, name: 'crashed' })).toEqual({ worktree });
    expect(readFileSync(path.join(worktree.path, 'notes.txt'), 'utf8')).toBe('original\n');
  });

  it('keeps a worktree with an edit or a commit, removes a clean one and its branch; a retried close reports it removed', async () => {
    const root = repository();
    const edited = ((await createWorktree({ cwd: root, name: 'edited' })) as { worktree: Worktree }).worktree;
    writeFileSync(path.join(edited.path, 'new.txt'), 'new\n');
    expect(await closeWorktree({ worktree: edited })).toEqual({ action: 'kept', worktree: edited, changes: { uncommittedFiles: ['new.txt'], newCommits: 0 } });

    const committed = ((await createWorktree({ cwd: root, name: 'committed' })) as { worktree: Worktree }).worktree;
    writeFileSync(path.join(committed.path, 'notes.txt'), 'committed\n');
    git(committed.path, 'commit', '--quiet', '-am', 'work');
    expect(await closeWorktree({ worktree: committed })).toMatchObject({ action: 'kept', changes: { uncommittedFiles: [], newCommits: 1 } });

    const clean = ((await createWorktree({ cwd: root, name: 'clean' })) as { worktree: Worktree }).worktree;
    expect(await closeWorktree({ worktree: clean })).toEqual({ action: 'removed', worktree: clean });
    expect(existsSync(clean.path)).toBe(false);
    expect(git(root, 'branch', '--list', clean.branch)).toBe('');
    expect(await closeWorktree({ worktree: clean })).toEqual({ action: 'removed', worktree: clean });
    // The main checkout is as it was.
    expect(readFileSync(path.join(root, 'notes.txt'), 'utf8')).toBe('original\n');
    expect(git(root, 'status', '--porcelain', '--untracked-files=no')).toBe('');
  });

  it('says why when the directory is not a git repository, or the name is not one', async () => {
    const plain = mkdtempSync(path.join(os.tmpdir(), 'worktrees-plain-'));
    made.push(plain);
    expect(await createWorktree({ cwd: plain, name: 'x' })).toEqual({ problem: expect.stringContaining('not in a git repository') });
    expect(await createWorktree({ cwd: plain, name: '../x' })).toEqual({ problem: expect.stringContaining('Invalid worktree name') });
  });
});

describe("a worktree's paths, judged below it (issue 33)", () => {
  const repository = '/repo';
  const inWorktree = '/repo/.claude/worktrees/agent-toolu_1';
  it('an ordinary file in the worktree is ordinary where the worktree is the working directory; its own protected files stay protected', () => {
    expect(isProtectedPath(`${inWorktree}/notes.txt`, [inWorktree])).toBe(false);
    expect(isProtectedPath(`${inWorktree}/.claude/settings.json`, [inWorktree])).toBe(true);
    expect(isProtectedPath(`${inWorktree}/.git`, [inWorktree])).toBe(true);
    expect(isProtectedPath(`${inWorktree}/src/.envrc`, [inWorktree])).toBe(true);
  });
  it("the repository's own settings stay protected from the worktree, and the worktree from the repository's conversation", () => {
    expect(isProtectedPath(`${repository}/.claude/settings.json`, [inWorktree])).toBe(true);
    expect(isProtectedPath(`${inWorktree}/notes.txt`, [repository])).toBe(true);
    expect(isProtectedPath(`${inWorktree}/notes.txt`)).toBe(true);
  });
});

describe('-w / --worktree [name]', () => {
  it('asks for a worktree by name, or for one named for the conversation; a bad name is a usage error', () => {
    expect(configFrom({ worktree: 'feature-x' }, false).worktree).toBe('feature-x');
    expect(configFrom({ worktree: true }, false).worktree).toBe('');
    expect(configFrom({}, false).worktree).toBeUndefined();
    expect(() => configFrom({ worktree: '../escape' }, false)).toThrow(UsageError);
  });
});

describe("a WorktreeCreate hook's path (workflows/worktrees.ts)", () => {
  it('is a folder of its own: not the root, a top-level folder, the workspace or above it', async () => {
    const { hookWorktreePathProblem } = await import('../../workflows/worktrees');
    expect(hookWorktreePathProblem('/tmp/wt/feature', '/work/repo')).toBeUndefined();
    expect(hookWorktreePathProblem('/work/repo/.claude/worktrees/x', '/work/repo')).toBeUndefined();
    expect(hookWorktreePathProblem('relative/x', '/work/repo')).toMatch(/not an absolute path/);
    expect(hookWorktreePathProblem('/', '/work/repo')).toMatch(/root or a top-level/);
    expect(hookWorktreePathProblem('/home', '/work/repo')).toMatch(/root or a top-level/);
    expect(hookWorktreePathProblem('/work/repo', '/work/repo')).toMatch(/workspace or a folder above/);
    expect(hookWorktreePathProblem('/work/repo/', '/work/repo')).toMatch(/workspace or a folder above/);
    expect(hookWorktreePathProblem('/work//./repo', '/work/repo')).toMatch(/workspace or a folder above/);
    expect(hookWorktreePathProblem('/work/repo/../..', '/work/repo')).toMatch(/climbs/);
  });
});
