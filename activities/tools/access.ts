/**
 * What the file tools enforce where they act, when the call carries a ToolAccess (issue 17 §4).
 *
 * The permission decision was made on the literal path and its real path as gathered a moment
 * before; a symbolic link can be swapped in between. So the tools resolve the real path again,
 * refuse when it left the working directories while the literal did not (or, when the decision
 * listed the real paths it allowed, when it is not one of them), open the real path itself with
 * O_NOFOLLOW, and check what the opened descriptor really is before reading or writing through it.
 * Grep and Glob apply the Read deny rules and the working directories to every file they search
 * or list, not only to their root.
 */
import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readFile, readlink, realpath, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ToolAccess } from '../../common/permission-facts';
import { isInside, normalizePath, pathMatchesRule } from '../../common/path-rules';
import { absolutePathOf, isSpecialPath, resolveRealPath } from '../permission-facts/paths';
import { workerCredentialPaths } from '../sandbox';
import type { ToolExecutionContext } from './types';

/**
 * The worker's credentials (workerCredentialPaths), lexical and real, for `homeDir`: resolved once
 * per home directory and environment (the names that place them) and again after
 * CREDENTIALS_FRESH_MS, not on every call (bench/iteration-overhead: seven real-path lookups per
 * Read cost about half a millisecond per loop iteration).
 */
async function workerCredentials(homeDir: string): Promise<string[]> {
  const key = `${homeDir}\0${credentialEnvironment(process.env)}`;
  const cached = credentialCache.get(key);
  if (cached && Date.now() - cached.at < CREDENTIALS_FRESH_MS) return cached.paths;
  const paths = (async () => {
    const credentials = workerCredentialPaths(process.env, homeDir).map((entry) => path.resolve(entry));
    const realCredentials = await Promise.all(credentials.map(async (entry) => realpath(entry).catch(() => entry)));
    return [...new Set([...credentials, ...realCredentials])];
  })();
  credentialCache.clear();
  credentialCache.set(key, { at: Date.now(), paths });
  return paths;
}
const CREDENTIALS_FRESH_MS = 5_000;
const credentialCache = new Map<string, { at: number; paths: Promise<string[]> }>();

/** The environment variables that place the worker's credentials (secretPaths reads these), as one string. */
function credentialEnvironment(env: NodeJS.ProcessEnv): string {
  let key = '';
  for (const name in env) {
    if (
      name === 'TEMPORAL_CONFIG_FILE' ||
      name.startsWith('TEMPORAL_TLS_') ||
      name === 'XDG_CONFIG_HOME' ||
      name.startsWith('DURABLE_AGENT_') ||
      name === 'HOME'
    )
      key += `${name}=${env[name]}\0`;
  }
  return key;
}

/** A tool error saying why the tool did not act (the model can act on it). */
export class AccessRefusal {
  constructor(readonly message: string) {}
}

export type Checked = { real: string } | AccessRefusal;

/** The checks of one tool call. */
export class AccessGuard {
  private constructor(
    private readonly access: ToolAccess,
    /** The workspace root relative rule patterns are anchored at. */
    private readonly ruleCwd: string,
    readonly homeDir: string,
    /** The working directories, lexical and real (a workspace under a linked directory has both). */
    private readonly areas: string[],
    /** The worker's credentials (workerCredentialPaths), lexical and real: never read, listed or written. */
    private readonly credentials: string[],
  ) {}

  static async create(access: ToolAccess, cwd: string): Promise<AccessGuard> {
    const lexical = access.workingDirectories.map(normalizePath);
    const real = await Promise.all(lexical.map(async (directory) => await realpath(directory).catch(() => directory)));
    const homeDir = access.homeDir ?? os.homedir();
    return new AccessGuard(access, lexical[0] ?? normalizePath(cwd), homeDir, [...new Set([...lexical, ...real])], await workerCredentials(homeDir));
  }

  /** Whether `absolute` or `real` is where the worker keeps its own credentials. */
  private isCredential(absolute: string, real: string): boolean {
    return this.credentials.some((entry) => isInside(absolute, entry) || isInside(real, entry));
  }

  /** The tool's path as the facts resolved it: `~` expanded, absolute, normalised. */
  absolutePath(literal: string, cwd: string): string {
    return absolutePathOf(literal, cwd, this.homeDir);
  }

  private insideWorkingDirectories(target: string): boolean {
    return this.access.workingDirectories.some((directory) => isInside(target, directory));
  }

  private realInside(real: string, extraAreas: readonly string[] = []): boolean {
    return [...this.areas, ...extraAreas].some((directory) => isInside(real, directory));
  }

