/**
 * The conversation's queries (seed §2.10 submitMessage, from the session's side): the one running
 * — its slot (the `ActiveQuery`'s one owner), its `QueryRun`, the model it uses, the context size
 * and the tools in flight — and the record of those before (how many, the last result and its
 * transitions, the turns, the compactions and the breaker's streak), carried as this owner's slice.
 * It is what the loop and its effects see of the conversation (`SubmitHost`: `QueryHost` and
 * `LoopSession`), made by the session from narrow pieces (`QueriesContext`).
 */
import { uuid4 } from '@temporalio/workflow';
import type { RequestContext, SessionContext } from '../../common/activity-types';
import type { ConversationConfig } from '../../common/config';
import type { McpToolDefinition } from '../../common/mcp-context';
import type { AssistantApiMessage, Usage, UserMessage } from '../../common/messages';
import type { ModelUsage, ResultMessage, Terminal, TransitionType } from '../../common/result';
import type { ActiveQuery } from '../query/active-query';
import type { CompactOutcome } from '../compaction/summary';
import type {
  CarriedState,
  CompactionOutcome,
  CompactionState,
  ConversationEvent,
  PendingInput,
  Phase,
  QueryInProgress,
  SubagentOrigin,
  ToolInFlight,
} from '../definitions';
import type { ToolRoute } from '../deps/query-host';
import type { SessionHooks } from '../extensions/hooks';
import type { McpServers } from '../extensions/mcp';
import type { SkillSession } from './skills';
import type { LiveStream } from '../ui/live-stream';
import { metaUserMessage } from '../messages';
import type { PermissionGate } from '../permissions/gate';
import type { QueryAccounting } from '../query/accounting';
import { type LoopEvent, type LoopOutput, isLoopEvent } from '../query/state';
import type { Transcript } from '../transcript';
import type { InputQueue } from './input-queue';
import { compactNow } from './manual-compaction';
import { QuerySlot } from './query-slot';
import type { SessionPrompts } from './request-contexts';
import { localCommandResultMessage } from './result-message';
import { type QueryRecord, queryRecordFrom, recordCompaction } from './query-record';
import type { SubagentReporting } from './subagent-reporting';
import { QueryRun, type SubmitHost, inputMessage, submitMessage } from './submit-message';
import type { SessionPermissions } from './tool-permissions';
import type { UsageLedger } from './usage-ledger';

/** What the queries use of the conversation: its other owners and a few callbacks, never the session. */
export interface QueriesContext {
  readonly conversationId: string;
  readonly subagent?: SubagentOrigin;
  readonly transcript: Transcript;
  readonly live: LiveStream;
  readonly ledger: UsageLedger;
  readonly permissions: PermissionGate;
  readonly toolPermissions: SessionPermissions;
  readonly inputs: InputQueue;
  readonly prompts: SessionPrompts;
  readonly reporting: SubagentReporting;
  /** The parts the effects use: tool routes, hooks, MCP servers (made after the queries' context). */
  readonly parts: () => { readonly routes: readonly ToolRoute[]; readonly hooks: SessionHooks; readonly mcp: McpServers; readonly skills: SkillSession };
  config(): ConversationConfig;
  sessionContext(): SessionContext | undefined;
  pushEvent(message: ConversationEvent['message']): void;
  setPhase(phase: Phase): void;
  refreshDetails(): void;
  /** Whether this run should continue as new now (checked at the loop's quiet points). */
  shouldContinueAsNew(): boolean;
  /** A compaction succeeded: the session context is read again before the next input. */
  compacted(): void;
}

export class SessionQueries implements SubmitHost {
  private record: QueryRecord;
  private readonly slot = new QuerySlot();
  /** The running (or last) query's own progress. */
  private run: QueryRun | undefined;
  readonly toolsInFlight = new Map<string, ToolInFlight>();
  /** The model of the running (or last) query: the loop reports a switch to the fallback. */
  currentModel: string;
  private tokens = 0;
  private compactedInThisRun = false;
  /** The last prompt a person sent, for the UI's current details (not carried across continue-as-new). */
  private prompt: string | undefined;

