/**
 * What each model can hold (seed §2.6): its context window and its largest output. The effective
 * window — and every compaction threshold — is measured from these, not from the output cap a
 * conversation configures. Pure.
 */

export interface ModelLimits {
  /** Input + output tokens the model accepts in one request. */
  contextWindow: number;
  /** The most output tokens one response can have. */
  maxOutputTokens: number;
}

/** Context window of the `[1m]` variants (Claude Code's naming for the 1M-token beta). */
export const ONE_MILLION_CONTEXT_WINDOW = 1_000_000;
export const DEFAULT_MODEL_LIMITS: ModelLimits = { contextWindow: 200_000, maxOutputTokens: 64_000 };

/** By model family, first match wins; unknown models get DEFAULT_MODEL_LIMITS. */
const MODEL_LIMITS: Array<{ match: RegExp; limits: ModelLimits }> = [
  { match: /claude-3-5-haiku|claude-3-haiku/, limits: { contextWindow: 200_000, maxOutputTokens: 8_192 } },
  { match: /claude-3-5-sonnet/, limits: { contextWindow: 200_000, maxOutputTokens: 8_192 } },
  { match: /claude-3-7-sonnet/, limits: { contextWindow: 200_000, maxOutputTokens: 64_000 } },
  { match: /opus-4-[01]|opus-4-2025/, limits: { contextWindow: 200_000, maxOutputTokens: 32_000 } },
  { match: /opus|sonnet|haiku|fable|mythos/, limits: { contextWindow: 200_000, maxOutputTokens: 64_000 } },
];

/** Limits of `model`; `overrides` (per conversation) win over the table. */
export function modelLimits(model: string, overrides: { contextWindowTokens?: number; modelMaxOutputTokens?: number } = {}): ModelLimits {
  const known = MODEL_LIMITS.find((entry) => entry.match.test(model))?.limits ?? DEFAULT_MODEL_LIMITS;
  const contextWindow = overrides.contextWindowTokens ?? (/\[1m\]$/i.test(model) ? ONE_MILLION_CONTEXT_WINDOW : known.contextWindow);
  return { contextWindow, maxOutputTokens: overrides.modelMaxOutputTokens ?? known.maxOutputTokens };
}

/** Claude Code's model aliases, resolved to the newest model of the family this build knows. */
export const MODEL_ALIASES: Readonly<Record<string, string>> = {
  sonnet: 'claude-sonnet-5-5',
  opus: 'claude-opus-5-5',
  haiku: 'claude-haiku-5-5',
};

/**
 * `/model <name>` (and `--model`): the full model id for `name`, or why it is not one. A model
 * id is `claude-…` of a family the limits table knows (an alias such as `sonnet` resolves).
 */
export function resolveModelName(name: string): { model: string } | { problem: string } {
  const trimmed = name.trim();
  const alias = MODEL_ALIASES[trimmed.toLowerCase()];
  if (alias) return { model: alias };
  if (!/^claude-[a-z0-9][a-z0-9.-]*(\[1m\])?$/i.test(trimmed) || !MODEL_LIMITS.some((entry) => entry.match.test(trimmed))) {
    return {
      problem: `"${trimmed}" is not a model this build knows. Use a Claude model id (e.g. claude-sonnet-5-5, claude-opus-5-5, claude-haiku-5-5) or an alias: ${Object.keys(MODEL_ALIASES).join(', ')}.`,
    };
  }
  return { model: trimmed };
}
