/**
 * The file tools enforce ToolAccess where they act (issue 17 §4): real files and symbolic links
 * in temp dirs, the real tool implementations and the real runTool activity.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import type { RunToolResult } from '../../common/activity-types';
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gatherPathFacts } from '../../activities/permission-facts/paths';
import { createToolRunner } from '../../activities/run-tool';
import { executeTool, type ToolExecutionContext } from '../../activities/tools';
import { AccessGuard, AccessRefusal } from '../../activities/tools/access';
import type { ToolAccess } from '../../common/permission-facts';

let top: string;
let workspace: string;
let outside: string;
let home: string;

beforeEach(async () => {
  top = await realpath(await mkdtemp(path.join(tmpdir(), 'durable-agent-access-')));
  workspace = path.join(top, 'ws');
  outside = path.join(top, 'outside');
  home = path.join(top, 'home');
  for (const directory of [workspace, outside, home]) await mkdir(directory);
  await writeFile(path.join(outside, 'secret.txt'), 'OUTSIDE-SECRET\n');
  await writeFile(path.join(workspace, 'a.txt'), 'inside a\n');
});

afterEach(async () => {
  await rm(top, { recursive: true, force: true });
});

function access(overrides: Partial<ToolAccess> = {}): ToolAccess {
  return { workingDirectories: [workspace], readDeny: [], homeDir: home, ...overrides };
}

function context(toolAccess: ToolAccess | null = access()): ToolExecutionContext {
  return { cwd: workspace, signal: new AbortController().signal, access: toolAccess ?? undefined };
}

const secret = () => readFile(path.join(outside, 'secret.txt'), 'utf8');

describe('Write and Edit', () => {
  it('refuse to write through a file link leading out; without access the link is followed (as before)', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'link.txt'));
    const refused = await executeTool('Write', { file_path: 'link.txt', content: 'pwned' }, context());
    expect(refused.isError).toBe(true);
    expect(refused.content).toContain('outside');
    const edit = await executeTool('Edit', { file_path: 'link.txt', old_string: 'OUTSIDE', new_string: 'pwned' }, context());
    expect(edit.isError).toBe(true);
    expect(await secret()).toBe('OUTSIDE-SECRET\n');

    const old = await executeTool('Write', { file_path: 'link.txt', content: 'pwned' }, context(null));
    expect(old.isError).toBe(false);
    expect(await secret()).toBe('pwned');
  });

  it('refuse a new file under a directory link leading out, and through a dangling link', async () => {
    await symlink(outside, path.join(workspace, 'linkdir'));
    const viaDirectory = await executeTool('Write', { file_path: 'linkdir/new.txt', content: 'x' }, context());
    expect(viaDirectory.isError).toBe(true);
    await symlink(path.join(outside, 'created.txt'), path.join(workspace, 'dangling'));
    const viaDangling = await executeTool('Edit', { file_path: 'dangling', old_string: '', new_string: 'x' }, context());
    expect(viaDangling.isError).toBe(true);
    expect((await readdir(outside)).sort()).toEqual(['secret.txt']);
  });

  it('a link swapped in after the facts were gathered is refused', async () => {
    const target = path.join(workspace, 'target.txt');
    await writeFile(target, 'before\n');
    const facts = await gatherPathFacts('Write', { file_path: 'target.txt', content: 'after' }, workspace, home);
    const allowedRealPaths = facts.map((fact) => fact.path.real);
    expect(allowedRealPaths).toEqual([target]);
    // The swap: target.txt becomes a link to a file outside.
    await unlink(target);
    await symlink(path.join(outside, 'secret.txt'), target);
    const result = await executeTool('Write', { file_path: 'target.txt', content: 'after' }, context(access({ allowedRealPaths })));
    expect(result.isError).toBe(true);
    expect(result.content).toContain('not the path permission was given for');
    expect(await secret()).toBe('OUTSIDE-SECRET\n');
    // Even a decision that covered the outside path (an --add-dir) does not let a swap inside it through.
    const wide = access({ workingDirectories: [workspace, outside], allowedRealPaths });
    expect((await executeTool('Edit', { file_path: 'target.txt', old_string: 'OUTSIDE', new_string: 'x' }, context(wide))).isError).toBe(true);
    expect(await secret()).toBe('OUTSIDE-SECRET\n');
  });

  it('the descriptor is checked: a link or a linked parent swapped in after the real path was resolved is not written through', async () => {
    const guard = await AccessGuard.create(access(), workspace);
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'now-a-link'));
    expect(await guard.openForWrite(path.join(workspace, 'now-a-link'))).toBeInstanceOf(AccessRefusal);
    await symlink(outside, path.join(workspace, 'now-a-dir-link'));
    expect(await guard.openForWrite(path.join(workspace, 'now-a-dir-link', 'secret.txt'))).toBeInstanceOf(AccessRefusal);
    expect(await guard.openForWrite(path.join(workspace, 'now-a-dir-link', 'fresh.txt'))).toBeInstanceOf(AccessRefusal);
    expect(await guard.openForRead(path.join(workspace, 'now-a-link'))).toBeInstanceOf(AccessRefusal);
    expect(await secret()).toBe('OUTSIDE-SECRET\n');
    expect((await readdir(outside)).sort()).toEqual(['secret.txt']);
  });

  it('links that stay inside the workspace work: the real target is written and read', async () => {
    await mkdir(path.join(workspace, 'v2'));
    await writeFile(path.join(workspace, 'v2', 'config.json'), '{"a":1}\n');
    await symlink('v2/config.json', path.join(workspace, 'current.json'));
    const write = await executeTool('Edit', { file_path: 'current.json', old_string: '"a":1', new_string: '"a":2' }, context());
    expect(write.isError).toBe(false);
    expect(await readFile(path.join(workspace, 'v2', 'config.json'), 'utf8')).toBe('{"a":2}\n');
    const read = await executeTool('Read', { file_path: 'current.json' }, context());
    expect(read.content).toContain('"a":2');
    const created = await executeTool('Write', { file_path: 'deep/new/file.txt', content: 'ok' }, context());
    expect(created.isError).toBe(false);
    expect(await readFile(path.join(workspace, 'deep/new/file.txt'), 'utf8')).toBe('ok');
    // ~ is expanded as the facts expand it (home is outside here, so only an explicit path reaches it).
    const inHome = await executeTool('Write', { file_path: '~/note.txt', content: 'h' }, context(access({ workingDirectories: [workspace, home] })));
    expect(inHome.isError).toBe(false);
    expect(await readFile(path.join(home, 'note.txt'), 'utf8')).toBe('h');
  });
});

describe('Read', () => {
  it('refuses a read through a linked directory leading out (even when no deny rule names it)', async () => {
    await symlink(outside, path.join(workspace, 'linkdir'));
    const result = await executeTool('Read', { file_path: 'linkdir/secret.txt' }, context());
    expect(result.isError).toBe(true);
    expect(result.content).not.toContain('OUTSIDE-SECRET');
    const old = await executeTool('Read', { file_path: 'linkdir/secret.txt' }, context(null));
    expect(old.content).toContain('OUTSIDE-SECRET');
  });

  it('applies Read deny rules to the real path, and reads an outside path the decision allowed', async () => {
    await writeFile(path.join(workspace, '.env'), 'TOKEN=1\n');
    await symlink(path.join(workspace, '.env'), path.join(workspace, 'innocent.txt'));
    const denied = await executeTool('Read', { file_path: 'innocent.txt' }, context(access({ readDeny: ['.env'] })));
    expect(denied.isError).toBe(true);
    expect(denied.content).not.toContain('TOKEN');
    const approved = await executeTool(
      'Read',
      { file_path: path.join(outside, 'secret.txt') },
      context(access({ allowedRealPaths: [path.join(outside, 'secret.txt')] })),
    );
    expect(approved.content).toContain('OUTSIDE-SECRET');
  });
});

describe('Grep and Glob', () => {
  beforeEach(async () => {
    await writeFile(path.join(workspace, '.env'), 'API_KEY=TOPSECRET\n');
    await mkdir(path.join(workspace, 'src'));
    await writeFile(path.join(workspace, 'src', 'app.ts'), 'const API_KEY = process.env.API_KEY;\n');
    await writeFile(path.join(workspace, 'src', '.env'), 'API_KEY=NESTEDSECRET\n');
  });

  it('Grep with readDeny [.env] never returns .env content, whatever the glob', async () => {
    const denied = context(access({ readDeny: ['.env'] }));
    for (const input of [
      { pattern: 'API_KEY', glob: '.env', output_mode: 'content' },
      { pattern: 'SECRET', output_mode: 'content' },
      { pattern: 'SECRET', path: 'src', output_mode: 'content' },
      { pattern: 'SECRET', path: '.env', output_mode: 'content' },
      { pattern: 'SECRET', output_mode: 'count' },
    ]) {
      const result = await executeTool('Grep', input, denied);
      expect(result.content).not.toContain('SECRET');
      expect(result.content).not.toContain('.env:');
    }
    const files = await executeTool('Grep', { pattern: 'API_KEY' }, denied);
    expect(files.content).toContain('app.ts');
    expect(files.content).not.toContain('.env');
    // Without the rule (and without access) the same search finds them: the test can fail.
    expect((await executeTool('Grep', { pattern: 'API_KEY', glob: '.env', output_mode: 'content' }, context(null))).content).toContain('TOPSECRET');
  });

  it('Glob with readDeny does not list denied files', async () => {
    const result = await executeTool('Glob', { pattern: '**/.env' }, context(access({ readDeny: ['.env'] })));
    expect(result.content).toContain('No files found');
    const literal = await executeTool('Glob', { pattern: 'src/.env' }, context(access({ readDeny: ['/src/**'] })));
    expect(literal.content).toContain('No files found');
    expect((await executeTool('Glob', { pattern: '**/.env' }, context())).content).toContain(path.join(workspace, 'src', '.env'));
  });

  it('Grep and Glob through a linked directory leading out return nothing from outside', async () => {
    await symlink(outside, path.join(workspace, 'linkdir'));
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'src', 'linked-file.txt'));
    for (const input of [
      { pattern: 'OUTSIDE', output_mode: 'content' },
      { pattern: 'OUTSIDE', path: 'linkdir', output_mode: 'content' },
      { pattern: 'OUTSIDE', path: 'src/linked-file.txt', output_mode: 'content' },
    ]) {
      const result = await executeTool('Grep', input, context());
      expect(result.content).not.toContain('OUTSIDE-SECRET');
    }
    for (const input of [{ pattern: '**/*.txt' }, { pattern: '*', path: 'linkdir' }, { pattern: 'linkdir/*.txt' }, { pattern: 'linkdir/secret.txt' }]) {
      const result = await executeTool('Glob', input, context());
      expect(result.content).not.toContain('secret.txt');
      expect(result.content).not.toContain('linked-file.txt');
    }
    // Without access the linked directory's files are found (as before).
    expect((await executeTool('Grep', { pattern: 'OUTSIDE', path: 'linkdir', output_mode: 'content' }, context(null))).content).toContain('OUTSIDE-SECRET');
  });

  it('an approved root outside the working directories is searched', async () => {
    const result = await executeTool('Grep', { pattern: 'OUTSIDE', path: outside, output_mode: 'content' }, context());
    expect(result.content).toContain('OUTSIDE-SECRET');
    expect((await executeTool('Glob', { pattern: '*.txt', path: outside }, context())).content).toContain('secret.txt');
  });
});

