/**
 * Issue 31: the workspace checkpoint store (activities/checkpoints/store.ts) with the real system
 * git on real files: a checkpoint taken, the workspace changed the ways tools and Bash change it
 * (Write, sed -i, >>, rm, chmod, new and ignored files, symlinks, git commit / checkout -b / gc),
 * and a restore that must bring back every byte, mode, link and ref exactly.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { appendFile, chmod, mkdir, mkdtemp, readFile, rm, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CheckpointStore, checkpointSettingsFromEnvironment, createCheckpointStore } from '../../activities/checkpoints/store';

let root: string;
let workspace: string;
let stateDir: string;
let home: string;

/** The test's own git: a clean HOME of its own, nothing from the machine's config. */
function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('GIT_')) env[key] = value;
  return { ...env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), GIT_CONFIG_NOSYSTEM: '1', ...extra };
}

function git(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): string {
  return execFileSync('git', args, { cwd: options.cwd ?? workspace, env: gitEnv(options.env), encoding: 'utf8' });
}

/** Every file under `dir` but `.git`: type, exec bit and content or link target, by (byte-exact) name. */
function snapshot(dir: string, skip: (relative: string) => boolean = () => false): Record<string, string> {
  const result: Record<string, string> = {};
  const walk = (relative: Buffer): void => {
    const absolute = Buffer.concat([Buffer.from(`${dir}/`), relative]);
    for (const name of readdirSync(absolute, { encoding: 'buffer' })) {
      const child = relative.length ? Buffer.concat([relative, Buffer.from('/'), name]) : name;
      const key = JSON.stringify(child.toString('latin1'));
      if (child.toString('latin1') === '.git' || skip(child.toString('utf8'))) continue;
      const full = Buffer.concat([Buffer.from(`${dir}/`), child]);
      const info = lstatSync(full);
      if (info.isDirectory()) walk(child);
      else if (info.isSymbolicLink()) result[key] = `link -> ${readlinkSync(full, { encoding: 'buffer' }).toString('latin1')}`;
      else result[key] = `file ${info.mode & 0o111 ? 'x' : '-'} ${readFileSync(full).toString('base64')}`;
    }
  };
  walk(Buffer.alloc(0));
  return result;
}

function gitView(): Record<string, string> {
  return {
    head: git(['rev-parse', 'HEAD']),
    symbolic: git(['symbolic-ref', '-q', 'HEAD']),
    branches: git(['branch', '--list', '-v', '--no-abbrev']),
    status: git(['status', '--porcelain=v1', '--untracked-files=all']),
    staged: git(['diff', '--cached', '--name-status']),
  };
}

function store(options: { maxFileBytes?: number; excludes?: string[] } = {}): CheckpointStore {
  return createCheckpointStore({ stateDir, cwd: workspace, ...options });
}

function storeGit(checkpoints: CheckpointStore, args: string[]): string {
  return execFileSync('git', args, { env: gitEnv({ GIT_DIR: checkpoints.dir, GIT_CONFIG_GLOBAL: '/dev/null' }), encoding: 'utf8' });
}

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'durable-agent-checkpoints-'));
  workspace = path.join(root, 'workspace');
  stateDir = path.join(root, 'state');
  home = path.join(root, 'home');
  await mkdir(workspace);
  await mkdir(home);
  await writeFile(path.join(home, '.gitconfig'), '[user]\n\tname = Test\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n');
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function seedRepository(): Promise<void> {
  git(['init', '-q']);
  await writeFile(path.join(workspace, 'README.md'), '# project\n');
  await mkdir(path.join(workspace, 'src'));
  await writeFile(path.join(workspace, 'src', 'main.ts'), 'export const answer = 42;\nexport const name = "old";\n');
  await writeFile(path.join(workspace, 'run.sh'), '#!/bin/sh\necho run\n');
  await chmod(path.join(workspace, 'run.sh'), 0o755);
  await writeFile(path.join(workspace, '.gitignore'), 'ignored.log\nbuild/\n');
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'initial']);
}

