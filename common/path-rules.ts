/**
 * Path rules (`Read(src/**)`, `Edit(//etc/**)`, `Read(~/.ssh/**)`): where a rule's pattern is
 * anchored, and the glob that matches below the anchor. Pure, imported by the workflow bundle.
 *
 * The glob is picomatch's (style §21: a format with a spec gets its library), pinned to an exact
 * version in package.json because the workflow bundle imports it. The anchoring is gitignore's,
 * as Claude Code's rules: `//abs` from the file system root, `~/` from the home directory, `/x`
 * from the workspace root, `./x` and a pattern with a slash from the workspace root, and a bare
 * pattern without a slash at any depth. A pattern that matches a directory matches everything
 * inside it.
 */
import picomatch from 'picomatch/posix';

// ---- POSIX paths, lexical (the workflow cannot look at the file system) ----

/** Normalizes an absolute POSIX path: no `.`/`..`/duplicate slashes, no trailing slash. */
export function normalizePath(absolute: string): string {
  const parts: string[] = [];
  for (const part of absolute.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

/** `target` resolved against `base` (both POSIX). */
export function resolvePath(base: string, target: string): string {
  return normalizePath(target.startsWith('/') ? target : `${base}/${target}`);
}

/** True when `target` is `directory` or inside it. */
export function isInside(target: string, directory: string): boolean {
  const dir = normalizePath(directory);
  return target === dir || target.startsWith(dir === '/' ? '/' : `${dir}/`);
}

// ---- rule patterns ----

/**
 * picomatch options for rule patterns:
 * - `dot`: `*` and `**` match dotfiles (gitignore does; a `Read(**)` deny must cover `.env`);
 * - `nonegate`: a leading `!` is literal — a negated allow rule (`Edit(!x)`) would allow everything;
 * - `noextglob`: no `+(a|b)` / `!(x)` (gitignore has none);
 * - `posix`: needed for `[!a]` to negate — without it picomatch 4.0.7 reads `!` as a class
 *   member (micromatch/picomatch#187), so `[!a]` would match exactly `a`.
 */
const MATCH_OPTIONS = { dot: true, nonegate: true, noextglob: true, posix: true } as const;

/** Compiled patterns: rules are few and matched on every call. Bounded; deterministic. */
const compiled = new Map<string, (subject: string) => boolean>();
const COMPILED_LIMIT = 1_000;

function matcherFor(pattern: string): (subject: string) => boolean {
  let matcher = compiled.get(pattern);
  if (matcher === undefined) {
    if (compiled.size >= COMPILED_LIMIT) compiled.clear();
    matcher = picomatch(pattern, MATCH_OPTIONS);
    compiled.set(pattern, matcher);
  }
  return matcher;
}

/** A rule pattern as a RegExp over `/`-separated relative paths (picomatch's, with the rule options). */
export function globToRegExp(pattern: string): RegExp {
  return picomatch.makeRe(pattern, MATCH_OPTIONS);
}

export interface PathRuleContext {
  /** The workspace root: `/x`, `./x` and relative patterns start here. */
  cwd: string;
  /** For `~/` patterns; without it they match nothing. */
  homeDir?: string;
}

/** Where a rule's pattern is anchored (absolute) and the glob below it; undefined when it cannot apply. */
export function anchorPathRule(content: string, context: PathRuleContext): { root: string; pattern: string } | undefined {
  let pattern = content;
  let base: string;
  if (pattern.startsWith('//')) {
    base = '/';
    pattern = pattern.slice(2);
  } else if (pattern === '~' || pattern.startsWith('~/')) {
    if (!context.homeDir) return undefined;
    base = context.homeDir;
    pattern = pattern.slice(2);
  } else if (pattern.startsWith('/')) {
    base = context.cwd;
    pattern = pattern.slice(1);
  } else {
    base = context.cwd;
    if (pattern.startsWith('./') || pattern.startsWith('../')) {
      // Anchored; leading `./` and `../` move the anchor (`Read(../secrets/**)` means the sibling directory).
    } else if (!pattern.replace(/\/$/, '').includes('/')) {
      // gitignore: a pattern with no slash (other than a trailing one) matches at any depth.
      pattern = `**/${pattern}`;
    }
  }
  let root = normalizePath(base);
  for (;;) {
    if (pattern.startsWith('./')) pattern = pattern.slice(2);
    else if (pattern.startsWith('../')) {
      root = normalizePath(`${root}/..`);
      pattern = pattern.slice(3);
    } else if (pattern === '.' || pattern === '..') {
      if (pattern === '..') root = normalizePath(`${root}/..`);
      pattern = '';
    } else break;
  }
  return { root, pattern: pattern.replace(/\/+$/, '') };
}

/**
 * Whether a path rule's pattern (the text inside `Read(…)`, `Edit(…)`) matches `target`, an
 * absolute normalised path. Callers match both the literal path and its real path.
 */
export function pathMatchesRule(content: string, target: string, context: PathRuleContext): boolean {
  const anchored = anchorPathRule(content, context);
  if (anchored === undefined) return false;
  const { root, pattern } = anchored;
  if (!isInside(target, root)) return false;
  if (pattern === '' || pattern === '**') return true;
  const relative = target === root ? '' : target.slice(root === '/' ? 1 : root.length + 1);
  if (relative === '') return false;
  const matches = matcherFor(pattern);
  // A pattern that matches a directory matches everything inside it.
  const segments = relative.split('/');
  for (let length = segments.length; length >= 1; length--) {
    if (matches(segments.slice(0, length).join('/'))) return true;
  }
  return false;
}

/**
 * Whether a path rule may match something inside `directory` (absolute, normalised): its anchor is
 * inside, or its pattern's segments agree with the directory's as far as the directory goes (a
 * `**` agrees with anything). A file deleted long ago matches as well as one that exists.
 */
export function ruleMayMatchInside(content: string, directory: string, context: PathRuleContext): boolean {
  const anchored = anchorPathRule(content, context);
  if (anchored === undefined) return false;
  const { root, pattern } = anchored;
  if (isInside(root, directory)) return true;
  if (!isInside(directory, root)) return false;
  if (pattern === '') return true;
  const below = directory.slice(root === '/' ? 1 : root.length + 1).split('/');
  const segments = pattern.split('/');
  for (let index = 0; index < below.length; index++) {
    const segment = segments[index];
    if (segment === undefined) return true; // the pattern named a directory above: it covers everything inside
    if (segment === '**') return true;
    if (!globToRegExp(segment).test(below[index])) return false;
  }
  return true;
}
