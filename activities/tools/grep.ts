/** Grep tool implementation: pure JS (RegExp over files), no ripgrep dependency on the worker host. */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { GrepInput } from '../../common/tools/grep';
import { READ_MAX_LINE_LENGTH } from '../../common/tools/read';
import { BINARY_SNIFF_BYTES } from './files';
import { globToRegExp, skippedDirectoriesFor, walkFiles, type WalkedFile } from './glob';
import type { ToolExecutionContext, ToolExecutionResult } from './types';

/** Files larger than this are skipped (generated bundles, data dumps). */
export const GREP_MAX_FILE_BYTES = 20 * 1024 * 1024;
/** Content mode stops collecting past this many characters; the caller's result budget is far smaller. */
const GREP_MAX_CONTENT_CHARS = 10 * 1024 * 1024;

interface FileMatches {
  readonly absolutePath: string;
  readonly lines: { readonly lineNumber: number; readonly text: string }[];
}

/** A `glob` without `/` matches the file name anywhere (ripgrep semantics); with `/`, the relative path. */
function globFilter(glob: string | undefined): ((file: WalkedFile) => boolean) | undefined {
  if (glob === undefined) return undefined;
  const matcher = globToRegExp(glob.replace(/^\.\//, ''));
  if (!glob.includes('/')) return (file) => matcher.test(path.posix.basename(file.relativePath));
  return (file) => matcher.test(file.relativePath);
}

async function searchFile(
  absolutePath: string,
  regex: RegExp,
  collectLines: boolean,
  stopAfter: number,
): Promise<FileMatches | undefined> {
  const buffer = await readFile(absolutePath).catch(() => undefined);
  if (buffer === undefined) return undefined; // unreadable: skip, like ripgrep
  if (buffer.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return undefined;
  const lines = buffer.toString('utf8').split(/\r?\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const matches: { lineNumber: number; text: string }[] = [];
  for (let index = 0; index < lines.length && matches.length < stopAfter; index += 1) {
    if (regex.test(lines[index])) matches.push({ lineNumber: index + 1, text: collectLines ? lines[index] : '' });
  }
  return matches.length === 0 ? undefined : { absolutePath, lines: matches };
}

function truncateLine(line: string): string {
  return line.length <= READ_MAX_LINE_LENGTH ? line : `${line.slice(0, READ_MAX_LINE_LENGTH)}… [line truncated]`;
}

/** Grep: files_with_matches (default, newest first), content, or count; head_limit caps the output. */
export async function executeGrep(input: GrepInput, context: ToolExecutionContext): Promise<ToolExecutionResult> {
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

  const searchRoot = path.resolve(context.cwd, input.path ?? '.');
  const rootStat = await stat(searchRoot).catch(() => undefined);
  if (rootStat === undefined) {
    return { isError: true, content: `Path does not exist: ${searchRoot}. Current working directory: ${context.cwd}` };
  }

  const files: AsyncIterable<WalkedFile> | WalkedFile[] = rootStat.isDirectory()
    ? walkFiles(searchRoot, { signal, skipDirectories: skippedDirectoriesFor(input.glob ?? '') })
    : [{ absolutePath: searchRoot, relativePath: path.basename(searchRoot) }];
  const include = rootStat.isDirectory() ? globFilter(input.glob) : undefined;

  const results: FileMatches[] = [];
  let contentLines = 0;
  let contentChars = 0;
  let contentCapped = false;
  for await (const file of files) {
    signal.throwIfAborted();
    if (include && !include(file)) continue;
    const fileStat = await stat(file.absolutePath).catch(() => undefined);
    if (!fileStat?.isFile() || fileStat.size > GREP_MAX_FILE_BYTES) continue;
    const stopAfter = mode === 'content' ? headLimit - contentLines : mode === 'count' ? Infinity : 1;
    const found = await searchFile(file.absolutePath, regex, mode === 'content', stopAfter);
    if (found === undefined) continue;
    results.push(found);
    if (mode === 'content') {
      contentLines += found.lines.length;
      contentChars += found.lines.reduce((sum, line) => sum + line.text.length + file.absolutePath.length + 10, 0);
      if (contentLines >= headLimit) break;
      if (contentChars > GREP_MAX_CONTENT_CHARS) {
        contentCapped = true;
        break;
      }
    }
  }
  signal.throwIfAborted();

  if (mode === 'content') {
    if (results.length === 0) return { isError: false, content: 'No matches found' };
    const lines = results.flatMap((file) =>
      file.lines.map((line) =>
        input['-n'] === true
          ? `${file.absolutePath}:${line.lineNumber}:${truncateLine(line.text)}`
          : `${file.absolutePath}:${truncateLine(line.text)}`,
      ),
    );
    if (contentCapped) lines.push('[results truncated: too much output; narrow the pattern, path or glob]');
    return { isError: false, content: lines.join('\n') };
  }

  if (mode === 'count') {
    if (results.length === 0) return { isError: false, content: 'No matches found' };
    const shown = results.slice(0, headLimit);
    const total = results.reduce((sum, file) => sum + file.lines.length, 0);
    const lines = shown.map((file) => `${file.absolutePath}:${file.lines.length}`);
    return {
      isError: false,
      content: `${lines.join('\n')}\n\nFound ${total} total ${total === 1 ? 'occurrence' : 'occurrences'} across ${results.length} ${results.length === 1 ? 'file' : 'files'}.`,
    };
  }

  if (results.length === 0) return { isError: false, content: 'No files found' };
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
  return { isError: false, content: `${header}\n${shown.join('\n')}` };
}
