/**
 * Claude Code's trust dialog (issue 29): until a person trusts a workspace, its own settings —
 * `.claude/settings.json` and `.claude/settings.local.json` hooks, `.mcp.json` servers, allow
 * rules, `additionalDirectories`, its `.claude/agents`, `.claude/commands` and `.claude/skills` — are not applied (deny and ask rules are: they only tighten).
 * Trust is recorded where Claude Code records it, `~/.claude.json` →
 * `projects["<abs real path>"].hasTrustDialogAccepted: true`, and a directory's trust covers its
 * subfolders. The session-context activity decides on the workspace's host and records the
 * decision; the client reads the same file before it starts a conversation (`--trust`, chat's
 * question, `-p`'s line naming what it ignored).
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { WorkspaceTrust } from '../common/activity-types';
import { parseHookSettings } from '../common/hooks';
import { parseMcpServers } from '../common/mcp-config';
import type { SettingSource } from '../common/permissions';
import { readJsonObjectFile, settingsFiles, writeJsonFile } from './settings';

/** Claude Code's own state file, where the trust dialog's answer is kept. */
function claudeJsonFile(home: string): string {
  return path.join(home, '.claude.json');
}

/** The workspace as Claude Code keys it: its absolute real path (the path itself when it cannot be resolved). */
async function workspaceKey(cwd: string): Promise<string> {
  return realpath(cwd).catch(() => path.resolve(cwd));
}

/**
 * The directory whose `hasTrustDialogAccepted` covers `cwd` (the workspace itself or a parent), or
 * undefined. A `~/.claude.json` that cannot be read trusts nothing (fail closed).
 */
export async function trustedDirectoryFor(cwd: string, home: string): Promise<string | undefined> {
  const read = await readJsonObjectFile(claudeJsonFile(home));
  if (read.kind !== 'object') return undefined;
  const projects = read.value.projects;
  if (typeof projects !== 'object' || projects === null || Array.isArray(projects)) return undefined;
  let directory = await workspaceKey(cwd);
  for (;;) {
    const entry = (projects as Record<string, unknown>)[directory];
    if (typeof entry === 'object' && entry !== null && (entry as { hasTrustDialogAccepted?: unknown }).hasTrustDialogAccepted === true) return directory;
    const parent = path.dirname(directory);
    if (parent === directory) return undefined;
    directory = parent;
  }
}

/**
 * The trust decision for a conversation: the config says so (the person who started it trusted
 * the workspace: `--trust`, or their own `~/.claude.json`), or this host's `~/.claude.json` does.
 */
export async function decideWorkspaceTrust(cwd: string, home: string, configTrusted: boolean | undefined): Promise<WorkspaceTrust> {
  if (configTrusted === true) return { trusted: true, by: 'config' };
  const directory = await trustedDirectoryFor(cwd, home);
  return directory !== undefined ? { trusted: true, by: directory } : { trusted: false };
}

/**
 * Records that the person trusts `cwd`, as Claude Code's dialog does (`hasTrustDialogAccepted`
 * under the real path, every other key kept; written whole through a temporary file). A
 * `~/.claude.json` that is not a JSON object is left as it is, and this throws.
 */
export async function recordWorkspaceTrust(cwd: string, home: string): Promise<{ file: string; directory: string }> {
  const file = claudeJsonFile(home);
  const read = await readJsonObjectFile(file);
  if (read.kind === 'invalid') throw new Error(`${read.error}; the workspace's trust was not recorded. Fix the file and try again.`);
  const state = read.kind === 'object' ? read.value : {};
  const directory = await workspaceKey(cwd);
  const projects =
    typeof state.projects === 'object' && state.projects !== null && !Array.isArray(state.projects) ? (state.projects as Record<string, unknown>) : {};
  const entry = typeof projects[directory] === 'object' && projects[directory] !== null ? (projects[directory] as Record<string, unknown>) : {};
  const next = { ...state, projects: { ...projects, [directory]: { ...entry, hasTrustDialogAccepted: true } } };
  await writeJsonFile(file, next, 0o600);
  return { file, directory };
}

/** What one of the workspace's own files holds that an untrusted workspace does not apply. */
export interface IgnoredSettings {
  file: string;
  allowRules: number;
  hooks: number;
  mcpServers: number;
  additionalDirectories: number;
  /** Subagent definitions (`.claude/agents/*.md`) and slash commands (`.claude/commands/**.md`) it holds. */
  agents?: number;
  commands?: number;
  /** Agent Skills (`.claude/skills/<name>/SKILL.md`) it holds. */
  skills?: number;
  /** A `defaultMode` that lets more run without asking (`acceptEdits`). */
  defaultMode?: string;
}

const count = (value: unknown) => (Array.isArray(value) ? value.length : 0);

/**
 * What the workspace's own files (project and local settings, `.mcp.json`, as `sources` allows)
 * would add if it were trusted. Files that cannot be read are not counted here (loadSettings and
 * the client's check report them as errors).
 */
