/**
 * Memory files on their real path (issue 29, class 7): a workspace's `CLAUDE.md`, rules or
 * `@import` linked to a secret outside is not read and a notice names it; links and imports that
 * stay inside the workspace still are. Real files, real links, in temp directories.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatMemoryFiles, loadMemoryFiles, memoryImports } from '../../activities/memory-files';

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((directory) => rm(directory, { recursive: true, force: true })));
});

const SECRET = '-----BEGIN OPENSSH PRIVATE KEY----- canary-7f3a';

/** A home with `~/.ssh/id_rsa` and a workspace under it (as a person's checkout would be). */
async function setUp(): Promise<{ root: string; home: string; workspace: string; key: string }> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-memory-'));
  made.push(root);
  const home = path.join(root, 'home');
  const workspace = path.join(home, 'src', 'repo');
  const key = path.join(home, '.ssh', 'id_rsa');
  await write(key, SECRET);
  await mkdir(workspace, { recursive: true });
  return { root, home, workspace, key };
}

async function write(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
}

async function link(target: string, at: string): Promise<void> {
  await mkdir(path.dirname(at), { recursive: true });
  await symlink(target, at);
}

const load = (workspace: string, home: string, options: Parameters<typeof loadMemoryFiles>[1] = {}) =>
  loadMemoryFiles(workspace, { home, managedPath: undefined, ...options });