  /** The Read deny rule that covers the literal or the real path, if any. */
  readDenyRule(absolute: string, real: string): string | undefined {
    const context = { cwd: this.ruleCwd, homeDir: this.homeDir };
    return this.access.readDeny.find((rule) => pathMatchesRule(rule, absolute, context) || (real !== absolute && pathMatchesRule(rule, real, context)));
  }

  /** Read, Write, Edit: the real path to act on, or why not. */
  async checkFile(absolute: string, use: 'read' | 'write'): Promise<Checked> {
    const { real, loop } = await resolveRealPath(absolute);
    if (loop) return new AccessRefusal(`${absolute} is a loop of symbolic links.`);
    const allowed = this.access.allowedRealPaths;
    if (allowed !== undefined && !allowed.includes(real)) {
      return new AccessRefusal(
        `${absolute} now leads to ${real}, which is not the path permission was given for (${allowed.join(', ') || 'none'}): ` +
          'a symbolic link on the way changed after the check. Nothing was done; look at the path (ls -l) and try again.',
      );
    }
    if (this.insideWorkingDirectories(absolute) && !this.realInside(real)) {
      return new AccessRefusal(
        `${absolute} is inside the working directories, but a symbolic link on the way leads to ${real}, outside them ` +
          `(${this.access.workingDirectories.join(', ')}). Nothing was ${use === 'read' ? 'read' : 'written'}. ` +
          `To ${use} ${real}, use that path, which asks for permission.`,
      );
    }
    if (this.isCredential(absolute, real)) {
      return new AccessRefusal(
        `${absolute} is where this worker keeps its own credentials (Temporal profiles, TLS files, the encryption key, the dev server's database): ` +
          'the tools neither read nor write it, whatever the permission mode.',
      );
    }
    if (use === 'read') {
      if (isSpecialPath(absolute) || isSpecialPath(real)) {
        return new AccessRefusal(`${absolute} is under /proc, /sys or /dev: the file tools do not read process, kernel or device files.`);
      }
      const rule = this.readDenyRule(absolute, real);
      if (rule !== undefined) return new AccessRefusal(`Reading ${absolute} is denied by the permission rule Read(${rule}).`);
    }
    return { real };
  }

  /**
   * Grep and Glob: whether a file they walked may be searched or listed — its real path inside
   * the working directories (or a root the decision allowed: `extraAreas`) and no Read deny rule
   * covering it. A file reached through a linked directory leading out is skipped.
   */
  async fileVisible(absolute: string, extraAreas: readonly string[]): Promise<string | undefined> {
    const { real, loop } = await resolveRealPath(absolute);
    if (loop) return undefined;
    return this.visibleAt(absolute, real, extraAreas) ? real : undefined;
  }

  /** fileVisible's checks once the real path is known (Grep and Glob resolve real paths per directory). */
  visibleAt(absolute: string, real: string, extraAreas: readonly string[]): boolean {
    if (!this.realInside(real, extraAreas) || isSpecialPath(absolute) || isSpecialPath(real) || this.isCredential(absolute, real)) return false;
    return this.readDenyRule(absolute, real) === undefined;
  }

  /**
   * Grep and Glob: the root's check — when the decision listed the real paths it allowed, the
   * root's real path must still be one of them (a link swapped in since is refused).
   */
  async checkRoot(absolute: string): Promise<AccessRefusal | undefined> {
    const allowed = this.access.allowedRealPaths;
    if (allowed === undefined) return undefined;
    const { real } = await resolveRealPath(absolute);
    if (allowed.includes(real)) return undefined;
    return new AccessRefusal(
      `${absolute} now leads to ${real}, which is not the path permission was given for (${allowed.join(', ') || 'none'}): ` +
        'a symbolic link on the way changed after the check. Nothing was searched; look at the path (ls -l) and try again.',
    );
  }

  /**
   * Where Grep and Glob may look besides the working directories: the real root, when the root
   * itself is outside the working directories (the decision was made on it). A root inside them
   * that is a link leading out adds nothing: its files are skipped.
   */
  async searchAreas(root: string): Promise<string[]> {
    if (this.insideWorkingDirectories(root)) return [];
    const { real, loop } = await resolveRealPath(root);
    return loop ? [] : [real];
  }

  /** Read and Grep: opens `real` for reading, and checks that the descriptor is that file. */
  async openForRead(real: string): Promise<FileHandle | AccessRefusal> {
    let handle: FileHandle;
    try {
      // O_NONBLOCK: a FIFO swapped in after the check must not block the open.
      handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') return changed(real);
      throw error;
    }
    const problem = await verifyOpened(handle, real);
    if (problem === undefined) return handle;
    await handle.close();
    return problem;
  }

