/**
 * Claude Code's `sandbox` settings (issue 17 §10), read on the workspace's host for every Bash call
 * and Stop hook run (cheap: each file is re-parsed only when its mtime or size changes).
 *
 * Sources, lowest precedence first: `~/.claude/settings.json` (user), `<cwd>/.claude/settings.json`
 * (project), `<cwd>/.claude/settings.local.json` (local), then the conversation's own config. The
 * user's file and the conversation's config are the user's word and may weaken the sandbox; the
 * project and local files come with the workspace (a cloned repository), so they may only tighten
 * it: a key that would weaken it is ignored with a warning naming the file and the key.
 *
 * Keys (Claude Code's names): `enabled` (default true here), `failIfUnavailable` (default false),
 * `allowUnsandboxedCommands` (default true), `excludedCommands`, `network.allowedDomains` (absent or
 * `[]`: no network, as Claude Code's sandbox; a list: only those domains, through a proxy that never
 * reaches this host's own addresses — activities/sandbox-network.ts),
 * `filesystem.allowWrite`, `filesystem.denyWrite`, `filesystem.denyRead`.
 */
import { readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BashFacts } from '../common/permission-facts';
import { SETTING_SOURCES, type SettingSource } from '../common/permissions';

/** The effective sandbox configuration of one call. Paths are absolute. */
export interface SandboxSettings {
  enabled: boolean;
  /** No working sandbox on this host: refuse to run (true) or run unsandboxed with a warning (false). */
  failIfUnavailable: boolean;
  /** Whether `dangerouslyDisableSandbox: true` on a Bash call is honoured. */
  allowUnsandboxedCommands: boolean;
  /** Commands run outside the sandbox (see `isExcludedCommand`). */
  excludedCommands: string[];
  /** Empty: no network. Otherwise only these domains (`*.example.com` for subdomains, `*` any), through the proxy. */
  allowedDomains: string[];
  /** Writable besides the working directories and the private /tmp. */
  allowWrite: string[];
  /** Read-only even inside the working directories. */
  denyWrite: string[];
  /** Hidden (an empty directory or file in their place). */
  denyRead: string[];
}

export const DEFAULT_SANDBOX_SETTINGS: Readonly<SandboxSettings> = Object.freeze({
  enabled: true,
  failIfUnavailable: false,
  allowUnsandboxedCommands: true,
  excludedCommands: [],
  allowedDomains: [],
  allowWrite: [],
  denyWrite: [],
  denyRead: [],
});

/** One source of `sandbox` settings: its raw value and whether it may weaken the sandbox. */
export interface SandboxSettingsLayer {
  /** Named in warnings: a file path, or "the conversation's config". */
  origin: string;
  /** User settings and the conversation's config: true. Project and local files: false. */
  trusted: boolean;
  value: unknown;
}

export interface ResolvedSandboxSettings {
  settings: SandboxSettings;
  /** Keys ignored (malformed, or a workspace file trying to weaken the sandbox), one sentence each. */
  warnings: string[];
}

export interface MergeContext {
  cwd: string;
  home: string;
  /** The working directories (cwd first): paths inside them are writable anyway. */
  workingDirectories: string[];
}

/**
 * Folds the layers (lowest precedence first) into one configuration. Pure: the loader reads the
 * files; the tests call this directly.
 */
export function mergeSandboxSettings(layers: readonly SandboxSettingsLayer[], context: MergeContext): ResolvedSandboxSettings {
  const settings: SandboxSettings = { ...DEFAULT_SANDBOX_SETTINGS, excludedCommands: [], allowedDomains: [], allowWrite: [], denyWrite: [], denyRead: [] };
  const warnings: string[] = [];
  for (const layer of layers) {
    if (layer.value === undefined) continue;
    if (!isRecord(layer.value)) {
      warnings.push(`${layer.origin}: "sandbox" must be an object; it was ignored.`);
      continue;
    }
    applyLayer(settings, layer, layer.value, context, warnings);
  }
  return { settings, warnings };
}

