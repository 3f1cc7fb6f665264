/**
 * queryLoop — the execution layer (seed §2.2–2.4, §2.8–2.9), as an async generator that yields
 * messages and loop events to the session layer (session/submit-message.ts), which consumes them.
 * It is deterministic and imports nothing from Temporal: every effect goes through `QueryDeps`
 * (the seed's `deps` seam), which the workflow wires to activities. The `State` object mirrors
 * the seed's field for field; every `continue` writes `state = { ... }` with a `transition`
 * naming why. One iteration reads as the seed's phases ① to ⑧, each a named step below.
 */
import { ESCALATED_MAX_OUTPUT_TOKENS } from '../common/config';
import type { SystemPromptBlock } from '../common/activity-types';
import {
  type AssistantApiMessage,
  type AssistantMessage,
  type Message,
  type SystemMessage,
  type ToolUseBlock,
  type UserMessage,
  toolUseBlocksOf,
} from '../common/messages';
import type { Terminal } from '../common/result';
import {
  type AutoCompactTrackingState,
  type Thresholds,
  fitMaxTokens,
  isBreakerOpen,
  shouldAutoCompact,
  thresholdsForModel,
  tokenCountWithEstimation,
} from './auto-compact';
import { type CompactOutcome, type CompactRequestParams, type CompactResponse, compactTranscript } from './compact';
import { isMicrocompactDue, microcompactMessages } from './micro-compact';
import { planSnip } from './snip-compact';
import {
  INTERRUPT_MESSAGE,
  INTERRUPT_MESSAGE_FOR_TOOL_USE,
  closeDanglingToolUses,
  interruptionMessage,
  metaUserMessage,
  systemMessage,
  yieldMissingToolResultBlocks,
} from './messages';
import { type CompactionParams, type LoopEvent, type LoopOutput, type QueryParams, type State, type Suspended } from './query-state';
import { type StopHookDecision, handleStopHooks } from './stop-hooks';
import { type BudgetTracker, checkTokenBudget, createBudgetTracker } from './token-budget';
import type { Transcript, TranscriptRef } from './transcript';

export type { StopHookDecision } from './stop-hooks';
export type { AutoCompactTrackingState } from './auto-compact';
export type { CompactionParams, Continue, LoopCheckpoint, LoopEvent, LoopOutput, QueryParams, State, Suspended } from './query-state';
export { prependUserContext } from '../common/messages';

/** seed §2.8: at most three continuation nudges after a max_output_tokens stop. */
export const MAX_OUTPUT_TOKENS_RECOVERY_LIMIT = 3;

export const MAX_OUTPUT_TOKENS_RECOVERY_MESSAGE =
  'Output token limit hit. Resume directly where you left off — no apology, no recap of what you were doing. ' +
  'Pick up mid-thought if that is where the cut happened. Break remaining work into smaller pieces.';

/**
 * A model request as the loop builds it: the transcript by reference (the wiring never copies the
 * messages into an activity input; the worker materialises them), plus the prompt layers.
 */
export interface ModelRequest {
  model: string;
  system: SystemPromptBlock[];
  /** CLAUDE.md + date, prepended to the first user message on the worker (seed §2.5, Layer 3). */
  userContext?: string;
  transcript: TranscriptRef;
  maxTokens: number;
}

/** The model call's outcome as data; the wiring classifies activity failures into these. */
export type ModelResponse =
  | { type: 'message'; message: AssistantApiMessage; durationMs: number }
  | { type: 'prompt_too_long'; errorMessage: string; durationMs: number }
  | { type: 'aborted' }
  | { type: 'overloaded'; errorMessage: string }
  | { type: 'error'; errorMessage: string };

/** Runs the tool_use blocks of one assistant message (seed §2.4: runTools / StreamingToolExecutor). */
export interface ToolExecutor {
  /**
   * Yields progress and, for every tool_use in request order, exactly one user message carrying
   * its tool_result — also when aborted (synthesized results).
   */
  getRemainingResults(toolUses: ToolUseBlock[], assistant: AssistantMessage): AsyncGenerator<Message, void>;
  /** Cancels and drops work started for a discarded model attempt. */
  discard(): Promise<void>;
}

