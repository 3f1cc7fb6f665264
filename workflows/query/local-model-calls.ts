/**
 * Local model calls (docs/architecture.md, "Loop overhead"): where each model call of a query
 * starts. Pure decisions; `deps/index.ts` wires them to the activities.
 *
 * A model call starts as a local activity (`callModelLocal`) inside the workflow task that asked
 * for it: an answer that comes quickly costs no server round trip, so a loop of quick calls and
 * local read-only tools runs in one workflow task. While that task is open the server holds
 * back signals (abort, streamed tool_use reports), updates (decisions, live reads) and queries
 * (`status`), so the task is kept short: the calls of one chain share a budget, the local phase
 * of each call ends when the budget does (the stream is then handed over to a regular activity
 * on the same worker, and the task completes), and once it is spent the next call is a regular
 * activity, which ends the chain.
 */

/**
 * How long one chain of local work may hold a workflow task open (ms, as measured by the local
 * activities themselves): the longest a signal, an update or a query waits behind it.
 */
export const LOCAL_CHAIN_BUDGET_MS = 500;

/** A local phase shorter than this is not worth starting: the call goes to a regular activity. */
export const MIN_LOCAL_PHASE_MS = 100;

export type ModelCallRoute = { kind: 'local'; handoffAfterMs: number } | { kind: 'regular' };

/**
 * Where the next model call starts: locally with what is left of the chain's budget as its
 * deadline, or (disabled, or too little left) as a regular activity.
 */
export function routeModelCall(enabled: boolean, chainMs: number, budgetMs = LOCAL_CHAIN_BUDGET_MS): ModelCallRoute {
  if (!enabled) return { kind: 'regular' };
  const left = budgetMs - Math.max(0, chainMs);
  return left >= MIN_LOCAL_PHASE_MS ? { kind: 'local', handoffAfterMs: left } : { kind: 'regular' };
}

/**
 * The chain's time after a step: a local step adds what it took; anything that waited on the
 * server (a regular activity, a handoff) completed the workflow task, so a new chain starts.
 */
export function chainAfter(chainMs: number, step: { local: true; elapsedMs: number } | { local: false }): number {
  return step.local ? chainMs + Math.max(0, step.elapsedMs) : 0;
}

/** What the workflow knows of how a handed-over call's attached activity failed. */
export interface AttachFailure {
  /** The workflow aborted the query (the failure is its cancellation). */
  aborted: boolean;
  /** Temporal will not retry it: a non-retryable failure (an invalid request, the fallback trigger). */
  nonRetryable: boolean;
  /** The application failure's type, when it is one (`overloaded_error`, …). */
  type?: string;
  /** The API's retry-after (the failure's nextRetryDelay), when it sent one. */
  nextRetryDelayMs?: number;
}

/**
 * After the attached activity of a handed-over call failed (it runs one attempt only: its retries
 * would wait on a queue only its own worker polls, which may be gone), whether and how the call
 * goes on as a regular activity on the workflow's queue: after the delay Temporal's retry policy
 * would have waited, one attempt later, with the overloaded count it reported. Undefined: the
 * failure stands (an abort, or one no retry can mend).
 */
export function continueAfterAttachFailure(failure: AttachFailure, initialRetryIntervalMs: number): { delayMs: number; overloadedBefore: number } | undefined {
  if (failure.aborted || failure.nonRetryable) return undefined;
  const overloadedBefore = failure.type === 'overloaded_error' ? 1 : 0;
  // A failure with a type is the API's (retry after its delay, as the policy would); a timeout or
  // a cancelled attempt (the worker died or shut down) goes on at once.
  const delayMs = failure.type === undefined ? 0 : (failure.nextRetryDelayMs ?? initialRetryIntervalMs);
  return { delayMs, overloadedBefore };
}