export async function settingsIgnoredWithoutTrust(cwd: string, sources: readonly SettingSource[], home: string): Promise<IgnoredSettings[]> {
  const ignored: IgnoredSettings[] = [];
  for (const { source, file } of settingsFiles(cwd, sources, home)) {
    if (source === 'user') continue;
    const read = await readJsonObjectFile(file);
    if (read.kind !== 'object') continue;
    const permissions =
      typeof read.value.permissions === 'object' && read.value.permissions !== null ? (read.value.permissions as Record<string, unknown>) : {};
    const hooks = Object.values(parseHookSettings(read.value.hooks, file).hooks).reduce(
      (total, matchers) => total + matchers.reduce((sum, matcher) => sum + matcher.hooks.length, 0),
      0,
    );
    ignored.push({
      file,
      allowRules: count(permissions.allow),
      hooks,
      mcpServers: 0,
      additionalDirectories: count(permissions.additionalDirectories),
      ...(permissions.defaultMode === 'acceptEdits' ? { defaultMode: 'acceptEdits' } : {}),
    });
  }
  if (sources.includes('project')) {
    const file = path.join(cwd, '.mcp.json');
    const read = await readJsonObjectFile(file);
    if (read.kind === 'object') {
      const servers = Object.keys(parseMcpServers(read.value.mcpServers, file).servers).length;
      ignored.push({ file, allowRules: 0, hooks: 0, mcpServers: servers, additionalDirectories: 0 });
    }
  }
  // Agents and commands are read whatever the setting sources: the workspace's only once it is trusted.
  for (const [kind, depth] of [
    ['agents', 0],
    ['commands', 4],
  ] as const) {
    const directory = path.join(cwd, '.claude', kind);
    const files = await countMarkdown(directory, depth);
    if (files > 0) ignored.push({ file: directory, allowRules: 0, hooks: 0, mcpServers: 0, additionalDirectories: 0, [kind]: files });
  }
  const skillsDirectory = path.join(cwd, '.claude', 'skills');
  const skills = await countSkills(skillsDirectory);
  if (skills > 0) ignored.push({ file: skillsDirectory, allowRules: 0, hooks: 0, mcpServers: 0, additionalDirectories: 0, skills });
  return ignored.filter(
    (entry) =>
      entry.allowRules + entry.hooks + entry.mcpServers + entry.additionalDirectories + (entry.agents ?? 0) + (entry.commands ?? 0) + (entry.skills ?? 0) > 0 ||
      entry.defaultMode !== undefined,
  );
}

/** Skill folders (`<name>/SKILL.md`) in `directory`. */
async function countSkills(directory: string): Promise<number> {
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  let skills = 0;
  for (const entry of entries) {
    if (entry.isDirectory() && (await stat(path.join(directory, entry.name, 'SKILL.md')).catch(() => undefined))?.isFile()) skills++;
  }
  return skills;
}

/** `.md` files under `directory`, `depth` folders down. */
async function countMarkdown(directory: string, depth: number): Promise<number> {
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  let files = 0;
  for (const entry of entries) {
    if (entry.isFile() && entry.name.endsWith('.md')) files++;
    else if (entry.isDirectory() && depth > 0) files += await countMarkdown(path.join(directory, entry.name), depth - 1);
  }
  return files;
}

const plural = (value: number, one: string, many: string) => `${value} ${value === 1 ? one : many}`;

/** "3 allow rules, 2 hooks from .claude/settings.json; 1 MCP server from .mcp.json" (undefined: nothing ignored). */
export function describeIgnoredSettings(ignored: readonly IgnoredSettings[], cwd: string): string | undefined {
  const parts = ignored.map((entry) => {
    const kinds = [
      entry.allowRules > 0 ? plural(entry.allowRules, 'allow rule', 'allow rules') : undefined,
      entry.hooks > 0 ? plural(entry.hooks, 'hook', 'hooks') : undefined,
      entry.mcpServers > 0 ? plural(entry.mcpServers, 'MCP server', 'MCP servers') : undefined,
      entry.additionalDirectories > 0 ? plural(entry.additionalDirectories, 'additional directory', 'additional directories') : undefined,
      entry.agents ? plural(entry.agents, 'agent', 'agents') : undefined,
      entry.commands ? plural(entry.commands, 'command', 'commands') : undefined,
      entry.skills ? plural(entry.skills, 'skill', 'skills') : undefined,
      entry.defaultMode ? `defaultMode ${entry.defaultMode}` : undefined,
    ].filter(Boolean);
    const relative = path.relative(cwd, entry.file);
    return `${kinds.join(', ')} from ${relative && !relative.startsWith('..') ? relative : entry.file}`;
  });
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/** The one line a person reads when an untrusted workspace's settings were not applied. */
export function untrustedWorkspaceLine(cwd: string, ignored: string): string {
  return (
    `Workspace ${cwd} is not trusted, so its own settings were not applied: ${ignored} (its deny and ask rules were). ` +
    "If you trust this folder, run again with --trust (recorded in ~/.claude.json, as Claude Code's trust dialog records it)."
  );
}