/** The loop's effects (seed `query/deps.ts`): wired to activities by `createQueryDeps`, to plain functions in tests. */
export interface QueryDeps {
  uuid(): string;
  /** Workflow time (microcompact's gap, message timestamps). */
  now(): number;
  isAborted(): boolean;
  newToolExecutor(): ToolExecutor;
  callModel(request: ModelRequest, executor: ToolExecutor): Promise<ModelResponse>;
  runStopHooks(args: { lastAssistant: AssistantMessage; stopHookActive: boolean }): Promise<StopHookDecision>;
  /** The compaction model call (seed §2.7 compactConversation): an activity. */
  compactConversation(request: CompactRequestParams): Promise<CompactResponse>;
}

/** What the loop asks of the session layer (implemented by `ConversationSession`); what it tells it, it yields (`LoopEvent`). */
export interface LoopSession {
  /** Inputs that arrived while the query ran (seed §2.2 step ⑦, queued commands). */
  takeQueuedInputs(): UserMessage[];
  /** True when the workflow wants to continue-as-new; checked at iteration boundaries. */
  shouldSuspend?(): boolean;
  /**
   * The session's limits (seed §2.10: QueryEngine checks them after each message): the budget
   * after a model reply; the budget and structured-output attempts after tool results.
   */
  checkLimits?(after: 'assistant' | 'tool_results'): Terminal | undefined;
}

const DEFAULT_COMPACTION: CompactionParams = { autoCompact: true, snip: false, microcompactGapMs: 0, consecutiveFailures: 0 };

/** One query's loop: its fixed context and what it carries from iteration to iteration. */
interface LoopRun {
  readonly params: QueryParams;
  readonly deps: QueryDeps;
  readonly session: LoopSession;
  readonly transcript: Transcript;
  readonly thresholds: Thresholds;
  readonly compaction: CompactionParams;
  state: State;
  currentModel: string;
  /** seed §2.6: the budget tracker lives for the whole query, outside State. */
  budgetTracker: BudgetTracker;
  queryOutputTokens: number;
}

/** How a step ends: the query ends, the loop continues with a new state, or the iteration goes on with a value. */
type Ended = { type: 'end'; terminal: Terminal };
type Continued = { type: 'continue'; state: State };
type Next<T> = { type: 'next'; value: T };

const end = (terminal: Terminal): Ended => ({ type: 'end', terminal });

