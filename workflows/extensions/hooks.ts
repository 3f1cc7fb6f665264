/**
 * Claude Code's hook lifecycle in the conversation (issue 22 §4): the hook settings loaded once
 * per session (loadHookSettings, recorded and carried), and each event at its point —
 * selectHookCommands, then (only when a command matches) the runHooks activity, then
 * decideHookOutcome on its recorded outcome, so a replay never runs a hook again. Stop hooks keep
 * their own path (workflows/deps/stop-hooks-call.ts). What a decision does is hooks-decisions.ts.
 */
import { condition, isCancellation, uuid4 } from '@temporalio/workflow';
import {
  type HookDecision,
  type HookEvent,
  type HookHandler,
  type HookRunOutcome,
  type HookSettings,
  decideHookOutcome,
  selectHookCommands,
  splitAsyncHooks,
  stopFailureError,
} from '../../common/hooks';
import type { ToolUseBlock } from '../../common/messages';
import type { PendingInput } from '../definitions';
import { activities, activityOptions, hookRunOptions } from '../deps/activity-options';
import { failureMessage } from '../deps/failures';
import type { ToolHooks } from '../deps/query-host';
import type { PartContext, SessionPart } from '../session/session-part';
import { sandboxInputs } from '../deps/tool-run';
import {
  type HooksState,
  type PreToolUseAction,
  type SessionStartSource,
  blockedPromptText,
  preToolUseAction,
  systemReminder,
  withPostToolUseFeedback,
  withSessionStartContext,
} from './hooks-decisions';

type SessionEndReason = Extract<HookEvent, { hook_event_name: 'SessionEnd' }>['reason'];

/**
 * What the hooks use of the conversation (session/session-part.ts): a subagent runs its parent's
 * tool hooks but has no session of its own (no SessionStart/End, prompts); the session context's
 * trust decides whether the workspace's hooks load (issue 29); hooks are told the permission mode.
 */
type HooksContext = Pick<PartContext, 'conversationId' | 'config' | 'toolPermissions' | 'subagent' | 'sessionContext' | 'pushEvent' | 'permissionMode'>;

/** What UserPromptSubmit did to a prompt. */
export type PromptSubmitOutcome = { type: 'blocked'; text: string } | { type: 'continue'; context?: string };

export class SessionHooks implements ToolHooks, SessionPart {
  readonly name = 'hooks';
  private state: HooksState;
  /** Inputs PreToolUse hooks replaced, by tool_use id, until PostToolUse. */
  private readonly updatedInputs = new Map<string, Record<string, unknown>>();

  constructor(
    private readonly host: HooksContext,
    carried: HooksState | undefined,
    /** A subagent's hooks: its parent's settings (issue 22: tool hooks run in subagents too). */
    inherited?: HookSettings,
  ) {
    this.state = carried ? { ...carried } : inherited ? { settings: inherited } : {};
  }

  /** Whether loadHookSettings should run in this run: the first run of a top-level conversation (and a run continued from code before hooks). */
  get needsSettings(): boolean {
    return this.state.settings === undefined && !this.host.subagent;
  }

  /** The settings a subagent inherits: its tool hooks run in it too (undefined when nothing is configured). */
  get inheritable(): HookSettings | undefined {
    const settings = this.state.settings;
    return settings && Object.keys(settings).length > 0 ? settings : undefined;
  }

  /**
   * A subagent's end: its SubagentStop hooks (Claude Code runs them instead of Stop), folded into
   * the Stop decision the loop acts on (workflows/query/handle-stop-hooks.ts): a block sends the feedback back
   * to the subagent's model. Undefined for a top-level conversation.
   */
  get subagentStop(): ToolHooks['subagentStop'] {
    if (!this.host.subagent) return undefined;
    return async ({ lastAssistantMessage, stopHookActive }, before) => {
      const origin = this.host.subagent!;
      const event: HookEvent = {
        hook_event_name: 'SubagentStop',
        stop_hook_active: stopHookActive,
        last_assistant_message: lastAssistantMessage,
        // The Agent call's id names the subagent (its workflow id derives from it).
        agent_id: origin.toolUseId,
        agent_type: origin.agentType,
      };
      const { decision } = await this.run(event);
      if (!decision) return before;
      // The loop says "Stop hook feedback:" itself; the decision's own heading is left out.
      const feedback = decision.blocked && decision.blockingMessage ? [decision.blockingMessage.replace(/^SubagentStop hook feedback:\n/, '')] : [];
      return {
        ...before,
        blockingErrors: [...before.blockingErrors, ...feedback],
        preventContinuation: before.preventContinuation || decision.preventContinuation,
        ...(decision.stopReason !== undefined && { stopReason: decision.stopReason }),
      };
    };
  }

