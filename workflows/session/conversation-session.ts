/**
 * The session layer (seed §2.10, QueryEngine), as an entity class (style §15, §19; the samples'
 * safe-message-handlers `ClusterManager`): its durable state is one serializable object
 * (`SessionState`), which the constructor takes and `toCarried()` returns with the parts other
 * owners carry (the transcript, the events feed, the usage ledger, the permission gate, the live
 * channel). The rest lives by concern in this folder: events-feed.ts, request-contexts.ts,
 * usage-ledger.ts, subagent-reporting.ts, submit-message.ts (one query), result-message.ts,
 * manual-compaction.ts. The workflow function (`conversation.ts`) only wires handlers to it and
 * calls its methods; nothing outside assigns its fields.
 */
import { CancellationScope, log, uuid4, workflowInfo } from '@temporalio/workflow';
import type { RequestContext, SessionContext } from '../../common/activity-types';
import type { ConversationConfig } from '../../common/config';
import { permissionsConfigSchema } from '../../common/config';
import type { AssistantApiMessage, Message, ToolUseBlock, TranscriptMessage, Usage, UserMessage } from '../../common/messages';
import type { CallFacts } from '../../common/permission-facts';
import type { PermissionContext } from '../../common/permissions';
import type { ModelUsage, ResultMessage, Terminal, TransitionType } from '../../common/result';
import { TOOL_NAMES, isToolUseStartableEarly } from '../../common/tool-specs';
import { contextLevel, isBreakerOpen, thresholdsForModel } from '../auto-compact';
import type { CompactOutcome } from '../compact';
import { MAX_PAYLOAD_BYTES, continueAsNewDecision, followsSuggestion } from '../continue-as-new';
import type {
  CarriedState,
  CompactionOutcome,
  CompactionState,
  ContextStatus,
  ConversationEvent,
  ConversationStatus,
  PendingInput,
  Phase,
  QueryInProgress,
  SubagentOrigin,
  SubagentProgress,
  ToolInFlight,
  ToolUseStreamed,
  TranscriptCacheSinks,
  UserInput,
} from '../definitions';
import { toolUseStreamedSchema } from '../definitions';
import { failureMessage } from '../deps/failures';
import { LiveStream } from '../live-stream';
import { PATCHES, patched } from '../patches';
import { gatherCallFacts } from '../permission-facts';
import { type GateVerdict, type PendingPermission, PermissionGate } from '../permission-gate';
import type { ActiveQuery } from '../query-deps';
import type { QueryAccounting } from '../query-accounting';
import { isSlashCommand } from '../slash-commands';
import { buildEffectiveSystemPrompt, buildUserContext, getSystemPrompt } from '../system-prompt';
import { Transcript } from '../transcript';
import { ConversationVisibility } from '../visibility';
import { proxySinks } from '@temporalio/workflow';
import { EventsFeed } from './events-feed';
import { compactNow } from './manual-compaction';
import { RequestContexts } from './request-contexts';
import { localCommandResultMessage } from './result-message';
import { SubagentReporting } from './subagent-reporting';
import { QueryRun, type SubmitHost, submitMessage } from './submit-message';
import { UsageLedger } from './usage-ledger';

const { transcriptCache } = proxySinks<TranscriptCacheSinks>();

/**
 * The session's own durable state: everything continue-as-new carries that no other owner
 * (transcript, feed, ledger, gate, live channel) holds.
 */
export interface SessionState {
  queryCount: number;
  pendingInputs: PendingInput[];
  lastResult?: ResultMessage;
  lastQueryTransitions: TransitionType[];
  /** Turns of the queries before the running one (the UI numbers turns over the whole conversation). */
  completedTurns: number;
  /** Runs before this one. */
  continuedAsNewCount: number;
  sessionContext?: SessionContext;
  /** Loading the session context was tried (it is not retried on every run when it failed). */
  sessionContextAttempted?: boolean;
  /** Read the session context again before the next input (after a compaction or `/clear`; Claude Code re-reads CLAUDE.md then). */
  sessionContextStale?: boolean;
  endRequested?: boolean;
  /** Compactions and the autocompact failure streak (seed §2.7 circuit breaker, per conversation). */
  compaction: CompactionState;
  /** The model `/model` chose (when it is not the configured one). */
  selectedModel?: string;
  /** A query suspended by the previous run (or this one, when it could not continue as new), resumed before anything else. */
  queryInProgress?: QueryInProgress;
}

