/**
 * Claude Code's plugin layout (issue 33 §3), read from a local directory (`--plugin-dir`): a
 * `.claude-plugin/plugin.json` manifest (`name` required; `commands`, `agents`, `skills`, `hooks`,
 * `mcpServers` may name other paths) and the default folders `commands/`, `agents/`, `skills/`,
 * `hooks/hooks.json` and `.mcp.json`. This reads the manifest and the raw hook and MCP settings;
 * the existing loaders parse them (common/hooks.ts, common/mcp-config.ts) after
 * `${CLAUDE_PLUGIN_ROOT}` is replaced by the plugin's folder. Not yet wired into the session.
 */
import { readFile } from 'node:fs/promises';
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
