/**
 * Running hooks in the conversation (issue 22 §4, issue 33): the hook settings loaded once per
 * session (loadHookSettings, recorded and carried), and an event's hooks — selectHookCommands,
 * then (only when one matches) the runHooks activity, then decideHookOutcome on its recorded
 * outcome, so a replay never runs a hook again; `async: true` hooks beside the loop. The events
 * are the subclasses' (tool-hooks.ts: tool calls and permissions; hooks.ts: the session).
 */
import { isCancellation, uuid4 } from '@temporalio/workflow';
import {
  type HookDecision,
  type HookEvent,
  type HookHandler,
  type HookRunOutcome,
  type HookSettings,
  decideHookOutcome,
  selectHookCommands,
  splitAsyncHooks,
} from '../../common/hooks';
import type { McpServerEntry } from '../../common/mcp-config';
import { activities, activityOptions, hookRunOptions } from '../deps/activity-options';
import { failureMessage } from '../deps/failures';
import { sandboxInputs } from '../deps/tool-run';
import type { PartContext } from '../session/session-part';
import type { HooksState } from './hooks-decisions';

/**
 * What the hooks use of the conversation (session/session-part.ts): a subagent runs its parent's
 * tool hooks but has no session of its own (no SessionStart/End, prompts); the session context's
 * trust decides whether the workspace's hooks load (issue 29); hooks are told the permission mode.
 */
export type HooksContext = Pick<PartContext, 'conversationId' | 'config' | 'toolPermissions' | 'subagent' | 'sessionContext' | 'pushEvent' | 'permissionMode'>;

export abstract class HookRunner {
  protected state: HooksState;
  /** The conversation's MCP servers, for `mcp_tool` hooks (set by the session's parts; a subagent's are its own). */
  mcpServers?: () => { scope: string; servers: McpServerEntry[] } | undefined;

  constructor(
    protected readonly host: HooksContext,
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
        ...(config.pluginDirs && { pluginDirs: config.pluginDirs }),
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
  protected async run(event: HookEvent, summary?: string, only?: (hook: HookHandler) => boolean): Promise<{ decision?: HookDecision; failed?: string }> {
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

  /** The runHooks activity for these hooks: their recorded outcomes (the one place hooks are run). */
  protected async outcomesOf(event: HookEvent, hooks: HookHandler[], summary: string): Promise<HookRunOutcome[]> {
    const { config, conversationId } = this.host;
    const longest = Math.max(...hooks.map((hook) => hook.timeout ?? 60));
    const { outcomes } = await activities(hookRunOptions(config, longest, summary)).runHooks({
      conversationId,
      cwd: config.cwd,
      event,
      commands: hooks,
      ...(this.host.permissionMode() && { permissionMode: this.host.permissionMode() }),
      ...sandboxInputs(this.host),
      // Only an mcp_tool hook needs the servers (the recorded input stays small otherwise).
      ...(hooks.some((hook) => hook.type === 'mcp_tool') && this.mcpServers?.() && { mcp: this.mcpServers()! }),
    });
    return outcomes;
  }

  /** The runHooks activity for these hooks and decideHookOutcome on its recorded outcome; messages for people to the feed. */
  private async runRecorded(event: HookEvent, hooks: HookHandler[], summary: string): Promise<HookDecision> {
    const decision = decideHookOutcome(event, await this.outcomesOf(event, hooks, summary));
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

  carried(): { hooks?: HooksState } {
    return this.state.settings === undefined && !this.state.sessionStartContext ? {} : { hooks: { ...this.state } };
  }

  protected warn(content: string): void {
    this.host.pushEvent({ type: 'system', uuid: uuid4(), level: 'warning', content });
  }
}

export function inputObject(input: unknown): Record<string, unknown> {
  return input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

/** A hook message as one feed line (the model gets it whole). */
export function cutLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= 300 ? flat : `${flat.slice(0, 299)}…`;
}
