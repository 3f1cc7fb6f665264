/**
 * Prompt and context (seed §2.5): CLAUDE.md discovery as Claude Code does it (real files in temp
 * directories), the git status with main branch and user, custom command files, and the prompt
 * layers — default, `--system-prompt`, `--append-system-prompt`, and the user context.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readCustomCommands } from '../../activities/custom-commands';
import { formatMemoryFiles, loadMemoryFiles, memoryFileCandidates } from '../../activities/memory-files';
import { defaultBranch, loadSessionContext, readGitStatus } from '../../activities/session-context';
import type { SessionContext } from '../../common/activity-types';
import { buildEffectiveSystemPrompt, buildUserContext, getSystemPrompt } from '../../workflows/system-prompt';

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((directory) => rm(directory, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-context-'));
  made.push(directory);
  return directory;
}

async function write(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
}

describe('CLAUDE.md discovery', () => {
  it('reads managed, user, then each directory top-down (project, .claude, rules, local) with Claude Code labels', async () => {
    const root = await tempDir();
    const home = path.join(root, 'home');
    const repo = path.join(root, 'repo');
    const cwd = path.join(repo, 'packages', 'api');
    const managed = path.join(root, 'etc', 'CLAUDE.md');
    await write(managed, 'managed rules');
    await write(path.join(home, '.claude', 'CLAUDE.md'), 'user prefs');
    await write(path.join(repo, 'CLAUDE.md'), 'repo conventions');
    await write(path.join(repo, '.claude', 'rules', 'b.md'), 'rule b');
    await write(path.join(repo, '.claude', 'rules', 'a.md'), 'rule a');
    await write(path.join(repo, 'CLAUDE.local.md'), 'my repo notes');
    await write(path.join(cwd, '.claude', 'CLAUDE.md'), 'api specifics');
    await write(path.join(cwd, 'CLAUDE.md'), '   \n'); // empty: skipped
    await write(path.join(repo, 'packages', 'web', 'CLAUDE.md'), 'sibling: never read');

    const files = (await loadMemoryFiles(cwd, { home, managedPath: managed })).files.filter((file) => file.path.startsWith(root));
    expect(files.map((file) => [path.relative(root, file.path), file.type])).toEqual([
      ['etc/CLAUDE.md', 'Managed'],
      ['home/.claude/CLAUDE.md', 'User'],
      ['repo/CLAUDE.md', 'Project'],
      ['repo/.claude/rules/a.md', 'Project'],
      ['repo/.claude/rules/b.md', 'Project'],
      ['repo/CLAUDE.local.md', 'Local'],
      ['repo/packages/api/.claude/CLAUDE.md', 'Project'],
    ]);
    const text = formatMemoryFiles(files)!;
    expect(text).toContain(`Contents of ${path.join(repo, 'CLAUDE.md')} (project instructions, checked into the codebase):\n\nrepo conventions`);
    expect(text).toContain(`Contents of ${path.join(repo, 'CLAUDE.local.md')} (user's private project instructions, not checked in):\n\nmy repo notes`);
    expect(text).toContain(`Contents of ${path.join(home, '.claude', 'CLAUDE.md')} (user's private global instructions for all projects):\n\nuser prefs`);
    expect(text.indexOf('user prefs')).toBeLessThan(text.indexOf('api specifics'));
  });

  it('walks every parent up to, not including, the filesystem root, and reads ~/.claude/CLAUDE.md once', async () => {
    const candidates = memoryFileCandidates('/a/b', '/a', undefined).map((candidate) => ('path' in candidate ? candidate.path : `${candidate.rulesDir}/*.md`));
    expect(candidates).toEqual([
      '/a/.claude/CLAUDE.md',
      '/a/.claude/rules/*.md',
      '/a/CLAUDE.md',
      '/a/.claude/CLAUDE.md',
      '/a/.claude/rules/*.md',
      '/a/CLAUDE.local.md',
      '/a/b/CLAUDE.md',
      '/a/b/.claude/CLAUDE.md',
      '/a/b/.claude/rules/*.md',
      '/a/b/CLAUDE.local.md',
    ]);
    const home = await tempDir();
    await write(path.join(home, '.claude', 'CLAUDE.md'), 'once');
    const files = (await loadMemoryFiles(path.join(home, 'project'), { home, managedPath: undefined })).files;
    expect(files.filter((file) => file.content === 'once')).toEqual([{ path: path.join(home, '.claude', 'CLAUDE.md'), type: 'User', content: 'once' }]);
  });
});

describe('git status (seed §2.5 getSystemContext)', () => {
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'pipe' }).toString().trim();

  it('names the current branch, the main branch and the git user', async () => {
    const repo = await tempDir();
    git(repo, 'init', '-q', '-b', 'trunk');
    git(repo, 'config', 'user.name', 'Ada Lovelace');
    git(repo, 'config', 'user.email', 'ada@example.com');
    await write(path.join(repo, 'a.txt'), 'a');
    git(repo, 'add', 'a.txt');
    git(repo, 'commit', '-qm', 'first');
    git(repo, 'branch', 'main');
    git(repo, 'checkout', '-qb', 'feature');
    await write(path.join(repo, 'b.txt'), 'b');
    const status = (await readGitStatus(repo))!.status;
    expect(status).toContain('Current branch: feature');
    expect(status).toContain('Main branch (you will usually use this for PRs): main');
    expect(status).toContain('Git user: Ada Lovelace');
    expect(status).toContain('?? b.txt');
    expect(status).toContain('first');
  });

  it("takes origin's HEAD as the main branch when there is one", async () => {
    const origin = await tempDir();
    git(origin, 'init', '-q', '-b', 'develop');
    git(origin, '-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '-q', '--allow-empty', '-m', 'root');
    const clone = path.join(await tempDir(), 'clone');
    git(path.dirname(clone), 'clone', '-q', origin, clone);
    expect(await defaultBranch(clone)).toBe('develop');
    expect(await readGitStatus(await tempDir())).toBeUndefined();
  });
});

describe('custom commands (.claude/commands)', () => {
  it('loads user and project commands, namespaced by subdirectory; the project wins; bad files are reported', async () => {
    const home = await tempDir();
    const cwd = await tempDir();
    await write(path.join(home, '.claude', 'commands', 'review.md'), 'user review');
    await write(path.join(home, '.claude', 'commands', 'mine.md'), '---\ndescription: Mine\n---\nmine');
    await write(path.join(cwd, '.claude', 'commands', 'review.md'), '---\ndescription: Project review\n---\nReview $ARGUMENTS');
    await write(path.join(cwd, '.claude', 'commands', 'frontend', 'test.md'), 'Run the frontend tests');
    await write(path.join(cwd, '.claude', 'commands', 'broken.md'), '---\ndescription: never closed');
    const { commands, errors } = await readCustomCommands(cwd, home);
    expect(commands.map((command) => [command.name, command.scope, command.description]).sort()).toEqual([
      ['frontend:test', 'project', 'Run the frontend tests'],
      ['mine', 'user', 'Mine'],
      ['review', 'project', 'Project review'],
    ]);
    expect(errors).toEqual([expect.stringContaining('broken.md: the front matter opened with --- is never closed')]);
  });

  it('the session context carries them, the CLAUDE.md files and the warnings', async () => {
    const cwd = await tempDir();
    await write(path.join(cwd, 'CLAUDE.md'), 'Use tabs.');
    await write(path.join(cwd, '.claude', 'commands', 'hello.md'), 'Say hello to $ARGUMENTS');
    await write(path.join(cwd, '.claude', 'commands', 'bad.md'), '---\nnope');
    const context = await loadSessionContext({ cwd, trusted: true }); // the workspace's commands load once it is trusted
    expect(context.claudeMdFiles).toContain(path.join(cwd, 'CLAUDE.md'));
    expect(context.claudeMd).toContain('(project instructions, checked into the codebase):\n\nUse tabs.');
    expect(context.commands?.map((command) => command.name)).toContain('hello');
    expect(context.warnings).toEqual(expect.arrayContaining([expect.stringContaining('bad.md')]));
  });
});

describe('prompt layers (seed §2.5)', () => {
  const context: SessionContext = {
    cwd: '/work/app',
    claudeMd: 'Contents of /work/app/CLAUDE.md (project instructions, checked into the codebase):\n\nUse tabs.',
    gitStatus: 'Current branch: main\n\nMain branch (you will usually use this for PRs): main',
    currentDate: "Today's date is 2026-11-30.",
    platform: 'linux',
    shell: 'bash',
    isGitRepo: true,
    stopHooks: [],
  };
  const defaultPrompt = getSystemPrompt(context, 'claude-sonnet-4-6');
  const texts = (blocks: Array<{ text: string }>) => blocks.map((block) => block.text);

  it('Layer 1: identity and static part cached, then the environment and git status', () => {
    expect(defaultPrompt[0]).toMatchObject({ text: expect.stringContaining('You are durable-agent'), cache_control: { type: 'ephemeral' } });
    const dynamic = texts(defaultPrompt).join('\n');
    expect(dynamic).toContain('Working directory: /work/app');
    expect(dynamic).toContain('Main branch (you will usually use this for PRs): main');
    expect(defaultPrompt.every((block) => block.text.trim() !== '')).toBe(true);
  });

  it('Layer 2: --system-prompt replaces the default; --append-system-prompt is added to whichever is in effect', () => {
    expect(buildEffectiveSystemPrompt({ defaultPrompt })).toBe(defaultPrompt);
    const custom = buildEffectiveSystemPrompt({ defaultPrompt, customSystemPrompt: 'You are a pirate.' });
    expect(custom).toEqual([{ type: 'text', text: 'You are a pirate.', cache_control: { type: 'ephemeral' } }]);
    const appended = buildEffectiveSystemPrompt({ defaultPrompt, appendSystemPrompt: 'Answer in French.' });
    expect(texts(appended)).toEqual([...texts(defaultPrompt), 'Answer in French.']);
    const both = buildEffectiveSystemPrompt({ defaultPrompt, customSystemPrompt: 'Pirate.', appendSystemPrompt: 'French.' });
    expect(texts(both)).toEqual(['Pirate.', 'French.']);
    // Blank values count as absent (the API rejects empty text blocks).
    expect(buildEffectiveSystemPrompt({ defaultPrompt, customSystemPrompt: '  ', appendSystemPrompt: '' })).toBe(defaultPrompt);
  });

  it('Layer 3: CLAUDE.md and the date travel in the user context, not the system prompt', () => {
    const userContext = buildUserContext(context)!;
    expect(userContext).toContain('# claudeMd');
    expect(userContext).toContain('Use tabs.');
    expect(userContext).toContain("# currentDate\nToday's date is 2026-11-30.");
    expect(texts(defaultPrompt).join('\n')).not.toContain('Use tabs.');
    expect(buildUserContext({ ...context, claudeMd: undefined })).toBe("# currentDate\nToday's date is 2026-11-30.");
  });
});
