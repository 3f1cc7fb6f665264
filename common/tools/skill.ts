/**
 * Skill tool spec (Claude Code's Agent Skills, issue 33 §3): the model loads a skill's instructions
 * by name. Offered only while the session has a skill the model may invoke (request-contexts.ts);
 * the skills are listed in the system prompt (common/skills.ts `skillListing`). Answered in the
 * workflow (workflows/session/skills.ts): the result says the skill is loading and its body, read
 * from its SKILL.md, follows as a user message the next request carries, as Claude Code sends it.
 */
import { z } from 'zod';
import { defineTool } from '../tool-spec';

export const skillInputSchema = z.strictObject({
  skill: z.string().min(1).describe('The skill name. E.g., "pdf" or "plugin:skill"'),
  args: z.string().optional().describe('Optional arguments for the skill'),
});

export type SkillInput = z.infer<typeof skillInputSchema>;

export const SKILL_TOOL_NAME = 'Skill';

export const skillToolSpec = defineTool({
  name: SKILL_TOOL_NAME,
  // Loading instructions changes nothing; what the skill then asks for is judged call by call.
  permission: 'none',
  description: `Execute a skill within the main conversation.

When a task matches one of the available skills listed in the system prompt, invoke it with this tool before doing anything else: it loads the skill's instructions, which then guide the task. Give the skill's name (e.g. skill: "pdf"), and optionally args.

- Only invoke a skill that is listed; do not invoke one that is already loaded in this conversation.
- A skill's supporting files live in its base directory, given with its instructions.`,
  inputSchema: skillInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => false,
  maxResultSizeChars: 10_000,
  summarize: (input) => `Skill ${input.skill}`,
});
