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
import { CancellationScope, log, uuid4 } from '@temporalio/workflow';
import { BackgroundCommands } from '../background/commands';
import type { RequestContext, SessionContext } from '../../common/activity-types';
import type { ConversationConfig } from '../../common/config';
import type { AssistantApiMessage, TranscriptMessage, Usage, UserMessage } from '../../common/messages';
import type { ModelUsage, ResultMessage, Terminal } from '../../common/result';
import type { CompactOutcome } from '../compact';
import { fitContinueAsNewInput } from '../continue-as-new';
import type { CarriedState, CompactionOutcome, CompactionState, ContextStatus, ConversationEvent, ConversationStatus } from '../definitions';
import type { InputOrigin, PendingInput, Phase, QueryInProgress, SubagentOrigin, SubagentProgress, ToolInFlight, ToolUseStreamed, UserInput } from '../definitions';
import { failureMessage } from '../deps/failures';
import { ScheduledWork } from '../background/scheduled-work';
import { McpServers } from '../extensions/mcp';
import type { McpToolDefinition } from '../../common/mcp-context';
import type { ToolRoute } from '../deps/tool-routes';
import { BackgroundAgents } from '../background/agents';
import { LiveStream } from '../live-stream';
import { gatherCallFacts, gatherCallsFacts } from '../permission-facts';
import { PermissionGate } from '../permission-gate';
import type { QueryAccounting } from '../query-accounting';
import type { ActiveQuery } from '../query-deps';
import { type LoopEvent, type LoopOutput, isLoopEvent } from '../query-state';
import { Transcript } from '../transcript';
import { ConversationVisibility } from '../visibility';
import { contextStatus } from './context-status';
import { EventsFeed } from './events-feed';
import { compactNow } from './manual-compaction';
import { InputQueue } from './input-queue';
import { RequestContexts, feedWorkerCache, promptLayers, requestContextOf } from './request-contexts';
import { localCommandResultMessage } from './result-message';
import { type SessionState, continueAsNewNow, recordCompaction, sessionStateFrom, withDefaultPermissions } from './state';
import { acceptStreamedToolUse } from './streamed-tool-uses';
import { SubagentReporting } from './subagent-reporting';
import { QueryRun, type SubmitHost, inputMessage, submitMessage } from './submit-message';
import { SessionPermissions } from './tool-permissions';
import { UsageLedger } from './usage-ledger';
import { SessionHooks } from '../extensions/hooks';
import { metaUserMessage } from '../messages';

/** One kind of work that outlives a turn (issue 21), as the session sees it. */
export interface BackgroundWorkKind {
  /** For messages: "background commands", "wakeups"… */
  readonly name: string;
  /** Something of this kind is running or due: the conversation is not idle-timed out. */
  pending(): boolean;
  /** The conversation ends (`end`, idle timeout, one-shot): stop or delete what belongs to it. */
  onEnd(): Promise<void>;
}

