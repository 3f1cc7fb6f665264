/**
 * `status` of a conversation that has ended, without a worker. A query of a closed workflow is
 * answered by replaying it on a worker of its task queue; when none polls it (the `npm start`
 * demo's own queue once the demo has exited, a worker that is down) the query waits for one. The
 * status is then rebuilt from what the server keeps: the workflow's result (totals and the last
 * result message), or, for a run that failed or was terminated, its search attributes.
 */
import type { TypedSearchAttributes } from '@temporalio/common';
import { EMPTY_USAGE } from '../common/messages';
import { COST_SEARCH_ATTRIBUTE, MODEL_SEARCH_ATTRIBUTE, TURNS_SEARCH_ATTRIBUTE } from '../common/search-attributes';
import type { ConversationStatus, ConversationSummary } from '../workflows/definitions';

export interface ClosedExecution {
  /** COMPLETED, FAILED, TERMINATED, CANCELLED, TIMED_OUT. */
  status: string;
  closeTime?: Date;
  typedSearchAttributes?: TypedSearchAttributes;
}

/** The status of an ended conversation, from its result (a completed run) or its search attributes. */
export function closedConversationStatus(conversationId: string, execution: ClosedExecution, summary?: ConversationSummary): ConversationStatus {
  const attributes = execution.typedSearchAttributes;
  const model = summary?.lastResult?.model ?? attributes?.get(MODEL_SEARCH_ATTRIBUTE) ?? 'unknown';
  return {
    conversationId,
    phase: 'ended',
    model,
    currentModel: model,
    turnCount: summary?.lastResult?.num_turns ?? attributes?.get(TURNS_SEARCH_ATTRIBUTE) ?? 0,
    queryCount: summary?.queryCount ?? 0,
    transitions: [],
    lastQueryTransitions: summary?.lastResult?.transitions ?? [],
    toolsInFlight: [],
    queuedInputs: 0,
    usage: summary?.usage ?? EMPTY_USAGE,
    totalCostUsd: summary?.totalCostUsd ?? attributes?.get(COST_SEARCH_ATTRIBUTE) ?? 0,
    contextTokens: 0,
    // Not kept once the run has closed: `context` is left out (formatStatus skips it).
    context: undefined as unknown as ConversationStatus['context'],
    messageCount: 0,
    lastResult: summary?.lastResult,
    ended: true,
    continuedAsNewCount: 0,
    nextEventSeq: 0,
    closed: {
      executionStatus: execution.status.toLowerCase(),
      closedAt: execution.closeTime?.toISOString(),
      answeredFrom: summary ? 'result' : 'search_attributes',
    },
  };
}
