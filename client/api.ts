/**
 * Typed client API for conversations: start, send follow-ups, read status and events, abort,
 * end, and wait for a query's result. The CLI is a thin shell over this.
 */
import type { ForkOutcome, ForkRequest, RewindOutcome, RewindPointListing, RewindRequest } from '../common/checkpoints';
import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { type ConversationConfig, type ConversationConfigInput, parseConversationConfig } from '../common/config';
import { checkPromptSize } from './prompt-limits';
import type { ResultMessage } from '../common/result';
import { closedConversationStatus } from './closed-status';
import { SEARCH_ATTRIBUTES, sqlSafeSearchAttributes, startSearchAttributes } from '../common/search-attributes';
import {
  type CompactionOutcome,
  type ConversationEvent,
  type ConversationStatus,
  type ConversationSummary,
  abortSignal,
  approveMcpServersUpdate,
  compactUpdate,
  checkpointsUpdate,
  forkUpdate,
  rewindUpdate,
  decidePermissionUpdate,
  endSignal,
  eventsQuery,
  statusQuery,
  transcriptSliceQuery,
  userInputSignal,
} from '../workflows/definitions';
import type { TranscriptMessage } from '../common/messages';
import type { conversationWorkflow } from '../workflows';
import type { PermissionDecisionRequest, RecordedPermissionDecision } from '../workflows/permissions/types';
import type { McpApprovalOutcome, McpApprovalRequest } from '../workflows/extensions/mcp-state';
import { NoLiveStreamError, readLive } from './live';
import { type LiveEntry, answers as answersInput } from './live-view';
import { oneLine } from '../common/cut-text';
import { cliCommand } from './invocation';

/** Thrown for a conversation id the server does not know. */
export class ConversationNotFoundError extends Error {
  override readonly name = 'ConversationNotFoundError';
  constructor(readonly conversationId: string) {
    super(`No conversation with id "${conversationId}" was found. \`${cliCommand('list')}\` shows the conversations on this server.`);
  }
}

/** Thrown for an id Temporal would refuse (empty, too long, control characters). */
export class InvalidConversationIdError extends Error {
  override readonly name = 'InvalidConversationIdError';
}

/** Thrown when input is sent to a conversation that has already ended. */
export class ConversationEndedError extends Error {
  override readonly name = 'ConversationEndedError';
  constructor(
    readonly conversationId: string,
    readonly status: string,
  ) {
    super(`Conversation "${conversationId}" has ended (${status}); start a new one with \`${cliCommand('start')}\`.`);
  }
}

/** Thrown when `start` names an id a running conversation already has. */
export class ConversationExistsError extends Error {
  override readonly name = 'ConversationExistsError';
  constructor(readonly conversationId: string) {
    super(
      `A conversation with id "${conversationId}" is already running. Send to it with \`${cliCommand(`send ${conversationId} "<prompt>"`)}\`, or choose another --id.`,
    );
  }
}

/** How long `status` waits for a worker to answer the query of an ended conversation before using its result. */
const CLOSED_QUERY_TIMEOUT_MS = 5_000;

/** Temporal's default limit on workflow id length (bytes). */
export const MAX_CONVERSATION_ID_BYTES = 1000;

/** Why `id` cannot be a conversation id, or undefined when it can. */
export function conversationIdProblem(id: string): string | undefined {
  if (id.trim() === '') return 'the conversation id is empty';
  if (id !== id.trim()) return 'the conversation id starts or ends with whitespace';
  if (/[\u0000-\u001f\u007f]/.test(id)) return 'the conversation id contains control characters';
  const bytes = Buffer.byteLength(id);
  if (bytes > MAX_CONVERSATION_ID_BYTES) return `the conversation id is ${bytes} bytes long; the limit is ${MAX_CONVERSATION_ID_BYTES}`;
  return undefined;
}

export interface StartOptions {
  id?: string;
  prompt?: string;
  /**
   * The first prompt when it is sent after the start (chat's `durable-agent "fix the bug"`): it names the
   * conversation (id, summary, first-prompt attribute) as `prompt` does.
   */
  firstPrompt?: string;
  config: ConversationConfigInput;
  taskQueue: string;
  /** `start --resume`: the transcript the new conversation continues from. */
  resume?: { fromConversationId: string; messages: TranscriptMessage[] };
}

