/**
 * What a conversation's live channel carries (issue 10): the conversation's events (the same
 * messages the `events` query serves) and, between them, what is happening right now — model
 * text and thinking as it streams, tool_use blocks as they start, Bash output as it is written.
 * The channel is `@temporalio/workflow-streams`: an offset-addressed log in the workflow, fed by
 * the workflow itself (events: no history cost) and by activities (deltas: one signal per batch).
 *
 * Every model item names its model attempt (`ModelAttempt`): a retried or fallen-back call starts
 * a new attempt, and a reader drops the partial output of an attempt that was superseded (the
 * seed's tombstone, §2.8).
 */
import { shorten } from './cut-text';

/** Topics of the conversation stream. */
export const STREAM_TOPICS = {
  /** Conversation events (`ConversationEvent`), published by the workflow. */
  events: 'events',
  /** Model deltas (`ModelStreamItem`), published by the callModel activity. */
  model: 'model',
  /** Tool starts and results (workflow) and progress (tool activity): `ToolStreamItem`. */
  tools: 'tools',
} as const;

/** Identifies one model attempt: the workflow's call, the activity attempt, and the fallback index. */
export interface ModelAttempt {
  /** The workflow's id for this model call (one per turn and model; a fallback is a new call). */
  requestId: string;
  /** Temporal activity attempt (1, 2, … on retries). */
  attempt: number;
  /** 0 for the main model, 1 once the loop fell back to the fallback model (seed §2.8). */
  fallback: number;
}

/** Published by the callModel activity. Text and thinking are coalesced per batch, not per token. */
export type ModelStreamItem =
  | { type: 'text_delta'; call: ModelAttempt; index: number; text: string }
  | { type: 'thinking_delta'; call: ModelAttempt; index: number; thinking: string }
  | { type: 'tool_use_start'; call: ModelAttempt; index: number; id: string; name: string };

/** Tool lifecycle: starts and results come from the workflow, progress from the tool activity. */
export type ToolStreamItem =
  | { type: 'tool_start'; toolUseId: string; name: string; summary: string }
  | { type: 'tool_progress'; toolUseId: string; tail: string }
  | { type: 'tool_end'; toolUseId: string; name: string; isError: boolean; summary: string };

/** Where an activity publishes: the conversation's workflow id and, for model calls, the call. */
export interface StreamTarget {
  workflowId: string;
  /** Model calls only. */
  requestId?: string;
  fallback?: number;
}

/** The later of two attempts of the same call supersedes the earlier one. */
export function compareAttempts(a: ModelAttempt, b: ModelAttempt): number {
  return a.fallback - b.fallback || a.attempt - b.attempt;
}

export function sameAttempt(a: ModelAttempt, b: ModelAttempt): boolean {
  return a.requestId === b.requestId && a.attempt === b.attempt && a.fallback === b.fallback;
}

/** One line of a tool result for live views. */
export function resultSummary(content: string, max = 120): string {
  const firstLine = content.split('\n').find((line) => line.trim() !== '') ?? '';
  const flat = firstLine.trim();
  const lines = content.split('\n').length;
  const head = shorten(flat, max);
  return lines > 1 ? `${head} (${lines} lines)` : head;
}
