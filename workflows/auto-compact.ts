/**
 * Context-window thresholds (seed §2.6, src/services/compact/autoCompact.ts). All are measured
 * against the effective window: the model's context window minus the room reserved for output.
 * Pure.
 */
import type { TranscriptMessage } from '../common/messages';

export const AUTOCOMPACT_BUFFER_TOKENS = 13_000;
export const WARNING_THRESHOLD_BUFFER_TOKENS = 20_000;
export const ERROR_THRESHOLD_BUFFER_TOKENS = 20_000;
export const MANUAL_COMPACT_BUFFER_TOKENS = 3_000;
/** Output reserved when computing the effective window: min(model max output, this). */
export const MAX_OUTPUT_RESERVATION_TOKENS = 20_000;
export const DEFAULT_CONTEXT_WINDOW_TOKENS = 200_000;

export interface Thresholds {
  contextWindow: number;
  effectiveContextWindow: number;
  autoCompactThreshold: number;
  warningThreshold: number;
  errorThreshold: number;
  /** Hard limit: a request at or above it is not sent. */
  blockingLimit: number;
}

/** Context window of a model: 1M for the `[1m]` variants, 200k otherwise, unless configured. */
export function contextWindowForModel(model: string, configured?: number): number {
  if (configured) return configured;
  return /\[1m\]$/i.test(model) ? 1_000_000 : DEFAULT_CONTEXT_WINDOW_TOKENS;
}

export function calculateThresholds(contextWindow: number, maxOutputTokens: number): Thresholds {
  const effectiveContextWindow = contextWindow - Math.min(maxOutputTokens, MAX_OUTPUT_RESERVATION_TOKENS);
  return {
    contextWindow,
    effectiveContextWindow,
    autoCompactThreshold: effectiveContextWindow - AUTOCOMPACT_BUFFER_TOKENS,
    warningThreshold: effectiveContextWindow - WARNING_THRESHOLD_BUFFER_TOKENS,
    errorThreshold: effectiveContextWindow - ERROR_THRESHOLD_BUFFER_TOKENS,
    blockingLimit: effectiveContextWindow - MANUAL_COMPACT_BUFFER_TOKENS,
  };
}

/** Rough token estimate of text: four characters a token. */
export function roughTokenCount(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The context size the next request will have: the last model call's reported usage (exact for
 * everything up to and including its answer) plus an estimate for messages added since.
 */
export function tokenCountWithEstimation(messages: readonly TranscriptMessage[]): number {
  let index = messages.length - 1;
  while (index >= 0 && messages[index].type !== 'assistant') index--;
  let base = 0;
  if (index >= 0) {
    const usage = (messages[index] as Extract<TranscriptMessage, { type: 'assistant' }>).message.usage;
    base = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens + usage.output_tokens;
  }
  const after = messages.slice(index + 1);
  return base + after.reduce((total, message) => total + roughTokenCount(JSON.stringify(message.message.content)), 0);
}
