/**
 * A structural check of a JSON Schema against the shape draft 2020-12's meta-schema gives each
 * keyword — what the Messages API checks a tool's `input_schema` against ("JSON schema is invalid.
 * It must match JSON Schema draft 2020-12"). Used by the CLI to refuse a bad `--json-schema`
 * before anything starts, and by the scripted model server to refuse what the API refuses.
 * Unknown keywords are annotations and pass, as in JSON Schema. Pure.
 */

const TYPE_NAMES = new Set(['array', 'boolean', 'integer', 'null', 'number', 'object', 'string']);
const NON_NEGATIVE_INTEGER = ['maxLength', 'minLength', 'maxItems', 'minItems', 'maxProperties', 'minProperties', 'maxContains', 'minContains'];
const NUMBER = ['maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum'];
const STRING = [
  'title',
  'description',
  '$comment',
  'format',
  '$id',
  '$anchor',
  '$dynamicAnchor',
  '$ref',
  '$dynamicRef',
  '$schema',
  'contentEncoding',
  'contentMediaType',
];
const BOOLEAN = ['uniqueItems', 'readOnly', 'writeOnly', 'deprecated'];
const SCHEMA = [
  'additionalProperties',
  'items',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
];
const SCHEMA_MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const SCHEMA_LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The first problem found, as `path: what is wrong`, or undefined for a schema of valid shape. */
export function jsonSchemaProblem(schema: unknown, path = '(root)'): string | undefined {
  if (typeof schema === 'boolean') return undefined;
  if (!isObject(schema)) return `${path}: a schema must be an object or a boolean`;
  const at = (keyword: string) => (path === '(root)' ? keyword : `${path}.${keyword}`);
  if ('type' in schema) {
    const type = schema.type;
    const names = Array.isArray(type) ? type : [type];
    if (names.length === 0 || !names.every((name) => typeof name === 'string' && TYPE_NAMES.has(name)) || new Set(names).size !== names.length) {
      return `${at('type')}: must be one of ${[...TYPE_NAMES].join(', ')} (or a list of them), got ${JSON.stringify(type)}`;
    }
  }
  if ('enum' in schema && !Array.isArray(schema.enum)) return `${at('enum')}: must be an array`;
  if ('examples' in schema && !Array.isArray(schema.examples)) return `${at('examples')}: must be an array`;
  if ('multipleOf' in schema && !(typeof schema.multipleOf === 'number' && schema.multipleOf > 0)) return `${at('multipleOf')}: must be a number above 0`;
  for (const keyword of NUMBER) if (keyword in schema && typeof schema[keyword] !== 'number') return `${at(keyword)}: must be a number`;
  for (const keyword of NON_NEGATIVE_INTEGER) {
    if (keyword in schema && !(Number.isInteger(schema[keyword]) && (schema[keyword] as number) >= 0))
      return `${at(keyword)}: must be a whole number, 0 or more`;
  }
  for (const keyword of STRING) if (keyword in schema && typeof schema[keyword] !== 'string') return `${at(keyword)}: must be a string`;
  for (const keyword of BOOLEAN) if (keyword in schema && typeof schema[keyword] !== 'boolean') return `${at(keyword)}: must be true or false`;
  if ('pattern' in schema) {
    if (typeof schema.pattern !== 'string') return `${at('pattern')}: must be a string`;
    try {
      new RegExp(schema.pattern, 'u');
    } catch (error) {
      return `${at('pattern')}: not a valid regular expression (${(error as Error).message})`;
    }
  }
  if ('required' in schema) {
    const required = schema.required;
    if (!Array.isArray(required) || !required.every((name) => typeof name === 'string') || new Set(required).size !== required.length) {
      return `${at('required')}: must be a list of distinct property names`;
    }
  }
  if ('dependentRequired' in schema) {
    const dependent = schema.dependentRequired;
    if (!isObject(dependent) || !Object.values(dependent).every((names) => Array.isArray(names) && names.every((name) => typeof name === 'string'))) {
      return `${at('dependentRequired')}: must map property names to lists of property names`;
    }
  }
  for (const keyword of SCHEMA) {
    if (!(keyword in schema)) continue;
    const problem = jsonSchemaProblem(schema[keyword], at(keyword));
    if (problem) return problem;
  }
  for (const keyword of SCHEMA_MAP) {
    if (!(keyword in schema)) continue;
    const map = schema[keyword];
    if (!isObject(map)) return `${at(keyword)}: must be an object of schemas`;
    for (const [name, child] of Object.entries(map)) {
      const problem = jsonSchemaProblem(child, `${at(keyword)}.${name}`);
      if (problem) return problem;
    }
  }
  for (const keyword of SCHEMA_LIST) {
    if (!(keyword in schema)) continue;
    const list = schema[keyword];
    if (!Array.isArray(list) || list.length === 0) return `${at(keyword)}: must be a non-empty list of schemas`;
    for (const [index, child] of list.entries()) {
      const problem = jsonSchemaProblem(child, `${at(keyword)}.${index}`);
      if (problem) return problem;
    }
  }
  return undefined;
}