/** The session's state as a carried state holds it (the one place it is read in). */
function sessionStateFrom(carried: CarriedState | undefined, subagent: SubagentOrigin | undefined): SessionState {
  return {
    queryCount: carried?.queryCount ?? 0,
    pendingInputs: carried?.pendingInputs ?? [],
    lastResult: carried?.lastResult,
    lastQueryTransitions: carried?.lastQueryTransitions ?? [],
    completedTurns: carried?.completedTurns ?? 0,
    continuedAsNewCount: carried?.continuedAsNewCount ?? 0,
    // A subagent inherits its parent's session context instead of loading its own.
    sessionContext: carried?.sessionContext ?? subagent?.sessionContext,
    sessionContextAttempted: carried?.sessionContextAttempted,
    ...(carried?.sessionContextStale && { sessionContextStale: true }),
    endRequested: carried?.endRequested ?? false,
    compaction: carried?.compaction ?? { compactions: 0, consecutiveFailures: 0 },
    ...(carried?.selectedModel && { selectedModel: carried.selectedModel }),
    queryInProgress: carried?.queryInProgress,
  };
}

export class ConversationSession implements SubmitHost {
  private state: SessionState;
  /** The conversation's settings; `/model` replaces the model. */
  config: ConversationConfig;
  readonly transcript: Transcript;
  /** The live channel clients read (issue 10); disabled in runs recorded before it. */
  readonly live: LiveStream;
  private readonly feed: EventsFeed;
  readonly ledger: UsageLedger;
  /** canUseTool: rules, modes and durable approvals (permission-gate.ts). */
  readonly permissions: PermissionGate;
  private readonly requestContexts = new RequestContexts();
  private readonly reporting: SubagentReporting;
  /** Current details and search attributes (the Temporal UI, `durable-agent list`). */
  private readonly visibility = new ConversationVisibility();
  readonly toolsInFlight = new Map<string, ToolInFlight>();
  phase: Phase = 'idle';
  /** The model of the running (or last) query: the loop reports a switch to the fallback. */
  currentModel: string;
  private contextTokens = 0;
  /** The running query (or manual compaction): its scope and the model call in flight. */
  private query: ActiveQuery | undefined;
  /** The running (or last) query's own progress. */
  private run: QueryRun | undefined;
  /** A query or a manual compaction is running: the other waits. */
  private busyWith = false;
  /** An abort that arrived before the resumed query was running again. */
  private abortBeforeResume = false;
  /** False once the state proved too large for a continue-as-new payload. */
  private continueAsNewFits = true;
  private compactedThisRun = false;
  /** The last prompt a person sent, for the UI's current details (not carried across continue-as-new). */
  private lastPrompt: string | undefined;

  constructor(
    readonly conversationId: string,
    private readonly initialConfig: ConversationConfig,
    carried: CarriedState | undefined,
    /** Set when this conversation is a subagent (a child workflow of an Agent call). */
    readonly subagent?: SubagentOrigin,
    /** `start --resume`: the transcript this conversation continues from (first run only). */
    resumedMessages?: readonly TranscriptMessage[],
  ) {
    this.state = sessionStateFrom(carried, subagent);
    this.config = withDefaultPermissions(this.state.selectedModel ? { ...initialConfig, model: this.state.selectedModel } : initialConfig);
    this.transcript = new Transcript(carried?.messages ?? resumedMessages ?? []);
    // A conversation resumed mid-tool: every tool_use needs its result before the next request.
    if (!carried && resumedMessages) this.transcript.closeDanglingToolUses('The tool call did not complete before the conversation was resumed.', uuid4);
    this.live = LiveStream.open(carried?.streamState, initialConfig.liveStream);
    // The worker's cache learns every change (model calls by reference); a new run starts it over.
    this.transcript.onChange((from, messages) => transcriptCache.feed(from, messages));
    if (this.transcript.length > 0) transcriptCache.feed(0, [...this.transcript.messages]);
    // The feed survives continue-as-new (its tail), so a client polling across the switch misses nothing.
    this.feed = new EventsFeed(carried, (event) => this.live.publishEvent(event));
    this.ledger = new UsageLedger(this.config, carried);
    this.currentModel = this.config.model;
    this.permissions = new PermissionGate(this.config, carried?.permissions, () => this.state.sessionContext?.permissionSettings, (block, homeDir) =>
      gatherCallFacts(this.config, block, homeDir),
    );
    this.reporting = new SubagentReporting(subagent);
  }

