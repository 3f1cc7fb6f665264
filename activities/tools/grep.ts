/**
 * Grep tool implementation: JavaScript RegExp over files, no ripgrep dependency on the worker host.
 * The regex runs on a search thread with a time limit (./search-thread), never on the event loop.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { GrepInput } from '../../common/tools/grep';
import { READ_MAX_LINE_LENGTH } from '../../common/tools/read';
import { BINARY_SNIFF_BYTES } from './files';
import { AccessGuard, AccessRefusal } from './access';
import { globToRegExp, hiddenFilesNote, skippedDirectoriesFor, walkFiles, type WalkedFile } from './glob';
import { type LineMatch, SearchThread, SearchTimeoutError } from './search-thread';
import type { ToolExecutionContext, ToolExecutionResult } from './types';

/** Files larger than this are skipped (generated bundles, data dumps). */
export const GREP_MAX_FILE_BYTES = 20 * 1024 * 1024;
/** Content mode stops collecting past this many characters; the caller's result budget is far smaller. */
const GREP_MAX_CONTENT_CHARS = 10 * 1024 * 1024;

interface FileMatches {
  readonly absolutePath: string;
  readonly lines: LineMatch[];
}

/** A `glob` without `/` matches the file name anywhere (ripgrep semantics); with `/`, the relative path. */
function globSubject(glob: string, file: WalkedFile): string {
  return glob.includes('/') ? file.relativePath : path.posix.basename(file.relativePath);
}

