/**
 * Claude Code's settings files, read on the workspace's host once per session (with the session
 * context): `~/.claude/settings.json` (user), `<workspace>/.claude/settings.json` (project) and
 * `<workspace>/.claude/settings.local.json` (local), filtered by `--setting-sources`. They give
 * the permission rules, `defaultMode`, `additionalDirectories` and the Stop hooks.
 *
 * Issue 29: a file that cannot be read as JSON, or whose deny or ask rules cannot be read, is an
 * error (`errors`), never skipped: dropping it would drop its deny rules with it. An untrusted
 * workspace's own files (project, local) only tighten: their deny and ask rules apply, their allow
 * rules, `additionalDirectories`, a wider `defaultMode` and hooks do not (workspace-trust.ts). Even
 * trusted, a workspace's allow rule never reaches a path outside it.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { PermissionSettings } from '../common/activity-types';
import { type StopHookMatcher, stopHooksSchema } from '../common/config';
import {
  PERMISSION_MODES,
  type PermissionMode,
  type RuleSource,
  type RuleWithSource,
  SETTING_SOURCES,
  type SettingSource,
  pathRuleReachOutside,
  permissionRuleProblem,
} from '../common/permissions';

export interface LoadedSettings {
  permissions: PermissionSettings;
  stopHooks: StopHookMatcher[];
  warnings: string[];
  /**
   * Files that cannot be read as settings (`file:line:column: …`), or deny/ask rules that cannot be
   * read: the conversation must not start with fewer rules than the person wrote (fail closed).
   */
  errors: string[];
  /** Claude Code's `alwaysThinkingEnabled` (the highest-precedence file that sets it); false turns extended thinking off. */
  alwaysThinkingEnabled?: boolean;
}

/** Whether the workspace's own settings may widen anything (issue 29: Claude Code's trust dialog). */
export interface SettingsTrust {
  trusted: boolean;
}

const SOURCE_NAMES: Record<SettingSource, RuleSource> = { user: 'userSettings', project: 'projectSettings', local: 'localSettings' };

/** The settings files of `sources`, lowest precedence first (user, project, local). */
export function settingsFiles(cwd: string, sources: readonly SettingSource[], home: string): Array<{ source: SettingSource; file: string }> {
  const files: Record<SettingSource, string> = {
    user: path.join(home, '.claude', 'settings.json'),
    project: path.join(cwd, '.claude', 'settings.json'),
    local: path.join(cwd, '.claude', 'settings.local.json'),
  };
  return SETTING_SOURCES.filter((source) => sources.includes(source)).map((source) => ({ source, file: files[source] }));
}

/**
 * A JSON settings file as read: absent (missing, or empty — the sandbox mounts empty read-only
 * placeholders for absent protected files while a command runs), its object, or why it cannot be
 * read, as `file:line:column: …` (issue 29: a person must be able to find and fix it).
 */
export type JsonObjectRead = { kind: 'absent' } | { kind: 'object'; value: Record<string, unknown> } | { kind: 'invalid'; error: string };

/** Reads `file` as a JSON object (see JsonObjectRead). Only a missing file is absent; unreadable is invalid. */
export async function readJsonObjectFile(file: string): Promise<JsonObjectRead> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'absent' };
    return { kind: 'invalid', error: `${file}: cannot be read (${code ?? (error as Error).message})` };
  }
  return parseJsonObject(text, file);
}