/** seed §2.2: the core loop. Returns why it ended. */
export async function* queryLoop(params: QueryParams, deps: QueryDeps, session: LoopSession): AsyncGenerator<LoopOutput, Terminal | Suspended> {
  const loop = startQuery(params, deps, session);
  yield { type: 'model', model: loop.currentModel };
  let iterationsThisRun = 0;
  while (true) {
    // ① the iteration's state, at a quiet point (nothing in flight): the workflow may ask to
    // continue-as-new here, mid-query, when its history has grown long. Never on a run's first
    // iteration, so every run progresses.
    if (iterationsThisRun++ > 0 && session.shouldSuspend?.()) {
      const { state, currentModel, budgetTracker, queryOutputTokens } = loop;
      return { reason: 'suspended', checkpoint: { state, currentModel, budgetTracker, queryOutputTokens } };
    }
    // Recovery paths (max_tokens, stop hooks, fallback, pause_turn) call the model again without
    // a reply or tool round in between: the budget is checked before each further request too.
    const limitBeforeRequest = loop.state.transition ? session.checkLimits?.('assistant') : undefined;
    if (limitBeforeRequest) {
      if (limitBeforeRequest.error) yield system(loop, limitBeforeRequest.error, 'warning');
      return limitBeforeRequest;
    }
    // ② prefetch: the reads a model call's answer asks for are prefetched in that call's local
    // phase (deps/model-call.ts, tool-prefetch.ts); nothing starts here.

    // ③ the message window
    const window = yield* buildMessageWindow(loop);
    if (window.type === 'end') return window.terminal;
    const tokenCount = window.value;

    // ④ call the model
    const executor = deps.newToolExecutor();
    const response = await deps.callModel(
      {
        model: loop.currentModel,
        system: params.systemPrompt,
        userContext: params.userContext,
        transcript: loop.transcript.ref(),
        maxTokens: fitMaxTokens(loop.state.maxOutputTokensOverride ?? params.maxOutputTokens, loop.thresholds.contextWindow, tokenCount),
      },
      executor,
    );

    // ⑤ the branch after streaming
    const branch = yield* afterStreaming(loop, response, executor, tokenCount);
    if (branch.type === 'end') return branch.terminal;
    if (branch.type === 'continue') {
      yield* continueWith(loop, branch.state);
      continue;
    }

    // ⑥ tools
    const stopped = yield* runTools(loop, branch.value, executor);
    if (stopped) return stopped;

    // ⑦ attachments: input that arrived during the query is seen on the next turn
    yield* session.takeQueuedInputs();

    // ⑧ next state (the session appended the assistant message, results and queued inputs as they were yielded)
    yield* continueWith(loop, {
      ...loop.state,
      turnCount: loop.state.turnCount + 1,
      maxOutputTokensRecoveryCount: 0,
      // A later request may outgrow the window again: it gets its own reactive compaction.
      hasAttemptedReactiveCompact: false,
      maxOutputTokensOverride: undefined,
      // stopHookActive and the block count survive tool turns, as in Claude Code: a hook that
      // blocked sees stop_hook_active on its next run even if the model used tools in between.
      transition: { type: 'tool_use' },
    });
  }
}

/** The query's loop context and first State (or the checkpoint's, resumed in a new run). */
function startQuery(params: QueryParams, deps: QueryDeps, session: LoopSession): LoopRun {
  const { transcript, resume } = params;
  const compaction = params.compaction ?? DEFAULT_COMPACTION;
  const currentModel = resume?.currentModel ?? params.model;
  // The fallback model never sees the primary's thinking signatures (seed §2.8); checkpoints of
  // older runs carried a transcript that still had them.
  if (resume && currentModel !== params.model) transcript.stripSignatureBlocks();
  return {
    params,
    deps,
    session,
    transcript,
    thresholds: thresholdsForModel(params.model, { contextWindowTokens: params.contextWindowTokens, modelMaxOutputTokens: params.modelMaxOutputTokens }),
    compaction,
    currentModel,
    budgetTracker: resume?.budgetTracker ?? createBudgetTracker(),
    queryOutputTokens: resume?.queryOutputTokens ?? 0,
    state: resume
      ? resume.state
      : {
          autoCompactTracking: { compacted: false, turnCounter: 0, consecutiveFailures: compaction.consecutiveFailures },
          maxOutputTokensRecoveryCount: 0,
          hasAttemptedReactiveCompact: false,
          maxOutputTokensOverride: undefined,
          pendingToolUseSummary: undefined,
          stopHookActive: undefined,
          turnCount: 1,
          transition: undefined,
          stopHookBlockCount: 0,
        },
  };
}

/** Every `continue`: the new State, and the transition reported to the session. */
function* continueWith(loop: LoopRun, next: State): Generator<LoopEvent, void> {
  loop.state = next;
  if (next.transition) yield { type: 'transition', transition: next.transition.type, turnCount: next.turnCount };
}

function system(loop: LoopRun, message: string, level: SystemMessage['level']): SystemMessage {
  return systemMessage(loop.deps.uuid(), message, level);
}

/**
 * ③ message window (seed §2.3/§2.7), cheapest first: the window after the last compact boundary
 * (the request's `from`); the per-tool result budget (in the tool activity); snip; time-based
 * microcompact; autocompact; then the blocking limit. Token counts walk back only to the last
 * reply. Goes on with the token count of the request.
 */
