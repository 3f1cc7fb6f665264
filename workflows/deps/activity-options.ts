/**
 * Activity options, in one place (style §16): every activity's timeouts, retries and
 * cancellation — the model, tools, hooks, session context, permission facts, MCP, background
 * commands and agents, cron jobs — and the proxies built from them. A changed value changes what
 * new runs record (replay compares commands, not options, but a retried attempt behaves otherwise).
 */
import { ActivityCancellationType, type ActivityOptions, type LocalActivityOptions, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../../common/activity-interface';
import type { CallModelInput, SessionContext } from '../../common/activity-types';
import type { ConversationConfig } from '../../common/config';

/**
 * The conversation's thinking settings as a model call's input carries them (absent fields:
 * defaults): `--thinking` first, else the settings' `alwaysThinkingEnabled`.
 */
export function thinkingOptions(config: ConversationConfig, sessionContext: SessionContext | undefined): Pick<CallModelInput, 'thinking' | 'effort'> {
  const thinking = config.thinking ?? sessionContext?.alwaysThinkingEnabled;
  return { ...(thinking !== undefined ? { thinking } : {}), ...(config.effort ? { effort: config.effort } : {}) };
}

/** The options of each kind of activity a conversation runs. */
export type ActivityOptionsSet = Record<'model' | 'tool' | 'stopHooks' | 'sessionContext', ActivityOptions>;

export function activityOptions(config: ConversationConfig): ActivityOptionsSet {
  return {
    model: {
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
    },
    tool: {
      taskQueue: config.toolTaskQueue,
      // Bash may run for up to 10 minutes; heartbeats detect a dead worker much sooner.
      startToCloseTimeout: '11 minutes',
      heartbeatTimeout: config.toolHeartbeatTimeoutMs,
      // Wait for the activity to acknowledge, so an aborted command's processes are dead when the
      // query returns.
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: { initialInterval: '1 second', maximumAttempts: 5 },
    },
    stopHooks: {
      taskQueue: config.toolTaskQueue,
      startToCloseTimeout: '11 minutes',
      heartbeatTimeout: config.toolHeartbeatTimeoutMs,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: { maximumAttempts: 3 },
    },
    // On the workspace's host, like the tools: CLAUDE.md, git state and settings live there.
    sessionContext: {
      taskQueue: config.toolTaskQueue,
      startToCloseTimeout: '1 minute',
      retry: { maximumAttempts: 5 },
      summary: 'Load session context',
    },
  };
}

/**
 * A workspace checkpoint or a rewind's restore (issue 31), on the workspace's host: the first
 * checkpoint of a large repository takes seconds; a retry finds what an earlier attempt took.
 */
export function checkpointOptions(config: ConversationConfig, summary: string): ActivityOptions {
  return { taskQueue: config.toolTaskQueue, startToCloseTimeout: '10 minutes', retry: { initialInterval: '1 second', maximumAttempts: 3 }, summary };
}

/** A git worktree made or closed (issue 33), on the workspace's host: a checkout of a large repository takes a while; a retry finds what an earlier attempt did. */
export function worktreeOptions(config: ConversationConfig, summary: string): ActivityOptions {
  return { taskQueue: config.toolTaskQueue, startToCloseTimeout: '10 minutes', retry: { initialInterval: '1 second', maximumAttempts: 5 }, summary };
}

/** An invoked skill's body (issue 33 §3), read on the workspace's host where its entry was: a short read, retried. */
export function skillBodyOptions(config: ConversationConfig, summary: string): ActivityOptions {
  return { taskQueue: config.toolTaskQueue, startToCloseTimeout: '30 seconds', retry: { initialInterval: '1 second', maximumAttempts: 5 }, summary };
}

/** Activities with these options (and a UI summary). */
export function activities(options: ActivityOptions): Activities {
  return proxyActivities<Activities>(options);
}

/** Local activities (LOCAL_TOOLS, the local phase of a model call). */
export function localActivities(options: LocalActivityOptions): Activities {
  return proxyLocalActivities<Activities>(options);
}

/**
 * Options of a short read on the workspace's host: the read-only tools that run as local
 * activities (tool-run.ts) and the permission facts (facts-call.ts; a regular activity on
 * the workspace's queue when that is another worker's).
 */
export const LOCAL_TOOL_OPTIONS: LocalActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumAttempts: 5 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/**
 * The local phase of a model call answers by its deadline (the margin only covers a slow start);
 * it is not retried here: failures come back as handoffs, and the regular activity retries.
 */
export function localModelCallOptions(handoffAfterMs: number, summary: string): LocalActivityOptions {
  return { startToCloseTimeout: handoffAfterMs + 60_000, retry: { maximumAttempts: 1 }, cancellationType: ActivityCancellationType.TRY_CANCEL, summary };
}

/** A hook event's runHooks activity: as Stop hooks, ending a little after the longest hook's own timeout (the runner enforces each). */
export function hookRunOptions(config: ConversationConfig, longestHookSeconds: number, summary: string): ActivityOptions {
  return { ...activityOptions(config).stopHooks, startToCloseTimeout: `${longestHookSeconds + 30} seconds`, summary };
}

/**
 * Options of the MCP config and listing activities: on the workspace's host; the listing heartbeats
 * while servers start (reading the config is a few file reads, and does not).
 */
export function mcpListingOptions(config: ConversationConfig, summary: string, heartbeats: boolean): ActivityOptions {
  return {
    taskQueue: config.toolTaskQueue,
    startToCloseTimeout: '2 minutes',
    ...(heartbeats && { heartbeatTimeout: config.toolHeartbeatTimeoutMs }),
    retry: { initialInterval: '1 second', maximumAttempts: 3 },
    summary,
  };
}

/** Reading the MCP config as a local activity, when the workspace is this worker's host. */
export const MCP_CONFIG_LOCAL_OPTIONS: LocalActivityOptions = { startToCloseTimeout: '1 minute', retry: { initialInterval: '1 second', maximumAttempts: 3 } };

/** A minute's work on Temporal or a background command's process (a cron job's Schedule, a command's start or stop): retried 5 times. */
export const SHORT_ACTIVITY_OPTIONS: ActivityOptions = { startToCloseTimeout: '1 minute', retry: { initialInterval: '1 second', maximumAttempts: 5 } };

/** Reading a finished agent's transcript from its child's history. */
export const AGENT_TRANSCRIPT_OPTIONS: ActivityOptions = { startToCloseTimeout: '2 minutes', retry: { initialInterval: '1 second', maximumAttempts: 5 } };

/** A cron job's fire delivering its prompt (workflows/cron-fire.ts). */
export const CRON_FIRE_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 20 },
};