  /**
   * Issue 33: the Stop hooks the session context's path (runStopHooks: the workspace's command
   * hooks, sandboxed) does not run — the user's own (as the user) and HTTP and prompt hooks —
   * folded into the same Stop decision. Undefined for a subagent (SubagentStop instead).
   */
  get stop(): ToolHooks['stop'] {
    if (this.host.subagent || !this.state.settings?.Stop) return undefined;
    return async ({ lastAssistantMessage, stopHookActive }, before) => {
      const event: HookEvent = { hook_event_name: 'Stop', stop_hook_active: stopHookActive, last_assistant_message: lastAssistantMessage };
      const { decision } = await this.run(event, undefined, (hook) => hook.scope === 'user' || hook.type !== 'command');
      if (!decision) return before;
      const feedback = decision.blocked && decision.blockingMessage ? [decision.blockingMessage.replace(/^Stop hook feedback:\n/, '')] : [];
      return {
        ...before,
        blockingErrors: [...before.blockingErrors, ...feedback],
        preventContinuation: before.preventContinuation || decision.preventContinuation,
        ...(decision.stopReason !== undefined && { stopReason: decision.stopReason }),
      };
    };
  }

  /**
   * Session start: every command hook of the settings files `--setting-sources` allows, read on
   * the workspace's host (one activity; its result is recorded and carried). A failure is a
   * warning and the conversation goes on without hooks (its Stop hooks come with the session context).
   */
  async load(): Promise<void> {
    if (!this.needsSettings) return;
    const { config } = this.host;
    try {
      const loaded = await activities({ ...activityOptions(config).sessionContext, summary: 'Load hook settings' }).loadHookSettings({
        cwd: config.cwd,
        ...(config.settingSources && { settingSources: config.settingSources }),
        ...(this.host.sessionContext?.workspaceTrust?.trusted && { trusted: true }),
      });
      this.state.settings = loaded.hooks;
      for (const warning of loaded.warnings) this.warn(warning);
    } catch (error) {
      if (isCancellation(error)) throw error;
      this.state.settings = {};
      this.warn(`Hook settings not loaded (no hooks but Stop run this session): ${failureMessage(error)}`);
    }
  }

  /**
   * One event's hooks: nothing (no command matches: no activity), or the runHooks activity and
   * decideHookOutcome on its recorded outcome. Messages for people go to the feed. A hook run that
   * fails as a whole (the worker could not run it after retries) is `failed`.
   */
  private async run(event: HookEvent, summary?: string, only?: (hook: HookHandler) => boolean): Promise<{ decision?: HookDecision; failed?: string }> {
    const selected = (this.state.settings ? selectHookCommands(this.state.settings, event) : []).filter((hook) => !only || only(hook));
    const { blocking, background } = splitAsyncHooks(selected);
    // `async: true` hooks run beside the loop; what they say reaches the model with the next prompt (Claude Code).
    if (background.length > 0) this.runInBackground(event, background);
    if (blocking.length === 0) return {};
    try {
      const decision = await this.runRecorded(event, blocking, summary ?? `${event.hook_event_name} hooks (${blocking.length})`);
      return { decision };
    } catch (error) {
      if (isCancellation(error)) throw error;
      const failed = `${event.hook_event_name} hooks could not run: ${failureMessage(error)}`;
      this.warn(failed);
      return { failed };
    }
  }

  /** The runHooks activity for these hooks and decideHookOutcome on its recorded outcome; messages for people to the feed. */
  private async runRecorded(event: HookEvent, hooks: HookHandler[], summary: string): Promise<HookDecision> {
    const { config, conversationId } = this.host;
    const longest = Math.max(...hooks.map((hook) => hook.timeout ?? 60));
    const { outcomes } = await activities(hookRunOptions(config, longest, summary)).runHooks({
      conversationId,
      cwd: config.cwd,
      event,
      commands: hooks,
      ...(this.host.permissionMode() && { permissionMode: this.host.permissionMode() }),
      ...sandboxInputs(this.host),
    });
    const decision = decideHookOutcome(event, outcomes);
    for (const message of decision.userMessages) this.host.pushEvent({ type: 'system', uuid: uuid4(), level: message.level, content: message.text });
    // What the model is told goes to people too (Claude Code shows it in the transcript view), cut to a line.
    for (const line of decision.additionalContext) this.host.pushEvent({ type: 'system', uuid: uuid4(), level: 'info', content: cutLine(line) });
    if (decision.blocked && decision.blockingMessage && event.hook_event_name !== 'UserPromptSubmit') {
      this.host.pushEvent({ type: 'system', uuid: uuid4(), level: 'warning', content: cutLine(decision.blockingMessage) });
    }
    return decision;
  }

