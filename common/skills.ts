/**
 * Claude Code's Agent Skills (issue 33 §3): a folder with a `SKILL.md` whose `---` front matter
 * names the skill (`name`, `description`, optional `allowed-tools`, `model`,
 * `disable-model-invocation`) and whose body is loaded only when the skill is used — by the model
 * through the Skill tool, or by the person as `/<skill-name>`. Pure: the session-context activity
 * reads and parses the files (activities/skills.ts); the workflow offers names and descriptions.
 *
 * The session context carries a `SkillEntry` — the definition without its body: a hundred skills'
 * bodies (real ones run to tens of kilobytes) in the context's activity result and every
 * continue-as-new input would be most of the history for nothing. The body is read where the skill
 * lives when it is invoked (activities/skills.ts `loadSkillBody`, an activity: retried, recorded).
 */
import type { RuleWithSource } from './permission-rules';

export interface SkillDefinition {
  /** The skill's name (the front matter's, else its folder's); `plugin:name` for a plugin's skill. */
  name: string;
  description: string;
  /** Tools the skill may use without asking while it is active (through the permission engine). */
  allowedTools?: string[];
  /** The model the skill asks for (absent or `inherit`: the conversation's). */
  model?: string;
  /** Only the person may invoke it (`/<name>`); not offered to the model. */
  disableModelInvocation?: boolean;
  /** The instructions, loaded when the skill is invoked. */
  body: string;
  /** The skill's folder (its supporting files are read from there). */
  directory: string;
  scope: 'project' | 'user' | 'plugin';
}

/** A skill as the session context records it: everything but the body. */
export type SkillEntry = Omit<SkillDefinition, 'body'>;

/** What `loadSkillBody` reads: the recorded skill's own SKILL.md. */
export interface LoadSkillBodyInput {
  name: string;
  directory: string;
}

/** Its SKILL.md's body, or why it could not be read (the model or the person hears it). */
export type LoadSkillBodyResult = { body: string } | { problem: string };

/** Names a skill can have: Claude Code's (lowercase letters, digits and hyphens, at most 64), a plugin's prefixed by `plugin:`. */
export const SKILL_NAME_PATTERN = /^(?:[a-z0-9][a-z0-9-]{0,63}:)?[a-z0-9][a-z0-9-]{0,63}$/;

/** Claude Code bounds a skill's description at 1024 characters. */
export const MAX_SKILL_DESCRIPTION_CHARS = 1024;

/** The skills the model is offered: every one but those only a person may invoke. */
export function modelInvocableSkills<T extends SkillEntry>(skills: readonly T[]): T[] {
  return skills.filter((skill) => !skill.disableModelInvocation);
}

/** The list of skills offered to the model up front (names and descriptions only; undefined when none). */
export function skillListing(skills: readonly SkillEntry[]): string | undefined {
  const offered = modelInvocableSkills(skills);
  if (offered.length === 0) return undefined;
  return [
    '# Skills',
    'The following skills are available for use with the Skill tool. When a task matches a description, invoke the skill with the Skill tool before anything else:',
    ...offered.map((skill) => `- ${skill.name}: ${skill.description}`),
  ].join('\n');
}

/** The skill the model's Skill call names, or an error result it can act on. */
export function resolveSkillCall<T extends SkillEntry>(skills: readonly T[], name: string): { skill: T } | { error: string } {
  const wanted = name.trim().replace(/^\//, '');
  const skill = skills.find((candidate) => candidate.name === wanted);
  if (!skill) {
    const known = modelInvocableSkills(skills).map((candidate) => candidate.name);
    return { error: `Unknown skill: ${wanted}.${known.length > 0 ? ` Available skills: ${known.join(', ')}` : ' No skills are available.'}` };
  }
  if (skill.disableModelInvocation) return { error: `Skill ${wanted} can only be invoked by the user (/${wanted}).` };
  return { skill };
}

/**
 * The skill's instructions as the model reads them (Claude Code's: the folder first, so relative
 * paths in the body resolve). `body`: with the invocation's arguments already expanded as a
 * custom command's are (workflows/input/slash-commands.ts `expandCommandArguments`).
 */
export function skillPrompt(skill: Pick<SkillEntry, 'directory'>, body: string): string {
  return `Base directory for this skill: ${skill.directory}\n\n${body}`;
}

/** The Skill tool's answer while the body loads (Claude Code's tool result; the body follows as a user message). */
export function launchingSkillText(name: string): string {
  return `Launching skill: ${name}`;
}

/** What makes a tool run without asking while the query runs: an active skill or the custom command that started it. */
export interface QueryGrant {
  allowedTools?: string[];
  /** A workspace's own skill or command: its rules count as the workspace's settings (they cover nothing outside it). */
  project?: boolean;
  /** A skill's folder: Read, Glob and Grep under it need no approval. */
  directory?: string;
}

/** What an invoked skill grants while it is active. */
export function skillGrant(skill: SkillEntry): QueryGrant {
  return { allowedTools: skill.allowedTools, directory: skill.directory, ...(skill.scope === 'project' ? { project: true } : {}) };
}

/**
 * The allow rules of the query's grants: their `allowed-tools`, and reading a skill's folder
 * (`Read(//dir/**)` covers Read, Glob and Grep). A folder whose path a rule cannot name (glob
 * characters) gets no rule: its files ask as before.
 */
export function grantRules(grants: readonly QueryGrant[]): RuleWithSource[] {
  const rules = new Map<string, RuleWithSource>();
  for (const grant of grants) {
    const source = grant.project ? 'projectSettings' : 'session';
    const folder = grant.directory?.startsWith('/') && !/[()*?[\]{}]/.test(grant.directory) ? [`Read(/${grant.directory}/**)`] : [];
    for (const rule of [...(grant.allowedTools ?? []), ...folder]) if (!rules.has(`${source} ${rule}`)) rules.set(`${source} ${rule}`, { rule, source });
  }
  return [...rules.values()];
}
