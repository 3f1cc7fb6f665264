/**
 * The hooks of a tool call (issue 22 §4, issue 33): PreToolUse before the permission check,
 * PostToolUse or PostToolUseFailure after it, and PermissionRequest / PermissionDenied at the
 * permission gate. A subagent runs these with its parent's settings.
 */
import { type HookDecision, type HookEvent, selectHookCommands } from '../../common/hooks';
import type { ToolUseBlock } from '../../common/messages';
import { HookRunner, inputObject } from './hook-runner';
import { type PreToolUseAction, preToolUseAction, systemReminder, withPostToolUseFeedback } from './hooks-decisions';

export abstract class ToolCallHooks extends HookRunner {
  /** Inputs PreToolUse hooks replaced, by tool_use id, until PostToolUse. */
  private readonly updatedInputs = new Map<string, Record<string, unknown>>();

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

  /**
   * PostToolBatch (issue 33, Claude Code's): once every call of a model reply has its result,
   * before the next model call. Its context goes to the model with the results; a block (exit 2,
   * `decision: "block"`) or `continue: false` ends the query with its reason. Nothing runs (no
   * activity) when no PostToolBatch hook is configured.
   */
  async postToolBatch(calls: ReadonlyArray<{ block: ToolUseBlock; response: string }>): Promise<{ context?: string; stop?: string }> {
    if (!this.state.settings?.PostToolBatch) return {};
    const event: HookEvent = {
      hook_event_name: 'PostToolBatch',
      tool_calls: calls.map(({ block, response }) => ({
        tool_name: block.name,
        tool_input: inputObject(this.updatedInputs.get(block.id) ?? block.input),
        tool_use_id: block.id,
        tool_response: response,
      })),
    };
    const { decision } = await this.run(event, `PostToolBatch hooks (${calls.length} calls)`);
    if (!decision) return {};
    const context = decision.additionalContext.length > 0 ? systemReminder(decision.additionalContext) : undefined;
    const stop = decision.preventContinuation
      ? decision.stopReason || 'Execution stopped by PostToolBatch hook'
      : decision.blocked
        ? decision.blockingMessage || 'Execution stopped by PostToolBatch hook'
        : undefined;
    return { ...(context !== undefined && { context }), ...(stop !== undefined && { stop }) };
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
}