  /**
   * `async: true` hooks: the same recorded activity, not awaited. They cannot block or decide (the
   * action went on); their context and system messages are kept for the model's next prompt.
   */
  private runInBackground(event: HookEvent, hooks: HookHandler[]): void {
    this.runRecorded(event, hooks, `${event.hook_event_name} async hooks (${hooks.length})`).then(
      (decision) => {
        const lines = [...decision.additionalContext, ...decision.userMessages.filter((message) => message.level === 'info').map((message) => message.text)];
        if (lines.length > 0)
          this.state.asyncContext = [...(this.state.asyncContext ?? []), ...lines.map((line) => `Async hook ${decision.hookName}: ${line}`)];
      },
      (error) => {
        if (!isCancellation(error)) this.warn(`${event.hook_event_name} async hooks could not run: ${failureMessage(error)}`);
      },
    );
  }

  // ---- the session ----

  /**
   * Session start, after the session context: the hook settings, then SessionStart (`startup`, or
   * `resume` for `start --resume`). A run continued from code before hooks loads the settings
   * but does not start the session again (`source` undefined).
   */
  async start(source: SessionStartSource | undefined): Promise<void> {
    if (this.host.subagent) {
      if (source === 'startup') await this.subagentStart();
      return;
    }
    if (!this.needsSettings) return;
    await this.load();
    if (source && this.state.settings) {
      await this.instructionsLoaded();
      await this.sessionStart(source);
    }
  }

  /**
   * SubagentStart (issue 33), in the subagent as it starts (with its parent's hooks): its
   * `additionalContext` goes to the subagent's model with its user context.
   */
  private async subagentStart(): Promise<void> {
    const origin = this.host.subagent!;
    const { decision } = await this.run({ hook_event_name: 'SubagentStart', agent_id: origin.toolUseId, agent_type: origin.agentType ?? 'general-purpose' });
    if (decision && decision.additionalContext.length > 0) this.state.sessionStartContext = decision.additionalContext;
  }

  /**
   * InstructionsLoaded (issue 33): each CLAUDE.md file the session context loaded, at session
   * start (observability: no decision). A file in the workspace is Project (`CLAUDE.local.md`:
   * Local); any other is the user's.
   */
  private async instructionsLoaded(): Promise<void> {
    if (!this.state.settings?.InstructionsLoaded) return;
    const cwd = this.host.config.cwd;
    for (const file of this.host.sessionContext?.claudeMdFiles ?? []) {
      const inWorkspace = file === cwd || file.startsWith(`${cwd.replace(/\/$/, '')}/`);
      const memoryType = !inWorkspace ? 'User' : /CLAUDE\.local\.md$/.test(file) ? 'Local' : 'Project';
      await this.run({ hook_event_name: 'InstructionsLoaded', file_path: file, memory_type: memoryType, load_reason: 'session_start' });
    }
  }

  /**
   * SessionStart (startup, resume, clear, compact): its context for the model replaces the last
   * one (it goes with the user context, see userContext()).
   */
  async sessionStart(source: SessionStartSource): Promise<void> {
    if (this.host.subagent) return;
    delete this.state.pendingSessionStart;
    const { decision } = await this.run({ hook_event_name: 'SessionStart', source }, `SessionStart hooks (${source})`);
    if (!decision) return;
    if (decision.additionalContext.length > 0) this.state.sessionStartContext = decision.additionalContext;
    else delete this.state.sessionStartContext;
  }

  /** A `/clear` or a compaction: SessionStart runs again (with that source) before the next input. */
  sessionRestarted(source: 'clear' | 'compact'): void {
    if (this.state.settings?.SessionStart && !this.host.subagent) this.state.pendingSessionStart = source;
  }

  /** Runs a SessionStart a `/clear` or compaction asked for (before the next input). */
  async sessionStartIfDue(): Promise<void> {
    if (this.state.pendingSessionStart) await this.sessionStart(this.state.pendingSessionStart);
  }

