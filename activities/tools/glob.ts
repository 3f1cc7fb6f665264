/**
 * Glob tool implementation, plus the glob matcher and directory walker Grep shares.
 * The matcher is hand-written (no dependency): `**`, `*`, `?`, `[...]`, `{a,b}` and `\` escapes.
 */
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { GLOB_MAX_RESULTS, type GlobInput } from '../../common/tools/glob';
import { GLOB_CHARACTERS, splitStaticPrefix } from '../permission-facts/paths';
import { AccessGuard } from './access';
import { SearchThread, SearchTimeoutError } from './search-thread';
import type { ToolExecutionContext, ToolExecutionResult } from './types';

/** Compile a glob (matched against `/`-separated relative paths, dotfiles included) to a RegExp. */
export function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${globSource(glob)}$`);
}

function globSource(glob: string): string {
  let source = '';
  let index = 0;
  while (index < glob.length) {
    const char = glob[index];
    if (char === '*') {
      let end = index;
      while (glob[end] === '*') end += 1;
      const isGlobstar = end - index >= 2 && (index === 0 || glob[index - 1] === '/') && (end === glob.length || glob[end] === '/');
      if (isGlobstar && glob[end] === '/') {
        source += '(?:[^/]*/)*'; // `**/` matches zero or more directories
        index = end + 1;
        // `**/**/` means the same as `**/`; each repeat would multiply the backtracking on deep paths.
        while (glob.startsWith('**/', index)) index += 3;
      } else if (isGlobstar) {
        source += '.*';
        index = end;
      } else {
        source += '[^/]*';
        index = end;
      }
    } else if (char === '?') {
      source += '[^/]';
      index += 1;
    } else if (char === '[') {
      const close = findClassEnd(glob, index);
      if (close === -1) {
        source += '\\[';
        index += 1;
      } else {
        source += classSource(glob.slice(index + 1, close));
        index = close + 1;
      }
    } else if (char === '{') {
      const close = findBraceEnd(glob, index);
      const alternatives = close === -1 ? [] : splitTopLevelCommas(glob.slice(index + 1, close));
      if (alternatives.length < 2) {
        source += '\\{';
        index += 1;
      } else {
        source += `(?:${alternatives.map(globSource).join('|')})`;
        index = close + 1;
      }
    } else if (char === '\\' && index + 1 < glob.length) {
      source += escapeRegExp(glob[index + 1]);
      index += 2;
    } else {
      source += escapeRegExp(char);
      index += 1;
    }
  }
  return source;
}

function classSource(body: string): string {
  let source = '[';
  let index = 0;
  if (body[0] === '!' || body[0] === '^') {
    source += '^';
    index = 1;
  }
  for (; index < body.length; index += 1) {
    const char = body[index];
    if (char === '\\' && index + 1 < body.length) {
      const escaped = body[index + 1];
      source += /[A-Za-z0-9]/.test(escaped) ? escaped : `\\${escaped}`;
      index += 1;
    } else if (char === ']' || char === '[' || char === '^' || char === '\\') {
      source += `\\${char}`;
    } else {
      source += char;
    }
  }
  return `${source}]`;
}

function findClassEnd(glob: string, open: number): number {
  let index = open + 1;
  if (glob[index] === '!' || glob[index] === '^') index += 1;
  if (glob[index] === ']') index += 1; // a leading `]` is literal
  while (index < glob.length && glob[index] !== ']') {
    if (glob[index] === '/') return -1;
    index += glob[index] === '\\' ? 2 : 1;
  }
  return index < glob.length ? index : -1;
}

function findBraceEnd(glob: string, open: number): number {
  let depth = 0;
  for (let index = open; index < glob.length; index += 1) {
    if (glob[index] === '\\') index += 1;
    else if (glob[index] === '{') depth += 1;
    else if (glob[index] === '}' && --depth === 0) return index;
  }
  return -1;
}

function splitTopLevelCommas(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let index = 0; index < body.length; index += 1) {
    const char = body[index];
    if (char === '\\') index += 1;
    else if (char === '{') depth += 1;
    else if (char === '}') depth -= 1;
    else if (char === ',' && depth === 0) {
      parts.push(body.slice(start, index));
      start = index + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Directories every search skips unless the pattern names them. */
export const SKIPPED_DIRECTORIES = ['node_modules', '.git'] as const;

export interface WalkOptions {
  readonly signal: AbortSignal;
  /** Directory names not descended into. */
  readonly skipDirectories: ReadonlySet<string>;
  /** Deepest directory level (relative to the root, root = 0) whose entries are listed. */
  readonly maxDepth?: number;
}

export interface WalkedFile {
  readonly absolutePath: string;
  /** Path relative to the walk root, `/`-separated. */
  readonly relativePath: string;
}

/**
 * Every file under `root`, depth first in name order. Symlinked files are listed; symlinked
 * directories are not followed (no cycles). Unreadable directories are skipped silently.
 */
export async function* walkFiles(root: string, options: WalkOptions): AsyncGenerator<WalkedFile> {
  const stack: { directory: string; relative: string; depth: number }[] = [{ directory: root, relative: '', depth: 0 }];
  while (stack.length > 0) {
    options.signal.throwIfAborted();
    const { directory, relative, depth } = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(directory, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirectories: { directory: string; relative: string; depth: number }[] = [];
    for (const entry of entries) {
      const absolutePath = path.join(directory, entry.name);
      const relativePath = relative === '' ? entry.name : `${relative}/${entry.name}`;
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        isFile = await stat(absolutePath).then((target) => target.isFile(), () => false);
      }
      if (isFile) yield { absolutePath, relativePath };
      else if (entry.isDirectory() && !options.skipDirectories.has(entry.name)) {
        if (options.maxDepth === undefined || depth < options.maxDepth) {
          subdirectories.push({ directory: absolutePath, relative: relativePath, depth: depth + 1 });
        }
      }
    }
    // Reverse so the stack pops subdirectories in name order.
    stack.push(...subdirectories.reverse());
  }
}

/** Directories skipped for `pattern`: node_modules and .git, unless the pattern mentions them. */
export function skippedDirectoriesFor(pattern: string): Set<string> {
  return new Set(SKIPPED_DIRECTORIES.filter((name) => !pattern.includes(name)));
}

/** Glob: absolute paths of matching files, newest first, capped at GLOB_MAX_RESULTS. */
export async function executeGlob(input: GlobInput, context: ToolExecutionContext): Promise<ToolExecutionResult> {
  const { signal } = context;
  signal.throwIfAborted();
  const guard = context.access === undefined ? undefined : await AccessGuard.create(context.access, context.cwd);
  const searchRoot = guard ? guard.absolutePath(input.path ?? '.', context.cwd) : path.resolve(context.cwd, input.path ?? '.');
  const rootRefusal = guard ? await guard.checkRoot(searchRoot) : undefined;
  if (rootRefusal) return { isError: true, content: rootRefusal.message };
  const rootStat = await stat(searchRoot).catch(() => undefined);
  if (rootStat === undefined) {
    return { isError: true, content: `Directory does not exist: ${searchRoot}. Current working directory: ${context.cwd}` };
  }
  if (!rootStat.isDirectory()) {
    return { isError: true, content: `Path is not a directory: ${searchRoot}. Pass a directory as path, or use Read for a file.` };
  }

  const { prefix, rest } = splitStaticPrefix(input.pattern);
  const walkRoot = guard ? guard.absolutePath(prefix || '.', searchRoot) : path.resolve(searchRoot, prefix);
  // With access, every file listed is checked (issue 17 §4): its real path inside the working
  // directories (or the approved root) and no Read deny rule covering it.
  const areas = guard ? await guard.searchAreas(walkRoot) : [];
  let hidden = 0;
  const visible = async (absolutePath: string): Promise<boolean> => {
    if (!guard || (await guard.fileVisible(absolutePath, areas)) !== undefined) return true;
    hidden += 1;
    return false;
  };
  const matcher = globToRegExp(rest);
  const maxDepth = rest.includes('**') ? undefined : rest.split('/').length - 1;
  const matches: { absolutePath: string; mtimeMs: number }[] = [];
  if (!GLOB_CHARACTERS.test(rest)) {
    // A literal path: no walk needed.
    const literal = path.join(walkRoot, rest);
    const literalStat = await stat(literal).catch(() => undefined);
    if (literalStat?.isFile() && (await visible(literal))) matches.push({ absolutePath: literal, mtimeMs: literalStat.mtimeMs });
  } else {
    const walked: WalkedFile[] = [];
    for await (const file of walkFiles(walkRoot, { signal, skipDirectories: skippedDirectoriesFor(input.pattern), maxDepth })) {
      walked.push(file);
    }
    // The matcher runs on a thread with a time limit: a backtracking pattern must not block the event loop.
    const thread = new SearchThread(signal);
    let matched: number[];
    try {
      matched = await thread.matchPaths(matcher, walked.map((file) => file.relativePath));
    } catch (error) {
      if (!(error instanceof SearchTimeoutError)) throw error;
      return {
        isError: true,
        content: `Glob stopped: matching the pattern ran longer than ${error.timeLimitMs / 1000} s. Simplify the pattern or pass a narrower path.`,
      };
    } finally {
      await thread.close();
    }
    for (const index of matched) {
      const file = walked[index];
      if (!(await visible(file.absolutePath))) continue;
      const fileStat = await stat(file.absolutePath).catch(() => undefined);
      if (fileStat) matches.push({ absolutePath: file.absolutePath, mtimeMs: fileStat.mtimeMs });
    }
  }
  signal.throwIfAborted();

  const hiddenNote = hidden === 0 ? '' : `\n\n${hiddenFilesNote(hidden, 'listed')}`;
  if (matches.length === 0) return { isError: false, content: `No files found${hiddenNote}` };
  matches.sort((a, b) => b.mtimeMs - a.mtimeMs || a.absolutePath.localeCompare(b.absolutePath));
  const shown = matches.slice(0, GLOB_MAX_RESULTS).map((match) => match.absolutePath);
  const lines = [...shown];
  if (matches.length > GLOB_MAX_RESULTS) {
    lines.push(
      `(Results are truncated: showing ${GLOB_MAX_RESULTS} of ${matches.length} files. Consider using a more specific path or pattern.)`,
    );
  }
  return { isError: false, content: lines.join('\n') + hiddenNote };
}

/** Says that some files were left out, without naming them (their names may be what a rule hides). */
export function hiddenFilesNote(count: number, verb: 'listed' | 'searched'): string {
  return `[${count} ${count === 1 ? 'file' : 'files'} not ${verb}: outside the working directories (through a symbolic link) or covered by a Read deny rule.]`;
}
