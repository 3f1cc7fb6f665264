/**
 * The result message that ends each query (seed §2.10; the Agent SDK's `result`): built from the
 * terminal reason, the query's progress and its share of the ledger — and the one a local slash
 * command answers with (no model call, nothing spent).
 */
import type { PermissionDenial } from '../permissions/types';
import type { Usage } from '../../common/messages';
import { type ResultMessage, type Terminal, type TransitionType, subtypeFor } from '../../common/result';
import type { QueryAccounting } from '../query/accounting';

/** What a query's result message is made of. */
export interface QueryResultInput {
  terminal: Terminal;
  /** The unanswered input was taken out of the transcript (it made the request too large). */
  inputDropped: boolean;
  lastAssistantText: string;
  lastStopReason: string | null;
  turnCount: number;
  durationMs: number;
  apiDurationMs: number;
  totals: { usage: Usage; totalCostUsd: number };
  permissionDenials: PermissionDenial[];
  conversationId: string;
  uuid: string;
  inputUuid: string;
  inputUuids: string[];
  transitions: TransitionType[];
  model: string;
  accounting: QueryAccounting;
}

export function queryResultMessage(input: QueryResultInput): ResultMessage {
  const { terminal } = input;
  const isError = terminal.reason !== 'completed';
  return {
    type: 'result',
    subtype: subtypeFor(terminal.reason),
    is_error: isError,
    result: isError
      ? `${terminal.error ?? describeTerminal(terminal)}${input.inputDropped ? ' The unanswered message was not kept in the conversation; send a shorter one.' : ''}`
      : input.lastAssistantText,
    num_turns: input.turnCount,
    duration_ms: input.durationMs,
    duration_api_ms: input.apiDurationMs,
    stop_reason: input.lastStopReason,
    total_cost_usd: input.totals.totalCostUsd,
    usage: input.totals.usage,
    permission_denials: input.permissionDenials,
    session_id: input.conversationId,
    uuid: input.uuid,
    input_uuid: input.inputUuid,
    input_uuids: input.inputUuids,
    terminal_reason: terminal.reason,
    transitions: input.transitions,
    model: input.model,
    ...input.accounting.resultFields(terminal, terminal.error ?? describeTerminal(terminal)),
  };
}

/** A local command's result (seed §2.10 shouldQuery = false): no turns, no cost. */
export function localCommandResultMessage(input: {
  output: string;
  isError: boolean;
  conversationId: string;
  uuid: string;
  inputUuid: string;
  model: string;
}): ResultMessage {
  const { output, isError } = input;
  return {
    type: 'result',
    subtype: isError ? 'error_during_execution' : 'success',
    is_error: isError,
    result: output,
    num_turns: 0,
    duration_ms: 0,
    duration_api_ms: 0,
    stop_reason: null,
    total_cost_usd: 0,
    usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    permission_denials: [],
    modelUsage: {},
    errors: isError ? [output] : [],
    session_id: input.conversationId,
    uuid: input.uuid,
    input_uuid: input.inputUuid,
    input_uuids: [input.inputUuid],
    terminal_reason: 'completed',
    transitions: [],
    model: input.model,
  };
}

function describeTerminal(terminal: Terminal): string {
  switch (terminal.reason) {
    case 'aborted_streaming':
    case 'aborted_tools':
      return 'Interrupted by user';
    case 'max_turns':
      return 'Reached the maximum number of turns';
    default:
      return terminal.reason;
  }
}