/** The supervisor's heartbeat timeout at most (it beats every second). */
const SUPERVISE_HEARTBEAT_TIMEOUT_MS = 10_000;
/** An agent's watcher's heartbeat timeout. */
const WATCH_AGENT_HEARTBEAT_TIMEOUT = '30 seconds';

/**
 * A watcher of something that may run for days (a background command's supervisor, a background
 * agent's watcher): an attempt that reaches a day re-attaches on the next one; heartbeats find a
 * dead worker; an abort stops the watching at once.
 */
function watcherOptions(heartbeatTimeout: ActivityOptions['heartbeatTimeout']): ActivityOptions {
  return {
    startToCloseTimeout: '1 day',
    heartbeatTimeout,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
    cancellationType: ActivityCancellationType.TRY_CANCEL,
  };
}

/** A background command's supervisor: it beats every second, so a dead worker's attempt is retried within ~10 s (sooner when tools' heartbeats are). */
export function superviseCommandOptions(config: ConversationConfig): ActivityOptions {
  return watcherOptions(Math.min(config.toolHeartbeatTimeoutMs, SUPERVISE_HEARTBEAT_TIMEOUT_MS));
}

/** A background agent's watcher after continue-as-new (an agent may wait for SendMessage for days). */
export const WATCH_AGENT_OPTIONS: ActivityOptions = watcherOptions(WATCH_AGENT_HEARTBEAT_TIMEOUT);

/** TaskOutput: the wait it asked for and a minute; an abort stops the waiting at once (the command is not touched). */
export function taskOutputOptions(config: ConversationConfig, waitMs: number): ActivityOptions {
  return {
    startToCloseTimeout: waitMs + 60_000,
    heartbeatTimeout: config.toolHeartbeatTimeoutMs,
    retry: { initialInterval: '1 second', maximumAttempts: 5 },
    cancellationType: ActivityCancellationType.TRY_CANCEL,
  };
}
