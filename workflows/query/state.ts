/**
 * The loop's state and what crosses its boundary (seed §2.2): the `State` it carries from one
 * iteration to the next, the parameters of one query, the events it yields to the session besides
 * messages, the checkpoint a suspended query resumes from; the seams it calls through (`QueryDeps`,
 * `LoopSession`); and one query's loop context (`LoopRun`) with the ways a step ends.
 */
import type { SystemPromptBlock } from '../../common/activity-types';
import type { AssistantApiMessage, AssistantMessage, Message, SystemMessage, ToolUseBlock, UserMessage } from '../../common/messages';
import type { Terminal, TransitionType } from '../../common/result';
import type { AutoCompactTrackingState, Thresholds } from '../compaction/auto';
import type { CompactOutcome, CompactRequestParams, CompactResponse } from '../compaction/summary';
import { systemMessage } from '../messages';
import type { StopHookDecision } from './handle-stop-hooks';
import type { BudgetTracker } from './token-budget';
import type { Transcript, TranscriptRef } from '../transcript';

export interface Continue {
  type: TransitionType;
}

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

/** The State a query starts from (seed §2.2): nothing recovered, turn 1; the autocompact breaker's streak carried from the queries before. */
export function initialState(consecutiveCompactFailures: number): State {
  return {
    autoCompactTracking: { compacted: false, turnCounter: 0, consecutiveFailures: consecutiveCompactFailures },
    maxOutputTokensRecoveryCount: 0,
    hasAttemptedReactiveCompact: false,
    maxOutputTokensOverride: undefined,
    pendingToolUseSummary: undefined,
    stopHookActive: undefined,
    turnCount: 1,
    transition: undefined,
    stopHookBlockCount: 0,
  };
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

/**
 * What the loop tells the session besides messages. The session consumes them with the messages,
 * on the one channel the loop yields on (seed §2.10: QueryEngine consumes what query() yields):
 * the loop owns the query's model, turn count, transition and compaction streak, and reports them.
 */
export type LoopEvent =
  /** The model the query uses: at its start, and after a switch to the fallback model. */
  | { type: 'model'; model: string }
  /** The loop continues: why, and the turn it is on. */
  | { type: 'transition'; transition: TransitionType; turnCount: number }
  | { type: 'compacting'; trigger: CompactOutcome['trigger'] }
  /** A compaction ended; the failure streak after it (the session keeps it across queries). */
  | { type: 'compaction'; outcome: CompactOutcome; consecutiveFailures: number }
  /** The context size the loop measured before a request. */
  | { type: 'context_tokens'; tokens: number };

/** Everything the loop yields. */
export type LoopOutput = Message | LoopEvent;

/** Whether a yielded value is a loop event rather than a message. */
export function isLoopEvent(output: LoopOutput): output is LoopEvent {
  return (
    output.type === 'model' || output.type === 'transition' || output.type === 'compacting' || output.type === 'compaction' || output.type === 'context_tokens'
  );
}

// ---- the seams: what the loop calls (effects) and asks (the session) ----

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
  /** Issue 33: PostToolBatch hooks over one reply's calls and their results (absent: none configured here). */
  runPostToolBatchHooks?(calls: ReadonlyArray<{ block: ToolUseBlock; response: string }>): Promise<{ context?: string; stop?: string }>;
  /** The compaction model call (seed §2.7 compactConversation): an activity. */
  compactConversation(request: CompactRequestParams): Promise<CompactResponse>;
}

/** What the loop asks of the session layer (implemented by `SessionQueries`, session/queries.ts); what it tells it, it yields (`LoopEvent`). */
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

// ---- one query's loop context and how a step ends (loop.ts, recovery.ts) ----

/** One query's loop: its fixed context and what it carries from iteration to iteration. */
export interface LoopRun {
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
export type Ended = { type: 'end'; terminal: Terminal };
export type Continued = { type: 'continue'; state: State };
export type Next<T> = { type: 'next'; value: T };

export const end = (terminal: Terminal): Ended => ({ type: 'end', terminal });

/** A system message of the loop (its uuid from the deps). */
export function loopSystemMessage(loop: LoopRun, message: string, level: SystemMessage['level']): SystemMessage {
  return systemMessage(loop.deps.uuid(), message, level);
}
