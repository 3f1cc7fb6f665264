/**
 * Structured output checked by a standard JSON Schema validator in an activity (issue 23 §3):
 * valid 2020-12 schemas (if/then/else, dependentRequired, unevaluatedProperties) are accepted by
 * the CLI's check and decide answers right.
 */
import { describe, expect, it } from 'vitest';
import { structuredOutputVerdict } from '../../activities/structured-output';
import { parseOutputSchema } from '../../common/structured-output';

const verdict = (schema: Record<string, unknown>, input: unknown) => structuredOutputVerdict({ schema, input });

describe('checkStructuredOutput', () => {
  const shipping = {
    type: 'object',
    properties: { country: { enum: ['US', 'CA'] }, postal_code: { type: 'string' } },
    required: ['country', 'postal_code'],
    if: { properties: { country: { const: 'US' } } },
    then: { properties: { postal_code: { pattern: '^[0-9]{5}$' } } },
    else: { properties: { postal_code: { pattern: '^[A-Z][0-9][A-Z] [0-9][A-Z][0-9]$' } } },
  };

  it('a schema with if/then/else: the CLI takes it, and each branch decides', () => {
    expect(parseOutputSchema(JSON.stringify(shipping))).toEqual(shipping);
    expect(verdict(shipping, { country: 'US', postal_code: '20500' })).toEqual({ valid: true, value: { country: 'US', postal_code: '20500' } });
    expect(verdict(shipping, { country: 'CA', postal_code: 'K1M 1M4' })).toMatchObject({ valid: true });
    const wrong = verdict(shipping, { country: 'US', postal_code: 'K1M 1M4' });
    expect(wrong.valid).toBe(false);
    expect((wrong as { error: string }).error).toMatch(/^The output does not match the required schema: .*postal_code: .*pattern/);
    expect(verdict(shipping, { country: 'CA', postal_code: '20500' }).valid).toBe(false);
  });

  it('dependentRequired and unevaluatedProperties', () => {
    const card = {
      type: 'object',
      properties: { name: { type: 'string' }, card: { type: 'string' }, billing: { type: 'string' } },
      dependentRequired: { card: ['billing'] },
    };
    expect(parseOutputSchema(JSON.stringify(card))).toEqual(card);
    expect(verdict(card, { name: 'a' }).valid).toBe(true);
    expect(verdict(card, { card: '4111' })).toMatchObject({ valid: false, error: expect.stringMatching(/billing/) });
    const closed = { type: 'object', allOf: [{ properties: { a: { type: 'number' } } }], unevaluatedProperties: false };
    expect(verdict(closed, { a: 1 }).valid).toBe(true);
    expect(verdict(closed, { a: 1, b: 2 })).toMatchObject({ valid: false, error: expect.stringMatching(/b/) });
  });

  it('names each problem by path, at most ten, and a schema it cannot use is reported as such', () => {
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, count: { type: 'integer', minimum: 0 } },
      required: ['name', 'count'],
      additionalProperties: false,
    };
    const bad = verdict(schema, { name: 3, count: -1, extra: true });
    expect(bad.valid).toBe(false);
    const error = (bad as { error: string }).error;
    expect(error).toContain('name:');
    expect(error).toContain('count:');
    expect(error).toContain('extra');
    const many = { type: 'object', properties: Object.fromEntries(Array.from({ length: 15 }, (_, index) => [`p${index}`, { type: 'string' }])) };
    expect((verdict(many, Object.fromEntries(Array.from({ length: 15 }, (_, index) => [`p${index}`, index]))) as { error: string }).error).toMatch(
      /; and 5 more$/,
    );
    expect(verdict({ type: 'object', properties: { a: { $ref: 'https://example.com/other.json' } } }, { a: 1 })).toMatchObject({
      valid: false,
      error: expect.stringMatching(/^The output schema cannot be checked/),
    });
  });
});
