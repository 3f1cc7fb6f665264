/**
 * The result message at the end of each query, shaped like the Claude Agent SDK's
 * `SDKResultMessage`, plus the terminal reason and transition sequence (seed §2.2, §2.8).
 */
import type { Usage } from './messages';

/** Why a query ended — the Claude Agent SDK's terminal reasons. */
export const TERMINAL_REASONS = [
  'completed',
  'aborted_streaming',
  'aborted_tools',
  'max_turns',
  'prompt_too_long',
  'model_error',
  'blocking_limit',
  'stop_hook_prevented',
  /** A PostToolBatch hook stopped the query (Claude Code's `hook_stopped`). */
  'hook_stopped',
  /** The conversation's cost reached `maxBudgetUsd` (checked after every model reply and tool round). */
  'budget_exhausted',
  /** `jsonSchema`: the model's StructuredOutput calls failed validation too many times. */
  'structured_output_retry_exhausted',
] as const;
export type TerminalReason = (typeof TERMINAL_REASONS)[number];

/** Why an iteration of the loop continued (seed §2.2 `transition`). */
export const TRANSITION_TYPES = [
  'tool_use',
  'max_output_tokens_escalate',
  'max_output_tokens_recovery',
  'reactive_compact_retry',
  'stop_hook_retry',
  'token_budget_continuation',
  'fallback_retry',
  'pause_turn',
] as const;
export type TransitionType = (typeof TRANSITION_TYPES)[number];

export interface Terminal {
  reason: TerminalReason;
  /** Human-readable error for non-success endings. */
  error?: string;
}

export type ResultSubtype = 'success' | 'error_max_turns' | 'error_during_execution' | 'error_max_budget_usd' | 'error_max_structured_output_retries';

/** Usage and cost of one model within a query: the Agent SDK's `ModelUsage`. */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  webSearchRequests: number;
  costUSD: number;
  contextWindow: number;
  maxOutputTokens: number;
}

export interface ResultMessage {
  type: 'result';
  subtype: ResultSubtype;
  is_error: boolean;
  /** The final assistant text (or the error, for error results). */
  result: string;
  num_turns: number;
  duration_ms: number;
  duration_api_ms: number;
  stop_reason: string | null;
  total_cost_usd: number;
  usage: Usage;
  permission_denials: Array<{ tool_name: string; tool_use_id: string; tool_input: unknown }>;
  /** Per model, as the Agent SDK reports it (absent in results recorded before it existed). */
  modelUsage?: Record<string, ModelUsage>;
  /** Why the query failed, for error subtypes (the SDK's `errors`); empty on success. */
  errors?: string[];
  /** `jsonSchema` conversations: the validated input of the model's StructuredOutput call. */
  structured_output?: unknown;
  session_id: string;
  uuid: string;
  /** The input this result answers. */
  input_uuid: string;
  /**
   * Every input this query consumed: `input_uuid` first, then inputs that arrived while it ran and
   * were injected between its turns (seed §2.2 step ⑦). Those never get a result of their own.
   */
  input_uuids: string[];
  terminal_reason: TerminalReason;
  /** Transition sequence of this query, in order. */
  transitions: TransitionType[];
  /** Model that produced the final answer (differs from the configured one after a fallback). */
  model: string;
}

export function subtypeFor(reason: TerminalReason): ResultSubtype {
  if (reason === 'completed') return 'success';
  if (reason === 'max_turns') return 'error_max_turns';
  if (reason === 'budget_exhausted') return 'error_max_budget_usd';
  if (reason === 'structured_output_retry_exhausted') return 'error_max_structured_output_retries';
  return 'error_during_execution';
}