  /** The user context with SessionStart's context after it (both in the system reminder before the first message). */
  userContext(base: string | undefined): string | undefined {
    return withSessionStartContext(base, this.state.sessionStartContext);
  }

  /** SessionEnd: at the conversation's end (after the loop), or `/clear`. Messages to the feed. */
  async sessionEnd(reason: SessionEndReason): Promise<void> {
    if (this.host.subagent) return;
    await this.run({ hook_event_name: 'SessionEnd', reason });
  }

  // ---- prompts ----

  /**
   * UserPromptSubmit, before the query: a block (exit 2, `decision: block`, `continue: false`)
   * drops the prompt and tells the user why; context joins the prompt (a system reminder after it).
   */
  async userPromptSubmit(prompt: string): Promise<PromptSubmitOutcome> {
    if (this.host.subagent) return { type: 'continue' };
    const { decision } = await this.run({ hook_event_name: 'UserPromptSubmit', prompt });
    if (!decision) return { type: 'continue' };
    if (decision.blocked) return { type: 'blocked', text: blockedPromptText(decision) };
    if (decision.preventContinuation) return { type: 'blocked', text: decision.stopReason ?? 'Stopped by UserPromptSubmit hook' };
    return decision.additionalContext.length > 0 ? { type: 'continue', context: systemReminder(decision.additionalContext) } : { type: 'continue' };
  }

  /**
   * A prompt about to start a query (a person's or a custom command's; not a notification): the
   * UserPromptSubmit hooks. Returns the input to run (with the hooks' context), or undefined when
   * they blocked it (the user was told, with a result message).
   */
  async beforeQuery(input: PendingInput, typed: string, answer: (output: string) => void): Promise<PendingInput | undefined> {
    if (input.origin) return input;
    const contexts: string[] = [];
    if (input.command && !this.host.subagent) {
      // UserPromptExpansion (issue 33): a custom command expanded into its prompt; a block drops it.
      const { decision } = await this.run({
        hook_event_name: 'UserPromptExpansion',
        expansion_type: 'slash_command',
        command_name: input.command.name,
        command_args: input.command.args,
        command_source: 'custom',
        prompt: input.prompt,
      });
      if (decision?.blocked || decision?.preventContinuation) {
        answer(
          decision.blockingMessage?.replace(/^UserPromptExpansion:\S+ hook error: /, 'UserPromptExpansion operation blocked by hook: ') ??
            decision.stopReason ??
            'Blocked by UserPromptExpansion hook',
        );
        return undefined;
      }
      if (decision && decision.additionalContext.length > 0) contexts.push(systemReminder(decision.additionalContext));
    }
    const outcome = await this.userPromptSubmit(typed);
    if (outcome.type === 'blocked') {
      answer(outcome.text);
      return undefined;
    }
    if (outcome.context) contexts.push(outcome.context);
    // What `async: true` hooks said since the last prompt (Claude Code delivers it on the next turn).
    if (this.state.asyncContext?.length) {
      contexts.push(systemReminder(this.state.asyncContext));
      delete this.state.asyncContext;
    }
    return contexts.length > 0 ? { ...input, hookContext: contexts.join('\n') } : input;
  }

  // ---- tools ----

  /** Whether PreToolUse hooks match this call (then it does not start while the model still streams). */
  hasPreToolUse(block: ToolUseBlock): boolean {
    return this.matchesPreToolUse(block.name);
  }

  /** Whether PreToolUse hooks match calls of this tool (then the model call's local phase does not prefetch it). */
  matchesPreToolUse(toolName: string): boolean {
    return (
      !!this.state.settings?.PreToolUse &&
      selectHookCommands(this.state.settings, { hook_event_name: 'PreToolUse', tool_name: toolName, tool_input: {}, tool_use_id: '' }).length > 0
    );
  }

  /**
   * PreToolUse, before the permission check (Claude Code's order): block, or run with what the
   * hooks said. Fails closed: hooks that could not run at all block the call.
   */
  async preToolUse(block: ToolUseBlock): Promise<PreToolUseAction> {
    const event: HookEvent = { hook_event_name: 'PreToolUse', tool_name: block.name, tool_input: inputObject(block.input), tool_use_id: block.id };
    const { decision, failed } = await this.run(event, `PreToolUse hooks: ${block.name}`);
    if (failed) return { type: 'block', message: `${failed}. The tool was not run.` };
    const action = preToolUseAction(decision);
    // PostToolUse gets the input the tool ran with (in memory: the same decision comes back on replay).
    if (action.type === 'run' && action.input) this.updatedInputs.set(block.id, action.input);
    return action;
  }

