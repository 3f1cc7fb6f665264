/** Typed keys of the project's custom search attributes (registered by `npm run server`). */
import { SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';
import { SEARCH_ATTRIBUTE_MODEL, SEARCH_ATTRIBUTE_STATUS } from './config';

/** Conversation phase (idle, calling_model, running_tools, ..., ended) — list by status. */
export const STATUS_SEARCH_ATTRIBUTE = defineSearchAttributeKey(SEARCH_ATTRIBUTE_STATUS, SearchAttributeType.KEYWORD);
/** Configured model — list conversations by model. */
export const MODEL_SEARCH_ATTRIBUTE = defineSearchAttributeKey(SEARCH_ATTRIBUTE_MODEL, SearchAttributeType.KEYWORD);
