/**
 * Local model calls (docs/architecture.md, "Loop overhead"): where each model call of a query
 * starts. Pure decisions; `query-deps.ts` wires them to the activities.
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

/** patched() id of the switch to local-first model calls (older histories schedule `callModel` only). */
export const LOCAL_MODEL_CALLS_PATCH = 'local-model-calls';

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
