/**
 * The loop's model call (`QueryDeps.callModel`): by reference (the request context registered by
 * digest, the transcript as a prefix), local first with a handoff to a regular activity on the
 * worker that holds the stream (workflows/query/local-model-calls.ts), and its outcome classified as
 * data for the loop — a message, too long, overloaded, an error, aborted.
 */
import { isCancellation, sleep, uuid4, workflowInfo } from '@temporalio/workflow';
import type { CallModelInput, CallModelLocalResult, CallModelResult } from '../../common/activity-types';
import { continueAfterAttachFailure, routeModelCall } from '../query/local-model-calls';
import type { ModelRequest, ModelResponse } from '../query/loop';
import { prefetchedCalls, toolPrefetchPlan } from '../query/prefetched-calls';
import type { StreamingToolExecutor } from '../query/tool-orchestration';
import { modelCallSummary, modelCallSummaryWithReads } from '../ui/details';
import { type ActivityOptionsSet, activities, localActivities, localModelCallOptions, thinkingOptions } from './activity-options';
import { attachFailure, failureMessage, isOverloadedFailure } from './failures';
import type { LocalChain } from './local-chain';
import type { ActiveQuery, QueryHost } from './query-host';
import { LOCAL_TOOLS } from './tool-run';

/**
 * Where a model call may gather the permission facts of the calls it streams: only when tools run
 * on the workflow's own queue (any worker that runs the call can then run the tools) and permissions are checked.
 */
function permissionFactsWhereToolsRun(host: QueryHost): { cwd: string; homeDir?: string } | undefined {
  const { config } = host;
  if (config.toolTaskQueue !== undefined && config.toolTaskQueue !== workflowInfo().taskQueue) return undefined;
  const context = host.toolPermissions.context();
  if (!context) return undefined;
  return { cwd: config.cwd, ...(context.homeDir && { homeDir: context.homeDir }) };
}

