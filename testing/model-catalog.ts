/**
 * The scripted model server's catalog: the models it serves, in the Models API's shape
 * (`GET /v1/models`, `GET /v1/models/{id}`; @anthropic-ai/sdk 1.14.0 `ModelInfo`). Every test,
 * bench and demo uses ids from here; a request for any other model gets the API's 404
 * `not_found_error` ("model: <id>"). The product's fallback table (common/models.ts KNOWN_MODELS)
 * mirrors it; test/unit/models.test.ts checks that they agree.
 */

/** `{supported}` as the Models API reports each capability. */
interface Support {
  supported: boolean;
}

/** One entry as `GET /v1/models/{id}` returns it (the fields the engine reads, and the required rest). */
export interface CatalogModel {
  type: 'model';
  id: string;
  display_name: string;
  created_at: string;
  max_input_tokens: number;
  max_tokens: number;
  capabilities: {
    thinking: { supported: boolean; types: { adaptive: Support; enabled: Support; disabled: Support; between_tools: Support } };
    effort: { supported: boolean; low: Support; medium: Support; high: Support; max: Support; xhigh: Support | null };
    context_management: {
      supported: boolean;
      clear_thinking_20251015: Support | null;
      clear_tool_uses_20250919: Support | null;
      compact_20260112: Support | null;
    };
    batch: Support;
    citations: Support;
    code_execution: Support;
    image_input: Support;
    pdf_input: Support;
    structured_outputs: Support;
  };
}

const yes: Support = { supported: true };
const no: Support = { supported: false };

function model(
  id: string,
  displayName: string,
  createdAt: string,
  maxInput: number,
  maxOutput: number,
  thinking: { adaptive: boolean; enabled: boolean; disabled: boolean },
  effort: boolean,
): CatalogModel {
  const support = (value: boolean): Support => (value ? yes : no);
  return {
    type: 'model',
    id,
    display_name: displayName,
    created_at: createdAt,
    max_input_tokens: maxInput,
    max_tokens: maxOutput,
    capabilities: {
      thinking: {
        supported: thinking.adaptive || thinking.enabled,
        types: { adaptive: support(thinking.adaptive), enabled: support(thinking.enabled), disabled: support(thinking.disabled), between_tools: no },
      },
      effort: { supported: effort, low: support(effort), medium: support(effort), high: support(effort), max: support(effort), xhigh: null },
      context_management: { supported: true, clear_thinking_20251015: yes, clear_tool_uses_20250919: yes, compact_20260112: no },
      batch: yes,
      citations: yes,
      code_execution: yes,
      image_input: yes,
      pdf_input: yes,
      structured_outputs: yes,
    },
  };
}

/** The served models, newest first (as `GET /v1/models` lists them). */
export const MODEL_CATALOG: readonly CatalogModel[] = [
  model('claude-opus-4-8', 'Claude Opus 4.8', '2026-10-01T00:00:00Z', 1_000_000, 128_000, { adaptive: true, enabled: false, disabled: true }, true),
  model('claude-sonnet-5', 'Claude Sonnet 5', '2026-09-01T00:00:00Z', 1_000_000, 64_000, { adaptive: true, enabled: false, disabled: true }, true),
  model('claude-fable-5', 'Claude Fable 5', '2026-08-01T00:00:00Z', 1_000_000, 128_000, { adaptive: true, enabled: false, disabled: false }, true),
  model('claude-sonnet-4-6', 'Claude Sonnet 4.6', '2026-02-17T00:00:00Z', 200_000, 64_000, { adaptive: true, enabled: true, disabled: true }, true),
  model('claude-haiku-4-5-20251001', 'Claude Haiku 4.5', '2025-10-01T00:00:00Z', 200_000, 64_000, { adaptive: false, enabled: true, disabled: true }, false),
];

/** Ids the API answers to besides the catalog's own (its aliases of dated ids). */
export const CATALOG_ALIASES: Readonly<Record<string, string>> = { 'claude-haiku-4-5': 'claude-haiku-4-5-20251001' };

/** The catalog entry the API serves under `id` (an alias resolved), or undefined: 404. */
export function catalogModel(id: string): CatalogModel | undefined {
  const canonical = CATALOG_ALIASES[id] ?? id;
  return MODEL_CATALOG.find((entry) => entry.id === canonical);
}

/** The API's 404 message for a model it does not serve. */
export function unknownModelMessage(id: string): string {
  return `model: ${id}`;
}