function applyLayer(into: SandboxSettings, layer: SandboxSettingsLayer, value: Record<string, unknown>, context: MergeContext, warnings: string[]): void {
  const { origin, trusted } = layer;
  const refuse = (key: string, why: string) =>
    warnings.push(
      `${origin}: sandbox.${key} ignored: ${why}; only your user settings (~/.claude/settings.json) or the conversation's own config may weaken the sandbox.`,
    );
  const boolean = (key: 'enabled' | 'failIfUnavailable' | 'allowUnsandboxedCommands', weakerWhen: boolean) => {
    const raw = value[key];
    if (raw === undefined) return;
    if (typeof raw !== 'boolean') {
      warnings.push(`${origin}: sandbox.${key} must be true or false; it was ignored.`);
      return;
    }
    if (!trusted && raw === weakerWhen && into[key] !== weakerWhen) {
      refuse(key, `a workspace settings file may not set it to ${raw}`);
      return;
    }
    into[key] = raw;
  };
  boolean('enabled', false);
  boolean('failIfUnavailable', false);
  boolean('allowUnsandboxedCommands', true);

  const excluded = stringList(value.excludedCommands, `${origin}: sandbox.excludedCommands`, warnings);
  if (excluded && excluded.length > 0) {
    if (trusted) into.excludedCommands.push(...excluded.map((command) => command.trim()).filter((command) => command !== ''));
    else refuse('excludedCommands', 'it would run commands outside the sandbox');
  }

  if (value.network !== undefined) {
    if (!isRecord(value.network)) warnings.push(`${origin}: sandbox.network must be an object; it was ignored.`);
    else {
      const domains = stringList(value.network.allowedDomains, `${origin}: sandbox.network.allowedDomains`, warnings);
      if (domains) {
        const normalized = domains.map((domain) => domain.trim().toLowerCase()).filter((domain) => domain !== '');
        if (trusted) into.allowedDomains = [...new Set([...into.allowedDomains, ...normalized])];
        else {
          // A workspace file may narrow the list, never widen it.
          const wider = normalized.filter((domain) => !into.allowedDomains.includes(domain));
          if (wider.length > 0) refuse('network.allowedDomains', `${wider.join(', ')} not allowed by your user settings`);
          into.allowedDomains = into.allowedDomains.filter((domain) => normalized.includes(domain));
        }
      }
    }
  }

  if (value.filesystem !== undefined) {
    if (!isRecord(value.filesystem)) {
      warnings.push(`${origin}: sandbox.filesystem must be an object; it was ignored.`);
      return;
    }
    const paths = (key: 'allowWrite' | 'denyWrite' | 'denyRead') =>
      (stringList((value.filesystem as Record<string, unknown>)[key], `${origin}: sandbox.filesystem.${key}`, warnings) ?? [])
        .filter((entry) => entry.trim() !== '')
        .map((entry) => expandSettingsPath(entry, context));
    into.denyWrite.push(...paths('denyWrite'));
    into.denyRead.push(...paths('denyRead'));
    for (const entry of paths('allowWrite')) {
      if (trusted) into.allowWrite.push(entry);
      else if (!context.workingDirectories.some((root) => isInside(entry, root))) {
        refuse('filesystem.allowWrite', `${entry} is outside the working directories`);
      }
      // Inside the working directories it is writable anyway.
    }
  }
}

/** `~/x` (home), `//x` and `/x` (absolute), `x` (relative to the workspace). */
export function expandSettingsPath(entry: string, context: Pick<MergeContext, 'cwd' | 'home'>): string {
  const trimmed = entry.trim();
  if (trimmed === '~' || trimmed.startsWith('~/')) return path.join(context.home, trimmed.slice(1));
  if (trimmed.startsWith('//')) return path.resolve(trimmed.slice(1));
  return path.resolve(context.cwd, trimmed);
}

