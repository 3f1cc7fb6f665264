/**
 * Pathname expansion as Bash does it (issue 29 §3), on the real file system, so the permission
 * check judges every path a glob word becomes, not its first segment: `cat certs/*.key` reads
 * `certs/server.key`, `cat lnk?/secret` reads through a link that may lead out.
 *
 * Bash's defaults: `*`, `?` and `[…]` never match a leading `.` unless the pattern has one there
 * (no dotglob); a word that matches nothing stays as written (nullglob and failglob off); `**` is
 * `*` (no globstar); no extglob. `..` is matched by a pattern that starts with `.` (bash before 5.2
 * does; 5.2's globskipdots does not — the check takes the wider reading). Each segment is matched
 * with picomatch (style §21), as the path rules are.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch/posix';

/** More matches than this and the expansion is not followed (the command asks). */
export const MAX_GLOB_MATCHES = 1_000;

const SEGMENT_OPTIONS = { dot: false, nobrace: true, noextglob: true, nonegate: true, posix: true } as const;

/** Splits an escaped pattern (`\x` is a literal x) at unescaped slashes. */
function splitSegments(pattern: string): string[] {
  const segments: string[] = [];
  let start = 0;
  for (let slash = findUnescaped(pattern, '/'); slash >= 0; slash = findUnescaped(pattern, '/', start)) {
    segments.push(pattern.slice(start, slash));
    start = slash + 1;
  }
  return [...segments, pattern.slice(start)];
}

/** An escaped pattern as text: each backslash-escaped character is itself. */
export function unescapePattern(pattern: string): string {
  let out = '';
  for (let index = 0; index < pattern.length; index++) {
    if (pattern[index] === '\\' && index + 1 < pattern.length) index++;
    out += pattern[index];
  }
  return out;
}

/** Index of the first unescaped occurrence of one of `chars` at or after `from`, or -1. */
export function findUnescaped(pattern: string, chars: string, from = 0): number {
  for (let index = from; index < pattern.length; index++) {
    if (pattern[index] === '\\') {
      index++;
      continue;
    }
    if (chars.includes(pattern[index])) return index;
  }
  return -1;
}

/** Whether an escaped pattern has a wildcard (`*`, `?`, `[`) Bash would expand. */
export function hasGlob(pattern: string): boolean {
  return findUnescaped(pattern, '*?[') >= 0;
}

export type GlobExpansion = { matches: string[] } | { tooMany: true };

/**
 * The paths an escaped glob pattern (quoted characters backslash-escaped) expands to from `cwd`,
 * as Bash writes them (relative patterns stay relative); `[]` when nothing matches — the caller
 * then uses the word as written, as Bash does.
 */
export async function expandGlob(pattern: string, cwd: string, limit = MAX_GLOB_MATCHES): Promise<GlobExpansion> {
  const absolute = pattern.startsWith('/');
  const segments = splitSegments(absolute ? pattern.slice(1) : pattern);
  const root = absolute ? '/' : '';
  const join = (prefix: string, name: string) => (prefix === '' ? name : prefix === '/' ? `/${name}` : `${prefix}/${name}`);
  let candidates = [root];
  for (const segment of segments) {
    if (!hasGlob(segment)) {
      const literal = unescapePattern(segment);
      candidates = candidates.map((prefix) => join(prefix, literal));
      continue;
    }
    const matcher = picomatch(segment, SEGMENT_OPTIONS);
    // Without dotglob a leading `.` is matched only by a literal `.` (picomatch's `[!s]` would take it).
    const leadingDot = segment.startsWith('.') || segment.startsWith('\\.');
    const next: string[] = [];
    for (const prefix of candidates) {
      const names = await readdir(prefix === '' ? cwd : path.posix.resolve(cwd, prefix)).catch(() => [] as string[]);
      // `..` leads out of the directory (`.` stays in it): bash before 5.2 matches it with `.*`.
      for (const name of leadingDot ? ['..', ...names] : names) {
        if (name.startsWith('.') && !leadingDot) continue;
        if (!matcher(name)) continue;
        next.push(join(prefix, name));
        if (next.length > limit) return { tooMany: true };
      }
    }
    if (next.length === 0) return { matches: [] };
    candidates = next;
  }
  return { matches: [...new Set(candidates)].sort() };
}
