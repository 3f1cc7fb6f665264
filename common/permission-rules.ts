/**
 * Claude Code's permission rules, modes and contexts — the vocabulary the rule engines share
 * (common/permissions.ts for every tool, common/bash-permissions.ts for Bash): pure, Node-free.
 */
import { isInside, normalizePath } from './path-rules';

export const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

export const SETTING_SOURCES = ['user', 'project', 'local'] as const;
export type SettingSource = (typeof SETTING_SOURCES)[number];

/** Where a rule came from (shown when it decides). */
export type RuleSource = 'userSettings' | 'projectSettings' | 'localSettings' | 'cliArg' | 'session';

export interface RuleWithSource {
  rule: string;
  source: RuleSource;
}

/** A parsed rule: `Bash(npm test:*)` → { toolName: 'Bash', content: 'npm test:*' }. */
export interface PermissionRule {
  toolName: string;
  content?: string;
}

export interface PermissionRules {
  allow: RuleWithSource[];
  deny: RuleWithSource[];
  ask: RuleWithSource[];
}

export interface PermissionContext {
  mode: PermissionMode;
  rules: PermissionRules;
  /** The workspace (first) and the `--add-dir` / additionalDirectories, absolute. */
  workingDirectories: string[];
  /** The worker's home directory (for `~/` rules), when known. */
  homeDir?: string;
}

export type PermissionDecision =
  { behavior: 'allow'; reason: string } | { behavior: 'deny'; reason: string; message: string } | { behavior: 'ask'; reason: string };

/**
 * Directories whose writes still ask in bypassPermissions (Claude Code protects the repository and
 * its settings); git hooks managers too. The sandbox keeps them read-only in every writable root.
 */
export const PROTECTED_DIRECTORIES = ['.git', '.claude', '.vscode', '.idea', '.husky'];
export const PROTECTED_EXCEPTIONS = ['.claude/commands', '.claude/agents', '.claude/skills'];

/**
 * Parses `Tool` or `Tool(content)` — and an MCP server's `mcp__server__*` (issue 22) — throws a
 * readable Error for anything else.
 */
export function parsePermissionRule(text: string): PermissionRule {
  const rule = text.trim();
  const match = /^([A-Za-z_][A-Za-z0-9_-]*(?:__\*)?)(?:\((.*)\))?$/s.exec(rule);
  if (!match || (match[1].endsWith('__*') && (!match[1].startsWith('mcp__') || match[2] !== undefined))) {
    throw new Error(`Invalid permission rule "${text}": expected Tool or Tool(specifier), e.g. Read, Edit(src/**), Bash(npm test:*)`);
  }
  const content = match[2];
  if (content === undefined || content === '' || content === '*') return { toolName: match[1] };
  return { toolName: match[1], content };
}

/** The parsed rule, or undefined for one that does not parse (such a rule never matches). */
export function tryParsePermissionRule(text: string): PermissionRule | undefined {
  try {
    return parsePermissionRule(text);
  } catch {
    return undefined;
  }
}

/** The problem with a rule, or undefined when it parses. */
export function permissionRuleProblem(text: string): string | undefined {
  try {
    parsePermissionRule(text);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * Splits a `--allowed-tools` value as Claude Code does: commas or spaces separate rules, except
 * inside parentheses (`Bash(npm test:*),Read` → two rules).
 */
export function splitRuleList(value: string): string[] {
  const rules: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of value) {
    if (char === '(') depth++;
    if (char === ')') depth = Math.max(0, depth - 1);
    if (depth === 0 && (char === ',' || /\s/.test(char))) {
      if (current.trim()) rules.push(current.trim());
      current = '';
      continue;
    }
    current += char;
  }
  if (current.trim()) rules.push(current.trim());
  return rules;
}

// ---- protected paths ----

/** A project's files that make git, the agent, direnv or a package manager run code later (the sandbox keeps them read-only in every writable root). */
export const PROTECTED_WORKSPACE_FILES = ['.mcp.json', '.envrc', '.gitmodules', '.npmrc', '.yarnrc', '.yarnrc.yml'];
/** Files of the shell's and git's start-up that run code when another program starts (read-only in the sandbox when the home directory is writable). */
export const PROTECTED_HOME_FILES = [
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.profile',
  '.zshrc',
  '.zprofile',
  '.zshenv',
  '.zlogin',
  '.gitconfig',
  '.ripgreprc',
];
/** Protected wherever they are (Claude Code protects them too). */
const PROTECTED_FILES = [...PROTECTED_WORKSPACE_FILES, ...PROTECTED_HOME_FILES];

/**
 * Whether writing `target` (an absolute, resolved path) could change what runs or what is allowed:
 * any path with a `.git`, `.claude`, `.vscode`, `.idea` or `.husky` segment at any depth (except
 * `.claude/commands`, `.claude/agents`, `.claude/skills`), and the shell's and git's start-up files
 * anywhere. Such writes ask in every mode (issue 17 §5). A path inside one of `workingDirectories`
 * is judged below the deepest that holds it: the directories a conversation works in were chosen for
 * it, not by the model — an isolated agent's worktree is `<repository>/.claude/worktrees/<name>`
 * (issue 33), where `notes.txt` is an ordinary file and `.claude/settings.json` still a protected one.
 */
export function isProtectedPath(target: string, workingDirectories: readonly string[] = []): boolean {
  const absolute = normalizePath(target);
  const base = workingDirectories
    .map(normalizePath)
    .filter((directory) => directory !== absolute && isInside(absolute, directory))
    .sort((a, b) => b.length - a.length)[0];
  const segments = (base === undefined ? absolute : absolute.slice(base.length)).split('/').filter(Boolean);
  const name = segments[segments.length - 1] ?? '';
  if (PROTECTED_FILES.includes(name)) return true;
  return segments.some((segment, index) => {
    if (!PROTECTED_DIRECTORIES.includes(segment)) return false;
    if (segment === '.claude' && PROTECTED_EXCEPTIONS.some((exception) => segments[index + 1] === exception.slice('.claude/'.length))) return false;
    return true;
  });
}
