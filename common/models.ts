/**
 * The models this build knows (seed §2.6): ids the API serves, Claude Code's aliases, each model's
 * limits and capabilities. The worker asks the Models API (`GET /v1/models/{id}`,
 * activities/model-resolver.ts) and uses this table only when the API cannot be asked; the
 * workflow sizes its context window from this table and the conversation's config (the CLI
 * writes what the Models API answered for a model the table does not know). Pure.
 */

export interface ModelLimits {
  /** Input + output tokens the model accepts in one request (the Models API's `max_input_tokens`). */
  contextWindow: number;
  /** The most output tokens one response can have (the Models API's `max_tokens`). */
  maxOutputTokens: number;
}

/** Thinking modes, effort levels and context-management edits a model accepts (the Models API's `capabilities`). */
export interface ModelCapabilities {
  /** `thinking: {type: "adaptive"}`. */
  adaptiveThinking: boolean;
  /** `thinking: {type: "enabled", budget_tokens}`. */
  enabledThinking: boolean;
  /** `thinking: {type: "disabled"}` (false: the model always decides for itself). */
  disabledThinking: boolean;
  /** `output_config.effort` levels accepted (empty: no effort parameter). */
  effort: readonly EffortLevel[];
  /** `context_management.edits[{type: "clear_thinking_20251015"}]`. */
  clearThinking: boolean;
}

export const EFFORT_LEVELS = ['low', 'medium', 'high', 'max'] as const;
export type EffortLevel = (typeof EFFORT_LEVELS)[number];

/** A model as resolved for a request: the id sent on the wire, its limits and capabilities. */
export interface ModelInfo extends ModelLimits {
  /** The id the API serves (no `[1m]` suffix: that is Claude Code's naming, not the API's). */
  id: string;
  capabilities: ModelCapabilities;
  /** Where the answer came from: the Models API, or this table because the API could not be asked. */
  source: 'api' | 'table';
}

/** Context window of the `[1m]` variants (Claude Code's naming for the 1M-token window). */
export const ONE_MILLION_CONTEXT_WINDOW = 1_000_000;
/** Limits of a `claude-…` id of a known family that this table does not list (as before the table had ids). */
export const DEFAULT_MODEL_LIMITS: ModelLimits = { contextWindow: 200_000, maxOutputTokens: 64_000 };

const NO_THINKING: ModelCapabilities = { adaptiveThinking: false, enabledThinking: false, disabledThinking: true, effort: [], clearThinking: false };

/**
 * The current models (Claude Code 2.1.197's catalog, docs/design/claude-code-observed.md): the
 * fallback when the Models API cannot be asked. Keep in step with testing/model-catalog.ts.
 */
export const KNOWN_MODELS: readonly Omit<ModelInfo, 'source'>[] = [
  {
    id: 'claude-opus-4-8',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
    capabilities: { adaptiveThinking: true, enabledThinking: false, disabledThinking: true, effort: EFFORT_LEVELS, clearThinking: true },
  },
  {
    id: 'claude-sonnet-5',
    contextWindow: 1_000_000,
    maxOutputTokens: 64_000,
    capabilities: { adaptiveThinking: true, enabledThinking: false, disabledThinking: true, effort: EFFORT_LEVELS, clearThinking: true },
  },
  {
    id: 'claude-fable-5',
    contextWindow: 1_000_000,
    maxOutputTokens: 128_000,
    capabilities: { adaptiveThinking: true, enabledThinking: false, disabledThinking: false, effort: EFFORT_LEVELS, clearThinking: true },
  },
  {
    id: 'claude-sonnet-4-6',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    capabilities: { adaptiveThinking: true, enabledThinking: true, disabledThinking: true, effort: EFFORT_LEVELS, clearThinking: true },
  },
  {
    id: 'claude-haiku-4-5-20251001',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    capabilities: { adaptiveThinking: false, enabledThinking: true, disabledThinking: true, effort: [], clearThinking: true },
  },
];

/** Ids the API also answers to (its own aliases of dated ids). */
const API_ALIASES: Readonly<Record<string, string>> = { 'claude-haiku-4-5': 'claude-haiku-4-5-20251001' };

/** Older families by pattern, first match wins: limits only (ids that are not in KNOWN_MODELS). */
const FAMILY_LIMITS: Array<{ match: RegExp; limits: ModelLimits }> = [
  { match: /claude-3-5-haiku|claude-3-haiku/, limits: { contextWindow: 200_000, maxOutputTokens: 8_192 } },
  { match: /claude-3-5-sonnet/, limits: { contextWindow: 200_000, maxOutputTokens: 8_192 } },
  { match: /claude-3-7-sonnet/, limits: { contextWindow: 200_000, maxOutputTokens: 64_000 } },
  { match: /opus-4-[01]|opus-4-2025/, limits: { contextWindow: 200_000, maxOutputTokens: 32_000 } },
  { match: /opus|sonnet|haiku|fable|mythos/, limits: DEFAULT_MODEL_LIMITS },
];

