/**
 * Claude Code's Agent Skills (issue 33 §3): a folder with a `SKILL.md` whose `---` front matter
 * names the skill (`name`, `description`, optional `allowed-tools`, `model`,
 * `disable-model-invocation`) and whose body is loaded only when the skill is used — by the model
 * through the Skill tool, or by the person as `/<skill-name>`. Pure: the session-context activity
 * reads and parses the files (activities/skills.ts); the workflow offers names and descriptions.
 */
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

/** Names a skill can have: Claude Code's (lowercase letters, digits and hyphens, at most 64), a plugin's prefixed by `plugin:`. */
export const SKILL_NAME_PATTERN = /^(?:[a-z0-9][a-z0-9-]{0,63}:)?[a-z0-9][a-z0-9-]{0,63}$/;

/** Claude Code bounds a skill's description at 1024 characters. */
export const MAX_SKILL_DESCRIPTION_CHARS = 1024;

/** The skills the model is offered: every one but those only a person may invoke. */
export function modelInvocableSkills(skills: readonly SkillDefinition[]): SkillDefinition[] {
  return skills.filter((skill) => !skill.disableModelInvocation);
}

/** The list of skills offered to the model up front (names and descriptions only; undefined when none). */
export function skillListing(skills: readonly SkillDefinition[]): string | undefined {
  const offered = modelInvocableSkills(skills);
  if (offered.length === 0) return undefined;
  return [
    "The following skills are available. Use the Skill tool with a skill's name to load its instructions when a task matches its description:",
    ...offered.map((skill) => `- ${skill.name}: ${skill.description}`),
  ].join('\n');
}

/** What the Skill tool answers for `name`: the skill's body with its folder, or an error the model can act on. */
export function invokeSkill(skills: readonly SkillDefinition[], name: string): { content: string; isError: boolean; skill?: SkillDefinition } {
  const wanted = name.replace(/^\//, '');
  const skill = skills.find((candidate) => candidate.name === wanted);
  if (!skill) {
    const known = modelInvocableSkills(skills).map((candidate) => candidate.name);
    return { content: `Unknown skill: ${wanted}.${known.length > 0 ? ` Available skills: ${known.join(', ')}` : ' No skills are available.'}`, isError: true };
  }
  if (skill.disableModelInvocation) return { content: `Skill ${wanted} can only be invoked by the user (/${wanted}).`, isError: true };
  return { content: `Base directory for this skill: ${skill.directory}\n\n${skill.body}`, isError: false, skill };
}
