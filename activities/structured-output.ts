/**
 * Checks a StructuredOutput call against the conversation's JSON Schema with a standard
 * validator (@cfworker/json-schema: draft 2020-12, interprets the schema, generates no code).
 * An activity (local: no I/O, microseconds), so the verdict is recorded in the history and a
 * replay — or a worker with another library version — cannot decide the same call differently
 * (issue 23 §3). The workflow only records the verdict (workflows/deps/tool-run.ts).
 */
import { Validator } from '@cfworker/json-schema';
import type { OutputSchema, StructuredOutputCheck } from '../common/structured-output';

export interface CheckStructuredOutputInput {
  schema: OutputSchema;
  input: unknown;
}

/** Problems listed in the error result; the model fixes the first few first anyway. */
const MAX_LISTED_PROBLEMS = 10;

/** The verdict on one StructuredOutput call: the value, or an error result the model can act on. */
export async function checkStructuredOutput(request: CheckStructuredOutputInput): Promise<StructuredOutputCheck> {
  return structuredOutputVerdict(request);
}

/** checkStructuredOutput's decision (synchronous, for unit tests). */
export function structuredOutputVerdict({ schema, input }: CheckStructuredOutputInput): StructuredOutputCheck {
  let result;
  try {
    result = new Validator(schema as never, '2020-12', false).validate(input);
  } catch (error) {
    // An unresolvable $ref and the like: the schema, not the answer, is at fault; say so.
    return { valid: false, error: `The output schema cannot be checked: ${(error as Error).message}` };
  }
  if (result.valid) return { valid: true, value: input };
  // The library reports each failing keyword and the keywords that contain it: the innermost
  // ones say what is wrong ("instance.population: Instance type "string" is invalid...").
  const problems = result.errors
    .filter((error) => !result.errors.some((other) => other !== error && other.keywordLocation.startsWith(`${error.keywordLocation}/`)))
    .map((error) => `${error.instanceLocation === '#' ? 'root' : error.instanceLocation.replace(/^#\//, '').replaceAll('/', '.')}: ${error.error}`);
  const listed = [...new Set(problems)];
  const shown =
    listed.slice(0, MAX_LISTED_PROBLEMS).join('; ') + (listed.length > MAX_LISTED_PROBLEMS ? `; and ${listed.length - MAX_LISTED_PROBLEMS} more` : '');
  return { valid: false, error: `The output does not match the required schema: ${shown}` };
}
