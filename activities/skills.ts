/**
 * Loads Claude Code's Agent Skills for the session context (issue 33 §3): `~/.claude/skills/<name>/SKILL.md`
 * (user), `<workspace>/.claude/skills/<name>/SKILL.md` (project: only in a trusted workspace, as its
 * hooks and MCP servers) and a plugin's `skills/` folder. The project's skill wins a name clash. A
 * file that cannot be read or parsed is reported, not fatal.
 */
import { readFile, readdir, realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  type LoadSkillBodyInput,
  type LoadSkillBodyResult,
  MAX_SKILL_DESCRIPTION_CHARS,
  SKILL_NAME_PATTERN,
  type SkillDefinition,
  type SkillEntry,
} from '../common/skills';
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

/**
 * Parses one SKILL.md: front matter with `description`, `name` (else the folder's), `allowed-tools`,
 * `model`, `disable-model-invocation`. Claude Code makes every field optional: without a
 * description (or without front matter at all, as some published collections ship) the skill is
 * described by the body's first paragraph; a file with nothing to describe it by is refused.
 */
export function parseSkillFile(
  text: string,
  where: { file: string; directory: string; folderName: string; scope: SkillDefinition['scope']; plugin?: string },
): SkillDefinition {
  const file = readFrontMatter(text, where.file) ?? { fields: {}, body: text };
  // Real collections write display names (`name: Git Commit Helper`); Claude Code then goes by the folder's name.
  const declared = textField(file.fields, 'name')?.trim();
  const ownName = declared && SKILL_NAME_PATTERN.test(declared) ? declared : where.folderName;
  const name = where.plugin ? `${where.plugin}:${ownName}` : ownName;
  if (!SKILL_NAME_PATTERN.test(name)) throw new Error(`${where.file}: the skill name "${name}" has characters other than lowercase letters, digits and "-"`);
  const description = textField(file.fields, 'description')?.trim() || firstParagraph(file.body);
  if (!description) throw new Error(`${where.file}: the skill has no description (front matter \`description:\`, or a first paragraph)`);
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

/** The skills for the session context: their bodies left where they are (common/skills.ts `SkillEntry`). */
export async function readSkillEntries(sources: readonly SkillSource[]): Promise<{ skills: SkillEntry[]; errors: string[] }> {
  const read = await readSkills(sources);
  return { skills: read.skills.map(({ body: _body, ...entry }) => entry), errors: read.errors };
}

/**
 * loadSkillBody activity: the body of a skill the session context recorded, read when it is
 * invoked. Only the skill's own SKILL.md: the file is `SKILL.md` in the recorded folder, and what it
 * resolves to (a symlinked skill is followed, as Claude Code does) is still a file named SKILL.md
 * that parses as that same skill — a link to a key or a settings file has no skill front matter and
 * is refused, so nothing else reaches the model through it.
 */
export async function loadSkillBody(input: LoadSkillBodyInput): Promise<LoadSkillBodyResult> {
  const file = path.join(input.directory, 'SKILL.md');
  const real = await realpath(file).catch(() => undefined);
  if (!real) return { problem: `The skill ${input.name} is gone: ${file} cannot be read.` };
  if (path.basename(real) !== 'SKILL.md') return { problem: `The skill ${input.name}: ${file} does not resolve to a SKILL.md (${real}); not read.` };
  const text = await readFile(real, 'utf8').catch(() => undefined);
  if (text === undefined) return { problem: `The skill ${input.name} is gone: ${file} cannot be read.` };
  const plugin = input.name.includes(':') ? input.name.slice(0, input.name.indexOf(':')) : undefined;
  try {
    const skill = parseSkillFile(text, { file, directory: input.directory, folderName: path.basename(input.directory), scope: 'user', plugin });
    if (skill.name !== input.name) return { problem: `The skill ${input.name}: ${file} now names the skill ${skill.name}; not loaded.` };
    return { body: skill.body };
  } catch (error) {
    return { problem: `The skill ${input.name} cannot be loaded: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** The body's first paragraph of prose (headings, fences and lists skipped), else its first heading's text. */
function firstParagraph(body: string): string | undefined {
  let heading: string | undefined;
  let fenced = false;
  const paragraph: string[] = [];
  for (const raw of body.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced || line.startsWith('```')) {
      if (paragraph.length > 0) break;
      continue;
    }
    if (line === '') {
      if (paragraph.length > 0) break;
      continue;
    }
    if (/^#{1,6}\s/.test(line)) {
      if (paragraph.length > 0) break;
      heading ??= line.replace(/^#+\s*/, '');
      continue;
    }
    if (/^([-*+>|]|\d+\.)\s?/.test(line) && paragraph.length === 0) continue;
    paragraph.push(line);
  }
  return paragraph.length > 0 ? paragraph.join(' ') : heading;
}
