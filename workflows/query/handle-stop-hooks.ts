/**
 * seed §2.9 handleStopHooks: before the loop ends a turn without tool calls, the Stop hooks get a
 * say. A generator, as in Claude Code (`query/stopHooks.ts`): it yields what people and the model
 * should see (notices, the stop line, hook feedback) and returns what the loop does next — end
 * the query, send the feedback back to the model, or go on to the token-budget check.
 */
import type { AssistantMessage, Message } from '../../common/messages';
import type { Terminal } from '../../common/result';
import { INTERRUPT_MESSAGE_FOR_TOOL_USE, interruptionMessage, metaUserMessage, systemMessage } from '../messages';

/** What the Stop hooks decided (the effect: workflows/deps/stop-hooks-call.ts). */
export interface StopHookDecision {
  /** Texts fed back to the model (exit 2 or decision:block). */
  blockingErrors: string[];
  preventContinuation: boolean;
  stopReason?: string;
  /** Messages for people (non-blocking hook failures). */
  notices: string[];
}

/** The effects the Stop hooks need (a subset of the loop's QueryDeps). */
export interface StopHookDeps {
  uuid(): string;
  isAborted(): boolean;
  runStopHooks(args: { lastAssistant: AssistantMessage; stopHookActive: boolean }): Promise<StopHookDecision>;
}

/** Claude Code ends the turn after this many consecutive blocking Stop-hook results. */
export const MAX_CONSECUTIVE_STOP_HOOK_BLOCKS = 8;

/** What the loop does after the hooks: end with `terminal`, retry (feedback was yielded), or go on. */
export type StopHooksOutcome = { type: 'end'; terminal: Terminal } | { type: 'blocked' } | { type: 'passed' };

export async function* handleStopHooks(
  deps: StopHookDeps,
  args: { assistant: AssistantMessage; stopHookActive: boolean; blockCount: number },
): AsyncGenerator<Message, StopHooksOutcome> {
  const hooks = await deps.runStopHooks({ lastAssistant: args.assistant, stopHookActive: args.stopHookActive });
  // Hooks are commands like tools: an abort while they run ends the query as aborted_tools.
  if (deps.isAborted()) {
    yield interruptionMessage(deps.uuid(), INTERRUPT_MESSAGE_FOR_TOOL_USE);
    return { type: 'end', terminal: { reason: 'aborted_tools' } };
  }
  for (const notice of hooks.notices) yield systemMessage(deps.uuid(), notice, 'warning');
  if (hooks.preventContinuation) {
    yield systemMessage(deps.uuid(), hooks.stopReason ? `Stopped by hook: ${hooks.stopReason}` : 'Stopped by hook', 'info');
    return { type: 'end', terminal: { reason: 'stop_hook_prevented', error: hooks.stopReason } };
  }
  if (hooks.blockingErrors.length === 0) return { type: 'passed' };
  if (args.blockCount + 1 >= MAX_CONSECUTIVE_STOP_HOOK_BLOCKS) {
    yield systemMessage(
      deps.uuid(),
      `Stop hooks blocked ${MAX_CONSECUTIVE_STOP_HOOK_BLOCKS} times in a row; ending the turn. Last: ${hooks.blockingErrors.join('\n')}`,
      'warning',
    );
    return { type: 'end', terminal: { reason: 'completed' } };
  }
  for (const text of hooks.blockingErrors) yield metaUserMessage(deps.uuid(), `Stop hook feedback:\n${text}`);
  return { type: 'blocked' };
}
