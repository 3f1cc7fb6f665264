/**
 * Claude Code's Agent Skills in the conversation (issue 33 §3). The session context lists the
 * skills without their bodies (common/skills.ts); this part answers the Skill tool — its result
 * says the skill is loading, and the body, read from the skill's SKILL.md by an activity, follows
 * as a user message at the end of the tool results, so the next request carries it (Claude Code's
 * meta message after the tool_result) — and reads a body for a person's `/<skill-name>`.
 *
 * While a skill is active (invoked in this query, by the model or the person) its `allowed-tools`
 * rules allow without asking, and its folder may be read: the permission gate takes them as the
 * query's allow rules (workflows/permissions/gate.ts `setQueryAllowRules`), after every deny and ask rule.
 */
import { uuid4 } from '@temporalio/workflow';
import type { ToolUseBlock, UserMessage } from '../../common/messages';
import type { RuleWithSource } from '../../common/permission-rules';
import { type QueryGrant, type SkillEntry, grantRules, launchingSkillText, resolveSkillCall, skillGrant, skillPrompt } from '../../common/skills';
import { skillInputSchema } from '../../common/tools/skill';
import { activities, skillBodyOptions } from '../deps/activity-options';
import type { ToolOutcome, ToolRoute } from '../deps/tool-routes';
import { metaUserMessage } from '../messages';
import type { PartContext, SessionPart } from './session-part';

export class SkillSession implements SessionPart {
  readonly name = 'skills';
  readonly routes: readonly ToolRoute[] = [{ name: 'Skill', takes: (block) => block.name === 'Skill', run: (call) => this.skillTool(call.block) }];
  /** Bodies loaded by Skill calls of this turn, for the user message after the tool results. */
  private loaded: UserMessage[] = [];
  private grants: QueryGrant[] = [];

  constructor(
    private readonly host: PartContext,
    /** The query's allow rules changed (the gate takes them). */
    private readonly onGrants: (rules: RuleWithSource[]) => void,
  ) {}

  carried(): Record<string, never> {
    return {};
  }

  private get skills(): readonly SkillEntry[] {
    return this.host.sessionContext?.skills ?? [];
  }

  /** The skill a person's `/<name>` names (any skill, those only a person may invoke too). */
  find(name: string): SkillEntry | undefined {
    return this.skills.find((skill) => skill.name === name);
  }

  /** A skill's body, read where it lives; a problem the person or the model hears. */
  async body(skill: SkillEntry): Promise<{ body: string } | { problem: string }> {
    return activities(skillBodyOptions(this.host.config, `Load skill ${skill.name}`)).loadSkillBody({ name: skill.name, directory: skill.directory });
  }

  /** A new query: no skill is active and nothing is waiting; `grant`: the custom command or skill the person started it with. */
  startQuery(grant: QueryGrant | undefined): void {
    this.loaded = [];
    this.grants = grant ? [grant] : [];
    this.onGrants(grantRules(this.grants));
  }

  /** The bodies the turn's Skill calls loaded, once, after the tool results (query loop ⑦). */
  takeLoaded(): UserMessage[] {
    const loaded = this.loaded;
    this.loaded = [];
    return loaded;
  }

  private async skillTool(block: ToolUseBlock): Promise<ToolOutcome> {
    const parsed = skillInputSchema.safeParse(block.input);
    if (!parsed.success) return { isError: true, content: `Invalid Skill input: ${parsed.error.issues.map((issue) => issue.message).join('; ')}` };
    const resolved = resolveSkillCall(this.skills, parsed.data.skill);
    if ('error' in resolved) return { isError: true, content: resolved.error };
    const { skill } = resolved;
    const read = await this.body(skill);
    if ('problem' in read) return { isError: true, content: read.problem };
    const args = parsed.data.args?.trim();
    const body = args ? `${read.body}\n\nARGUMENTS: ${args}` : read.body;
    this.loaded.push(metaUserMessage(uuid4(), skillPrompt(skill, body)));
    this.grants.push(skillGrant(skill));
    this.onGrants(grantRules(this.grants));
    return { isError: false, content: launchingSkillText(skill.name) };
  }
}