describe('process, kernel and device files', () => {
  it('Read and Grep do not read /proc (the worker environment holds its keys), even through a link', async () => {
    const wide = access({ workingDirectories: [workspace, '/proc'] });
    const read = await executeTool('Read', { file_path: '/proc/self/status' }, context(wide));
    expect(read.isError).toBe(true);
    expect(read.content).toContain('/proc');
    await symlink('/proc/self/status', path.join(workspace, 'status'));
    expect((await executeTool('Grep', { pattern: 'Pid', output_mode: 'content' }, context())).content).not.toContain('Pid:');
    expect((await executeTool('Grep', { pattern: 'Pid', path: '/proc/self/status', output_mode: 'content' }, context(wide))).content).not.toContain('Pid:');
    // Without access Grep reads it (as before): the test can fail.
    expect((await executeTool('Grep', { pattern: 'Pid', path: '/proc/self/status', output_mode: 'content' }, context(null))).content).toContain('Pid:');
  });
});

describe("the worker's own credentials", () => {
  it('Read, Grep, Glob and Write refuse the Temporal envconfig profile and a TLS file, whatever was approved (bypassPermissions included)', async () => {
    const profile = path.join(home, '.config', 'temporalio', 'temporal.toml');
    const tls = path.join(outside, 'client.key');
    await mkdir(path.dirname(profile), { recursive: true });
    await writeFile(profile, 'api_key = "CANARY-ENVCONFIG"\n');
    await writeFile(tls, 'CANARY-TLS-KEY\n');
    const previous = process.env.TEMPORAL_TLS_CLIENT_KEY_PATH;
    process.env.TEMPORAL_TLS_CLIENT_KEY_PATH = tls;
    try {
      // As a decision that allowed the call gives it: the home directory and the outside directory approved.
      const wide = access({ workingDirectories: [workspace, home, outside] });
      for (const file of [profile, tls]) {
        const read = await executeTool('Read', { file_path: file }, context(wide));
        expect(read.isError, file).toBe(true);
        expect(read.content).toMatch(/own credentials/);
      }
      await symlink(profile, path.join(workspace, 'profile'));
      expect((await executeTool('Read', { file_path: path.join(workspace, 'profile') }, context(wide))).content).not.toContain('CANARY');
      for (const root of [home, outside, workspace]) {
        expect((await executeTool('Grep', { pattern: 'CANARY', path: root, output_mode: 'content' }, context(wide))).content).not.toContain('CANARY');
      }
      expect((await executeTool('Glob', { pattern: '**/*.toml', path: home }, context(wide))).content).not.toContain('temporal.toml');
      const write = await executeTool('Write', { file_path: profile, content: 'address = "attacker:7233"\n' }, context(wide));
      expect(write.isError).toBe(true);
      expect(await readFile(profile, 'utf8')).toContain('CANARY-ENVCONFIG');
      // Without access (no decision's checks), Grep finds it: the case can fail.
      expect((await executeTool('Grep', { pattern: 'CANARY', path: home, output_mode: 'content' }, context(null))).content).toContain('CANARY');
    } finally {
      if (previous === undefined) delete process.env.TEMPORAL_TLS_CLIENT_KEY_PATH;
      else process.env.TEMPORAL_TLS_CLIENT_KEY_PATH = previous;
    }
  });
});

