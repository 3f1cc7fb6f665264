/**
 * `--max-budget-usd` (Claude Code's `maxBudgetUsd`): the query stops once the conversation's
 * cost reaches the budget. Claude Code checks after every message the loop yields; here the loop
 * asks after each model reply and after each round of tool results (the only points where the
 * cost changes: model calls, compactions and subagents). Pure.
 */

/** The error when `totalCostUsd` has reached `maxBudgetUsd`; undefined while under it (or with no budget). */
export function checkBudget(totalCostUsd: number, maxBudgetUsd: number | undefined): string | undefined {
  if (maxBudgetUsd === undefined || totalCostUsd < maxBudgetUsd) return undefined;
  return `Reached the maximum budget of $${maxBudgetUsd} (this conversation has cost $${formatUsd(totalCostUsd)}).`;
}

/** Dollars with enough digits to tell small costs apart ($0.0032, $1.25). */
export function formatUsd(amount: number): string {
  if (amount === 0) return '0';
  if (amount >= 1) return amount.toFixed(2);
  return amount.toPrecision(2).replace(/0+$/, '').replace(/\.$/, '');
}