/** Files the glob keeps; the glob's regex runs on the search thread like the pattern (it can backtrack too). */
async function filterByGlob(files: WalkedFile[], glob: string | undefined, thread: SearchThread): Promise<WalkedFile[]> {
  if (glob === undefined) return files;
  const matcher = globToRegExp(glob.replace(/^\.\//, ''));
  const kept = await thread.matchPaths(matcher, files.map((file) => globSubject(glob, file)));
  return kept.map((index) => files[index]);
}

/** The file's bytes; with access, through a descriptor checked to be the checked real path. */
async function readChecked(absolutePath: string, guard: AccessGuard | undefined, real: string | undefined): Promise<Buffer | undefined> {
  if (!guard || real === undefined) return readFile(absolutePath).catch(() => undefined);
  const opened = await guard.openForRead(real).catch(() => undefined);
  if (opened === undefined || opened instanceof AccessRefusal) return undefined;
  try {
    return await opened.readFile();
  } catch {
    return undefined;
  } finally {
    await opened.close();
  }
}

async function searchFile(
  thread: SearchThread,
  absolutePath: string,
  regex: RegExp,
  collectLines: boolean,
  stopAfter: number,
  guard: AccessGuard | undefined,
  real: string | undefined,
): Promise<FileMatches | undefined> {
  const buffer = await readChecked(absolutePath, guard, real);
  if (buffer === undefined) return undefined; // unreadable: skip, like ripgrep
  if (buffer.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return undefined;
  const matches = await thread.matchLines(regex, buffer, collectLines, stopAfter);
  return matches.length === 0 ? undefined : { absolutePath, lines: matches };
}

function truncateLine(line: LineMatch): string {
  return line.length <= READ_MAX_LINE_LENGTH ? line.text : `${line.text.slice(0, READ_MAX_LINE_LENGTH)}… [line truncated]`;
}

/** Grep: files_with_matches (default, newest first), content, or count; head_limit caps the output. */
export async function executeGrep(input: GrepInput, context: ToolExecutionContext): Promise<ToolExecutionResult> {
  const thread = new SearchThread(context.signal);
  try {
    return await grep(input, context, thread);
  } catch (error) {
    if (!(error instanceof SearchTimeoutError)) throw error;
    return {
      isError: true,
      content: `Grep stopped: the search ran longer than ${error.timeLimitMs / 1000} s, usually a pattern with catastrophic backtracking (nested quantifiers such as (a+)+). Simplify the pattern or narrow the path or glob.`,
    };
  } finally {
    await thread.close();
  }
}

async function grep(input: GrepInput, context: ToolExecutionContext, thread: SearchThread): Promise<ToolExecutionResult> {
  const { signal } = context;
  signal.throwIfAborted();
  let regex: RegExp;
  try {
    regex = new RegExp(input.pattern, input['-i'] === true ? 'i' : '');
  } catch (error) {
    return {
      isError: true,
      content: `Invalid regular expression: ${(error as Error).message}. Patterns use JavaScript RegExp syntax; escape literal special characters with a backslash.`,
    };
  }
  const mode = input.output_mode ?? 'files_with_matches';
  const headLimit = input.head_limit ?? Infinity;

  const guard = context.access === undefined ? undefined : await AccessGuard.create(context.access, context.cwd);
  const searchRoot = guard ? guard.absolutePath(input.path ?? '.', context.cwd) : path.resolve(context.cwd, input.path ?? '.');
  const rootRefusal = guard ? await guard.checkRoot(searchRoot) : undefined;
  if (rootRefusal) return { isError: true, content: rootRefusal.message };
  const rootStat = await stat(searchRoot).catch(() => undefined);
  if (rootStat === undefined) {
    return { isError: true, content: `Path does not exist: ${searchRoot}. Current working directory: ${context.cwd}` };
  }

  let files: WalkedFile[];
  if (rootStat.isDirectory()) {
    files = [];
    for await (const file of walkFiles(searchRoot, { signal, skipDirectories: skippedDirectoriesFor(input.glob ?? '') })) files.push(file);
    files = await filterByGlob(files, input.glob, thread);
  } else {
    files = [{ absolutePath: searchRoot, relativePath: path.basename(searchRoot) }];
  }

  // With access, every file searched is checked (issue 17 §4): its real path inside the working
  // directories (or the approved root) and no Read deny rule covering it — a `Read(.env)` deny
  // holds against `Grep {glob: ".env"}`, and a linked directory leading out is not searched.
  const areas = guard ? await guard.searchAreas(searchRoot) : [];
  let hidden = 0;
  const results: FileMatches[] = [];
  const skippedLarge: string[] = [];
  let contentLines = 0;
  let contentChars = 0;
  let contentCapped = false;
  for (const file of files) {
    signal.throwIfAborted();
    const real = guard ? await guard.fileVisible(file.absolutePath, areas) : undefined;
    if (guard && real === undefined) {
      hidden += 1;
      continue;
    }
    const fileStat = await stat(real ?? file.absolutePath).catch(() => undefined);
    if (!fileStat?.isFile()) continue;
    if (fileStat.size > GREP_MAX_FILE_BYTES) {
      skippedLarge.push(file.absolutePath);
      continue;
    }
    const stopAfter = mode === 'content' ? headLimit - contentLines : mode === 'count' ? Infinity : 1;
    const found = await searchFile(thread, file.absolutePath, regex, mode === 'content', stopAfter, guard, real);
    if (found === undefined) continue;
    results.push(found);
    if (mode === 'content') {
      contentLines += found.lines.length;
      contentChars += found.lines.reduce((sum, line) => sum + Math.min(line.length, READ_MAX_LINE_LENGTH) + file.absolutePath.length + 10, 0);
      if (contentLines >= headLimit) break;
      if (contentChars > GREP_MAX_CONTENT_CHARS) {
        contentCapped = true;
        break;
      }
    }
  }
  signal.throwIfAborted();
  // Say what was not searched, so "No matches found" is not mistaken for "not there".
  const hiddenNote = hidden === 0 ? '' : `\n\n${hiddenFilesNote(hidden, 'searched')}`;
  const done = (content: string): ToolExecutionResult => ({
    isError: false,
    content:
      skippedLarge.length === 0
        ? content + hiddenNote
        : `${content}${hiddenNote}\n\n[${skippedLarge.length} ${skippedLarge.length === 1 ? 'file' : 'files'} over ${GREP_MAX_FILE_BYTES / 1024 / 1024} MB not searched: ${skippedLarge.slice(0, 10).join(', ')}${skippedLarge.length > 10 ? ', …' : ''}. Use Bash (e.g. grep) on them if needed.]`,
  });

  if (mode === 'content') {
    if (results.length === 0) return done('No matches found');
    const lines = results.flatMap((file) =>
      file.lines.map((line) =>
        input['-n'] === true
          ? `${file.absolutePath}:${line.lineNumber}:${truncateLine(line)}`
          : `${file.absolutePath}:${truncateLine(line)}`,
      ),
    );
    if (contentCapped) lines.push('[results truncated: too much output; narrow the pattern, path or glob]');
    return done(lines.join('\n'));
  }

  if (mode === 'count') {
    if (results.length === 0) return done('No matches found');
    const shown = results.slice(0, headLimit);
    const total = results.reduce((sum, file) => sum + file.lines.length, 0);
    const lines = shown.map((file) => `${file.absolutePath}:${file.lines.length}`);
    return done(
      `${lines.join('\n')}\n\nFound ${total} total ${total === 1 ? 'occurrence' : 'occurrences'} across ${results.length} ${results.length === 1 ? 'file' : 'files'}.`,
    );
  }

  if (results.length === 0) return done('No files found');
  // Newest first, as Claude Code does: recently touched files are the likeliest to matter.
  const withTimes = await Promise.all(
    results.map(async (file) => ({
      absolutePath: file.absolutePath,
      mtimeMs: (await stat(file.absolutePath).catch(() => undefined))?.mtimeMs ?? 0,
    })),
  );
  withTimes.sort((a, b) => b.mtimeMs - a.mtimeMs || a.absolutePath.localeCompare(b.absolutePath));
  const shown = withTimes.slice(0, headLimit).map((file) => file.absolutePath);
  const header =
    shown.length < withTimes.length
      ? `Found ${withTimes.length} files (showing first ${shown.length})`
      : `Found ${withTimes.length} ${withTimes.length === 1 ? 'file' : 'files'}`;
  return done(`${header}\n${shown.join('\n')}`);
}
