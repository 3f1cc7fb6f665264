/**
 * The loop's state and what crosses its boundary (seed §2.2): the `State` it carries from one
 * iteration to the next, the parameters of one query, the events it yields to the session besides
 * messages, and the checkpoint a suspended query resumes from.
 */
import type { SystemPromptBlock } from '../common/activity-types';
import type { Message } from '../common/messages';
import type { TransitionType } from '../common/result';
import type { AutoCompactTrackingState } from './auto-compact';
import type { CompactOutcome } from './compact';
import type { BudgetTracker } from './token-budget';
import type { Transcript } from './transcript';

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
  return output.type === 'model' || output.type === 'transition' || output.type === 'compacting' || output.type === 'compaction' || output.type === 'context_tokens';
}
