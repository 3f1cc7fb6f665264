/**
 * Issue 29's file-system facts on real files in a temp directory: pathname expansion as Bash does
 * it (activities/permission-facts/glob.ts), the repository git would discover
 * (activities/permission-facts/git-repository.ts), and whether a Read rule may match inside a
 * directory git reads through (common/path-rules.ts `ruleMayMatchInside`).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverGitRepository } from '../../activities/permission-facts/git-repository';
import { expandGlob } from '../../activities/permission-facts/glob';
import { ruleMayMatchInside } from '../../common/path-rules';

let root: string;
let workspace: string;
let outside: string;

async function files(base: string, entries: Record<string, string>): Promise<void> {
  for (const [name, content] of Object.entries(entries)) {
    await mkdir(path.dirname(path.join(base, name)), { recursive: true });
    await writeFile(path.join(base, name), content);
  }
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'globs-repos-')));
  workspace = path.join(root, 'ws');
  outside = path.join(root, 'outside');
  await files(workspace, {
    'certs/server.key': 'k',
    'certs/client.key': 'k',
    'certs/server.pem': 'c',
    'certs/.hidden.key': 'h',
    'a b/c.txt': 'x',
    'star/*': 'literal star',
    'star/x': 'x',
  });
  await files(outside, { 'secret.txt': 's' });
  await symlink(outside, path.join(workspace, 'lnk1'));
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('expandGlob: Bash defaults on the real file system', () => {
  it.each([
    ['certs/*.key', ['certs/client.key', 'certs/server.key']],
    ['certs/ser?er.*', ['certs/server.key', 'certs/server.pem']],
    ['cert[s]/server.key', ['certs/server.key']],
    ['certs/[!s]*', ['certs/client.key']],
    ['certs/.*.key', ['certs/.hidden.key']],
    ['c*/*.pem', ['certs/server.pem']],
    ['lnk?/*', ['lnk1/secret.txt']],
    ['\\a\\ \\b/*', ['a b/c.txt']],
    ['star/\\*', ['star/*']],
    ['*.none', []],
  ])('%s → %j', async (pattern, expected) => {
    expect(await expandGlob(pattern, workspace)).toEqual({ matches: expected });
  });

  it('does not match a leading dot unless the pattern has one there (no dotglob); .* also matches .. (bash before 5.2)', async () => {
    expect(await expandGlob('certs/*', workspace)).toEqual({ matches: ['certs/client.key', 'certs/server.key', 'certs/server.pem'] });
    expect(await expandGlob('certs/[!s]*', workspace)).toEqual({ matches: ['certs/client.key'] });
    expect(await expandGlob('certs/?hidden.key', workspace)).toEqual({ matches: [] });
    expect(await expandGlob('certs/.*', workspace)).toEqual({ matches: ['certs/..', 'certs/.hidden.key'] });
  });

  it('expands absolute patterns from /, and stops past the limit', async () => {
    expect(await expandGlob(`${workspace}/cert?/server.key`, '/')).toEqual({ matches: [`${workspace}/certs/server.key`] });
    expect(await expandGlob('certs/*', workspace, 2)).toEqual({ tooMany: true });
  });
});

