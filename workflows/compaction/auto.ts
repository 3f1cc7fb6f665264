/**
 * Context-window accounting and the autocompact decision (seed §2.6, §2.7,
 * src/services/compact/autoCompact.ts). All thresholds are measured against the effective window:
 * the model's context window minus the room reserved for its output, min(the model's max output,
 * 20k) — the model's, not the cap a conversation configures. Pure.
 */
import type { TranscriptMessage } from '../../common/messages';
import { type ModelLimits, modelLimits } from '../../common/models';

export const AUTOCOMPACT_BUFFER_TOKENS = 13_000;
export const WARNING_THRESHOLD_BUFFER_TOKENS = 20_000;
export const ERROR_THRESHOLD_BUFFER_TOKENS = 20_000;
export const MANUAL_COMPACT_BUFFER_TOKENS = 3_000;
/** Output reserved when computing the effective window: min(model max output, this). */
export const MAX_OUTPUT_RESERVATION_TOKENS = 20_000;
/**
 * seed §2.7 circuit breaker (autoCompact.ts:67-70): after this many consecutive failures,
 * autocompact stops trying for the conversation — without it, sessions retried thousands of times.
 */
export const MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES = 3;

export interface Thresholds {
  contextWindow: number;
  effectiveContextWindow: number;
  autoCompactThreshold: number;
  warningThreshold: number;
  errorThreshold: number;
  /** Hard limit: a request at or above it is not sent (only when autocompact is off). */
  blockingLimit: number;
}

/** Context window of a model: from the model table (1M for `[1m]` variants), unless configured. */
export function contextWindowForModel(model: string, configured?: number): number {
  return modelLimits(model, { contextWindowTokens: configured }).contextWindow;
}

/** seed §2.6: thresholds of a model, given its limits. */
export function calculateThresholds(contextWindow: number, modelMaxOutputTokens: number): Thresholds {
  const effectiveContextWindow = contextWindow - Math.min(modelMaxOutputTokens, MAX_OUTPUT_RESERVATION_TOKENS);
  return {
    contextWindow,
    effectiveContextWindow,
    autoCompactThreshold: effectiveContextWindow - AUTOCOMPACT_BUFFER_TOKENS,
    warningThreshold: effectiveContextWindow - WARNING_THRESHOLD_BUFFER_TOKENS,
    errorThreshold: effectiveContextWindow - ERROR_THRESHOLD_BUFFER_TOKENS,
    blockingLimit: effectiveContextWindow - MANUAL_COMPACT_BUFFER_TOKENS,
  };
}

/** Thresholds for a model and its per-conversation overrides. */
export function thresholdsForModel(model: string, overrides: { contextWindowTokens?: number; modelMaxOutputTokens?: number } = {}): Thresholds {
  const limits: ModelLimits = modelLimits(model, overrides);
  return calculateThresholds(limits.contextWindow, limits.maxOutputTokens);
}

/** Rough token estimate of text: four characters a token. */
export function roughTokenCount(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The context size the next request will have (seed §2.6): the last model call's reported input
 * (with cache reads and writes) and its output, plus an estimate for messages added since. Only
 * the window after the last compact boundary counts; right after a compaction, all of it is an
 * estimate.
 */
export function tokenCountWithEstimation(messages: readonly TranscriptMessage[]): number {
  let index = messages.length - 1;
  while (index >= 0 && messages[index].type !== 'assistant' && messages[index].type !== 'compact_boundary') index--;
  let base = 0;
  const last = messages[index];
  if (last?.type === 'assistant') {
    const usage = last.message.usage;
    base = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens + usage.output_tokens;
  }
  let estimated = 0;
  for (let i = index + 1; i < messages.length; i++) {
    const message = messages[i];
    if (message.type !== 'compact_boundary') estimated += roughTokenCount(JSON.stringify(message.message.content));
  }
  return base + estimated;
}

/** seed §2.7 AutoCompactTrackingState: compactions of this query and the failure streak. */
export interface AutoCompactTrackingState {
  compacted: boolean;
  /** Turns since the last compaction. */
  turnCounter: number;
  consecutiveFailures: number;
}

/** Whether the breaker has opened: no more autocompact attempts for this conversation. */
export function isBreakerOpen(consecutiveFailures: number): boolean {
  return consecutiveFailures >= MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES;
}

/**
 * seed §2.7 shouldAutoCompact: past the threshold, with autocompact on and the breaker closed.
 * Tokens already freed by snip this iteration count.
 */
export function shouldAutoCompact(options: {
  tokenCount: number;
  thresholds: Thresholds;
  enabled: boolean;
  consecutiveFailures: number;
  snipTokensFreed?: number;
}): boolean {
  if (!options.enabled || isBreakerOpen(options.consecutiveFailures)) return false;
  return options.tokenCount - (options.snipTokensFreed ?? 0) >= options.thresholds.autoCompactThreshold;
}

/** The highest threshold a token count has crossed, for status and warnings. */
export function contextLevel(tokens: number, thresholds: Thresholds, autoCompactEnabled: boolean): 'ok' | 'warning' | 'error' | 'autocompact' | 'blocking' {
  if (!autoCompactEnabled && tokens >= thresholds.blockingLimit) return 'blocking';
  if (autoCompactEnabled && tokens >= thresholds.autoCompactThreshold) return 'autocompact';
  if (tokens >= thresholds.errorThreshold) return 'error';
  if (tokens >= thresholds.warningThreshold) return 'warning';
  return 'ok';
}

/** The smallest output cap worth asking for when the window is nearly full. */
export const MIN_FITTED_MAX_TOKENS = 1_024;

/**
 * The API refuses a request whose input plus `max_tokens` exceeds the context window ("input
 * length and `max_tokens` exceed context limit"): the cap asked for, lowered to what still fits
 * after the estimated input (with a margin for the estimate's error), never below a floor.
 */
export function fitMaxTokens(requested: number, contextWindow: number, estimatedInputTokens: number): number {
  const margin = 1_000 + Math.ceil(estimatedInputTokens * 0.02);
  const room = contextWindow - estimatedInputTokens - margin;
  return Math.max(MIN_FITTED_MAX_TOKENS, Math.min(requested, room));
}