  /** PostToolUse, once after a tool that succeeded: its messages for the model beside the result. */
  async postToolUse(block: ToolUseBlock, outcome: { content: string; isError: boolean }, ran = true): Promise<{ content: string; isError: boolean }> {
    const input = this.updatedInputs.get(block.id) ?? block.input;
    this.updatedInputs.delete(block.id);
    // An error of a call that ran: PostToolUseFailure; one that never ran (blocked, denied): nothing.
    if (outcome.isError) return ran ? this.postToolUseFailure(block, input, outcome) : outcome;
    const event: HookEvent = {
      hook_event_name: 'PostToolUse',
      tool_name: block.name,
      tool_input: inputObject(input),
      tool_response: outcome.content,
      tool_use_id: block.id,
    };
    const { decision } = await this.run(event, `PostToolUse hooks: ${block.name}`);
    return { content: withPostToolUseFeedback(outcome.content, decision), isError: outcome.isError };
  }

  /**
   * PostToolUseFailure (issue 33), once after a tool that failed: its context (and an exit 2's
   * stderr) beside the error result for the model.
   */
  private async postToolUseFailure(block: ToolUseBlock, input: unknown, outcome: { content: string; isError: boolean }) {
    const event: HookEvent = {
      hook_event_name: 'PostToolUseFailure',
      tool_name: block.name,
      tool_input: inputObject(input),
      tool_use_id: block.id,
      error: outcome.content,
      is_interrupt: false,
    };
    const { decision } = await this.run(event, `PostToolUseFailure hooks: ${block.name}`);
    return { content: withPostToolUseFeedback(outcome.content, decision), isError: true };
  }

  // ---- permissions (issue 33) ----

  /**
   * PermissionRequest: the gate is about to ask a person. The hooks may answer for them (allow or
   * deny; deny wins); undefined: they did not, and the person is asked. Hooks that could not run
   * leave the ask to the person (fail closed: nothing is allowed).
   */
  async permissionRequest(block: ToolUseBlock): Promise<HookDecision['permissionRequest']> {
    const event: HookEvent = { hook_event_name: 'PermissionRequest', tool_name: block.name, tool_input: inputObject(block.input), tool_use_id: block.id };
    const { decision } = await this.run(event, `PermissionRequest hooks: ${block.name}`);
    const answer = decision?.permissionRequest;
    if (answer?.behavior === 'allow' && answer.updatedInput) {
      // The gate checked this input; another one would run unchecked: the ask goes to the person.
      this.warn(`${decision!.hookName} hook: updatedInput is not applied here (the call is checked as it was asked); a person decides.`);
      return undefined;
    }
    return answer;
  }

  /** What the permission gate calls (only the events with hooks configured: no hooks, no change to the gate). */
  permissionHooks(): {
    permissionRequest?: (block: ToolUseBlock) => Promise<HookDecision['permissionRequest']>;
    permissionDenied?: (block: ToolUseBlock, message: string) => Promise<string>;
  } {
    const settings = this.state.settings;
    return {
      ...(settings?.PermissionRequest && { permissionRequest: (block: ToolUseBlock) => this.permissionRequest(block) }),
      ...(settings?.PermissionDenied && { permissionDenied: (block: ToolUseBlock, message: string) => this.permissionDenied(block, message) }),
    };
  }

  /**
   * PermissionDenied: the gate denied a call without a person (a deny rule, dontAsk, nobody to ask).
   * Returns the denial the model gets, with Claude Code's note when a hook says it may retry.
   */
  async permissionDenied(block: ToolUseBlock, message: string): Promise<string> {
    const event: HookEvent = {
      hook_event_name: 'PermissionDenied',
      tool_name: block.name,
      tool_input: inputObject(block.input),
      tool_use_id: block.id,
      reason: message,
    };
    const { decision } = await this.run(event, `PermissionDenied hooks: ${block.name}`);
    return decision?.retry ? `${message}\n\nA PermissionDenied hook says you may retry this call.` : message;
  }

  // ---- the task list (issue 33) ----

  /**
   * TaskCreated / TaskCompleted, before the task list changes: a block (exit 2, `decision: block`)
   * keeps the list as it was, and its message is the tool's error result.
   */
  async taskChange(event: Extract<HookEvent, { hook_event_name: 'TaskCreated' | 'TaskCompleted' }>): Promise<string | undefined> {
    const { decision, failed } = await this.run(event, `${event.hook_event_name} hooks: #${event.task_id}`);
    if (failed) return `${failed}. The task list was not changed.`;
    if (decision?.blocked) return decision.blockingMessage;
    if (decision?.preventContinuation) return decision.stopReason ?? `Stopped by ${event.hook_event_name} hook`;
    return undefined;
  }