  constructor(
    private readonly context: QueriesContext,
    carried: CarriedState | undefined,
  ) {
    this.record = queryRecordFrom(carried);
    this.currentModel = context.config().model;
  }

  // ---- what the session and the effects read ----

  get conversationId(): string {
    return this.context.conversationId;
  }
  get subagent(): SubagentOrigin | undefined {
    return this.context.subagent;
  }
  get config(): ConversationConfig {
    return this.context.config();
  }
  get transcript(): Transcript {
    return this.context.transcript;
  }
  get live(): LiveStream {
    return this.context.live;
  }
  get ledger(): UsageLedger {
    return this.context.ledger;
  }
  get permissions(): PermissionGate {
    return this.context.permissions;
  }
  get toolPermissions(): SessionPermissions {
    return this.context.toolPermissions;
  }
  get sessionContext(): SessionContext | undefined {
    return this.context.sessionContext();
  }
  get toolRoutes(): readonly ToolRoute[] {
    return this.context.parts().routes;
  }
  get hooks(): SessionHooks {
    return this.context.parts().hooks;
  }
  get mcp(): McpServers {
    return this.context.parts().mcp;
  }
  get extensionTools(): readonly McpToolDefinition[] {
    return this.context.parts().mcp.toolDefinitions;
  }
  get accounting(): QueryAccounting {
    return this.context.ledger.accounting;
  }
  get queryCount(): number {
    return this.record.queryCount;
  }
  get lastResult(): ResultMessage | undefined {
    return this.record.lastResult;
  }
  get lastQueryTransitions(): TransitionType[] {
    return this.record.lastQueryTransitions;
  }
  get compaction(): CompactionState {
    return this.record.compaction;
  }
  get contextTokens(): number {
    return this.tokens;
  }
  get lastPrompt(): string | undefined {
    return this.prompt;
  }
  get compactedThisRun(): boolean {
    return this.compactedInThisRun;
  }
  get busy(): boolean {
    return this.slot.busy;
  }
  /** A query suspended for continue-as-new, to resume before anything else. */
  get resuming(): QueryInProgress | undefined {
    return this.record.queryInProgress;
  }
  /** Turns of the running (or last) query. */
  get turnCount(): number {
    return this.run?.turnCount ?? 0;
  }
  /** Number of the current (or last) turn over the whole conversation. */
  get conversationTurn(): number {
    return this.record.completedTurns + (this.slot.current && this.run ? this.run.turnCount : 0);
  }
  /** The running query's transitions (none between queries). */
  get transitions(): TransitionType[] {
    return this.slot.current && this.run ? this.run.transitions : [];
  }
  /** The running query or compaction (the `toolUseStreamed` signal reaches its executor). */
  get active(): ActiveQuery | undefined {
    return this.slot.current;
  }

  /** What continue-as-new carries of the queries, with the query a suspension hands over. */
  carried(queryInProgress: QueryInProgress | undefined): Partial<CarriedState> {
    return { ...this.record, queryInProgress };
  }

  setPhase(phase: Phase): void {
    this.context.setPhase(phase);
  }
  promptLayers(): { systemPrompt: RequestContext['system']; userContext: string | undefined } {
    return this.context.prompts.layers();
  }
  registerRequestContext(system: RequestContext['system'], userContext: string | undefined): string {
    return this.context.prompts.register(system, userContext);
  }
  currentRequestContext(): string {
    return this.context.prompts.current();
  }

  // ---- usage (QueryHost) ----

  /** A local activity's clock reading (ms since epoch). */
  observeWorkerClock(at: number): void {
    this.run?.observeWorkerClock(at);
  }

