/**
 * A real workspace for the Bash permission tests: files, a directory and a file that link out of it,
 * a home directory with secrets, and a path resolver that follows links as the fact gatherer's does.
 */
import { mkdir, mkdtemp, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { PathFact } from '../../common/permission-facts';

export interface BashWorkspace {
  root: string;
  workspace: string;
  outside: string;
  home: string;
  resolve(literal: string, base: string): Promise<PathFact>;
  cleanup(): Promise<void>;
}

const SPECIAL = ['/proc', '/sys', '/dev'];

/** The real path of `absolute`, or of its nearest existing parent joined with the rest. */
async function realOf(absolute: string): Promise<{ real: string; exists: boolean }> {
  try {
    return { real: await realpath(absolute), exists: true };
  } catch {
    const parent = path.posix.dirname(absolute);
    if (parent === absolute) return { real: absolute, exists: false };
    const { real } = await realOf(parent);
    return { real: path.posix.join(real, path.posix.basename(absolute)), exists: false };
  }
}

export async function resolvePathForTest(literal: string, base: string): Promise<PathFact> {
  const absolute = path.posix.resolve(base, literal);
  const { real, exists } = await realOf(absolute);
  let kind: PathFact['kind'] = 'missing';
  if (real !== '/dev/null' && SPECIAL.some((root) => real === root || real.startsWith(`${root}/`))) kind = 'other';
  else if (exists) {
    const info = await stat(real);
    kind = info.isFile() ? 'file' : info.isDirectory() ? 'directory' : 'other';
  }
  return { literal, absolute, real, exists, kind };
}

export async function makeBashWorkspace(): Promise<BashWorkspace> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'bash-perm-')));
  const workspace = path.join(root, 'ws');
  const outside = path.join(root, 'outside');
  const home = path.join(root, 'home');
  await mkdir(path.join(workspace, 'src'), { recursive: true });
  await mkdir(path.join(workspace, '.git', 'hooks'), { recursive: true });
  await mkdir(path.join(workspace, '.claude'), { recursive: true });
  await mkdir(outside, { recursive: true });
  await mkdir(path.join(home, '.ssh'), { recursive: true });
  await writeFile(path.join(workspace, 'src', 'x.ts'), 'export const x = 1;\n');
  await writeFile(path.join(workspace, 'src', 'y.ts'), 'export const y = 2;\n');
  await writeFile(path.join(workspace, 'README.md'), '# test\n');
  await writeFile(path.join(workspace, '.env'), 'SECRET=1\n');
  await writeFile(path.join(workspace, '.git', 'config'), '[core]\n');
  await writeFile(path.join(workspace, 'list'), 'a\nb\n');
  await writeFile(path.join(outside, 'secret.txt'), 'outside\n');
  await writeFile(path.join(home, '.ssh', 'id_rsa'), 'KEY\n');
  await symlink(outside, path.join(workspace, 'link-out'));
  await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'file-link'));
  return {
    root,
    workspace,
    outside,
    home,
    resolve: resolvePathForTest,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