describe('take and restore', () => {
  it('brings back edits, sed -i, >>, rm, new, ignored and renamed files, the exec bit, symlinks and odd names exactly', async () => {
    await seedRepository();
    await writeFile(path.join(workspace, 'ignored.log'), 'log line 1\n');
    await mkdir(path.join(workspace, 'build'));
    await writeFile(path.join(workspace, 'build', 'out.js'), 'built();\n');
    await writeFile(path.join(workspace, 'notes with spaces.txt'), 'spaces\n');
    await writeFile(path.join(workspace, 'line\nbreak'), 'newline in the name\n');
    await writeFile(path.join(workspace, 'ünïcødé-文件.txt'), 'unicode\n');
    await writeFile(Buffer.from([...Buffer.from(`${workspace}/latin1-`), 0xe9, 0x2e, 0x74]), 'not utf-8\n');
    await symlink('src/main.ts', path.join(workspace, 'link-to-main'));
    await symlink('nowhere', path.join(workspace, 'dangling'));
    await writeFile(path.join(workspace, 'big.bin'), Buffer.alloc(5000, 1));
    const checkpoints = store({ maxFileBytes: 4096 });
    const before = snapshot(workspace);
    const statusBefore = git(['status', '--porcelain']);

    const taken = await checkpoints.take({ conversationId: 'conv-1', reason: 'before-tool', toolUseId: 'toolu_1' });
    expect(taken.id).toMatch(/^[0-9a-f]{40}$/);
    expect(taken.seq).toBe(1);
    // README.md .gitignore run.sh src/main.ts ignored.log build/out.js, three odd names, the latin-1 one, two links (not big.bin)
    expect(taken.files).toBe(12);
    expect(taken.skipped).toEqual([{ path: 'big.bin', reason: 'oversized' }]);

    // What the tools and Bash do.
    await writeFile(path.join(workspace, 'README.md'), '# project, rewritten by Write\n');
    execFileSync('sed', ['-i', 's/old/new/', path.join(workspace, 'src', 'main.ts')]);
    execFileSync('sh', ['-c', 'echo appended >> ignored.log'], { cwd: workspace });
    await unlink(path.join(workspace, 'notes with spaces.txt'));
    await rm(path.join(workspace, 'build'), { recursive: true });
    await writeFile(path.join(workspace, 'new-untracked.txt'), 'new\n');
    await mkdir(path.join(workspace, 'fresh', 'deep'), { recursive: true });
    await writeFile(path.join(workspace, 'fresh', 'deep', 'file.txt'), 'deep\n');
    await chmod(path.join(workspace, 'run.sh'), 0o644);
    await unlink(path.join(workspace, 'link-to-main'));
    await symlink('README.md', path.join(workspace, 'link-to-main'));
    await unlink(path.join(workspace, 'ünïcødé-文件.txt'));
    await writeFile(path.join(workspace, 'line\nbreak'), 'changed\n');
    await appendFile(path.join(workspace, 'big.bin'), 'more');
    await writeFile(path.join(workspace, 'huge-new.bin'), Buffer.alloc(9000, 2));
    // src becomes a file, a file becomes a directory
    await rm(path.join(workspace, 'src'), { recursive: true });
    await writeFile(path.join(workspace, 'src'), 'now a file\n');
    await unlink(path.join(workspace, '.gitignore'));
    await mkdir(path.join(workspace, '.gitignore'));
    await writeFile(path.join(workspace, '.gitignore', 'inner'), 'x\n');
    expect(snapshot(workspace)).not.toEqual(before);

    const result = await checkpoints.restore(taken.id);
    const after = snapshot(workspace);
    const bigNow = after[JSON.stringify('big.bin')];
    const hugeNow = after[JSON.stringify('huge-new.bin')];
    // The oversized files are left alone: big.bin keeps its later bytes, huge-new.bin stays.
    expect(bigNow).toBe(`file - ${Buffer.concat([Buffer.alloc(5000, 1), Buffer.from('more')]).toString('base64')}`);
    expect(hugeNow).toBe(`file - ${Buffer.alloc(9000, 2).toString('base64')}`);
    delete after[JSON.stringify('huge-new.bin')];
    expect({ ...after, [JSON.stringify('big.bin')]: before[JSON.stringify('big.bin')] }).toEqual(before);
    expect(result.leftAlone).toEqual(['big.bin', 'huge-new.bin']);
    // Written: README, main.ts, ignored.log, notes, build/out.js, run.sh, link, unicode, line\nbreak, .gitignore (file again)
    expect(result.restored).toBe(10);
    // Removed: new-untracked, fresh/deep/file.txt, src (file), .gitignore/inner
    expect(result.removed).toBe(4);
    expect(result.gitState).toBe(true);
    expect(existsSync(path.join(workspace, 'fresh'))).toBe(false);
    await unlink(path.join(workspace, 'huge-new.bin')); // left alone, as reported
    expect(git(['status', '--porcelain'])).toBe(statusBefore);
  });

  it('an unchanged workspace gives the same tree under a new id; a change gives another tree', async () => {
    await seedRepository();
    const checkpoints = store();
    const first = await checkpoints.take({ conversationId: 'conv-1', reason: 'turn-end', prompt: 1 });
    const second = await checkpoints.take({ conversationId: 'conv-1', reason: 'turn-end', prompt: 2 });
    expect(second.tree).toBe(first.tree);
    expect(second.id).not.toBe(first.id);
    expect(second.bytesAdded).toBe(0);
    // A fresh store object (as a new activity makes) finds the same tree too.
    const third = await store().take({ conversationId: 'conv-1', reason: 'turn-end', prompt: 3 });
    expect(third.tree).toBe(first.tree);
    expect(storeGit(checkpoints, ['rev-parse', `${third.id}^{tree}`])).toBe(storeGit(checkpoints, ['rev-parse', `${first.id}^{tree}`]));
    await writeFile(path.join(workspace, 'README.md'), '# changed\n');
    const fourth = await store().take({ conversationId: 'conv-1', reason: 'turn-end', prompt: 4 });
    expect(fourth.tree).not.toBe(first.tree);
    expect(fourth.bytesAdded).toBe('# changed\n'.length);
    expect([first.seq, second.seq, third.seq, fourth.seq]).toEqual([1, 2, 3, 4]);
  });

  it('a file that grows past the size budget leaves the next checkpoint; restoring the earlier one writes it back', async () => {
    await writeFile(path.join(workspace, 'data.bin'), 'small\n');
    await writeFile(path.join(workspace, 'keep.txt'), 'keep\n');
    const checkpoints = store({ maxFileBytes: 100 });
    const small = await checkpoints.take({ conversationId: 'c', reason: 'before-tool' });
    await writeFile(path.join(workspace, 'data.bin'), Buffer.alloc(101, 7));
    const large = await checkpoints.take({ conversationId: 'c', reason: 'before-tool' });
    expect(large.skipped).toEqual([{ path: 'data.bin', reason: 'oversized' }]);
    expect(large.files).toBe(1);
    expect(storeGit(checkpoints, ['ls-tree', '-r', '--name-only', `${large.id}:files`])).toBe('keep.txt\n');
    expect(await checkpoints.restore(small.id)).toMatchObject({ restored: 1, removed: 0, leftAlone: [] });
    expect(await readFile(path.join(workspace, 'data.bin'), 'utf8')).toBe('small\n');
  });

  it('is byte-exact whatever the workspace .gitattributes say (no eol or filter conversion)', async () => {
    git(['init', '-q']);
    await writeFile(path.join(workspace, '.gitattributes'), '* text eol=crlf\n*.txt ident\n');
    await writeFile(path.join(workspace, 'lf.txt'), 'one\ntwo $Id$\n');
    await writeFile(path.join(workspace, 'crlf.txt'), 'one\r\ntwo\r\n');
    const checkpoints = store();
    const before = snapshot(workspace);
    const taken = await checkpoints.take({ conversationId: 'c', reason: 'before-tool' });
    await writeFile(path.join(workspace, 'lf.txt'), 'x');
    await writeFile(path.join(workspace, 'crlf.txt'), 'y');
    await checkpoints.restore(taken.id);
    expect(await readFile(path.join(workspace, 'lf.txt'), 'utf8')).toBe('one\ntwo $Id$\n');
    expect(await readFile(path.join(workspace, 'crlf.txt'), 'utf8')).toBe('one\r\ntwo\r\n');
    expect(snapshot(workspace)).toEqual(before);
  });

  it('never captures nor removes excluded paths', async () => {
    await seedRepository();
    await mkdir(path.join(workspace, 'node_modules', 'pkg'), { recursive: true });
    await writeFile(path.join(workspace, 'node_modules', 'pkg', 'index.js'), 'module.exports = 1;\n');
    const checkpoints = store({ excludes: ['node_modules/', '*.tmp'] });
    const taken = await checkpoints.take({ conversationId: 'c', reason: 'before-tool' });
    expect(
      storeGit(checkpoints, ['ls-tree', '-r', '--name-only', `${taken.id}:files`])
        .split('\n')
        .filter(Boolean),
    ).toEqual(['.gitignore', 'README.md', 'run.sh', 'src/main.ts']);
    await writeFile(path.join(workspace, 'scratch.tmp'), 'tmp\n');
    await writeFile(path.join(workspace, 'node_modules', 'pkg', 'index.js'), 'module.exports = 2;\n');
    const result = await checkpoints.restore(taken.id);
    expect(result.removed).toBe(0);
    expect(result.leftAlone).toEqual(['node_modules/', 'scratch.tmp']);
    expect(await readFile(path.join(workspace, 'scratch.tmp'), 'utf8')).toBe('tmp\n');
    expect(await readFile(path.join(workspace, 'node_modules', 'pkg', 'index.js'), 'utf8')).toBe('module.exports = 2;\n');
  });

  it('works in a directory that is not a git repository (no git state)', async () => {
    await writeFile(path.join(workspace, 'a.txt'), 'a\n');
    const checkpoints = store();
    const taken = await checkpoints.take({ conversationId: 'c', reason: 'before-tool' });
    await writeFile(path.join(workspace, 'a.txt'), 'b\n');
    await writeFile(path.join(workspace, 'b.txt'), 'b\n');
    expect(await checkpoints.restore(taken.id)).toEqual({ restored: 1, removed: 1, gitState: false, leftAlone: [], warnings: [] });
    expect(snapshot(workspace)).toEqual({ '"a.txt"': `file - ${Buffer.from('a\n').toString('base64')}` });
  });
});

