/**
 * The loop's effects behind one seam (style §16; Claude Code's `query/deps.ts`): activity
 * options, the mapping of activity failures onto the loop's data outcomes, and the adapters the
 * loop calls — model calls by reference, tools, Stop hooks. `createQueryDeps` assembles them
 * for one query; a subagent can reuse it with other options.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  type ActivityOptions,
  isCancellation,
  type LocalActivityOptions,
  TimeoutFailure,
  CancelledFailure,
  sleep,
  patched,
  proxyActivities,
  proxyLocalActivities,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { msOptionalToNumber } from '@temporalio/common/lib/time';
import type { Activities } from '../activities';
import type { CallModelInput, CallModelLocalResult, CallModelResult, RequestContext, SessionContext } from '../common/activity-types';
import type { ConversationConfig } from '../common/config';
import type { AssistantApiMessage, ToolUseBlock, Usage, UserMessage } from '../common/messages';
import { textOf } from '../common/messages';
import type { ModelUsage, Terminal, TransitionType } from '../common/result';
import { STRUCTURED_OUTPUT_REQUIRED_MESSAGE, STRUCTURED_OUTPUT_TOOL_NAME } from '../common/structured-output';
import type { QueryAccounting } from './query-accounting';
import { resultSummary } from '../common/stream-items';
import { getToolSpec } from '../common/tool-specs';
import { TOOL_ERROR_FAILURE_TYPE, type ToolErrorDetails, toolCallSummary } from '../common/tool-ui';
import type { Phase, ToolInFlight } from './definitions';
import type { GateVerdict } from './permission-gate';
import type { LiveStream } from './live-stream';
import type { CompactOutcome, CompactRequestParams, CompactResponse } from './compact';
import type { ModelResponse, QueryDeps, StopHookDecision } from './query-loop';
import { StreamingToolExecutor } from './tool-orchestration';
import { runSubagent, subagentWorkflowId } from './subagents';
import { toolResultBudget } from '../common/tool-result-budget';
import type { Transcript } from './transcript';
import { UI_TIMELINE_PATCH, modelCallSummary, modelCallSummaryWithReads } from './ui-details';
import { uiPatched } from './visibility';
import { type AttachFailure, LOCAL_MODEL_CALLS_PATCH, chainAfter, continueAfterAttachFailure, routeModelCall } from './local-model-calls';
import { type PrefetchedCalls, TOOL_PREFETCH_PATCH, prefetchedCalls, takePrefetched, toolPrefetchPlan } from './tool-prefetch';
import type { PermissionContext } from '../common/permissions';
import type { CallFacts } from '../common/permission-facts';

/**
 * Budget for one payload: below Temporal's default 2 MB limit, with room for the payload's
 * metadata and the rest of the command. Model calls go by reference, so only continue-as-new
 * carries the transcript in one payload; a larger one stays in its run (its history still grows
 * linearly).
 */
export const MAX_PAYLOAD_BYTES = 1_800_000;
/**
 * Short read-only tools run as local activities: in the workflow task that asked for them, on
 * the worker that runs the workflow, with no server round trip (one dispatch per loop iteration
 * instead of two). They keep the durability guarantees: read-only calls may simply run again
 * (a local activity is at-least-once), and they never run long (a minute at most, unlike Bash).
 */
export const LOCAL_TOOLS: ReadonlySet<string> = new Set(['Read', 'Glob', 'Grep']);
/** patched() id of the switch to local activities for LOCAL_TOOLS (older histories used regular ones). */
export const LOCAL_READ_ONLY_TOOLS_PATCH = 'local-read-only-tools';
/** Failures of the model activity that mean "overloaded": the fallback model may take over. */
const OVERLOADED_FAILURE_TYPES = new Set(['overloaded_error', 'FallbackTriggered']);

