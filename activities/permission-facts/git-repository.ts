/**
 * Which repository a `git` command would use (issue 29 §7). git reads that repository's config,
 * and `core.fsmonitor`, `diff.external`, textconv and filter drivers there run programs; only the
 * workspace's own `.git` is one the model cannot write (a protected path) and a clone does not make
 * by accident of its files. A bare repository made of plain files in a subfolder (HEAD, objects/,
 * refs/ — a clone can bring them), a nested `.git`, a `.git` file or `commondir` leading back into
 * the workspace: git would read a config the workspace chose.
 *
 * The walk is git's own discovery (setup.c `setup_git_directory_gently_1`): from the directory git
 * starts in, upwards, the first directory with a `.git` (directory, file or link) or that is itself
 * a repository. Above the workspace the files are out of the model's and a clone's reach: the
 * repository found there (a workspace inside a larger repository) is the user's own.
 */
import { lstat, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { isInside } from '../../common/path-rules';

export interface GitRepository {
  /** The work tree's top level `rev:path` and `:(top)` pathspecs start from (the workspace when none is found). */
  topLevel: string;
  /** Set when git would read a repository the workspace made: why. */
  problem?: string;
}

const exists = async (target: string) => (await lstat(target).catch(() => undefined)) !== undefined;

/** git's `is_git_directory` (loosely: any of its parts makes it one, so a half-made repository asks too). */
async function looksLikeRepository(directory: string): Promise<boolean> {
  if (!(await exists(path.posix.join(directory, 'HEAD')))) return false;
  for (const part of ['objects', 'refs', 'commondir']) if (await exists(path.posix.join(directory, part))) return true;
  return false;
}

/** Where a `.git` file (`gitdir: …`) and a repository's `commondir` lead, as real paths. */
async function linkedDirectories(dotGit: string, isFile: boolean): Promise<string[]> {
  const found: string[] = [];
  let gitDir = dotGit;
  if (isFile) {
    const text = await readFile(dotGit, 'utf8').catch(() => '');
    const match = /^gitdir: *(.+?)\s*$/m.exec(text);
    if (!match) return [];
    gitDir = path.posix.resolve(path.posix.dirname(dotGit), match[1]);
    found.push(gitDir);
  }
  const common = await readFile(path.posix.join(gitDir, 'commondir'), 'utf8').catch(() => undefined);
  if (common !== undefined && common.trim() !== '') found.push(path.posix.resolve(gitDir, common.trim()));
  return Promise.all(found.map((directory) => realpath(directory).catch(() => directory)));
}

/**
 * The repository git would use starting in `start`, judged against `workspace` (both absolute).
 * From outside the workspace (another working directory) only a bare repository of plain files
 * asks: which `.git` is that directory's own is not known here.
 */
export async function discoverGitRepository(start: string, workspace: string): Promise<GitRepository> {
  const root = await realpath(workspace).catch(() => workspace);
  let directory = await realpath(start).catch(() => undefined);
  if (directory === undefined) return { topLevel: root };
  const startsInside = isInside(directory, root);
  for (;;) {
    const dotGit = path.posix.join(directory, '.git');
    const entry = await lstat(dotGit).catch(() => undefined);
    const inWorkspace = startsInside && isInside(directory, root);
    if (entry !== undefined) {
      if (!inWorkspace) return { topLevel: directory };
      if (directory !== root) {
        return {
          topLevel: directory,
          problem: `git would use the repository in ${directory}, not the workspace's own .git: its config can run programs (a nested repository)`,
        };
      }
      if (entry.isSymbolicLink())
        return { topLevel: root, problem: "the workspace's .git is a symbolic link: git would read a config the check cannot vouch for" };
      // A `.git` directory that is no repository is passed over: git then tries the workspace itself as a bare one.
      if (entry.isDirectory() && !(await looksLikeRepository(dotGit)) && (await looksLikeRepository(root))) {
        return {
          topLevel: root,
          problem: `git would use the workspace itself as a bare repository (HEAD, objects, refs as plain files; its .git is not one): its config can run programs`,
        };
      }
      const linked = await linkedDirectories(dotGit, entry.isFile());
      const back = linked.find((target) => isInside(target, root) && !isInside(target, dotGit));
      if (back !== undefined) {
        return {
          topLevel: root,
          problem: `the workspace's .git leads to ${back} (a .git file or commondir) inside the workspace: git would read a config the workspace chose`,
        };
      }
      return { topLevel: root };
    }
    // Above the workspace the files are the user's; below it (or from another directory) they may be a clone's.
    if ((inWorkspace || !startsInside) && (await looksLikeRepository(directory))) {
      return {
        topLevel: directory,
        problem: `git would use ${directory} as a bare repository (HEAD, objects, refs as plain files): its config can run programs`,
      };
    }
    const parent = path.posix.dirname(directory);
    if (parent === directory) return { topLevel: startsInside ? root : await realpath(start).catch(() => start) };
    directory = parent;
  }
}
