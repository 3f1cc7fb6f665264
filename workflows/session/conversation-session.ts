/**
 * The session layer (seed §2.10, QueryEngine), as an entity class (style §15, §19; the samples'
 * safe-message-handlers `ClusterManager`) and a composition root (style §23, issue 30): its own
 * durable state is one serializable object (`SessionState`: queued inputs, the session context,
 * `end`, `/model`, delivered notifications); the owners it is made of — the transcript, the
 * events feed, the usage ledger, the permission gate, the live channel, the queries (queries.ts:
 * the running one and the record of those before) — and its parts (parts.ts: background agents,
 * scheduled work, MCP servers, hooks, background commands, in one ordered list) each carry their
 * own slice, which `toCarried()` collects in a loop. None of them holds the session: each gets
 * the narrow things it uses. The workflow function (`conversation.ts`) only wires handlers to it
 * and calls its methods; nothing outside assigns its fields.
 */
import { log, uuid4 } from '@temporalio/workflow';
import type { RequestContext, SessionContext } from '../../common/activity-types';
import type { ConversationConfig } from '../../common/config';
import type { TranscriptMessage, UserMessage } from '../../common/messages';
import { CarriedAssembly } from '../continue-as-new';
import type { CarriedState, CompactionOutcome, ContextStatus, ConversationEvent, ConversationStatus, ConversationSummary } from '../definitions';
import type { InputOrigin, PendingInput, Phase, QueryInProgress, SubagentOrigin, SubagentProgress, ToolUseStreamed } from '../definitions';
import { failureMessage } from '../deps/failures';
import { LiveStream } from '../ui/live-stream';
import type { PermissionGate } from '../permissions/gate';
import { Transcript } from '../transcript';
import { ConversationVisibility } from '../ui/visibility';
import { EventsFeed } from './events-feed';
import { InputQueue } from './input-queue';
import { SessionParts } from './parts';
import { SessionQueries } from './queries';
import { SessionRewinds } from './rewinds';
import { SessionContextSlot } from './session-context';
import { type SessionView, conversationStatus, currentDetails, permissionMode, sessionContextStatus } from './status-view';
import { SessionPrompts, feedWorkerCache } from './request-contexts';
import { type SessionState, continueAsNewNow, sessionStateFrom, withDefaultPermissions } from './state';
import { acceptStreamedToolUse } from './streamed-tool-uses';
import { SubagentReporting } from './subagent-reporting';
import { inputMessage } from './submit-message';
import { sessionPermissions } from './permission-wiring';
import type { SessionPermissions } from './tool-permissions';
import { UsageLedger } from './usage-ledger';

export type { BackgroundWorkKind } from './session-part';

