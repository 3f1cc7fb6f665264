/**
 * CLAUDE.md discovery as Claude Code does it (its `getMemoryFiles` / `getClaudeMds`), read once
 * per session by the session-context activity (seed §2.5 getUserContext):
 *
 *   1. managed policy   /etc/claude-code/CLAUDE.md
 *   2. user             ~/.claude/CLAUDE.md, ~/.claude/rules/*.md
 *   3. each directory from the top (below the filesystem root) down to the workspace:
 *      CLAUDE.md, .claude/CLAUDE.md, .claude/rules/*.md (project) and CLAUDE.local.md (local)
 *
 * Later files come later in the context, so the most specific instructions are read last. Each
 * file is labelled as Claude Code labels it when it injects them.
 */
import { constants } from 'node:fs';
import { open, readdir, realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isInside } from '../common/path-rules';
import { HIDDEN_HOME_PATHS, workerCredentialPaths } from './sandbox';

export type MemoryType = 'Managed' | 'User' | 'Project' | 'Local';

export interface MemoryFile {
  path: string;
  type: MemoryType;
  content: string;
}

/** Where organisations put managed instructions on Linux (Claude Code's path). */
export const MANAGED_CLAUDE_MD = '/etc/claude-code/CLAUDE.md';

/** The label after each file's path, as Claude Code writes it. */
export function memoryDescription(type: MemoryType): string {
  switch (type) {
    case 'Project':
      return ' (project instructions, checked into the codebase)';
    case 'Local':
      return " (user's private project instructions, not checked in)";
    default:
      // Managed files get the user label too: Claude Code has no branch of its own for them.
      return " (user's private global instructions for all projects)";
  }
}

/** The candidate files in reading order (pure: no file is touched). `rules` lists a rules directory's .md files. */
export function memoryFileCandidates(
  cwd: string,
  home: string,
  managedPath: string | undefined,
): Array<{ path: string; type: MemoryType } | { rulesDir: string; type: MemoryType }> {
  const candidates: Array<{ path: string; type: MemoryType } | { rulesDir: string; type: MemoryType }> = [];
  if (managedPath) candidates.push({ path: managedPath, type: 'Managed' });
  candidates.push({ path: path.join(home, '.claude', 'CLAUDE.md'), type: 'User' }, { rulesDir: path.join(home, '.claude', 'rules'), type: 'User' });
  // From the workspace up to (not including) the filesystem root, then read top-down.
  const directories: string[] = [];
  for (let directory = path.resolve(cwd); directory !== path.parse(directory).root; directory = path.dirname(directory)) directories.unshift(directory);
  for (const directory of directories) {
    candidates.push(
      { path: path.join(directory, 'CLAUDE.md'), type: 'Project' },
      { path: path.join(directory, '.claude', 'CLAUDE.md'), type: 'Project' },
      { rulesDir: path.join(directory, '.claude', 'rules'), type: 'Project' },
      { path: path.join(directory, 'CLAUDE.local.md'), type: 'Local' },
    );
  }
  return candidates;
}

/** How deep `@path` imports nest (Claude Code: five hops). */
const MAX_IMPORT_DEPTH = 5;

/** What memory loading found: the files read, in order, and notices for the person about files it would not read. */
export interface MemoryFiles {
  files: MemoryFile[];
  /** One line per file not read for safety (its name and why, never its content). */
  notices: string[];
}

export interface MemoryFileOptions {
  home?: string;
  managedPath?: string | undefined;
  /** Other working directories (`--add-dir`, `additionalDirectories`): a workspace file may link or import into them. */
  workingDirectories?: readonly string[];
  /** True for a real path a Read deny rule covers (such a file is not read either). */
  isReadDenied?: (realPath: string) => boolean;
}

/**
 * The CLAUDE.md files that apply to `cwd`, in reading order, each followed by the files it
 * imports (`@path`); empty and unreadable files are skipped.
 *
 * The workspace's own files are workspace content, which is untrusted (issue 29, class 7): a
 * `CLAUDE.md`, `.claude/rules/x.md` or `@import` of the workspace is read only when its REAL path
 * (after links, checked on the file actually opened) is inside the workspace or a working
 * directory. Nothing is read from the home's secrets (the sandbox's hidden list) or under a Read
 * deny rule, whoever asks — an `@~/.ssh/id_rsa` in the user's own file included. The managed, user
 * and parent directories' files are otherwise read as Claude Code reads them.
 */