/** The model call of one query. */
export function createModelCall(
  host: QueryHost,
  query: ActiveQuery,
  options: ActivityOptionsSet,
  chain: LocalChain,
): (request: ModelRequest, executor: StreamingToolExecutor) => Promise<ModelResponse> {
  const { config, conversationId } = host;
  let lastContext: { system: unknown; userContext: unknown; tools: unknown; digest: string } | undefined;

  /**
   * The regular model activity, on the workflow's queue — `attemptsMade` attempts of this call were
   * made already (they count against the retry policy's maximum) — or, for a handed-over call, one
   * attempt on the queue of the worker that holds its stream (retries there would wait on a queue
   * only that worker polls, which may be gone: `startModelCall` goes on on the workflow's queue).
   */
  const regularModelCall = (input: CallModelInput, summary: string, attach?: { taskQueue: string }, attemptsMade = 0): Promise<CallModelResult> => {
    chain.afterRegular();
    const retry = { ...options.model.retry, maximumAttempts: attach ? 1 : Math.max(1, (options.model.retry?.maximumAttempts ?? 10) - attemptsMade) };
    return activities(
      attach
        ? {
            ...options.model,
            retry,
            taskQueue: attach.taskQueue,
            scheduleToStartTimeout: config.modelHandoffStartTimeoutMs ?? 10_000,
            summary: `${summary} (streaming)`,
          }
        : { ...options.model, retry, summary },
    ).callModel(input);
  };

  /**
   * One model call: local first (an instant answer costs no server round trip), handed over to a
   * regular activity on the worker holding the stream when the model is still streaming at the
   * chain's deadline or the request failed — and on to the workflow's queue if that one attempt
   * fails — or regular from the start.
   */
  const startModelCall = async (input: CallModelInput, summary: string): Promise<CallModelResult | Exclude<CallModelLocalResult, { type: 'handoff' }>> => {
    const route = routeModelCall(config.localModelCalls !== false, chain.elapsedMs);
    if (route.kind === 'regular') return regularModelCall(input, summary);
    let local: CallModelLocalResult;
    try {
      local = await localActivities(localModelCallOptions(route.handoffAfterMs, summary)).callModelLocal({
        ...input,
        handoffAfterMs: route.handoffAfterMs,
        handoffStartTimeoutMs: config.modelHandoffStartTimeoutMs,
        prefetch: toolPrefetchPlan({
          config,
          taskQueue: workflowInfo().taskQueue,
          // A read PreToolUse hooks match waits for them (issue 22): no read before the hook said yes.
          localTools: host.hooks ? new Set([...LOCAL_TOOLS].filter((name) => !host.hooks!.matchesPreToolUse(name))) : LOCAL_TOOLS,
          permission: () => host.toolPermissions.context(),
          stream: host.live?.enabled ? { workflowId: conversationId } : undefined,
        }),
      });
    } catch (error) {
      if (isCancellation(error)) throw error;
      // The local phase itself broke (it reports API failures as handoffs): send the call afresh.
      return regularModelCall({ ...input, attemptOffset: 1 }, summary);
    }
    if (local.type !== 'handoff') {
      // The whole local phase counts, prefetched reads included (older results have only the model's time).
      chain.afterLocal(local.elapsedMs ?? local.durationMs);
      return local;
    }
    if (!local.attach) return regularModelCall(input, summary);
    try {
      return await regularModelCall({ ...input, attach: { key: local.attach.key } }, summary, { taskQueue: local.attach.taskQueue });
    } catch (error) {
      // Its one attempt failed — the API's answer, its worker gone (never picked up, or died
      // mid-stream), shut down: the call goes on on the workflow's queue, as a retry would have.
      const next = continueAfterAttachFailure(attachFailure(error, query.aborted), config.modelInitialRetryIntervalMs);
      if (!next) throw error;
      if (next.delayMs > 0) await sleep(next.delayMs, { summary: `${summary}: retry after a failed attempt` });
      return regularModelCall({ ...input, attemptOffset: 1, overloadedBefore: next.overloadedBefore }, summary, undefined, 1);
    }
  };

  return async (request, executor) => {
    host.setPhase('calling_model');
    const requestId = uuid4();
    // The same prompt layers for every call of a query: digest them once.
    // MCP tools re-listed mid-query (list_changed) are offered from the next call on.
    if (lastContext?.system !== request.system || lastContext.userContext !== request.userContext || lastContext.tools !== host.extensionTools) {
      lastContext = {
        system: request.system,
        userContext: request.userContext,
        tools: host.extensionTools,
        digest: host.registerRequestContext(request.system, request.userContext),
      };
    }
    const permissionFacts = permissionFactsWhereToolsRun(host);
    const activityInput: CallModelInput = {
      conversationId,
      model: request.model,
      maxTokens: request.maxTokens,
      ...thinkingOptions(config, host.sessionContext),
      transcript: request.transcript,
      context: { digest: lastContext.digest },
      streamToolUses: config.streamingToolExecution
        ? { workflowId: conversationId, runId: workflowInfo().runId, requestId, ...(permissionFacts && { permissionFacts }) }
        : undefined,
      fallbackAvailable: Boolean(config.fallbackModel) && request.model !== config.fallbackModel,
      stream: host.live?.enabled
        ? {
            workflowId: conversationId,
            requestId,
            fallback: config.fallbackModel && request.model === config.fallbackModel && request.model !== config.model ? 1 : 0,
          }
        : undefined,
    };
    const reads = query.startModelCall(requestId, executor);
    const summary =
      reads.length > 0
        ? modelCallSummaryWithReads(request.model, host.conversationTurn, host.queryCount, reads)
        : modelCallSummary(request.model, host.conversationTurn, host.queryCount);
    try {
      // In the query's scope (an abort cancels it); no scope of its own: nothing cancels one model call alone.
      const result = await query.scope.run(() => startModelCall(activityInput, summary));
      if (result.finishedAt !== undefined) host.observeWorkerClock?.(result.finishedAt);
      if (result.type === 'message') {
        query.answeredWith(prefetchedCalls(result));
        for (const [id, call] of query.prefetched ?? []) if (call.facts) host.toolPermissions.rememberFacts({ id, input: call.block.input }, call.facts);
        host.recordModelResponse(result.message, request.model, result.durationMs);
        return { type: 'message', message: result.message, durationMs: result.durationMs };
      }
      return { type: 'prompt_too_long', errorMessage: result.errorMessage, durationMs: result.durationMs };
    } catch (error) {
      if (query.aborted || isCancellation(error)) return { type: 'aborted' };
      return { type: isOverloadedFailure(error) ? 'overloaded' : 'error', errorMessage: failureMessage(error) };
    } finally {
      query.endModelCall();
    }
  };
}