export class ConversationSession implements SubmitHost {
  private state: SessionState;
  private readonly inputs: InputQueue;
  /** The conversation's settings; `/model` replaces the model. */
  config: ConversationConfig;
  readonly transcript: Transcript;
  /** The live channel clients read (issue 10); disabled when the config turns it off (`liveStream`). */
  readonly live: LiveStream;
  private readonly feed: EventsFeed;
  readonly ledger: UsageLedger;
  /** canUseTool: rules, modes and durable approvals (permission-gate.ts). */
  readonly permissions: PermissionGate;
  /** The gate as the tools use it, with what a waiting request does to the session. */
  readonly toolPermissions: SessionPermissions;
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
  /** Kinds of background work (issue 21), see registerBackgroundWork. */
  private readonly backgroundWork: BackgroundWorkKind[] = [];
  /** Tools with their own route (workflows/deps/tool-routes.ts), in the order registered. */
  readonly toolRoutes: ToolRoute[] = [];
  /** The task list, wakeups and cron jobs (issue 21 §4–6; workflows/background/scheduled-work.ts). */
  readonly scheduled: ScheduledWork;
  /** Issue 22: the MCP servers, their listing and tool route. */
  readonly mcp: McpServers;
  /** Background agents and SendMessage (issue 21; workflows/background/agents.ts). */
  readonly backgroundAgents: BackgroundAgents;
  /** Claude Code's hooks besides Stop (issue 22): settings, events, SessionStart's context. */
  readonly hooks: SessionHooks;
  /** Background Bash, TaskOutput, TaskStop (issue 21): workflows/background/commands.ts. */
  private readonly backgroundCommands: BackgroundCommands;

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
    this.inputs = new InputQueue(this.state.pendingInputs);
    this.config = withDefaultPermissions(this.state.selectedModel ? { ...initialConfig, model: this.state.selectedModel } : initialConfig);
    this.transcript = new Transcript(carried?.messages ?? resumedMessages ?? []);
    // A conversation resumed mid-tool: every tool_use needs its result before the next request.
    if (!carried && resumedMessages) this.transcript.closeDanglingToolUses('The tool call did not complete before the conversation was resumed.', uuid4);
    this.live = LiveStream.open(carried?.streamState, initialConfig.liveStream);
    feedWorkerCache(this.transcript);
    // The feed survives continue-as-new (its tail), so a client polling across the switch misses nothing.
    this.feed = new EventsFeed(carried, (event) => this.live.publishEvent(event));
    this.ledger = new UsageLedger(this.config, carried);
    this.currentModel = this.config.model;
    this.permissions = new PermissionGate(
      this.config,
      carried?.permissions,
      () => this.state.sessionContext?.permissionSettings,
      (block, homeDir) => gatherCallFacts(this.config, block, homeDir),
      (block) => this.mcp.permissionFacts(block),
      (blocks, homeDir) => gatherCallsFacts(this.config, blocks, homeDir),
    );
    this.reporting = new SubagentReporting(subagent);
    // Background agents: registered before the background commands' route (this one takes TaskOutput/TaskStop on agent ids).
    this.backgroundAgents = new BackgroundAgents(this, carried?.backgroundAgents);
    this.toolPermissions = new SessionPermissions(this.permissions, {
      conversationId,
      checked: this.config.permissions !== undefined,
      setPhase: (phase) => this.setPhase(phase),
      pushEvent: (message) => this.pushEvent(message),
      reportToParent: (line) => this.reporting.report(line),
      onPermissionPrompt: (toolName) => this.hooks.notifyPermissionPrompt(toolName),
    });
    this.scheduled = new ScheduledWork(this, carried);
    // Issue 22: MCP servers' tools (workflows/extensions/mcp.ts).
    this.mcp = new McpServers(this, carried?.mcp, subagent?.mcp);
    this.registerToolRoute(this.mcp.route());
    this.hooks = new SessionHooks(this, carried?.hooks, subagent?.hookSettings);
    this.backgroundCommands = new BackgroundCommands(this, carried?.backgroundTasks);
  }

  // ---- what others read ----

  get sessionContext(): SessionContext | undefined { return this.state.sessionContext; }
  get sessionContextStale(): boolean { return this.state.sessionContextStale === true; }
  get queryCount(): number { return this.state.queryCount; }
  get lastResult(): ResultMessage | undefined { return this.state.lastResult; }
  get endRequested(): boolean { return this.state.endRequested === true; }
  get compaction(): CompactionState { return this.state.compaction; }
  get usage(): Usage { return this.ledger.usage; }
  get totalCostUsd(): number { return this.ledger.totalCostUsd; }
  /** The running query's structured output and limits. */
  get accounting(): QueryAccounting { return this.ledger.accounting; }
  get busy(): boolean { return this.busyWith; }
  get hasQueuedInput(): boolean { return this.inputs.length > 0; }
  /** A query suspended for continue-as-new, to resume before anything else. */
  get resuming(): QueryInProgress | undefined { return this.state.queryInProgress; }
  /** Turns of the running (or last) query. */
  get turnCount(): number { return this.run?.turnCount ?? 0; }
  /** Number of the current (or last) turn over the whole conversation. */
  get conversationTurn(): number { return this.state.completedTurns + (this.query && this.run ? this.run.turnCount : 0); }
  /** Whether loading the session context should be tried in this run. */
  get needsSessionContext(): boolean { return !this.state.sessionContext && !this.state.sessionContextAttempted && !this.subagent; }

  // ---- messages in ----

  /** `userInput` signal: queued for the next query, or injected into the running one between turns. */
  enqueueInput(raw: UserInput | string): void { this.inputs.push(raw); }
  /** The workflow's initial prompt goes before anything queued. */
  enqueueFirst(input: PendingInput): void { this.inputs.pushFirst(input); }
  /** The next queued input (the caller runs it). */
  nextInput(): PendingInput | undefined { return this.inputs.next(); }

  /**
   * Work that outlives a turn ended, a wakeup or a cron job fired (issue 21): its prompt is
   * queued like a person's input — taken by the running query before its next model call (seed
   * §2.2 ⑦), or starting a query when the conversation is idle. Once per `key`, across retries
   * and continue-as-new (the delivered keys are carried); returns false for a repeat.
   */
  notify(key: string, prompt: string, origin: InputOrigin): boolean {
    const delivered = (this.state.deliveredNotifications ??= []);
    if (delivered.includes(key)) return false;
    delivered.push(key);
    this.inputs.pushFrom(origin, prompt);
    return true;
  }

  /**
   * Kinds of background work (commands, agents, wakeups, cron jobs) each register whether they
   * have something pending (the conversation is then never idle-timed out) and what `end` does to
   * them. Registered in the constructor of their owner, in a fixed order (deterministic).
   */
  registerBackgroundWork(work: BackgroundWorkKind): void { this.backgroundWork.push(work); }
  /** Something registered is still pending: the idle timeout waits. */
  get hasBackgroundWork(): boolean { return this.backgroundWork.some((work) => work.pending()); }
  /** `end`: each kind stops its work (background commands, agents, session-only jobs); `abort` never does. */
  async endBackgroundWork(): Promise<void> {
    for (const work of this.backgroundWork) {
      try {
        await work.onEnd();
      } catch (error) {
        this.pushEvent({ type: 'system', uuid: uuid4(), level: 'warning', content: `Could not stop ${work.name} at the end: ${failureMessage(error)}` });
      }
    }
  }

  /** A tool the workflow answers itself or routes to its own activities (issues 21, 22). */
  registerToolRoute(route: ToolRoute): void { this.toolRoutes.push(route); }

  /** `end` signal: the conversation ends after the running query. */
  requestEnd(): void { this.state.endRequested = true; }

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
  onToolUseStreamed(raw: ToolUseStreamed): void { acceptStreamedToolUse(this.query, this.permissions, raw, (block) => this.hooks.hasPreToolUse(block)); }

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
    const content = `Session context not loaded (no CLAUDE.md, git status or Stop hooks this session): ${failureMessage(error)}`;
    this.pushEvent({ type: 'system', uuid: uuid4(), level: 'warning', content });
  }

  // ---- the feed, phase and status ----

  pushEvent(message: ConversationEvent['message']): void { this.feed.push(message); }

  eventsSince(afterSeq: number): { events: ConversationEvent[]; nextSeq: number } { return this.feed.since(afterSeq); }

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
      ...this.scheduled.detailLines(),
      background: this.backgroundCommands?.runningLines(),
      mcpServers: this.mcp.detailEntries(),
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
      queuedInputs: this.inputs.length,
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
      ...this.scheduled.status(),
      ...(this.mcp.statusLines() && { mcpServers: this.mcp.statusLines() }),
      ...(this.mcp.needingApproval() && { mcpNeedsApproval: this.mcp.needingApproval() }),
      ...this.backgroundAgents.summaries(),
      ...(this.backgroundCommands.list().length > 0 && { backgroundTasks: this.backgroundCommands.list() }),
    };
  }

  /** seed §2.6: the context against the thresholds, and compaction state. */
  contextStatus(): ContextStatus { return contextStatus(this.config, this.contextTokens, this.state.compaction); }

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
      ...this.scheduled.carried(),
      ...(this.mcp.toCarried() && { mcp: this.mcp.toCarried() }),
      ...this.backgroundAgents.carried(),
      ...(this.hooks.toCarried() && { hooks: this.hooks.toCarried() }),
    };
    const streamState = this.live.carried();
    if (streamState) next.streamState = streamState;
    const backgroundTasks = this.backgroundCommands.carried();
    if (backgroundTasks) next.backgroundTasks = backgroundTasks;
    const fitted = fitContinueAsNewInput(input.config, next);
    if (!fitted) {
      log.warn('Conversation state too large to continue as new; staying in this run');
      this.continueAsNewFits = false;
    }
    return fitted;
  }

  /** Whether the carried state fitted one payload the last time it was assembled. */
  get continueAsNewFitsPayload(): boolean { return this.continueAsNewFits; }

  /** Whether this run should continue as new now (state.ts continueAsNewNow). */
  shouldContinueAsNew(): boolean {
    return continueAsNewNow({ fits: this.continueAsNewFits, maxEvents: this.config.continueAsNewAfterEvents, compactedThisRun: this.compactedThisRun });
  }

  // ---- permissions ----

  /** Allow rules added during the session (`approve --always`): a subagent inherits them. */
  sessionAllowRules(): string[] { return [...this.permissions.sessionAllow]; }

  // ---- request contexts and usage (QueryHost) ----

  /** The prompt layers of this session (seed §2.5): system prompt and user context. */
  promptLayers(): { systemPrompt: RequestContext['system']; userContext: string | undefined } {
    const layers = promptLayers(this.config, this.sessionContext, this.mcp.instructionsSection);
    return { ...layers, userContext: this.hooks.userContext(layers.userContext) };
  }

  /** HooksHost.permissionMode: the mode hooks are told (none when tools run unchecked). */
  permissionMode(): string | undefined { return this.config.permissions ? this.permissions.mode : undefined; }

  /** `requestContext` query: the request context a worker missed in its cache. */
  requestContext(digest: string): RequestContext | null { return this.requestContexts.get(digest); }

  currentRequestContext(): string {
    if (this.requestContexts.current) return this.requestContexts.current;
    const { systemPrompt, userContext } = this.promptLayers();
    return this.registerRequestContext(systemPrompt, userContext);
  }

  registerRequestContext(system: RequestContext['system'], userContext: string | undefined): string {
    return this.requestContexts.register(requestContextOf(this.config, system, userContext, this.mcp.toolDefinitions));
  }

  /** QueryHost.extensionTools: the MCP servers' tools the model is offered. */
  get extensionTools(): readonly McpToolDefinition[] { return this.mcp.toolDefinitions; }

  /** QueryHost.observeWorkerClock: the latest clock reading a local activity reported (ms since epoch). */
  observeWorkerClock(at: number): void { this.run?.observeWorkerClock(at); }

  recordModelResponse(message: AssistantApiMessage, model: string, durationMs: number): void {
    this.recordUsage(message.usage, message.model || model, durationMs);
    this.contextTokens = message.usage.input_tokens + message.usage.cache_creation_input_tokens + message.usage.cache_read_input_tokens;
    this.refreshDetails();
  }

  recordUsage(usage: Usage, model: string, durationMs: number): void { this.ledger.recordModelCall(usage, model, durationMs); }

  recordChildUsage(usage: Usage, costUsd: number, modelUsage?: Record<string, ModelUsage>): void {
    this.ledger.recordChild(usage, costUsd, modelUsage, this.currentModel);
  }

  // ---- LoopSession: what the loop asks; what it tells comes with its messages (consume) ----

  /** seed §2.10: the budget and structured-output limits, checked by the loop between messages. */
  checkLimits(after: 'assistant' | 'tool_results'): Terminal | undefined { return this.ledger.checkLimits(after); }

  takeQueuedInputs(): UserMessage[] {
    return this.inputs.takeForRunningQuery().map((input): UserMessage => {
      this.pushEvent({ type: 'user_input', uuid: input.uuid, prompt: input.prompt });
      this.lastPrompt = input.prompt;
      this.run?.consumed(input.uuid);
      return { type: 'user', uuid: input.uuid, message: { role: 'user', content: input.prompt } };
    });
  }

  /** A compaction ended (the loop's, or a manual one): recorded, and the failure streak kept across queries. */
  private onCompaction(outcome: CompactOutcome, consecutiveFailures: number): void {
    this.state.compaction = recordCompaction(this.state.compaction, outcome, consecutiveFailures, Date.now());
    if (outcome.compacted) {
      this.compactedThisRun = true;
      this.hooks.sessionRestarted('compact');
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
  async submitMessage(pending: PendingInput, resumed?: QueryInProgress): Promise<QueryInProgress | undefined> {
    // UserPromptSubmit hooks (issue 22): a blocked prompt is answered here, without a query.
    const input = resumed ? pending : await this.hooks.beforeQuery(pending, inputMessage(pending).typed, (output) => this.answerLocally(pending, undefined, output, true));
    return input ? submitMessage(this, input, resumed, () => new CancellationScope({ cancellable: true })) : undefined;
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
  resumeInThisRun(suspended: QueryInProgress): void { this.state.queryInProgress = suspended; }

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
    if (!resumed) {
      const { message, typed } = inputMessage(run.pending);
      this.state.queryCount++;
      this.transcript.append(message);
      // UserPromptSubmit hooks' context joins the prompt (issue 22).
      if (run.pending.hookContext) this.transcript.append(metaUserMessage(uuid4(), run.pending.hookContext));
      this.pushEvent({ type: 'user_input', uuid: run.pending.uuid, prompt: typed });
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

  /** seed §2.10 Phase D: append to history, update status, feed the progress events; the loop's own events update what it reports. */
  consume(output: LoopOutput): void {
    if (isLoopEvent(output)) return this.onLoopEvent(output);
    const message = output;
    if (message.type === 'user' || message.type === 'assistant' || message.type === 'compact_boundary') this.transcript.append(message);
    if (message.type === 'tombstone') this.transcript.remove(message.target);
    if (this.query && this.run) this.run.observe(message);
    this.pushEvent(message);
    this.reporting.reportMessage(message);
  }

  /** The loop owns the query's model, turns, transitions and compaction streak; the session records what it reports. */
  private onLoopEvent(event: LoopEvent): void {
    switch (event.type) {
      case 'model':
        return void (this.currentModel = event.model);
      case 'transition':
        return this.run?.onTransition(event.transition, event.turnCount);
      case 'compacting':
        return this.setPhase('compacting');
      case 'compaction':
        return this.onCompaction(event.outcome, event.consecutiveFailures);
      case 'context_tokens':
        return void (this.contextTokens = event.tokens);
    }
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
    this.reporting.reportAnswer(result, this.state.queryCount);
    this.toolsInFlight.clear();
    this.refreshDetails();
  }

  // ---- between queries ----

  /** Manual compaction (`compact` update, `/compact`): see manual-compaction.ts. */
  compactNow(instructions?: string): Promise<CompactionOutcome> { return compactNow(this, instructions); }

  /** ManualCompactionHost.startCompaction */
  startCompaction(query: ActiveQuery): void {
    this.query = query;
    this.busyWith = true;
  }

  /** ManualCompactionHost.endCompaction */
  endCompaction(): void {
    this.query = undefined;
    this.busyWith = false;
    this.setPhase(this.inputs.length > 0 ? 'calling_model' : 'awaiting_input');
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
    this.contextTokens = 0;
    this.hooks.sessionRestarted('clear');
    if (!this.subagent) this.state.sessionContextStale = true;
    else delete this.state.sessionContextStale;
    return removed;
  }

  /** A local command's answer (seed §2.10 shouldQuery = false): its record in the transcript, the feed, and a result message. */
  answerLocally(input: PendingInput, record: UserMessage | undefined, output: string, isError: boolean): void {
    this.pushEvent({ type: 'user_input', uuid: input.uuid, prompt: input.prompt });
    if (record) {
      this.transcript.append(record);
      this.pushEvent(record);
    }
    const result = localCommandResultMessage({ output, isError, conversationId: this.conversationId, uuid: uuid4(), inputUuid: input.uuid, model: this.config.model });
    this.state.lastResult = result;
    this.pushEvent(result);
  }

  /** Waits until a subagent's parent has every progress report (see subagent-reporting.ts). */
  settleParentReports(): Promise<void> { return this.reporting.settle(); }
}
