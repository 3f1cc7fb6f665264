/**
 * conversationWorkflow — the session layer (seed §2.10, QueryEngine). One workflow per
 * conversation: it owns the transcript, usage and status across queries, waits for input
 * signals, and runs each query through `queryLoop`, wiring the loop's deps to activities.
 *
 * Entity-workflow shape (style §4): handlers first, then wait with `condition`, and
 * `condition(allHandlersFinished)` before continue-as-new.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  type ActivityOptions,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { CallModelInput, SessionContext } from '../common/activity-types';
import { type ConversationConfig, conversationConfigSchema } from '../common/config';
import { MODEL_SEARCH_ATTRIBUTE, STATUS_SEARCH_ATTRIBUTE } from '../common/search-attributes';
import { costOfUsage } from '../common/cost';
import {
  EMPTY_USAGE,
  type Message,
  type ToolUseBlock,
  type TranscriptMessage,
  type Usage,
  type UserMessage,
  addUsage,
  textOf,
} from '../common/messages';
import { type ResultMessage, type Terminal, type TransitionType, subtypeFor } from '../common/result';
import { TOOL_NAMES, getToolSpec } from '../common/tool-specs';
import {
  type CarriedState,
  type ConversationEvent,
  type ConversationInput,
  type ConversationStatus,
  type ConversationSummary,
  type QueryInProgress,
  type Phase,
  type ToolInFlight,
  type UserInput,
  abortSignal,
  endSignal,
  eventsQuery,
  historyQuery,
  statusQuery,
  toolUseStreamedSchema,
  toolUseStreamedSignal,
  userInputSignal,
} from './definitions';
import { type ModelResponse, type QueryDeps, type StopHookDecision, type Suspended, queryLoop } from './query-loop';
import { buildEffectiveSystemPrompt, buildUserContext, getSystemPrompt } from './system-prompt';
import { createToolResultMessage, findDanglingToolUses } from './messages';
import { INTERRUPTED_BY_USER, StreamingToolExecutor } from './tool-orchestration';
import { parseTokenBudget } from './token-budget';

const MAX_EVENTS_KEPT = 1000;
/**
 * Budget for one payload (a model request, the continue-as-new input): below Temporal's default
 * 2 MB limit, with room for the payload's metadata and the rest of the command.
 */
const MAX_PAYLOAD_BYTES = 1_800_000;
/** Events carried across continue-as-new (the feed's tail). */
const EVENTS_CARRIED_OVER = 200;
/** Texts, tool inputs and tool results in the progress feed are cut to this (the transcript keeps them whole). */
const FEED_TOOL_RESULT_CHARS = 2_000;
/** Failures of the model activity that mean "overloaded": the fallback model may take over. */
const OVERLOADED_FAILURE_TYPES = new Set(['overloaded_error', 'FallbackTriggered']);