  recordModelResponse(message: AssistantApiMessage, model: string, durationMs: number): void {
    this.recordUsage(message.usage, message.model || model, durationMs);
    this.tokens = message.usage.input_tokens + message.usage.cache_creation_input_tokens + message.usage.cache_read_input_tokens;
    this.context.refreshDetails();
  }

  recordUsage(usage: Usage, model: string, durationMs: number): void {
    this.context.ledger.recordModelCall(usage, model, durationMs);
  }

  recordChildUsage(usage: Usage, costUsd: number, modelUsage?: Record<string, ModelUsage>): void {
    this.context.ledger.recordChild(usage, costUsd, modelUsage, this.currentModel);
  }

  // ---- LoopSession: what the loop asks; what it tells comes with its messages (consume) ----

  /** seed §2.10: the budget and structured-output limits, checked by the loop between messages. */
  checkLimits(after: 'assistant' | 'tool_results'): Terminal | undefined {
    return this.context.ledger.checkLimits(after);
  }

  takeQueuedInputs(): UserMessage[] {
    // Issue 33 §3: the bodies of skills the turn's Skill calls loaded come first, right after the tool results.
    const skills = this.context.parts().skills.takeLoaded();
    return [...skills, ...this.queuedInputs()];
  }

  private queuedInputs(): UserMessage[] {
    return this.context.inputs.takeForRunningQuery().map((input): UserMessage => {
      this.context.pushEvent({ type: 'user_input', uuid: input.uuid, prompt: input.prompt });
      this.prompt = input.prompt;
      this.run?.consumed(input.uuid);
      return { type: 'user', uuid: input.uuid, message: { role: 'user', content: input.prompt } };
    });
  }

  // Mid-query continue-as-new keeps a long task's history bounded (architecture notes).
  shouldSuspend(): boolean {
    return this.context.shouldContinueAsNew();
  }

  // ---- one query (submit-message.ts) ----

  /** seed §2.10 submitMessage; with `resumed`, a query an earlier run suspended. Returns its progress when the loop suspends. */
  submit(input: PendingInput, resumed?: QueryInProgress): Promise<QueryInProgress | undefined> {
    return submitMessage(this, input, resumed);
  }

  /** Runs the suspended query (if any) first; `submit` is the session's (with its hooks). */
  async resumeSuspended(
    submit: (pending: PendingInput, resumed: QueryInProgress) => Promise<QueryInProgress | undefined>,
  ): Promise<QueryInProgress | undefined> {
    const resumed = this.record.queryInProgress;
    if (!resumed) return undefined;
    const suspended = await submit(resumed.pending, resumed);
    delete this.record.queryInProgress;
    return suspended;
  }

  /** A suspended query that could not continue as new: this run goes on with it. */
  resumeInThisRun(suspended: QueryInProgress): void {
    this.record.queryInProgress = suspended;
  }

  /** Runs `work` as the one query or compaction in progress (`busy` meanwhile). */
  exclusively<T>(work: () => Promise<T>): Promise<T> {
    return this.slot.exclusively(work);
  }

  /** `abort` signal: cancels the running query's scope (or the suspended one's, once it resumes). */
  abort(): void {
    this.slot.abort(this.record.queryInProgress !== undefined);
  }

  /** SubmitHost.startQuery */
  startQuery(run: QueryRun, resumed: QueryInProgress | undefined): ActiveQuery {
    this.run = run;
    this.context.ledger.startQuery(resumed);
    this.context.parts().skills.startQuery(run.pending.grant);
    if (!resumed) {
      const { message, typed } = inputMessage(run.pending);
      this.record.queryCount++;
      this.context.transcript.append(message);
      // UserPromptSubmit hooks' context joins the prompt (issue 22).
      if (run.pending.hookContext) this.context.transcript.append(metaUserMessage(uuid4(), run.pending.hookContext));
      this.context.pushEvent({ type: 'user_input', uuid: run.pending.uuid, prompt: typed });
      this.prompt = typed;
    }
    return this.slot.startQuery(resumed !== undefined);
  }

