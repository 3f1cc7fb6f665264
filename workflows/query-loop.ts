/**
 * queryLoop — the execution layer (seed §2.2–2.4, §2.8–2.9), as an async generator that yields
 * messages to the session layer (`conversation.ts`). It is deterministic and imports nothing from
 * Temporal: every effect goes through `QueryDeps` (the seed's `deps` seam), which the workflow
 * wires to activities. The `State` object mirrors the seed's field for field; every `continue`
 * writes `state = { ... }` with a `transition` naming why.
 */
import { ESCALATED_MAX_OUTPUT_TOKENS } from '../common/config';
import type { SystemPromptBlock } from '../common/activity-types';
import {
  type AssistantApiMessage,
  type AssistantMessage,
  type Message,
  type SystemMessage,
  type ToolUseBlock,
  type TranscriptMessage,
  type UserMessage,
  toolUseBlocksOf,
} from '../common/messages';
import type { Terminal, TransitionType } from '../common/result';
import {
  type AutoCompactTrackingState,
  fitMaxTokens,
  isBreakerOpen,
  shouldAutoCompact,
  thresholdsForModel,
  tokenCountWithEstimation,
} from './auto-compact';
import { type CompactOutcome, type CompactRequestParams, type CompactResponse, compactTranscript } from './compact';
import { isMicrocompactDue, microcompactMessages } from './micro-compact';
import { planSnip } from './snip-compact';
import { INTERRUPT_MESSAGE, INTERRUPT_MESSAGE_FOR_TOOL_USE, interruptionMessage, systemMessage, yieldMissingToolResultBlocks } from './messages';
import { type StopHookDecision, handleStopHooks } from './stop-hooks';

export type { StopHookDecision } from './stop-hooks';
import { type BudgetTracker, checkTokenBudget, createBudgetTracker } from './token-budget';
import type { Transcript, TranscriptRef } from './transcript';

export { prependUserContext } from '../common/messages';

/** seed §2.8: at most three continuation nudges after a max_output_tokens stop. */
export const MAX_OUTPUT_TOKENS_RECOVERY_LIMIT = 3;

export const MAX_OUTPUT_TOKENS_RECOVERY_MESSAGE =
  'Output token limit hit. Resume directly where you left off — no apology, no recap of what you were doing. ' +
  'Pick up mid-thought if that is where the cut happened. Break remaining work into smaller pieces.';

export interface Continue {
  type: TransitionType;
}

export type { AutoCompactTrackingState } from './auto-compact';

/**
 * Mutable cross-iteration state (seed §2.2, src/query.ts:204-217). The seed's `messages` field is
 * not here: the transcript has one owner (`Transcript`, shared with the session layer, which
 * appends everything the loop yields), so the loop reads `params.transcript` instead of keeping
 * a second copy in step by convention.
 */
export interface State {
  autoCompactTracking: AutoCompactTrackingState | undefined;
  maxOutputTokensRecoveryCount: number;
  hasAttemptedReactiveCompact: boolean;
  maxOutputTokensOverride: number | undefined;
  /** Claude Code summarizes tool use asynchronously for its UI; we have no such summary. */
  pendingToolUseSummary: undefined;
  stopHookActive: boolean | undefined;
  turnCount: number;
  /** Why the previous iteration continued. Undefined on the first iteration. */
  transition: Continue | undefined;
  /** Consecutive blocking Stop-hook rounds (Claude Code caps them). */
  stopHookBlockCount: number;
}

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

/** What the loop asks of the session layer and tells it (implemented by `ConversationSession`). */
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
  /** A compaction started (phase `compacting`). */
  onCompacting?(trigger: CompactOutcome['trigger']): void;
  /** A compaction ended; the failure streak after it (the session keeps it across queries). */
  onCompaction?(outcome: CompactOutcome, consecutiveFailures: number): void;
  /** The context size the loop measured before a request. */
  onContextTokens?(tokens: number): void;
  /** Called when the loop switches models (status shows it). */
  onModelChange?(model: string): void;
  onTransition?(transition: TransitionType): void;
}

