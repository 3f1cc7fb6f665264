/**
 * `--max-budget-usd` (Claude Code's `maxBudgetUsd`): the query stops once the conversation's
 * cost reaches the budget. Claude Code checks after every message the loop yields; here the loop
 * asks after each model reply and after each round of tool results (the only points where the
 * cost changes: model calls, compactions and subagents). Pure.
 */
import { formatUsd } from './money';

/** The error when `totalCostUsd` has reached `maxBudgetUsd`; undefined while under it (or with no budget). */
export function checkBudget(totalCostUsd: number, maxBudgetUsd: number | undefined): string | undefined {
  if (maxBudgetUsd === undefined || totalCostUsd < maxBudgetUsd) return undefined;
  return `Reached the maximum budget of $${maxBudgetUsd} (this conversation has cost ${formatUsd(totalCostUsd, 'significant')}).`;
}
