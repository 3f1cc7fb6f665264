/**
 * Loads Claude Code's Agent Skills for the session context (issue 33 §3): `~/.claude/skills/<name>/SKILL.md`
 * (user), `<workspace>/.claude/skills/<name>/SKILL.md` (project: only in a trusted workspace, as its
 * hooks and MCP servers) and a plugin's `skills/` folder. The project's skill wins a name clash. A
 * file that cannot be read or parsed is reported, not fatal.
 */
import { readFile, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MAX_SKILL_DESCRIPTION_CHARS, SKILL_NAME_PATTERN, type SkillDefinition } from '../common/skills';
import { listField, readFrontMatter, textField } from './front-matter';

export interface SkillSource {
  directory: string;
  scope: SkillDefinition['scope'];
  /** A plugin's skills are named `plugin:skill`. */
  plugin?: string;
}

/** The skill folders a session reads, in precedence order (later wins). */
export function skillSources(
  cwd: string,
  options: { home?: string; trusted: boolean; plugins?: ReadonlyArray<{ name: string; root: string }> },
): SkillSource[] {
  const home = options.home ?? os.homedir();
  return [
    ...(options.plugins ?? []).map((plugin) => ({ directory: path.join(plugin.root, 'skills'), scope: 'plugin' as const, plugin: plugin.name })),
    { directory: path.join(home, '.claude', 'skills'), scope: 'user' },
    ...(options.trusted ? [{ directory: path.join(cwd, '.claude', 'skills'), scope: 'project' as const }] : []),
  ];
}

export async function readSkills(sources: readonly SkillSource[]): Promise<{ skills: SkillDefinition[]; errors: string[] }> {
  const byName = new Map<string, SkillDefinition>();
  const errors: string[] = [];
  for (const source of sources) {
    const entries = await readdir(source.directory, { withFileTypes: true }).catch(() => []);
    for (const entry of [...entries].sort((a, b) => a.name.localeCompare(b.name))) {
      if (!entry.isDirectory()) continue;
      const directory = path.join(source.directory, entry.name);
      const file = path.join(directory, 'SKILL.md');
      const text = await readFile(file, 'utf8').catch(() => undefined);
      if (text === undefined) continue;
      try {
        const skill = parseSkillFile(text, { file, directory, folderName: entry.name, scope: source.scope, plugin: source.plugin });
        byName.set(skill.name, skill);
      } catch (error) {
        errors.push(`Skill ignored: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
  return { skills: [...byName.values()], errors };
}

/** Parses one SKILL.md: front matter with `description` (required), `name` (else the folder's), `allowed-tools`, `model`, `disable-model-invocation`. */
export function parseSkillFile(
  text: string,
  where: { file: string; directory: string; folderName: string; scope: SkillDefinition['scope']; plugin?: string },
): SkillDefinition {
  const file = readFrontMatter(text, where.file);
  if (!file) throw new Error(`${where.file}: a SKILL.md starts with front matter between --- lines (name, description)`);
  // Real collections write display names (`name: Git Commit Helper`); Claude Code then goes by the folder's name.
  const declared = textField(file.fields, 'name')?.trim();
  const ownName = declared && SKILL_NAME_PATTERN.test(declared) ? declared : where.folderName;
  const name = where.plugin ? `${where.plugin}:${ownName}` : ownName;
  if (!SKILL_NAME_PATTERN.test(name)) throw new Error(`${where.file}: the skill name "${name}" has characters other than lowercase letters, digits and "-"`);
  const description = textField(file.fields, 'description')?.trim();
  if (!description) throw new Error(`${where.file}: the front matter needs a description`);
  const model = textField(file.fields, 'model')?.trim();
  const disable = file.fields['disable-model-invocation'];
  return {
    name,
    description: description.length > MAX_SKILL_DESCRIPTION_CHARS ? `${description.slice(0, MAX_SKILL_DESCRIPTION_CHARS - 1)}…` : description,
    allowedTools: listField(file.fields, 'allowed-tools'),
    ...(model && model !== 'inherit' ? { model } : {}),
    ...(disable === true || disable === 'true' ? { disableModelInvocation: true } : {}),
    body: file.body.trim(),
    directory: where.directory,
    scope: where.scope,
  };
}
