/**
 * The loop's recovery paths after a reply (seed §2.8, §2.9): withheld max_output_tokens (escalate
 * the cap, then nudge the model to resume) and the end of a turn without tool calls (pause, refusal,
 * Stop hooks, token budget). Which `State` comes next is decided by pure functions
 * (`decideMaxOutputTokens`, `nextTurnState`), unit-tested on their own; the generators say what is
 * yielded on the way.
 */
import { ESCALATED_MAX_OUTPUT_TOKENS } from '../../common/config';
import type { AssistantMessage } from '../../common/messages';
import { closeDanglingToolUses, metaUserMessage, yieldMissingToolResultBlocks } from '../messages';
import { type Continued, type Ended, type LoopOutput, type LoopRun, type State, end, loopSystemMessage as system } from './state';
import { handleStopHooks } from './handle-stop-hooks';
import { checkTokenBudget } from './token-budget';

/** seed §2.8: at most three continuation nudges after a max_output_tokens stop. */
export const MAX_OUTPUT_TOKENS_RECOVERY_LIMIT = 3;

export const MAX_OUTPUT_TOKENS_RECOVERY_MESSAGE =
  'Output token limit hit. Resume directly where you left off — no apology, no recap of what you were doing. ' +
  'Pick up mid-thought if that is where the cut happened. Break remaining work into smaller pieces.';

/** What a withheld max_output_tokens reply leads to: the same request with a raised cap, a nudge to resume, or the end. */
export type MaxOutputTokensDecision = { type: 'escalate'; state: State } | { type: 'recover'; state: State } | { type: 'exhausted' };

/** seed §2.8 ②: escalate the cap once (when the configured one is below it), then up to three nudges. */
export function decideMaxOutputTokens(state: State, maxOutputTokens: number): MaxOutputTokensDecision {
  if (state.maxOutputTokensOverride === undefined && maxOutputTokens < ESCALATED_MAX_OUTPUT_TOKENS) {
    return { type: 'escalate', state: { ...state, maxOutputTokensOverride: ESCALATED_MAX_OUTPUT_TOKENS, transition: { type: 'max_output_tokens_escalate' } } };
  }
  if (state.maxOutputTokensRecoveryCount < MAX_OUTPUT_TOKENS_RECOVERY_LIMIT) {
    return {
      type: 'recover',
      state: { ...state, maxOutputTokensRecoveryCount: state.maxOutputTokensRecoveryCount + 1, transition: { type: 'max_output_tokens_recovery' } },
    };
  }
  return { type: 'exhausted' };
}

/** ⑧ the State after a round of tool results: the next turn, with the per-request recovery reset. */
export function nextTurnState(state: State): State {
  return {
    ...state,
    turnCount: state.turnCount + 1,
    maxOutputTokensRecoveryCount: 0,
    // A later request may outgrow the window again: it gets its own reactive compaction.
    hasAttemptedReactiveCompact: false,
    maxOutputTokensOverride: undefined,
    // stopHookActive and the block count survive tool turns, as in Claude Code: a hook that
    // blocked sees stop_hook_active on its next run even if the model used tools in between.
    transition: { type: 'tool_use' },
  };
}

/**
 * Withheld max_output_tokens (seed §2.8 ②). First escalate the cap once and retry the same
 * request; then keep the truncated output and nudge the model to resume.
 */
export async function* recoverFromMaxOutputTokens(loop: LoopRun, assistant: AssistantMessage): AsyncGenerator<LoopOutput, Ended | Continued> {
  const { deps } = loop;
  const decision = decideMaxOutputTokens(loop.state, loop.params.maxOutputTokens);
  if (decision.type === 'escalate') return { type: 'continue', state: decision.state };
  if (decision.type === 'recover') {
    // The truncated reply stays in history; error results for its unfinished tool calls are
    // yielded too, so the session's transcript (which later queries send) stays valid.
    yield* closeDanglingToolUses(assistant, deps.uuid);
    yield metaUserMessage(deps.uuid(), MAX_OUTPUT_TOKENS_RECOVERY_MESSAGE);
    return { type: 'continue', state: decision.state };
  }
  yield { ...assistant, apiError: 'max_output_tokens' };
  yield* yieldMissingToolResultBlocks([assistant], 'Output token limit reached', deps.uuid);
  const error =
    `The model's response hit the output token limit again after the limit was raised and ` + `${MAX_OUTPUT_TOKENS_RECOVERY_LIMIT} continuation attempts.`;
  yield system(loop, error, 'error');
  return end({ reason: 'model_error', error });
}

/**
 * A reply without tool calls: a paused turn goes on; a refusal ends; the Stop hooks get a say
 * (seed §2.9, handle-stop-hooks.ts); with a token budget an early stop is nudged to keep going (seed §2.6).
 */
export async function* endOfTurn(loop: LoopRun, assistant: AssistantMessage): AsyncGenerator<LoopOutput, Ended | Continued> {
  const { state, params, deps } = loop;
  const stopReason = assistant.message.stop_reason;
  // The server paused a long turn; sending the content back lets it continue.
  if (stopReason === 'pause_turn') return { type: 'continue', state: { ...state, transition: { type: 'pause_turn' } } };
  if (stopReason === 'refusal') {
    yield system(loop, 'The model declined to continue this request (stop_reason: refusal).', 'warning');
    return end({ reason: 'completed' });
  }
  const hooks = yield* handleStopHooks(deps, { assistant, stopHookActive: state.stopHookActive ?? false, blockCount: state.stopHookBlockCount });
  if (hooks.type === 'end') return end(hooks.terminal);
  if (hooks.type === 'blocked') {
    return {
      type: 'continue',
      state: { ...state, stopHookActive: true, stopHookBlockCount: state.stopHookBlockCount + 1, transition: { type: 'stop_hook_retry' } },
    };
  }
  if (params.tokenBudget) {
    const decision = checkTokenBudget(loop.budgetTracker, params.agentId, params.tokenBudget, loop.queryOutputTokens);
    loop.budgetTracker = decision.tracker;
    if (decision.action === 'continue') {
      yield metaUserMessage(deps.uuid(), decision.nudgeMessage);
      return { type: 'continue', state: { ...state, stopHookActive: undefined, stopHookBlockCount: 0, transition: { type: 'token_budget_continuation' } } };
    }
    if (decision.completionEvent) {
      const { pct, turnTokens, budget, continuationCount, diminishingReturns } = decision.completionEvent;
      yield system(
        loop,
        `Token budget: ${turnTokens} of ${budget} output tokens (${pct}%) after ${continuationCount} continuation(s)` +
          (diminishingReturns ? '; stopped on diminishing returns.' : '.'),
        'info',
      );
    }
  }
  return end({ reason: 'completed' });
}