describe('roots of Grep and Glob', () => {
  it('a root swapped for a link after the facts were gathered is refused', async () => {
    await mkdir(path.join(workspace, 'data'));
    const facts = await gatherPathFacts('Grep', { pattern: 'OUTSIDE', path: 'data' }, workspace, home);
    const allowedRealPaths = facts.map((fact) => fact.path.real);
    await rm(path.join(workspace, 'data'), { recursive: true });
    await symlink(outside, path.join(workspace, 'data'));
    const grep = await executeTool('Grep', { pattern: 'OUTSIDE', path: 'data', output_mode: 'content' }, context(access({ allowedRealPaths })));
    expect(grep.isError).toBe(true);
    expect(grep.content).not.toContain('OUTSIDE-SECRET');
    const glob = await executeTool('Glob', { pattern: '*', path: 'data' }, context(access({ allowedRealPaths })));
    expect(glob.isError).toBe(true);
  });
});

describe('runTool', () => {
  it('passes RunToolInput.access to the tool', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'link.txt'));
    const runner = createToolRunner({ stateDir: path.join(top, 'state'), executeTool });
    const result: RunToolResult = await new MockActivityEnvironment().run(runner.runToolToResult, {
      conversationId: 'c',
      toolUseId: 'toolu_1',
      name: 'Write',
      input: { file_path: 'link.txt', content: 'pwned' },
      cwd: workspace,
      maxResultSizeChars: 100_000,
      access: access(),
    });
    expect(result.isError).toBe(true);
    expect(await secret()).toBe('OUTSIDE-SECRET\n');
  });
});