export interface WaitOptions {
  /** Skip events with a lower seq (they belong to earlier queries). */
  afterSeq?: number;
  /** Where to start reading the live channel (default: the start of what the run keeps). */
  fromOffset?: number;
  onEvent?: (event: ConversationEvent) => void;
  /** Every live item (events, model deltas, tool items) in order. */
  onLive?: (entry: LiveEntry) => void;
  /** false: poll the `events` query instead of reading the live channel. */
  live?: boolean;
  /**
   * The conversation closes once it has answered (a one-shot `ask`): with nothing to show on the
   * way (no `onEvent`, `onLive` or `signal`), its result is awaited as the workflow's own result, a
   * long poll the server answers when the run closes — no live reads, no query replayed on a
   * closed run; with `onLive` (no `onEvent`), the live read runs beside that wait (`showUntilClosed`).
   */
  closesWithResult?: boolean;
  pollMs?: number;
  signal?: AbortSignal;
}

export class ConversationClient {
  constructor(readonly client: Client) {}

  /** Starts a conversation workflow; returns its id and the uuid of the first input. */
  async start(
    options: StartOptions,
  ): Promise<{ conversationId: string; inputUuid?: string; handle: WorkflowHandleWithFirstExecutionRunId<typeof conversationWorkflow> }> {
    const config = parseConversationConfig(options.config); // clear field errors before anything is sent
    checkPromptSize(options.prompt);
    // With encrypted payloads the id (plain text in history and listings) must not spell the prompt.
    const name = options.prompt ?? options.firstPrompt;
    const conversationId = options.id ?? (this.encrypted ? `conversation-${randomUUID().slice(0, 8)}` : newConversationId(name));
    const idProblem = conversationIdProblem(conversationId);
    if (idProblem) throw new InvalidConversationIdError(idProblem);
    const inputUuid = options.prompt ? randomUUID() : undefined;
    const registered = await this.registeredSearchAttributes();
    const startOptions = {
      workflowId: conversationId,
      taskQueue: options.taskQueue,
      args: [{ config: options.config, initialPrompt: options.prompt, initialPromptUuid: inputUuid, resume: options.resume }] as Parameters<
        typeof conversationWorkflow
      >,
      staticSummary: name ? `durable-agent: ${oneLine(name, 120)}` : 'durable-agent conversation',
      staticDetails: staticDetails(config, name),
      // Values SQL visibility can store (a colon in the prompt failed every visibility write on PostgreSQL).
      typedSearchAttributes: sqlSafeSearchAttributes(
        startSearchAttributes(
          {
            status: options.prompt ? 'running' : 'awaiting_input',
            model: config.model,
            firstPrompt: name,
            namedAtFirstPrompt: true,
            workspace: config.cwd,
            now: new Date(),
            forkedFrom: config.forkedFrom?.conversationId,
          },
          registered,
          // Search attributes stay in clear: with encrypted history, no prompt text or path goes there.
          { withContent: !this.encrypted },
        ),
      ),
    };
    let handle: WorkflowHandleWithFirstExecutionRunId<typeof conversationWorkflow>;
    try {
      handle = await this.client.workflow.start<typeof conversationWorkflow>('conversationWorkflow', startOptions);
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) throw new ConversationExistsError(conversationId);
      throw error;
    }
    return { conversationId, inputUuid, handle };
  }

  /** Sends a follow-up; returns the input's uuid (the result's `input_uuid`). */
  async send(conversationId: string, prompt: string): Promise<string> {
    checkPromptSize(prompt);
    const uuid = randomUUID();
    await this.guard(conversationId, (handle) => handle.signal(userInputSignal, { prompt, uuid }));
    return uuid;
  }

  /**
   * The `status` query while the conversation runs. Once it has ended, the status is rebuilt from
   * its result (client/closed-status.ts): the same answer whether or not a worker polls its task
   * queue (the `npm start` demo's queue has none once the demo exits), and no replay. A run that
   * failed or was terminated has no result: the query if a worker answers it soon, else its
   * search attributes.
   */
  async status(conversationId: string): Promise<ConversationStatus> {
    const handle = this.client.workflow.getHandle<typeof conversationWorkflow>(conversationId);
    const description = await this.describe(conversationId);
    if (description.status.name === 'RUNNING') return this.guard(conversationId, (running) => running.query(statusQuery));
    if (description.status.name === 'COMPLETED') {
      const summary = await handle.result().catch(() => undefined);
      if (summary) return closedConversationStatus(conversationId, { ...description, status: description.status.name }, summary);
    }
    if (await this.hasPollers(description.taskQueue)) {
      // A worker that has just stopped is still listed for a while: do not wait for it long.
      const deadline = Date.now() + CLOSED_QUERY_TIMEOUT_MS;
      const queried = await this.client.connection.withDeadline(deadline, () => handle.query(statusQuery)).catch(() => undefined);
      if (queried) return queried;
    }
    return closedConversationStatus(conversationId, { ...description, status: description.status.name });
  }

  /** The workflow's description; ConversationNotFoundError for an id the server does not know. */
  async describe(conversationId: string): Promise<WorkflowExecutionDescription> {
    return this.client.workflow
      .getHandle(conversationId)
      .describe()
      .catch((error: unknown) => {
        throw error instanceof WorkflowNotFoundError ? new ConversationNotFoundError(conversationId) : error;
      });
  }

  /** Whether a worker polls this task queue for workflow tasks now; undefined when the server cannot say. */
  async hasPollers(taskQueue: string): Promise<boolean | undefined> {
    const request = { namespace: this.client.options.namespace, taskQueue: { name: taskQueue } };
    return this.client.workflowService.describeTaskQueue(request).then(
      (response) => (response.pollers ?? []).length > 0,
      () => undefined,
    );
  }

  async events(conversationId: string, afterSeq = 0): Promise<{ events: ConversationEvent[]; nextSeq: number }> {
    return this.guard(conversationId, (handle) => handle.query(eventsQuery, afterSeq));
  }

  async abort(conversationId: string, reason?: string): Promise<void> {
    await this.guard(conversationId, (handle) => handle.signal(abortSignal, { reason }));
  }

  /**
   * Compacts the conversation now (Claude Code's `/compact [instructions]`, seed §2.7): the
   * workflow summarizes the transcript after the running query, if one runs, and answers with
   * what it did. A refusal (nothing to compact, the summary failed) is an outcome with
   * `compacted: false`, not an error.
   */
  async compact(conversationId: string, instructions?: string): Promise<CompactionOutcome> {
    const request = instructions?.trim() ? { instructions: instructions.trim() } : {};
    return this.guard(conversationId, (handle) => handle.executeUpdate(compactUpdate, { args: [request] }));
  }

  /**
   * Rewinds the conversation (issue 31, Claude Code's `/rewind`): its files and/or its transcript
   * as they were just before prompt `to` (1 = its start), after the running query if one runs.
   * A request the workflow cannot carry out (no such prompt, no checkpoint) is refused with why.
   */
  async rewind(conversationId: string, request: RewindRequest): Promise<RewindOutcome> {
    return this.guard(conversationId, (handle) => handle.executeUpdate(rewindUpdate, { args: [request] }));
  }

  /**
   * Forks the conversation (issue 31): the parent makes the fork's workspace from the checkpoint
   * before prompt `at` (default: now) on its workspace's host; a new conversation then starts in it
   * from the parent's transcript before that prompt, linked to its parent. The parent is unchanged.
   */
  async fork(
    conversationId: string,
    request: ForkRequest,
    options: { taskQueue: string; id?: string; prompt?: string },
  ): Promise<{ conversationId: string; inputUuid?: string; fork: Omit<ForkOutcome, 'messages' | 'config'> }> {
    const outcome = await this.guard(conversationId, (handle) => handle.executeUpdate(forkUpdate, { args: [request] }));
    const { messages, config, ...fork } = outcome;
    const parentConfig = (config ?? {}) as ConversationConfigInput;
    const started = await this.start({
      id: options.id,
      prompt: options.prompt,
      taskQueue: options.taskQueue,
      config: { ...parentConfig, cwd: fork.cwd, forkedFrom: { conversationId, ...(fork.at !== undefined && { prompt: fork.at }) } },
      ...(messages.length > 0 && { resume: { fromConversationId: conversationId, messages } }),
    });
    return { conversationId: started.conversationId, inputUuid: started.inputUuid, fork };
  }

  /** The prompts a rewind can go back to, with the files changed in the workspace since each. */
  async checkpoints(conversationId: string): Promise<RewindPointListing[]> {
    return this.guard(conversationId, (handle) => handle.executeUpdate(checkpointsUpdate));
  }

  /**
   * The whole transcript, paged through the `transcriptSlice` query (each page well under the
   * payload limit). An ended conversation answers too, if a worker is there to replay it.
   */
  async transcript(conversationId: string): Promise<TranscriptMessage[]> {
    const messages: TranscriptMessage[] = [];
    for (;;) {
      const slice = await this.guard(conversationId, (handle) => handle.query(transcriptSliceQuery, { from: messages.length }));
      messages.push(...slice.messages);
      if (slice.messages.length === 0 || messages.length >= slice.length) return messages;
    }
  }

  /**
   * Decides a waiting permission request (`approve` / `deny`): exactly once — a duplicate gets the
   * recorded decision; an unknown id is refused by the workflow's validator.
   */
  async decidePermission(conversationId: string, request: PermissionDecisionRequest): Promise<RecordedPermissionDecision> {
    return this.guard(conversationId, (handle) => handle.executeUpdate(decidePermissionUpdate, { args: [request] }));
  }

  /**
   * Answers "Use the MCP server … from .mcp.json?" (issue 22): the choice is saved in the
   * workspace's `.claude/settings.local.json` and the servers are listed again; the answer gives
   * their new states. A name that is unknown or not waiting for approval is refused by the validator.
   */
  async approveMcpServers(conversationId: string, request: McpApprovalRequest): Promise<McpApprovalOutcome> {
    return this.guard(conversationId, (handle) => handle.executeUpdate(approveMcpServersUpdate, { args: [request] }));
  }

  async end(conversationId: string): Promise<void> {
    await this.guard(conversationId, (handle) => handle.signal(endSignal));
  }

  async summary(conversationId: string): Promise<ConversationSummary> {
    return this.guard(conversationId, (handle) => handle.result());
  }

  /**
   * Polls the events feed until the result for `inputUuid` arrives (also the result of a query
   * that consumed it as queued input, which names it in `input_uuids`), calling `onEvent` for each
   * event on the way (progress printing). Queries are cheap and work while the workflow runs.
   */
  async waitForResult(conversationId: string, inputUuid: string, options: WaitOptions = {}): Promise<ResultMessage> {
    if (options.closesWithResult && !options.onEvent && !options.signal) {
      return options.onLive ? this.showUntilClosed(conversationId, inputUuid, options) : this.waitForClosingResult(conversationId, inputUuid);
    }
    if (options.live !== false) {
      try {
        return await this.waitForResultLive(conversationId, inputUuid, options);
      } catch (error) {
        if (!(error instanceof NoLiveStreamError)) throw error;
        // A run from before the live channel: poll its events feed.
      }
    }
    return this.pollForResult(conversationId, inputUuid, options);
  }

  /** The result of a conversation that closes once it has answered (`closesWithResult`): its workflow result's last one. */
  private async waitForClosingResult(conversationId: string, inputUuid: string): Promise<ResultMessage> {
    let summary: ConversationSummary;
    try {
      summary = await this.summary(conversationId); // follows continue-as-new to the run that closes
    } catch (error) {
      if (!(error instanceof WorkflowFailedError)) throw error;
      const { status } = await this.client.workflow.getHandle(conversationId).describe();
      throw await this.closedError(conversationId, status.name.toLowerCase(), inputUuid, error);
    }
    const last = summary.lastResult;
    if (last && (last.input_uuid === inputUuid || last.input_uuids?.includes(inputUuid))) return last;
    throw new Error(`Conversation "${conversationId}" ended (${summary.endedBy}) without answering input ${inputUuid}.`);
  }

  /**
   * A conversation that closes with its result, shown as it is written (`onLive`): the live read
   * runs beside the wait for the workflow's result, and whichever has the result first answers. A
   * live read that falls silent (seen under load: a one-shot `ask` on a terminal showed nothing,
   * not even its first text, and never exited after Ctrl-C) cannot keep the command waiting once the
   * conversation has closed; what was not shown is printed from the result.
   */
  private async showUntilClosed(conversationId: string, inputUuid: string, options: WaitOptions): Promise<ResultMessage> {
    const reading = new AbortController();
    const closed = this.waitForClosingResult(conversationId, inputUuid);
    const shown = this.waitForResult(conversationId, inputUuid, { ...options, closesWithResult: false, signal: reading.signal });
    // The one that loses is abandoned: its outcome (an abort, a closed connection) is nobody's error.
    closed.catch(() => undefined);
    shown.catch(() => undefined);
    try {
      return await Promise.race([shown, closed]);
    } finally {
      reading.abort();
    }
  }

  /** Reads the live channel (issue 10) until the result for `inputUuid`; every item goes to `onLive`. */
  private async waitForResultLive(conversationId: string, inputUuid: string, options: WaitOptions): Promise<ResultMessage> {
    let afterSeq = options.afterSeq ?? 0;
    const deliver = (entry: LiveEntry): ResultMessage | undefined => {
      if (entry.kind === 'event' && entry.event.seq < afterSeq) return undefined;
      options.onLive?.(entry);
      if (entry.kind !== 'event') return undefined;
      afterSeq = entry.event.seq + 1;
      options.onEvent?.(entry.event);
      return answersInput(entry.event, inputUuid) ? (entry.event.message as ResultMessage) : undefined;
    };
    for await (const entry of readLive(this.client, conversationId, options.fromOffset ?? 0, options.signal)) {
      const result = deliver(entry);
      if (result) return result;
    }
    options.signal?.throwIfAborted();
    // A run that closes right after its result (one-shot) can close between two polls: the feed's
    // tail comes from the events query then (a closed run still answers it while a worker runs).
    const rest = await this.events(conversationId, afterSeq).catch(() => undefined);
    for (const event of rest?.events ?? []) {
      const result = deliver({ kind: 'event', offset: -1, event });
      if (result) return result;
    }
    // The conversation closed before the reader saw its result (a one-shot `ask` ends right after it).
    const { status } = await this.client.workflow.getHandle(conversationId).describe();
    const summary = status.name === 'COMPLETED' ? await this.summary(conversationId) : undefined;
    const last = summary?.lastResult;
    if (last && (last.input_uuid === inputUuid || last.input_uuids?.includes(inputUuid))) return last;
    throw await this.closedError(conversationId, status.name.toLowerCase(), inputUuid);
  }

  /**
   * Why a closed conversation will not answer: its status, and for a failed run the failure's own
   * words (settings that cannot be read, a plugin folder that is not one), so a person can fix it.
   */
  private async closedError(conversationId: string, status: string, inputUuid: string, failure?: unknown): Promise<Error> {
    const reasonOf = (error: unknown) => (error instanceof WorkflowFailedError ? (error.cause?.message ?? error.message) : undefined);
    const reason =
      status === 'failed'
        ? (reasonOf(failure) ??
          (await this.client.workflow
            .getHandle(conversationId)
            .result()
            .then(() => undefined, reasonOf)))
        : undefined;
    return new Error(`Conversation "${conversationId}" is ${status} and will not answer input ${inputUuid}${reason ? `: ${reason}` : '.'}`);
  }

  /** Polls the `events` query (runs without a live channel). */
  private async pollForResult(conversationId: string, inputUuid: string, options: WaitOptions): Promise<ResultMessage> {
    const answers = (event: ConversationEvent) =>
      event.message.type === 'result' && (event.message.input_uuid === inputUuid || event.message.input_uuids?.includes(inputUuid));
    /** Undefined while the conversation runs; its status once it has closed. */
    const closedStatus = async () => {
      const { status } = await this.client.workflow.getHandle(conversationId).describe();
      return status.name === 'RUNNING' ? undefined : status.name.toLowerCase();
    };
    let afterSeq = options.afterSeq ?? 0;
    for (let poll = 1; ; poll++) {
      options.signal?.throwIfAborted();
      let page: { events: ConversationEvent[]; nextSeq: number } | undefined;
      try {
        page = await this.events(conversationId, afterSeq);
      } catch (error) {
        // A closed run may have no worker left to answer queries; a running one may be between
        // workers (crashed, restarting): keep waiting for that one.
        const closed = await closedStatus();
        if (closed) throw await this.closedError(conversationId, closed, inputUuid);
        if (error instanceof ConversationNotFoundError) throw error;
      }
      for (const event of page?.events ?? []) {
        options.onEvent?.(event);
        if (answers(event)) return event.message as ResultMessage;
      }
      // Fell behind the feed (it keeps a bounded tail): the last result may still be the answer.
      if (page && page.events.length > 0 && page.events[0].seq > afterSeq) {
        const { lastResult } = await this.status(conversationId);
        if (lastResult && (lastResult.input_uuid === inputUuid || lastResult.input_uuids?.includes(inputUuid))) return lastResult;
      }
      afterSeq = page?.nextSeq ?? afterSeq;
      // Now and then make sure there is still someone to answer (a one-shot conversation that
      // ended, a failed or terminated run): never wait forever.
      if (poll % 20 === 0) {
        const closed = await closedStatus();
        if (closed) {
          const last = await this.events(conversationId, afterSeq).catch(() => undefined);
          const result = last?.events.find(answers);
          if (result) return result.message as ResultMessage;
          throw await this.closedError(conversationId, closed, inputUuid);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 250));
    }
  }

  private async guard<T>(conversationId: string, action: (handle: WorkflowHandle<typeof conversationWorkflow>) => Promise<T>): Promise<T> {
    const handle = this.client.workflow.getHandle<typeof conversationWorkflow>(conversationId);
    try {
      return await action(handle);
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      // Signals to a closed workflow are "not found" too: say which it is.
      const description = await handle.describe().catch(() => undefined);
      if (description) throw new ConversationEndedError(conversationId, description.status.name.toLowerCase());
      throw new ConversationNotFoundError(conversationId);
    }
  }

  /** Whether payloads are encrypted (a payload codec is configured: infra/encryption-codec.ts). */
  private get encrypted(): boolean {
    return (this.client.options.dataConverter?.payloadCodecs?.length ?? 0) > 0;
  }

  /**
   * The project's search attributes the server has registered (a dev server started by us has all
   * of them; an older one may lack the newer ones): a conversation is started with those only,
   * and upserts only those it was started with.
   */
  private async registeredSearchAttributes(): Promise<Set<string>> {
    try {
      const response = await this.client.connection.operatorService.listSearchAttributes({ namespace: this.client.options.namespace });
      const registered = response.customAttributes ?? {};
      return new Set(SEARCH_ATTRIBUTES.filter((key) => registered[key.name] !== undefined).map((key) => key.name));
    } catch {
      return new Set(); // e.g. Temporal Cloud API keys without operator access
    }
  }
}

export function newConversationId(prompt?: string): string {
  // No prompt yet (chat): `conversation-e10872b5`, not `conversation-conversation-e10872b5`.
  if (prompt === undefined || prompt.trim() === '') return `conversation-${randomUUID().slice(0, 8)}`;
  const slug = prompt
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 40)
    .replace(/-$/, '');
  return `conversation-${slug || 'untitled'}-${randomUUID().slice(0, 8)}`;
}

/** The UI's static details (Markdown): a list, so each setting keeps its own line. */
export function staticDetails(config: ConversationConfig, prompt?: string): string {
  const lines = [
    `- **model:** ${config.model}${config.fallbackModel ? ` (fallback ${config.fallbackModel})` : ''}`,
    `- **workspace:** \`${config.cwd}\``,
    `- **max turns:** ${config.maxTurns}`,
  ];
  if (config.forkedFrom) {
    lines.push(`- **forked from:** ${config.forkedFrom.conversationId}${config.forkedFrom.prompt ? ` (before prompt ${config.forkedFrom.prompt})` : ''}`);
  }
  if (prompt) lines.push(`- **first prompt:** ${oneLine(prompt, 500)}`);
  return lines.join('\n');
}