  // ---- what others read ----

  get sessionContext(): SessionContext | undefined {
    return this.state.sessionContext;
  }
  get sessionContextStale(): boolean {
    return this.state.sessionContextStale === true;
  }
  get queryCount(): number {
    return this.state.queryCount;
  }
  get lastResult(): ResultMessage | undefined {
    return this.state.lastResult;
  }
  get endRequested(): boolean {
    return this.state.endRequested === true;
  }
  get compaction(): CompactionState {
    return this.state.compaction;
  }
  get usage(): Usage {
    return this.ledger.usage;
  }
  get totalCostUsd(): number {
    return this.ledger.totalCostUsd;
  }
  /** The running query's structured output and limits. */
  get accounting(): QueryAccounting {
    return this.ledger.accounting;
  }
  get busy(): boolean {
    return this.busyWith;
  }
  get hasQueuedInput(): boolean {
    return this.state.pendingInputs.length > 0;
  }
  /** A query suspended for continue-as-new, to resume before anything else. */
  get resuming(): QueryInProgress | undefined {
    return this.state.queryInProgress;
  }
  /** Turns of the running (or last) query. */
  get turnCount(): number {
    return this.run?.turnCount ?? 0;
  }
  /** Number of the current (or last) turn over the whole conversation. */
  get conversationTurn(): number {
    return this.state.completedTurns + (this.query && this.run ? this.run.turnCount : 0);
  }
  /** Whether loading the session context should be tried in this run. */
  get needsSessionContext(): boolean {
    return !this.state.sessionContext && !this.state.sessionContextAttempted && !this.subagent;
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
    this.state.pendingInputs.push({ prompt, uuid });
  }

  /** The workflow's initial prompt goes before anything queued. */
  enqueueFirst(input: PendingInput): void {
    this.state.pendingInputs.unshift(input);
  }

  /** The next queued input (the caller runs it). */
  nextInput(): PendingInput | undefined {
    return this.state.pendingInputs.shift();
  }

  /** `end` signal: the conversation ends after the running query. */
  requestEnd(): void {
    this.state.endRequested = true;
  }

  /** `abort` signal: cancels the running query's scope. */
  abort(): void {
    if (!this.query) {
      // The new run receives buffered signals before its main body runs.
      if (this.state.queryInProgress) this.abortBeforeResume = true;
      return;
    }
    if (this.query.aborted) return;
    this.query.aborted = true;
    this.query.scope.cancel();
  }