  /**
   * Write and Edit: opens `real` for writing without following a link swapped in as its last
   * component, creating it (and its parent directories) when missing, and checks that the
   * descriptor is that file. The caller truncates and writes.
   */
  async openForWrite(real: string): Promise<{ handle: FileHandle; created: boolean } | AccessRefusal> {
    await mkdir(path.dirname(real), { recursive: true });
    const parent = await realpath(path.dirname(real)).catch(() => undefined);
    if (parent === undefined || normalizePath(`${parent}/${path.basename(real)}`) !== real) return changed(real);
    const flags = constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
    let handle: FileHandle;
    let created = true;
    try {
      handle = await open(real, flags | constants.O_CREAT | constants.O_EXCL, 0o666);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') return changed(real);
      if (code !== 'EEXIST') throw error;
      created = false;
      try {
        handle = await open(real, flags);
      } catch (again) {
        if ((again as NodeJS.ErrnoException).code === 'ELOOP') return changed(real);
        throw again;
      }
    }
    const problem = await verifyOpened(handle, real);
    if (problem === undefined) return { handle, created };
    const opened = await descriptorPath(handle);
    await handle.close();
    if (created && opened !== undefined) await unlink(opened).catch(() => undefined);
    return problem;
  }
}

function changed(real: string): AccessRefusal {
  return new AccessRefusal(
    `${real} changed between the permission check and the write or read (a symbolic link was swapped in on the way). Nothing was done; look at the path (ls -l) and try again.`,
  );
}

/** The path the descriptor really names (Linux: /proc/self/fd), or undefined where that is not available. */
async function descriptorPath(handle: FileHandle): Promise<string | undefined> {
  return readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
}

/** Why the opened descriptor is not the regular file `real`, or undefined when it is. */
async function verifyOpened(handle: FileHandle, real: string): Promise<AccessRefusal | undefined> {
  const opened: Stats = await handle.stat();
  if (!opened.isFile()) return new AccessRefusal(`${real} is not a regular file.`);
  const named = await descriptorPath(handle);
  if (named !== undefined) return named === real ? undefined : changed(real);
  // No /proc: the path must still be real (no link on the way) and name the same inode.
  const still = await realpath(real).catch(() => undefined);
  const there = await lstat(real).catch(() => undefined);
  if (still !== real || there === undefined || there.dev !== opened.dev || there.ino !== opened.ino) return changed(real);
  return undefined;
}

/** Truncates and writes the whole text through an opened handle, then closes it. */
async function writeThroughHandle(handle: FileHandle, text: string): Promise<void> {
  try {
    await handle.truncate(0);
    await handle.writeFile(text, 'utf8'); // a fresh handle writes from position 0
  } finally {
    await handle.close();
  }
}

/** A file tool's file: its absolute path, and what is read and written — with access, the real path checked again. */
export interface ToolFile {
  guard: AccessGuard | undefined;
  filePath: string;
  target: string;
}

/** Resolves a file tool's path; with access, checks its real path for `use` (issue 17 §4), to act on it and never on the link. */
export async function resolveToolFile(literal: string, context: ToolExecutionContext, use: 'read' | 'write'): Promise<ToolFile | AccessRefusal> {
  const guard = context.access === undefined ? undefined : await AccessGuard.create(context.access, context.cwd);
  const filePath = guard ? guard.absolutePath(literal, context.cwd) : path.resolve(context.cwd, literal);
  if (!guard) return { guard, filePath, target: filePath };
  const checked = await guard.checkFile(filePath, use);
  return checked instanceof AccessRefusal ? checked : { guard, filePath, target: checked.real };
}

/** The file's bytes; with access, through a descriptor checked to be the target, not through a link swapped in since. */
export async function readToolFile(file: ToolFile): Promise<Buffer | AccessRefusal> {
  if (!file.guard) return readFile(file.target);
  const opened = await file.guard.openForRead(file.target);
  if (opened instanceof AccessRefusal) return opened;
  try {
    return await opened.readFile();
  } finally {
    await opened.close();
  }
}

/** Writes the whole text, creating parent directories; with access, through a descriptor opened without following a swapped-in link. */
export async function writeToolFile(file: ToolFile, text: string): Promise<AccessRefusal | undefined> {
  if (!file.guard) {
    await mkdir(path.dirname(file.filePath), { recursive: true });
    await writeFile(file.filePath, text, 'utf8');
    return undefined;
  }
  const opened = await file.guard.openForWrite(file.target);
  if (opened instanceof AccessRefusal) return opened;
  await writeThroughHandle(opened.handle, text);
  return undefined;
}
