/**
 * The project's custom search attributes — their one definition (names, types, typed keys). The dev server
 * registers {@link SEARCH_ATTRIBUTES} (infra/dev-server.ts), the client checks for them and sets them at start,
 * the workflow upserts them. docker-compose.yml and docs/deployment.md repeat the names (they cannot import this).
 * Pure: imported by the workflow bundle.
 */
import { type SearchAttributePair, SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';

/** Conversation phase (idle, calling_model, running_tools, ..., ended) — list by status. */
export const STATUS_SEARCH_ATTRIBUTE = defineSearchAttributeKey('DurableAgentStatus', SearchAttributeType.KEYWORD);
/** Configured model — list conversations by model. */
export const MODEL_SEARCH_ATTRIBUTE = defineSearchAttributeKey('DurableAgentModel', SearchAttributeType.KEYWORD);

/** Every custom search attribute the project uses: what a server must have registered. */
export const SEARCH_ATTRIBUTES: readonly SearchAttributePair['key'][] = [
  STATUS_SEARCH_ATTRIBUTE,
  MODEL_SEARCH_ATTRIBUTE,
];