/** The query being run: its cancellation scope and the model call in flight. */
export interface ActiveQuery {
  scope: CancellationScope;
  aborted: boolean;
  executor?: StreamingToolExecutor;
  requestId?: string;
  streamAttempt?: number;
  /** Reads the last model call's local phase ran for its answer (workflows/tool-prefetch.ts). */
  prefetched?: PrefetchedCalls;
  /** Summaries of the prefetched reads whose results the next model call sends (its label names them). */
  prefetchedRun?: string[];
}

/** What the effects read and report on the session (implemented by `ConversationSession`). */
export interface QueryHost {
  readonly conversationId: string;
  readonly config: ConversationConfig;
  readonly transcript: Transcript;
  readonly toolsInFlight: Map<string, ToolInFlight>;
  /** The live channel: tool starts and results go there, and activities publish to it. */
  readonly live?: LiveStream;
  readonly sessionContext: SessionContext | undefined;
  /** A subagent's usage and cost count in this conversation's totals. */
  recordChildUsage(usage: Usage, costUsd: number, modelUsage?: Record<string, ModelUsage>): void;
  readonly turnCount: number;
  /** The query's structured output and limits (`jsonSchema`, `maxBudgetUsd`). */
  readonly accounting: QueryAccounting;
  checkLimits(after: 'assistant' | 'tool_results'): Terminal | undefined;
  /** Turn number over the whole conversation, and queries so far (the UI's labels). */
  readonly conversationTurn: number;
  readonly queryCount: number;
  readonly currentModel: string;
  setPhase(phase: Phase): void;
  /** Names the request context (these prompt layers and the tools) by digest and makes it available to workers. */
  registerRequestContext(system: RequestContext['system'], userContext: string | undefined): string;
  /** Usage, cost and context size of a completed model call. */
  recordModelResponse(message: AssistantApiMessage, model: string, durationMs: number): void;
  /** Usage and cost of a call that produced no transcript message (a compaction). */
  recordUsage(usage: Usage, model: string, durationMs: number): void;
  /** The digest of the request context in effect (registered by the last model call, or now). */
  currentRequestContext(): string;
  onCompacting(trigger: CompactOutcome['trigger']): void;
  onCompaction(outcome: CompactOutcome, consecutiveFailures: number): void;
  onContextTokens(tokens: number): void;
  takeQueuedInputs(): UserMessage[];
  onTransition(transition: TransitionType): void;
  onModelChange(model: string): void;
  shouldSuspend(): boolean;
  /** seed §2.10 canUseTool: before every tool run (may wait for a person). */
  checkPermission(block: ToolUseBlock): Promise<GateVerdict>;
  /** Facts a model call gathered for a tool_use of its answer, where the tool acts (the gate need not gather them again). */
  rememberPermissionFacts?(block: { id: string; input: unknown }, facts: CallFacts): void;
  /** A large result was saved to this file (outside the workspace): reading it back needs no approval. */
  allowReadOfPersistedResult?(file: string): void;
  /** A local activity's clock reading (CallModelResult.finishedAt): the query's duration counts up to at least it. */
  observeWorkerClock?(at: number): void;
  /** The permission gate's rule context, or undefined when tools run unchecked (a local model call prefetches what it allows). */
  toolPermissionContext?(): PermissionContext | undefined;
}

/** Activity options, in one place. */
/**
 * The conversation's thinking settings as a model call's input carries them (absent fields:
 * defaults): `--thinking` first, else the settings' `alwaysThinkingEnabled`.
 */
export function thinkingOptions(config: ConversationConfig, sessionContext: SessionContext | undefined): Pick<CallModelInput, 'thinking' | 'effort'> {
  const thinking = config.thinking ?? sessionContext?.alwaysThinkingEnabled;
  return { ...(thinking !== undefined ? { thinking } : {}), ...(config.effort ? { effort: config.effort } : {}) };
}

