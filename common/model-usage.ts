/**
 * Per-model usage of a query, as the Claude Agent SDK's result reports it (`modelUsage`): tokens,
 * cost and the model's limits. Pure: built in the workflow from activity-reported usage.
 */
import { type Usage, webSearchRequestsOf } from './messages';
import { modelLimits } from './models';
import type { ModelUsage } from './result';

/** `map` with one more model call (or a subagent's totals) of `model` added; `map` is not changed. */
export function addModelUsage(
  map: Record<string, ModelUsage>,
  model: string,
  usage: Usage,
  costUsd: number,
  overrides: { contextWindowTokens?: number; modelMaxOutputTokens?: number } = {},
): Record<string, ModelUsage> {
  const limits = modelLimits(model, overrides);
  const before = map[model];
  return {
    ...map,
    [model]: {
      inputTokens: (before?.inputTokens ?? 0) + usage.input_tokens,
      outputTokens: (before?.outputTokens ?? 0) + usage.output_tokens,
      cacheReadInputTokens: (before?.cacheReadInputTokens ?? 0) + usage.cache_read_input_tokens,
      cacheCreationInputTokens: (before?.cacheCreationInputTokens ?? 0) + usage.cache_creation_input_tokens,
      webSearchRequests: (before?.webSearchRequests ?? 0) + webSearchRequestsOf(usage),
      costUSD: (before?.costUSD ?? 0) + costUsd,
      contextWindow: limits.contextWindow,
      maxOutputTokens: limits.maxOutputTokens,
    },
  };
}

/** Two per-model maps summed (a subagent's usage joins its parent's). */
export function mergeModelUsage(a: Record<string, ModelUsage>, b: Record<string, ModelUsage>): Record<string, ModelUsage> {
  const merged = { ...a };
  for (const [model, usage] of Object.entries(b)) {
    const before = merged[model];
    merged[model] = before
      ? {
          inputTokens: before.inputTokens + usage.inputTokens,
          outputTokens: before.outputTokens + usage.outputTokens,
          cacheReadInputTokens: before.cacheReadInputTokens + usage.cacheReadInputTokens,
          cacheCreationInputTokens: before.cacheCreationInputTokens + usage.cacheCreationInputTokens,
          webSearchRequests: before.webSearchRequests + usage.webSearchRequests,
          costUSD: before.costUSD + usage.costUSD,
          contextWindow: Math.max(before.contextWindow, usage.contextWindow),
          maxOutputTokens: Math.max(before.maxOutputTokens, usage.maxOutputTokens),
        }
      : usage;
  }
  return merged;
}