/** A conversation: a long-lived workflow that runs one query per user input. */
export async function conversationWorkflow(input: ConversationInput): Promise<ConversationSummary> {
  const parsed = conversationConfigSchema.safeParse(input.config);
  if (!parsed.success) {
    // A ZodError would fail the workflow task and retry forever; an ApplicationFailure fails the run.
    throw ApplicationFailure.nonRetryable(
      `Invalid conversation config: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`,
      'InvalidConfig',
    );
  }
  const config: ConversationConfig = parsed.data;
  const conversationId = workflowInfo().workflowId;
  const carried: CarriedState | undefined = input.carried;

  // ---- session state (QueryEngine fields) ----
  let messages: TranscriptMessage[] = carried?.messages ?? [];
  let usage: Usage = carried?.usage ?? EMPTY_USAGE;
  let totalCostUsd = carried?.totalCostUsd ?? 0;
  let queryCount = carried?.queryCount ?? 0;
  let lastResult: ResultMessage | undefined = carried?.lastResult;
  let lastQueryTransitions: TransitionType[] = carried?.lastQueryTransitions ?? [];
  const pendingInputs: Array<{ prompt: string; uuid: string }> = carried?.pendingInputs ?? [];
  let sessionContext: SessionContext | undefined = carried?.sessionContext;
  let nextEventSeq = carried?.nextEventSeq ?? 0;
  // The feed survives continue-as-new (its tail), so a client polling across the switch misses nothing.
  const events: ConversationEvent[] = carried?.recentEvents ?? [];

  let phase: Phase = 'idle';
  let endRequested = carried?.endRequested ?? false;
  /** A query suspended by the previous run, resumed before anything else. */
  let resuming: QueryInProgress | undefined = carried?.queryInProgress;
  /** An abort that arrived before the resumed query was running again. */
  let abortBeforeResume = false;
  /** False once the state proved too large for a continue-as-new payload. */
  let continueAsNewFits = true;
  const shouldContinueAsNew = (): boolean => {
    const info = workflowInfo();
    return info.continueAsNewSuggested || info.historyLength > config.continueAsNewAfterEvents;
  };
  let currentModel = config.model;
  let turnCount = 0;
  let transitions: TransitionType[] = [];
  let contextTokens = 0;
  const toolsInFlight = new Map<string, ToolInFlight>();
  let query:
    | { scope: CancellationScope; aborted: boolean; executor?: StreamingToolExecutor; requestId?: string; streamAttempt?: number }
    | undefined;

  // Set by the client only when the server has the attributes registered; upserting unknown ones would fail.
  const useSearchAttributes = workflowInfo().typedSearchAttributes.get(STATUS_SEARCH_ATTRIBUTE) !== undefined;

  const pushEvent = (message: ConversationEvent['message']): void => {
    events.push({ seq: nextEventSeq++, message: trimForFeed(message) });
    if (events.length > MAX_EVENTS_KEPT) events.splice(0, events.length - MAX_EVENTS_KEPT);
  };
  const setPhase = (next: Phase): void => {
    if (phase === next) return;
    phase = next;
    const tools = [...toolsInFlight.values()].map((tool) => tool.summary).join(', ');
    setCurrentDetails(`**${next}**${tools ? ` — ${tools}` : ''} · turn ${turnCount} · ${currentModel}`);
    if (useSearchAttributes) {
      upsertSearchAttributes([
        { key: STATUS_SEARCH_ATTRIBUTE, value: next },
        { key: MODEL_SEARCH_ATTRIBUTE, value: currentModel },
      ]);
    }
  };

  // ---- handlers first: signals can arrive before the main body runs ----
  setHandler(userInputSignal, (raw: UserInput | string) => {
    const prompt = typeof raw === 'string' ? raw : typeof raw === 'object' && raw !== null ? raw.prompt : undefined;
    if (typeof prompt !== 'string' || prompt.trim() === '') {
      // Signals cannot reply: log and drop (style §6).
      log.warn('Dropped userInput signal without a prompt', { received: raw });
      return;
    }
    const uuid = (typeof raw === 'object' && raw !== null && typeof raw.uuid === 'string' && raw.uuid) || uuid4();
    pendingInputs.push({ prompt, uuid });
  });
  setHandler(abortSignal, () => {
    if (!query) {
      // The new run receives buffered signals before its main body runs.
      if (resuming) abortBeforeResume = true;
      return;
    }
    if (query.aborted) return;
    query.aborted = true;
    query.scope.cancel();
  });
  setHandler(endSignal, () => {
    endRequested = true;
  });
  setHandler(toolUseStreamedSignal, (raw) => {
    const parsed = toolUseStreamedSchema.safeParse(raw);
    if (!parsed.success) {
      log.warn('Dropped malformed toolUseStreamed signal', { received: raw });
      return;
    }
    const streamed = parsed.data;
    // Only blocks of the model call now in flight count; late reports of an old attempt are dropped.
    if (!query?.executor || streamed.requestId !== query.requestId || query.aborted) return;
    // A report from a newer attempt of the same model call means the older attempt's stream was
    // abandoned: its early work is dropped. Reports from an older attempt come too late to count.
    const attemptSeen = query.streamAttempt ?? 0;
    if (streamed.attempt < attemptSeen) return;
    if (streamed.attempt > attemptSeen) {
      if (attemptSeen > 0) void query.executor.discard();
      query.streamAttempt = streamed.attempt;
    }
    query.executor.addTool(streamed.block as ToolUseBlock);
  });
  setHandler(statusQuery, (): ConversationStatus => ({
    conversationId,
    phase,
    model: config.model,
    currentModel,
    turnCount,
    queryCount,
    transitions: query ? transitions : [],
    lastQueryTransitions,
    toolsInFlight: [...toolsInFlight.values()],
    queuedInputs: pendingInputs.length,
    usage,
    totalCostUsd,
    contextTokens,
    messageCount: messages.length,
    lastResult,
    ended: phase === 'ended',
    continuedAsNewCount: carried?.continuedAsNewCount ?? 0,
    nextEventSeq,
  }));
  setHandler(eventsQuery, (afterSeq = 0) => ({
    events: events.filter((event) => event.seq >= afterSeq),
    nextSeq: nextEventSeq,
  }));
  setHandler(historyQuery, () => messages);

  // ---- activities ----
  const modelActivityOptions: ActivityOptions = {
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
  };
  const toolActivityOptions: ActivityOptions = {
    taskQueue: config.toolTaskQueue,
    // Bash may run for up to 10 minutes; heartbeats detect a dead worker much sooner.
    startToCloseTimeout: '11 minutes',
    heartbeatTimeout: config.toolHeartbeatTimeoutMs,
    // Wait for the activity to acknowledge, so an aborted command's processes are dead when the
    // query returns.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1 second', maximumAttempts: 5 },
  };
  const activities = (options: ActivityOptions) => proxyActivities<Activities>(options);

  if (!sessionContext && !carried?.sessionContextAttempted) {
    // seed §2.5: getSystemContext/getUserContext are memoized per session.
    try {
      // On the workspace's host, like the tools: CLAUDE.md, git state and settings live there.
      sessionContext = await activities({
        taskQueue: config.toolTaskQueue,
        startToCloseTimeout: '1 minute',
        retry: { maximumAttempts: 5 },
        summary: 'Load session context',
      }).loadSessionContext({
        cwd: config.cwd,
      });
    } catch (error) {
      // The conversation still works (no CLAUDE.md, git status or hooks); people are told why.
      log.warn('Could not load session context; continuing without it', { error: String(error) });
      pushEvent({
        type: 'system',
        uuid: uuid4(),
        level: 'warning',
        content: `Session context not loaded (no CLAUDE.md, git status or Stop hooks this session): ${failureMessage(error)}`,
      });
    }
  }

  // ---- the loop's deps, wired to activities ----
  const callModel = async (
    request: Parameters<QueryDeps['callModel']>[0],
    executor: StreamingToolExecutor,
  ): Promise<ModelResponse> => {
    if (!query) throw ApplicationFailure.nonRetryable('callModel outside a query', 'InternalError');
    setPhase('calling_model');
    const requestId = uuid4();
    const activityInput: CallModelInput = {
      conversationId,
      model: request.model,
      system: request.system,
      messages: request.messages,
      toolNames: config.tools ?? [...TOOL_NAMES],
      maxTokens: request.maxTokens,
      streamToolUses: config.streamingToolExecution
        ? { workflowId: conversationId, runId: workflowInfo().runId, requestId }
        : undefined,
      fallbackAvailable: Boolean(config.fallbackModel) && request.model !== config.fallbackModel,
    };
    // Temporal rejects payloads over 2 MB, and a rejected command would fail this workflow task
    // over and over. A request that large (possible only with very large context windows) is
    // too long for the transport: the loop treats it as prompt-too-long.
    const payloadBytes = jsonBytes(activityInput);
    if (payloadBytes > MAX_PAYLOAD_BYTES) {
      return {
        type: 'prompt_too_long',
        durationMs: 0,
        errorMessage:
          `The conversation is too large to pass through Temporal (${(payloadBytes / 1_000_000).toFixed(1)} MB; ` +
          `payloads are limited to 2 MB). Start a new conversation.`,
      };
    }
    query.requestId = requestId;
    query.streamAttempt = undefined;
    query.executor = executor;
    const scope = new CancellationScope({ cancellable: true, parent: query.scope });
    try {
      const result = await scope.run(() =>
        activities({ ...modelActivityOptions, summary: `${request.model}: turn ${turnCount}` }).callModel(activityInput),
      );
      usage = addUsage(usage, result.type === 'message' ? result.message.usage : undefined);
      if (result.type === 'message') {
        totalCostUsd += costOfUsage(result.message.model || request.model, result.message.usage);
        contextTokens =
          result.message.usage.input_tokens +
          result.message.usage.cache_creation_input_tokens +
          result.message.usage.cache_read_input_tokens;
        apiDurationMs += result.durationMs;
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

  const runTool = async (block: ToolUseBlock) => {
    const spec = getToolSpec(block.name);
    const summary = spec ? safeSummary(spec, block.input) : block.name;
    const entry: ToolInFlight = { toolUseId: block.id, name: block.name, summary, startedAt: Date.now() };
    toolsInFlight.set(block.id, entry);
    setPhase('running_tools');
    try {
      const result = await activities({ ...toolActivityOptions, summary }).runTool({
        conversationId,
        toolUseId: block.id,
        name: block.name,
        input: block.input,
        cwd: config.cwd,
        maxResultSizeChars: spec?.maxResultSizeChars ?? 30_000,
      });
      return { content: result.content, isError: result.isError };
    } catch (error) {
      if (isCancellation(error)) throw error;
      // Infrastructure failure after retries: the model still gets a result it can act on.
      return { content: `Tool execution failed: ${failureMessage(error)}`, isError: true };
    } finally {
      // A discarded early run may share its id with the final one: remove only our own entry.
      if (toolsInFlight.get(block.id) === entry) toolsInFlight.delete(block.id);
      // Tools started early finish while the model may still stream.
      if (toolsInFlight.size === 0 && query?.requestId !== undefined) setPhase('calling_model');
    }
  };

  const runStopHooks: QueryDeps['runStopHooks'] = async ({ lastAssistant, stopHookActive }) => {
    const hooks = [...(sessionContext?.stopHooks ?? []), ...(config.stopHooks ?? [])];
    const decision: StopHookDecision = { blockingErrors: [], preventContinuation: false, notices: [] };
    if (hooks.length === 0 || !query) return decision;
    setPhase('stop_hooks');
    const scope = new CancellationScope({ cancellable: true, parent: query.scope });
    try {
      const { outcomes } = await scope.run(() =>
        activities({
          taskQueue: config.toolTaskQueue,
          startToCloseTimeout: '11 minutes',
          heartbeatTimeout: config.toolHeartbeatTimeoutMs,
          cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
          retry: { maximumAttempts: 3 },
          summary: `Stop hooks (${hooks.reduce((count, matcher) => count + matcher.hooks.length, 0)})`,
        }).runStopHooks({
          conversationId,
          cwd: config.cwd,
          hooks,
          stopHookActive,
          lastAssistantMessage: textOf(lastAssistant),
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

  let apiDurationMs = 0;

  /** seed §2.10 submitMessage: one query, from the user's input to the result message. */
  /**
   * seed §2.10 submitMessage: one query, from the user's input to the result message. With
   * `resumed`, picks up a query that an earlier run suspended for continue-as-new. Returns the
   * query's progress when the loop suspends (the caller continues-as-new with it).
   */
  const submitMessage = async (pending: { prompt: string; uuid: string }, resumed?: QueryInProgress): Promise<QueryInProgress | undefined> => {
    const startedAt = resumed?.startedAt ?? Date.now();
    apiDurationMs = resumed?.apiDurationMs ?? 0;
    turnCount = resumed?.turnCount ?? 1;
    transitions = resumed ? [...resumed.transitions] : [];
    // A new query tries the primary model again; a resumed one keeps the model it had.
    currentModel = resumed?.checkpoint.currentModel ?? config.model;
    const usageBefore = resumed?.usageBefore ?? usage;
    const costBefore = resumed?.costBefore ?? totalCostUsd;
    const consumedInputUuids = resumed ? [...resumed.consumedInputUuids] : [pending.uuid];
    if (!resumed) {
      queryCount++;
      const userMessage: UserMessage = { type: 'user', uuid: pending.uuid, message: { role: 'user', content: pending.prompt } };
      messages = [...messages, userMessage];
      pushEvent({ type: 'user_input', uuid: pending.uuid, prompt: pending.prompt });
    }

    const scope = new CancellationScope({ cancellable: true });
    query = { scope, aborted: false };
    const activeQuery = query;
    if (resumed && abortBeforeResume) {
      abortBeforeResume = false;
      activeQuery.aborted = true;
      scope.cancel();
    }
    const deps: QueryDeps = {
      uuid: uuid4,
      newToolExecutor: () =>
        new StreamingToolExecutor({
          uuid: uuid4,
          runTool,
          isAborted: () => activeQuery.aborted,
          maxConcurrency: config.maxToolUseConcurrency,
          parentScope: scope,
        }),
      callModel: (request, executor) => callModel(request, executor as StreamingToolExecutor),
      runStopHooks,
      takeQueuedInputs: () =>
        pendingInputs.splice(0).map((input): UserMessage => {
          pushEvent({ type: 'user_input', uuid: input.uuid, prompt: input.prompt });
          consumedInputUuids.push(input.uuid);
          return { type: 'user', uuid: input.uuid, message: { role: 'user', content: input.prompt } };
        }),
      isAborted: () => activeQuery.aborted,
      // Mid-query continue-as-new keeps a long task's history bounded (architecture notes).
      shouldSuspend: () => continueAsNewFits && shouldContinueAsNew(),
      onModelChange: (model) => {
        currentModel = model;
      },
      onTransition: (transition) => {
        transitions.push(transition);
        if (transition === 'tool_use') turnCount++;
      },
    };

    let lastAssistantText = resumed?.lastAssistantText ?? '';
    let lastStopReason: string | null = resumed?.lastStopReason ?? null;
    const tokenBudget = resumed ? resumed.tokenBudget : (config.tokenBudget ?? parseTokenBudget(pending.prompt));
    let terminal: Terminal | Suspended;
    const generator = queryLoop(
      {
        messages,
        systemPrompt: buildEffectiveSystemPrompt({
          defaultPrompt: getSystemPrompt(sessionContext, config.model),
          customSystemPrompt: config.customSystemPrompt,
          appendSystemPrompt: config.appendSystemPrompt,
        }),
        userContext: buildUserContext(sessionContext),
        model: config.model,
        fallbackModel: config.fallbackModel,
        maxTurns: config.maxTurns,
        maxOutputTokens: config.maxOutputTokens,
        tokenBudget,
        contextWindowTokens: config.contextWindowTokens,
        resume: resumed?.checkpoint,
      },
      deps,
    );
    try {
      while (true) {
        const next = await generator.next();
        if (next.done) {
          terminal = next.value;
          break;
        }
        const message: Message = next.value;
        // seed §2.10 Phase D: append to history, update status, feed the progress events
        if (message.type === 'user' || message.type === 'assistant') messages = [...messages, message];
        if (message.type === 'tombstone') messages = messages.filter((existing) => existing.uuid !== message.target);
        if (message.type === 'assistant' && !message.apiError) {
          const text = textOf(message);
          if (text) lastAssistantText = text;
          lastStopReason = message.message.stop_reason;
        }
        pushEvent(message);
      }
    } catch (error) {
      // A bug in the loop must not lose the conversation: stop whatever still runs and end the
      // query with an error result (the history is repaired below).
      log.error('Query loop failed', { error: String(error) });
      scope.cancel();
      terminal = { reason: 'model_error', error: `Internal error: ${failureMessage(error)}` };
    } finally {
      query = undefined;
      toolsInFlight.clear();
    }

    if (terminal.reason === 'suspended') {
      return {
        pending,
        startedAt,
        usageBefore,
        costBefore,
        apiDurationMs,
        turnCount,
        transitions: [...transitions],
        consumedInputUuids,
        lastAssistantText,
        lastStopReason,
        tokenBudget,
        checkpoint: terminal.checkpoint,
      };
    }
    let inputDropped = false;
    if (terminal.reason === 'prompt_too_long' || terminal.reason === 'blocking_limit') {
      // Inputs the model never answered (the query's own, or ones queued into it) made the request
      // too large: keeping them would make every later query fail the same way. They leave the
      // transcript (the events feed keeps them); tool results and everything answered stay.
      const inputs = new Set(consumedInputUuids);
      const lastAnswered = messages.map((message) => message.type).lastIndexOf('assistant');
      const kept = messages.filter((message, index) => !(index > lastAnswered && message.type === 'user' && inputs.has(message.uuid)));
      inputDropped = kept.length !== messages.length;
      messages = kept;
    }
    // Safety net: the loop answers every tool_use itself; anything left would break the next request.
    const danglingContent = terminal.reason.startsWith('aborted') ? INTERRUPTED_BY_USER : 'The tool call did not complete.';
    const dangling = findDanglingToolUses(messages).map((id) => createToolResultMessage(uuid4(), { id }, danglingContent, true));
    messages = [...messages, ...dangling];
    lastQueryTransitions = transitions;
    const queryUsage = subtractUsage(usage, usageBefore);
    const isError = terminal.reason !== 'completed';
    const result: ResultMessage = {
      type: 'result',
      subtype: subtypeFor(terminal.reason),
      is_error: isError,
      result: isError
        ? `${terminal.error ?? describeTerminal(terminal)}${inputDropped ? ' The unanswered message was not kept in the conversation; send a shorter one.' : ''}`
        : lastAssistantText,
      num_turns: turnCount,
      duration_ms: Date.now() - startedAt,
      duration_api_ms: apiDurationMs,
      stop_reason: lastStopReason,
      total_cost_usd: totalCostUsd - costBefore,
      usage: queryUsage,
      permission_denials: [],
      session_id: conversationId,
      uuid: uuid4(),
      input_uuid: pending.uuid,
      input_uuids: [...consumedInputUuids],
      terminal_reason: terminal.reason,
      transitions: [...transitions],
      model: currentModel,
    };
    lastResult = result;
    pushEvent(result);
    toolsInFlight.clear();
    return undefined;
  };

  /**
   * Continues as new with the conversation's state, or returns false when that state would not
   * fit in one payload (then this run goes on, and does not try again: its history just grows).
   */
  const continueAsNewWith = async (queryInProgress?: QueryInProgress): Promise<false> => {
    await condition(allHandlersFinished);
    const next: CarriedState = {
      messages,
      usage,
      totalCostUsd,
      queryCount,
      pendingInputs,
      lastResult,
      lastQueryTransitions,
      continuedAsNewCount: (carried?.continuedAsNewCount ?? 0) + 1,
      nextEventSeq,
      recentEvents: events.slice(-EVENTS_CARRIED_OVER),
      sessionContext,
      sessionContextAttempted: true,
      queryInProgress,
      endRequested,
    };
    // The feed's tail is a convenience; the transcript is not.
    if (jsonBytes({ config: input.config, carried: next }) > MAX_PAYLOAD_BYTES) next.recentEvents = [];
    const bytes = jsonBytes({ config: input.config, carried: next });
    if (bytes > MAX_PAYLOAD_BYTES) {
      log.warn('Conversation state too large to continue as new; staying in this run', { bytes });
      continueAsNewFits = false;
      return false;
    }
    return continueAsNew<typeof conversationWorkflow>({ config: input.config, carried: next });
  };

  // ---- main body: wait for input, run queries, carry state forward ----
  if (input.initialPrompt) pendingInputs.unshift({ prompt: input.initialPrompt, uuid: input.initialPromptUuid ?? uuid4() });
  let endedBy: ConversationSummary['endedBy'] = 'end_signal';
  while (true) {
    let suspended: QueryInProgress | undefined;
    if (resuming) {
      const resumed = resuming;
      suspended = await submitMessage(resumed.pending, resumed);
      resuming = undefined;
    } else {
      setPhase(pendingInputs.length > 0 ? 'calling_model' : 'awaiting_input');
      const gotInput = await condition(() => pendingInputs.length > 0 || endRequested, config.idleTimeoutMs);
      if (!gotInput) {
        endedBy = 'idle_timeout';
        break;
      }
      if (pendingInputs.length === 0) break; // end requested with nothing queued
      suspended = await submitMessage(pendingInputs.shift()!);
    }
    if (suspended && !(await continueAsNewWith(suspended))) {
      resuming = suspended; // it did not fit: carry on with the same query in this run
      continue;
    }
    if (config.oneShot) {
      endedBy = 'one_shot';
      break;
    }
    if (endRequested && pendingInputs.length === 0) break;
    if (continueAsNewFits && shouldContinueAsNew()) await continueAsNewWith();
  }
  setPhase('ended');
  await condition(allHandlersFinished);
  return { conversationId, endedBy, queryCount, usage, totalCostUsd, lastResult };
}

/** UTF-8 size of a value as JSON — what Temporal's payload limit counts. */
function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}

/** Keeps the events feed (and so query payloads and continue-as-new input) small. */
function trimForFeed(message: ConversationEvent['message']): ConversationEvent['message'] {
  if (message.type === 'assistant') {
    // Tool inputs (a Write's whole file) and long texts are cut; the transcript keeps them.
    const content = message.message.content.map((block) => {
      if (block.type === 'text') return { ...block, text: trimText(block.text) };
      if (block.type === 'tool_use') {
        const input = JSON.stringify(block.input ?? null);
        return input.length > FEED_TOOL_RESULT_CHARS ? { ...block, input: { truncated: trimText(input) } } : block;
      }
      if (block.type === 'thinking') return { ...block, thinking: trimText(block.thinking), signature: undefined };
      return block;
    });
    return { ...message, message: { ...message.message, content } };
  }
  if (message.type !== 'user') return message;
  if (typeof message.message.content === 'string') return { ...message, message: { ...message.message, content: trimText(message.message.content) } };
  const content = message.message.content.map((block) =>
    block.type === 'tool_result' && typeof block.content === 'string' ? { ...block, content: trimText(block.content) } : block,
  );
  return { ...message, message: { ...message.message, content } };
}

function trimText(text: string): string {
  return text.length > FEED_TOOL_RESULT_CHARS ? `${text.slice(0, FEED_TOOL_RESULT_CHARS)}… (${text.length} characters)` : text;
}

function failureMessage(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}

function safeSummary(spec: NonNullable<ReturnType<typeof getToolSpec>>, input: unknown): string {
  const parsed = spec.inputSchema.safeParse(input);
  if (!parsed.success) return `${spec.name} (invalid input)`;
  try {
    return spec.summarize(parsed.data);
  } catch {
    return spec.name;
  }
}

function subtractUsage(after: Usage, before: Usage): Usage {
  return {
    input_tokens: after.input_tokens - before.input_tokens,
    output_tokens: after.output_tokens - before.output_tokens,
    cache_creation_input_tokens: after.cache_creation_input_tokens - before.cache_creation_input_tokens,
    cache_read_input_tokens: after.cache_read_input_tokens - before.cache_read_input_tokens,
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
