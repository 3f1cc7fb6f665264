/**
 * Loads Claude Code's custom slash commands for the session context: `~/.claude/commands/**.md`
 * (user) and `<workspace>/.claude/commands/**.md` (project; it wins on a name clash). A
 * subdirectory namespaces a command (`frontend/test.md` → `/frontend:test`). A file that cannot
 * be read or parsed is reported, not fatal. A plugin's `commands/` files are `/plugin-name:command`.
 */
import { readFile, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type CustomCommand, commandNameOf } from '../common/custom-commands';
import { listField, readFrontMatter, textField } from './front-matter';

/** Directory depth searched under a commands directory (namespaces are rarely deeper). */
const MAX_DEPTH = 4;

export async function readCustomCommands(
  cwd: string,
  home = os.homedir(),
  { project = true, plugins = [] }: { project?: boolean; plugins?: ReadonlyArray<{ name: string; commandDirectories: string[] }> } = {},
): Promise<{ commands: CustomCommand[]; errors: string[] }> {
  const byName = new Map<string, CustomCommand>();
  const errors: string[] = [];
  // Issue 33: a plugin's commands are `/plugin:command` (Claude Code's namespacing), so they never clash with the user's.
  const sources: Array<{ directory: string; scope: CustomCommand['scope']; plugin?: string }> = [
    ...plugins.flatMap((plugin) => plugin.commandDirectories.map((directory) => ({ directory, scope: 'plugin' as const, plugin: plugin.name }))),
    { directory: path.join(home, '.claude', 'commands'), scope: 'user' },
    ...(project ? [{ directory: path.join(cwd, '.claude', 'commands'), scope: 'project' as const }] : []),
  ];
  for (const { directory, scope, plugin } of sources) {
    for (const relative of await markdownFiles(directory, '', 0)) {
      const base = commandNameOf(relative);
      const name = base && plugin ? `${plugin}:${base}` : base;
      const source = path.join(directory, relative);
      if (!name) {
        errors.push(`Command file ignored: ${source}: a command name has letters, digits, "_", "-" and "." only`);
        continue;
      }
      try {
        byName.set(name, parseCommandFile(await readFile(source, 'utf8'), name, scope, source));
      } catch (error) {
        errors.push(`Command file ignored: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
  return { commands: [...byName.values()], errors };
}

async function markdownFiles(root: string, relative: string, depth: number): Promise<string[]> {
  const entries = await readdir(path.join(root, relative), { withFileTypes: true }).catch(() => []);
  const files: string[] = [];
  for (const entry of [...entries].sort((a, b) => a.name.localeCompare(b.name))) {
    const child = relative ? path.join(relative, entry.name) : entry.name;
    if (entry.isDirectory() && depth < MAX_DEPTH) files.push(...(await markdownFiles(root, child, depth + 1)));
    else if (entry.isFile() && entry.name.endsWith('.md')) files.push(child);
  }
  return files;
}

/** Parses one command file. Front matter (YAML) is optional; a malformed one is an error with the file's name. */
export function parseCommandFile(text: string, name: string, scope: CustomCommand['scope'], source: string): CustomCommand {
  const file = readFrontMatter(text, source);
  const fields = file?.fields ?? {};
  const body = (file ? file.body : text).trim();
  const text_ = (key: string) => {
    const value = textField(fields, key)?.trim();
    return value === '' ? undefined : value;
  };
  const model = text_('model');
  const firstLine = body
    .split('\n')
    .find((line) => line.trim() !== '')
    ?.trim()
    .replace(/^#+\s*/, '');
  return {
    name,
    description: text_('description') ?? (firstLine ? truncate(firstLine, 100) : 'Custom command'),
    argumentHint: text_('argument-hint'),
    model: model && model !== 'inherit' ? model : undefined,
    allowedTools: listField(fields, 'allowed-tools'),
    body,
    scope,
    source,
  };
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