describe("the workspace's own git state", () => {
  it('undoes a git commit and a git checkout -b made by Bash: HEAD, branches, index and status as they were', async () => {
    await seedRepository();
    await writeFile(path.join(workspace, 'README.md'), '# staged change\n');
    git(['add', 'README.md']);
    await writeFile(path.join(workspace, 'src', 'main.ts'), 'unstaged change\n');
    const checkpoints = store();
    const before = gitView();
    const files = snapshot(workspace);
    const taken = await checkpoints.take({ conversationId: 'c', reason: 'before-tool' });

    git(['checkout', '-q', '-b', 'feature']);
    git(['commit', '-q', '-a', '-m', 'made by Bash']);
    await writeFile(path.join(workspace, 'feature.txt'), 'feature\n');
    git(['add', 'feature.txt']);
    git(['commit', '-q', '-m', 'another']);
    git(['tag', '-a', 'v1', '-m', 'tag by Bash']);
    expect(gitView()).not.toEqual(before);

    const result = await checkpoints.restore(taken.id);
    expect(result.gitState).toBe(true);
    expect(gitView()).toEqual(before);
    expect(git(['tag', '--list'])).toBe('');
    expect(snapshot(workspace)).toEqual(files);
  });

  it("puts back commits and staged blobs the workspace's gc deleted", async () => {
    await seedRepository();
    git(['checkout', '-q', '-b', 'feature']);
    await writeFile(path.join(workspace, 'feature.txt'), 'feature work\n');
    git(['add', 'feature.txt']);
    git(['commit', '-q', '-m', 'feature work']);
    const featureCommit = git(['rev-parse', 'HEAD']).trim();
    git(['checkout', '-q', 'main']);
    await writeFile(path.join(workspace, 'staged.txt'), 'staged only\n');
    git(['add', 'staged.txt']);
    const stagedBlob = git(['rev-parse', ':staged.txt']).trim();
    const before = gitView();
    const checkpoints = store();
    const taken = await checkpoints.take({ conversationId: 'c', reason: 'before-tool' });

    git(['branch', '-q', '-D', 'feature']);
    git(['reset', '-q']);
    await unlink(path.join(workspace, 'staged.txt'));
    git(['reflog', 'expire', '--expire=now', '--all']);
    git(['gc', '-q', '--prune=now']);
    expect(() => git(['cat-file', '-e', featureCommit])).toThrow();
    expect(() => git(['cat-file', '-e', stagedBlob])).toThrow();

    await checkpoints.restore(taken.id);
    expect(gitView()).toEqual(before);
    expect(git(['log', '--format=%s', 'feature'])).toBe('feature work\ninitial\n');
    expect(git(['cat-file', '-p', stagedBlob])).toBe('staged only\n');
    expect(git(['fsck', '--no-dangling'])).toBe('');
  });

  it("runs nothing from the user's global git config nor from the workspace's own config and attributes", async () => {
    await seedRepository();
    const markers = path.join(root, 'markers');
    await mkdir(markers);
    const script = async (name: string, body: string): Promise<string> => {
      const file = path.join(root, name);
      await writeFile(file, `#!/bin/sh\n${body}\n`);
      await chmod(file, 0o755);
      return file;
    };
    const hooks = path.join(root, 'evil-hooks');
    await mkdir(hooks);
    for (const hook of ['reference-transaction', 'post-checkout', 'pre-auto-gc', 'post-index-change']) {
      await script(`evil-hooks/${hook}`, `touch ${markers}/global-hook-${hook}; exit 0`);
    }
    const fsmonitor = await script('fsmonitor.sh', `touch ${markers}/global-fsmonitor; exit 1`);
    const evilHome = path.join(root, 'evil-home');
    await mkdir(evilHome);
    await writeFile(
      path.join(evilHome, '.gitconfig'),
      `[core]\n\tfsmonitor = ${fsmonitor}\n\thooksPath = ${hooks}\n[user]\n\tname = E\n\temail = e@e.invalid\n`,
    );
    // The workspace's own config and attributes are workspace content: Bash can write them.
    const filter = await script('filter.sh', `touch ${markers}/local-filter; cat`);
    git(['config', 'filter.evil.clean', filter]);
    git(['config', 'filter.evil.smudge', filter]);
    await writeFile(path.join(workspace, '.gitattributes'), '* filter=evil\n');

    // Controls: each of them does run code in a plain git.
    git(['status', '--porcelain'], { env: { HOME: evilHome } });
    git(['update-ref', 'refs/heads/control', 'HEAD'], { env: { HOME: evilHome } });
    git(['add', '.gitattributes']);
    expect(readdirSync(markers).sort()).toEqual(['global-fsmonitor', 'global-hook-post-index-change', 'global-hook-reference-transaction', 'local-filter']);
    await rm(markers, { recursive: true });
    await mkdir(markers);

    const saved = { HOME: process.env.HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
    process.env.HOME = evilHome;
    delete process.env.XDG_CONFIG_HOME;
    try {
      const checkpoints = store();
      const taken = await checkpoints.take({ conversationId: 'c', reason: 'before-tool' });
      await writeFile(path.join(workspace, 'README.md'), 'changed\n');
      git(['commit', '-q', '-a', '-m', 'x', '--no-verify'], { env: { HOME: home } });
      await checkpoints.take({ conversationId: 'c', reason: 'turn-end' });
      await checkpoints.diff(taken.id);
      await checkpoints.restore(taken.id);
      await checkpoints.materialize(taken.id, path.join(root, 'fork'));
      await checkpoints.prune({ keepPerConversation: 1 });
      await rm(path.join(markers, 'local-filter'), { force: true }); // the test's own `git commit` above ran the filter
      expect(readdirSync(markers)).toEqual([]);
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });
});

describe('repositories inside and around the workspace', () => {
  it('skips a nested repository and leaves it alone on restore', async () => {
    await seedRepository();
    const nested = path.join(workspace, 'vendor', 'lib');
    await mkdir(nested, { recursive: true });
    git(['init', '-q'], { cwd: nested });
    await writeFile(path.join(nested, 'lib.c'), 'int lib;\n');
    const checkpoints = store();
    const taken = await checkpoints.take({ conversationId: 'c', reason: 'before-tool' });
    expect(taken.skipped).toEqual([{ path: 'vendor/lib/', reason: 'nested-repository' }]);
    await writeFile(path.join(nested, 'lib.c'), 'int changed;\n');
    const result = await checkpoints.restore(taken.id);
    expect(result.leftAlone).toEqual(['vendor/lib/']);
    expect(await readFile(path.join(nested, 'lib.c'), 'utf8')).toBe('int changed;\n');
  });

  it('handles a shallow clone: its history stops where the clone does, in the store too', async () => {
    const origin = path.join(root, 'origin');
    await mkdir(origin);
    for (const version of [1, 2, 3]) {
      await writeFile(path.join(origin, 'file.txt'), `version ${version}\n`);
      git(['init', '-q'], { cwd: origin });
      git(['add', '-A'], { cwd: origin });
      git(['commit', '-q', '-m', `v${version}`], { cwd: origin });
    }
    await rm(workspace, { recursive: true });
    git(['clone', '-q', '--depth', '1', `file://${origin}`, workspace], { cwd: root });
    const checkpoints = store();
    const before = gitView();
    const taken = await checkpoints.take({ conversationId: 'c', reason: 'before-tool' });
    expect(taken.warnings).toEqual([]);
    await writeFile(path.join(workspace, 'file.txt'), 'local\n');
    git(['commit', '-q', '-a', '-m', 'local']);
    const second = await checkpoints.take({ conversationId: 'c', reason: 'before-tool' });
    expect(second.warnings).toEqual([]);
    await checkpoints.restore(taken.id);
    expect(gitView()).toEqual(before);
    expect(await checkpoints.prune({ keepPerConversation: 1 })).toEqual({ deleted: 1, kept: 1 });
    await checkpoints.restore(second.id);
    expect(git(['log', '--format=%s'])).toBe('local\nv3\n');
  });
});

describe('diff, list, materialize, prune', () => {
  it('diff lists the paths changed between two checkpoints and since one', async () => {
    await seedRepository();
    const checkpoints = store();
    const first = await checkpoints.take({ conversationId: 'c', reason: 'before-tool' });
    await writeFile(path.join(workspace, 'README.md'), 'edited\n');
    await writeFile(path.join(workspace, 'added file.txt'), 'added\n');
    await unlink(path.join(workspace, 'run.sh'));
    const second = await checkpoints.take({ conversationId: 'c', reason: 'turn-end' });
    await chmod(path.join(workspace, 'src', 'main.ts'), 0o755);
    expect(await checkpoints.diff(first.id, second.id)).toEqual([
      { path: 'README.md', status: 'modified' },
      { path: 'added file.txt', status: 'added' },
      { path: 'run.sh', status: 'deleted' },
    ]);
    expect(await checkpoints.diff(first.id)).toEqual([
      { path: 'README.md', status: 'modified' },
      { path: 'added file.txt', status: 'added' },
      { path: 'run.sh', status: 'deleted' },
      { path: 'src/main.ts', status: 'modified' },
    ]);
    expect(await checkpoints.diff(second.id, second.id)).toEqual([]);
    await expect(checkpoints.diff('not-an-id')).rejects.toThrow(/not a checkpoint id/);
    await expect(checkpoints.diff('0'.repeat(40))).rejects.toThrow(/unknown checkpoint/);
  });

  it('list gives a conversation its checkpoints in order, with labels and times', async () => {
    await writeFile(path.join(workspace, 'a'), 'a');
    const checkpoints = store();
    const started = Date.now();
    const a1 = await checkpoints.take({ conversationId: 'conv/a b', reason: 'before-tool', toolUseId: 'toolu_9', prompt: 1 });
    await checkpoints.take({ conversationId: 'other', reason: 'turn-end' });
    const a2 = await checkpoints.take({ conversationId: 'conv/a b', reason: 'turn-end', prompt: 1 });
    const listed = await checkpoints.list('conv/a b');
    expect(listed.map(({ id, seq, label }) => ({ id, seq, label: { ...label, at: undefined } }))).toEqual([
      { id: a1.id, seq: 1, label: { conversationId: 'conv/a b', reason: 'before-tool', toolUseId: 'toolu_9', prompt: 1, at: undefined } },
      { id: a2.id, seq: 2, label: { conversationId: 'conv/a b', reason: 'turn-end', prompt: 1, at: undefined } },
    ]);
    for (const entry of listed) {
      expect(Date.parse(entry.time)).toBeGreaterThanOrEqual(started - 1);
      expect(entry.time).toBe(entry.label.at);
    }
    expect(await checkpoints.list('nobody')).toEqual([]);
  });

  it('materialize writes a checkpoint into a new directory without git', async () => {
    await seedRepository();
    await symlink('README.md', path.join(workspace, 'readme-link'));
    await writeFile(path.join(workspace, 'ignored.log'), 'ignored\n');
    const checkpoints = store();
    const expected = snapshot(workspace);
    const taken = await checkpoints.take({ conversationId: 'c', reason: 'before-tool' });
    await writeFile(path.join(workspace, 'README.md'), 'later\n');
    const target = path.join(root, 'fork', 'copy');
    expect(await checkpoints.materialize(taken.id, target)).toEqual({ files: 6, git: false });
    expect(snapshot(target)).toEqual(expected);
    expect(existsSync(path.join(target, '.git'))).toBe(false);
    await expect(checkpoints.materialize(taken.id, target)).rejects.toThrow(/not empty/);
  });

  it("materialize with git: a repository of its own with the checkpoint's HEAD, branches and index, whatever the workspace did since", async () => {
    await seedRepository();
    git(['checkout', '-q', '-b', 'feature']);
    await writeFile(path.join(workspace, 'staged.txt'), 'staged\n');
    git(['add', 'staged.txt']);
    const head = git(['rev-parse', 'HEAD']).trim();
    const checkpoints = store();
    const taken = await checkpoints.take({ conversationId: 'c', reason: 'fork' });
    // Afterwards the workspace moves on and its gc drops what the checkpoint named.
    git(['commit', '-qm', 'later']);
    git(['checkout', '-q', '-']);
    git(['branch', '-D', 'feature']);
    git(['reflog', 'expire', '--expire=now', '--all']);
    git(['gc', '-q', '--prune=now']);
    const target = path.join(root, 'fork', 'repo');
    expect(await checkpoints.materialize(taken.id, target, { withGit: true })).toMatchObject({ git: true });
    expect(git(['rev-parse', 'HEAD'], { cwd: target }).trim()).toBe(head);
    expect(git(['symbolic-ref', '--short', 'HEAD'], { cwd: target }).trim()).toBe('feature');
    expect(git(['status', '--porcelain'], { cwd: target })).toBe('A  staged.txt\n');
    expect(git(['fsck', '--no-dangling'], { cwd: target })).toBe('');
    // A repository of its own: nothing of the workspace's is shared or borrowed.
    expect(existsSync(path.join(target, '.git', 'objects', 'info', 'alternates'))).toBe(false);
    expect(existsSync(path.join(target, '.git', 'hooks'))).toBe(false);
  });

  it('prune keeps the newest N per conversation and none older than the age limit, and frees their objects', async () => {
    await seedRepository();
    const checkpoints = store();
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      await writeFile(path.join(workspace, 'counter.txt'), `version ${index}\n`);
      ids.push((await checkpoints.take({ conversationId: 'a', reason: 'turn-end', prompt: index })).id);
    }
    const b1 = await checkpoints.take({ conversationId: 'b', reason: 'turn-end' });
    const blobOf = (id: string): string => storeGit(checkpoints, ['rev-parse', `${id}:files/counter.txt`]).trim();
    const firstBlob = blobOf(ids[0]);

    expect(await checkpoints.prune({ keepPerConversation: 3 })).toEqual({ deleted: 2, kept: 4 });
    expect((await checkpoints.list('a')).map((entry) => entry.id)).toEqual(ids.slice(2));
    expect((await checkpoints.list('b')).map((entry) => entry.id)).toEqual([b1.id]);
    expect(() => storeGit(checkpoints, ['cat-file', '-e', ids[0]])).toThrow();
    expect(() => storeGit(checkpoints, ['cat-file', '-e', firstBlob])).toThrow();
    expect(storeGit(checkpoints, ['for-each-ref', '--format=%(refname)', 'refs/keep/']).trim().split('\n')).toEqual([
      `refs/keep/${git(['rev-parse', 'HEAD']).trim()}`,
    ]);
    await expect(checkpoints.restore(ids[0])).rejects.toThrow(/unknown checkpoint/);

    // Thirty-one days on, nothing is young enough; the store still works after.
    expect(await checkpoints.prune({ now: Date.now() + 31 * 86_400_000 })).toEqual({ deleted: 4, kept: 0 });
    expect(await checkpoints.list('a')).toEqual([]);
    expect(storeGit(checkpoints, ['for-each-ref'])).toBe('');
    const again = await checkpoints.take({ conversationId: 'a', reason: 'turn-end' });
    expect(again.seq).toBe(1);
    await writeFile(path.join(workspace, 'counter.txt'), 'after prune\n');
    await checkpoints.restore(again.id);
    expect(await readFile(path.join(workspace, 'counter.txt'), 'utf8')).toBe('version 4\n');
    expect(storeGit(checkpoints, ['fsck', '--no-dangling', '--no-progress'])).toBe('');
  });

  it("prune counts a conversation's checkpoints before tools apart from those before prompts, and a grace period keeps young objects", async () => {
    await seedRepository();
    const checkpoints = store();
    const prompts: string[] = [];
    for (let index = 0; index < 2; index++) {
      await writeFile(path.join(workspace, 'counter.txt'), `prompt ${index}\n`);
      prompts.push((await checkpoints.take({ conversationId: 'a', reason: 'prompt', prompt: index + 1 })).id);
      for (let call = 0; call < 3; call++) {
        await writeFile(path.join(workspace, 'counter.txt'), `prompt ${index} call ${call}\n`);
        await checkpoints.take({ conversationId: 'a', reason: 'before-tool', toolUseId: `t${index}${call}` });
      }
    }
    const lastTool = (await checkpoints.list('a')).at(-1)!.id;
    const doomedBlob = storeGit(checkpoints, ['rev-parse', `${(await checkpoints.list('a'))[1].id}:files/counter.txt`]).trim();
    // Six tool checkpoints and two prompt checkpoints: keeping 2 keeps both prompts and the last two tools.
    expect(await checkpoints.prune({ keepPerConversation: 2, graceSeconds: 3600 })).toEqual({ deleted: 4, kept: 4 });
    const left = (await checkpoints.list('a')).map((entry) => entry.label.reason);
    expect(left).toEqual(['prompt', 'prompt', 'before-tool', 'before-tool']);
    expect((await checkpoints.list('a')).map((entry) => entry.id)).toEqual(expect.arrayContaining([...prompts, lastTool]));
    // Within the grace period the deleted checkpoints' objects are still there (another process may be writing one).
    expect(() => storeGit(checkpoints, ['cat-file', '-e', doomedBlob])).not.toThrow();
    await checkpoints.restore(prompts[0]);
    expect(await readFile(path.join(workspace, 'counter.txt'), 'utf8')).toBe('prompt 0\n');
  });

  it('a private-index lock left by a killed process is removed once stale; a fresh one is a writer at work', async () => {
    await seedRepository();
    const checkpoints = store();
    await checkpoints.take({ conversationId: 'c', reason: 'prompt' });
    const lock = path.join(checkpoints.dir, 'checkpoint-index.lock');
    await writeFile(lock, '');
    await writeFile(path.join(workspace, 'README.md'), 'changed\n');
    await expect(checkpoints.take({ conversationId: 'c', reason: 'prompt' })).rejects.toThrow(/index.lock|lock/);
    const old = new Date(Date.now() - 5 * 60_000);
    await utimes(lock, old, old);
    const taken = await checkpoints.take({ conversationId: 'c', reason: 'prompt' });
    expect(taken.warnings.join(' ')).toMatch(/removed a stale lock/);
    expect(existsSync(lock)).toBe(false);
  });

  it('the size budget and excludes come from the worker environment; a value that cannot be read is an error', async () => {
    expect(checkpointSettingsFromEnvironment({})).toEqual({});
    expect(
      checkpointSettingsFromEnvironment({ DURABLE_AGENT_CHECKPOINT_MAX_FILE_BYTES: '2048', DURABLE_AGENT_CHECKPOINT_EXCLUDES: ' node_modules/ , *.log,,' }),
    ).toEqual({ maxFileBytes: 2048, excludes: ['node_modules/', '*.log'] });
    for (const bad of ['0', '-1', '1e6', '12kb', '1.5']) {
      expect(() => checkpointSettingsFromEnvironment({ DURABLE_AGENT_CHECKPOINT_MAX_FILE_BYTES: bad })).toThrow(
        `DURABLE_AGENT_CHECKPOINT_MAX_FILE_BYTES must be a whole number of bytes (1 or more), got "${bad}"`,
      );
    }
    await seedRepository();
    await mkdir(path.join(workspace, 'node_modules'), { recursive: true });
    await writeFile(path.join(workspace, 'node_modules', 'dep.js'), 'dep\n');
    await writeFile(path.join(workspace, 'big.bin'), Buffer.alloc(4096));
    const previous = { ...process.env };
    Object.assign(process.env, { DURABLE_AGENT_CHECKPOINT_MAX_FILE_BYTES: '1024', DURABLE_AGENT_CHECKPOINT_EXCLUDES: 'node_modules/' });
    try {
      const taken = await store().take({ conversationId: 'c', reason: 'prompt' });
      expect(taken.skipped).toEqual([{ path: 'big.bin', reason: 'oversized' }]);
      const files = storeGit(store(), ['ls-tree', '-r', '--name-only', `${taken.id}:files`]).split('\n');
      expect(files).not.toContain('node_modules/dep.js');
      expect(files).not.toContain('big.bin');
    } finally {
      delete process.env.DURABLE_AGENT_CHECKPOINT_MAX_FILE_BYTES;
      delete process.env.DURABLE_AGENT_CHECKPOINT_EXCLUDES;
      Object.assign(process.env, previous);
    }
  });
});
