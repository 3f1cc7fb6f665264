/**
 * Structured output (`--json-schema`, the Agent SDK's `outputFormat: json_schema`), as Claude
 * Code does it: a `StructuredOutput` tool whose input schema is the user's schema; its input,
 * validated against that schema, becomes the result's `structured_output`. An invalid call gets
 * an error result saying what is wrong, and the model tries again; after
 * MAX_STRUCTURED_OUTPUT_RETRIES invalid calls the query ends
 * `error_max_structured_output_retries`. The model is not forced with `tool_choice` (that would
 * forbid thinking and any other tool first): a Stop-hook-like check sends it back when it ends
 * its turn without a valid call. Pure: used by the CLI (checking the schema before anything
 * starts), the workflow (recording verdicts) and the model activity (the tool definition). The
 * checkStructuredOutput activity validates calls.
 */
import { jsonSchemaProblem } from './json-schema-check';

/** Claude Code's name for the tool. */
export const STRUCTURED_OUTPUT_TOOL_NAME = 'StructuredOutput';
/** Invalid calls after which the query ends (Claude Code's default MAX_STRUCTURED_OUTPUT_RETRIES). */
export const MAX_STRUCTURED_OUTPUT_RETRIES = 5;

export const STRUCTURED_OUTPUT_TOOL_DESCRIPTION =
  'Gives your final answer in the structured format this request requires. Call it once, when your work is done, ' +
  'with input that matches its schema exactly. If the result says the input does not match, fix it and call again.';

/** What the model is told when it ends its turn without a valid StructuredOutput call. */
export const STRUCTURED_OUTPUT_REQUIRED_MESSAGE = `This request must end with a call to the ${STRUCTURED_OUTPUT_TOOL_NAME} tool carrying your answer. Call it now.`;

/** The tool result of a valid call. */
export const STRUCTURED_OUTPUT_ACCEPTED = 'Structured output accepted.';

/** A JSON schema as the user gave it. */
export type OutputSchema = Record<string, unknown>;

/** Thrown for a schema that cannot describe the StructuredOutput tool's input. */
export class OutputSchemaError extends Error {
  override readonly name = 'OutputSchemaError';
}

/**
 * Checks a schema the user gave: it must be a JSON object describing an object (the tool's
 * input, as the API requires `input_schema.type` to be "object") that we can validate against.
 */
export function checkOutputSchema(schema: unknown): OutputSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new OutputSchemaError('the schema must be a JSON object, e.g. {"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}');
  }
  const record = schema as OutputSchema;
  if (record.type !== 'object') {
    throw new OutputSchemaError(
      `the schema's top level must have "type": "object" (the answer is the input of a tool call), got ${record.type === undefined ? 'no "type"' : `"type": ${JSON.stringify(record.type)}`}`,
    );
  }
  // What the API checks (draft 2020-12's shape), and nothing more: answers are checked by a
  // standard 2020-12 validator (activities/structured-output.ts), so if/then/else,
  // dependentRequired and unevaluatedProperties work as the API would let them.
  const problem = jsonSchemaProblem(record);
  if (problem) throw new OutputSchemaError(`the schema is not valid JSON Schema (draft 2020-12): ${problem}`);
  // One thing no answer could pass, refused before anything starts rather than after five tries.
  const dangling = danglingReference(record, record);
  if (dangling) throw new OutputSchemaError(`the schema is valid in shape, but answers cannot be checked against it: Reference not found: ${dangling}`);
  return record;
}

/** The first `$ref` inside this document (`#…`) that points nowhere, if any. */
function danglingReference(node: unknown, root: OutputSchema): string | undefined {
  if (Array.isArray(node)) {
    for (const item of node) {
      const found = danglingReference(item, root);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof node !== 'object' || node === null) return undefined;
  const ref = (node as Record<string, unknown>).$ref;
  if (typeof ref === 'string' && ref.startsWith('#') && !resolvesInside(ref, root)) return ref;
  for (const child of Object.values(node)) {
    const found = danglingReference(child, root);
    if (found) return found;
  }
  return undefined;
}

function resolvesInside(ref: string, root: OutputSchema): boolean {
  if (ref === '#') return true;
  if (!ref.startsWith('#/')) return true; // an anchor (`#name`): left to the validator
  let target: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof target !== 'object' || target === null || !(key in target)) return false;
    target = (target as Record<string, unknown>)[key];
  }
  return true;
}

/** Parses the text of `--json-schema` (a JSON string, as Claude Code takes it) and checks it. */
export function parseOutputSchema(text: string): OutputSchema {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new OutputSchemaError(`the schema is not valid JSON: ${(error as Error).message}`);
  }
  return checkOutputSchema(parsed);
}

/** The outcome of validating one StructuredOutput call. */
export type StructuredOutputCheck = { valid: true; value: unknown } | { valid: false; error: string };

/** Per-query state: the accepted output, and how many calls were invalid. */
export interface StructuredOutputState {
  value?: unknown;
  /** Set once a call was valid (the value may be any JSON, so presence is tracked apart). */
  provided: boolean;
  invalidCalls: number;
}

export const INITIAL_STRUCTURED_OUTPUT_STATE: StructuredOutputState = { provided: false, invalidCalls: 0 };

/** The error ending the query when the model has used up its attempts; undefined otherwise. */
export function structuredOutputRetriesExhausted(state: StructuredOutputState): string | undefined {
  if (state.provided || state.invalidCalls < MAX_STRUCTURED_OUTPUT_RETRIES) return undefined;
  return `The model did not give valid structured output in ${MAX_STRUCTURED_OUTPUT_RETRIES} attempts.`;
}