export function activityOptions(config: ConversationConfig): Record<'model' | 'tool' | 'stopHooks' | 'sessionContext', ActivityOptions> {
  return {
    model: {
      // 64k output tokens (the escalated cap) can take well over 10 minutes; heartbeats, not this
      // timeout, detect a dead worker.
      startToCloseTimeout: '1 hour',
      heartbeatTimeout: config.modelHeartbeatTimeoutMs,
      cancellationType: ActivityCancellationType.TRY_CANCEL,
      retry: {
        initialInterval: config.modelInitialRetryIntervalMs,
        backoffCoefficient: 2,
        maximumInterval: '1 minute',
        maximumAttempts: config.modelMaximumAttempts,
      },
    },
    tool: {
      taskQueue: config.toolTaskQueue,
      // Bash may run for up to 10 minutes; heartbeats detect a dead worker much sooner.
      startToCloseTimeout: '11 minutes',
      heartbeatTimeout: config.toolHeartbeatTimeoutMs,
      // Wait for the activity to acknowledge, so an aborted command's processes are dead when the
      // query returns.
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: { initialInterval: '1 second', maximumAttempts: 5 },
    },
    stopHooks: {
      taskQueue: config.toolTaskQueue,
      startToCloseTimeout: '11 minutes',
      heartbeatTimeout: config.toolHeartbeatTimeoutMs,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: { maximumAttempts: 3 },
    },
    // On the workspace's host, like the tools: CLAUDE.md, git state and settings live there.
    sessionContext: {
      taskQueue: config.toolTaskQueue,
      startToCloseTimeout: '1 minute',
      retry: { maximumAttempts: 5 },
      summary: 'Load session context',
    },
  };
}

/** Activities with these options (and a UI summary). */
export function activities(options: ActivityOptions): Activities {
  return proxyActivities<Activities>(options);
}

/** patched() id of the StructuredOutput check in the checkStructuredOutput activity (older histories: zod in the workflow). */
const STRUCTURED_OUTPUT_ACTIVITY_PATCH = 'structured-output-activity';

/** Local activities for LOCAL_TOOLS. */
function localActivities(options: LocalActivityOptions): Activities {
  return proxyLocalActivities<Activities>(options);
}

const LOCAL_TOOL_OPTIONS: LocalActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumAttempts: 5 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/**
 * The local phase of a model call answers by its deadline (the margin only covers a slow start);
 * it is not retried here: failures come back as handoffs, and the regular activity retries.
 */
function localModelCallOptions(handoffAfterMs: number, summary: string): LocalActivityOptions {
  return { startToCloseTimeout: handoffAfterMs + 60_000, retry: { maximumAttempts: 1 }, cancellationType: ActivityCancellationType.TRY_CANCEL, summary };
}

/** The API's retry-after a model failure carries in its details (a decoded failure has no nextRetryDelay). */
function retryAfterOf(failure: ApplicationFailure): number | undefined {
  const details = failure.details?.[0] as { retryAfterMs?: unknown } | undefined;
  if (typeof details?.retryAfterMs === 'number') return details.retryAfterMs;
  return msOptionalToNumber(failure.nextRetryDelay ?? undefined);
}

/** What continueAfterAttachFailure needs of a handed-over call's failure. */
function attachFailure(error: unknown, aborted: boolean): AttachFailure {
  if (!(error instanceof ActivityFailure)) return { aborted, nonRetryable: true };
  const cause = error.cause;
  if (cause instanceof ApplicationFailure) {
    return { aborted, nonRetryable: cause.nonRetryable === true, type: cause.type ?? undefined, nextRetryDelayMs: retryAfterOf(cause) };
  }
  // A timeout (never picked up, or its worker died mid-stream) or a cancellation the workflow did not ask for (a shutdown).
  return { aborted, nonRetryable: !(cause instanceof TimeoutFailure || cause instanceof CancelledFailure) };
}

/**
 * Whether this call runs as a local activity: a LOCAL_TOOLS call, when tools run on the
 * workflow's own task queue (a `toolTaskQueue` names the workspace's host, which a local activity
 * cannot reach).
 */
