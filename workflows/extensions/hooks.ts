/**
 * Claude Code's hook lifecycle in the conversation (issue 22 §4, issue 33): each session event at
 * its point — start, prompts, Stop/SubagentStop, the task list, turn failures, worktrees,
 * compaction, notifications. How hooks run is hook-runner.ts, a tool call's hooks tool-hooks.ts,
 * what a decision does hooks-decisions.ts; the workspace's command Stop hooks keep their own path
 * (workflows/deps/stop-hooks-call.ts).
 */
import { condition } from '@temporalio/workflow';
import { type HookEvent, type HookRunOutcome, selectHookCommands, stopFailureError } from '../../common/hooks';
import type { PendingInput } from '../definitions';
import type { ToolHooks } from '../deps/query-host';
import type { SessionPart } from '../session/session-part';
import { ToolCallHooks } from './tool-hooks';
import { type SessionStartSource, blockedPromptText, systemReminder, withSessionStartContext } from './hooks-decisions';

type SessionEndReason = Extract<HookEvent, { hook_event_name: 'SessionEnd' }>['reason'];

/** What UserPromptSubmit did to a prompt. */
export type PromptSubmitOutcome = { type: 'blocked'; text: string } | { type: 'continue'; context?: string };

export class SessionHooks extends ToolCallHooks implements ToolHooks, SessionPart {
  readonly name = 'hooks';

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
      const setup = source === 'startup' && this.host.config.setup ? await this.setup(this.host.config.setup) : [];
      await this.instructionsLoaded();
      await this.sessionStart(source);
      // Setup's context (its stdout, additionalContext) joins SessionStart's for the model.
      if (setup.length > 0) this.state.sessionStartContext = [...setup, ...(this.state.sessionStartContext ?? [])];
    }
  }

  /** Setup (issue 33: `--init`, `--maintenance`), once, before SessionStart: its context for the model. */
  private async setup(trigger: 'init' | 'maintenance'): Promise<string[]> {
    const { decision } = await this.run({ hook_event_name: 'Setup', trigger }, `Setup hooks (${trigger})`);
    return decision?.additionalContext ?? [];
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
    return this.outcomesOf(event, hooks, `${event.hook_event_name} hooks`);
  }

  // ---- compaction and notifications ----

  /** PreCompact (manual or auto), before the compaction's model call. */
  async preCompact(trigger: 'manual' | 'auto', customInstructions: string | undefined): Promise<void> {
    await this.run({ hook_event_name: 'PreCompact', trigger, custom_instructions: customInstructions ?? '' });
  }

  /** CwdChanged (issue 33): the conversation's working directory moved (EnterWorktree, ExitWorktree); observability. */
  async cwdChanged(oldCwd: string, newCwd: string): Promise<void> {
    await this.run({ hook_event_name: 'CwdChanged', old_cwd: oldCwd, new_cwd: newCwd });
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
}