describe('discoverGitRepository: only the workspace’s own .git', () => {
  let ws: string;
  beforeAll(async () => {
    ws = path.join(root, 'repo-ws');
    await mkdir(path.join(ws, 'src', 'deep'), { recursive: true });
    execFileSync('git', ['init', '-q', ws]);
    await files(ws, {
      'vendor/bare/HEAD': 'ref: refs/heads/main\n',
      'vendor/bare/objects/.keep': '',
      'vendor/bare/refs/heads/.keep': '',
      'vendor/half/HEAD': 'ref: refs/heads/main\n',
      'vendor/half/commondir': '../bare\n',
    });
    execFileSync('git', ['init', '-q', path.join(ws, 'nested')]);
    await mkdir(path.join(ws, 'nested', 'in'), { recursive: true });
  });

  it('accepts the workspace’s own repository from anywhere inside it', async () => {
    expect(await discoverGitRepository(ws, ws)).toEqual({ topLevel: ws });
    expect(await discoverGitRepository(path.join(ws, 'src', 'deep'), ws)).toEqual({ topLevel: ws });
    expect(await discoverGitRepository(path.join(ws, 'vendor'), ws)).toEqual({ topLevel: ws });
  });

  it.each([
    ['vendor/bare', /bare repository/],
    ['vendor/bare/refs/heads', /bare repository/],
    ['vendor/half', /bare repository/],
    ['nested', /nested repository/],
    ['nested/in', /nested repository/],
  ])('asks in %s', async (start, problem) => {
    expect((await discoverGitRepository(path.join(ws, start), ws)).problem).toMatch(problem);
  });

  it('a .git file or commondir leading back into the workspace asks; one leading out (a worktree) does not', async () => {
    const worktree = path.join(root, 'worktree-ws');
    await files(worktree, { '.git': `gitdir: ${path.join(ws, '.git')}\n` });
    expect(await discoverGitRepository(worktree, worktree)).toEqual({ topLevel: worktree });
    const planted = path.join(root, 'planted-ws');
    await files(planted, { '.git': 'gitdir: ./evil\n', 'evil/HEAD': 'ref: refs/heads/main\n', 'evil/objects/.keep': '', 'evil/refs/.keep': '' });
    expect((await discoverGitRepository(planted, planted)).problem).toMatch(/leads to .*evil/);
    const common = path.join(root, 'common-ws');
    execFileSync('git', ['init', '-q', common]);
    await files(common, { '.git/commondir': '../shadow\n', 'shadow/config': '' });
    expect((await discoverGitRepository(common, common)).problem).toMatch(/commondir/);
  });

  it('a workspace with a .git that is no repository, but repository files at its root, asks', async () => {
    const fake = path.join(root, 'fake-ws');
    await files(fake, { '.git/config': '', HEAD: 'ref: refs/heads/main\n', 'objects/.keep': '', 'refs/.keep': '' });
    expect((await discoverGitRepository(fake, fake)).problem).toMatch(/workspace itself as a bare repository/);
  });

  it('a workspace inside a larger repository uses that repository’s top level', async () => {
    const inner = path.join(ws, 'src');
    expect(await discoverGitRepository(path.join(inner, 'deep'), inner)).toEqual({ topLevel: ws });
  });

  it('from another directory (an --add-dir), its own repository gives the top level and a bare one asks', async () => {
    const other = path.join(root, 'other-ws');
    expect(await discoverGitRepository(path.join(ws, 'src'), other)).toEqual({ topLevel: ws });
    expect((await discoverGitRepository(path.join(ws, 'vendor', 'bare'), other)).problem).toMatch(/bare repository/);
  });

  it('a .git that is a symbolic link asks', async () => {
    const linked = path.join(root, 'linked-ws');
    await mkdir(linked, { recursive: true });
    await symlink(path.join(ws, '.git'), path.join(linked, '.git'));
    expect((await discoverGitRepository(linked, linked)).problem).toMatch(/symbolic link/);
  });
});

describe('ruleMayMatchInside: a Read rule under a directory git reads through', () => {
  const context = { cwd: '/ws', homeDir: '/home/u' };
  it.each([
    ['certs/server.key', '/ws/certs', true],
    ['certs/server.key', '/ws', true],
    ['certs/**', '/ws/certs', true],
    ['*.key', '/ws/src', true],
    ['/certs/*.key', '/ws/src', false],
    ['/certs/*.key', '/ws/cert?', false],
    ['c*/server.key', '/ws/certs', true],
    ['certs/server.key', '/ws/certs/sub', false],
    ['certs', '/ws/certs/sub', true],
    ['//etc/shadow', '/ws', false],
    ['~/.ssh/**', '/home', true],
  ] as const)('Read(%s) inside %s → %s', (rule, directory, expected) => {
    expect(ruleMayMatchInside(rule, directory, context)).toBe(expected);
  });
});