describe('memory files on their real path', () => {
  it('does not read a CLAUDE.md, a rule or CLAUDE.local.md linked to ~/.ssh/id_rsa, and says so without the content', async () => {
    const { home, workspace, key } = await setUp();
    await link(key, path.join(workspace, 'CLAUDE.md'));
    await link(key, path.join(workspace, '.claude', 'rules', 'x.md'));
    await link('../../.ssh/id_rsa', path.join(workspace, 'CLAUDE.local.md'));
    await write(path.join(workspace, '.claude', 'rules', 'ok.md'), 'use tabs');

    const { files, notices } = await load(workspace, home);
    expect(files.map((file) => file.content)).toEqual(['use tabs']);
    expect(formatMemoryFiles(files)).not.toContain('canary');
    expect(notices).toEqual([
      `Memory file not read: ${path.join(workspace, 'CLAUDE.md')} links to a file that is a secret the sandbox hides (${key}).`,
      `Memory file not read: ${path.join(workspace, '.claude', 'rules', 'x.md')} links to a file that is a secret the sandbox hides (${key}).`,
      `Memory file not read: ${path.join(workspace, 'CLAUDE.local.md')} links to a file that is a secret the sandbox hides (${key}).`,
    ]);
    expect(notices.join('\n')).not.toContain('canary');
  });

  it('does not read a workspace file linked anywhere outside the workspace (not only to a secret)', async () => {
    const { root, home, workspace } = await setUp();
    const elsewhere = path.join(root, 'elsewhere', 'notes.md');
    await write(elsewhere, 'outside canary');
    await link(elsewhere, path.join(workspace, '.claude', 'CLAUDE.md'));
    // The .claude directory itself linked out: the rules in it are outside too.
    await write(path.join(root, 'other', '.claude', 'rules', 'r.md'), 'rules canary');
    const second = path.join(home, 'src', 'second');
    await mkdir(second, { recursive: true });
    await link(path.join(root, 'other', '.claude'), path.join(second, '.claude'));

    const first = await load(workspace, home);
    expect(first.files).toEqual([]);
    expect(first.notices).toEqual([
      `Memory file not read: ${path.join(workspace, '.claude', 'CLAUDE.md')} links to a file that is outside the workspace (${elsewhere}).`,
    ]);
    const other = await load(second, home);
    expect(other.files).toEqual([]);
    expect(other.notices).toEqual([
      `Memory file not read: ${path.join(second, '.claude', 'rules', 'r.md')} links to a file that is outside the workspace (${path.join(root, 'other', '.claude', 'rules', 'r.md')}).`,
    ]);
  });

  it('refuses an @import of ~/.ssh/id_rsa (by ~, absolute, relative and through a link), from the workspace and from the user file', async () => {
    const { root, home, workspace, key } = await setUp();
    await link(key, path.join(workspace, 'docs', 'key.md'));
    await write(
      path.join(workspace, 'CLAUDE.md'),
      ['See @~/.ssh/id_rsa for access.', `Also @${key}`, '@../../.ssh/id_rsa', 'and @docs/key.md', 'and @docs/style.md'].join('\n'),
    );
    await write(path.join(workspace, 'docs', 'style.md'), 'two spaces');
    await write(path.join(home, '.claude', 'CLAUDE.md'), 'my prefs @~/.ssh/id_rsa');
    const outside = path.join(root, 'shared.md');
    await write(outside, 'outside canary');
    await write(path.join(workspace, '.claude', 'CLAUDE.md'), `@${outside}`);

    const { files, notices } = await load(workspace, home);
    expect(files.map((file) => [file.path, file.content])).toEqual([
      [path.join(home, '.claude', 'CLAUDE.md'), 'my prefs @~/.ssh/id_rsa'],
      [path.join(workspace, 'CLAUDE.md'), expect.stringContaining('See @~/.ssh/id_rsa')],
      [path.join(workspace, 'docs', 'style.md'), 'two spaces'],
      [path.join(workspace, '.claude', 'CLAUDE.md'), `@${outside}`],
    ]);
    expect(formatMemoryFiles(files)).not.toContain('canary');
    const userFile = path.join(home, '.claude', 'CLAUDE.md');
    const projectFile = path.join(workspace, 'CLAUDE.md');
    expect(notices).toEqual([
      `Memory file not read: ${key} (imported by ${userFile}) is a secret the sandbox hides (${key}).`,
      // The same file by ~, by its absolute path and by ../: one file, named once.
      `Memory file not read: ${path.join(workspace, 'docs', 'key.md')} (imported by ${projectFile}) links to a file that is a secret the sandbox hides (${key}).`,
      `Memory file not read: ${outside} (imported by ${path.join(workspace, '.claude', 'CLAUDE.md')}) is outside the workspace (${outside}).`,
    ]);
  });

  it('still reads links and imports that stay inside the workspace or a working directory, and imports nested up to five hops', async () => {
    const { root, home, workspace } = await setUp();
    await write(path.join(workspace, 'docs', 'agents.md'), 'project rules @./docs/more/one.md');
    await link('docs/agents.md', path.join(workspace, 'CLAUDE.md'));
    await link('../../docs/rule.md', path.join(workspace, '.claude', 'rules', 'linked.md'));
    await write(path.join(workspace, 'docs', 'rule.md'), 'linked rule');
    // A chain of imports one..six: five hops are read, the sixth file is not.
    const names = ['one', 'two', 'three', 'four', 'five', 'six'];
    for (const [index, name] of names.entries()) {
      await write(path.join(workspace, 'docs', 'more', `${name}.md`), `hop ${name}${index + 1 < names.length ? ` @${names[index + 1]}.md` : ''}`);
    }
    const extra = path.join(root, 'extra');
    await write(path.join(extra, 'shared.md'), 'shared across directories');
    await write(path.join(workspace, 'CLAUDE.local.md'), `@${path.join(extra, 'shared.md')}`);

    const { files, notices } = await load(workspace, home, { workingDirectories: [extra] });
    expect(notices).toEqual([]);
    expect(files.map((file) => file.content)).toEqual([
      'project rules @./docs/more/one.md',
      'hop one @two.md',
      'hop two @three.md',
      'hop three @four.md',
      'hop four @five.md',
      'hop five @six.md',
      'linked rule',
      `@${path.join(extra, 'shared.md')}`,
      'shared across directories',
    ]);
    // Without the working directory, the same import is outside.
    const without = await load(workspace, home);
    expect(without.notices).toEqual([
      expect.stringContaining(`${path.join(extra, 'shared.md')} (imported by ${path.join(workspace, 'CLAUDE.local.md')}) is outside the workspace`),
    ]);
  });

  it("reads the parent directories' files as Claude Code does, but never a secret, and not what a Read deny rule covers", async () => {
    const { root, home, workspace, key } = await setUp();
    const shared = path.join(root, 'team', 'CLAUDE.md');
    await write(shared, 'team conventions');
    await link(shared, path.join(home, 'src', 'CLAUDE.md')); // a parent's file linked out: as Claude Code
    await link(key, path.join(home, 'CLAUDE.md')); // …but not to a secret
    await write(path.join(workspace, 'CLAUDE.md'), 'project');
    await write(path.join(workspace, 'private.md'), 'denied canary');
    await write(path.join(workspace, 'CLAUDE.local.md'), '@private.md');

    const { files, notices } = await load(workspace, home, { isReadDenied: (file) => file.endsWith('private.md') });
    expect(files.map((file) => file.content)).toEqual(['team conventions', 'project', '@private.md']);
    expect(notices).toEqual([
      `Memory file not read: ${path.join(home, 'CLAUDE.md')} links to a file that is a secret the sandbox hides (${key}).`,
      `Memory file not read: ${path.join(workspace, 'private.md')} (imported by ${path.join(workspace, 'CLAUDE.local.md')}) is under a Read deny rule (${path.join(workspace, 'private.md')}).`,
    ]);
  });

  it("knows the workspace's own files by the directory they belong to, even in a workspace named .claude", async () => {
    const { root, home } = await setUp();
    const workspace = path.join(home, 'src', '.claude');
    const elsewhere = path.join(root, 'elsewhere.md');
    await write(elsewhere, 'outside canary');
    await link(elsewhere, path.join(workspace, 'CLAUDE.md'));
    const { files, notices } = await load(workspace, home);
    expect(files).toEqual([]);
    expect(notices).toEqual([`Memory file not read: ${path.join(workspace, 'CLAUDE.md')} links to a file that is outside the workspace (${elsewhere}).`]);
  });

  it('skips what is not a regular file (a FIFO would block the activity)', async () => {
    const { home, workspace } = await setUp();
    execFileSync('mkfifo', [path.join(workspace, 'CLAUDE.md')]);
    await link('/dev/zero', path.join(workspace, 'CLAUDE.local.md'));
    expect(await load(workspace, home)).toEqual({ files: [], notices: [] });
  });
});

