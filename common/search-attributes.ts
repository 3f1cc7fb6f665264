/**
 * The project's custom search attributes — their one definition (names, types, typed keys). Every server the project
 * sets up registers {@link SEARCH_ATTRIBUTES} from here: the dev server (infra/dev-server.ts), the PostgreSQL stack
 * and docker-compose.yml (both through infra/namespace-setup.ts). The client sets the registered ones at start, the
 * workflow upserts those it was started with. docs/deployment.md repeats the names for people
 * (test/unit/search-attributes.test.ts checks it).
 *
 * Every value goes through {@link sqlSafeSearchAttributes} before it reaches the server: SQL visibility (PostgreSQL,
 * MySQL) stores Text in a `tsvector` / full-text column and Keyword in `VARCHAR(255)`, and rejects the whole
 * visibility write — the conversation then vanishes from `list` and the UI — on a value it cannot store.
 * Pure: imported by the workflow bundle.
 */
import { type SearchAttributePair, type SearchAttributeUpdatePair, SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';

/** What a person filters on: running, awaiting_input, awaiting_permission, ended (see {@link searchStatusOf}). */
export const STATUS_SEARCH_ATTRIBUTE = defineSearchAttributeKey('DurableAgentStatus', SearchAttributeType.KEYWORD);
/** Configured model — list conversations by model. */
export const MODEL_SEARCH_ATTRIBUTE = defineSearchAttributeKey('DurableAgentModel', SearchAttributeType.KEYWORD);
/** The conversation's first prompt (Text: word search in the UI's filter, e.g. `DurableAgentFirstPrompt = 'math'`). */
export const FIRST_PROMPT_SEARCH_ATTRIBUTE = defineSearchAttributeKey('DurableAgentFirstPrompt', SearchAttributeType.TEXT);
/** The workspace directory (`cwd`) on the worker host. */
export const WORKSPACE_SEARCH_ATTRIBUTE = defineSearchAttributeKey('DurableAgentWorkspace', SearchAttributeType.KEYWORD);
/** Turns (model calls) over the whole conversation, as of the last query start or end. */
export const TURNS_SEARCH_ATTRIBUTE = defineSearchAttributeKey('DurableAgentTurns', SearchAttributeType.INT);
/** Total cost in USD (subagents included), as of the last query start or end. */
export const COST_SEARCH_ATTRIBUTE = defineSearchAttributeKey('DurableAgentCostUsd', SearchAttributeType.DOUBLE);
/** Workflow time of the last query start or end. */
export const LAST_ACTIVITY_SEARCH_ATTRIBUTE = defineSearchAttributeKey('DurableAgentLastActivity', SearchAttributeType.DATETIME);

/** A fork's parent conversation (issue 31: `durable-agent fork`, `--fork-session`): `DurableAgentForkedFrom = '<id>'` lists its forks. */
export const FORKED_FROM_SEARCH_ATTRIBUTE = defineSearchAttributeKey('DurableAgentForkedFrom', SearchAttributeType.KEYWORD);

/** Every custom search attribute the project uses: what a server should have registered. */
export const SEARCH_ATTRIBUTES: readonly SearchAttributePair['key'][] = [
  STATUS_SEARCH_ATTRIBUTE,
  MODEL_SEARCH_ATTRIBUTE,
  FIRST_PROMPT_SEARCH_ATTRIBUTE,
  WORKSPACE_SEARCH_ATTRIBUTE,
  TURNS_SEARCH_ATTRIBUTE,
  COST_SEARCH_ATTRIBUTE,
  LAST_ACTIVITY_SEARCH_ATTRIBUTE,
  FORKED_FROM_SEARCH_ATTRIBUTE,
];

/**
 * Values of {@link STATUS_SEARCH_ATTRIBUTE}: coarse on purpose. The fine phase (calling_model, running_tools, …)
 * changes several times per loop iteration, and each upsert is a history event and a visibility write; the status
 * query and the UI's current details show it instead.
 */
export const SEARCH_STATUSES = ['running', 'awaiting_input', 'awaiting_permission', 'ended'] as const;
export type SearchStatus = (typeof SEARCH_STATUSES)[number];

/** The coarse status a phase is listed under. */
export function searchStatusOf(phase: string): SearchStatus {
  if (phase === 'idle' || phase === 'awaiting_input') return 'awaiting_input';
  if (phase === 'awaiting_permission' || phase === 'ended') return phase;
  return 'running';
}

/** What a conversation is started with (client start, subagent start). */
export interface StartSearchAttributes {
  status: SearchStatus;
  model: string;
  firstPrompt?: string;
  /**
   * No first prompt yet (`chat`): the first-prompt attribute starts empty, and the workflow sets it at
   * its first query (workflows/ui/visibility.ts) — so such a conversation is named in `list` and the UI too.
   */
  namedAtFirstPrompt?: boolean;
  workspace: string;
  /** Workflow or wall-clock time of the start. */
  now: Date;
  /** The parent of a fork. */
  forkedFrom?: string;
}

/** The longest first prompt stored (Text attributes are limited to 2 kB per value by default). */
export const FIRST_PROMPT_MAX_CHARS = 500;

/** Attributes that hold conversation content (prompt text, paths): left out when history is encrypted. */
export const CONTENT_SEARCH_ATTRIBUTES: ReadonlySet<string> = new Set([FIRST_PROMPT_SEARCH_ATTRIBUTE.name, WORKSPACE_SEARCH_ATTRIBUTE.name]);

/**
 * Start values of every attribute in `registered` (names the server knows; all when undefined).
 * With `withContent: false` (encrypted history: search attributes are stored in clear), the first
 * prompt and the workspace are left out.
 */
export function startSearchAttributes(
  values: StartSearchAttributes,
  registered?: ReadonlySet<string>,
  options: { withContent?: boolean } = {},
): SearchAttributePair[] {
  const pairs: SearchAttributePair[] = [
    { key: STATUS_SEARCH_ATTRIBUTE, value: values.status },
    { key: MODEL_SEARCH_ATTRIBUTE, value: values.model },
    { key: WORKSPACE_SEARCH_ATTRIBUTE, value: values.workspace },
    { key: TURNS_SEARCH_ATTRIBUTE, value: 0 },
    { key: COST_SEARCH_ATTRIBUTE, value: 0 },
    { key: LAST_ACTIVITY_SEARCH_ATTRIBUTE, value: values.now },
  ];
  if (values.firstPrompt) pairs.push({ key: FIRST_PROMPT_SEARCH_ATTRIBUTE, value: values.firstPrompt.slice(0, FIRST_PROMPT_MAX_CHARS) });
  else if (values.namedAtFirstPrompt) pairs.push({ key: FIRST_PROMPT_SEARCH_ATTRIBUTE, value: '' });
  if (values.forkedFrom) pairs.push({ key: FORKED_FROM_SEARCH_ATTRIBUTE, value: values.forkedFrom });
  return pairs.filter(
    (pair) => (!registered || registered.has(pair.key.name)) && (options.withContent !== false || !CONTENT_SEARCH_ATTRIBUTES.has(pair.key.name)),
  );
}

/** The values that change as a conversation runs (upserted at query start and end, and when it ends). */
export interface ProgressSearchAttributes {
  status: SearchStatus;
  model: string;
  turns: number;
  costUsd: number;
  now: Date;
}

/** Upsert pairs for `values`, only of the attributes in `present` (those the run was started with). */
export function progressSearchAttributes(values: ProgressSearchAttributes, present: (name: string) => boolean): SearchAttributeUpdatePair[] {
  const pairs: SearchAttributeUpdatePair[] = [
    { key: STATUS_SEARCH_ATTRIBUTE, value: values.status },
    { key: MODEL_SEARCH_ATTRIBUTE, value: values.model },
    { key: TURNS_SEARCH_ATTRIBUTE, value: values.turns },
    // Doubles: rounded to a millionth of a dollar, so the list shows no float noise.
    { key: COST_SEARCH_ATTRIBUTE, value: Math.round(values.costUsd * 1e6) / 1e6 },
    { key: LAST_ACTIVITY_SEARCH_ATTRIBUTE, value: values.now },
  ];
  return pairs.filter((pair) => present(pair.key.name));
}

/**
 * Keyword values longest stored: SQL visibility keeps Keyword in `VARCHAR(255)` (PostgreSQL and MySQL count
 * characters), and a longer value fails the whole visibility write.
 */
export const KEYWORD_MAX_CHARS = 255;
/**
 * Text values longest stored: PostgreSQL limits one tsvector word to 2047 bytes; 500 characters are at most 2000
 * bytes of UTF-8, so no word of a value this long can exceed it.
 */
export const TEXT_MAX_CHARS = 500;

/** NUL (JSONB and PostgreSQL text refuse it) and lone UTF-16 surrogates (not Unicode: JSONB refuses them). */
function wellFormed(value: string): string {
  return value.replace(/\u0000/g, '').replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/** The first `max` code points of `value` (never half a surrogate pair). */
function firstCodePoints(value: string, max: number): string {
  const points = Array.from(value);
  return points.length <= max ? value : points.slice(0, max).join('');
}

/**
 * A Keyword value SQL visibility can store: NUL removed, lone surrogates replaced, at most
 * {@link KEYWORD_MAX_CHARS} characters. `list --workspace` filters with the same function, so a long path still
 * matches the value stored for it.
 */
export function sqlSafeKeyword(value: string): string {
  return firstCodePoints(wellFormed(value), KEYWORD_MAX_CHARS);
}

/**
 * A Text value SQL visibility can store. PostgreSQL casts the value with `::tsvector`, where `'` quotes, `\`
 * escapes and `:` starts a position (`word:3`), so "scenario:foundation-edit" is a syntax error that fails the
 * whole visibility write (issue 24). Colons and backslashes become spaces (both sides stay searchable words), a
 * straight apostrophe becomes ’ (so "don't" stays one word); whitespace runs become one space; NUL and lone
 * surrogates as for Keyword; at most {@link TEXT_MAX_CHARS} characters.
 */
export function sqlSafeText(value: string): string {
  const cleaned = wellFormed(value).replace(/'/g, '\u2019').replace(/[:\\]/g, ' ').replace(/\s+/g, ' ').trim();
  return firstCodePoints(cleaned, TEXT_MAX_CHARS);
}

/** A value of `type` SQL visibility can store, or undefined when there is none (a non-finite number, an invalid date). */
function sqlSafeValue(type: SearchAttributeType, value: unknown): unknown {
  switch (type) {
    case SearchAttributeType.TEXT:
      return typeof value === 'string' ? sqlSafeText(value) : undefined;
    case SearchAttributeType.KEYWORD:
      return typeof value === 'string' ? sqlSafeKeyword(value) : undefined;
    case SearchAttributeType.KEYWORD_LIST:
      return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string').map(sqlSafeKeyword) : undefined;
    case SearchAttributeType.INT:
      return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
    case SearchAttributeType.DOUBLE:
      return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
    case SearchAttributeType.DATETIME:
      return value instanceof Date && !Number.isNaN(value.getTime()) ? value : undefined;
    default:
      return value;
  }
}

/**
 * `pairs` with every value made storable by SQL visibility ({@link sqlSafeText}, {@link sqlSafeKeyword}; numbers
 * and dates that JSON cannot carry are left out, as is a pair with no value left). Pure.
 */
export function sqlSafeSearchAttributes<P extends SearchAttributePair | SearchAttributeUpdatePair>(pairs: readonly P[]): P[] {
  const safe: P[] = [];
  for (const pair of pairs) {
    const value = sqlSafeValue(pair.key.type, pair.value);
    if (value !== undefined) safe.push({ ...pair, value } as P);
  }
  return safe;
}
