/**
 * What Grep and Glob share around ripgrep: the directories they skip, the Read-deny/real-path
 * filter every returned file passes (issue 17 §4), and the note about files left out.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { resolveRealPath, type RealPath } from '../permission-facts/paths';
import { AccessGuard, AccessRefusal } from './access';
import type { ToolExecutionContext } from './types';

/** Version-control directories never searched or listed (Claude Code skips the same). */
export const VCS_DIRECTORIES = ['.git', '.svn', '.hg', '.bzr', '.jj', '.sl'] as const;

/**
 * ripgrep `--glob` exclusions: the VCS directories, and node_modules unless the search names it
 * (in its pattern, path or glob) — a dependency tree drowns a project's own results.
 */
export function excludedDirectoryGlobs(...mentions: (string | undefined)[]): string[] {
  const named = mentions.some((mention) => mention?.includes('node_modules') === true);
  return [...VCS_DIRECTORIES, ...(named ? [] : ['node_modules'])].map((directory) => `--glob=!${directory}`);
}

/** The root of a search, resolved and checked; or the tool error to return. */
export type SearchRoot = { ok: true; root: string; isDirectory: boolean; guard: AccessGuard | undefined } | { ok: false; message: string };

/** Resolves and checks the root of Grep or Glob (`missing` words the error for a missing path). */
export async function searchRoot(literal: string | undefined, context: ToolExecutionContext, missing: (root: string) => string): Promise<SearchRoot> {
  const guard = context.access === undefined ? undefined : await AccessGuard.create(context.access, context.cwd);
  const root = guard ? guard.absolutePath(literal ?? '.', context.cwd) : path.resolve(context.cwd, literal ?? '.');
  const refusal: AccessRefusal | undefined = guard ? await guard.checkRoot(root) : undefined;
  if (refusal) return { ok: false, message: refusal.message };
  const rootStat = await stat(root).catch(() => undefined);
  if (rootStat === undefined) return { ok: false, message: missing(root) };
  return { ok: true, root, isDirectory: rootStat.isDirectory(), guard };
}

/** The filter for files found under `walkRoot` (which, outside the working directories, the decision allowed). */
export async function visibilityFilter(guard: AccessGuard | undefined, walkRoot: string): Promise<VisibilityFilter> {
  return new VisibilityFilter(guard, guard ? await guard.searchAreas(walkRoot) : []);
}

/**
 * With access, every file ripgrep returns is checked (issue 17 §4): its real path inside the
 * working directories (or the approved root) and no Read deny rule covering it — a `Read(.env)`
 * deny holds against `Grep {glob: ".env"}`. ripgrep does not follow links while it walks (no
 * `--follow`), and a file it reached through a link leading out fails the real-path check.
 */
export class VisibilityFilter {
  /** Full checks (a root or literal path, which may be a link). */
  private readonly seen = new Map<string, Promise<boolean>>();
  /** Checks of files from ripgrep's walk (never links). */
  private readonly walked = new Map<string, Promise<boolean>>();
  private readonly realDirectories = new Map<string, Promise<RealPath>>();
  /** Distinct files left out. */
  hidden = 0;

  constructor(
    private readonly guard: AccessGuard | undefined,
    private readonly areas: readonly string[],
  ) {}

  /** Whether the file may be shown; remembered per path (content mode asks once per line). */
  visible(absolutePath: string): Promise<boolean> | boolean {
    if (this.guard === undefined) return true;
    let answer = this.seen.get(absolutePath);
    if (answer === undefined) {
      answer = this.check(this.guard, absolutePath).then((shown) => {
        if (!shown) this.hidden += 1;
        return shown;
      });
      this.seen.set(absolutePath, answer);
    }
    return answer;
  }

  /** The full check of one file that may itself be a link (a root, a literal Glob path): as Read resolves it. */
  private async check(guard: AccessGuard, absolutePath: string): Promise<boolean> {
    return (await guard.fileVisible(absolutePath, this.areas)) !== undefined;
  }

  /**
   * The files of `paths`, found by ripgrep's walk under `walkRoot`, that may be shown. ripgrep
   * does not follow links while it walks (no `--follow`): a file it found below the root was not a
   * link, so its real path is its directory's real path plus its name — one realpath per
   * directory instead of one per file (a large search returns thousands of files from far fewer
   * directories), and the Read deny rules on both paths. The root itself (Grep on one file, which
   * may be a link) gets the full check.
   */
  async visibleSet(paths: Iterable<string>, walkRoot: string): Promise<Set<string>> {
    const unique = [...new Set(paths)];
    if (this.guard === undefined) return new Set(unique);
    const answers = await Promise.all(unique.map((file) => (file === walkRoot ? this.visible(file) : this.walkedVisible(file))));
    return new Set(unique.filter((_, index) => answers[index]));
  }

  /**
   * Starts checking a file ripgrep's walk just returned, while ripgrep goes on searching (the
   * directory's realpath runs on libuv's pool meanwhile); visibleSet then finds it decided.
   */
  observe(file: string): void {
    if (this.guard !== undefined) void this.walkedVisible(file);
  }

  private walkedVisible(file: string): Promise<boolean> {
    const guard = this.guard!;
    let answer = this.walked.get(file);
    if (answer === undefined) {
      answer = this.realDirectory(path.dirname(file)).then(({ real, loop }) => {
        const shown = !loop && guard.visibleAt(file, path.join(real, path.basename(file)), this.areas);
        if (!shown) this.hidden += 1;
        return shown;
      });
      this.walked.set(file, answer);
    }
    return answer;
  }

  private realDirectory(directory: string): Promise<RealPath> {
    let real = this.realDirectories.get(directory);
    if (real === undefined) {
      real = resolveRealPath(directory);
      this.realDirectories.set(directory, real);
    }
    return real;
  }

  /** Says that some files were left out, without naming them (their names may be what a rule hides). */
  note(verb: 'listed' | 'searched'): string {
    if (this.hidden === 0) return '';
    const count = this.hidden;
    return `\n\n[${count} ${count === 1 ? 'file' : 'files'} not ${verb}: outside the working directories (through a symbolic link) or covered by a Read deny rule.]`;
  }
}

/** Modification times, started as ripgrep returns each file (the stats overlap its search). */
export class ModificationTimes {
  private readonly times = new Map<string, Promise<number>>();

  observe(file: string): void {
    if (!this.times.has(file))
      this.times.set(
        file,
        stat(file).then(
          (entry) => entry.mtimeMs,
          () => 0,
        ),
      );
  }

  of(file: string): Promise<number> {
    this.observe(file);
    return this.times.get(file)!;
  }
}

/** Newest first, then by path, as Claude Code orders Glob and files_with_matches: recent files matter most. */
export async function sortByModificationTime(paths: readonly string[], times = new ModificationTimes()): Promise<string[]> {
  const withTimes = await Promise.all(paths.map(async (file) => ({ file, mtimeMs: await times.of(file) })));
  withTimes.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return withTimes.map((entry) => entry.file);
}
