/**
 * Glob tool implementation on ripgrep (`rg --files` with the pattern as an anchored glob), ordered
 * as Claude Code orders it: newest first, at most GLOB_MAX_RESULTS. Hidden files and files a
 * .gitignore ignores are listed (Claude Code's Glob lists them too); version-control directories
 * and node_modules are skipped unless the pattern names them.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { GLOB_MAX_RESULTS, type GlobInput } from '../../common/tools/glob';
import { GLOB_CHARACTERS, splitStaticPrefix } from '../permission-facts/paths';
import { RipgrepMissingError, runRipgrep } from './ripgrep';
import { excludedDirectoryGlobs, searchRoot, visibilityFilter } from './search-scope';
import type { ToolExecutionContext, ToolExecutionResult } from './types';

/**
 * ripgrep's arguments for the part of a pattern after its static prefix. The glob is anchored
 * with a leading `/` (gitignore semantics), so `*.ts` means the top level, as a glob should, not
 * any depth; without `**` the walk stops at the pattern's depth.
 */
export function globArguments(rest: string, pattern: string): string[] {
  // --sortr=modified: ripgrep stats each file and lists newest first, cheaper than a stat per file
  // from Node afterwards (listing is I/O-bound, so its walk going single-threaded costs little).
  const args = ['--no-config', '--files', '--hidden', '--no-ignore', '--null', '--sortr=modified', `--glob=/${rest}`, ...excludedDirectoryGlobs(pattern)];
  if (!rest.includes('**')) args.push(`--max-depth=${rest.split('/').length}`);
  args.push('--', '.');
  return args;
}

/** Glob: absolute paths of matching files, newest first, capped at GLOB_MAX_RESULTS. */
export async function executeGlob(input: GlobInput, context: ToolExecutionContext): Promise<ToolExecutionResult> {
  const { signal } = context;
  signal.throwIfAborted();
  const scope = await searchRoot(input.path, context, (root) => `Directory does not exist: ${root}. Current working directory: ${context.cwd}`);
  if (!scope.ok) return { isError: true, content: scope.message };
  if (!scope.isDirectory) {
    return { isError: true, content: `Path is not a directory: ${scope.root}. Pass a directory as path, or use Read for a file.` };
  }
  const { prefix, rest } = splitStaticPrefix(input.pattern);
  const walkRoot = scope.guard ? scope.guard.absolutePath(prefix || '.', scope.root) : path.resolve(scope.root, prefix);
  // With access, every file listed is checked (issue 17 §4): its real path inside the working
  // directories (or the approved root) and no Read deny rule covering it.
  const filter = await visibilityFilter(scope.guard, walkRoot);

  const found: string[] = [];
  let literal: string | undefined;
  if (!GLOB_CHARACTERS.test(rest)) {
    // A literal path: no walk needed.
    literal = path.join(walkRoot, rest);
    if ((await stat(literal).catch(() => undefined))?.isFile()) found.push(literal);
  } else if ((await stat(walkRoot).catch(() => undefined))?.isDirectory()) {
    try {
      // ripgrep matches --glob against paths relative to its working directory: it runs in walkRoot.
      await runRipgrep(globArguments(rest, input.pattern), {
        signal,
        cwd: walkRoot,
        separator: '\0',
        onRecord: (record) => {
          const file = path.join(walkRoot, record);
          filter.observe(file);
          found.push(file);
          return true;
        },
      });
    } catch (error) {
      if (error instanceof RipgrepMissingError) return { isError: true, content: error.message };
      throw error;
    }
  }
  signal.throwIfAborted();
  // A literal path may itself be a link: the full check. Files from the walk: the per-directory one.
  const shown =
    literal !== undefined ? new Set(found.length > 0 && (await filter.visible(literal)) ? [literal] : []) : await filter.visibleSet(found, walkRoot);
  const matches = found.filter((file) => shown.has(file));

  const hiddenNote = filter.note('listed');
  if (matches.length === 0) return { isError: false, content: `No files found${hiddenNote}` };
  const sorted = matches; // newest first, from ripgrep
  const lines = sorted.slice(0, GLOB_MAX_RESULTS);
  if (sorted.length > GLOB_MAX_RESULTS) {
    lines.push(`(Results are truncated: showing ${GLOB_MAX_RESULTS} of ${sorted.length} files. Consider using a more specific path or pattern.)`);
  }
  return { isError: false, content: lines.join('\n') + hiddenNote };
}
