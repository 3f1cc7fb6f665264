/**
 * The pure parts of results, budgets and structured output: the budget decision, schema checks
 * and validation, per-model usage, the subtype of each terminal reason, and a query's accounting.
 */
import { describe, expect, it } from 'vitest';
import { checkBudget } from '../../common/budget';
import { EMPTY_USAGE } from '../../common/messages';
import { addModelUsage, mergeModelUsage } from '../../common/model-usage';
import { TERMINAL_REASONS, subtypeFor } from '../../common/result';
import { structuredOutputVerdict } from '../../activities/structured-output';
import { MAX_STRUCTURED_OUTPUT_RETRIES, OutputSchemaError, STRUCTURED_OUTPUT_ACCEPTED, parseOutputSchema } from '../../common/structured-output';
import { QueryAccounting } from '../../workflows/query/accounting';

const schema = {
  type: 'object',
  properties: { name: { type: 'string' }, count: { type: 'integer', minimum: 0 } },
  required: ['name', 'count'],
  additionalProperties: false,
};
const usage = { ...EMPTY_USAGE, input_tokens: 1000, output_tokens: 100 };

describe('checkBudget', () => {
  it('stops when the cost reaches the budget, not before', () => {
    expect(checkBudget(0.0099, 0.01)).toBeUndefined();
    expect(checkBudget(0.01, 0.01)).toContain('Reached the maximum budget of $0.01');
    expect(checkBudget(0.5, 0.01)).toContain('$0.5');
    expect(checkBudget(1000, undefined)).toBeUndefined();
  });

  it('quotes the cost with two significant digits', () => {
    expect(checkBudget(0.0032, 0.001)).toBe('Reached the maximum budget of $0.001 (this conversation has cost $0.0032).');
  });
});

describe('subtypeFor', () => {
  it('maps every terminal reason onto one of the five SDK subtypes', () => {
    expect(subtypeFor('completed')).toBe('success');
    expect(subtypeFor('max_turns')).toBe('error_max_turns');
    expect(subtypeFor('budget_exhausted')).toBe('error_max_budget_usd');
    expect(subtypeFor('structured_output_retry_exhausted')).toBe('error_max_structured_output_retries');
    expect(subtypeFor('model_error')).toBe('error_during_execution');
    expect(new Set(TERMINAL_REASONS.map(subtypeFor))).toEqual(
      new Set(['success', 'error_max_turns', 'error_during_execution', 'error_max_budget_usd', 'error_max_structured_output_retries']),
    );
  });
});