/** `text` (from `label`, a file or `--mcp-config #1`) as a JSON object (see JsonObjectRead). */
function parseJsonObject(text: string, label: string): JsonObjectRead {
  if (text.trim() === '') return { kind: 'absent' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const { line, column, message } = jsonErrorLocation(text, error);
    return { kind: 'invalid', error: `${label}:${line}:${column}: not valid JSON: ${message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'invalid', error: `${label}:1:1: must contain a JSON object` };
  return { kind: 'object', value: value as Record<string, unknown> };
}

/** Writes `value` as `file`'s whole JSON text through a temporary file (a reader never sees half of it). */
export async function writeJsonFile(file: string, value: unknown, mode?: number): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temporary, `${JSON.stringify(value, null, 2)}\n`, mode === undefined ? undefined : { mode });
  await rename(temporary, file);
}

/**
 * Reads and merges the settings: rule lists concatenate across files; `defaultMode` comes from
 * the highest-precedence file that sets it. Stop hooks come from the project and local files
 * (as before `--setting-sources` existed; `--setting-sources user` refuses a workspace's hooks).
 * `trust.trusted` false (the default): the workspace's files only tighten (issue 29).
 */
export async function loadSettings(
  cwd: string,
  sources: readonly SettingSource[] = SETTING_SOURCES,
  home = os.homedir(),
  trust: SettingsTrust = { trusted: false },
): Promise<LoadedSettings> {
  const permissions: PermissionSettings = { allow: [], deny: [], ask: [], additionalDirectories: [], homeDir: home };
  const stopHooks: StopHookMatcher[] = [];
  const warnings: string[] = [];
  const errors: string[] = [];
  let alwaysThinkingEnabled: boolean | undefined;
  for (const { source, file } of settingsFiles(cwd, sources, home)) {
    const read = await readJsonObjectFile(file);
    if (read.kind === 'absent') continue;
    if (read.kind === 'invalid') {
      errors.push(read.error);
      continue;
    }
    const record = read.value as { permissions?: unknown; hooks?: { Stop?: unknown }; alwaysThinkingEnabled?: unknown };
    // The user's own file is trusted; a workspace's file widens only once the workspace is.
    const widens = source === 'user' || trust.trusted;
    readPermissions(record.permissions, { file, source, cwd, widens }, permissions, warnings, errors);
    if (typeof record.alwaysThinkingEnabled === 'boolean') alwaysThinkingEnabled = record.alwaysThinkingEnabled;
    else if (record.alwaysThinkingEnabled !== undefined) warnings.push(`${file}: alwaysThinkingEnabled must be true or false; it was ignored.`);
    if (source !== 'user' && widens && typeof record.hooks === 'object' && record.hooks !== null && record.hooks.Stop !== undefined) {
      const parsed = stopHooksSchema.safeParse(record.hooks.Stop);
      if (parsed.success) stopHooks.push(...parsed.data);
      else {
        warnings.push(
          `${file}: hooks.Stop is not in Claude Code's format ({hooks:[{type:"command",command}]}), so its Stop hooks were ignored: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
        );
      }
    }
  }
  return { permissions, stopHooks, warnings, errors, ...(alwaysThinkingEnabled !== undefined ? { alwaysThinkingEnabled } : {}) };
}

/** Where a file's `permissions` come from, and whether it may widen (its allow rules, directories, mode). */
interface PermissionsOrigin {
  file: string;
  source: SettingSource;
  cwd: string;
  widens: boolean;
}

/** Modes that only narrow what runs without asking (an untrusted workspace may choose them). */
const NARROWING_MODES: readonly PermissionMode[] = ['default', 'plan', 'dontAsk'];