  // ---- turn failures and worktrees (issue 33) ----

  /** StopFailure: a top-level turn ended on an API error (Claude Code ignores its output; messages go to the feed). */
  async stopFailure(details: string, lastAssistantMessage?: string): Promise<void> {
    if (this.host.subagent || !this.state.settings?.StopFailure) return;
    await this.run({
      hook_event_name: 'StopFailure',
      error: stopFailureError(details),
      error_details: details,
      ...(lastAssistantMessage !== undefined ? { last_assistant_message: lastAssistantMessage } : {}),
    });
  }

  /**
   * WorktreeCreate / WorktreeRemove, for the worktree code: the recorded outcomes of the event's
   * hooks (read WorktreeCreate's with decideWorktreeCreate in common/hooks.ts), or undefined when
   * no hook is configured (git does the work).
   */
  async worktreeHooks(event: Extract<HookEvent, { hook_event_name: 'WorktreeCreate' | 'WorktreeRemove' }>): Promise<HookRunOutcome[] | undefined> {
    const hooks = this.state.settings ? selectHookCommands(this.state.settings, event) : [];
    if (hooks.length === 0) return undefined;
    const { config, conversationId } = this.host;
    const { outcomes } = await activities(
      hookRunOptions(config, Math.max(...hooks.map((hook) => hook.timeout ?? 60)), `${event.hook_event_name} hooks`),
    ).runHooks({
      conversationId,
      cwd: config.cwd,
      event,
      commands: hooks,
      ...sandboxInputs(this.host),
    });
    return outcomes;
  }

  // ---- compaction and notifications ----

  /** PreCompact (manual or auto), before the compaction's model call. */
  async preCompact(trigger: 'manual' | 'auto', customInstructions: string | undefined): Promise<void> {
    await this.run({ hook_event_name: 'PreCompact', trigger, custom_instructions: customInstructions ?? '' });
  }

  /** PostCompact (issue 33), after a compaction's summary: observability (its messages to the feed). */
  async postCompact(trigger: 'manual' | 'auto', summary: string): Promise<void> {
    await this.run({ hook_event_name: 'PostCompact', trigger, compact_summary: summary });
  }

  /**
   * Notification (a tool waits for approval): the hooks run beside the wait (not awaited: a slow
   * hook must not hold the request); their messages go to the feed when they end.
   */
  notifyPermissionPrompt(toolName: string): void {
    if (!this.matchesNotification('permission_prompt')) return;
    const event: HookEvent = {
      hook_event_name: 'Notification',
      notification_type: 'permission_prompt',
      message: `Claude needs your permission to use ${toolName}`,
    };
    this.run(event).catch(() => undefined);
  }

  /**
   * Notification (idle_prompt): when Notification hooks match it, waits up to Claude Code's idle
   * threshold for `ready`; past it, runs them once and returns false (the idle timer starts after).
   * True when `ready` came first. Nothing (no timer) without such hooks.
   */
  async waitForIdleNotice(ready: () => boolean): Promise<boolean> {
    if (this.host.subagent || !this.matchesNotification('idle_prompt')) return false;
    if (await condition(ready, this.host.config.messageIdleNotifThresholdMs, { summary: 'Idle notification (Notification hooks, idle_prompt)' })) return true;
    await this.run({ hook_event_name: 'Notification', notification_type: 'idle_prompt', message: 'Claude is waiting for your input' });
    return ready();
  }

  private matchesNotification(type: 'idle_prompt' | 'permission_prompt'): boolean {
    return (
      !!this.state.settings?.Notification &&
      selectHookCommands(this.state.settings, { hook_event_name: 'Notification', notification_type: type, message: '' }).length > 0
    );
  }

  carried(): { hooks?: HooksState } {
    return this.state.settings === undefined && !this.state.sessionStartContext ? {} : { hooks: { ...this.state } };
  }

  private warn(content: string): void {
    this.host.pushEvent({ type: 'system', uuid: uuid4(), level: 'warning', content });
  }
}

function inputObject(input: unknown): Record<string, unknown> {
  return input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

/** A hook message as one feed line (the model gets it whole). */
function cutLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= 300 ? flat : `${flat.slice(0, 299)}…`;
}
