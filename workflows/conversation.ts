/**
 * conversationWorkflow — one workflow per conversation (seed §2.10, QueryEngine). The state and
 * the query logic live in `ConversationSession` (session.ts) and the loop's effects in
 * `createQueryDeps` (query-deps.ts); this function is the wiring: handlers first, then wait
 * for input with `condition`, run each query, and `condition(allHandlersFinished)` before
 * continue-as-new (style §4).
 */
import { ApplicationFailure, allHandlersFinished, condition, continueAsNew, makeContinueAsNewFunc, patched, setHandler, uuid4, workflowInfo } from '@temporalio/workflow';
import { type ConversationConfig, conversationConfigSchema } from '../common/config';
import {
  type ConversationInput,
  type ConversationSummary,
  type QueryInProgress,
  abortSignal,
  compactUpdate,
  decidePermissionUpdate,
  endSignal,
  eventsQuery,
  historyQuery,
  statusQuery,
  userInputSignal,
} from './definitions';
import { handleInternalMessages } from './internal-messages';
import { RELOAD_CONTEXT_PATCH, processUserInput } from './process-user-input';
import { activities, activityOptions } from './query-deps';
import { ConversationSession } from './session';
import { idleTimerSummary } from './ui-details';
import { uiPatched } from './visibility';

/** Default page of the `transcriptSlice` query: well below the payload limit. */
const TRANSCRIPT_SLICE_BYTES = 1_000_000;

/**
 * Patch: a config without `model` gets today's default (common/models.ts). Conversations started
 * before it got the old default, a 200k-window id the API never served, whose limits their
 * recorded compactions were decided on; they keep it on replay.
 */
export const MODELS_API_DEFAULT_MODEL_PATCH = 'models-api-default-model';
/**
 * patched() id of upgrading on continue-as-new (issue 24, Worker Versioning): a versioned worker
 * pins each run to its version; the next run starts on the deployment's current version
 * (`initialVersioningBehavior: 'AUTO_UPGRADE'`), and a run continues as new after a query once the
 * server says a newer version is current. Older runs continued as new with no versioning option.
 */
export const UPGRADE_ON_CONTINUE_AS_NEW_PATCH = 'upgrade-on-continue-as-new';
/** The default before MODELS_API_DEFAULT_MODEL_PATCH (spelled out of parts: no code may name it as a model to use). */
const PRE_MODELS_API_DEFAULT_MODEL = ['claude-sonnet', '5', '5'].join('-');

function withRecordedDefaultModel(config: ConversationInput['config']): ConversationInput['config'] {
  if (config === null || typeof config !== 'object' || (config as { model?: unknown }).model !== undefined) return config;
  return patched(MODELS_API_DEFAULT_MODEL_PATCH) ? config : { ...config, model: PRE_MODELS_API_DEFAULT_MODEL };
}