export interface QueryParams {
  /** The conversation's transcript (shared: the session appends what the loop yields). */
  transcript: Transcript;
  systemPrompt: SystemPromptBlock[];
  /** CLAUDE.md + date, prepended as a <system-reminder> user message (seed §2.5, Layer 3). */
  userContext?: string;
  model: string;
  fallbackModel?: string;
  maxTurns: number;
  maxOutputTokens: number;
  /** Output-token target for this query ("+500k"); null when none (seed §2.6). */
  tokenBudget?: number | null;
  /** Set for subagents: they never self-continue on a token budget. */
  agentId?: string;
  /** Model context window; defaults by model name. */
  contextWindowTokens?: number;
  /** The model's largest output (for the effective window); defaults by model name. */
  modelMaxOutputTokens?: number;
  /** Context management (seed §2.7). */
  compaction?: CompactionParams;
  /** Resumes a query suspended for continue-as-new (the transcript was carried by the session). */
  resume?: LoopCheckpoint;
}

export interface CompactionParams {
  /** Autocompact above the threshold (seed §2.7); off: the blocking limit ends the query instead. */
  autoCompact: boolean;
  /** Drop the oldest rounds before summarising (feature-gated in Claude Code). */
  snip: boolean;
  /** Time-based microcompact after this long without a reply (workflow time); 0 = off. */
  microcompactGapMs: number;
  /** Autocompact failures in a row so far (the breaker is per conversation). */
  consecutiveFailures: number;
}

const DEFAULT_COMPACTION: CompactionParams = { autoCompact: true, snip: false, microcompactGapMs: 0, consecutiveFailures: 0 };

/** Everything the loop needs to pick a query up again in a new workflow run (the transcript travels with the session). */
export interface LoopCheckpoint {
  /** `messages` may be present in checkpoints written before the transcript had one owner; it is ignored. */
  state: State;
  currentModel: string;
  budgetTracker: BudgetTracker;
  queryOutputTokens: number;
}

/** The loop paused at an iteration boundary so the workflow can continue-as-new (see conversation.ts). */
export interface Suspended {
  reason: 'suspended';
  checkpoint: LoopCheckpoint;
}