  /** seed §2.10 Phase D: append to history, update status, feed the progress events; the loop's own events update what it reports. */
  consume(output: LoopOutput): void {
    if (isLoopEvent(output)) return this.onLoopEvent(output);
    const message = output;
    if (message.type === 'user' || message.type === 'assistant' || message.type === 'compact_boundary') this.context.transcript.append(message);
    if (message.type === 'tombstone') this.context.transcript.remove(message.target);
    if (this.slot.current && this.run) this.run.observe(message);
    this.context.pushEvent(message);
    this.context.reporting.reportMessage(message);
  }

  /** The loop owns the query's model, turns, transitions and compaction streak; the session records what it reports. */
  private onLoopEvent(event: LoopEvent): void {
    switch (event.type) {
      case 'model':
        return void (this.currentModel = event.model);
      case 'transition':
        return this.run?.onTransition(event.transition, event.turnCount);
      case 'compacting':
        return this.context.setPhase('compacting');
      case 'compaction':
        return this.onCompaction(event.outcome, event.consecutiveFailures);
      case 'context_tokens':
        return void (this.tokens = event.tokens);
    }
  }

  /** A compaction ended (the loop's, or a manual one): recorded, and the failure streak kept across queries. */
  private onCompaction(outcome: CompactOutcome, consecutiveFailures: number): void {
    this.record.compaction = recordCompaction(this.record.compaction, outcome, consecutiveFailures, Date.now());
    if (outcome.compacted) {
      this.compactedInThisRun = true;
      this.context.compacted();
      this.tokens = outcome.postTokens ?? this.tokens;
    }
  }

  /** SubmitHost.endQuery */
  endQuery(): void {
    this.slot.endQuery();
    this.toolsInFlight.clear();
  }

  /** SubmitHost.finishQuery: the result is recorded, shown, and the turns counted. */
  finishQuery(result: ResultMessage): void {
    this.record.lastQueryTransitions = result.transitions ?? [];
    this.record.lastResult = result;
    this.record.completedTurns += this.turnCount;
    this.context.pushEvent(result);
    this.context.reporting.reportAnswer(result, this.record.queryCount);
    this.toolsInFlight.clear();
    this.context.refreshDetails();
  }

  // ---- between queries ----

  /** Manual compaction (`compact` update, `/compact`): see manual-compaction.ts; a success closes the breaker, a failure does not count toward it. */
  async compactNow(instructions: string | undefined): Promise<CompactionOutcome> {
    try {
      return await compactNow(this, this.slot.startCompaction(), instructions, (outcome) => {
        this.onCompaction(outcome, outcome.compacted ? 0 : this.record.compaction.consecutiveFailures);
        return this.record.compaction.lastCompaction!;
      });
    } finally {
      this.slot.endCompaction();
      this.context.setPhase(this.context.inputs.length > 0 ? 'calling_model' : 'awaiting_input');
    }
  }

  /** `/model`: the model the next queries use. */
  selectModel(model: string): void {
    this.currentModel = model;
  }

  /** `/clear`: nothing of the context is used any more. */
  cleared(): void {
    this.tokens = 0;
  }

  /** A local command's answer (seed §2.10 shouldQuery = false): its record in the transcript, the feed, and a result message. */
  answerLocally(input: PendingInput, record: UserMessage | undefined, output: string, isError: boolean): void {
    this.context.pushEvent({ type: 'user_input', uuid: input.uuid, prompt: input.prompt });
    if (record) {
      this.context.transcript.append(record);
      this.context.pushEvent(record);
    }
    const result = localCommandResultMessage({
      output,
      isError,
      conversationId: this.context.conversationId,
      uuid: uuid4(),
      inputUuid: input.uuid,
      model: this.context.config().model,
    });
    this.record.lastResult = result;
    this.context.pushEvent(result);
  }
}