/** Whether `candidate` is `root` or below it (lexically; callers pass resolved paths). */
export function isInside(candidate: string, root: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * Whether a command is one of the user's `excludedCommands` (run outside the sandbox), on its
 * parsed facts (activities/permission-facts/bash-facts.ts; issue 29: one Bash analysis): an entry `npm`
 * or `npm:*` covers `npm`, `npm run x`; `docker ps` covers `docker ps -a`. Only one plain simple
 * command qualifies — nothing the parser could not follow, no wrapper or nesting, no redirect from
 * or to a file, no word known only at run time — so `npm test; curl evil` or `npm $(rm -rf ~)`
 * never leaves the sandbox through an entry. No facts: not excluded (fails closed).
 */
export function isExcludedCommand(facts: BashFacts | undefined, excludedCommands: readonly string[]): boolean {
  if (excludedCommands.length === 0 || facts === undefined || facts.problems.length > 0 || facts.commands.length !== 1) return false;
  const [command] = facts.commands;
  if (command.argv.length === 0 || command.nested || command.wrappers.length > 0 || command.writesByRedirect || command.readsByRedirect !== false) return false;
  if (command.dynamicWords.some(Boolean)) return false;
  return excludedCommands.some((entry) => {
    const prefix = entry.replace(/:\*$/, '').trim().split(/\s+/);
    return prefix.length <= command.argv.length && prefix.every((word, index) => word === command.argv[index]);
  });
}

interface CachedFile {
  mtimeMs: number;
  size: number;
  value: unknown;
  warning?: string;
}
const fileCache = new Map<string, CachedFile>();

/** A settings file's `sandbox` value (undefined when absent), re-read only when the file changed. */
async function readSandboxValue(file: string): Promise<{ value: unknown; warning?: string }> {
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) {
    fileCache.delete(file);
    return { value: undefined };
  }
  const cached = fileCache.get(file);
  if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached;
  const text = await readFile(file, 'utf8').catch(() => '');
  let entry: CachedFile = { mtimeMs: info.mtimeMs, size: info.size, value: undefined };
  if (text.trim() !== '') {
    try {
      const parsed: unknown = JSON.parse(text);
      entry.value = isRecord(parsed) ? parsed.sandbox : undefined;
    } catch {
      entry = { ...entry, warning: `${file} is not valid JSON; its sandbox settings were ignored.` };
    }
  }
  fileCache.set(file, entry);
  return entry;
}

export interface LoadSandboxSettingsOptions {
  cwd: string;
  /** Working directories besides cwd (`--add-dir`, `additionalDirectories`). */
  additionalDirectories?: readonly string[];
  /** `--setting-sources`: which settings files apply; default all. */
  settingSources?: readonly SettingSource[];
  /** Claude Code's `sandbox` object from the conversation's config (trusted like the user's settings). */
  config?: unknown;
  home?: string;
}

/** The effective settings for one call in `cwd`: user, project and local files, then the conversation's config. */
export async function loadSandboxSettings(options: LoadSandboxSettingsOptions): Promise<ResolvedSandboxSettings> {
  const home = options.home ?? os.homedir();
  const sources = options.settingSources ?? SETTING_SOURCES;
  const files: Array<{ source: SettingSource; file: string }> = [
    { source: 'user', file: path.join(home, '.claude', 'settings.json') },
    { source: 'project', file: path.join(options.cwd, '.claude', 'settings.json') },
    { source: 'local', file: path.join(options.cwd, '.claude', 'settings.local.json') },
  ];
  const layers: SandboxSettingsLayer[] = [];
  const readWarnings: string[] = [];
  for (const { source, file } of files) {
    if (!sources.includes(source)) continue;
    const { value, warning } = await readSandboxValue(file);
    if (warning) readWarnings.push(warning);
    layers.push({ origin: file, trusted: source === 'user', value });
  }
  layers.push({ origin: "the conversation's config", trusted: true, value: options.config });
  const workingDirectories = [options.cwd, ...(options.additionalDirectories ?? [])].map((directory) => path.resolve(options.cwd, directory));
  const merged = mergeSandboxSettings(layers, { cwd: path.resolve(options.cwd), home, workingDirectories });
  return { settings: merged.settings, warnings: [...readWarnings, ...merged.warnings] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringList(value: unknown, name: string, warnings: string[]): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((entry) => typeof entry !== 'string')) {
    warnings.push(`${name} must be an array of strings; it was ignored.`);
    return undefined;
  }
  return value as string[];
}