describe('@import syntax (Claude Code memory docs)', () => {
  it('finds @paths at the start or after whitespace (punctuation after one is part of it), not in code spans, fenced blocks or e-mail addresses', () => {
    const text = [
      '# Rules',
      'See @README.md and @./docs/a.md#section, @~/notes.md @/abs/b.md and @my\\ file.md.',
      'mail me: me@example.com; `@in-span.md`; @@twice.md',
      '```',
      '@in-fence.md',
      '```',
      '~~~sh',
      '@in-tilde-fence.md',
      '~~~',
      '@after.md',
    ].join('\n');
    expect(memoryImports(text, '/w', '/h')).toEqual(['/w/README.md', '/w/docs/a.md', '/h/notes.md', '/abs/b.md', '/w/my file.md.', '/w/after.md']);
  });
});

describe('the session context passes the refusal on', () => {
  it('names a memory file it did not read among the warnings, applies Read deny rules to memory files, and keeps the secret out of the prompt', async () => {
    const { loadSessionContext } = await import('../../activities/session-context');
    const { home, workspace, key } = await setUp();
    await link(key, path.join(workspace, 'CLAUDE.md'));
    await write(path.join(workspace, 'private', 'notes.md'), 'private canary-2b');
    await write(path.join(workspace, 'CLAUDE.local.md'), 'see @private/notes.md');
    await write(path.join(home, '.claude', 'settings.json'), JSON.stringify({ permissions: { deny: ['Read(./private/**)'] } }));

    const context = await loadSessionContext({ cwd: workspace }, home);
    expect(context.claudeMd ?? '').not.toContain('canary');
    expect(context.warnings).toEqual(
      expect.arrayContaining([
        `Memory file not read: ${path.join(workspace, 'CLAUDE.md')} links to a file that is a secret the sandbox hides (${key}).`,
        expect.stringContaining(`${path.join(workspace, 'private', 'notes.md')}`),
      ]),
    );
  });

  it('a bare Read deny rule denies every memory file of the workspace, as it denies every file to the file tools', async () => {
    const { loadSessionContext } = await import('../../activities/session-context');
    const { home, workspace } = await setUp();
    await write(path.join(workspace, 'CLAUDE.md'), 'workspace canary-3c');
    await write(path.join(home, '.claude', 'settings.json'), JSON.stringify({ permissions: { deny: ['Read'] } }));

    const context = await loadSessionContext({ cwd: workspace }, home);
    expect(context.claudeMd ?? '').not.toContain('canary');
    expect(context.warnings).toEqual(
      expect.arrayContaining([expect.stringContaining(`Memory file not read: ${path.join(workspace, 'CLAUDE.md')} is under a Read deny rule`)]),
    );
  });
});

describe("the worker's own credentials", () => {
  it("an @import of the Temporal envconfig profile or a TLS key the worker was given is not read, even from the user's own CLAUDE.md", async () => {
    const { home, workspace, root } = await setUp();
    const tlsKey = path.join(root, 'tls', 'client.key');
    await write(tlsKey, 'tls canary-4d');
    await write(path.join(home, '.config', 'temporalio', 'temporal.toml'), 'api_key = "canary-5e"');
    await write(path.join(home, '.claude', 'CLAUDE.md'), `@~/.config/temporalio/temporal.toml\n\n@${tlsKey}`);
    const saved = process.env.TEMPORAL_TLS_CLIENT_KEY_PATH;
    process.env.TEMPORAL_TLS_CLIENT_KEY_PATH = tlsKey;
    try {
      const { files, notices } = await load(workspace, home);
      expect(formatMemoryFiles(files)).not.toContain('canary');
      expect(notices).toEqual([
        expect.stringMatching(/temporal\.toml \(imported by .*\) is a secret the sandbox hides/),
        expect.stringMatching(/client\.key \(imported by .*\) is a secret the sandbox hides/),
      ]);
    } finally {
      if (saved === undefined) delete process.env.TEMPORAL_TLS_CLIENT_KEY_PATH;
      else process.env.TEMPORAL_TLS_CLIENT_KEY_PATH = saved;
    }
  });
});