async function* buildMessageWindow(loop: LoopRun): AsyncGenerator<LoopOutput, Ended | Next<number>> {
  const { transcript, thresholds, compaction, deps } = loop;
  let tokenCount = tokenCountWithEstimation(transcript.messages);
  let snipTokensFreed = 0;
  if (compaction.snip && tokenCount >= thresholds.warningThreshold) {
    const plan = planSnip(transcript.window(), tokenCount - thresholds.warningThreshold);
    if (plan.to > plan.from) {
      transcript.removeFromWindow(plan.from, plan.to);
      snipTokensFreed = plan.tokensFreed;
      yield system(loop, `Snipped ${plan.to - plan.from} of the oldest messages (about ${plan.tokensFreed} tokens).`, 'info');
    }
  }
  if (compaction.microcompactGapMs > 0 && isMicrocompactDue(transcript.window(), deps.now(), compaction.microcompactGapMs)) {
    const result = microcompactMessages(transcript.window());
    if (result.cleared > 0) {
      transcript.rewriteWindow(() => result.messages);
      tokenCount = Math.max(0, tokenCount - result.tokensFreed);
      yield system(loop, `Cleared ${result.cleared} old tool results after a long pause (about ${result.tokensFreed} tokens).`, 'info');
    }
  }
  let nothingToCompact = false;
  const consecutiveFailures = loop.state.autoCompactTracking?.consecutiveFailures ?? 0;
  if (shouldAutoCompact({ tokenCount, thresholds, enabled: compaction.autoCompact, consecutiveFailures, snipTokensFreed })) {
    const outcome = yield* compact(loop, 'auto', tokenCount);
    if (deps.isAborted()) {
      yield interruptionMessage(deps.uuid(), INTERRUPT_MESSAGE);
      return end({ reason: 'aborted_streaming' });
    }
    if (outcome.compacted) tokenCount = tokenCountWithEstimation(transcript.messages);
    nothingToCompact = outcome.nothingToCompact === true;
  }
  yield { type: 'context_tokens', tokens: tokenCount };

  // Blocking limit: with autocompact off (or given up on, or with nothing to compact) a request
  // this large would be refused; say so instead of sending it.
  const blocking = !compaction.autoCompact || isBreakerOpen(loop.state.autoCompactTracking?.consecutiveFailures ?? 0) || nothingToCompact;
  if (blocking && tokenCount >= thresholds.blockingLimit) {
    const error = `The conversation is too long for the model's context window (about ${tokenCount} tokens; ` + `the limit is ${thresholds.blockingLimit}).`;
    yield system(loop, error, 'error');
    return end({ reason: 'blocking_limit', error });
  }
  return { type: 'next', value: tokenCount };
}

/** seed §2.7: one compaction; its messages are yielded (the session appends them). */
async function* compact(loop: LoopRun, trigger: CompactOutcome['trigger'], preTokens: number): AsyncGenerator<LoopOutput, CompactOutcome> {
  const { deps } = loop;
  yield { type: 'compacting', trigger };
  const outcome = yield* compactTranscript(
    loop.transcript,
    { uuid: deps.uuid, now: deps.now, compactConversation: deps.compactConversation },
    { trigger, preTokens, contextWindow: loop.thresholds.contextWindow },
  );
  const tracking: AutoCompactTrackingState = loop.state.autoCompactTracking ?? { compacted: false, turnCounter: 0, consecutiveFailures: 0 };
  // Only a model that failed counts toward the breaker; "nothing to compact" and an abort do not.
  const failed = !outcome.compacted && !outcome.nothingToCompact && !deps.isAborted();
  const next: AutoCompactTrackingState = outcome.compacted
    ? { compacted: true, turnCounter: 0, consecutiveFailures: 0 }
    : { ...tracking, consecutiveFailures: tracking.consecutiveFailures + (failed ? 1 : 0) };
  loop.state = { ...loop.state, autoCompactTracking: next };
  yield { type: 'compaction', outcome, consecutiveFailures: next.consecutiveFailures };
  // A success shows as its compact_boundary in the feed; failures are said in words.
  if (failed) {
    const open = isBreakerOpen(next.consecutiveFailures);
    yield system(
      loop,
      `${outcome.error ?? 'Compaction failed.'}${open ? ` Autocompact failed ${next.consecutiveFailures} times in a row; it is off for this conversation (compact manually).` : ''}`,
      'warning',
    );
  }
  return outcome;
}

