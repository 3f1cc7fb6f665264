/**
 * What people see of a session, read from its owners: the `status` query's answer and the Temporal
 * UI's current details. Reads only; the session (conversation-session.ts) hands it the owners.
 */
import type { ConversationConfig } from '../../common/config';
import type { ContextStatus, ConversationStatus, Phase } from '../definitions';
import type { PermissionGate } from '../permissions/gate';
import type { Transcript } from '../transcript';
import type { CurrentDetailsInput } from '../ui/details';
import { contextStatus } from './context-status';
import type { EventsFeed } from './events-feed';
import type { InputQueue } from './input-queue';
import type { SessionParts } from './parts';
import type { SessionQueries } from './queries';
import type { UsageLedger } from './usage-ledger';

/** The owners a view reads. `parts` is undefined while the parts are being made. */
export interface SessionView {
  conversationId: string;
  phase: Phase;
  config: ConversationConfig;
  queries: SessionQueries;
  inputs: InputQueue;
  ledger: UsageLedger;
  transcript: Transcript;
  feed: EventsFeed;
  permissions: PermissionGate;
  parts: SessionParts | undefined;
  continuedAsNewCount: number;
}

/** seed §2.6: the context against the thresholds, and compaction state. */
export function sessionContextStatus(view: Pick<SessionView, 'config' | 'queries'>): ContextStatus {
  return contextStatus(view.config, view.queries.contextTokens, view.queries.compaction);
}

/** The mode hooks and `status` are told (none when tools run unchecked). */
export function permissionMode(view: Pick<SessionView, 'config' | 'permissions'>): string | undefined {
  return view.config.permissions ? view.permissions.mode : undefined;
}

/** The `status` query's answer. */
export function conversationStatus(view: SessionView): ConversationStatus {
  const { queries } = view;
  return {
    conversationId: view.conversationId,
    phase: view.phase,
    model: view.config.model,
    currentModel: queries.currentModel,
    turnCount: queries.turnCount,
    queryCount: queries.queryCount,
    transitions: queries.transitions,
    lastQueryTransitions: queries.lastQueryTransitions,
    toolsInFlight: [...queries.toolsInFlight.values()],
    queuedInputs: view.inputs.length,
    usage: view.ledger.usage,
    totalCostUsd: view.ledger.totalCostUsd,
    contextTokens: queries.contextTokens,
    context: sessionContextStatus(view),
    messageCount: view.transcript.length,
    lastResult: queries.lastResult,
    ended: view.phase === 'ended',
    continuedAsNewCount: view.continuedAsNewCount,
    nextEventSeq: view.feed.nextEventSeq,
    pendingPermissions: view.permissions.pendingRequests(),
    permissionMode: permissionMode(view),
    ...(view.config.forkedFrom && { forkedFrom: view.config.forkedFrom }),
    ...view.parts?.status(),
  };
}

/** The UI's current details: phase, tools, turn, cost, last answer, and the parts' lines. */
export function currentDetails(view: SessionView): CurrentDetailsInput {
  const { queries } = view;
  const last = queries.lastResult;
  return {
    phase: view.phase,
    tools: [...queries.toolsInFlight.values()].map((tool) => tool.summary),
    turn: queries.conversationTurn,
    queryCount: queries.queryCount,
    model: queries.currentModel,
    costUsd: view.ledger.totalCostUsd,
    lastAnswer: last && { text: last.result, isError: last.is_error },
    lastPrompt: queries.lastPrompt,
    decisions: view.config.permissions ? view.permissions.toCarried().decisions.slice(-3) : undefined,
    // While the parts are made, only those made so far have lines.
    ...view.parts?.details(),
  };
}