/** A conversation: a long-lived workflow that runs one query per user input. */
export async function conversationWorkflow(input: ConversationInput): Promise<ConversationSummary> {
  const parsed = conversationConfigSchema.safeParse(withRecordedDefaultModel(input.config));
  if (!parsed.success) {
    // A ZodError would fail the workflow task and retry forever; an ApplicationFailure fails the run.
    throw ApplicationFailure.nonRetryable(
      `Invalid conversation config: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`,
      'InvalidConfig',
    );
  }
  const config: ConversationConfig = parsed.data;
  const session = new ConversationSession(workflowInfo().workflowId, config, input.carried, input.subagent, input.resume?.messages);

  // ---- handlers first: signals can arrive before the main body runs ----
  // Named handlers are what the UI offers a person (descriptions shown there); internal ones are not named.
  setHandler(userInputSignal, (raw) => session.enqueueInput(raw), { description: 'Send a prompt: {"prompt": "..."}' });
  setHandler(abortSignal, () => session.abort(), { description: 'Interrupt the running query (the conversation stays open)' });
  setHandler(
    endSignal,
    () => {
      session.endRequested = true;
    },
    { description: 'End the conversation after the running query' },
  );
  setHandler(statusQuery, () => session.status(), { description: 'Phase, turns, tools in flight, usage, context, last result' });
  setHandler(eventsQuery, (afterSeq = 0) => session.eventsSince(afterSeq), { description: 'Progress events from a sequence number: [afterSeq]' });
  setHandler(historyQuery, () => session.transcript.toJSON(), { description: 'The transcript the model sees' });
  handleInternalMessages({
    toolUseStreamed: (raw) => session.onToolUseStreamed(raw),
    subagentProgress: (progress) => session.onSubagentProgress(progress),
    requestContext: (digest) => session.requestContext(digest),
    transcriptSlice: ({ from, maxBytes }) => session.transcript.slice(from, Math.min(maxBytes ?? TRANSCRIPT_SLICE_BYTES, TRANSCRIPT_SLICE_BYTES)),
    liveRead: (from) => session.live.read(from),
  });
  // Manual compaction waits for the running query (if any), then answers with what it did.
  setHandler(
    compactUpdate,
    async (request) => {
      while (session.busy) await condition(() => !session.busy);
      return session.compactNow(request?.instructions);
    },
    {
      description: 'Compact the conversation now: {"instructions"?: "..."}',
      validator: (request) => {
        if (request !== undefined && (typeof request !== 'object' || request === null)) throw ApplicationFailure.nonRetryable('compact takes {"instructions"?: string}', 'InvalidCompactRequest');
        if (request?.instructions !== undefined && typeof request.instructions !== 'string') throw ApplicationFailure.nonRetryable('compact: instructions must be a string', 'InvalidCompactRequest');
        if (session.phase === 'ended') throw ApplicationFailure.nonRetryable('The conversation has ended; it cannot be compacted.', 'ConversationEnded');
      },
    },
  );

  // A permission decision (approve / deny): exactly once; a duplicate returns the recorded one.
  setHandler(decidePermissionUpdate, (request) => session.permissions.decide(request), { validator: (request) => session.permissions.validate(request) });

  const loadSessionContext = async () => {
    try {
      session.sessionContext = await activities(activityOptions(config).sessionContext).loadSessionContext({ cwd: config.cwd, settingSources: config.settingSources });
    } catch (error) {
      // The conversation still works (no CLAUDE.md, git status or hooks); people are told why.
      session.sessionContextFailed(error);
    }
    session.sessionContextStale = false;
    // A malformed agent or command file is skipped; people hear about it in the feed.
    for (const warning of session.sessionContext?.warnings ?? []) session.pushEvent({ type: 'system', uuid: uuid4(), level: 'warning', content: warning });
  };
  // seed §2.5: getSystemContext/getUserContext are memoized per session.
  if (session.needsSessionContext) await loadSessionContext();

  /**
   * Continues as new with the conversation's state, or returns false when that state would not
   * fit in one payload (then this run goes on, and does not try again: its history just grows).
   */
  const continueAsNewWith = async (queryInProgress?: QueryInProgress): Promise<false> => {
    session.live.detach(); // waiting readers let go, and follow to the next run
    await condition(allHandlersFinished);
    const carried = session.toCarried(input, queryInProgress);
    if (!carried) {
      session.live.reattach();
      return false;
    }
    // Unversioned workers and servers before Upgrade-on-Continue-as-New ignore the option.
    if (patched(UPGRADE_ON_CONTINUE_AS_NEW_PATCH)) {
      return makeContinueAsNewFunc<typeof conversationWorkflow>({ initialVersioningBehavior: 'AUTO_UPGRADE' })({ config: input.config, carried });
    }
    return continueAsNew<typeof conversationWorkflow>({ config: input.config, carried });
  };
  /** A newer Worker Deployment version is current: move to it between queries (the run itself stays pinned). */
  const newerVersionIsCurrent = () =>
    session.continueAsNewFits && workflowInfo().targetWorkerDeploymentVersionChanged && patched(UPGRADE_ON_CONTINUE_AS_NEW_PATCH);

  // ---- main body: wait for input, run queries, carry state forward ----
  if (input.initialPrompt) session.pendingInputs.unshift({ prompt: input.initialPrompt, uuid: input.initialPromptUuid ?? uuid4() });
  let endedBy: ConversationSummary['endedBy'] = 'end_signal';
  while (true) {
    let suspended: QueryInProgress | undefined;
    if (session.resuming) {
      const resumed = session.resuming;
      suspended = await session.submitMessage(resumed.pending, resumed);
      session.resuming = undefined;
    } else {
      session.setPhase(session.pendingInputs.length > 0 ? 'calling_model' : 'awaiting_input');
      const inputOrEnd = () => (session.pendingInputs.length > 0 && !session.busy) || session.endRequested;
      // The idle timer says what it is in the UI (not an unlabeled "1d").
      const gotInput = uiPatched()
        ? await condition(inputOrEnd, config.idleTimeoutMs, { summary: idleTimerSummary(config.idleTimeoutMs) })
        : await condition(inputOrEnd, config.idleTimeoutMs);
      if (!gotInput) {
        endedBy = 'idle_timeout';
        break;
      }
      if (session.busy) continue; // a manual compaction runs: the input waits for it
      if (session.pendingInputs.length === 0) break; // end requested with nothing queued
      session.busy = true;
      try {
        // After a compaction or /clear, CLAUDE.md and git status are read again (as Claude Code does).
        if (session.sessionContextStale && patched(RELOAD_CONTEXT_PATCH)) await loadSessionContext();
        // seed §2.10 processUserInput: a local slash command answers here (shouldQuery = false).
        const query = await processUserInput(session, session.pendingInputs.shift()!);
        if (query) suspended = await session.submitMessage(query);
      } finally {
        session.busy = false;
      }
    }
    if (suspended && !(await continueAsNewWith(suspended))) {
      session.resuming = suspended; // it did not fit: carry on with the same query in this run
      continue;
    }
    if (config.oneShot) {
      endedBy = 'one_shot';
      break;
    }
    if (session.endRequested && session.pendingInputs.length === 0) break;
    if (session.shouldContinueAsNew() || newerVersionIsCurrent()) await continueAsNewWith();
  }
  session.setPhase('ended');
  await session.settleParentReports();
  session.live.detach(); // a waiting reader would otherwise keep the run open
  await condition(allHandlersFinished);
  const { conversationId, queryCount, usage, totalCostUsd, lastResult } = session;
  return { conversationId, endedBy, queryCount, usage, totalCostUsd, lastResult };
}