/**
 * ⑤ the branch after streaming (seed §2.3, §2.8): a fallback switch, an abort, an error, a
 * withheld prompt-too-long (one reactive compaction) or max_output_tokens (escalate, then nudge),
 * then the reply itself — checked against the session's limits — and, without tool calls, the end
 * of the turn. Goes on to ⑥ with the reply's tool calls.
 */
async function* afterStreaming(
  loop: LoopRun,
  response: ModelResponse,
  executor: ToolExecutor,
  tokenCount: number,
): AsyncGenerator<LoopOutput, Ended | Continued | Next<{ assistant: AssistantMessage; toolUses: ToolUseBlock[] }>> {
  const { deps, state, params } = loop;
  const fallbackModel = params.fallbackModel;
  if (response.type === 'overloaded' && fallbackModel && loop.currentModel !== fallbackModel) {
    // seed §2.8 ①: overload outlasted the primary's retries — the rest of this query uses the
    // fallback model. Work started for the abandoned attempt is dropped, and thinking
    // signatures (bound to the model that made them) are stripped before another model sees them.
    const originalModel = loop.currentModel;
    loop.currentModel = fallbackModel;
    yield { type: 'model', model: fallbackModel };
    await executor.discard();
    loop.transcript.stripSignatureBlocks();
    yield system(loop, `Switched to ${fallbackModel} due to high demand for ${originalModel}`, 'warning');
    return { type: 'continue', state: { ...state, transition: { type: 'fallback_retry' } } };
  }
  if (response.type === 'aborted') {
    await executor.discard();
    yield interruptionMessage(deps.uuid(), INTERRUPT_MESSAGE);
    return end({ reason: 'aborted_streaming' });
  }
  if (response.type === 'overloaded' || response.type === 'error') {
    await executor.discard();
    yield system(loop, `API error: ${response.errorMessage}`, 'error');
    return end({ reason: 'model_error', error: response.errorMessage });
  }
  if (response.type === 'prompt_too_long') {
    // Withheld until recovery is known impossible (seed §2.3, §2.8): one reactive compaction,
    // then the same request again; a second one surfaces.
    await executor.discard();
    if (!state.hasAttemptedReactiveCompact) {
      const outcome = yield* compact(loop, 'reactive', tokenCount);
      if (deps.isAborted()) {
        yield interruptionMessage(deps.uuid(), INTERRUPT_MESSAGE);
        return end({ reason: 'aborted_streaming' });
      }
      if (outcome.compacted) return { type: 'continue', state: { ...loop.state, hasAttemptedReactiveCompact: true, transition: { type: 'reactive_compact_retry' } } };
    }
    const error = state.hasAttemptedReactiveCompact
      ? `The conversation is still too long for the model after compacting it: ${response.errorMessage}`
      : response.errorMessage;
    yield system(loop, `Prompt is too long: ${error}`, 'error');
    return end({ reason: 'prompt_too_long', error });
  }

  const assistant: AssistantMessage = { type: 'assistant', uuid: deps.uuid(), message: response.message, timestamp: deps.now() };
  loop.queryOutputTokens += response.message.usage.output_tokens;
  const stopReason = response.message.stop_reason;
  if (stopReason === 'max_tokens' || stopReason === 'model_context_window_exceeded') {
    await executor.discard();
    return yield* recoverFromMaxOutputTokens(loop, assistant);
  }

  yield assistant;
  const toolUses = toolUseBlocksOf(assistant);
  const limitAfterReply = loop.session.checkLimits?.('assistant');
  if (limitAfterReply) {
    // The reply's tool calls do not run; each gets an error result so the history stays valid.
    await executor.discard();
    const error = limitAfterReply.error ?? 'Stopped before this tool call ran.';
    yield* yieldMissingToolResultBlocks([assistant], error, deps.uuid);
    yield system(loop, error, 'warning');
    return end(limitAfterReply);
  }
  if (toolUses.length > 0) return { type: 'next', value: { assistant, toolUses } };
  await executor.discard();
  return yield* endOfTurn(loop, assistant);
}

