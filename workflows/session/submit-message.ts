/**
 * seed §2.10 submitMessage: one query, from the user's input to the result message. The query's
 * own progress (turns, transitions, the inputs it consumed, its last answer) is one `QueryRun`;
 * the loop's messages are consumed by the session (seed §2.10 Phase D); a suspended query returns
 * its progress for continue-as-new.
 */
import { log, uuid4 } from '@temporalio/workflow';
import type { RequestContext } from '../../common/activity-types';
import { type Message, type UserMessage, textOf } from '../../common/messages';
import type { ResultMessage, Terminal, TransitionType } from '../../common/result';
import type { CompactionState, PendingInput, QueryInProgress, SubagentOrigin } from '../definitions';
import { failureMessage } from '../deps/failures';
import type { PermissionGate } from '../permissions/gate';
import { type ActiveQuery, type QueryHost, createQueryDeps } from '../deps/index';
import { type LoopCheckpoint, type LoopOutput, type LoopSession, type Suspended, queryLoop } from '../query/loop';
import { parseTokenBudget } from '../query/token-budget';
import { INTERRUPTED_BY_USER } from '../query/tool-orchestration';
import type { Transcript } from '../transcript';
import { queryResultMessage } from './result-message';
import type { UsageLedger } from './usage-ledger';

/** One query's own progress; carried (as `QueryInProgress`) when it is suspended. */
export class QueryRun {
  readonly startedAt: number;
  turnCount: number;
  readonly transitions: TransitionType[];
  readonly consumedInputUuids: string[];
  lastAssistantText: string;
  lastStopReason: string | null;
  readonly tokenBudget: number | null;
  /** The latest worker clock a local model call reported (a reading from an earlier query says nothing of this one's end). */
  private workerClockMs = 0;

  constructor(
    readonly pending: PendingInput,
    resumed: QueryInProgress | undefined,
    configuredTokenBudget: number | undefined,
  ) {
    this.startedAt = resumed?.startedAt ?? Date.now();
    this.turnCount = resumed?.turnCount ?? 1;
    this.transitions = resumed ? [...resumed.transitions] : [];
    this.consumedInputUuids = resumed ? [...resumed.consumedInputUuids] : [pending.uuid];
    this.lastAssistantText = resumed?.lastAssistantText ?? '';
    this.lastStopReason = resumed?.lastStopReason ?? null;
    this.tokenBudget = resumed ? resumed.tokenBudget : (configuredTokenBudget ?? parseTokenBudget(pending.prompt));
  }

  /** The loop continued (it owns the turn count; this is what it reported). */
  onTransition(transition: TransitionType, turnCount: number): void {
    this.transitions.push(transition);
    this.turnCount = turnCount;
  }

  observeWorkerClock(at: number): void {
    if (at > this.workerClockMs) this.workerClockMs = at;
  }

  /** An input queued into the running query. */
  consumed(uuid: string): void {
    this.consumedInputUuids.push(uuid);
  }

  /** What the result says the answer was. */
  observe(message: Message): void {
    if (message.type !== 'assistant' || message.apiError) return;
    const text = textOf(message);
    if (text) this.lastAssistantText = text;
    this.lastStopReason = message.message.stop_reason;
  }

  /** Inside a workflow task of local activities the workflow clock lags the worker's (deps/model-call.ts). */
  durationMs(): number {
    return Math.max(Date.now(), this.workerClockMs) - this.startedAt;
  }

  toInProgress(checkpoint: LoopCheckpoint, ledger: UsageLedger): QueryInProgress {
    return {
      pending: this.pending,
      startedAt: this.startedAt,
      ...ledger.queryCarried(),
      turnCount: this.turnCount,
      transitions: [...this.transitions],
      consumedInputUuids: this.consumedInputUuids,
      lastAssistantText: this.lastAssistantText,
      lastStopReason: this.lastStopReason,
      tokenBudget: this.tokenBudget,
      checkpoint: checkpoint,
    };
  }
}

/** The query's input as the transcript keeps it, and as the person typed it (a custom command by its name). */
export function inputMessage(pending: PendingInput): { message: UserMessage; typed: string } {
  const message: UserMessage = {
    type: 'user',
    uuid: pending.uuid,
    message: { role: 'user', content: pending.prompt },
    ...(pending.command && { command: { ...pending.command, kind: 'prompt' as const } }),
  };
  const typed = pending.command ? `/${pending.command.name}${pending.command.args ? ` ${pending.command.args}` : ''}` : pending.prompt;
  return { message, typed };
}