function runsLocally(config: ConversationConfig, name: string): boolean {
  if (!config.localReadOnlyTools || !LOCAL_TOOLS.has(name)) return false;
  if (config.toolTaskQueue !== undefined && config.toolTaskQueue !== workflowInfo().taskQueue) return false;
  return patched(LOCAL_READ_ONLY_TOOLS_PATCH);
}

/**
 * Where a model call may gather the permission facts of the calls it streams: only when tools run
 * on the workflow's own queue (any worker that runs the call can then run the tools) and permissions are checked.
 */
function permissionFactsWhereToolsRun(config: ConversationConfig, host: QueryHost): { cwd: string; homeDir?: string } | undefined {
  if (config.toolTaskQueue !== undefined && config.toolTaskQueue !== workflowInfo().taskQueue) return undefined;
  const context = host.toolPermissionContext?.();
  if (!context) return undefined;
  return { cwd: config.cwd, ...(context.homeDir && { homeDir: context.homeDir }) };
}

/** What Bash's sandbox needs from the conversation: the working directories besides cwd, and which settings files apply. */
function sandboxInputs(config: ConversationConfig, host: QueryHost): { additionalDirectories?: string[]; settingSources?: ConversationConfig['settingSources'] } {
  const others = (host.toolPermissionContext?.()?.workingDirectories ?? []).filter((directory) => directory !== config.cwd);
  return { ...(others.length > 0 && { additionalDirectories: others }), ...(config.settingSources && { settingSources: config.settingSources }) };
}

