/**
 * Activity options, in one place (style §16): the model, tool, Stop-hook and session-context
 * activities' timeouts, retries and cancellation, and the proxies built from them.
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

/** Activities with these options (and a UI summary). */
export function activities(options: ActivityOptions): Activities {
  return proxyActivities<Activities>(options);
}

/** Local activities (LOCAL_TOOLS, the local phase of a model call). */
export function localActivities(options: LocalActivityOptions): Activities {
  return proxyLocalActivities<Activities>(options);
}

/** Options of the read-only tools that run as local activities (tool-run.ts). */
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