/** What submitting a message needs of the conversation (implemented by `SessionQueries`, queries.ts). */
export interface SubmitHost extends QueryHost, LoopSession {
  readonly subagent?: SubagentOrigin;
  readonly transcript: Transcript;
  readonly ledger: UsageLedger;
  readonly permissions: PermissionGate;
  readonly compaction: CompactionState;
  promptLayers(): { systemPrompt: RequestContext['system']; userContext: string | undefined };
  /** The query starts: the conversation's running query, in its own cancellation scope. */
  startQuery(run: QueryRun, resumed: QueryInProgress | undefined): ActiveQuery;
  /** seed §2.10 Phase D: a message or event the loop yielded. */
  consume(output: LoopOutput): void;
  /** The loop returned (or threw): nothing runs any more. */
  endQuery(): void;
  /** The result message: the session records and shows it. */
  finishQuery(result: ResultMessage): void;
}

/** Returns the query's progress when the loop suspends (the caller continues-as-new with it). */
export async function submitMessage(session: SubmitHost, pending: PendingInput, resumed: QueryInProgress | undefined): Promise<QueryInProgress | undefined> {
  const { config, transcript, ledger } = session;
  const run = new QueryRun(pending, resumed, config.tokenBudget);
  // A new query tries the primary model again; a resumed one keeps the model it had.
  // A custom command's `model` holds for its own query only.
  const model = pending.model ?? config.model;
  const query = session.startQuery(run, resumed);

  let terminal: Terminal | Suspended;
  const { systemPrompt, userContext } = session.promptLayers();
  const generator = queryLoop(
    {
      transcript,
      systemPrompt,
      userContext,
      model,
      fallbackModel: config.fallbackModel,
      maxTurns: config.maxTurns,
      maxOutputTokens: config.maxOutputTokens,
      tokenBudget: run.tokenBudget,
      contextWindowTokens: config.contextWindowTokens,
      modelMaxOutputTokens: config.modelMaxOutputTokens,
      agentId: session.subagent?.agentType,
      compaction: {
        autoCompact: config.autoCompact,
        snip: config.snip,
        microcompactGapMs: config.microcompactGapMs,
        consecutiveFailures: session.compaction.consecutiveFailures,
      },
      resume: resumed?.checkpoint,
    },
    createQueryDeps(session, query),
    session,
  );
  try {
    while (true) {
      const next = await generator.next();
      if (next.done) {
        terminal = next.value;
        break;
      }
      session.consume(next.value);
    }
  } catch (error) {
    // A bug in the loop must not lose the conversation: stop whatever still runs and end the
    // query with an error result (the history is repaired below).
    log.error('Query loop failed', { error: String(error) });
    query.scope.cancel();
    terminal = { reason: 'model_error', error: `Internal error: ${failureMessage(error)}` };
  } finally {
    session.endQuery();
  }

  if (terminal.reason === 'suspended') return run.toInProgress(terminal.checkpoint, ledger);
  // Issue 33: StopFailure hooks when the turn ended on an API error (instead of Stop).
  if ((terminal.reason === 'model_error' || terminal.reason === 'prompt_too_long') && session.hooks?.stopFailure) {
    await session.hooks.stopFailure(terminal.error ?? terminal.reason, run.lastAssistantText);
  }
  // Inputs the model never answered (the query's own, or ones queued into it) made the request
  // too large: keeping them would make every later query fail the same way. They leave the
  // transcript (the events feed keeps them); tool results and everything answered stay.
  const inputDropped =
    (terminal.reason === 'prompt_too_long' || terminal.reason === 'blocking_limit') && transcript.dropUnansweredInputs(run.consumedInputUuids);
  // Safety net: the loop answers every tool_use itself; anything left would break the next request.
  transcript.closeDanglingToolUses(terminal.reason.startsWith('aborted') ? INTERRUPTED_BY_USER : 'The tool call did not complete.', uuid4);
  session.finishQuery(
    queryResultMessage({
      terminal,
      inputDropped,
      lastAssistantText: run.lastAssistantText,
      lastStopReason: run.lastStopReason,
      turnCount: run.turnCount,
      durationMs: run.durationMs(),
      apiDurationMs: ledger.apiDurationMs,
      totals: ledger.queryTotals(),
      permissionDenials: session.permissions.takeDenials(),
      conversationId: session.conversationId,
      uuid: uuid4(),
      inputUuid: pending.uuid,
      inputUuids: [...run.consumedInputUuids],
      transitions: [...run.transitions],
      model: session.currentModel,
      accounting: ledger.accounting,
    }),
  );
  return undefined;
}