  /** `subagentProgress` signal: one line of a child agent's work, in this conversation's feed. */
  onSubagentProgress(progress: SubagentProgress): void {
    if (typeof progress?.line !== 'string' || typeof progress.description !== 'string') {
      log.warn('Dropped malformed subagentProgress signal', { received: progress });
      return;
    }
    this.pushEvent({ type: 'system', uuid: uuid4(), level: 'info', content: `[${progress.description}] ${progress.line}` });
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

  // ---- the session context ----

  /** The session context was loaded (or failed to: `undefined` keeps the one there was). */
  sessionContextLoaded(context: SessionContext | undefined): void {
    if (context) this.state.sessionContext = context;
    delete this.state.sessionContextStale;
    // A malformed agent or command file is skipped; people hear about it in the feed.
    for (const warning of this.state.sessionContext?.warnings ?? []) this.pushEvent({ type: 'system', uuid: uuid4(), level: 'warning', content: warning });
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

  // ---- the feed, phase and status ----

  pushEvent(message: ConversationEvent['message']): void {
    this.feed.push(message);
  }

  eventsSince(afterSeq: number): { events: ConversationEvent[]; nextSeq: number } {
    return this.feed.since(afterSeq);
  }

  setPhase(next: Phase): void {
    if (this.phase === next) return;
    this.phase = next;
    this.refreshDetails();
    this.visibility.onPhase(next, { model: this.currentModel, turns: this.conversationTurn, costUsd: this.totalCostUsd });
  }

  /** The UI's current details: phase, tools, turn, cost, last answer. */
  refreshDetails(): void {
    const last = this.state.lastResult;
    this.visibility.showDetails({
      phase: this.phase,
      tools: [...this.toolsInFlight.values()].map((tool) => tool.summary),
      turn: this.conversationTurn,
      queryCount: this.state.queryCount,
      model: this.currentModel,
      costUsd: this.totalCostUsd,
      lastAnswer: last && { text: last.result, isError: last.is_error },
      lastPrompt: this.lastPrompt,
      decisions: this.config.permissions ? this.permissions.toCarried().decisions.slice(-3) : undefined,
    });
  }

  status(): ConversationStatus {
    return {
      conversationId: this.conversationId,
      phase: this.phase,
      model: this.config.model,
      currentModel: this.currentModel,
      turnCount: this.turnCount,
      queryCount: this.state.queryCount,
      transitions: this.query && this.run ? this.run.transitions : [],
      lastQueryTransitions: this.state.lastQueryTransitions,
      toolsInFlight: [...this.toolsInFlight.values()],
      queuedInputs: this.state.pendingInputs.length,
      usage: this.usage,
      totalCostUsd: this.totalCostUsd,
      contextTokens: this.contextTokens,
      context: this.contextStatus(),
      messageCount: this.transcript.length,
      lastResult: this.state.lastResult,
      ended: this.phase === 'ended',
      continuedAsNewCount: this.state.continuedAsNewCount,
      nextEventSeq: this.feed.nextEventSeq,
      pendingPermissions: this.permissions.pendingRequests(),
      permissionMode: this.config.permissions ? this.permissions.mode : undefined,
    };
  }

  /** seed §2.6: the context against the thresholds, and compaction state. */
  contextStatus(): ContextStatus {
    const thresholds = thresholdsForModel(this.config.model, this.config);
    const tokens = this.contextTokens;
    const { compaction } = this.state;
    return {
      tokens,
      contextWindow: thresholds.contextWindow,
      effectiveWindow: thresholds.effectiveContextWindow,
      percentUsed: Math.round((tokens / thresholds.effectiveContextWindow) * 100),
      autoCompactThreshold: thresholds.autoCompactThreshold,
      warningThreshold: thresholds.warningThreshold,
      errorThreshold: thresholds.errorThreshold,
      blockingLimit: thresholds.blockingLimit,
      level: contextLevel(tokens, thresholds, this.config.autoCompact && !isBreakerOpen(compaction.consecutiveFailures)),
      autoCompactEnabled: this.config.autoCompact,
      compactions: compaction.compactions,
      lastCompaction: compaction.lastCompaction,
      breaker: { consecutiveFailures: compaction.consecutiveFailures, open: isBreakerOpen(compaction.consecutiveFailures) },
    };
  }

  // ---- continue-as-new ----

  /** What the next run starts from (continue-as-new), or undefined when it would not fit one payload. */
  toCarried(input: { config: unknown }, queryInProgress?: QueryInProgress): CarriedState | undefined {
    const next: CarriedState = {
      ...this.state,
      // seed §2.7: after a compaction only the boundary and what follows travel on.
      messages: this.transcript.carried(),
      ...this.ledger.carried(),
      ...this.feed.carried(),
      continuedAsNewCount: this.state.continuedAsNewCount + 1,
      sessionContextAttempted: true,
      queryInProgress,
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

  // ---- permissions (QueryHost) ----

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
    this.reporting.report(line);
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

  // ---- request contexts and usage (QueryHost) ----

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

  /** `requestContext` query: the request context a worker missed in its cache. */
  requestContext(digest: string): RequestContext | null {
    return this.requestContexts.get(digest);
  }

  currentRequestContext(): string {
    if (this.requestContexts.current) return this.requestContexts.current;
    const { systemPrompt, userContext } = this.promptLayers();
    return this.registerRequestContext(systemPrompt, userContext);
  }

  registerRequestContext(system: RequestContext['system'], userContext: string | undefined): string {
    const context: RequestContext = { system, userContext, toolNames: this.config.tools ?? [...TOOL_NAMES] };
    if (this.config.jsonSchema) context.structuredOutputSchema = this.config.jsonSchema;
    return this.requestContexts.register(context);
  }

  /** QueryHost.observeWorkerClock: the latest clock reading a local activity reported (ms since epoch). */
  observeWorkerClock(at: number): void {
    this.run?.observeWorkerClock(at);
  }

  recordModelResponse(message: AssistantApiMessage, model: string, durationMs: number): void {
    this.recordUsage(message.usage, message.model || model, durationMs);
    this.contextTokens = message.usage.input_tokens + message.usage.cache_creation_input_tokens + message.usage.cache_read_input_tokens;
    this.refreshDetails();
  }

  recordUsage(usage: Usage, model: string, durationMs: number): void {
    this.ledger.recordModelCall(usage, model, durationMs);
  }

  recordChildUsage(usage: Usage, costUsd: number, modelUsage?: Record<string, ModelUsage>): void {
    this.ledger.recordChild(usage, costUsd, modelUsage, this.currentModel);
  }

  // ---- LoopSession: what the loop asks and tells ----

  /** seed §2.10: the budget and structured-output limits, checked by the loop between messages. */
  checkLimits(after: 'assistant' | 'tool_results'): Terminal | undefined {
    return this.ledger.checkLimits(after);
  }

  takeQueuedInputs(): UserMessage[] {
    // A slash command waits for its own turn (seed §2.10: it is processed, not sent as text);
    // inputs after it keep their order behind it.
    const pending = this.state.pendingInputs;
    const firstCommand = pending.findIndex((input) => isSlashCommand(input.prompt));
    const count = firstCommand >= 0 && patched(PATCHES.slashCommandsQueuedCommandWaits) ? firstCommand : pending.length;
    return pending.splice(0, count).map((input): UserMessage => {
      this.pushEvent({ type: 'user_input', uuid: input.uuid, prompt: input.prompt });
      this.lastPrompt = input.prompt;
      this.run?.consumed(input.uuid);
      return { type: 'user', uuid: input.uuid, message: { role: 'user', content: input.prompt } };
    });
  }

  onTransition(transition: TransitionType): void {
    this.run?.onTransition(transition);
  }

  onModelChange(model: string): void {
    this.currentModel = model;
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
    this.state.compaction = {
      compactions: this.state.compaction.compactions + (outcome.compacted ? 1 : 0),
      consecutiveFailures,
      lastCompaction: recorded,
    };
    if (outcome.compacted) {
      this.compactedThisRun = true;
      if (this.subagent) delete this.state.sessionContextStale;
      else this.state.sessionContextStale = true;
      this.contextTokens = outcome.postTokens ?? this.contextTokens;
    }
  }

  shouldSuspend(): boolean {
    // Mid-query continue-as-new keeps a long task's history bounded (architecture notes).
    return this.shouldContinueAsNew();
  }

  // ---- one query (submit-message.ts) ----

  /**
   * seed §2.10 submitMessage: one query, from the user's input to the result message. With
   * `resumed`, picks up a query that an earlier run suspended for continue-as-new. Returns the
   * query's progress when the loop suspends (the caller continues-as-new with it).
   */
  submitMessage(pending: PendingInput, resumed?: QueryInProgress): Promise<QueryInProgress | undefined> {
    return submitMessage(this, pending, resumed, () => new CancellationScope({ cancellable: true }));
  }

  /** Runs the suspended query (if any) first; the caller continues as new with what it returns. */
  async resumeSuspendedQuery(): Promise<QueryInProgress | undefined> {
    const resumed = this.state.queryInProgress;
    if (!resumed) return undefined;
    const suspended = await this.submitMessage(resumed.pending, resumed);
    delete this.state.queryInProgress;
    return suspended;
  }

  /** A suspended query that could not continue as new: this run goes on with it. */
  resumeInThisRun(suspended: QueryInProgress): void {
    this.state.queryInProgress = suspended;
  }

  /** Runs `work` as the one query or compaction in progress (`busy` meanwhile). */
  async exclusively<T>(work: () => Promise<T>): Promise<T> {
    this.busyWith = true;
    try {
      return await work();
    } finally {
      this.busyWith = false;
    }
  }

  /** SubmitHost.startQuery */
  startQuery(run: QueryRun, resumed: QueryInProgress | undefined, scope: CancellationScope): ActiveQuery {
    this.run = run;
    this.ledger.startQuery(resumed);
    this.currentModel = resumed?.checkpoint.currentModel ?? run.pending.model ?? this.config.model;
    if (!resumed) {
      const { pending } = run;
      this.state.queryCount++;
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
    const query: ActiveQuery = { scope, aborted: false };
    this.query = query;
    if (resumed && this.abortBeforeResume) {
      this.abortBeforeResume = false;
      query.aborted = true;
      scope.cancel();
    }
    return query;
  }

  /** seed §2.10 Phase D: append to history, update status, feed the progress events. */
  consume(message: Message): void {
    if (message.type === 'user' || message.type === 'assistant' || message.type === 'compact_boundary') this.transcript.append(message);
    if (message.type === 'tombstone') this.transcript.remove(message.target);
    if (this.query && this.run) this.run.observe(message);
    this.pushEvent(message);
    this.reporting.reportMessage(message);
  }

  /** SubmitHost.endQuery */
  endQuery(): void {
    this.query = undefined;
    this.toolsInFlight.clear();
  }

  /** SubmitHost.finishQuery: the result is recorded, shown, and the turns counted. */
  finishQuery(result: ResultMessage): void {
    this.state.lastQueryTransitions = result.transitions ?? [];
    this.state.lastResult = result;
    this.state.completedTurns += this.turnCount;
    this.pushEvent(result);
    this.toolsInFlight.clear();
    this.refreshDetails();
  }

  // ---- between queries ----

  /** Manual compaction (`compact` update, `/compact`): see manual-compaction.ts. */
  compactNow(instructions?: string): Promise<CompactionOutcome> {
    return compactNow(this, instructions);
  }

  /** ManualCompactionHost.startCompaction */
  startCompaction(query: ActiveQuery): void {
    this.query = query;
    this.busyWith = true;
  }

  /** ManualCompactionHost.endCompaction */
  endCompaction(): void {
    this.query = undefined;
    this.busyWith = false;
    this.setPhase(this.state.pendingInputs.length > 0 ? 'calling_model' : 'awaiting_input');
  }

  /** ManualCompactionHost.onManualCompaction: a success closes the breaker; a failure does not count toward it. */
  onManualCompaction(outcome: CompactOutcome): CompactionOutcome {
    this.onCompaction(outcome, outcome.compacted ? 0 : this.state.compaction.consecutiveFailures);
    return this.state.compaction.lastCompaction!;
  }

  /** `/model`: the model of the next queries (validated by the caller). */
  selectModel(model: string): void {
    this.config = { ...this.config, model };
    this.currentModel = model;
    if (model !== this.initialConfig.model) this.state.selectedModel = model;
    else delete this.state.selectedModel;
  }

  /** `/clear`: the transcript starts over; CLAUDE.md, git status and custom commands are read again before the next input. */
  clearConversation(): number {
    const removed = this.transcript.length;
    this.transcript.clear();
    this.onContextTokens(0);
    if (!this.subagent) this.state.sessionContextStale = true;
    else delete this.state.sessionContextStale;
    return removed;
  }

  /** A local command's answer (seed §2.10 shouldQuery = false): its record in the transcript, the feed, and a result message. */
  answerLocally(input: PendingInput, record: UserMessage, output: string, isError: boolean): void {
    this.pushEvent({ type: 'user_input', uuid: input.uuid, prompt: input.prompt });
    this.transcript.append(record);
    this.pushEvent(record);
    const result = localCommandResultMessage({ output, isError, conversationId: this.conversationId, uuid: uuid4(), inputUuid: input.uuid, model: this.config.model });
    this.state.lastResult = result;
    this.pushEvent(result);
  }

  /** Waits until a subagent's parent has every progress report (see subagent-reporting.ts). */
  settleParentReports(): Promise<void> {
    return this.reporting.settle();
  }
}

/** UTF-8 size of a value as JSON — what Temporal's payload limit counts. */
function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
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
