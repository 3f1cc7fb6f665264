/**
 * The tool-result budget (seed §2.7, layer 1 — applyToolResultBudget). Each tool's result is
 * capped at its `maxResultSizeChars` (output past it is persisted by the tool activity and
 * replaced by a preview and the path); the results of one message also share an aggregate
 * budget, so ten parallel Reads cannot bring 1 MB into one turn. Pure; in `common/` because the
 * local phase of a model call applies it to the reads it prefetches (common/tool-prefetch.ts).
 */

/** Characters all tool results of one assistant message may bring back together. */
export const MAX_TOOL_RESULTS_PER_MESSAGE_CHARS = 200_000;
/** No share drops below this: a result that small is always worth having whole. */
export const MIN_TOOL_RESULT_BUDGET_CHARS = 2_000;

/**
 * The budget of one call among `siblings` calls of the same message: its tool's own cap, or its
 * even share of the message's aggregate budget when that is smaller.
 */
export function toolResultBudget(toolMaxChars: number, siblings: number): number {
  const share = Math.floor(MAX_TOOL_RESULTS_PER_MESSAGE_CHARS / Math.max(1, siblings));
  return Math.min(toolMaxChars, Math.max(MIN_TOOL_RESULT_BUDGET_CHARS, share));
}
