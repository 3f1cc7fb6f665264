/**
 * The local phase of a model call runs the read-only calls its answer asks for (common/tool-prefetch.ts
 * decides which), concurrently, through the runTool activity's own function — the same tool
 * code, the same result budget, the same persisted file for a large output — so the workflow
 * uses their results instead of scheduling a local activity per call.
 *
 * Nothing here may fail the model call: a call that throws or is not done by the deadline is left
 * out (the workflow runs it as ever). Only the model call's own cancellation propagates.
 */
import { CancelledFailure } from '@temporalio/common';
import type { AssistantApiMessage } from '../common/messages';
import type { RunToolInput, RunToolResult } from '../common/activity-types';
import type { CallFacts } from '../common/permission-facts';
import { type PrefetchedToolResult, type ToolPrefetchPlan, allowedWithoutAsking, callsJudgedOnFacts, toolsToPrefetch } from '../common/tool-prefetch';
import { toolAccessFor } from '../common/tool-access';
import { gatherCallFacts } from './permission-facts/gather';

/**
 * Prefetched calls not done by then are stopped and left to the workflow: the local phase must
 * answer well within its start-to-close timeout (its deadline plus a minute), and a workflow
 * task is held open meanwhile.
 */
export const PREFETCH_DEADLINE_MS = 20_000;

/** runTool's function that returns errors as data (activities/run-tool.ts `createToolRunner`). */
export type RunToolToResult = (input: RunToolInput, signal?: AbortSignal) => Promise<RunToolResult>;

/**
 * Runs the calls of `message` that `plan` allows; their results in message order, or undefined
 * when the answer asks for none of them.
 */
export async function prefetchTools(
  message: AssistantApiMessage,
  plan: ToolPrefetchPlan,
  conversationId: string,
  runTool: RunToolToResult,
  deadlineMs = PREFETCH_DEADLINE_MS,
): Promise<PrefetchedToolResult[] | undefined> {
  if (message.stop_reason !== 'tool_use') return undefined;
  const calls = toolsToPrefetch(message.content, plan, await factsOfShellCalls(message, plan));
  if (calls.length === 0) return undefined;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error(`prefetched tool calls not done within ${deadlineMs} ms`)), deadlineMs);
  try {
    const results = await mapWithConcurrency(calls, plan.maxConcurrency ?? calls.length, async (call): Promise<PrefetchedToolResult | undefined> => {
      try {
        // Decided again on the facts of where it acts (real paths: issue 17), as the workflow's gate will decide.
        const facts = plan.permission
          ? await gatherCallFacts({ toolUseId: call.id, name: call.name, input: call.input }, plan.cwd, plan.permission.homeDir)
          : undefined;
        if (plan.permission && !allowedWithoutAsking(call, plan.permission, facts)) return undefined;
        const access = plan.permission ? toolAccessFor(plan.permission, facts) : undefined;
        const result = await runTool(
          {
            conversationId,
            toolUseId: call.id,
            name: call.name,
            input: call.input,
            cwd: plan.cwd,
            maxResultSizeChars: call.maxResultSizeChars,
            stream: plan.stream,
            ...(access && { access }),
          },
          deadline.signal,
        );
        // Stopped by the deadline: whatever came back is not the call's real outcome.
        if (deadline.signal.aborted) return undefined;
        return {
          toolUseId: call.id,
          result: { content: result.content, isError: result.isError, ...(result.persistedPath !== undefined && { persistedPath: result.persistedPath }) },
          ...(facts && { facts }),
        };
      } catch (error) {
        if (error instanceof CancelledFailure) throw error;
        return undefined;
      }
    });
    const done = results.filter((result): result is PrefetchedToolResult => result !== undefined);
    return done.length > 0 ? done : undefined;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Issue 29: the facts of the Bash calls before a call the plan could prefetch (a read-only command
 * does not stop the reads after it; one that may change things, or cannot be examined, does).
 */
async function factsOfShellCalls(message: AssistantApiMessage, plan: ToolPrefetchPlan): Promise<Map<string, CallFacts> | undefined> {
  const calls = callsJudgedOnFacts(message.content, plan);
  if (calls.length === 0) return undefined;
  const facts = await Promise.all(
    calls.map((call) => gatherCallFacts({ toolUseId: call.id, name: call.name, input: call.input }, plan.cwd, plan.permission?.homeDir)),
  );
  return new Map(facts.map((fact) => [fact.toolUseId, fact]));
}

/** `fn` over `items` with at most `limit` running at once; results in `items`' order. */
export async function mapWithConcurrency<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  return results;
}