export class ConversationSession {
  private readonly state: SessionState;
  /** Inputs waiting for a query (input-queue.ts): the `userInput` signal and the initial prompt push, the workflow takes. */
  readonly inputs: InputQueue;
  /** The session context (session-context.ts): loaded once per session, again after `/compact` or `/clear`. */
  readonly context: SessionContextSlot;
  /** The conversation's settings; `/model` replaces the model. */
  config: ConversationConfig;
  readonly transcript: Transcript;
  /** The live channel clients read (issue 10); disabled when the config turns it off (`liveStream`). */
  readonly live: LiveStream;
  private readonly feed: EventsFeed;
  private readonly ledger: UsageLedger;
  /** canUseTool: rules, modes and durable approvals (permissions/gate.ts). */
  readonly permissions: PermissionGate;
  /** The gate as the tools use it, with what a waiting request does to the session. */
  readonly toolPermissions: SessionPermissions;
  private readonly prompts: SessionPrompts;
  private readonly reporting: SubagentReporting;
  /** Current details and search attributes (the Temporal UI, `durable-agent list`). */
  private readonly visibility = new ConversationVisibility();
  phase: Phase = 'idle';
  /** The owners' slices for continue-as-new, and whether they still fit one payload. */
  private readonly carriedAssembly = new CarriedAssembly();
  /** The running query and the record of those before (queries.ts). */
  private readonly queries: SessionQueries;
  /** Background agents, scheduled work, MCP servers, hooks, background commands: one ordered list (parts.ts). */
  readonly parts: SessionParts;
  /** Issue 31: a checkpoint before each prompt, and rewinds to them (rewinds.ts). */
  readonly rewinds: SessionRewinds;

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
    this.context = new SessionContextSlot(this.state, subagent !== undefined, (message) => this.pushEvent(message));
    this.config = withDefaultPermissions(this.state.selectedModel ? { ...initialConfig, model: this.state.selectedModel } : initialConfig);
    this.transcript = new Transcript(carried?.messages ?? resumedMessages ?? []);
    // A conversation resumed mid-tool: every tool_use needs its result before the next request.
    if (!carried && resumedMessages) this.transcript.closeDanglingToolUses('The tool call did not complete before the conversation was resumed.', uuid4);
    this.live = LiveStream.open(carried?.streamState, initialConfig.liveStream);
    feedWorkerCache(this.transcript);
    // The feed survives continue-as-new (its tail), so a client polling across the switch misses nothing.
    this.feed = new EventsFeed(carried, (event) => this.live.publishEvent(event));
    this.ledger = new UsageLedger(this.config, carried);
    this.reporting = new SubagentReporting(subagent);
    ({ permissions: this.permissions, toolPermissions: this.toolPermissions } = sessionPermissions(
      {
        conversationId,
        config: () => this.config,
        sessionContext: () => this.context.current,
        parts: () => this.parts,
        setPhase: (phase) => this.setPhase(phase),
        pushEvent: (message) => this.pushEvent(message),
        reportToParent: (line) => this.reporting.report(line),
      },
      carried?.permissions,
    ));
    const config = () => this.config;
    const sessionContext = () => this.context.current;
    this.prompts = new SessionPrompts({
      config,
      sessionContext,
      mcpInstructions: () => this.parts.mcp.instructionsSection,
      mcpTools: () => this.parts.mcp.toolDefinitions,
      userContext: (base) => this.parts.hooks.userContext(base),
    });
    const { transcript, live, ledger, permissions, toolPermissions, inputs, prompts, reporting } = this;
    this.queries = new SessionQueries(
      {
        ...{ conversationId, subagent, transcript, live, ledger, permissions, toolPermissions, inputs, prompts, reporting },
        parts: () => this.parts,
        config,
        sessionContext,
        pushEvent: (message) => this.pushEvent(message),
        setPhase: (phase) => this.setPhase(phase),
        refreshDetails: () => this.refreshDetails(),
        shouldContinueAsNew: () => this.shouldContinueAsNew(),
        compacted: () => this.contextRestarted('compact'),
      },
      carried,
    );
    this.rewinds = new SessionRewinds(
      { conversationId, transcript, enabled: subagent === undefined, config, pushEvent: (message) => this.pushEvent(message) },
      carried,
    );
    this.parts = new SessionParts(
      {
        conversationId,
        get config() {
          return config();
        },
        subagent,
        get sessionContext() {
          return sessionContext();
        },
        toolPermissions,
        notify: (key, prompt, origin) => this.notify(key, prompt, origin),
        pushEvent: (message) => this.pushEvent(message),
        refreshDetails: () => this.refreshDetails(),
        permissionMode: () => this.permissionMode(),
        recordChildUsage: (usage, costUsd, modelUsage) => this.queries.recordChildUsage(usage, costUsd, modelUsage),
        sessionAllowRules: () => [...this.permissions.sessionAllow],
        moveWorkingDirectory: (cwd) => this.moveWorkingDirectory(cwd),
      },
      carried,
      subagent,
    );
    // Issue 33: a conversation in a worktree (EnterWorktree, --worktree) works there in every run.
    const worktreeCwd = this.parts.worktree.cwd;
    if (worktreeCwd !== undefined) this.config = { ...this.config, cwd: worktreeCwd };
  }

  /**
   * EnterWorktree / ExitWorktree (issue 33): the conversation's working directory moves — tools act
   * there, paths are judged there (the permission gate reads the config as it is now) — and the
   * session context (CLAUDE.md, git status, settings) is read again from there before the next input.
   */
  private moveWorkingDirectory(cwd: string): void {
    this.config = { ...this.config, cwd };
    this.context.restarted();
    this.refreshDetails();
  }

  // ---- what others read ----

  get sessionContext(): SessionContext | undefined {
    return this.context.current;
  }
  /** What the conversation did so far (`/cost`; the workflow's result). */
  get totals(): Pick<ConversationSummary, 'queryCount' | 'usage' | 'totalCostUsd' | 'lastResult'> {
    const { queryCount, lastResult } = this.queries;
    return { queryCount, usage: this.ledger.usage, totalCostUsd: this.ledger.totalCostUsd, lastResult };
  }
  get endRequested(): boolean {
    return this.state.endRequested === true;
  }
  get busy(): boolean {
    return this.queries.busy;
  }
  get hasQueuedInput(): boolean {
    return this.inputs.length > 0;
  }
  /** A query suspended for continue-as-new, to resume before anything else. */
  get resuming(): QueryInProgress | undefined {
    return this.queries.resuming;
  }
  // ---- messages in ----

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

  /** `end`: the parts' background work stops (parts.ts); what cannot stop is a warning in the feed. */
  endBackgroundWork(): Promise<void> {
    const warn = (name: string, error: unknown) =>
      this.pushEvent({ type: 'system', uuid: uuid4(), level: 'warning', content: `Could not stop ${name} at the end: ${failureMessage(error)}` });
    return this.parts.endBackgroundWork(warn);
  }

  /** `end` signal: the conversation ends after the running query. */
  requestEnd(): void {
    this.state.endRequested = true;
  }

  /** `abort` signal: cancels the running query's scope. */
  abort(): void {
    this.queries.abort();
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
    acceptStreamedToolUse(this.queries.active, this.permissions, raw, (block) => this.parts.hooks.hasPreToolUse(block));
  }

  /** `requestContext` query: the request context a worker missed in its cache. */
  requestContext(digest: string): RequestContext | null {
    return this.prompts.get(digest);
  }

  /** After a compaction or `/clear`: SessionStart is due, and CLAUDE.md and git status are read again (a subagent's come from its parent). */
  private contextRestarted(source: 'compact' | 'clear'): void {
    this.parts.hooks.sessionRestarted(source);
    this.context.restarted();
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
    this.visibility.onPhase(next, {
      model: this.queries.currentModel,
      turns: this.queries.conversationTurn,
      costUsd: this.ledger.totalCostUsd,
      prompt: this.queries.lastPrompt,
    });
  }

  /** The owners `status` and the UI's details read (status-view.ts). */
  private view(): SessionView {
    const { conversationId, phase, config, queries, inputs, ledger, transcript, feed, permissions, parts } = this;
    const { continuedAsNewCount } = this.state;
    return { conversationId, phase, config, queries, inputs, ledger, transcript, feed, permissions, parts, continuedAsNewCount };
  }

  /** The UI's current details (status-view.ts). */
  refreshDetails(): void {
    this.visibility.showDetails(currentDetails(this.view()));
  }

  status(): ConversationStatus {
    return conversationStatus(this.view());
  }

  /** seed §2.6: the context against the thresholds, and compaction state. */
  contextStatus(): ContextStatus {
    return sessionContextStatus({ config: this.config, queries: this.queries });
  }

  /** The mode hooks and `status` are told (none when tools run unchecked). */
  permissionMode(): string | undefined {
    return permissionMode({ config: this.config, permissions: this.permissions });
  }

  // ---- continue-as-new ----

  /** What the next run starts from (continue-as-new), or undefined when it would not fit one payload. */
  toCarried(input: { config: unknown }, queryInProgress?: QueryInProgress): CarriedState | undefined {
    return this.carriedAssembly.assemble(input.config, [
      () => ({ ...this.state, continuedAsNewCount: this.state.continuedAsNewCount + 1, sessionContextAttempted: true }),
      // seed §2.7: after a compaction only the boundary and what follows travel on.
      () => ({ messages: this.transcript.carried() }),
      () => this.ledger.carried(),
      () => this.feed.carried(),
      () => this.queries.carried(queryInProgress),
      () => (this.config.permissions ? { permissions: this.permissions.toCarried() } : {}),
      () => (this.live.carried() ? { streamState: this.live.carried() } : {}),
      () => this.parts.carried(),
      () => this.rewinds.carried(),
    ]);
  }

  /** Whether the carried state fitted one payload the last time it was assembled. */
  get continueAsNewFitsPayload(): boolean {
    return this.carriedAssembly.fits;
  }

  /** Whether this run should continue as new now (state.ts continueAsNewNow). */
  shouldContinueAsNew(): boolean {
    return continueAsNewNow({
      fits: this.carriedAssembly.fits,
      maxEvents: this.config.continueAsNewAfterEvents,
      compactedThisRun: this.queries.compactedThisRun,
    });
  }

  // ---- queries (queries.ts) ----

  /**
   * seed §2.10 submitMessage: one query, from the user's input to the result message. With
   * `resumed`, picks up a query that an earlier run suspended for continue-as-new. Returns the
   * query's progress when the loop suspends (the caller continues-as-new with it).
   */
  async submitMessage(pending: PendingInput, resumed?: QueryInProgress): Promise<QueryInProgress | undefined> {
    // UserPromptSubmit hooks (issue 22): a blocked prompt is answered here, without a query.
    const input = resumed
      ? pending
      : await this.parts.hooks.beforeQuery(pending, inputMessage(pending).typed, (output) => this.answerLocally(pending, undefined, output, true));
    if (!input) return undefined;
    if (!resumed) await this.rewinds.beforePrompt(input, inputMessage(input).typed);
    return this.queries.submit(input, resumed);
  }

  /** Runs the suspended query (if any) first; the caller continues as new with what it returns. */
  resumeSuspendedQuery(): Promise<QueryInProgress | undefined> {
    return this.queries.resumeSuspended((pending, resumed) => this.submitMessage(pending, resumed));
  }

  /** A suspended query that could not continue as new: this run goes on with it. */
  resumeInThisRun(suspended: QueryInProgress): void {
    this.queries.resumeInThisRun(suspended);
  }

  /** Runs `work` as the one query or compaction in progress (`busy` meanwhile). */
  exclusively<T>(work: () => Promise<T>): Promise<T> {
    return this.queries.exclusively(work);
  }

  // ---- between queries ----

  /** Manual compaction (`compact` update, `/compact`): see manual-compaction.ts. */
  compactNow(instructions?: string): Promise<CompactionOutcome> {
    return this.queries.compactNow(instructions);
  }

  /** `/model`: the model of the next queries (validated by the caller). */
  selectModel(model: string): void {
    this.config = { ...this.config, model };
    this.queries.selectModel(model);
    if (model !== this.initialConfig.model) this.state.selectedModel = model;
    else delete this.state.selectedModel;
  }

  /** `/clear`: the transcript starts over; CLAUDE.md, git status and custom commands are read again before the next input. */
  clearConversation(): number {
    const removed = this.transcript.length;
    this.transcript.clear();
    this.queries.cleared();
    this.contextRestarted('clear');
    return removed;
  }

  /** A local command's answer (seed §2.10 shouldQuery = false): its record in the transcript, the feed, and a result message. */
  answerLocally(input: PendingInput, record: UserMessage | undefined, output: string, isError: boolean): void {
    this.queries.answerLocally(input, record, output, isError);
  }

  /** Waits until a subagent's parent has every progress report (see subagent-reporting.ts). */
  settleParentReports(): Promise<void> {
    return this.reporting.settle();
  }
}
