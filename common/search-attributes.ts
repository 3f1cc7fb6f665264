/**
 * The project's custom search attributes — their one definition (names, types, typed keys). The dev server
 * registers {@link SEARCH_ATTRIBUTES} (infra/dev-server.ts), the client sets the registered ones at start, the
 * workflow upserts those it was started with. docker-compose.yml and docs/deployment.md repeat the names (they cannot
 * import this; test/unit/search-attributes.test.ts checks they agree).
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

/** Every custom search attribute the project uses: what a server should have registered. */
export const SEARCH_ATTRIBUTES: readonly SearchAttributePair['key'][] = [
  STATUS_SEARCH_ATTRIBUTE,
  MODEL_SEARCH_ATTRIBUTE,
  FIRST_PROMPT_SEARCH_ATTRIBUTE,
  WORKSPACE_SEARCH_ATTRIBUTE,
  TURNS_SEARCH_ATTRIBUTE,
  COST_SEARCH_ATTRIBUTE,
  LAST_ACTIVITY_SEARCH_ATTRIBUTE,
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
  workspace: string;
  /** Workflow or wall-clock time of the start. */
  now: Date;
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
