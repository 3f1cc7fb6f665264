/**
 * Grep tool implementation on ripgrep (./ripgrep), with Claude Code's parameters and behaviour:
 * hidden files searched, .gitignore honoured, binary files and VCS directories skipped,
 * files_with_matches newest first, head_limit (default 250, 0 = all) and offset on every mode.
 */
import path from 'node:path';
import { READ_MAX_LINE_LENGTH } from '../../common/tools/read';
import { GREP_DEFAULT_HEAD_LIMIT, type GrepInput } from '../../common/tools/grep';
import { needsPcre2, PCRE2_TIME_LIMIT_MS, regexErrorSummary, RipgrepMissingError, RipgrepTimeoutError, runRipgrep } from './ripgrep';
import { excludedDirectoryGlobs, ModificationTimes, searchRoot, sortByModificationTime, visibilityFilter, type VisibilityFilter } from './search-scope';
import type { ToolExecutionContext, ToolExecutionResult } from './types';

/** Content mode stops reading ripgrep past this many characters; the caller's result budget is far smaller. */
const GREP_MAX_CONTENT_CHARS = 10 * 1024 * 1024;

/**
 * The glob parameter as ripgrep globs: Claude Code splits it on whitespace and on commas outside
 * braces, so `"*.ts, *.tsx"` and `"*.{ts,tsx}"` both work.
 */
