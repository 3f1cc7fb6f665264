/**
 * Claude Code's permission rules and modes, as a pure decision (seed §2.10, `canUseTool`): given a
 * tool call, the mode, the allow/deny/ask rules and the workspace directories, say allow, deny or
 * ask. Pure and Node-free: the workflow decides with it, the client validates flags with it, the
 * settings loader parses rules with it.
 *
 * Rule syntax (Claude Code's): `Tool` or `Tool(specifier)`.
 * - `Bash(npm test)` exact command; `Bash(npm test:*)` the command or it followed by arguments;
 *   `Bash(git * main)` `*` matches anything. Matched on the command's parsed facts only
 *   (common/bash-permissions.ts; issue 29: one Bash analysis): a call without them asks.
 * - `Read(...)`, `Edit(...)`, `Write(...)` take gitignore-style paths (globs: ./path-rules): `//abs/path`, `~/path`
 *   (home), `/path` (the workspace root), `path` or `./path` (the workspace; a pattern without
 *   a slash matches at any depth). `Read` rules cover Read, Glob and Grep; `Edit` rules cover Edit
 *   and Write.
 * Evaluation: deny, then ask, then allow; the first match decides (specificity does not matter).
 */

import type { BashFacts, CallFacts, PathFact } from './permission-facts';
import { decideBash } from './bash-permissions';
import { isMcpToolName, mcpRuleCovers } from './mcp-tools';
import { type PathRuleContext, anchorPathRule, isInside, normalizePath, pathMatchesRule, resolvePath } from './path-rules';
import { EDIT_TOOLS, READ_TOOLS, getToolSpec, toolNamesWhere } from './tool-specs';

export * from './permission-rules';
import {
  type PermissionContext,
  type PermissionDecision,
  type RuleSource,
  type RuleWithSource,
  PROTECTED_DIRECTORIES,
  PROTECTED_EXCEPTIONS,
  isProtectedPath,
  tryParsePermissionRule,
} from './permission-rules';

/**
 * Tools that need no permission in Claude Code (rules still apply), by their spec's `permission`:
 * Agent (its own tools are checked in the subagent) and SendMessage (it continues one); the task
 * list, ScheduleWakeup and the cron tools, which touch only this conversation's state and
 * Schedules (issue 21); TaskOutput / TaskStop, which only read or stop this conversation's own
 * background work — those two in every mode, plan mode included (TaskStop is not read-only).
 * Any other tool without a decision of its own asks (fail closed).
 */
export const TOOLS_WITHOUT_PERMISSION = toolNamesWhere((spec) => spec.permission !== undefined);
/** Of those, the ones allowed before the mode is looked at. */
const TOOLS_WITHOUT_PERMISSION_IN_ANY_MODE = toolNamesWhere((spec) => spec.permission === 'none-in-any-mode');

export { globToRegExp, isInside, normalizePath, pathMatchesRule, resolvePath } from './path-rules';

/** The paths a file tool call touches (its spec's `fileAccess`), absolute (empty for other tools or unparseable input). */
export function toolPaths(toolName: string, input: unknown, cwd: string): string[] {
  const access = getToolSpec(toolName)?.fileAccess;
  if (access === undefined || typeof input !== 'object' || input === null) return [];
  const record = input as Record<string, unknown>;
  const literal = record[access.pathField];
  if (access.target === 'file') return typeof literal === 'string' ? [resolvePath(cwd, literal)] : [];
  const root = resolvePath(cwd, typeof literal === 'string' ? literal : '.');
  const paths = [root];
  // A glob pattern may itself leave the root (`/etc/*`, `../**`): its static prefix counts too.
  const pattern = access.patternField === undefined ? undefined : record[access.patternField];
  if (typeof pattern === 'string') paths.push(resolvePath(root, staticPrefix(pattern)));
  return paths;
}

