/**
 * Resolves a model through the Models API (`GET /v1/models/{id}`): the id it is served under, its
 * limits and capabilities. Answers are cached per worker (one resolver per activities instance);
 * when the API cannot be asked (unreachable, 5xx, no permission to list models) the built-in
 * table (common/models.ts) answers instead, and that answer is kept for a minute only. A model the
 * API says it does not serve (404) is a non-retryable failure naming it: retrying cannot help.
 */
import Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { type EffortLevel, EFFORT_LEVELS, type ModelInfo, modelInfoFromTable, requestModelId, unknownModelText } from '../common/models';

/** How long a table answer (the API could not be asked), or the API's 404, is used before the API is asked again. */
export const TABLE_ANSWER_TTL_MS = 60_000;

/** The failure type of a model the API does not serve. */
export const UNKNOWN_MODEL_ERROR = 'UnknownModelError';

export interface ModelResolver {
  /** The model as the API describes it (or the table, when the API cannot be asked); throws UnknownModelError on a 404. */
  resolve(model: string): Promise<ModelInfo>;
}

/** The Models API's answer (@anthropic-ai/sdk ModelInfo) as the engine's ModelInfo (native window). */
export function modelInfoFromApi(answer: Anthropic.Models.ModelInfo): ModelInfo {
  const table = modelInfoFromTable(answer.id);
  const capabilities = answer.capabilities;
  const thinking = capabilities?.thinking;
  const effort = capabilities?.effort;
  const levels: EffortLevel[] = effort?.supported ? EFFORT_LEVELS.filter((level) => effort[level]?.supported) : [];
  const contextWindow = answer.max_input_tokens ?? table?.contextWindow ?? 200_000;
  return {
    id: answer.id,
    contextWindow,
    maxOutputTokens: answer.max_tokens ?? table?.maxOutputTokens ?? 64_000,
    capabilities: capabilities
      ? {
          adaptiveThinking: Boolean(thinking?.supported && thinking.types?.adaptive?.supported),
          enabledThinking: Boolean(thinking?.supported && thinking.types?.enabled?.supported),
          disabledThinking: thinking?.types?.disabled?.supported ?? true,
          effort: levels,
          clearThinking: Boolean(capabilities.context_management?.supported && capabilities.context_management.clear_thinking_20251015?.supported),
        }
      : (table?.capabilities ?? { adaptiveThinking: false, enabledThinking: false, disabledThinking: true, effort: [], clearThinking: false }),
    source: 'api',
  };
}

/** A failure for a model the API does not serve. */
export function unknownModelFailure(model: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`Unknown model: ${unknownModelText(model)}`, UNKNOWN_MODEL_ERROR);
}

/** One resolver per worker: `anthropic` undefined (no key) answers from the table. */
export function createModelResolver(anthropic: Anthropic | undefined, now: () => number = Date.now): ModelResolver {
  const answers = new Map<string, { info: ModelInfo; until: number }>();
  /** Models the API said it does not serve (kept a while: a new model may be served later). */
  const unknown = new Map<string, number>();
  return {
    async resolve(model: string): Promise<ModelInfo> {
      const cached = answers.get(model);
      if (cached && cached.until > now()) return cached.info;
      if ((unknown.get(model) ?? 0) > now()) throw unknownModelFailure(model);
      const fromTable = (): ModelInfo => {
        const table = modelInfoFromTable(model);
        if (!table) throw unknownModelFailure(model);
        answers.set(model, { info: table, until: now() + TABLE_ANSWER_TTL_MS });
        return table;
      };
      if (!anthropic) return fromTable();
      try {
        const answer = await anthropic.models.retrieve(requestModelId(model));
        const info = modelInfoFromApi(answer);
        answers.set(model, { info, until: Infinity });
        return info;
      } catch (error) {
        // A 404 naming the model is the API's "not served"; another 404 (a proxy without the Models API) is not.
        if (error instanceof Anthropic.NotFoundError && error.message.includes(requestModelId(model))) {
          unknown.set(model, now() + TABLE_ANSWER_TTL_MS);
          throw unknownModelFailure(model);
        }
        return fromTable();
      }
    },
  };
}