/** Claude Code's model aliases, resolved to the current model of each family. */
export const MODEL_ALIASES: Readonly<Record<string, string>> = {
  opus: 'claude-opus-4-8',
  sonnet: 'claude-sonnet-5',
  haiku: 'claude-haiku-4-5',
  fable: 'claude-fable-5',
};

/**
 * Default model, as Claude Code's: its strongest model, with a native 1M-token window so long
 * tasks compact rarely; prompt caching keeps a long task's input cost near a Sonnet's.
 */
export const DEFAULT_MODEL = 'claude-opus-4-8';
/** Claude Code's fallback model when the primary stays overloaded (seed §2.8). */
export const DEFAULT_FALLBACK_MODEL = 'claude-sonnet-4-6';

const ONE_MILLION_SUFFIX = /\[1m\]$/i;

/** The id sent to the API for `model`: the `[1m]` suffix dropped, the API's own aliases kept as given. */
export function wireModelId(model: string): string {
  return model.trim().replace(ONE_MILLION_SUFFIX, '');
}

/** Whether `model` asks for the 1M-token window (Claude Code's `[1m]` suffix). */
export function wantsOneMillionWindow(model: string): boolean {
  return ONE_MILLION_SUFFIX.test(model.trim());
}

/**
 * The id a request names for `model`: Claude Code's aliases resolved (an agent file or a custom
 * command may say `haiku`), the `[1m]` suffix dropped.
 */
export function requestModelId(model: string): string {
  const id = wireModelId(model);
  return MODEL_ALIASES[id.toLowerCase()] ?? id;
}

/** The table's entry for `model` (aliases and `[1m]` resolved), or undefined. */
export function knownModel(model: string): Omit<ModelInfo, 'source'> | undefined {
  const id = requestModelId(model);
  const canonical = API_ALIASES[id] ?? id;
  return KNOWN_MODELS.find((entry) => entry.id === canonical);
}

/** The table's answer for `model`: its entry, or an older family's limits without thinking; undefined when the id is no Claude model. */
export function modelInfoFromTable(model: string): ModelInfo | undefined {
  const known = knownModel(model);
  if (known) return { ...known, source: 'table' };
  const family = FAMILY_LIMITS.find((entry) => entry.match.test(model))?.limits;
  if (!family) return undefined;
  return { id: requestModelId(model), ...family, capabilities: NO_THINKING, source: 'table' };
}

/**
 * Limits of `model` (native window; 1M for a `[1m]` name); `overrides` (per conversation, e.g.
 * what the Models API answered when the CLI started it) win over the table.
 */
export function modelLimits(model: string, overrides: { contextWindowTokens?: number; modelMaxOutputTokens?: number } = {}): ModelLimits {
  const known = modelInfoFromTable(model) ?? DEFAULT_MODEL_LIMITS;
  const window = wantsOneMillionWindow(model) ? Math.max(known.contextWindow, ONE_MILLION_CONTEXT_WINDOW) : known.contextWindow;
  return { contextWindow: overrides.contextWindowTokens ?? window, maxOutputTokens: overrides.modelMaxOutputTokens ?? known.maxOutputTokens };
}

/** The id thinking blocks of `model` are signed for (its canonical id): a block goes back only to that model. */
export function thinkingOwner(model: string): string {
  return knownModel(model)?.id ?? requestModelId(model);
}

/**
 * `/model <name>` and `--model`: the full model id for `name`, or why it is not one. Aliases
 * resolve (`sonnet[1m]` too); a `claude-…` id passes when this table or a known family has it —
 * the worker's Models API answer is the final word on whether it is served.
 */
export function resolveModelName(name: string): { model: string } | { problem: string } {
  const trimmed = name.trim();
  const suffix = wantsOneMillionWindow(trimmed) ? '[1m]' : '';
  const alias = MODEL_ALIASES[wireModelId(trimmed).toLowerCase()];
  if (alias) return { model: `${alias}${suffix}` };
  if (!/^claude-[a-z0-9][a-z0-9.-]*(\[1m\])?$/i.test(trimmed) || !modelInfoFromTable(trimmed)) {
    return { problem: unknownModelText(trimmed) };
  }
  return { model: trimmed };
}

/** What to tell someone who named a model that is not served. */
export function unknownModelText(model: string): string {
  return `"${model}" is not a model the API serves. Use a model id (${KNOWN_MODELS.map((entry) => entry.id).join(', ')}) or an alias: ${Object.keys(MODEL_ALIASES).join(', ')}.`;
}