export async function loadMemoryFiles(cwd: string, options: MemoryFileOptions = {}): Promise<MemoryFiles> {
  const home = path.resolve(options.home ?? os.homedir());
  const managedPath = 'managedPath' in options ? options.managedPath : MANAGED_CLAUDE_MD;
  const workspace = path.resolve(cwd);
  const allowedRoots = await Promise.all([workspace, ...(options.workingDirectories ?? [])].map((root) => realOrResolved(root)));
  // What the sandbox hides from commands and the file tools refuse: the home's secrets and the worker's own credentials.
  const secretCandidates = [...HIDDEN_HOME_PATHS.map((relative) => path.join(home, relative)), ...workerCredentialPaths(process.env, home)];
  const secrets = await Promise.all(secretCandidates.map((candidate) => realOrResolved(candidate)));
  const files: MemoryFile[] = [];
  const notices: string[] = [];
  const seen = new Set<string>();

  const refusal = (realPath: string, fromWorkspace: boolean): string | undefined => {
    // As in the sandbox, a working directory inside a hidden one stays visible (but not a secret inside the workspace).
    const visibleRoot = (secret: string) => allowedRoots.some((root) => isInside(root, secret) && isInside(realPath, root));
    if (secrets.some((secret) => isInside(realPath, secret) && !visibleRoot(secret))) return `is a secret the sandbox hides (${realPath})`;
    if (options.isReadDenied?.(realPath)) return `is under a Read deny rule (${realPath})`;
    if (fromWorkspace && !allowedRoots.some((root) => isInside(realPath, root))) return `is outside the workspace (${realPath})`;
    return undefined;
  };

  /** Reads `file` (and, depth permitting, its imports); `importedByWorkspace`: a workspace file imports it. */
  const read = async (file: string, type: MemoryType, importedByWorkspace: boolean, depth: number, importedBy?: string): Promise<void> => {
    const named = path.resolve(file);
    // Workspace content: a file named inside the workspace (whichever directory's candidate it is), or imported by one.
    const fromWorkspace = importedByWorkspace || isInside(named, workspace);
    if (seen.has(named)) return; // ~/.claude/CLAUDE.md is also on the way up from a workspace under home
    seen.add(named);
    const content = await readRegularFile(named, (realPath) => {
      const why = refusal(realPath, fromWorkspace);
      if (why) {
        const what = importedBy ? `${named} (imported by ${importedBy})` : named;
        notices.push(`Memory file not read: ${what} ${realPath === named ? '' : 'links to a file that '}${why}.`);
        return false;
      }
      if (realPath !== named && seen.has(realPath)) return false; // the same file by another name
      seen.add(realPath);
      return true;
    });
    if (!content?.trim()) return;
    files.push({ path: named, type, content: content.trim() });
    if (depth >= MAX_IMPORT_DEPTH) return;
    for (const target of memoryImports(content, path.dirname(named), home)) await read(target, type, fromWorkspace, depth + 1, named);
  };

  for (const candidate of memoryFileCandidates(workspace, home, managedPath)) {
    if ('path' in candidate) {
      await read(candidate.path, candidate.type, false, 0);
    } else {
      const entries = await readdir(candidate.rulesDir).catch(() => [] as string[]);
      for (const entry of entries.filter((name) => name.endsWith('.md')).sort()) await read(path.join(candidate.rulesDir, entry), candidate.type, false, 0);
    }
  }
  return { files, notices };
}

/**
 * The `@path` imports of a memory file, absolute, in order (Claude Code's rules): `@` at the start
 * or after whitespace, up to the next whitespace (`\ ` for a space), a `#fragment` dropped;
 * `./x`, `~/x`, `/x` or a plain relative name, relative to the importing file's directory. Not in
 * code spans or fenced code blocks.
 */
export function memoryImports(content: string, directory: string, home: string): string[] {
  const prose = content.replace(/^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:^ {0,3}\1[ \t]*$|(?![\s\S]))/gm, '').replace(/(`+)[\s\S]*?\1/g, '');
  const found: string[] = [];
  for (const match of prose.matchAll(/(?:^|\s)@((?:[^\s\\]|\\ )+)/g)) {
    const written = match[1].split('#')[0].replace(/\\ /g, ' ');
    const valid = written.startsWith('./') || written.startsWith('~/') || (written.startsWith('/') && written !== '/') || /^[a-zA-Z0-9._-]/.test(written);
    if (!written || !valid) continue;
    const absolute = written.startsWith('~/') ? path.join(home, written.slice(2)) : path.resolve(directory, written);
    if (!found.includes(absolute)) found.push(absolute);
  }
  return found;
}

/**
 * Opens `file` and reads it when it is a regular file and `allowed` says yes to the real path of
 * what was opened (the descriptor's: a link swapped after the check cannot change what is read).
 * Undefined when it is missing, unreadable, refused or not a regular file (a FIFO would block, a
 * device never end).
 */
async function readRegularFile(file: string, allowed: (realPath: string) => boolean): Promise<string | undefined> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => undefined);
  if (!handle) return undefined;
  try {
    if (!(await handle.stat()).isFile()) return undefined;
    const realPath = await realpath(`/proc/self/fd/${handle.fd}`).catch(() => realpath(file));
    return allowed(realPath) ? await handle.readFile('utf8') : undefined;
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/** The real path of `candidate`, or its resolved path when it does not exist. */
async function realOrResolved(candidate: string): Promise<string> {
  return realpath(candidate).catch(() => path.resolve(candidate));
}

/** The files as the `# claudeMd` context shows them: `Contents of <path> (<label>):` then the text. */
export function formatMemoryFiles(files: readonly MemoryFile[]): string | undefined {
  if (files.length === 0) return undefined;
  return files.map((file) => `Contents of ${file.path}${memoryDescription(file.type)}:\n\n${file.content}`).join('\n\n');
}
