/**
 * Tab completion in the chat's prompt (issue 32, item 2), as Claude Code's: `/` at the start of the
 * line completes command names (the built-ins and the workspace's custom commands, which the chat
 * passes in), `@` anywhere completes a file or directory of the workspace for a mention.
 *
 * Files come from real ripgrep (`rg --files`: .gitignore, .ignore and .git/info/exclude
 * respected, hidden files listed, `.git` not), listed once per workspace and kept a few seconds,
 * so each keystroke does not walk the tree. Only paths under `cwd` are ever offered: ripgrep lists
 * relative paths without following links, and a query that climbs (`@../`) or is absolute matches
 * none of them.
 */
import { spawn } from 'node:child_process';
import { ripgrepPath } from '../../activities/tools/ripgrep';

export interface CompletionContext {
  readonly cwd: string;
  readonly commands: readonly { name: string; description: string }[];
}

export interface Completion {
  /** The part of the line the chosen value replaces: `line.slice(from, to)`. */
  readonly from: number;
  readonly to: number;
  readonly candidates: { value: string; description?: string }[];
}

/** Candidates offered at most. */
export const MAX_CANDIDATES = 30;
/** Files listed at most per workspace (a huge tree is cut here: mentions are of nearby files). */
export const MAX_LISTED_FILES = 50_000;
/** How long a listing is reused. */
export const LISTING_TTL_MS = 5_000;
/** A listing that takes longer is cut short (what was listed by then is used). */
const LISTING_TIMEOUT_MS = 3_000;

/** Completions for `line` with the cursor at `cursor`. Never throws: no candidates when nothing fits. */
export async function completeInput(line: string, cursor: number, ctx: CompletionContext): Promise<Completion> {
  const at = Math.max(0, Math.min(cursor, line.length));
  const none = { from: at, to: at, candidates: [] };
  const start = tokenStart(line, at);
  const end = tokenEnd(line, at);
  const token = line.slice(start, at);
  if (start === 0 && token.startsWith('/')) {
    return { from: 0, to: end, candidates: completeCommand(token.slice(1), ctx.commands) };
  }
  if (token.startsWith('@')) {
    try {
      return { from: start, to: end, candidates: await completePath(token.slice(1), ctx.cwd) };
    } catch {
      return none;
    }
  }
  return none;
}

function tokenStart(line: string, cursor: number): number {
  let index = cursor;
  while (index > 0 && !/\s/.test(line[index - 1])) index--;
  return index;
}

function tokenEnd(line: string, cursor: number): number {
  let index = cursor;
  while (index < line.length && !/\s/.test(line[index])) index++;
  return index;
}

/** Command names starting with `query` first (alphabetical), then those containing it; each once. */
function completeCommand(query: string, commands: CompletionContext['commands']): Completion['candidates'] {
  const wanted = query.toLowerCase();
  const seen = new Set<string>();
  const unique = commands.filter((command) => !seen.has(command.name) && seen.add(command.name));
  const ranked = unique
    .map((command) => ({ command, rank: rankOf(command.name.toLowerCase(), wanted) }))
    .filter((entry) => entry.rank !== undefined)
    .sort((a, b) => a.rank! - b.rank! || a.command.name.localeCompare(b.command.name));
  return ranked.slice(0, MAX_CANDIDATES).map(({ command }) => ({ value: `/${command.name}`, description: command.description }));
}

/** 0: starts with the query, 1: a word in it does (`:`, `-`, `_`, `/`, `.`), 2: contains it; undefined: no match. */
function rankOf(name: string, query: string): number | undefined {
  if (name.startsWith(query)) return 0;
  if (name.split(/[:\-_/.]/).some((part) => part.startsWith(query))) return 1;
  if (name.includes(query)) return 2;
  return undefined;
}

/**
 * Files and directories for `@query`: a query with a `/` matches from the path's start (its
 * directory part exactly, case aside), a bare word the name of a file or directory, then anywhere
 * in the path; shallower paths first, then by name. Directories end in `/`.
 */
async function completePath(query: string, cwd: string): Promise<Completion['candidates']> {
  if (query.startsWith('/') || query.startsWith('~') || query.split('/').includes('..')) return [];
  const { files, directories } = await listing(cwd);
  const wanted = query.toLowerCase().replace(/^\.\//, '');
  const scored: { path: string; directory: boolean; rank: number }[] = [];
  const consider = (path: string, directory: boolean) => {
    const lower = path.toLowerCase();
    const shown = directory ? `${lower}/` : lower;
    let rank: number | undefined;
    if (wanted === '')
      rank = path.includes('/') ? undefined : directory ? 0 : 1; // the top level
    else if (shown.startsWith(wanted)) rank = 0;
    else if (wanted.includes('/')) rank = shown.includes(wanted) ? 3 : undefined;
    else {
      const name = lower.slice(lower.lastIndexOf('/') + 1);
      rank = name.startsWith(wanted) ? 1 : name.includes(wanted) ? 2 : lower.includes(wanted) ? 3 : undefined;
    }
    if (rank !== undefined) scored.push({ path, directory, rank });
  };
  for (const directory of directories) consider(directory, true);
  for (const file of files) consider(file, false);
  scored.sort((a, b) => a.rank - b.rank || depth(a.path) - depth(b.path) || compareNames(a.path, b.path));
  return scored.slice(0, MAX_CANDIDATES).map(({ path, directory }) => (directory ? { value: `@${path}/`, description: 'directory' } : { value: `@${path}` }));
}

/** Alphabetical, case aside, a leading dot ignored (as `ls` sorts). */
function compareNames(a: string, b: string): number {
  const key = (name: string) => name.replace(/^\./, '').toLowerCase();
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a < b ? -1 : a > b ? 1 : 0;
}

function depth(path: string): number {
  return path.split('/').length;
}

type Listing = { files: string[]; directories: string[] };
const listings = new Map<string, { at: number; listing: Promise<Listing> }>();

/** The workspace's files (ripgrep's view: ignored ones left out) and the directories holding them, kept {@link LISTING_TTL_MS}. */
function listing(cwd: string): Promise<Listing> {
  const cached = listings.get(cwd);
  if (cached && Date.now() - cached.at < LISTING_TTL_MS) return cached.listing;
  const fresh = listFiles(cwd).then((files) => {
    const directories = new Set<string>();
    for (const file of files) {
      for (let slash = file.indexOf('/'); slash !== -1; slash = file.indexOf('/', slash + 1)) directories.add(file.slice(0, slash));
    }
    return { files, directories: [...directories] };
  });
  fresh.catch(() => listings.delete(cwd));
  listings.set(cwd, { at: Date.now(), listing: fresh });
  return fresh;
}

/** `rg --files` in `cwd`: relative paths with `/`, at most {@link MAX_LISTED_FILES}. */
function listFiles(cwd: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(ripgrepPath(), ['--files', '--hidden', '--glob', '!.git', '--no-messages', '--path-separator', '/'], {
      cwd,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const files: string[] = [];
    let rest = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (rest !== '' && files.length < MAX_LISTED_FILES) files.push(rest);
      resolve(files.map((file) => file.replace(/^\.\//, '')));
    };
    const timer = setTimeout(() => {
      child.kill();
      finish();
    }, LISTING_TIMEOUT_MS);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) if (line !== '' && files.length < MAX_LISTED_FILES) files.push(line);
      if (files.length >= MAX_LISTED_FILES) {
        rest = '';
        child.kill();
        finish();
      }
    });
    child.on('error', (error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', finish);
  });
}
