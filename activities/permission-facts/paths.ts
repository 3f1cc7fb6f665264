/**
 * Path facts for the file tools, gathered on the workspace's host (style §20, issue 17 §4): the
 * literal path, its lexical absolute form, and the real path the tool will actually touch — every
 * symbolic link resolved, and for a path that does not exist yet, the real path of its nearest
 * existing parent joined with the rest. The workflow's rule engine decides on both the literal and
 * the real path; the tools re-check the real path where they act (activities/tools/access.ts).
 */
import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { CallFacts, PathAccess, PathFact } from '../../common/permission-facts';
import { normalizePath } from '../../common/path-rules';
import { getToolSpec } from '../../common/tool-specs';

/** Links followed before a path counts as a loop (Linux's own limit). */
const MAX_LINK_HOPS = 40;

/** `~` and `~/…` expanded (the only forms the file tools expand; `~user` stays a relative name). */
export function expandHome(literal: string, homeDir: string): string {
  if (literal === '~') return homeDir;
  if (literal.startsWith('~/')) return `${homeDir}/${literal.slice(2)}`;
  return literal;
}

/** The literal as an absolute, lexically normalised path against `base`, `~` expanded. */
export function absolutePathOf(literal: string, base: string, homeDir: string): string {
  const expanded = expandHome(literal, homeDir);
  return normalizePath(expanded.startsWith('/') ? expanded : `${base}/${expanded}`);
}

export interface RealPath {
  real: string;
  exists: boolean;
  /** The links did not end (a loop, or more than 40 hops): what the path means is unknown. */
  loop?: boolean;
}

/**
 * The real path `absolute` (absolute and normalised) names: `realpath` when it exists; else the
 * real path of its parent joined with its name — and when it is itself a dangling symbolic link,
 * the real path of the link's target resolved the same way, since writing through the link
 * would create the target.
 */
export async function resolveRealPath(absolute: string, hops = 0): Promise<RealPath> {
  if (hops > MAX_LINK_HOPS) return { real: absolute, exists: false, loop: true };
  try {
    return { real: await realpath(absolute), exists: true };
  } catch {
    // Missing, a dangling link, a loop, or a component we may not search: resolve by parts.
  }
  if (absolute === '/') return { real: '/', exists: true };
  const parent = await resolveRealPath(path.posix.dirname(absolute), hops);
  if (parent.loop) return { ...parent, exists: false };
  const name = path.posix.basename(absolute);
  const inParent = normalizePath(`${parent.real}/${name}`);
  const link = await lstat(inParent).catch(() => undefined);
  if (link?.isSymbolicLink()) {
    const target = await readlink(inParent).catch(() => undefined);
    if (target === undefined) return { real: inParent, exists: false };
    const next = await resolveRealPath(normalizePath(target.startsWith('/') ? target : `${parent.real}/${target}`), hops + 1);
    return { ...next, exists: false };
  }
  // Exists but realpath failed (e.g. a directory we may not search): not resolvable, but not missing either.
  return { real: inParent, exists: false };
}

const SPECIAL_ROOTS = ['/proc', '/sys', '/dev'];

/** Under /proc, /sys or /dev (except /dev/null): never plain input (`/proc/self/environ` holds the worker's keys). */
export function isSpecialPath(target: string): boolean {
  if (target === '/dev/null') return false;
  return SPECIAL_ROOTS.some((root) => target === root || target.startsWith(`${root}/`));
}

/**
 * The fact for one path as a tool will use it. `kind` is `other` for a device, FIFO or socket,
 * anything under /proc, /sys or /dev (except /dev/null), and a link loop — never plain input.
 */
export async function resolvePathFact(literal: string, base: string, homeDir: string): Promise<PathFact> {
  const absolute = absolutePathOf(literal, base, homeDir);
  const { real, exists, loop } = await resolveRealPath(absolute);
  let kind: PathFact['kind'];
  if (loop || isSpecialPath(absolute) || isSpecialPath(real)) kind = 'other';
  else if (!exists) kind = 'missing';
  else {
    const info = await stat(real).catch(() => undefined);
    if (info === undefined) kind = 'missing';
    else if (info.isFile() || real === '/dev/null') kind = 'file';
    else if (info.isDirectory()) kind = 'directory';
    else kind = 'other';
  }
  return { literal, absolute, real, exists: exists && kind !== 'missing', kind };
}

/** Characters that make a Glob pattern segment a glob (the Glob tool's own reading). */
export const GLOB_CHARACTERS = /[*?[{\\]/;

/** Split a Glob pattern into its literal leading directories and the globbing remainder: the tool walks the prefix. */
export function splitStaticPrefix(pattern: string): { prefix: string; rest: string } {
  const segments = pattern.split('/');
  let index = 0;
  while (index < segments.length - 1 && !GLOB_CHARACTERS.test(segments[index])) index += 1;
  return { prefix: segments.slice(0, index).join('/') || (pattern.startsWith('/') ? '/' : ''), rest: segments.slice(index).join('/') };
}

/**
 * The paths a file tool call touches, as facts: Read reads `file_path`; Write and Edit write it;
 * Glob and Grep read their root (`path`, or the workspace), and Glob also the directory its
 * pattern's static prefix leads to (`../../etc/*`, `/etc/*`) — or, for a pattern without a glob
 * character, the one path it names. Invalid input (the tool reports the error) and other tools: [].
 */
export async function gatherPathFacts(toolName: string, input: unknown, cwd: string, homeDir: string): Promise<NonNullable<CallFacts['paths']>> {
  const spec = getToolSpec(toolName);
  const access = spec?.fileAccess;
  if (spec === undefined || access === undefined || !spec.inputSchema.safeParse(input).success) return [];
  const record = input as Record<string, unknown>;
  const facts: { access: PathAccess; literal: string; base: string }[] = [];
  const field = record[access.pathField];
  if (access.target === 'file') facts.push({ access: access.access, literal: String(field), base: cwd });
  else {
    const rootLiteral = typeof field === 'string' ? field : '.';
    facts.push({ access: access.access, literal: rootLiteral, base: cwd });
    const pattern = access.patternField === undefined ? undefined : record[access.patternField];
    if (typeof pattern === 'string') {
      const root = absolutePathOf(rootLiteral, cwd, homeDir);
      const { prefix } = splitStaticPrefix(pattern);
      const literal = GLOB_CHARACTERS.test(pattern) ? prefix || '.' : pattern;
      facts.push({ access: access.access, literal, base: root });
    }
  }
  const gathered = await Promise.all(facts.map(async (fact) => ({ access: fact.access, path: await resolvePathFact(fact.literal, fact.base, homeDir) })));
  // One fact per (access, absolute path): `Glob {pattern: "*"}` names the root twice.
  return gathered.filter((fact, index) => gathered.findIndex((other) => other.access === fact.access && other.path.absolute === fact.path.absolute) === index);
}