/** seed §2.2: the core loop. Returns why it ended. */
export async function* queryLoop(params: QueryParams, deps: QueryDeps, session: LoopSession): AsyncGenerator<Message, Terminal | Suspended> {
  const { transcript, systemPrompt, userContext, fallbackModel, maxTurns, resume } = params;
  let currentModel = resume?.currentModel ?? params.model;
  const thresholds = thresholdsForModel(params.model, { contextWindowTokens: params.contextWindowTokens, modelMaxOutputTokens: params.modelMaxOutputTokens });
  const compaction = params.compaction ?? DEFAULT_COMPACTION;
  // seed §2.6: the budget tracker lives for the whole query, outside State.
  let budgetTracker = resume?.budgetTracker ?? createBudgetTracker();
  let queryOutputTokens = resume?.queryOutputTokens ?? 0;
  // The fallback model never sees the primary's thinking signatures (seed §2.8); checkpoints of
  // older runs carried a transcript that still had them.
  if (resume && currentModel !== params.model) transcript.stripSignatureBlocks();
  let state: State = resume
    ? withoutLegacyMessages(resume.state)
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
      };
  const system = (message: string, level: SystemMessage['level']): SystemMessage => systemMessage(deps.uuid(), message, level);
  let iterationsThisRun = 0;
  const continueWith = (next: State): void => {
    state = next;
    if (next.transition) session.onTransition?.(next.transition.type);
  };
  /** seed §2.7: one compaction; its messages are yielded (the session appends them). */
  async function* compact(trigger: CompactOutcome['trigger'], preTokens: number): AsyncGenerator<Message, CompactOutcome> {
    session.onCompacting?.(trigger);
    const outcome = yield* compactTranscript(
      transcript,
      { uuid: deps.uuid, now: deps.now, compactConversation: deps.compactConversation },
      { trigger, preTokens, contextWindow: thresholds.contextWindow },
    );
    const tracking: AutoCompactTrackingState = state.autoCompactTracking ?? { compacted: false, turnCounter: 0, consecutiveFailures: 0 };
    // Only a model that failed counts toward the breaker; "nothing to compact" and an abort do not.
    const failed = !outcome.compacted && !outcome.nothingToCompact && !deps.isAborted();
    const next: AutoCompactTrackingState = outcome.compacted
      ? { compacted: true, turnCounter: 0, consecutiveFailures: 0 }
      : { ...tracking, consecutiveFailures: tracking.consecutiveFailures + (failed ? 1 : 0) };
    state = { ...state, autoCompactTracking: next };
    session.onCompaction?.(outcome, next.consecutiveFailures);
    // A success shows as its compact_boundary in the feed; failures are said in words.
    if (failed) {
      const open = isBreakerOpen(next.consecutiveFailures);
      yield system(
        `${outcome.error ?? 'Compaction failed.'}${open ? ` Autocompact failed ${next.consecutiveFailures} times in a row; it is off for this conversation (compact manually).` : ''}`,
        'warning',
      );
    }
    return outcome;
  }

  while (true) {
    // ① destructure the iteration's state
    const { turnCount } = state;

    // A quiet point (nothing in flight): the workflow may ask to continue-as-new here, mid-query,
    // when its history has grown long. Never on a run's first iteration, so every run progresses.
    if (iterationsThisRun++ > 0 && session.shouldSuspend?.()) {
      return { reason: 'suspended', checkpoint: { state, currentModel, budgetTracker, queryOutputTokens } };
    }
    // Recovery paths (max_tokens, stop hooks, fallback, pause_turn) call the model again without
    // a reply or tool round in between: the budget is checked before each further request too.
    const limitBeforeRequest = state.transition ? session.checkLimits?.('assistant') : undefined;
    if (limitBeforeRequest) {
      if (limitBeforeRequest.error) yield system(limitBeforeRequest.error, 'warning');
      return limitBeforeRequest;
    }

    // ③ message window (seed §2.3/§2.7), cheapest first: the window after the last compact
    // boundary (the request's `from`); the per-tool result budget (in the tool activity); snip;
    // time-based microcompact; autocompact. Token counts walk back only to the last reply.
    let tokenCount = tokenCountWithEstimation(transcript.messages);
    let snipTokensFreed = 0;
    if (compaction.snip && tokenCount >= thresholds.warningThreshold) {
      const plan = planSnip(transcript.window(), tokenCount - thresholds.warningThreshold);
      if (plan.to > plan.from) {
        transcript.removeFromWindow(plan.from, plan.to);
        snipTokensFreed = plan.tokensFreed;
        yield system(`Snipped ${plan.to - plan.from} of the oldest messages (about ${plan.tokensFreed} tokens).`, 'info');
      }
    }
    if (compaction.microcompactGapMs > 0 && isMicrocompactDue(transcript.window(), deps.now(), compaction.microcompactGapMs)) {
      const result = microcompactMessages(transcript.window());
      if (result.cleared > 0) {
        transcript.rewriteWindow(() => result.messages);
        tokenCount = Math.max(0, tokenCount - result.tokensFreed);
        yield system(`Cleared ${result.cleared} old tool results after a long pause (about ${result.tokensFreed} tokens).`, 'info');
      }
    }
    let nothingToCompact = false;
    const consecutiveFailures = state.autoCompactTracking?.consecutiveFailures ?? 0;
    if (shouldAutoCompact({ tokenCount, thresholds, enabled: compaction.autoCompact, consecutiveFailures, snipTokensFreed })) {
      const outcome = yield* compact('auto', tokenCount);
      if (deps.isAborted()) {
        yield interruption(deps, INTERRUPT_MESSAGE);
        return { reason: 'aborted_streaming' };
      }
      if (outcome.compacted) tokenCount = tokenCountWithEstimation(transcript.messages);
      nothingToCompact = outcome.nothingToCompact === true;
    }
    session.onContextTokens?.(tokenCount);

    // Blocking limit: with autocompact off (or given up on, or with nothing to compact) a request
    // this large would be refused; say so instead of sending it.
    const blocking = !compaction.autoCompact || isBreakerOpen(state.autoCompactTracking?.consecutiveFailures ?? 0) || nothingToCompact;
    if (blocking && tokenCount >= thresholds.blockingLimit) {
      const error =
        `The conversation is too long for the model's context window (about ${tokenCount} tokens; ` +
        `the limit is ${thresholds.blockingLimit}).`;
      yield system(error, 'error');
      return { reason: 'blocking_limit', error };
    }

    // ④ call the model
    const executor = deps.newToolExecutor();
    const response = await deps.callModel(
      {
        model: currentModel,
        system: systemPrompt,
        userContext,
        transcript: transcript.ref(),
        maxTokens: fitMaxTokens(state.maxOutputTokensOverride ?? params.maxOutputTokens, thresholds.contextWindow, tokenCount),
      },
      executor,
    );
    if (response.type === 'overloaded' && fallbackModel && currentModel !== fallbackModel) {
      // seed §2.8 ①: overload outlasted the primary's retries — the rest of this query uses the
      // fallback model. Work started for the abandoned attempt is dropped, and thinking
      // signatures (bound to the model that made them) are stripped before another model sees them.
      const originalModel = currentModel;
      currentModel = fallbackModel;
      session.onModelChange?.(currentModel);
      await executor.discard();
      transcript.stripSignatureBlocks();
      yield system(`Switched to ${fallbackModel} due to high demand for ${originalModel}`, 'warning');
      continueWith({ ...state, transition: { type: 'fallback_retry' } });
      continue;
    }

    // ⑤ branch on how the stream ended
    if (response.type === 'aborted') {
      await executor.discard();
      yield interruption(deps, INTERRUPT_MESSAGE);
      return { reason: 'aborted_streaming' };
    }
    if (response.type === 'overloaded' || response.type === 'error') {
      await executor.discard();
      yield system(`API error: ${response.errorMessage}`, 'error');
      return { reason: 'model_error', error: response.errorMessage };
    }
    if (response.type === 'prompt_too_long') {
      // Withheld until recovery is known impossible (seed §2.3, §2.8): one reactive compaction,
      // then the same request again; a second one surfaces.
      await executor.discard();
      if (!state.hasAttemptedReactiveCompact) {
        const outcome = yield* compact('reactive', tokenCount);
        if (deps.isAborted()) {
          yield interruption(deps, INTERRUPT_MESSAGE);
          return { reason: 'aborted_streaming' };
        }
        if (outcome.compacted) {
          continueWith({ ...state, hasAttemptedReactiveCompact: true, transition: { type: 'reactive_compact_retry' } });
          continue;
        }
      }
      const error = state.hasAttemptedReactiveCompact
        ? `The conversation is still too long for the model after compacting it: ${response.errorMessage}`
        : response.errorMessage;
      yield system(`Prompt is too long: ${error}`, 'error');
      return { reason: 'prompt_too_long', error };
    }

    const assistant: AssistantMessage = { type: 'assistant', uuid: deps.uuid(), message: response.message, timestamp: deps.now() };
    queryOutputTokens += response.message.usage.output_tokens;
    const stopReason = response.message.stop_reason;

    if (stopReason === 'max_tokens' || stopReason === 'model_context_window_exceeded') {
      // Withheld max_output_tokens (seed §2.8 ②). First escalate the cap once and retry the same
      // request; then keep the truncated output and nudge the model to resume.
      await executor.discard();
      if (state.maxOutputTokensOverride === undefined && params.maxOutputTokens < ESCALATED_MAX_OUTPUT_TOKENS) {
        continueWith({
          ...state,
          maxOutputTokensOverride: ESCALATED_MAX_OUTPUT_TOKENS,
          transition: { type: 'max_output_tokens_escalate' },
        });
        continue;
      }
      if (state.maxOutputTokensRecoveryCount < MAX_OUTPUT_TOKENS_RECOVERY_LIMIT) {
        // The truncated reply stays in history; error results for its unfinished tool calls are
        // yielded too, so the session's transcript (which later queries send) stays valid.
        const kept = closeDanglingToolUses(assistant, deps);
        yield* kept;
        const nudge: UserMessage = {
          type: 'user',
          uuid: deps.uuid(),
          isMeta: true,
          message: { role: 'user', content: MAX_OUTPUT_TOKENS_RECOVERY_MESSAGE },
        };
        yield nudge;
        continueWith({
          ...state,
          maxOutputTokensRecoveryCount: state.maxOutputTokensRecoveryCount + 1,
          transition: { type: 'max_output_tokens_recovery' },
        });
        continue;
      }
      yield { ...assistant, apiError: 'max_output_tokens' };
      yield* yieldMissingToolResultBlocks([assistant], 'Output token limit reached', deps.uuid);
      const error =
        `The model's response hit the output token limit again after the limit was raised and ` +
        `${MAX_OUTPUT_TOKENS_RECOVERY_LIMIT} continuation attempts.`;
      yield system(error, 'error');
      return { reason: 'model_error', error };
    }

    yield assistant;
    const toolUseBlocks = toolUseBlocksOf(assistant);
    const limitAfterReply = session.checkLimits?.('assistant');
    if (limitAfterReply) {
      // The reply's tool calls do not run; each gets an error result so the history stays valid.
      await executor.discard();
      const error = limitAfterReply.error ?? 'Stopped before this tool call ran.';
      yield* yieldMissingToolResultBlocks([assistant], error, deps.uuid);
      yield system(error, 'warning');
      return limitAfterReply;
    }

    if (toolUseBlocks.length === 0) {
      await executor.discard();
      if (stopReason === 'pause_turn') {
        // The server paused a long turn; sending the content back lets it continue.
        continueWith({ ...state, transition: { type: 'pause_turn' } });
        continue;
      }
      if (stopReason === 'refusal') {
        yield system('The model declined to continue this request (stop_reason: refusal).', 'warning');
        return { reason: 'completed' };
      }
      // seed §2.9: stop hooks get a say before the loop ends
      const hooks = yield* handleStopHooks(deps, { assistant, stopHookActive: state.stopHookActive ?? false, blockCount: state.stopHookBlockCount });
      if (hooks.type === 'end') return hooks.terminal;
      if (hooks.type === 'blocked') {
        continueWith({
          ...state,
          stopHookActive: true,
          stopHookBlockCount: state.stopHookBlockCount + 1,
          transition: { type: 'stop_hook_retry' },
        });
        continue;
      }
      // seed §2.6: with a token budget, an early stop is nudged to keep going.
      if (params.tokenBudget) {
        const decision = checkTokenBudget(budgetTracker, params.agentId, params.tokenBudget, queryOutputTokens);
        budgetTracker = decision.tracker;
        if (decision.action === 'continue') {
          const nudge: UserMessage = {
            type: 'user',
            uuid: deps.uuid(),
            isMeta: true,
            message: { role: 'user', content: decision.nudgeMessage },
          };
          yield nudge;
          continueWith({
            ...state,
            stopHookActive: undefined,
            stopHookBlockCount: 0,
            transition: { type: 'token_budget_continuation' },
          });
          continue;
        }
        if (decision.completionEvent) {
          const { pct, turnTokens, budget, continuationCount, diminishingReturns } = decision.completionEvent;
          yield system(
            `Token budget: ${turnTokens} of ${budget} output tokens (${pct}%) after ${continuationCount} continuation(s)` +
              (diminishingReturns ? '; stopped on diminishing returns.' : '.'),
            'info',
          );
        }
      }
      return { reason: 'completed' };
    }

    // ⑥ tools
    for await (const update of executor.getRemainingResults(toolUseBlocks, assistant)) yield update;
    if (deps.isAborted()) {
      yield interruption(deps, INTERRUPT_MESSAGE_FOR_TOOL_USE);
      return { reason: 'aborted_tools' };
    }
    const limitAfterTools = session.checkLimits?.('tool_results');
    if (limitAfterTools) {
      if (limitAfterTools.error) yield system(limitAfterTools.error, 'warning');
      return limitAfterTools;
    }
    if (maxTurns && turnCount + 1 > maxTurns) {
      yield system(`Reached the maximum number of turns (${maxTurns}).`, 'warning');
      return { reason: 'max_turns' };
    }

    // ⑦ queued commands: input that arrived during the query is seen on the next turn
    const queued = session.takeQueuedInputs();
    yield* queued;

    // ⑧ next state (the session appended the assistant message, results and queued inputs as they were yielded)
    continueWith({
      ...state,
      turnCount: turnCount + 1,
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

/** Checkpoints written before the transcript had one owner carried the loop's copy of it. */
function withoutLegacyMessages(state: State & { messages?: unknown }): State {
  const { messages: _ignored, ...rest } = state;
  return rest;
}

function interruption(deps: Pick<QueryDeps, 'uuid'>, text: string): UserMessage {
  return interruptionMessage(deps.uuid(), text);
}

/**
 * A truncated reply may end inside a tool_use block the model never finished; those calls get
 * error results so the history stays valid for the API.
 */
function closeDanglingToolUses(assistant: AssistantMessage, deps: Pick<QueryDeps, 'uuid'>): TranscriptMessage[] {
  const toolUses = toolUseBlocksOf(assistant);
  if (toolUses.length === 0) return [assistant];
  const results: UserMessage = {
    type: 'user',
    uuid: deps.uuid(),
    sourceAssistantUuid: assistant.uuid,
    message: {
      role: 'user',
      content: toolUses.map((block) => ({
        type: 'tool_result' as const,
        tool_use_id: block.id,
        content: 'Output token limit reached before this tool call could run.',
        is_error: true,
      })),
    },
  };
  return [assistant, results];
}