/** The directories of a glob pattern before its first wildcard. */
function staticPrefix(pattern: string): string {
  const parts = pattern.split('/');
  const fixed: string[] = [];
  for (const part of parts.slice(0, -1)) {
    if (/[*?[{]/.test(part)) break;
    fixed.push(part);
  }
  if (pattern.startsWith('/') && fixed.length === 0) return '/';
  return fixed.join('/') || '.';
}

// ---- matching and the decision ----

interface CallView {
  toolName: string;
  input: unknown;
  cwd: string;
  homeDir?: string;
  /** Issue 22: the configured name of the MCP server whose tool this is (from the recorded listing). */
  mcpServer?: string;
}

/**
 * Whether a rule covers this tool: `Read` rules cover the read tools, `Edit` rules the edit tools;
 * `mcp__server`, `mcp__server__*` and `mcp__server__tool` an MCP server's tools (Claude Code's rules).
 */
function ruleCoversTool(ruleTool: string, toolName: string, mcpServer?: string): boolean {
  if (mcpServer !== undefined && isMcpToolName(ruleTool)) return mcpRuleCovers(ruleTool, { name: toolName, server: mcpServer });
  if (ruleTool === toolName) return true;
  if (ruleTool === 'Read') return READ_TOOLS.has(toolName);
  if (ruleTool === 'Edit') return EDIT_TOOLS.has(toolName);
  return false;
}

/**
 * Whether the rule of `entry` matches a call that touches `targets` (absolute paths). `mode` 'any'
 * (deny, ask): some path matches; 'all' (allow): every path does. A Bash rule with a command is
 * matched on the parsed command only (decideBash): never here. Unparseable rules never match.
 */
function ruleMatches(entry: RuleWithSource, view: CallView, targets: readonly string[], mode: 'any' | 'all'): boolean {
  const rule = tryParsePermissionRule(entry.rule);
  if (!rule || !ruleCoversTool(rule.toolName, view.toolName, view.mcpServer)) return false;
  if (rule.content === undefined) return true;
  const spec = getToolSpec(view.toolName);
  if (spec?.ruleMatches) {
    const parsed = spec.inputSchema.safeParse(view.input);
    return parsed.success && spec.ruleMatches(parsed.data, rule.content);
  }
  if (view.toolName === 'Bash' || targets.length === 0) return false;
  const matches = (target: string) => pathMatchesRule(rule.content!, target, { cwd: view.cwd, homeDir: view.homeDir });
  return mode === 'any' ? targets.some(matches) : targets.every(matches);
}

/** The first rule of the list that matches the call on its input's paths, or undefined. */
function firstMatch(rules: RuleWithSource[], view: CallView, mode: 'any' | 'all'): RuleWithSource | undefined {
  const targets = toolPaths(view.toolName, view.input, view.cwd);
  return rules.find((entry) => ruleMatches(entry, view, targets, mode));
}

/** The allow rule covering a call that touches `targets`. Issue 29: a workspace's own allow rule covers nothing outside the workspace. */
function allowedByRules(all: RuleWithSource[], view: CallView, targets: readonly string[]): RuleWithSource | undefined {
  return all.find((entry) => ruleMatches(entry, view, targets, 'all') && withinRuleScope(entry, targets, view.cwd));
}

export interface ToolFacts {
  /** The call only reads (the tool's own `isReadOnly` on valid input; for Bash, on its gathered facts). */
  readOnly: boolean;
  /** The input is valid for the tool (invalid input is never run: the tool reports the error). */
  validInput: boolean;
  /**
   * What an activity found where the tool acts (issue 17): real paths, the parsed command. Absent
   * for calls decided before facts existed (recorded histories): file tools are then judged on
   * their input's paths; a Bash call is a command nobody examined, and asks (issue 29).
   */
  gathered?: CallFacts;
  /** Issue 22: an MCP tool of the recorded listing, by its server's configured name (rules `mcp__server…`). */
  mcpServer?: string;
}

const describeRule = (entry: RuleWithSource) => `${entry.source} rule ${entry.rule}`;
const deniedBy = (entry: RuleWithSource, toolName: string): PermissionDecision => ({
  behavior: 'deny',
  reason: describeRule(entry),
  message: `Permission to use ${toolName} has been denied by the ${describeRule(entry)}.`,
});
const planModeDenial = (toolName: string): PermissionDecision => ({
  behavior: 'deny',
  reason: 'plan mode',
  message: `${toolName} changes things, and this conversation is in plan mode: only read-only tools run. Present the plan instead of carrying it out.`,
});

/**
 * seed §2.10 canUseTool's rule engine: deny rules, then ask rules, then the mode, then allow
 * rules, then the tool's own default (read-only inside the workspace: allow; edits: ask, or allow
 * in acceptEdits inside the workspace; anything outside the working directories: ask).
 */
export function decidePermission(call: { toolName: string; input: unknown }, facts: ToolFacts, context: PermissionContext): PermissionDecision {
  const cwd = context.workingDirectories[0] ?? '/';
  const view: CallView = {
    toolName: call.toolName,
    input: call.input,
    cwd,
    homeDir: context.homeDir,
    ...(facts.mcpServer !== undefined && { mcpServer: facts.mcpServer }),
  };
  const denied = firstMatch(context.rules.deny, view, 'any');
  if (denied) return deniedBy(denied, call.toolName);
  const decision = decideBeforeDontAsk(view, facts, context);
  if (decision.behavior === 'ask' && context.mode === 'dontAsk') {
    return {
      behavior: 'deny',
      reason: `${decision.reason}; dontAsk mode`,
      message: `Permission to use ${call.toolName} was not granted in advance (dontAsk mode denies whatever is not pre-approved).`,
    };
  }
  return decision;
}

function decideBeforeDontAsk(view: CallView, facts: ToolFacts, context: PermissionContext): PermissionDecision {
  const { toolName } = view;
  // Invalid input never runs: let the tool report the validation error.
  if (!facts.validInput) return { behavior: 'allow', reason: 'invalid input is reported by the tool' };
  const asked = firstMatch(context.rules.ask, view, 'any');
  if (asked) return { behavior: 'ask', reason: describeRule(asked) };

  if (TOOLS_WITHOUT_PERMISSION_IN_ANY_MODE.has(toolName)) return { behavior: 'allow', reason: `${toolName} needs no permission` };
  // Bash decides on its parsed command only; without facts on none (UNEXAMINED_COMMAND: it asks).
  if (toolName === 'Bash') return decideBashCall(view, facts.gathered?.bash ?? UNEXAMINED_COMMAND, context);
  const gatheredPaths = facts.gathered?.paths;
  if (gatheredPaths && (READ_TOOLS.has(toolName) || EDIT_TOOLS.has(toolName))) return decideOnPathFacts(view, facts, gatheredPaths, context);
  const paths = toolPaths(toolName, view.input, view.cwd);
  const outside = paths.filter((target) => !context.workingDirectories.some((directory) => isInside(target, directory)));

  if (context.mode === 'plan' && !facts.readOnly) return planModeDenial(toolName);
  if (context.mode === 'bypassPermissions') {
    const protectedPath = EDIT_TOOLS.has(toolName) ? paths.find((target) => isProtected(target, context.workingDirectories)) : undefined;
    if (!protectedPath) return { behavior: 'allow', reason: 'bypassPermissions mode' };
    return { behavior: 'ask', reason: `a write to a protected directory (${protectedPath}) asks even in bypassPermissions mode` };
  }
  const allowed = allowedByRules(context.rules.allow, view, paths);
  if (allowed) return { behavior: 'allow', reason: describeRule(allowed) };

  if (outside.length > 0) return { behavior: 'ask', reason: `${outside[0]} is outside the working directories (${context.workingDirectories.join(', ')})` };
  if (READ_TOOLS.has(toolName)) return { behavior: 'allow', reason: 'read-only tool inside the working directories' };
  if (EDIT_TOOLS.has(toolName)) {
    if (context.mode === 'acceptEdits') return { behavior: 'allow', reason: 'acceptEdits mode allows edits inside the working directories' };
    return { behavior: 'ask', reason: `${toolName} changes files` };
  }
  // Claude Code asks for an MCP tool no rule allows (whatever its annotations say).
  if (view.mcpServer !== undefined) return { behavior: 'ask', reason: `${toolName} is a tool of the MCP server "${view.mcpServer}", and no rule allows it` };
  // Agent, the task list, wakeups, cron (TOOLS_WITHOUT_PERMISSION); any other tool fails closed: it asks.
  if (TOOLS_WITHOUT_PERMISSION.has(toolName)) return { behavior: 'allow', reason: `${toolName} needs no permission` };
  return { behavior: 'ask', reason: `${toolName} has no permission decision of its own` };
}

/** A Bash command without facts (none gathered: what the checker does not understand asks; deny rules on the whole tool still deny). */
const UNEXAMINED_COMMAND: BashFacts = { problems: ['the command was not examined (no facts were gathered for it)'], commands: [] };

/**
 * A Bash call's decision on its parsed command (common/bash-permissions.ts), and one escalation
 * more: a call that asks to run outside the sandbox (`dangerouslyDisableSandbox`) asks in every
 * mode, unless it is denied anyway.
 */
function decideBashCall(view: CallView, bash: BashFacts, context: PermissionContext): PermissionDecision {
  const decision = decideBash(bash, context);
  if (decision.behavior === 'deny') return decision;
  if ((view.input as { dangerouslyDisableSandbox?: unknown })?.dangerouslyDisableSandbox === true) {
    return { behavior: 'ask', reason: 'the command asks to run outside the sandbox (dangerouslyDisableSandbox)' };
  }
  return decision;
}

/**
 * A file tool's decision on the paths as they are where it acts (issue 17 §4): each path counts
 * twice, as written (made absolute) and as its real path, so a symbolic link inside the workspace
 * leading out is outside, a deny rule on either name denies, and an allow rule must cover both.
 */
function decideOnPathFacts(view: CallView, facts: ToolFacts, gathered: NonNullable<CallFacts['paths']>, context: PermissionContext): PermissionDecision {
  const { toolName } = view;
  const names = (fact: PathFact) => (fact.real === fact.absolute ? [fact.absolute] : [fact.absolute, fact.real]);
  const targets = gathered.flatMap(({ path }) => names(path));
  const matchesAny = (list: RuleWithSource[]) => list.find((entry) => ruleMatches(entry, view, targets, 'any'));
  const denied = matchesAny(context.rules.deny);
  if (denied) return deniedBy(denied, toolName);
  const asked = matchesAny(context.rules.ask);
  if (asked) return { behavior: 'ask', reason: describeRule(asked) };
  if (context.mode === 'plan' && !facts.readOnly) return planModeDenial(toolName);
  // Writes that could change what runs or what is allowed ask in every mode (issue 17 §5).
  const writes = gathered.filter(({ access }) => access === 'write').flatMap(({ path }) => names(path));
  const protectedPath = writes.find((target) => isProtectedPath(target, context.workingDirectories));
  if (protectedPath)
    return {
      behavior: 'ask',
      reason: `${protectedPath} is a protected file (repository, editor or agent settings, shell start-up): writing it asks in every mode`,
    };
  if (context.mode === 'bypassPermissions') return { behavior: 'allow', reason: 'bypassPermissions mode' };
  const special = gathered.find(({ path }) => path.kind === 'other');
  if (special) return { behavior: 'ask', reason: `${special.path.literal} is not a regular file or directory (${special.path.real})` };
  const allowed = allowedByRules(context.rules.allow, view, targets);
  if (allowed) return { behavior: 'allow', reason: describeRule(allowed) };
  const outside = gathered.find(({ path }) => names(path).some((target) => !context.workingDirectories.some((directory) => isInside(target, directory))));
  if (outside) {
    const { literal, real } = outside.path;
    const via = real !== outside.path.absolute ? ` (it leads to ${real})` : '';
    return { behavior: 'ask', reason: `${literal}${via} is outside the working directories (${context.workingDirectories.join(', ')})` };
  }
  if (READ_TOOLS.has(toolName)) return { behavior: 'allow', reason: 'read-only tool inside the working directories' };
  if (context.mode === 'acceptEdits') return { behavior: 'allow', reason: 'acceptEdits mode allows edits inside the working directories' };
  return { behavior: 'ask', reason: `${toolName} changes files` };
}

// ---- rule scope (issue 29): what a workspace's own rules may reach ----

/** Sources a workspace writes itself: `.claude/settings.json` and `.claude/settings.local.json`. */
const WORKSPACE_RULE_SOURCES: ReadonlySet<RuleSource> = new Set(['projectSettings', 'localSettings']);

/** Whether a rule came from the workspace's own files (then an allow rule covers nothing outside the workspace). */
function isWorkspaceRule(entry: RuleWithSource): boolean {
  return WORKSPACE_RULE_SOURCES.has(entry.source);
}

/** Tools whose rule content is a path pattern (gitignore-style, ./path-rules): the file tools (their specs' `fileAccess`). */
const PATH_RULE_TOOLS = toolNamesWhere((spec) => spec.fileAccess !== undefined);

/**
 * Why a path rule reaches outside `context.cwd` (`Write(//abs/**)`, `Read(~/.ssh/**)`,
 * `Edit(/../x)`, a `..` anywhere in its pattern), or undefined when it stays inside it or is no
 * path rule. A `~/` rule with no home directory known reaches outside (it cannot be placed).
 */
export function pathRuleReachOutside(text: string, context: PathRuleContext): string | undefined {
  const rule = tryParsePermissionRule(text);
  if (!rule || !PATH_RULE_TOOLS.has(rule.toolName) || rule.content === undefined) return undefined;
  const anchored = anchorPathRule(rule.content, context);
  if (anchored === undefined) return 'its path starts at a home directory that is not known';
  const segments = anchored.pattern.split('/').filter(Boolean);
  if (segments.includes('..')) return 'its path climbs out with ".."';
  // Where the pattern is fixed: its anchor and the segments before the first wildcard (`//work/repo/src/**` → /work/repo/src).
  const firstWildcard = segments.findIndex((segment) => /[*?[{]/.test(segment));
  const fixed = firstWildcard === -1 ? segments : segments.slice(0, firstWildcard);
  const start = normalizePath(`${anchored.root}/${fixed.join('/')}`);
  if (!isInside(start, context.cwd)) return `its path starts at ${start}, outside the workspace (${normalizePath(context.cwd)})`;
  return undefined;
}

/**
 * Issue 29: an allow rule from the workspace's own settings covers a call only when every path it
 * touches is inside the workspace (`Read(**)` in a cloned repository's settings never reads `~/.ssh`).
 */
function withinRuleScope(entry: RuleWithSource, targets: readonly string[], workspace: string): boolean {
  return !isWorkspaceRule(entry) || targets.every((target) => isInside(target, workspace));
}

/**
 * Whether a call may touch something outside the working directories, on the facts gathered where
 * it acts (a path or its real path outside; a Bash command the gatherer could not follow counts,
 * since its paths are not known), else lexically. Issue 29: a PreToolUse hook's `allow` never skips
 * this check.
 */
export function reachesOutsideWorkingDirectories(call: { toolName: string; input: unknown }, facts: ToolFacts, context: PermissionContext): boolean {
  const outside = (target: string) => !context.workingDirectories.some((directory) => isInside(target, directory));
  const names = (fact: PathFact) => [fact.absolute, fact.real];
  const bash = facts.gathered?.bash;
  if (bash) return bash.problems.length > 0 || bash.commands.some((command) => command.paths.some(({ path }) => names(path).some(outside)));
  if (call.toolName === 'Bash') return true; // no facts: nothing is known of its paths
  const gathered = facts.gathered?.paths;
  if (gathered) return gathered.some(({ path }) => names(path).some(outside));
  return toolPaths(call.toolName, call.input, context.workingDirectories[0] ?? '/').some(outside);
}

function isProtected(target: string, workingDirectories: string[]): boolean {
  return workingDirectories.some((directory) => {
    if (!isInside(target, directory)) return false;
    const relative = target.slice(normalizePath(directory).length + 1);
    if (PROTECTED_EXCEPTIONS.some((exception) => relative === exception || relative.startsWith(`${exception}/`))) return false;
    return PROTECTED_DIRECTORIES.some((name) => relative === name || relative.startsWith(`${name}/`));
  });
}

// ---- what the model is told ----

/** Tool result when a person declined (our wording of Claude Code's rejection). */
export function rejectionMessage(message?: string): string {
  const base = "The user doesn't want to proceed with this tool use. The tool use was rejected (nothing was run or written).";
  return message?.trim() ? `${base} The user said:\n${message.trim()}` : `${base} Stop what you are doing and wait for the user to tell you how to proceed.`;
}

/** Tool result when a tool needed permission and nobody could give it (`ask` without a terminal, `claude -p`). */
export function noApproverMessage(toolName: string): string {
  return `Permission to use ${toolName} is required, but it has not been granted and nobody is available to approve it. Allow it with --allowed-tools or a permissions.allow rule in .claude/settings.json, or choose a different approach.`;
}

/** Tool result when nobody decided within the wait. */
export function timeoutMessage(toolName: string, waitedMs: number): string {
  return `Permission to use ${toolName} was not given within ${Math.round(waitedMs / 60_000)} minutes, so the tool use was denied.`;
}

/**
 * The allow rule `--always` adds for the rest of the session: for a file tool, that tool in the
 * file's directory (`Edit(//abs/dir/**)`), so approving one write outside the workspace does not
 * open the whole disk; none for Bash (the gate makes its rule from the parsed command); otherwise the tool.
 */
export function ruleForAlways(toolName: string, input: unknown, cwd: string): string | undefined {
  // A Bash rule is made from the parsed command (common/bash-permissions.ts bashAlwaysRule): without its facts, none.
  if (toolName === 'Bash') return undefined;
  const spec = getToolSpec(toolName);
  if (spec?.alwaysRule) {
    const parsed = spec.inputSchema.safeParse(input);
    // No rule of its own for this input: no "don't ask again" (never the whole tool).
    return parsed.success ? spec.alwaysRule(parsed.data) : undefined;
  }
  const [first] = toolPaths(toolName, input, cwd);
  if (!first) return toolName;
  const directory = getToolSpec(toolName)?.fileAccess?.target === 'directory' ? first : first.slice(0, first.lastIndexOf('/')) || '/';
  if (/[()*?[\]]/.test(directory)) return toolName;
  return `${toolName}(/${directory === '/' ? '/' : `${directory}/`}**)`;
}
