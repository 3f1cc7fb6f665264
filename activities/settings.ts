/**
 * Claude Code's settings files, read on the workspace's host once per session (with the session
 * context): `~/.claude/settings.json` (user), `<workspace>/.claude/settings.json` (project) and
 * `<workspace>/.claude/settings.local.json` (local), filtered by `--setting-sources`. They give
 * the permission rules, `defaultMode`, `additionalDirectories` and the Stop hooks. A malformed
 * file is skipped with a warning that names the file and the position; nothing else is lost.
 */
import { readFile } from 'node:fs/promises';
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
  permissionRuleProblem,
} from '../common/permissions';

export interface LoadedSettings {
  permissions: PermissionSettings;
  stopHooks: StopHookMatcher[];
  warnings: string[];
  /** Claude Code's `alwaysThinkingEnabled` (the highest-precedence file that sets it); false turns extended thinking off. */
  alwaysThinkingEnabled?: boolean;
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
 * Reads and merges the settings: rule lists concatenate across files; `defaultMode` comes from
 * the highest-precedence file that sets it. Stop hooks come from the project and local files
 * (as before `--setting-sources` existed; `--setting-sources user` refuses a workspace's hooks).
 */
export async function loadSettings(cwd: string, sources: readonly SettingSource[] = SETTING_SOURCES, home = os.homedir()): Promise<LoadedSettings> {
  const permissions: PermissionSettings = { allow: [], deny: [], ask: [], additionalDirectories: [], homeDir: home };
  const stopHooks: StopHookMatcher[] = [];
  const warnings: string[] = [];
  let alwaysThinkingEnabled: boolean | undefined;
  for (const { source, file } of settingsFiles(cwd, sources, home)) {
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined || text.trim() === '') continue;
    let settings: unknown;
    try {
      settings = JSON.parse(text);
    } catch (error) {
      warnings.push(`${file} is not valid JSON (${jsonErrorPosition(text, error)}); its settings (permission rules, hooks) were ignored. Fix the file; it is read when a conversation starts.`);
      continue;
    }
    if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
      warnings.push(`${file} must contain a JSON object; its settings were ignored.`);
      continue;
    }
    const record = settings as { permissions?: unknown; hooks?: { Stop?: unknown }; alwaysThinkingEnabled?: unknown };
    readPermissions(record.permissions, file, source, cwd, permissions, warnings);
    if (typeof record.alwaysThinkingEnabled === 'boolean') alwaysThinkingEnabled = record.alwaysThinkingEnabled;
    else if (record.alwaysThinkingEnabled !== undefined) warnings.push(`${file}: alwaysThinkingEnabled must be true or false; it was ignored.`);
    if (source !== 'user' && record.hooks?.Stop !== undefined) {
      const parsed = stopHooksSchema.safeParse(record.hooks.Stop);
      if (parsed.success) stopHooks.push(...parsed.data);
      else {
        warnings.push(
          `${file}: hooks.Stop is not in Claude Code's format ({hooks:[{type:"command",command}]}), so its Stop hooks were ignored: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
        );
      }
    }
  }
  return { permissions, stopHooks, warnings, ...(alwaysThinkingEnabled !== undefined ? { alwaysThinkingEnabled } : {}) };
}

function readPermissions(value: unknown, file: string, source: SettingSource, cwd: string, into: PermissionSettings, warnings: string[]): void {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    warnings.push(`${file}: "permissions" must be an object; it was ignored.`);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const list of ['allow', 'deny', 'ask'] as const) {
    const rules = record[list];
    if (rules === undefined) continue;
    if (!Array.isArray(rules)) {
      warnings.push(`${file}: permissions.${list} must be an array of rules; it was ignored.`);
      continue;
    }
    rules.forEach((rule, index) => {
      const problem = typeof rule === 'string' ? permissionRuleProblem(rule) : 'not a string';
      if (problem) warnings.push(`${file}: permissions.${list}[${index}] ignored: ${problem}`);
      else into[list].push({ rule: rule as string, source: SOURCE_NAMES[source] } satisfies RuleWithSource);
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
      into.defaultMode = record.defaultMode as PermissionMode;
    } else {
      warnings.push(`${file}: permissions.defaultMode ${JSON.stringify(record.defaultMode)} ignored (one of ${PERMISSION_MODES.join(', ')}).`);
    }
  }
  const directories = record.additionalDirectories;
  if (directories !== undefined) {
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

/** "line 3, column 7" from a JSON.parse error (Node names the position in its message). */
export function jsonErrorPosition(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const lineColumn = /line (\d+) column (\d+)/.exec(message);
  if (lineColumn) return `line ${lineColumn[1]}, column ${lineColumn[2]}: ${message}`;
  const position = /position (\d+)/.exec(message);
  if (position) {
    const offset = Number(position[1]);
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    const column = offset - before.lastIndexOf('\n');
    return `line ${line}, column ${column}: ${message}`;
  }
  return message;
}