function readPermissions(value: unknown, origin: PermissionsOrigin, into: PermissionSettings, warnings: string[], errors: string[]): void {
  const { file, source, cwd, widens } = origin;
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    // Its deny and ask rules cannot be read: fail closed.
    errors.push(`${file}: "permissions" must be an object; its deny and ask rules cannot be read.`);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const list of ['allow', 'deny', 'ask'] as const) {
    const rules = record[list];
    if (rules === undefined) continue;
    // A deny or ask rule that cannot be read is an error (issue 29: fail closed); an allow rule only a warning.
    const report =
      list === 'allow'
        ? (text: string) => warnings.push(`${text}; it was ignored.`)
        : (text: string) => errors.push(`${text}, so the ${list} rules cannot be applied.`);
    if (!Array.isArray(rules)) {
      report(`${file}: permissions.${list} must be an array of rules`);
      continue;
    }
    if (list === 'allow' && !widens) continue; // untrusted: reported once, by workspace-trust.ts
    rules.forEach((rule, index) => {
      const problem = typeof rule === 'string' ? permissionRuleProblem(rule) : 'not a string';
      if (problem) {
        report(`${file}: permissions.${list}[${index}] cannot be read: ${problem}`);
        return;
      }
      // Issue 29: a workspace's allow rule never reaches outside it (Write(//abs/**), Read(~/.ssh/**), Edit(/../x)).
      const outside = list === 'allow' && source !== 'user' ? pathRuleReachOutside(rule as string, { cwd, homeDir: into.homeDir }) : undefined;
      if (outside) {
        warnings.push(
          `${file}: permissions.allow[${index}] ${JSON.stringify(rule)} ignored: ${outside}, and a project's settings cannot allow anything outside the workspace. Use --allowed-tools, or ~/.claude/settings.json, if you mean it.`,
        );
        return;
      }
      into[list].push({ rule: rule as string, source: SOURCE_NAMES[source] } satisfies RuleWithSource);
    });
  }
  if (record.defaultMode !== undefined) {
    if (record.defaultMode === 'bypassPermissions' && source !== 'user') {
      // issue 17 §6: a workspace's own file cannot give the model every permission; only the user can.
      warnings.push(
        `${file}: permissions.defaultMode "bypassPermissions" ignored: a project's settings cannot turn every permission check off. ` +
          'Start the conversation with --permission-mode bypassPermissions, or set it in ~/.claude/settings.json, if you mean it.',
      );
    } else if (typeof record.defaultMode === 'string' && (PERMISSION_MODES as readonly string[]).includes(record.defaultMode)) {
      // Untrusted: a mode that lets more run without asking (acceptEdits) waits for trust.
      if (widens || NARROWING_MODES.includes(record.defaultMode as PermissionMode)) into.defaultMode = record.defaultMode as PermissionMode;
    } else {
      warnings.push(`${file}: permissions.defaultMode ${JSON.stringify(record.defaultMode)} ignored (one of ${PERMISSION_MODES.join(', ')}).`);
    }
  }
  const directories = record.additionalDirectories;
  if (directories !== undefined && widens) {
    if (!Array.isArray(directories) || directories.some((directory) => typeof directory !== 'string')) {
      warnings.push(`${file}: permissions.additionalDirectories must be an array of paths; it was ignored.`);
    } else {
      for (const directory of directories as string[]) {
        const expanded = directory === '~' || directory.startsWith('~/') ? path.join(into.homeDir, directory.slice(1)) : directory;
        const absolute = path.resolve(cwd, expanded);
        // issue 17 §6: a workspace's file may name directories inside it; one outside (`/`, `~`) only the user's settings may add.
        if (source !== 'user' && !isWithin(absolute, cwd) && !into.additionalDirectories.includes(absolute)) {
          warnings.push(
            `${file}: permissions.additionalDirectories entry ${JSON.stringify(directory)} ignored: it is outside the workspace, and a project's settings cannot open directories outside it. ` +
              'Use --add-dir, or list it in ~/.claude/settings.json, if you mean it.',
          );
          continue;
        }
        into.additionalDirectories.push(absolute);
      }
    }
  }
}

function isWithin(target: string, directory: string): boolean {
  const relative = path.relative(directory, target);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** Where a JSON.parse error is, 1-based (Node names the position, or the line and column, in its message). */
function jsonErrorLocation(text: string, error: unknown): { line: number; column: number; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  const lineColumn = /line (\d+) column (\d+)/.exec(message);
  if (lineColumn) return { line: Number(lineColumn[1]), column: Number(lineColumn[2]), message };
  const position = /position (\d+)/.exec(message);
  // "Unexpected end of JSON input" names no position: the end it is.
  const offset = position ? Number(position[1]) : text.length;
  const before = text.slice(0, offset);
  return { line: before.split('\n').length, column: offset - before.lastIndexOf('\n'), message };
}

/**
 * Every settings file a conversation would read that cannot be read (issue 29), as
 * `file:line:column: …`: the user's, project's and local settings (with their deny and ask rules),
 * `.mcp.json` and each `--mcp-config` (a file, or inline JSON). The client refuses to start on any.
 */
export async function unreadableSettings(cwd: string, sources: readonly SettingSource[], home: string, mcpConfig: readonly string[] = []): Promise<string[]> {
  const { errors } = await loadSettings(cwd, sources, home, { trusted: true });
  const reads: JsonObjectRead[] = [];
  if (sources.includes('project')) reads.push(await readJsonObjectFile(path.join(cwd, '.mcp.json')));
  for (const [index, value] of mcpConfig.entries()) {
    // Claude Code's --mcp-config takes a file or a JSON string; it fails on either that cannot be read.
    if (value.trim().startsWith('{')) reads.push(parseJsonObject(value, `--mcp-config #${index + 1}`));
    else {
      const file = path.resolve(cwd, value);
      const read = await readJsonObjectFile(file);
      reads.push(read.kind === 'absent' ? { kind: 'invalid', error: `--mcp-config ${file}: no such file (or it is empty)` } : read);
    }
  }
  return [...errors, ...reads.flatMap((read) => (read.kind === 'invalid' ? [read.error] : []))];
}
