/**
 * conversationWorkflow — one workflow per conversation (seed §2.10, QueryEngine). The state and
 * the query logic live in `ConversationSession` (session/) and the loop's effects in
 * `createQueryDeps` (deps/index.ts); this function is the wiring: handlers first, then wait
 * for input with `condition`, run each query, and `condition(allHandlersFinished)` before
 * continue-as-new (style §4).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  makeContinueAsNewFunc,
  setHandler,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { INVALID_SETTINGS_FAILURE, type SessionContext } from '../common/activity-types';
import { networkRequestProblem } from '../common/network-request';
import { type ConversationConfig, conversationConfigSchema } from '../common/config';
import {
  type ConversationInput,
  type ConversationSummary,
  type QueryInProgress,
  abortSignal,
  compactUpdate,
  checkpointsUpdate,
  forkUpdate,
  rewindUpdate,
  decidePermissionUpdate,
  requestNetworkAccessUpdate,
  endSignal,
  eventsQuery,
  historyQuery,
  statusQuery,
  type UpgradeAnswer,
  upgradeUpdate,
  userInputSignal,
} from './definitions';
import { handleInternalMessages } from './internal-messages';
import { processUserInput } from './input/process-user-input';
import { activities, activityOptions } from './deps/activity-options';
import { ConversationSession } from './session';
import { idleTimerSummary } from './ui/details';

/** Default page of the `transcriptSlice` query: well below the payload limit. */
const TRANSCRIPT_SLICE_BYTES = 1_000_000;

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
  const session = new ConversationSession(workflowInfo().workflowId, config, input.carried, input.subagent, input.resume?.messages);
  /** A newer Worker Deployment version is current: move to it between queries (the run itself stays pinned). */
  const newerVersionIsCurrent = () => session.continueAsNewFitsPayload && workflowInfo().targetWorkerDeploymentVersionChanged;
  /** `durable-agent upgrade` found a newer version current: the run moves when idle (the wait ends) or after its query. */
  let upgradeAsked = false;

  // ---- handlers first: signals can arrive before the main body runs ----
  // Named handlers are what the UI offers a person (descriptions shown there); internal ones are not named.
  setHandler(userInputSignal, (raw) => session.inputs.push(raw), { description: 'Send a prompt: {"prompt": "..."}' });
  setHandler(abortSignal, () => session.abort(), { description: 'Interrupt the running query (the conversation stays open)' });
  setHandler(endSignal, () => session.requestEnd(), { description: 'End the conversation after the running query' });
  setHandler(statusQuery, () => session.status(), { description: 'Phase, turns, tools in flight, usage, context, last result' });
  setHandler(eventsQuery, (afterSeq = 0) => session.eventsSince(afterSeq), { description: 'Progress events from a sequence number: [afterSeq]' });
  setHandler(historyQuery, () => session.transcript.toJSON(), { description: 'The transcript the model sees' });
  // It only wakes the idle wait (below), which then continues as new.
  setHandler(
    upgradeUpdate,
    (): UpgradeAnswer => {
      const buildId = workflowInfo().currentDeploymentVersion?.buildId ?? '';
      if (!newerVersionIsCurrent()) return { outcome: 'not_told', buildId };
      upgradeAsked = true; // idle: the wait ends; in a query: it moves when the query ends (that task may not say so again)
      return { outcome: session.busy ? 'after_query' : 'moving', buildId };
    },
    { description: 'Move an idle conversation to the current worker version now (it otherwise moves at its next input)' },
  );
  handleInternalMessages({
    toolUseStreamed: (raw) => session.onToolUseStreamed(raw),
    subagentProgress: (progress) => session.onSubagentProgress(progress),
    // The parts' own: a background agent answered, a cron job's Schedule fired (issue 21; not offered in the UI's signal menu).
    ...session.parts.internalHandlers(),
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
        if (request !== undefined && (typeof request !== 'object' || request === null))
          throw ApplicationFailure.nonRetryable('compact takes {"instructions"?: string}', 'InvalidCompactRequest');
        if (request?.instructions !== undefined && typeof request.instructions !== 'string')
          throw ApplicationFailure.nonRetryable('compact: instructions must be a string', 'InvalidCompactRequest');
        if (session.phase === 'ended') throw ApplicationFailure.nonRetryable('The conversation has ended; it cannot be compacted.', 'ConversationEnded');
      },
    },
  );

  // Issue 31: a rewind waits for the running query (if any), like a compaction; `checkpoints` only reads.
  setHandler(
    rewindUpdate,
    async (request) => {
      while (session.busy) await condition(() => !session.busy);
      session.rewinds.validate(request); // the points may have changed while it waited
      return session.exclusively(() => session.rewinds.rewind(request));
    },
    {
      description: 'Rewind files and conversation to just before prompt n: {"to": n, "mode"?: "both" | "code" | "conversation"}',
      validator: (request) => {
        if (session.phase === 'ended') throw ApplicationFailure.nonRetryable('The conversation has ended; it cannot be rewound.', 'ConversationEnded');
        session.rewinds.validate(request);
      },
    },
  );
  setHandler(
    forkUpdate,
    async (request) => {
      while (session.busy) await condition(() => !session.busy);
      session.rewinds.validateFork(request);
      return session.exclusively(() => session.rewinds.fork(request, input.config));
    },
    {
      description: 'A new workspace for a fork, from the checkpoint before prompt n (default: now), and the transcript it continues: {"at"?: n, "cwd"?: "dir"}',
      validator: (request) => session.rewinds.validateFork(request),
    },
  );
  setHandler(checkpointsUpdate, () => session.rewinds.listing(), { description: 'The prompts a rewind can go back to, with the files changed since each' });

  // A permission decision (approve / deny): exactly once; a duplicate returns the recorded one.
  setHandler(decidePermissionUpdate, (request) => session.permissions.decide(request), { validator: (request) => session.permissions.validate(request) });
  setHandler(requestNetworkAccessUpdate, (request) => session.toolPermissions.networkRequest(request), {
    validator: (request) => {
      const problem = networkRequestProblem(request);
      if (problem) throw ApplicationFailure.nonRetryable(problem, 'InvalidNetworkRequest');
    },
  });
  // The parts' named handlers (issue 22: approving .mcp.json servers).
  session.parts.setHandlers();

  const loadSessionContext = async () => {
    let context: SessionContext | undefined;
    try {
      context = await activities(activityOptions(config).sessionContext).loadSessionContext({
        // The working directory as it is now (issue 33: EnterWorktree moves it).
        cwd: session.config.cwd,
        settingSources: config.settingSources,
        ...(config.trusted !== undefined && { trusted: config.trusted }),
        ...(config.pluginDirs && { pluginDirs: config.pluginDirs }),
      });
    } catch (error) {
      // Issue 29: settings that cannot be read end the conversation (fail closed), never fewer rules.
      if (error instanceof ActivityFailure && error.cause instanceof ApplicationFailure && error.cause.type === INVALID_SETTINGS_FAILURE) {
        throw ApplicationFailure.nonRetryable(error.cause.message, INVALID_SETTINGS_FAILURE);
      }
      // The conversation still works (no CLAUDE.md, git status or hooks); people are told why.
      session.context.failed(error);
    }
    session.context.loaded(context);
  };
  // Issue 33: `--worktree [name]`: a first run enters its worktree before anything is read from the workspace.
  if (!input.carried && config.worktree !== undefined) await session.parts.worktree.startIn(config.worktree);
  // seed §2.5: getSystemContext/getUserContext are memoized per session.
  if (session.context.needsLoading) await loadSessionContext();
  // Issue 22: the MCP servers' config and listing, once per conversation (carried across runs).
  if (session.parts.mcp.needsLoad) await session.parts.mcp.load();
  // Issue 22: the hook settings, then SessionStart (a first run only; none of it when no hooks are configured).
  await session.parts.hooks.start(input.carried ? undefined : input.resume ? 'resume' : 'startup');

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
    return makeContinueAsNewFunc<typeof conversationWorkflow>({ initialVersioningBehavior: 'AUTO_UPGRADE' })({ config: input.config, carried });
  };

  /**
   * Waits for input or `end`; false when the idle timeout passed first. While background work is
   * pending (issue 21: commands, agents, wakeups, cron jobs) there is no idle timeout: its end,
   * a notification or a fire is what comes next; the idle timer starts once nothing is pending.
   */
  const waitForInputOrEnd = async (): Promise<boolean> => {
    const inputOrEnd = () => ((session.hasQueuedInput || upgradeAsked) && !session.busy) || session.endRequested;
    while (session.parts.hasBackgroundWork) {
      await condition(() => inputOrEnd() || !session.parts.hasBackgroundWork);
      if (inputOrEnd()) return true;
    }
    // Notification hooks (issue 22): idle_prompt after messageIdleNotifThresholdMs without input, when configured.
    if (await session.parts.hooks.waitForIdleNotice(inputOrEnd)) return true;
    // The idle timer says what it is in the UI (not an unlabeled "1d").
    return await condition(inputOrEnd, config.idleTimeoutMs, { summary: idleTimerSummary(config.idleTimeoutMs) });
  };

  // ---- main body: wait for input, run queries, carry state forward ----
  if (input.initialPrompt) session.inputs.pushFirst({ prompt: input.initialPrompt, uuid: input.initialPromptUuid ?? uuid4() });
  let endedBy: ConversationSummary['endedBy'] = 'end_signal';
  while (true) {
    let suspended: QueryInProgress | undefined;
    if (session.resuming) {
      suspended = await session.resumeSuspendedQuery();
    } else {
      session.setPhase(session.hasQueuedInput ? 'calling_model' : 'awaiting_input');
      const gotInput = await waitForInputOrEnd();
      if (!gotInput) {
        endedBy = 'idle_timeout';
        break;
      }
      if (session.busy) continue; // a manual compaction runs: the input waits for it
      if (!session.hasQueuedInput && (session.endRequested || !upgradeAsked)) break; // end requested with nothing queued
      // Woken on an older version by input or `upgrade`: move first (input is carried), so the current code answers it.
      if (upgradeAsked || newerVersionIsCurrent()) {
        upgradeAsked = false;
        await continueAsNewWith(); // returns only when the state does not fit one payload
        if (!session.hasQueuedInput) continue;
      }
      suspended = await session.exclusively(async () => {
        // After a compaction or /clear, CLAUDE.md and git status are read again (as Claude Code does).
        if (session.context.stale) await loadSessionContext();
        await session.parts.hooks.sessionStartIfDue(); // SessionStart after a compaction or /clear (issue 22)
        // seed §2.10 processUserInput: a local slash command answers here (shouldQuery = false).
        const query = await processUserInput(session, session.inputs.next()!);
        return query ? session.submitMessage(query) : undefined;
      });
    }
    if (suspended && !(await continueAsNewWith(suspended))) {
      session.resumeInThisRun(suspended); // it did not fit: carry on with the same query in this run
      continue;
    }
    if (config.oneShot) {
      endedBy = 'one_shot';
      break;
    }
    if (session.endRequested && !session.hasQueuedInput) break;
    if (session.shouldContinueAsNew() || upgradeAsked || newerVersionIsCurrent()) {
      upgradeAsked = false;
      await continueAsNewWith();
    }
  }
  // `end`, the idle timeout, a one-shot's result: background commands and agents stop, session-only jobs go (abort never gets here).
  await session.endBackgroundWork();
  await session.parts.hooks.sessionEnd(endedBy === 'end_signal' ? 'prompt_input_exit' : 'other'); // SessionEnd (issue 22)
  session.setPhase('ended');
  await session.settleParentReports();
  session.live.detach(); // a waiting reader would otherwise keep the run open
  await condition(allHandlersFinished);
  return { conversationId: session.conversationId, endedBy, ...session.totals };
}
