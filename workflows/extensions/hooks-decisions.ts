/**
 * What the conversation does with a hook decision (issue 22 §4), pure: where SessionStart and
 * UserPromptSubmit context goes, what a PreToolUse decision does to the call and to the
 * permission check, and what PostToolUse adds beside a tool's result. The decision itself is
 * common/hooks.ts decideHookOutcome; the effects are workflows/extensions/hooks.ts.
 */
import type { HookDecision, HookEvent, HookPermissionDecision, HookSettings } from '../../common/hooks';
import { type PermissionContext, type PermissionDecision, type ToolFacts, decidePermission, reachesOutsideWorkingDirectories } from '../../common/permissions';

export type SessionStartSource = Extract<HookEvent, { hook_event_name: 'SessionStart' }>['source'];

/** The hooks' durable state, carried across continue-as-new (CarriedState.hooks). */
export interface HooksState {
  /** The settings as loadHookSettings recorded them (absent: never loaded, or a run from before hooks). */
  settings?: HookSettings;
  /** SessionStart's context for the model (the last SessionStart's), in Claude Code's words. */
  sessionStartContext?: string[];
  /** A `/clear` or a compaction happened: SessionStart runs with this source before the next input. */
  pendingSessionStart?: Extract<SessionStartSource, 'clear' | 'compact'>;
  /** Issue 33: what `async: true` hooks said after they ended, for the model with the next prompt. */
  asyncContext?: string[];
}

/** Claude Code wraps hook context for the model in a system reminder (its `hook_additional_context` attachment). */
export function systemReminder(lines: readonly string[]): string {
  return `<system-reminder>\n${lines.join('\n')}\n</system-reminder>`;
}

/**
 * The user context (CLAUDE.md, the date) with the last SessionStart's context after it: both
 * reach the model in the system reminder before the first message (seed §2.5 getUserContext).
 */
export function withSessionStartContext(userContext: string | undefined, sessionStart: readonly string[] | undefined): string | undefined {
  if (!sessionStart || sessionStart.length === 0) return userContext;
  const hooks = sessionStart.join('\n');
  return userContext ? `${userContext}\n\n${hooks}` : hooks;
}

/** What the permission check hears from the PreToolUse hooks (undefined: nothing; the gate decides alone). */
export type HookPermission = { decision: Exclude<HookPermissionDecision, 'deny'>; reason?: string };

/** What a tool call does after its PreToolUse hooks. */
export type PreToolUseAction =
  /** The tool does not run: this is its (error) result. */
  | { type: 'block'; message: string }
  /** The tool runs (after the gate) with `input`, the gate told what the hooks said. */
  | { type: 'run'; input: Record<string, unknown> | undefined; permission?: HookPermission };

/**
 * seed/Claude Code: PreToolUse runs before the permission check. Exit 2 or `deny` blocks the call
 * with the hook's message; `ask` makes the gate ask a person even when the rules would allow;
 * `allow` skips the prompt but not deny or ask rules (the gate keeps those); `updatedInput`
 * replaces the input, and the gate checks the new input (fail closed: what runs is what is checked).
 */
export function preToolUseAction(decision: HookDecision | undefined): PreToolUseAction {
  if (!decision) return { type: 'run', input: undefined };
  if (decision.blocked || decision.permissionDecision === 'deny') {
    return { type: 'block', message: decision.blockingMessage ?? `${decision.hookName} hook denied this tool` };
  }
  const permission: HookPermission | undefined =
    decision.permissionDecision === 'allow' || decision.permissionDecision === 'ask'
      ? { decision: decision.permissionDecision, ...(decision.permissionDecisionReason !== undefined ? { reason: decision.permissionDecisionReason } : {}) }
      : undefined;
  return { type: 'run', input: decision.updatedInput, ...(permission ? { permission } : {}) };
}

/**
 * A tool's result after its PostToolUse hooks: a blocking message (exit 2, `decision: block`) and
 * additional context go beside the result, in a system reminder the model reads with it (Claude
 * Code adds them as attachments after the tool_result). The result itself is unchanged.
 */
export function withPostToolUseFeedback(content: string, decision: HookDecision | undefined): string {
  if (!decision) return content;
  const lines = [...(decision.blocked && decision.blockingMessage ? [decision.blockingMessage] : []), ...decision.additionalContext];
  return lines.length === 0 ? content : `${content}\n\n${systemReminder(lines)}`;
}

/** What the user sees when UserPromptSubmit blocked their prompt (the prompt is not sent to the model). */
export function blockedPromptText(decision: HookDecision): string {
  return decision.blockingMessage ?? 'UserPromptSubmit operation blocked by hook';
}

/**
 * The rule engine's decision with what the PreToolUse hooks said. A hook's `allow` skips the
 * prompt but not deny or ask rules, protected paths or plan mode (Claude Code: "a hook that
 * returns allow doesn't skip the deny-rule and ask-rule steps"): the rules decide as in
 * bypassPermissions mode, which keeps exactly those — and (issue 29) never for a call that may
 * touch something outside the working directories: that one is decided as without the hook (it
 * asks where it would have asked). A hook's `ask` makes the call ask, with the hook's reason (a
 * denial stays a denial); an ask under a hook's allow in dontAsk mode is denied.
 */
export function decideUnderHook(
  call: { toolName: string; input: unknown },
  facts: ToolFacts,
  context: PermissionContext,
  hook: HookPermission | undefined,
): PermissionDecision {
  const hookAllows = hook?.decision === 'allow' && context.mode !== 'plan' && !reachesOutsideWorkingDirectories(call, facts, context);
  const decision = decidePermission(call, facts, hookAllows ? { ...context, mode: 'bypassPermissions' } : context);
  if (hook?.decision === 'ask' && decision.behavior !== 'deny') {
    return { behavior: 'ask', reason: hook.reason ? `PreToolUse hook: ${hook.reason}` : 'a PreToolUse hook asks' };
  }
  if (hook?.decision === 'allow' && decision.behavior === 'ask' && context.mode === 'dontAsk') {
    return {
      behavior: 'deny',
      reason: `${decision.reason}; dontAsk mode`,
      message: `Permission to use this tool was not granted in advance (dontAsk mode denies whatever is not pre-approved).`,
    };
  }
  return decision;
}
