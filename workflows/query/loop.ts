/**
 * queryLoop — the execution layer (seed §2.2–2.4, §2.8–2.9), as an async generator that yields
 * messages and loop events to the session layer (session/submit-message.ts), which consumes them.
 * It is deterministic and imports nothing from Temporal: every effect goes through `QueryDeps`
 * (the seed's `deps` seam), which the workflow wires to activities. The `State` object mirrors
 * the seed's field for field; every `continue` writes `state = { ... }` with a `transition`
 * naming why. One iteration reads as the seed's phases ① to ⑧, each a named step below; the
 * recovery paths after a reply (max_output_tokens, the end of a turn) are in recovery.ts,
 * and `State`, the seams and the loop's context in state.ts.
 */
import { type AssistantMessage, type ToolUseBlock, toolUseBlocksOf } from '../../common/messages';
import type { Terminal } from '../../common/result';
import {
  type AutoCompactTrackingState,
  fitMaxTokens,
  isBreakerOpen,
  shouldAutoCompact,
  thresholdsForModel,
  tokenCountWithEstimation,
} from '../compaction/auto';
import { type CompactOutcome, compactTranscript } from '../compaction/summary';
import { isMicrocompactDue, microcompactMessages } from '../compaction/micro';
import { planSnip } from '../compaction/snip';
import { INTERRUPT_MESSAGE, INTERRUPT_MESSAGE_FOR_TOOL_USE, interruptionMessage, metaUserMessage, yieldMissingToolResultBlocks } from '../messages';
import { endOfTurn, nextTurnState, recoverFromMaxOutputTokens } from './recovery';
import {
  type CompactionParams,
  type Continued,
  type Ended,
  type LoopEvent,
  type LoopOutput,
  type LoopRun,
  type LoopSession,
  type ModelResponse,
  type Next,
  type QueryDeps,
  type QueryParams,
  type State,
  type Suspended,
  type ToolExecutor,
  end,
  initialState,
  loopSystemMessage as system,
} from './state';
import { createBudgetTracker } from './token-budget';

export type { StopHookDecision } from './handle-stop-hooks';
export type { AutoCompactTrackingState } from '../compaction/auto';
export type {
  CompactionParams,
  Continue,
  LoopCheckpoint,
  LoopEvent,
  LoopOutput,
  LoopSession,
  ModelRequest,
  ModelResponse,
  QueryDeps,
  QueryParams,
  State,
  Suspended,
  ToolExecutor,
} from './state';
export { MAX_OUTPUT_TOKENS_RECOVERY_LIMIT, MAX_OUTPUT_TOKENS_RECOVERY_MESSAGE } from './recovery';
export { prependUserContext } from '../../common/messages';

const DEFAULT_COMPACTION: CompactionParams = { autoCompact: true, snip: false, microcompactGapMs: 0, consecutiveFailures: 0 };

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
    yield* continueWith(loop, nextTurnState(loop.state));
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
    state: resume ? resume.state : initialState(compaction.consecutiveFailures),
  };
}

/** Every `continue`: the new State, and the transition reported to the session. */
function* continueWith(loop: LoopRun, next: State): Generator<LoopEvent, void> {
  loop.state = next;
  if (next.transition) yield { type: 'transition', transition: next.transition.type, turnCount: next.turnCount };
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
      if (outcome.compacted)
        return { type: 'continue', state: { ...loop.state, hasAttemptedReactiveCompact: true, transition: { type: 'reactive_compact_retry' } } };
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

/** ⑥ tools (seed §2.4): every call's result, then the abort, the session's limits and max turns. */
async function* runTools(
  loop: LoopRun,
  reply: { assistant: AssistantMessage; toolUses: ToolUseBlock[] },
  executor: ToolExecutor,
): AsyncGenerator<LoopOutput, Terminal | undefined> {
  const { deps, session, params } = loop;
  const responses = new Map<string, string>();
  for await (const update of executor.getRemainingResults(reply.toolUses, reply.assistant)) {
    if (deps.runPostToolBatchHooks) for (const [id, text] of toolResultTexts(update)) responses.set(id, text);
    yield update;
  }
  if (deps.isAborted()) {
    yield interruptionMessage(deps.uuid(), INTERRUPT_MESSAGE_FOR_TOOL_USE);
    return { reason: 'aborted_tools' };
  }
  // Issue 33: PostToolBatch, once the reply's calls all have results (Claude Code's place: before the next model call).
  if (deps.runPostToolBatchHooks) {
    const batch = await deps.runPostToolBatchHooks(reply.toolUses.map((block) => ({ block, response: responses.get(block.id) ?? '' })));
    if (batch.context) yield metaUserMessage(deps.uuid(), batch.context);
    if (batch.stop !== undefined) {
      yield system(loop, `Stopped by PostToolBatch hook: ${batch.stop}`, 'info');
      return { reason: 'hook_stopped', error: batch.stop };
    }
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

/** The tool_result texts a message of the tool run carries, by tool_use id (PostToolBatch's `tool_response`). */
function toolResultTexts(message: { type: string; message?: unknown }): Array<[string, string]> {
  if (message.type !== 'user') return [];
  const content = (message.message as { content?: unknown } | undefined)?.content;
  if (!Array.isArray(content)) return [];
  return content.flatMap((block: { type?: string; tool_use_id?: string; content?: unknown }) => {
    if (block.type !== 'tool_result' || typeof block.tool_use_id !== 'string') return [];
    const text =
      typeof block.content === 'string'
        ? block.content
        : Array.isArray(block.content)
          ? block.content.map((part: { type?: string; text?: string }) => (part.type === 'text' ? (part.text ?? '') : '')).join('\n')
          : '';
    return [[block.tool_use_id, text] as [string, string]];
  });
}
