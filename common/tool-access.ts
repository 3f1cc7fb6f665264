/**
 * What runTool enforces where it acts (issue 17 §4), for a call the permission engine allowed:
 * pure, so the workflow's gate and a model call's local phase (its prefetched reads) build it alike.
 */
import type { CallFacts, PathAccess, ToolAccess } from './permission-facts';
import { type PermissionContext, tryParsePermissionRule } from './permissions';

/**
 * What runTool enforces where it acts for an allowed call (issue 17 §4): the working directories
 * (and the paths this decision allowed outside them), the Read deny rules, and the real paths a
 * write may go to.
 */
export function toolAccessFor(context: PermissionContext, facts: CallFacts | undefined): ToolAccess {
  const readDeny = readDenyPatterns(context.rules.deny);
  const paths = facts?.paths ?? [];
  const realOf = (access: PathAccess) => paths.filter((entry) => entry.access === access).map((entry) => entry.path.real);
  const allowedReads = realOf('read');
  return {
    workingDirectories: [...context.workingDirectories, ...allowedReads.filter((real) => !context.workingDirectories.includes(real))],
    readDeny,
    ...(context.homeDir ? { homeDir: context.homeDir } : {}),
    ...(paths.some((entry) => entry.access === 'write') ? { allowedRealPaths: realOf('write') } : {}),
  };
}

/** The path patterns of the `Read(…)` deny rules (a bare `Read` denies every path: `**`); unparseable rules never match, as in the engine. */
export function readDenyPatterns(deny: ReadonlyArray<{ rule: string }>): string[] {
  const patterns: string[] = [];
  for (const { rule } of deny) {
    const parsed = tryParsePermissionRule(rule);
    if (parsed?.toolName === 'Read') patterns.push(parsed.content ?? '**');
  }
  return patterns;
}
