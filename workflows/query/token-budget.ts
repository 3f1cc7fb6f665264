/**
 * Token budget continuation (seed §2.6, src/query/tokenBudget.ts). When the user asks for a
 * token budget ("+500k", "use 2M tokens"), a model that stops early is nudged to keep working
 * until 90% of the budget is used — unless it shows diminishing returns (three continuations
 * and then two checks in a row that each added under 500 tokens). Subagents never continue.
 * Pure: the tracker is a value, each check returns the next one.
 */

/** Stop once output reaches this share of the budget: models cannot hit a length exactly. */
export const COMPLETION_THRESHOLD = 0.9;
/** A continuation that adds fewer output tokens than this is "diminishing". */
export const DIMINISHING_THRESHOLD = 500;

export interface BudgetTracker {
  continuationCount: number;
  lastDeltaTokens: number;
  lastGlobalTurnTokens: number;
}

export function createBudgetTracker(): BudgetTracker {
  return { continuationCount: 0, lastDeltaTokens: 0, lastGlobalTurnTokens: 0 };
}

export interface BudgetCompletion {
  continuationCount: number;
  pct: number;
  turnTokens: number;
  budget: number;
  diminishingReturns: boolean;
}

export type TokenBudgetDecision =
  | { action: 'continue'; nudgeMessage: string; tracker: BudgetTracker; pct: number; turnTokens: number; budget: number }
  | { action: 'stop'; tracker: BudgetTracker; completionEvent: BudgetCompletion | null };

/**
 * seed §2.6 checkTokenBudget. `globalTurnTokens` is the output produced in this query so far;
 * `agentId` is set for subagents, which never self-continue (that could run away unsupervised).
 */
export function checkTokenBudget(
  tracker: BudgetTracker,
  agentId: string | undefined,
  budget: number | null | undefined,
  globalTurnTokens: number,
): TokenBudgetDecision {
  if (agentId || budget === null || budget === undefined || budget <= 0) {
    return { action: 'stop', tracker, completionEvent: null };
  }
  const turnTokens = globalTurnTokens;
  const pct = Math.round((turnTokens / budget) * 100);
  const deltaSinceLastCheck = globalTurnTokens - tracker.lastGlobalTurnTokens;
  // Two low-yield checks in a row, not one: a single short answer is not proof of exhaustion.
  const isDiminishing = tracker.continuationCount >= 3 && deltaSinceLastCheck < DIMINISHING_THRESHOLD && tracker.lastDeltaTokens < DIMINISHING_THRESHOLD;
  if (!isDiminishing && turnTokens < budget * COMPLETION_THRESHOLD) {
    const next: BudgetTracker = {
      continuationCount: tracker.continuationCount + 1,
      lastDeltaTokens: deltaSinceLastCheck,
      lastGlobalTurnTokens: globalTurnTokens,
    };
    return { action: 'continue', nudgeMessage: budgetContinuationMessage(pct, turnTokens, budget), tracker: next, pct, turnTokens, budget };
  }
  if (isDiminishing || tracker.continuationCount > 0) {
    return {
      action: 'stop',
      tracker,
      completionEvent: { continuationCount: tracker.continuationCount, pct, turnTokens, budget, diminishingReturns: isDiminishing },
    };
  }
  return { action: 'stop', tracker, completionEvent: null };
}

export function budgetContinuationMessage(pct: number, turnTokens: number, budget: number): string {
  return (
    `Stopped at ${pct}% of token target (${turnTokens.toLocaleString('en-US')} / ${budget.toLocaleString('en-US')}). ` + 'Keep working — do not summarize.'
  );
}

const SHORTHAND = /(?:^|\s)\+(\d+(?:\.\d+)?)\s*([km])\b/i;
const VERBOSE = /\b(?:use|spend)\s+(\d+(?:\.\d+)?)\s*([km])?\s*tokens\b/i;

/** The budget a prompt asks for ("+500k", "use 2M tokens"), or null. */
export function parseTokenBudget(prompt: string): number | null {
  const match = SHORTHAND.exec(prompt) ?? VERBOSE.exec(prompt);
  if (!match) return null;
  const value = Number(match[1]);
  const unit = (match[2] ?? '').toLowerCase();
  const multiplier = unit === 'm' ? 1_000_000 : unit === 'k' ? 1_000 : 1;
  const budget = Math.round(value * multiplier);
  return budget > 0 ? budget : null;
}
