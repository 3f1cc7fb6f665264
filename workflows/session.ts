/**
 * The session layer's state (seed §2.10, QueryEngine), as an entity class (style §15; the
 * samples' safe-message-handlers `ClusterManager`): the transcript, usage, the events feed,
 * queued inputs and the running query, with `status()` for the query handler and `toCarried()`
 * for continue-as-new. `submitMessage` runs one query through `queryLoop` with the deps of
 * `createQueryDeps`. The workflow function (`conversation.ts`) only wires handlers to it.
 */
import {
  CancellationScope,
  getExternalWorkflowHandle,
  log,
  proxySinks,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { RequestContext, SessionContext } from '../common/activity-types';
import type { ConversationConfig } from '../common/config';
import { costOfUsage } from '../common/cost';
import { valueDigest } from '../common/digest';
import { type AssistantApiMessage, EMPTY_USAGE, type Message, type TranscriptMessage, type Usage, type UserMessage, addUsage, textOf } from '../common/messages';
import { type ModelUsage, type ResultMessage, type Terminal, type TransitionType, subtypeFor } from '../common/result';
import { TOOL_NAMES, isToolUseStartableEarly } from '../common/tool-specs';
import { contextLevel, fitMaxTokens, isBreakerOpen, thresholdsForModel, tokenCountWithEstimation } from './auto-compact';
import { COMPACT_MAX_OUTPUT_TOKENS, type CompactOutcome, compactWindow } from './compact';
import { MAX_PAYLOAD_BYTES, continueAsNewDecision, followsSuggestion } from './continue-as-new';
import type {
  CarriedState,
  CompactionOutcome,
  CompactionState,
  ContextStatus,
  ConversationEvent,
  ConversationStatus,
  SubagentOrigin,
  SubagentProgress,
  Phase,
  PendingInput,
  QueryInProgress,
  ToolInFlight,
  ToolUseStreamed,
  TranscriptCacheSinks,
  UserInput,
} from './definitions';
import { subagentProgressSignal, toolUseStreamedSchema } from './definitions';
import { PATCHES, patched } from './patches';
import { type GateVerdict, type PendingPermission, PermissionGate } from './permission-gate';
import { gatherCallFacts } from './permission-facts';
import { permissionsConfigSchema } from '../common/config';
import type { PermissionContext } from '../common/permissions';
import type { CallFacts } from '../common/permission-facts';
import { type ActiveQuery, type QueryHost, createQueryDeps } from './query-deps';
import { compactConversation } from './deps/compact-call';
import { failureMessage } from './deps/failures';
import { type LoopSession, type Suspended, queryLoop } from './query-loop';
import { QueryAccounting, outputValidator } from './query-accounting';
import { buildEffectiveSystemPrompt, buildUserContext, getSystemPrompt } from './system-prompt';
import { isSlashCommand } from './slash-commands';
import { parseTokenBudget } from './token-budget';
import { INTERRUPTED_BY_USER } from './tool-orchestration';
import { LiveStream } from './live-stream';
import { Transcript } from './transcript';
import { ConversationVisibility } from './visibility';
import type { ToolUseBlock } from '../common/messages';

const MAX_EVENTS_KEPT = 1000;
/**
 * Events carried across continue-as-new (the feed's tail: clients poll every 250 ms, so a few
 * dozen cover the switch). 200 made the feed ~90% of each continue-as-new input (bench/long-task:
 * 297 of 334 kB).
 */
const EVENTS_CARRIED_OVER = 50;
/** Texts, tool inputs and tool results in the progress feed are cut to this (the transcript keeps them whole). */
const FEED_TOOL_RESULT_CHARS = 2_000;
/** Request contexts kept for workers that miss them (the current query's, and a few before). */
const REQUEST_CONTEXTS_KEPT = 4;

const { transcriptCache } = proxySinks<TranscriptCacheSinks>();

export class ConversationSession implements QueryHost, LoopSession {
  readonly transcript: Transcript;
  readonly toolsInFlight = new Map<string, ToolInFlight>();
  usage: Usage;
  totalCostUsd: number;
  queryCount: number;
  lastResult: ResultMessage | undefined;
  lastQueryTransitions: TransitionType[];
  readonly pendingInputs: PendingInput[];
  sessionContext: SessionContext | undefined;
  /** Read the session context again before the next input (after a compaction or `/clear`; Claude Code re-reads CLAUDE.md then). */
  sessionContextStale: boolean;
  /** The conversation's settings; `/model` replaces the model. */
  config: ConversationConfig;
  phase: Phase = 'idle';
  endRequested: boolean;
  /** A query suspended by the previous run, resumed before anything else. */
  resuming: QueryInProgress | undefined;
  /** False once the state proved too large for a continue-as-new payload. */
  continueAsNewFits = true;
  currentModel: string;
  turnCount = 0;
  private transitions: TransitionType[] = [];
  /** The latest worker clock a local model call reported (observeWorkerClock). */
  private workerClockMs = 0;
  private contextTokens = 0;
  private apiDurationMs = 0;
  private nextEventSeq: number;
  /** The live channel clients read (issue 10); disabled in runs recorded before it. */
  readonly live: LiveStream;
  private readonly events: ConversationEvent[];
  private query: ActiveQuery | undefined;
  /** An abort that arrived before the resumed query was running again. */
  private abortBeforeResume = false;
  /** Inputs consumed by the running query (its own first). */
  private consumedInputUuids: string[] = [];
  private readonly requestContexts = new Map<string, RequestContext>();
  private lastRequestContextDigest: string | undefined;
  /** Current details and search attributes (the Temporal UI, `durable-agent list`). */
  private readonly visibility = new ConversationVisibility();
  /** Turns of the queries before the running one (the UI numbers turns over the whole conversation). */
  private completedTurns: number;
  /** Compactions and the autocompact failure streak (seed §2.7 circuit breaker, per conversation). */
  compaction: CompactionState;
  private compactedThisRun = false;
  /** A query or a manual compaction is running: the other waits. */
  busy = false;
  private readonly parentReports = new Set<Promise<void>>();
  /** The running (or last) query's usage per model, structured output and limits. */
  accounting: QueryAccounting;
  private readonly validateOutput: ReturnType<typeof outputValidator>;
  /** canUseTool: rules, modes and durable approvals (permission-gate.ts). */
  readonly permissions: PermissionGate;

  constructor(
    readonly conversationId: string,
    private readonly initialConfig: ConversationConfig,
    private readonly carried: CarriedState | undefined,
    /** Set when this conversation is a subagent (a child workflow of an Agent call). */
    readonly subagent?: SubagentOrigin,
    /** `start --resume`: the transcript this conversation continues from (first run only). */
    resumedMessages?: readonly TranscriptMessage[],
  ) {
    this.config = withDefaultPermissions(carried?.selectedModel ? { ...initialConfig, model: carried.selectedModel } : initialConfig);
    this.transcript = new Transcript(carried?.messages ?? resumedMessages ?? []);
    // A conversation resumed mid-tool: every tool_use needs its result before the next request.
    if (!carried && resumedMessages) this.transcript.closeDanglingToolUses('The tool call did not complete before the conversation was resumed.', uuid4);
    this.live = LiveStream.open(carried?.streamState, initialConfig.liveStream);
    // The worker's cache learns every change (model calls by reference); a new run starts it over.
    this.transcript.onChange((from, messages) => transcriptCache.feed(from, messages));
    if (this.transcript.length > 0) transcriptCache.feed(0, [...this.transcript.messages]);
    this.usage = carried?.usage ?? EMPTY_USAGE;
    this.totalCostUsd = carried?.totalCostUsd ?? 0;
    this.queryCount = carried?.queryCount ?? 0;
    this.lastResult = carried?.lastResult;
    this.lastQueryTransitions = carried?.lastQueryTransitions ?? [];
    this.pendingInputs = carried?.pendingInputs ?? [];
    // A subagent inherits its parent's session context instead of loading its own.
    this.sessionContext = carried?.sessionContext ?? subagent?.sessionContext;
    this.sessionContextStale = carried?.sessionContextStale ?? false;
    this.nextEventSeq = carried?.nextEventSeq ?? 0;
    // The feed survives continue-as-new (its tail), so a client polling across the switch misses nothing.
    this.events = carried?.recentEvents ?? [];
    this.endRequested = carried?.endRequested ?? false;
    this.resuming = carried?.queryInProgress;
    this.currentModel = this.config.model;
    this.compaction = carried?.compaction ?? { compactions: 0, consecutiveFailures: 0 };
    this.permissions = new PermissionGate(this.config, carried?.permissions, () => this.sessionContext?.permissionSettings, (block, homeDir) =>
      gatherCallFacts(this.config, block, homeDir),
    );
    this.validateOutput = outputValidator(this.config);
    this.accounting = new QueryAccounting(this.config, this.validateOutput);
    this.completedTurns = carried?.completedTurns ?? 0;
  }

  /** Whether loading the session context should be tried in this run. */
  get needsSessionContext(): boolean {
    return !this.sessionContext && !this.carried?.sessionContextAttempted && !this.subagent;
  }

  /** `subagentProgress` signal: one line of a child agent's work, in this conversation's feed. */
  onSubagentProgress(progress: SubagentProgress): void {
    if (typeof progress?.line !== 'string' || typeof progress.description !== 'string') {
      log.warn('Dropped malformed subagentProgress signal', { received: progress });
      return;
    }
    this.pushEvent({ type: 'system', uuid: uuid4(), level: 'info', content: `[${progress.description}] ${progress.line}` });
  }

  /** A subagent tells its parent what it is doing: the first line of each reply, or its tool calls. */
  private reportToParent(message: Message): void {
    if (!this.subagent || message.type !== 'assistant' || message.apiError) return;
    const tools = message.message.content.filter((block) => block.type === 'tool_use').map((block) => (block as { name: string }).name);
    const text = textOf(message).split('\n').find((line) => line.trim() !== '')?.trim() ?? '';
    const line = tools.length > 0 ? `${text ? `${text.slice(0, 120)} ` : ''}● ${tools.join(', ')}` : text.slice(0, 200);
    if (!line) return;
    this.signalParent(line);
  }

  /** One progress line to a subagent's parent. Best effort: a parent that is gone or busy must not fail the child. */
  private signalParent(line: string): void {
    if (!this.subagent) return;
    const { parentId, toolUseId, description } = this.subagent;
    const sent = getExternalWorkflowHandle(parentId)
      .signal(subagentProgressSignal, { toolUseId, description, line })
      .catch(() => undefined);
    this.parentReports.add(sent);
    void sent.then(() => this.parentReports.delete(sent));
  }

  /**
   * Waits until the parent has every progress report: a signal still in flight when the child
   * completes is dropped by the server.
   */
  async settleParentReports(): Promise<void> {
    while (this.parentReports.size > 0) await Promise.all([...this.parentReports]);
  }

  recordChildUsage(usage: Usage, costUsd: number, modelUsage?: Record<string, ModelUsage>): void {
    this.usage = addUsage(this.usage, usage);
    this.totalCostUsd += costUsd;
    this.accounting.recordChild(usage, costUsd, modelUsage, this.currentModel);
  }

  /** seed §2.10: the budget and structured-output limits, checked by the loop between messages. */
  checkLimits(after: 'assistant' | 'tool_results'): Terminal | undefined {
    return this.accounting.checkLimits(after, this.totalCostUsd);
  }

  // ---- the feed, phase and status ----

  pushEvent(message: ConversationEvent['message']): void {
    const event = { seq: this.nextEventSeq++, message: trimForFeed(message) };
    this.events.push(event);
    this.live.publishEvent(event);
    if (this.events.length > MAX_EVENTS_KEPT) this.events.splice(0, this.events.length - MAX_EVENTS_KEPT);
  }

  eventsSince(afterSeq: number): { events: ConversationEvent[]; nextSeq: number } {
    return { events: this.events.filter((event) => event.seq >= afterSeq), nextSeq: this.nextEventSeq };
  }

  setPhase(next: Phase): void {
    if (this.phase === next) return;
    this.phase = next;
    this.refreshDetails();
    this.visibility.onPhase(next, { model: this.currentModel, turns: this.conversationTurn, costUsd: this.totalCostUsd });
  }

  /** Number of the current (or last) turn over the whole conversation. */
  get conversationTurn(): number {
    return this.completedTurns + (this.query ? this.turnCount : 0);
  }

  /** The UI's current details: phase, tools, turn, cost, last answer. */
  refreshDetails(): void {
    const last = this.lastResult;
    this.visibility.showDetails({
      phase: this.phase,
      tools: [...this.toolsInFlight.values()].map((tool) => tool.summary),
      turn: this.conversationTurn,
      queryCount: this.queryCount,
      model: this.currentModel,
      costUsd: this.totalCostUsd,
      lastAnswer: last && { text: last.result, isError: last.is_error },
      lastPrompt: this.lastPrompt,
      decisions: this.config.permissions ? this.permissions.toCarried().decisions.slice(-3) : undefined,
    });
  }

  /** The last prompt a person sent, for the UI's current details (not carried across continue-as-new). */
  private lastPrompt: string | undefined;

  status(): ConversationStatus {
    return {
      conversationId: this.conversationId,
      phase: this.phase,
      model: this.config.model,
      currentModel: this.currentModel,
      turnCount: this.turnCount,
      queryCount: this.queryCount,
      transitions: this.query ? this.transitions : [],
      lastQueryTransitions: this.lastQueryTransitions,
      toolsInFlight: [...this.toolsInFlight.values()],
      queuedInputs: this.pendingInputs.length,
      usage: this.usage,
      totalCostUsd: this.totalCostUsd,
      contextTokens: this.contextTokens,
      context: this.contextStatus(),
      messageCount: this.transcript.length,
      lastResult: this.lastResult,
      ended: this.phase === 'ended',
      continuedAsNewCount: this.carried?.continuedAsNewCount ?? 0,
      nextEventSeq: this.nextEventSeq,
      pendingPermissions: this.permissions.pendingRequests(),
      permissionMode: this.config.permissions ? this.permissions.mode : undefined,
    };
  }

  /** seed §2.6: the context against the thresholds, and compaction state. */
  contextStatus(): ContextStatus {
    const thresholds = thresholdsForModel(this.config.model, this.config);
    const tokens = this.contextTokens;
    return {
      tokens,
      contextWindow: thresholds.contextWindow,
      effectiveWindow: thresholds.effectiveContextWindow,
      percentUsed: Math.round((tokens / thresholds.effectiveContextWindow) * 100),
      autoCompactThreshold: thresholds.autoCompactThreshold,
      warningThreshold: thresholds.warningThreshold,
      errorThreshold: thresholds.errorThreshold,
      blockingLimit: thresholds.blockingLimit,
      level: contextLevel(tokens, thresholds, this.config.autoCompact && !isBreakerOpen(this.compaction.consecutiveFailures)),
      autoCompactEnabled: this.config.autoCompact,
      compactions: this.compaction.compactions,
      lastCompaction: this.compaction.lastCompaction,
      breaker: { consecutiveFailures: this.compaction.consecutiveFailures, open: isBreakerOpen(this.compaction.consecutiveFailures) },
    };
  }

  /** What the next run starts from (continue-as-new), or undefined when it would not fit one payload. */
  toCarried(input: { config: unknown }, queryInProgress?: QueryInProgress): CarriedState | undefined {
    const next: CarriedState = {
      // seed §2.7: after a compaction only the boundary and what follows travel on.
      messages: this.transcript.carried(),
      compaction: this.compaction,
      usage: this.usage,
      totalCostUsd: this.totalCostUsd,
      queryCount: this.queryCount,
      pendingInputs: this.pendingInputs,
      lastResult: this.lastResult,
      lastQueryTransitions: this.lastQueryTransitions,
      completedTurns: this.completedTurns,
      continuedAsNewCount: (this.carried?.continuedAsNewCount ?? 0) + 1,
      nextEventSeq: this.nextEventSeq,
      recentEvents: this.events.slice(-EVENTS_CARRIED_OVER),
      sessionContext: this.sessionContext,
      sessionContextAttempted: true,
      queryInProgress,
      endRequested: this.endRequested,
      // Only when set: continue-as-new input of conversations without them stays as it was.
      ...(this.config.model !== this.initialConfig.model && { selectedModel: this.config.model }),
      ...(this.sessionContextStale && { sessionContextStale: true }),
      ...(this.config.permissions && { permissions: this.permissions.toCarried() }),
    };
    const streamState = this.live.carried();
    if (streamState) next.streamState = streamState;
    // The feed's tail (and the live channel's) is a convenience; the transcript is not.
    if (jsonBytes({ config: input.config, carried: next }) > MAX_PAYLOAD_BYTES) {
      next.recentEvents = [];
      if (next.streamState) next.streamState = { ...next.streamState, base_offset: next.streamState.base_offset + next.streamState.log.length, log: [] };
    }
    const bytes = jsonBytes({ config: input.config, carried: next });
    if (bytes > MAX_PAYLOAD_BYTES) {
      log.warn('Conversation state too large to continue as new; staying in this run', { bytes });
      this.continueAsNewFits = false;
      return undefined;
    }
    return next;
  }

  /**
   * History passed the configured size, or a compaction made it a natural point, or Temporal
   * suggests it and history is large enough for that to be worth the transcript it costs
   * (continue-as-new.ts; runs from before the patch follow every suggestion).
   */
  shouldContinueAsNew(): boolean {
    const info = workflowInfo();
    const decision = continueAsNewDecision({
      fits: this.continueAsNewFits,
      historyLength: info.historyLength,
      historySizeBytes: info.historySize,
      suggested: info.continueAsNewSuggested,
      maxEvents: this.config.continueAsNewAfterEvents,
      compactedThisRun: this.compactedThisRun,
    });
    if (decision !== 'suggested') return decision;
    if (!patched(PATCHES.weighContinueAsNewSuggestion)) return true;
    return followsSuggestion({ historyLength: info.historyLength, historySizeBytes: info.historySize });
  }

  // ---- messages in ----

  /** `userInput` signal: queued for the next query, or injected into the running one between turns. */
  enqueueInput(raw: UserInput | string): void {
    const prompt = typeof raw === 'string' ? raw : typeof raw === 'object' && raw !== null ? raw.prompt : undefined;
    if (typeof prompt !== 'string' || prompt.trim() === '') {
      // Signals cannot reply: log and drop (style §6). The API rejects empty text anyway.
      log.warn('Dropped userInput signal without a prompt', { received: raw });
      return;
    }
    const uuid = (typeof raw === 'object' && raw !== null && typeof raw.uuid === 'string' && raw.uuid) || uuid4();
    this.pendingInputs.push({ prompt, uuid });
  }

  /** `abort` signal: cancels the running query's scope. */
  abort(): void {
    if (!this.query) {
      // The new run receives buffered signals before its main body runs.
      if (this.resuming) this.abortBeforeResume = true;
      return;
    }
    if (this.query.aborted) return;
    this.query.aborted = true;
    this.query.scope.cancel();
  }

  /** `toolUseStreamed` signal: a concurrency-safe tool the model activity saw complete while streaming. */
  onToolUseStreamed(raw: ToolUseStreamed): void {
    const parsed = toolUseStreamedSchema.safeParse(raw);
    if (!parsed.success) {
      log.warn('Dropped malformed toolUseStreamed signal', { received: raw });
      return;
    }
    const streamed = parsed.data;
    const query = this.query;
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
    const block = streamed.block as ToolUseBlock;
    if (streamed.facts) this.permissions.rememberFacts(block, streamed.facts as CallFacts);
    // A call that needs a person or is denied starts once the answer is final (not from a stream that may be discarded).
    if (isToolUseStartableEarly(block) && !this.permissions.allowsWithoutAsking(block)) return;
    query.executor.addTool(block);
  }

  /** `requestContext` query: the request context a worker missed in its cache. */
  requestContext(digest: string): RequestContext | null {
    return this.requestContexts.get(digest) ?? null;
  }

  /** QueryHost.rememberPermissionFacts: facts a model call gathered where the tool acts. */
  rememberPermissionFacts(block: { id: string; input: unknown }, facts: CallFacts): void {
    this.permissions.rememberFacts(block, facts);
  }

  /** QueryHost.checkPermission: the gate, with the phase and the feed kept up to date while a request waits. */
  checkPermission(block: ToolUseBlock): Promise<GateVerdict> {
    return this.permissions.check(block, {
      onWaitingChanged: (waiting) => this.setPhase(waiting ? 'awaiting_permission' : 'running_tools'),
      onRequest: (request) => this.onPermissionRequest(request),
    });
  }

  /** Tells people (and a subagent's parent) how to answer a waiting request. */
  private onPermissionRequest(request: PendingPermission): void {
    const line = `Waiting for permission: ${request.toolName} ${(JSON.stringify(request.input) ?? '').slice(0, 200)} (${request.reason}). ` +
      `Approve: durable-agent approve ${this.conversationId} ${request.toolUseId} [--always]; deny: durable-agent deny ${this.conversationId} ${request.toolUseId} [message]`;
    this.pushEvent({ type: 'system', uuid: uuid4(), level: 'warning', content: line });
    this.signalParent(line);
  }

  /** QueryHost.toolPermissionContext: what the gate decides with (undefined: tools run unchecked, as `allowsWithoutAsking`). */
  toolPermissionContext(): PermissionContext | undefined {
    return this.config.permissions ? this.permissions.context() : undefined;
  }

  /** QueryHost.allowReadOfPersistedResult: the model may read back a large result the tool saved. */
  allowReadOfPersistedResult(file: string): void {
    this.permissions.allowReadOf(file);
  }

  sessionAllowRules(): string[] {
    return [...this.permissions.sessionAllow];
  }

  /** A session-context load that failed: the conversation goes on without it, and people are told. */
  sessionContextFailed(error: unknown): void {
    log.warn('Could not load session context; continuing without it', { error: String(error) });
    this.pushEvent({
      type: 'system',
      uuid: uuid4(),
      level: 'warning',
      content: `Session context not loaded (no CLAUDE.md, git status or Stop hooks this session): ${failureMessage(error)}`,
    });
  }

  // ---- QueryHost: what the loop's effects report ----

  /** The prompt layers of this session (seed §2.5): system prompt and user context. */
  promptLayers(): { systemPrompt: RequestContext['system']; userContext: string | undefined } {
    return {
      systemPrompt: buildEffectiveSystemPrompt({
        defaultPrompt: getSystemPrompt(this.sessionContext, this.config.model, {
          agentPrompt: this.config.agentSystemPrompt,
          tools: this.config.tools ?? TOOL_NAMES,
        }),
        customSystemPrompt: this.config.customSystemPrompt,
        appendSystemPrompt: this.config.appendSystemPrompt,
      }),
      userContext: buildUserContext(this.sessionContext),
    };
  }

  currentRequestContext(): string {
    if (this.lastRequestContextDigest) return this.lastRequestContextDigest;
    const { systemPrompt, userContext } = this.promptLayers();
    return this.registerRequestContext(systemPrompt, userContext);
  }

  registerRequestContext(system: RequestContext['system'], userContext: string | undefined): string {
    const context: RequestContext = { system, userContext, toolNames: this.config.tools ?? [...TOOL_NAMES] };
    if (this.config.jsonSchema) context.structuredOutputSchema = this.config.jsonSchema;
    const digest = valueDigest(context);
    this.lastRequestContextDigest = digest;
    if (!this.requestContexts.has(digest)) {
      this.requestContexts.set(digest, context);
      while (this.requestContexts.size > REQUEST_CONTEXTS_KEPT) this.requestContexts.delete(this.requestContexts.keys().next().value as string);
      transcriptCache.putContext(digest, context);
    }
    return digest;
  }

  /** QueryHost.observeWorkerClock: the latest clock reading a local activity reported (ms since epoch). */
  observeWorkerClock(at: number): void {
    if (at > this.workerClockMs) this.workerClockMs = at;
  }

  recordModelResponse(message: AssistantApiMessage, model: string, durationMs: number): void {
    this.recordUsage(message.usage, message.model || model, durationMs);
    this.contextTokens = message.usage.input_tokens + message.usage.cache_creation_input_tokens + message.usage.cache_read_input_tokens;
    this.refreshDetails();
  }

  recordUsage(usage: Usage, model: string, durationMs: number): void {
    const cost = costOfUsage(model, usage);
    this.usage = addUsage(this.usage, usage);
    this.totalCostUsd += cost;
    this.apiDurationMs += durationMs;
    this.accounting.recordModelCall(model, usage, cost);
  }

  onContextTokens(tokens: number): void {
    this.contextTokens = tokens;
  }

  onCompacting(): void {
    this.setPhase('compacting');
  }

  onCompaction(outcome: CompactOutcome, consecutiveFailures: number): void {
    const recorded: CompactionOutcome = { ...outcome, at: Date.now() };
    delete (recorded as { nothingToCompact?: boolean }).nothingToCompact;
    this.compaction = {
      compactions: this.compaction.compactions + (outcome.compacted ? 1 : 0),
      consecutiveFailures,
      lastCompaction: recorded,
    };
    if (outcome.compacted) {
      this.compactedThisRun = true;
      this.sessionContextStale = !this.subagent;
      this.contextTokens = outcome.postTokens ?? this.contextTokens;
    }
  }

  /**
   * Manual compaction (`compact` update, Claude Code's `/compact [instructions]`), between
   * queries: the same compaction as autocompact's, with the user's instructions. A success closes
   * the breaker; a failure does not count toward it.
   */
  async compactNow(instructions?: string): Promise<CompactionOutcome> {
    const scope = new CancellationScope({ cancellable: true });
    const query: ActiveQuery = { scope, aborted: false };
    this.query = query;
    this.busy = true;
    const preTokens = tokenCountWithEstimation(this.transcript.messages);
    try {
      const generator = compactWindow(
        this.transcript,
        { uuid: uuid4, now: () => Date.now(), compactConversation: (request) => compactConversation(this, query, request) },
        {
          trigger: 'manual',
          preTokens,
          customInstructions: instructions,
          maxTokens: fitMaxTokens(COMPACT_MAX_OUTPUT_TOKENS, thresholdsForModel(this.config.model, this.config).contextWindow, preTokens),
        },
      );
      let next = await generator.next();
      while (!next.done) {
        this.transcript.append(next.value);
        this.pushEvent(next.value);
        next = await generator.next();
      }
      const outcome = next.value;
      this.onCompaction(outcome, outcome.compacted ? 0 : this.compaction.consecutiveFailures);
      // A success shows as its compact_boundary in the feed; a failure is said in words.
      if (!outcome.compacted) this.pushEvent({ type: 'system', uuid: uuid4(), level: 'warning', content: outcome.error ?? 'Not compacted.' });
      return this.compaction.lastCompaction!;
    } finally {
      this.query = undefined;
      this.busy = false;
      this.setPhase(this.pendingInputs.length > 0 ? 'calling_model' : 'awaiting_input');
    }
  }

  /** `/model`: the model of the next queries (validated by the caller). */
  selectModel(model: string): void {
    this.config = { ...this.config, model };
    this.currentModel = model;
  }

  takeQueuedInputs(): UserMessage[] {
    // A slash command waits for its own turn (seed §2.10: it is processed, not sent as text);
    // inputs after it keep their order behind it.
    const firstCommand = this.pendingInputs.findIndex((input) => isSlashCommand(input.prompt));
    const count = firstCommand >= 0 && patched(PATCHES.slashCommandsQueuedCommandWaits) ? firstCommand : this.pendingInputs.length;
    return this.pendingInputs.splice(0, count).map((input): UserMessage => {
      this.pushEvent({ type: 'user_input', uuid: input.uuid, prompt: input.prompt });
      this.lastPrompt = input.prompt;
      this.consumedInputUuids.push(input.uuid);
      return { type: 'user', uuid: input.uuid, message: { role: 'user', content: input.prompt } };
    });
  }

  onTransition(transition: TransitionType): void {
    this.transitions.push(transition);
    if (transition === 'tool_use') this.turnCount++;
  }

  onModelChange(model: string): void {
    this.currentModel = model;
  }

  shouldSuspend(): boolean {
    // Mid-query continue-as-new keeps a long task's history bounded (architecture notes).
    return this.shouldContinueAsNew();
  }

  // ---- one query ----

  /**
   * seed §2.10 submitMessage: one query, from the user's input to the result message. With
   * `resumed`, picks up a query that an earlier run suspended for continue-as-new. Returns the
   * query's progress when the loop suspends (the caller continues-as-new with it).
   */
  async submitMessage(pending: PendingInput, resumed?: QueryInProgress): Promise<QueryInProgress | undefined> {
    const startedAt = resumed?.startedAt ?? Date.now();
    this.workerClockMs = 0; // a reading from an earlier query says nothing of this one's end
    this.apiDurationMs = resumed?.apiDurationMs ?? 0;
    this.turnCount = resumed?.turnCount ?? 1;
    this.transitions = resumed ? [...resumed.transitions] : [];
    // A new query tries the primary model again; a resumed one keeps the model it had.
    // A custom command's `model` holds for its own query only.
    const model = pending.model ?? this.config.model;
    this.currentModel = resumed?.checkpoint.currentModel ?? model;
    const usageBefore = resumed?.usageBefore ?? this.usage;
    const costBefore = resumed?.costBefore ?? this.totalCostUsd;
    this.consumedInputUuids = resumed ? [...resumed.consumedInputUuids] : [pending.uuid];
    this.accounting = new QueryAccounting(this.config, this.validateOutput, resumed?.accounting);
    if (!resumed) {
      this.queryCount++;
      const userMessage: UserMessage = {
        type: 'user',
        uuid: pending.uuid,
        message: { role: 'user', content: pending.prompt },
        ...(pending.command && { command: { ...pending.command, kind: 'prompt' as const } }),
      };
      this.transcript.append(userMessage);
      const typed = pending.command ? `/${pending.command.name}${pending.command.args ? ` ${pending.command.args}` : ''}` : pending.prompt;
      this.pushEvent({ type: 'user_input', uuid: pending.uuid, prompt: typed });
      this.lastPrompt = typed;
    }

    const scope = new CancellationScope({ cancellable: true });
    const query: ActiveQuery = { scope, aborted: false };
    this.query = query;
    if (resumed && this.abortBeforeResume) {
      this.abortBeforeResume = false;
      query.aborted = true;
      scope.cancel();
    }

    let lastAssistantText = resumed?.lastAssistantText ?? '';
    let lastStopReason: string | null = resumed?.lastStopReason ?? null;
    const tokenBudget = resumed ? resumed.tokenBudget : (this.config.tokenBudget ?? parseTokenBudget(pending.prompt));
    let terminal: Terminal | Suspended;
    const { systemPrompt, userContext } = this.promptLayers();
    const generator = queryLoop(
      {
        transcript: this.transcript,
        systemPrompt,
        userContext,
        model,
        fallbackModel: this.config.fallbackModel,
        maxTurns: this.config.maxTurns,
        maxOutputTokens: this.config.maxOutputTokens,
        tokenBudget,
        contextWindowTokens: this.config.contextWindowTokens,
        modelMaxOutputTokens: this.config.modelMaxOutputTokens,
        agentId: this.subagent?.agentType,
        compaction: {
          autoCompact: this.config.autoCompact,
          snip: this.config.snip,
          microcompactGapMs: this.config.microcompactGapMs,
          consecutiveFailures: this.compaction.consecutiveFailures,
        },
        resume: resumed?.checkpoint,
      },
      createQueryDeps(this, query),
      this,
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
        if (message.type === 'user' || message.type === 'assistant' || message.type === 'compact_boundary') this.transcript.append(message);
        if (message.type === 'tombstone') this.transcript.remove(message.target);
        if (message.type === 'assistant' && !message.apiError) {
          const text = textOf(message);
          if (text) lastAssistantText = text;
          lastStopReason = message.message.stop_reason;
        }
        this.pushEvent(message);
        this.reportToParent(message);
      }
    } catch (error) {
      // A bug in the loop must not lose the conversation: stop whatever still runs and end the
      // query with an error result (the history is repaired below).
      log.error('Query loop failed', { error: String(error) });
      scope.cancel();
      terminal = { reason: 'model_error', error: `Internal error: ${failureMessage(error)}` };
    } finally {
      this.query = undefined;
      this.toolsInFlight.clear();
    }

    if (terminal.reason === 'suspended') {
      return {
        pending,
        startedAt,
        usageBefore,
        costBefore,
        apiDurationMs: this.apiDurationMs,
        turnCount: this.turnCount,
        transitions: [...this.transitions],
        consumedInputUuids: this.consumedInputUuids,
        lastAssistantText,
        lastStopReason,
        tokenBudget,
        checkpoint: terminal.checkpoint,
        accounting: this.accounting.toCarried(),
      };
    }
    // Inputs the model never answered (the query's own, or ones queued into it) made the request
    // too large: keeping them would make every later query fail the same way. They leave the
    // transcript (the events feed keeps them); tool results and everything answered stay.
    const inputDropped =
      (terminal.reason === 'prompt_too_long' || terminal.reason === 'blocking_limit') &&
      this.transcript.dropUnansweredInputs(this.consumedInputUuids);
    // Safety net: the loop answers every tool_use itself; anything left would break the next request.
    this.transcript.closeDanglingToolUses(terminal.reason.startsWith('aborted') ? INTERRUPTED_BY_USER : 'The tool call did not complete.', uuid4);
    this.lastQueryTransitions = this.transitions;
    const isError = terminal.reason !== 'completed';
    const result: ResultMessage = {
      type: 'result',
      subtype: subtypeFor(terminal.reason),
      is_error: isError,
      result: isError
        ? `${terminal.error ?? describeTerminal(terminal)}${inputDropped ? ' The unanswered message was not kept in the conversation; send a shorter one.' : ''}`
        : lastAssistantText,
      num_turns: this.turnCount,
      // Inside a workflow task of local activities the workflow clock lags the worker's (query-deps.ts).
      duration_ms: Math.max(Date.now(), this.workerClockMs) - startedAt,
      duration_api_ms: this.apiDurationMs,
      stop_reason: lastStopReason,
      total_cost_usd: this.totalCostUsd - costBefore,
      usage: subtractUsage(this.usage, usageBefore),
      permission_denials: this.permissions.takeDenials(),
      session_id: this.conversationId,
      uuid: uuid4(),
      input_uuid: pending.uuid,
      input_uuids: [...this.consumedInputUuids],
      terminal_reason: terminal.reason,
      transitions: [...this.transitions],
      model: this.currentModel,
      ...this.accounting.resultFields(terminal, terminal.error ?? describeTerminal(terminal)),
    };
    this.lastResult = result;
    this.completedTurns += this.turnCount;
    this.pushEvent(result);
    this.toolsInFlight.clear();
    this.refreshDetails();
    return undefined;
  }
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

/**
 * Safe defaults (issue 17 §8): a conversation started without a `permissions` config (the stock
 * `temporal` CLI, a client) checks every tool in default mode — someone may answer through the
 * `decidePermission` update — instead of running everything unchecked. Runs recorded before this
 * keep their unchecked tools.
 */
function withDefaultPermissions(config: ConversationConfig): ConversationConfig {
  if (config.permissions || !patched(PATCHES.permissionsByDefault)) return config;
  return { ...config, permissions: permissionsConfigSchema.parse({}) };
}
