/**
 * The CLI's model check before a conversation starts (issue 18): the name resolved (aliases,
 * `[1m]`), then asked of the Models API when this process can reach it, so an id the API does not
 * serve is a clear error before anything starts. A model the built-in table does not know gets
 * its limits from the API's answer into the config (the workflow sizes its window from the config).
 * When the API cannot be asked, the worker decides (a non-retryable failure for an unknown id).
 */
import type Anthropic from '@anthropic-ai/sdk';
import {
  DEFAULT_FALLBACK_MODEL,
  DEFAULT_MODEL,
  type EffortLevel,
  EFFORT_LEVELS,
  knownModel,
  requestModelId,
  resolveModelName,
  unknownModelText,
  wireModelId,
} from '../common/models';

/** The model fields of a config after the check. */
export interface CheckedModel {
  model?: string;
  fallbackModel?: string;
  contextWindowTokens?: number;
  modelMaxOutputTokens?: number;
}

/**
 * A Models API client from the environment, or undefined when there is nothing to ask. The SDK is
 * loaded here, when a model is named and there is an API to ask (≈70 ms the CLI need not spend otherwise).
 */
async function modelsClient(env: NodeJS.ProcessEnv): Promise<{ client: Anthropic; sdk: typeof Anthropic } | undefined> {
  const apiKey = env.ANTHROPIC_API_KEY || undefined;
  const authToken = env.ANTHROPIC_AUTH_TOKEN || undefined;
  const baseURL = env.ANTHROPIC_BASE_URL || undefined;
  if (!apiKey && !authToken && !baseURL) return undefined;
  // A compatible local server (ANTHROPIC_BASE_URL) may need no key; the SDK insists on one.
  const { default: sdk } = await import('@anthropic-ai/sdk');
  return {
    sdk,
    client: new sdk({ apiKey: apiKey ?? (authToken ? null : 'no-key-configured'), authToken: authToken ?? null, baseURL, maxRetries: 1, timeout: 10_000 }),
  };
}

/** `name` resolved by the table, or a thrown Error saying why it is not a model. */
function resolved(name: string): string {
  const result = resolveModelName(name);
  if ('problem' in result) {
    // Not a name the table knows: the API may still serve it (checked below when it can be asked).
    if (/^claude-[a-z0-9][a-z0-9.-]*(\[1m\])?$/i.test(name.trim())) return name.trim();
    throw new Error(result.problem);
  }
  return result.model;
}

/**
 * Resolves and checks `--model` and `--fallback-model` (default, as Claude Code's:
 * claude-sonnet-4-6, unless that is the model). Throws an Error with the reason for a name that
 * is no model, or that the API answers 404 for.
 */
export async function checkModels(config: { model?: string; fallbackModel?: string }, env: NodeJS.ProcessEnv = process.env): Promise<CheckedModel> {
  const out: CheckedModel = {};
  if (config.fallbackModel === undefined && requestModelId(resolved(config.model ?? DEFAULT_MODEL)) !== DEFAULT_FALLBACK_MODEL) {
    out.fallbackModel = DEFAULT_FALLBACK_MODEL;
  }
  const api = config.model === undefined && config.fallbackModel === undefined ? undefined : await modelsClient(env);
  for (const field of ['model', 'fallbackModel'] as const) {
    const name = config[field];
    if (name === undefined) continue;
    const model = resolved(name);
    out[field] = model;
    if (!api) continue;
    try {
      const answer = await api.client.models.retrieve(wireModelId(model));
      if (field === 'model' && !knownModel(model)) {
        if (answer.max_input_tokens) out.contextWindowTokens = answer.max_input_tokens;
        if (answer.max_tokens) out.modelMaxOutputTokens = answer.max_tokens;
      }
    } catch (error) {
      // A 404 naming the model is the API's "not served" (a proxy without the Models API answers other 404s).
      if (error instanceof api.sdk.NotFoundError && error.message.includes(wireModelId(model))) throw new Error(unknownModelText(name));
      // Unreachable, no permission, 5xx: the worker resolves it (table fallback, or a clear failure).
    }
  }
  return out;
}

/** `--effort`: one of the API's levels. */
export function effortFrom(value: string | undefined): EffortLevel | undefined {
  if (value === undefined) return undefined;
  if ((EFFORT_LEVELS as readonly string[]).includes(value)) return value as EffortLevel;
  throw new Error(`--effort must be one of ${EFFORT_LEVELS.join(', ')}, got "${value}".`);
}

/** `--thinking on|off`, else MAX_THINKING_TOKENS=0 (Claude Code's switch) turns it off; undefined: the default (on). */
export function thinkingFrom(value: string | undefined, env: NodeJS.ProcessEnv = process.env): boolean | undefined {
  if (value === 'on') return true;
  if (value === 'off') return false;
  if (value !== undefined) throw new Error(`--thinking must be on or off, got "${value}".`);
  return env.MAX_THINKING_TOKENS === '0' ? false : undefined;
}
