import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gatherPathFacts, resolvePathFact } from '../../activities/permission-facts/paths';

/** Real temp dirs: a workspace, a directory outside it, and a home. Real paths (tmpdir may be a link). */
let top: string;
let workspace: string;
let outside: string;
let home: string;

beforeEach(async () => {
  top = await realpath(await mkdtemp(path.join(tmpdir(), 'durable-agent-facts-')));
  workspace = path.join(top, 'ws');
  outside = path.join(top, 'outside');
  home = path.join(top, 'home');
  for (const directory of [workspace, outside, home]) await mkdir(directory);
  await writeFile(path.join(outside, 'secret.txt'), 'secret');
  await writeFile(path.join(workspace, 'a.txt'), 'a');
});

afterEach(async () => {
  await rm(top, { recursive: true, force: true });
});

describe('resolvePathFact', () => {
  it('a plain file: absolute and real are the same, kind file', async () => {
    expect(await resolvePathFact('a.txt', workspace, home)).toEqual({
      literal: 'a.txt',
      absolute: `${workspace}/a.txt`,
      real: `${workspace}/a.txt`,
      exists: true,
      kind: 'file',
    });
    expect((await resolvePathFact('.', workspace, home)).kind).toBe('directory');
    expect((await resolvePathFact('./sub/../a.txt', workspace, home)).absolute).toBe(`${workspace}/a.txt`);
  });

  it('a file link leading out: the real path is outside', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'link.txt'));
    const fact = await resolvePathFact('link.txt', workspace, home);
    expect(fact.absolute).toBe(`${workspace}/link.txt`);
    expect(fact.real).toBe(`${outside}/secret.txt`);
    expect(fact.kind).toBe('file');
    expect(fact.exists).toBe(true);
  });

  it('a directory link leading out, and a missing file under it: the real parent joined with the rest', async () => {
    await symlink(outside, path.join(workspace, 'linkdir'));
    expect((await resolvePathFact('linkdir/secret.txt', workspace, home)).real).toBe(`${outside}/secret.txt`);
    const missing = await resolvePathFact('linkdir/new/deeper.txt', workspace, home);
    expect(missing).toMatchObject({ absolute: `${workspace}/linkdir/new/deeper.txt`, real: `${outside}/new/deeper.txt`, exists: false, kind: 'missing' });
  });

  it('a dangling link as the last component resolves to its target (writing would create it)', async () => {
    await symlink(path.join(outside, 'created-by-write.txt'), path.join(workspace, 'dangling'));
    expect(await resolvePathFact('dangling', workspace, home)).toMatchObject({ real: `${outside}/created-by-write.txt`, exists: false, kind: 'missing' });
    // Relative targets resolve against the link's own (real) directory.
    await mkdir(path.join(workspace, 'sub'));
    await symlink('../../outside/rel.txt', path.join(workspace, 'sub', 'relative'));
    expect((await resolvePathFact('sub/relative', workspace, home)).real).toBe(`${outside}/rel.txt`);
    // A chain through a dangling directory link.
    await symlink(path.join(outside, 'nodir'), path.join(workspace, 'danglingdir'));
    expect((await resolvePathFact('danglingdir/x.txt', workspace, home)).real).toBe(`${outside}/nodir/x.txt`);
  });

  it('a link loop is kind other', async () => {
    await symlink(path.join(workspace, 'loop2'), path.join(workspace, 'loop1'));
    await symlink(path.join(workspace, 'loop1'), path.join(workspace, 'loop2'));
    expect((await resolvePathFact('loop1', workspace, home)).kind).toBe('other');
  });

  it('~ and ~/ expand to the home directory; ~user does not', async () => {
    await writeFile(path.join(home, '.netrc'), 'x');
    expect(await resolvePathFact('~/.netrc', workspace, home)).toMatchObject({ absolute: `${home}/.netrc`, real: `${home}/.netrc`, kind: 'file' });
    expect((await resolvePathFact('~', workspace, home)).absolute).toBe(home);
    expect((await resolvePathFact('~bob/x', workspace, home)).absolute).toBe(`${workspace}/~bob/x`);
  });

  it('/proc, /sys and /dev entries are other, /dev/null is a file', async () => {
    expect((await resolvePathFact('/proc/self/environ', workspace, home)).kind).toBe('other');
    expect((await resolvePathFact('/dev/zero', workspace, home)).kind).toBe('other');
    expect((await resolvePathFact('/dev/null', workspace, home)).kind).toBe('file');
    // A link inside the workspace to /proc is judged on its real path.
    await symlink('/proc/self/environ', path.join(workspace, 'env'));
    expect((await resolvePathFact('env', workspace, home)).kind).toBe('other');
  });
});

describe('gatherPathFacts', () => {
  it('Read reads, Write and Edit write file_path', async () => {
    expect(await gatherPathFacts('Read', { file_path: 'a.txt' }, workspace, home)).toEqual([
      { access: 'read', path: expect.objectContaining({ real: `${workspace}/a.txt` }) },
    ]);
    const write = await gatherPathFacts('Write', { file_path: 'new.txt', content: 'x' }, workspace, home);
    expect(write).toEqual([{ access: 'write', path: expect.objectContaining({ real: `${workspace}/new.txt`, kind: 'missing' }) }]);
    const edit = await gatherPathFacts('Edit', { file_path: 'a.txt', old_string: 'a', new_string: 'b' }, workspace, home);
    expect(edit.map((fact) => fact.access)).toEqual(['write']);
  });

  it('Glob reads its root and where its pattern leads; Grep its root', async () => {
    const glob = await gatherPathFacts('Glob', { pattern: '../outside/*.txt' }, workspace, home);
    expect(glob.map((fact) => fact.path.real)).toEqual([workspace, outside]);
    const literal = await gatherPathFacts('Glob', { pattern: '../outside/secret.txt' }, workspace, home);
    expect(literal.map((fact) => fact.path.real)).toEqual([workspace, `${outside}/secret.txt`]);
    const same = await gatherPathFacts('Glob', { pattern: '**/*.ts' }, workspace, home);
    expect(same.map((fact) => fact.path.real)).toEqual([workspace]);
    await symlink(outside, path.join(workspace, 'linkdir'));
    const grep = await gatherPathFacts('Grep', { pattern: 'x', path: 'linkdir' }, workspace, home);
    expect(grep).toEqual([{ access: 'read', path: expect.objectContaining({ absolute: `${workspace}/linkdir`, real: outside, kind: 'directory' }) }]);
  });

  it('invalid input and other tools: no facts', async () => {
    expect(await gatherPathFacts('Read', { file_path: 42 }, workspace, home)).toEqual([]);
    expect(await gatherPathFacts('Write', { file_path: 'x' }, workspace, home)).toEqual([]);
    expect(await gatherPathFacts('Bash', { command: 'ls' }, workspace, home)).toEqual([]);
  });
});
