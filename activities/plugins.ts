/**
 * Claude Code's plugin layout (issue 33 §3), read from a local directory (`--plugin-dir`): a
 * `.claude-plugin/plugin.json` manifest (`name` required; `commands`, `agents`, `skills`, `hooks`,
 * `mcpServers` may name other paths) and the default folders `commands/`, `agents/`, `skills/`,
 * `hooks/hooks.json` and `.mcp.json`. This reads the manifest and the raw hook and MCP settings;
 * the existing loaders parse them (common/hooks.ts, common/mcp-config.ts) after
 * `${CLAUDE_PLUGIN_ROOT}` is replaced by the plugin's folder. loadPlugins picks a session's plugins.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';

export interface PluginLayout {
  name: string;
  root: string;
  commandDirectories: string[];
  agentDirectories: string[];
  skillDirectories: string[];
  /** The `hooks` object of hooks/hooks.json (or the manifest's), `${CLAUDE_PLUGIN_ROOT}` replaced. */
  hooks?: unknown;
  /** The `mcpServers` object of .mcp.json (or the manifest's), `${CLAUDE_PLUGIN_ROOT}` replaced. */
  mcpServers?: unknown;
}

const PLUGIN_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Reads the plugin at `root`; throws with the file's name when its manifest is missing or malformed. */
export async function readPlugin(root: string): Promise<PluginLayout> {
  const manifestFile = path.join(root, '.claude-plugin', 'plugin.json');
  const manifest = await readJson(manifestFile);
  if (manifest === undefined) throw new Error(`${manifestFile}: a plugin has a .claude-plugin/plugin.json manifest`);
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) throw new Error(`${manifestFile}: the manifest must be a JSON object`);
  const fields = manifest as Record<string, unknown>;
  if (typeof fields.name !== 'string' || !PLUGIN_NAME.test(fields.name))
    throw new Error(`${manifestFile}: the manifest needs a name (letters, digits, "-", "_", ".")`);
  const expand = (value: unknown): unknown =>
    value === undefined
      ? undefined
      : JSON.parse(
          JSON.stringify(value)
            .split('${CLAUDE_PLUGIN_ROOT}')
            .join(root.replace(/["\\]/g, (c) => `\\${c}`)),
        );
  const directories = (key: string, fallback: string): string[] => {
    const value = fields[key];
    const listed = typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
    return [path.join(root, fallback), ...listed.map((item) => path.resolve(root, item))].filter((item, index, all) => all.indexOf(item) === index);
  };
  const hooksFile = typeof fields.hooks === 'string' ? path.resolve(root, fields.hooks) : path.join(root, 'hooks', 'hooks.json');
  const hooksJson = typeof fields.hooks === 'object' ? { hooks: fields.hooks } : await readJson(hooksFile);
  const mcpFile = typeof fields.mcpServers === 'string' ? path.resolve(root, fields.mcpServers) : path.join(root, '.mcp.json');
  const mcpJson = typeof fields.mcpServers === 'object' ? { mcpServers: fields.mcpServers } : await readJson(mcpFile);
  return {
    name: fields.name,
    root,
    commandDirectories: directories('commands', 'commands'),
    agentDirectories: directories('agents', 'agents'),
    skillDirectories: directories('skills', 'skills'),
    ...(hooksJson && typeof hooksJson === 'object' && 'hooks' in hooksJson ? { hooks: expand((hooksJson as { hooks: unknown }).hooks) } : {}),
    ...(mcpJson && typeof mcpJson === 'object' && 'mcpServers' in mcpJson ? { mcpServers: expand((mcpJson as { mcpServers: unknown }).mcpServers) } : {}),
  };
}

async function readJson(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(`${file}: not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A plugin that loads in a session: its layout and why it loads (`--plugin-dir`, or installed and enabled). */
export interface LoadedPlugin extends PluginLayout {
  origin: 'plugin-dir' | 'installed';
  /** Installed plugins: Claude Code's id, `name@marketplace`. */
  id?: string;
}

/**
 * The session's plugins: every `--plugin-dir` (an error each that cannot be read: the person named
 * it, so it is never skipped silently) and the user's installed plugins that a settings file
 * enables (Claude Code's `~/.claude/plugins/installed_plugins.json` and `enabledPlugins`
 * `{"name@marketplace": true}`). Only the user's own settings enable plugins, and a trusted
 * workspace's `.claude/settings.json` / `settings.local.json` too: an untrusted workspace cannot
 * turn on code, and a workspace only ever picks among plugins the user installed (docs/security.md).
 * A broken installed plugin is a warning. Read on the workspace's host, where hooks and servers run.
 */
export async function loadPlugins(input: {
  cwd: string;
  pluginDirs?: readonly string[];
  home: string;
  trusted: boolean;
}): Promise<{ plugins: LoadedPlugin[]; errors: string[]; warnings: string[] }> {
  const plugins: LoadedPlugin[] = [];
  const errors: string[] = [];
  const warnings: string[] = [];
  for (const dir of input.pluginDirs ?? []) {
    const root = path.resolve(input.cwd, dir);
    const info = await stat(root).catch(() => undefined);
    if (!info?.isDirectory()) {
      errors.push(`--plugin-dir ${root}: not a directory on this worker`);
      continue;
    }
    try {
      plugins.push({ ...(await readPlugin(root)), origin: 'plugin-dir' });
    } catch (error) {
      errors.push(`--plugin-dir ${root}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const enabled = await enabledPluginIds(input, warnings);
  if (enabled.size > 0) {
    for (const [id, installPath] of await installedPlugins(input.home, warnings)) {
      if (!enabled.has(id)) continue;
      try {
        plugins.push({ ...(await readPlugin(installPath)), origin: 'installed', id });
      } catch (error) {
        warnings.push(`Plugin ${id} not loaded: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
  // One plugin per name (a --plugin-dir wins over an installed copy of the same plugin, as it is listed first).
  const seen = new Set<string>();
  const unique = plugins.filter((plugin) => {
    if (seen.has(plugin.name)) {
      warnings.push(`Plugin ${plugin.name} at ${plugin.root} not loaded: a plugin of that name is already loaded`);
      return false;
    }
    seen.add(plugin.name);
    return true;
  });
  return { plugins: unique, errors, warnings };
}

/** `enabledPlugins` ids set to true: the user's settings, then (trusted only) the project's and local; a later `false` disables. */
async function enabledPluginIds(input: { cwd: string; home: string; trusted: boolean }, warnings: string[]): Promise<Set<string>> {
  const files = [
    path.join(input.home, '.claude', 'settings.json'),
    ...(input.trusted ? [path.join(input.cwd, '.claude', 'settings.json'), path.join(input.cwd, '.claude', 'settings.local.json')] : []),
  ];
  const enabled = new Set<string>();
  for (const file of files) {
    const settings = await readJson(file).catch(() => undefined); // a settings file that does not parse stops the session context first
    const value = settings && typeof settings === 'object' ? (settings as Record<string, unknown>).enabledPlugins : undefined;
    if (value === undefined) continue;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      warnings.push(`${file}: enabledPlugins must be an object {"name@marketplace": true}; it was ignored`);
      continue;
    }
    for (const [id, on] of Object.entries(value)) {
      if (on === true) enabled.add(id);
      else enabled.delete(id);
    }
  }
  return enabled;
}

/**
 * Claude Code's installed_plugins.json: `{"version": 2, "plugins": {"id": [{"installPath": ...}]}}`
 * (version 1 holds one object per id instead of a list). The first install with a path counts.
 */
async function installedPlugins(home: string, warnings: string[]): Promise<Array<[string, string]>> {
  const file = path.join(home, '.claude', 'plugins', 'installed_plugins.json');
  let json: unknown;
  try {
    json = await readJson(file);
  } catch (error) {
    warnings.push(`${error instanceof Error ? error.message : String(error)}; no installed plugin was loaded`);
    return [];
  }
  const entries = json && typeof json === 'object' ? (json as Record<string, unknown>).plugins : undefined;
  if (!entries || typeof entries !== 'object') return [];
  const result: Array<[string, string]> = [];
  for (const [id, value] of Object.entries(entries)) {
    const installs: unknown[] = Array.isArray(value) ? value : [value];
    const install = installs.find(
      (item): item is { installPath: string } => !!item && typeof item === 'object' && typeof (item as { installPath?: unknown }).installPath === 'string',
    );
    if (install) result.push([id, path.resolve(home, install.installPath)]);
  }
  return result;
}