/** The loop's deps for one query, wired to activities. */
export function createQueryDeps(host: QueryHost, query: ActiveQuery): QueryDeps {
  const { config, conversationId } = host;
  const options = activityOptions(config);
  let lastContext: { system: unknown; userContext: unknown; digest: string } | undefined;

  /** Time the current chain of local steps has held the workflow task open (local-model-calls.ts). */
  let localChainMs = 0;

  /**
   * The regular model activity, on the workflow's queue — `attemptsMade` attempts of this call were
   * made already (they count against the retry policy's maximum) — or, for a handed-over call, one
   * attempt on the queue of the worker that holds its stream (retries there would wait on a queue
   * only that worker polls, which may be gone: `startModelCall` goes on on the workflow's queue).
   */
  const regularModelCall = (input: CallModelInput, summary: string, attach?: { taskQueue: string }, attemptsMade = 0): Promise<CallModelResult> => {
    localChainMs = chainAfter(localChainMs, { local: false });
    const retry = { ...options.model.retry, maximumAttempts: attach ? 1 : Math.max(1, (options.model.retry?.maximumAttempts ?? 10) - attemptsMade) };
    return activities(
      attach
        ? { ...options.model, retry, taskQueue: attach.taskQueue, scheduleToStartTimeout: config.modelHandoffStartTimeoutMs ?? 10_000, summary: `${summary} (streaming)` }
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
    const route = routeModelCall(config.localModelCalls !== false && patched(LOCAL_MODEL_CALLS_PATCH), localChainMs);
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
          localTools: LOCAL_TOOLS,
          permission: host.toolPermissionContext && (() => host.toolPermissionContext!()),
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
      localChainMs = chainAfter(localChainMs, { local: true, elapsedMs: local.elapsedMs ?? local.durationMs });
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

  const callModel = async (request: Parameters<QueryDeps['callModel']>[0], executor: StreamingToolExecutor): Promise<ModelResponse> => {
    host.setPhase('calling_model');
    const requestId = uuid4();
    // The same prompt layers for every call of a query: digest them once.
    if (lastContext?.system !== request.system || lastContext.userContext !== request.userContext) {
      lastContext = { system: request.system, userContext: request.userContext, digest: host.registerRequestContext(request.system, request.userContext) };
    }
    const permissionFacts = permissionFactsWhereToolsRun(config, host);
    const activityInput: CallModelInput = {
      conversationId,
      model: request.model,
      maxTokens: request.maxTokens,
      ...thinkingOptions(config, host.sessionContext),
      transcript: request.transcript,
      context: { digest: lastContext.digest },
      streamToolUses: config.streamingToolExecution ? { workflowId: conversationId, runId: workflowInfo().runId, requestId, ...(permissionFacts && { permissionFacts }) } : undefined,
      fallbackAvailable: Boolean(config.fallbackModel) && request.model !== config.fallbackModel,
      stream: host.live?.enabled
        ? { workflowId: conversationId, requestId, fallback: config.fallbackModel && request.model === config.fallbackModel && request.model !== config.model ? 1 : 0 }
        : undefined,
    };
    query.requestId = requestId;
    query.streamAttempt = undefined;
    query.executor = executor;
    query.prefetched = undefined;
    const reads = query.prefetchedRun ?? [];
    query.prefetchedRun = undefined;
    const summary = !uiPatched()
      ? `${request.model}: turn ${host.turnCount}`
      : reads.length > 0 && patched(UI_TIMELINE_PATCH)
        ? modelCallSummaryWithReads(request.model, host.conversationTurn, host.queryCount, reads)
        : modelCallSummary(request.model, host.conversationTurn, host.queryCount);
    try {
      // In the query's scope (an abort cancels it); no scope of its own: nothing cancels one model call alone.
      const result = await query.scope.run(() => startModelCall(activityInput, summary));
      if (result.finishedAt !== undefined) host.observeWorkerClock?.(result.finishedAt);
      if (result.type === 'message') {
        query.prefetched = prefetchedCalls(result);
        for (const [id, call] of query.prefetched ?? []) if (call.facts) host.rememberPermissionFacts?.({ id, input: call.block.input }, call.facts);
        host.recordModelResponse(result.message, request.model, result.durationMs);
        return { type: 'message', message: result.message, durationMs: result.durationMs };
      }
      return { type: 'prompt_too_long', errorMessage: result.errorMessage, durationMs: result.durationMs };
    } catch (error) {
      if (query.aborted || isCancellation(error)) return { type: 'aborted' };
      const failureType = error instanceof ActivityFailure && error.cause instanceof ApplicationFailure ? error.cause.type : undefined;
      const errorMessage = failureMessage(error);
      if (failureType && OVERLOADED_FAILURE_TYPES.has(failureType)) return { type: 'overloaded', errorMessage };
      return { type: 'error', errorMessage };
    } finally {
      query.requestId = undefined;
    }
  };

  const runTool = async (block: ToolUseBlock, siblings: number) => {
    const spec = getToolSpec(block.name);
    const summary = toolCallSummary(block.name, block.input);
    const entry: ToolInFlight = { toolUseId: block.id, name: block.name, summary, startedAt: Date.now() };
    host.toolsInFlight.set(block.id, entry);
    host.setPhase('running_tools');
    host.live?.publishTool({ type: 'tool_start', toolUseId: block.id, name: block.name, summary });
    let outcome: { content: string; isError: boolean } | undefined;
    try {
      if (block.name === STRUCTURED_OUTPUT_TOOL_NAME && config.jsonSchema) {
        // Issue 23: checked once by a standard validator in a local activity, its verdict recorded, so
        // replay cannot decide differently; older histories checked it here with zod.
        if (!patched(STRUCTURED_OUTPUT_ACTIVITY_PATCH)) return (outcome = host.accounting.provideStructuredOutput(block.input));
        const check = await localActivities({ ...LOCAL_TOOL_OPTIONS, summary }).checkStructuredOutput({ schema: config.jsonSchema, input: block.input });
        return (outcome = host.accounting.recordStructuredOutput(check));
      }
      // A tool this conversation does not offer (an Explore agent's Write) is not run, whatever the model asks.
      const offered = config.tools;
      if (offered && !offered.includes(block.name)) {
        outcome = { isError: true, content: `No such tool available: ${block.name}. Available tools: ${offered.join(', ')}` };
        return outcome;
      }
      const verdict = await host.checkPermission(block);
      // Every return sets `outcome`: the live tool line shows it ("cancelled" only when none came; the stream is in memory).
      if (verdict.behavior === 'deny') return (outcome = { isError: true, content: verdict.message });
      if (block.name === 'Agent') {
        entry.childWorkflowId = subagentWorkflowId(conversationId, block.id);
        return (outcome = await runSubagent(host, block));
      }
      const local = runsLocally(config, block.name);
      // The model call's local phase ran this read already (workflows/tool-prefetch.ts): its result, recorded in that call's marker.
      const prefetched = local ? takePrefetched(query.prefetched, block, siblings) : undefined;
      if (prefetched && patched(TOOL_PREFETCH_PATCH)) {
        // As below (a failed call's persisted file is not offered back, as the ToolError path does not).
        if (!prefetched.isError && prefetched.persistedPath) host.allowReadOfPersistedResult?.(prefetched.persistedPath);
        query.prefetchedRun = [...(query.prefetchedRun ?? []), summary];
        return (outcome = { content: prefetched.content, isError: prefetched.isError });
      }
      const runner = local ? localActivities({ ...LOCAL_TOOL_OPTIONS, summary }) : activities({ ...options.tool, summary });
      const result = await runner.runTool({
        conversationId,
        toolUseId: block.id,
        name: block.name,
        input: block.input,
        cwd: config.cwd,
        // seed §2.7 layer 1: the tool's cap, or its share of the message's aggregate budget.
        maxResultSizeChars: toolResultBudget(spec?.maxResultSizeChars ?? 30_000, siblings),
        stream: host.live?.enabled ? { workflowId: conversationId } : undefined,
        // What the tool enforces where it acts (real paths, Read deny rules): issue 17 §4.
        ...(verdict.access && { access: verdict.access }),
        // Bash's sandbox: the other working directories are writable in it; the settings files it reads (issue 17 §10).
        ...sandboxInputs(config, host),
      });
      if (!local) localChainMs = chainAfter(localChainMs, { local: false });
      if (result.persistedPath) host.allowReadOfPersistedResult?.(result.persistedPath);
      outcome = { content: result.content, isError: result.isError };
      return outcome;
    } catch (error) {
      if (isCancellation(error)) throw error;
      // A tool that ended in error (failed on purpose, to show in red in the UI): its result.
      const toolError = toolErrorResult(error);
      if (toolError) return (outcome = { content: toolError.content, isError: true });
      // Infrastructure failure after retries: the model still gets a result it can act on.
      outcome = { content: `Tool execution failed: ${failureMessage(error)}`, isError: true };
      return outcome;
    } finally {
      host.live?.publishTool({
        type: 'tool_end',
        toolUseId: block.id,
        name: block.name,
        isError: outcome?.isError ?? true,
        summary: outcome ? resultSummary(outcome.content) : 'cancelled',
      });
      // A discarded early run may share its id with the final one: remove only our own entry.
      if (host.toolsInFlight.get(block.id) === entry) host.toolsInFlight.delete(block.id);
      // Tools started early finish while the model may still stream.
      if (host.toolsInFlight.size === 0 && query.requestId !== undefined) host.setPhase('calling_model');
    }
  };

  const runStopHooks: QueryDeps['runStopHooks'] = async ({ lastAssistant, stopHookActive }) => {
    const hooks = [...(host.sessionContext?.stopHooks ?? []), ...(config.stopHooks ?? [])];
    const decision: StopHookDecision = { blockingErrors: [], preventContinuation: false, notices: [] };
    // Claude Code's structured-output enforcement is a Stop hook too: no valid call yet, no stopping.
    if (host.accounting.structuredOutputMissing) decision.blockingErrors.push(STRUCTURED_OUTPUT_REQUIRED_MESSAGE);
    if (hooks.length === 0) return decision;
    host.setPhase('stop_hooks');
    const scope = new CancellationScope({ cancellable: true, parent: query.scope });
    try {
      const { outcomes } = await scope.run(() =>
        activities({
          ...options.stopHooks,
          summary: `Stop hooks (${hooks.reduce((count, matcher) => count + matcher.hooks.length, 0)})`,
        }).runStopHooks({
          conversationId,
          cwd: config.cwd,
          hooks,
          stopHookActive,
          lastAssistantMessage: textOf(lastAssistant),
          ...sandboxInputs(config, host),
        }),
      );
      for (const outcome of outcomes) {
        if (outcome.blockingError) decision.blockingErrors.push(outcome.blockingError);
        if (outcome.preventContinuation) {
          decision.preventContinuation = true;
          decision.stopReason = outcome.stopReason ?? decision.stopReason;
        }
        if (outcome.nonBlockingError) decision.notices.push(`Stop hook error (${outcome.command}): ${outcome.nonBlockingError}`);
      }
    } catch (error) {
      if (isCancellation(error)) return decision;
      decision.notices.push(`Stop hooks failed: ${failureMessage(error)}`);
    }
    return decision;
  };

  return {
    uuid: uuid4,
    now: () => Date.now(),
    compactConversation: (request) => compactConversation(host, query, request),
    onCompacting: (trigger) => host.onCompacting(trigger),
    onCompaction: (outcome, failures) => host.onCompaction(outcome, failures),
    onContextTokens: (tokens) => host.onContextTokens(tokens),
    newToolExecutor: () =>
      new StreamingToolExecutor({
        uuid: uuid4,
        runTool,
        isAborted: () => query.aborted,
        maxConcurrency: config.maxToolUseConcurrency,
        parentScope: query.scope,
      }),
    callModel: (request, executor) => callModel(request, executor as StreamingToolExecutor),
    runStopHooks,
    takeQueuedInputs: () => host.takeQueuedInputs(),
    isAborted: () => query.aborted,
    shouldSuspend: () => host.shouldSuspend(),
    onModelChange: (model) => host.onModelChange(model),
    onTransition: (transition) => host.onTransition(transition),
    checkLimits: (after) => host.checkLimits(after),
  };
}

/**
 * seed §2.7: the compaction model call, as data for the loop (and for manual compaction): the
 * summary text, too long (the caller drops the oldest rounds), an error, or aborted.
 */
export async function compactConversation(
  host: Pick<QueryHost, 'conversationId' | 'config' | 'currentModel' | 'currentRequestContext' | 'recordUsage' | 'setPhase' | 'sessionContext'>,
  query: Pick<ActiveQuery, 'scope' | 'aborted'>,
  request: CompactRequestParams,
): Promise<CompactResponse> {
  host.setPhase('compacting');
  const scope = new CancellationScope({ cancellable: true, parent: query.scope });
  try {
    const result = await scope.run(() =>
      activities({ ...activityOptions(host.config).model, summary: `Compact conversation (${request.trigger})` }).compactConversation({
        conversationId: host.conversationId,
        model: host.currentModel,
        maxTokens: request.maxTokens,
        ...thinkingOptions(host.config, host.sessionContext),
        transcript: request.transcript,
        skip: request.skip,
        context: { digest: host.currentRequestContext() },
        customInstructions: request.customInstructions,
      }),
    );
    if (result.type === 'prompt_too_long') return { type: 'prompt_too_long', errorMessage: result.errorMessage };
    host.recordUsage(result.usage, result.model, result.durationMs);
    return { type: 'summary', text: result.text };
  } catch (error) {
    if (query.aborted || isCancellation(error)) return { type: 'aborted' };
    return { type: 'error', errorMessage: failureMessage(error) };
  }
}

/** The message of an activity failure (its cause), or of any error. */
export function failureMessage(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** A ToolError failure of the runTool activity: the is_error result it carries (undefined for any other failure). */
function toolErrorResult(error: unknown): ToolErrorDetails | undefined {
  if (!(error instanceof ActivityFailure) || !(error.cause instanceof ApplicationFailure) || error.cause.type !== TOOL_ERROR_FAILURE_TYPE) return undefined;
  const details = error.cause.details?.[0] as Partial<ToolErrorDetails> | undefined;
  return { content: typeof details?.content === 'string' ? details.content : error.cause.message };
}