export function splitGlobParameter(glob: string): string[] {
  const parts: string[] = [];
  let current = '';
  let depth = 0;
  for (const char of glob) {
    if (char === '{') depth += 1;
    if (char === '}' && depth > 0) depth -= 1;
    if ((char === ',' && depth === 0) || /\s/.test(char)) {
      if (current !== '') parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  if (current !== '') parts.push(current);
  return parts;
}

/** ripgrep's arguments for one Grep call (the pattern goes after `-e`, so a leading `-` is safe). */
export function grepArguments(input: GrepInput, target: string, pcre2: boolean): string[] {
  const mode = input.output_mode ?? 'files_with_matches';
  const args = ['--no-config', '--hidden', '--with-filename', '--null', '--color=never', ...excludedDirectoryGlobs(input.path, input.glob, input.pattern)];
  if (pcre2) args.push('--pcre2');
  if (input.multiline === true) args.push('--multiline', '--multiline-dotall');
  if (input['-i'] === true) args.push('--ignore-case');
  if (mode === 'files_with_matches') args.push('--files-with-matches');
  else if (mode === 'count') args.push('--count');
  else {
    // Always numbered: the line number tells a match (`N:`) from a context line (`N-`); -n only decides the display.
    args.push('--line-number', `--max-columns=${READ_MAX_LINE_LENGTH}`, '--max-columns-preview');
    if (input['-C'] !== undefined) args.push(`--context=${input['-C']}`);
    else {
      if (input['-B'] !== undefined) args.push(`--before-context=${input['-B']}`);
      if (input['-A'] !== undefined) args.push(`--after-context=${input['-A']}`);
    }
  }
  if (input.type !== undefined) args.push(`--type=${input.type}`);
  for (const glob of input.glob === undefined ? [] : splitGlobParameter(input.glob)) args.push(`--glob=${glob}`);
  args.push('--regexp', input.pattern, '--', target);
  return args;
}

/** Grep: files_with_matches (default, newest first), content, or count; head_limit and offset page the output. */
export async function executeGrep(input: GrepInput, context: ToolExecutionContext): Promise<ToolExecutionResult> {
  context.signal.throwIfAborted();
  const scope = await searchRoot(input.path, context, (root) => `Path does not exist: ${root}. Current working directory: ${context.cwd}`);
  if (!scope.ok) return { isError: true, content: scope.message };
  const filter = await visibilityFilter(scope.guard, scope.root);
  try {
    const first = await search(input, scope, filter, context.signal, false);
    if (!('needsPcre2' in first)) return first;
    return (await search(input, scope, filter, context.signal, true)) as ToolExecutionResult;
  } catch (error) {
    if (error instanceof RipgrepMissingError) return { isError: true, content: error.message };
    if (error instanceof RipgrepTimeoutError) {
      return {
        isError: true,
        content: `Grep stopped: the search ran longer than ${error.timeLimitMs / 1000} s. The pattern needs PCRE2 (look-around or backreferences), which backtracks; nested quantifiers such as (a+)+ can take forever. Simplify the pattern, or narrow the path or glob.`,
      };
    }
    throw error;
  }
}

type Outcome = ToolExecutionResult | { needsPcre2: true };

async function search(
  input: GrepInput,
  scope: { root: string; isDirectory: boolean },
  filter: VisibilityFilter,
  signal: AbortSignal,
  pcre2: boolean,
): Promise<Outcome> {
  const mode = input.output_mode ?? 'files_with_matches';
  const headLimit = input.head_limit === undefined ? GREP_DEFAULT_HEAD_LIMIT : input.head_limit === 0 ? Infinity : input.head_limit;
  const offset = input.offset ?? 0;
  const showLineNumbers = input['-n'] ?? true;
  // ripgrep matches --glob against paths relative to its working directory, so it runs in the
  // root (or the file's directory) and its relative paths are made absolute again here.
  const cwd = scope.isDirectory ? scope.root : path.dirname(scope.root);
  const args = grepArguments(input, scope.isDirectory ? '.' : path.basename(scope.root), pcre2);
  const timeLimitMs = pcre2 ? PCRE2_TIME_LIMIT_MS : undefined;

  // Records arrive as `path\0rest` (content: `N:text` or `N-text`; count: `N`), or as bare paths
  // for files_with_matches (NUL-terminated). The visibility check is async, so records are
  // collected first and filtered after; content mode stops ripgrep once enough lines are in.
  const records: { file: string; rest: string }[] = [];
  const times = new ModificationTimes();
  let contentChars = 0;
  let capped = false;
  const run = await runRipgrep(args, {
    signal,
    timeLimitMs,
    cwd,
    separator: mode === 'files_with_matches' ? '\0' : '\n',
    onRecord: (record) => {
      if (mode === 'files_with_matches') {
        const file = path.join(cwd, record);
        if (scope.isDirectory) filter.observe(file);
        times.observe(file);
        records.push({ file, rest: '' });
        return true;
      }
      const nul = record.indexOf('\0');
      if (nul === -1) records.push({ file: '', rest: record });
      else {
        const file = path.join(cwd, record.slice(0, nul));
        if (scope.isDirectory && file !== records.at(-1)?.file) filter.observe(file);
        records.push({ file, rest: record.slice(nul + 1) });
      }
      if (mode !== 'content') return true;
      contentChars += record.length;
      // Denied files' lines are dropped later, so read a margin past the page; the char cap bounds memory.
      if (contentChars > GREP_MAX_CONTENT_CHARS) {
        capped = true;
        return false;
      }
      return records.length < (offset + headLimit) * 2 + 1_000;
    },
  });
  if (run.code === 2 && records.length === 0) {
    if (!pcre2 && needsPcre2(run.stderr)) return { needsPcre2: true };
    if (run.stderr.includes('regex parse error') || run.stderr.includes('PCRE2')) {
      return {
        isError: true,
        content: `Invalid regular expression: ${input.pattern} — ${regexErrorSummary(run.stderr)}. Patterns use Rust regex syntax (ripgrep); escape literal special characters such as ( [ { with a backslash.`,
      };
    }
    if (run.stderr.includes('unrecognized file type')) {
      return {
        isError: true,
        content: `${regexErrorSummary(run.stderr.replace(/^rg: /gm, 'error: '))}. Valid types are ripgrep's (rg --type-list), e.g. js, ts, py, rust, go, java.`,
      };
    }
    if (run.stderr.trim() !== '') return { isError: true, content: `Grep failed: ${run.stderr.trim().replace(/^rg: /gm, '')}` };
  }
  signal.throwIfAborted();

  const shownFiles = await filter.visibleSet(
    records.filter((record) => record.file !== '').map((record) => record.file),
    scope.root,
  );
  const visible = records.filter((record) => record.file === '' || shownFiles.has(record.file));
  const done = (content: string): ToolExecutionResult => ({ isError: false, content: content + filter.note('searched') });
  const page = <T>(items: readonly T[]): T[] => items.slice(offset, offset + headLimit);
  const pageNote = (shown: number, total: number, unit: string): string =>
    shown < total || offset > 0
      ? ` (showing ${shown === 0 ? 'none' : `${offset + 1}–${offset + shown}`} of ${total} ${unit}; use offset/head_limit for more)`
      : '';

  if (mode === 'content') {
    const lines = visible.map(({ file, rest }) => {
      if (file === '') return rest; // `--` between context groups
      const numbered = /^(\d+)([:-])/.exec(rest);
      if (numbered === null) return `${file}:${rest}`;
      const separator = numbered[2];
      return showLineNumbers ? `${file}${separator}${rest}` : `${file}${separator}${rest.slice(numbered[0].length)}`;
    });
    while (lines.length > 0 && lines[lines.length - 1] === '--') lines.pop();
    if (lines.length === 0) return done('No matches found');
    const shown = page(lines);
    const more = run.stoppedEarly || lines.length > offset + shown.length;
    if (more)
      shown.push(
        capped
          ? '[results truncated: too much output; narrow the pattern, path or glob]'
          : `[more lines follow: showing lines ${offset + 1}–${offset + shown.length}; use offset to see more]`,
      );
    if (shown.length === 0) return done(`No lines at offset ${offset} (${lines.length} found)`);
    return done(shown.join('\n'));
  }

  if (mode === 'count') {
    const counts = visible.map(({ file, rest }) => ({ file, count: Number(rest) }));
    if (counts.length === 0) return done('No matches found');
    const total = counts.reduce((sum, entry) => sum + entry.count, 0);
    const shown = page(counts);
    const lines = shown.map((entry) => `${entry.file}:${entry.count}`);
    return done(
      `${lines.join('\n')}\n\nFound ${total} total ${total === 1 ? 'occurrence' : 'occurrences'} across ${counts.length} ${counts.length === 1 ? 'file' : 'files'}.${pageNote(shown.length, counts.length, 'files')}`,
    );
  }

  if (visible.length === 0) return done('No files found');
  const sorted = await sortByModificationTime(
    visible.map((record) => record.file),
    times,
  );
  const shown = page(sorted);
  const header =
    shown.length < sorted.length
      ? `Found ${sorted.length} files (showing ${offset === 0 ? `first ${shown.length}` : `${shown.length} from offset ${offset}`})`
      : `Found ${sorted.length} ${sorted.length === 1 ? 'file' : 'files'}`;
  return done([header, ...shown].join('\n'));
}
