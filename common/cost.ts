/**
 * Approximate USD cost of a model call from its usage. Prices are per million tokens by model
 * family (list prices at the time of writing); unknown models cost as Sonnet. Cache writes are
 * billed at 1.25x input, cache reads at 0.1x input, as the API documents; web searches at $10 per
 * 1,000 (issue 33).
 */
import type { Usage } from './messages';
import { webSearchCostUsd } from './web-search';

const PRICES_PER_MILLION: Array<{ match: RegExp; input: number; output: number }> = [
  { match: /opus-4-[01]|opus-4-2025|claude-3-opus/, input: 15, output: 75 },
  { match: /opus/, input: 5, output: 25 },
  { match: /haiku-3/, input: 0.25, output: 1.25 },
  { match: /haiku/, input: 1, output: 5 },
  { match: /sonnet/, input: 3, output: 15 },
];

export function costOfUsage(model: string, usage: Usage): number {
  const price = PRICES_PER_MILLION.find((entry) => entry.match.test(model)) ?? { input: 3, output: 15 };
  const inputCost =
    usage.input_tokens * price.input + usage.cache_creation_input_tokens * price.input * 1.25 + usage.cache_read_input_tokens * price.input * 0.1;
  return (inputCost + usage.output_tokens * price.output) / 1_000_000 + webSearchCostUsd(usage);
}