describe('output schemas', () => {
  it('accepts an object schema given as JSON text', () => {
    expect(parseOutputSchema(JSON.stringify(schema))).toEqual(schema);
  });

  it('says what is wrong with a malformed schema', () => {
    const problem = (text: string) => {
      try {
        parseOutputSchema(text);
      } catch (error) {
        expect(error).toBeInstanceOf(OutputSchemaError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(problem('{"type": "object",')).toMatch(/not valid JSON/);
    expect(problem('[1,2]')).toMatch(/must be a JSON object/);
    expect(problem('{"type":"array","items":{"type":"string"}}')).toMatch(/"type": "object".*got "type": "array"/);
    expect(problem('{"properties":{}}')).toMatch(/got no "type"/);
    expect(problem('{"type":"object","properties":{"a":{"type":"strin"}}}')).toMatch(
      /not valid JSON Schema \(draft 2020-12\): properties\.a\.type: .*got "strin"/,
    );
    expect(problem('{"type":"object","properties":{"a":{"type":"string","pattern":"["}}}')).toMatch(/properties\.a\.pattern: not a valid regular expression/);
    // Valid in shape, but not something answers can be checked against.
    expect(problem('{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}')).toMatch(
      /answers cannot be checked against it: Reference not found: #\/\$defs\/missing/,
    );
  });
});

describe('model usage', () => {
  it('adds calls per model with the model limits, and merges a subagent’s', () => {
    let map = addModelUsage({}, 'claude-sonnet-4-6', usage, 0.0045);
    map = addModelUsage(map, 'claude-sonnet-4-6', usage, 0.0045);
    expect(map['claude-sonnet-4-6']).toEqual({
      inputTokens: 2000,
      outputTokens: 200,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
      webSearchRequests: 0,
      costUSD: 0.009,
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
    });
    const merged = mergeModelUsage(map, addModelUsage({}, 'claude-haiku-4-5', usage, 0.001));
    expect(Object.keys(merged).sort()).toEqual(['claude-haiku-4-5', 'claude-sonnet-4-6']);
    expect(mergeModelUsage(map, map)['claude-sonnet-4-6'].inputTokens).toBe(4000);
  });
});

describe('QueryAccounting', () => {
  const config = { jsonSchema: schema, maxBudgetUsd: 0.01 };
  /** A StructuredOutput call as the workflow records it: the checkStructuredOutput activity's verdict. */
  const provide = (accounting: QueryAccounting, input: unknown) => accounting.recordStructuredOutput(structuredOutputVerdict({ schema, input }));

  it('accepts a valid StructuredOutput call and reports it in the result', () => {
    const accounting = new QueryAccounting(config);
    expect(accounting.structuredOutputMissing).toBe(true);
    expect(provide(accounting, { name: 'x' })).toMatchObject({ isError: true });
    expect(provide(accounting, { name: 'x', count: 1 })).toEqual({ content: STRUCTURED_OUTPUT_ACCEPTED, isError: false });
    expect(accounting.structuredOutputMissing).toBe(false);
    expect(accounting.resultFields({ reason: 'completed' }, '')).toMatchObject({ errors: [], structured_output: { name: 'x', count: 1 } });
    // An error result carries no output, and says why.
    expect(accounting.resultFields({ reason: 'max_turns' }, 'Reached the maximum number of turns')).toEqual({
      modelUsage: {},
      errors: ['Reached the maximum number of turns'],
    });
  });

  it(`ends the query after ${MAX_STRUCTURED_OUTPUT_RETRIES} invalid calls, checked after tool results only`, () => {
    const accounting = new QueryAccounting(config);
    for (let call = 1; call < MAX_STRUCTURED_OUTPUT_RETRIES; call++) provide(accounting, {});
    expect(accounting.checkLimits('tool_results', 0)).toBeUndefined();
    provide(accounting, {});
    expect(accounting.checkLimits('assistant', 0)).toBeUndefined();
    expect(accounting.checkLimits('tool_results', 0)).toMatchObject({ reason: 'structured_output_retry_exhausted' });
    // Carried across continue-as-new, the count goes on.
    const resumed = new QueryAccounting(config, accounting.toCarried());
    expect(resumed.checkLimits('tool_results', 0)?.reason).toBe('structured_output_retry_exhausted');
  });

  it('stops on the budget after a reply and after tool results', () => {
    const accounting = new QueryAccounting(config);
    expect(accounting.checkLimits('assistant', 0.009)).toBeUndefined();
    expect(accounting.checkLimits('assistant', 0.01)).toMatchObject({ reason: 'budget_exhausted' });
    expect(accounting.checkLimits('tool_results', 0.02)).toMatchObject({ reason: 'budget_exhausted' });
  });

  it('has no limits and wants no output without a budget or schema', () => {
    const accounting = new QueryAccounting({});
    expect(accounting.structuredOutputMissing).toBe(false);
    expect(accounting.checkLimits('tool_results', 1e9)).toBeUndefined();
  });
});

describe('jsonSchemaProblem (draft 2020-12 shape, as the API checks input_schema)', () => {
  it('passes valid schemas, our own tools’ among them, and names the first problem by path', async () => {
    const { jsonSchemaProblem } = await import('../../common/json-schema-check');
    const { modelToolDefinitions } = await import('../../activities/tool-definitions');
    const { TOOL_NAMES } = await import('../../common/tool-specs');
    for (const tool of modelToolDefinitions(TOOL_NAMES, schema)) expect(jsonSchemaProblem(tool.input_schema), tool.name).toBeUndefined();
    expect(jsonSchemaProblem({ type: ['string', 'null'], $defs: { a: true }, anyOf: [{ const: 1 }, { enum: [2] }] })).toBeUndefined();
    expect(jsonSchemaProblem({ type: 'object', properties: { a: { items: { type: 'nope' } } } })).toBe(
      'properties.a.items.type: must be one of array, boolean, integer, null, number, object, string (or a list of them), got "nope"',
    );
    expect(jsonSchemaProblem({ anyOf: [] })).toBe('anyOf: must be a non-empty list of schemas');
    expect(jsonSchemaProblem({ pattern: '(' })).toMatch(/^pattern: not a valid regular expression/);
    expect(jsonSchemaProblem({ required: ['a', 'a'] })).toBe('required: must be a list of distinct property names');
    expect(jsonSchemaProblem(7)).toBe('(root): a schema must be an object or a boolean');
  });
});