/**
 * Withheld max_output_tokens (seed §2.8 ②). First escalate the cap once and retry the same
 * request; then keep the truncated output and nudge the model to resume.
 */
async function* recoverFromMaxOutputTokens(loop: LoopRun, assistant: AssistantMessage): AsyncGenerator<LoopOutput, Ended | Continued> {
  const { state, params, deps } = loop;
  if (state.maxOutputTokensOverride === undefined && params.maxOutputTokens < ESCALATED_MAX_OUTPUT_TOKENS) {
    return { type: 'continue', state: { ...state, maxOutputTokensOverride: ESCALATED_MAX_OUTPUT_TOKENS, transition: { type: 'max_output_tokens_escalate' } } };
  }
  if (state.maxOutputTokensRecoveryCount < MAX_OUTPUT_TOKENS_RECOVERY_LIMIT) {
    // The truncated reply stays in history; error results for its unfinished tool calls are
    // yielded too, so the session's transcript (which later queries send) stays valid.
    yield* closeDanglingToolUses(assistant, deps.uuid);
    yield metaUserMessage(deps.uuid(), MAX_OUTPUT_TOKENS_RECOVERY_MESSAGE);
    return {
      type: 'continue',
      state: { ...state, maxOutputTokensRecoveryCount: state.maxOutputTokensRecoveryCount + 1, transition: { type: 'max_output_tokens_recovery' } },
    };
  }
  yield { ...assistant, apiError: 'max_output_tokens' };
  yield* yieldMissingToolResultBlocks([assistant], 'Output token limit reached', deps.uuid);
  const error =
    `The model's response hit the output token limit again after the limit was raised and ` +
    `${MAX_OUTPUT_TOKENS_RECOVERY_LIMIT} continuation attempts.`;
  yield system(loop, error, 'error');
  return end({ reason: 'model_error', error });
}

/**
 * A reply without tool calls: a paused turn goes on; a refusal ends; the Stop hooks get a say
 * (seed §2.9, stop-hooks.ts); with a token budget an early stop is nudged to keep going (seed §2.6).
 */
async function* endOfTurn(loop: LoopRun, assistant: AssistantMessage): AsyncGenerator<LoopOutput, Ended | Continued> {
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
    return { type: 'continue', state: { ...state, stopHookActive: true, stopHookBlockCount: state.stopHookBlockCount + 1, transition: { type: 'stop_hook_retry' } } };
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

/** ⑥ tools (seed §2.4): every call's result, then the abort, the session's limits and max turns. */
async function* runTools(
  loop: LoopRun,
  reply: { assistant: AssistantMessage; toolUses: ToolUseBlock[] },
  executor: ToolExecutor,
): AsyncGenerator<LoopOutput, Terminal | undefined> {
  const { deps, session, params } = loop;
  for await (const update of executor.getRemainingResults(reply.toolUses, reply.assistant)) yield update;
  if (deps.isAborted()) {
    yield interruptionMessage(deps.uuid(), INTERRUPT_MESSAGE_FOR_TOOL_USE);
    return { reason: 'aborted_tools' };
  }
  const limitAfterTools = session.checkLimits?.('tool_results');
  if (limitAfterTools) {
    if (limitAfterTools.error) yield system(loop, limitAfterTools.error, 'warning');
    return limitAfterTools;
  }
  if (params.maxTurns && loop.state.turnCount + 1 > params.maxTurns) {
    yield system(loop, `Reached the maximum number of turns (${params.maxTurns}).`, 'warning');
    return { reason: 'max_turns' };
  }
  return undefined;
}
