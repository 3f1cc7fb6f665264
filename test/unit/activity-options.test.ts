/**
 * Issue 30: every activity's options live in workflows/deps/activity-options.ts. The values moved
 * there unchanged; these pin them (a changed timeout or retry policy changes how new runs behave).
 */
import { ActivityCancellationType } from '@temporalio/workflow';
import { describe, expect, it } from 'vitest';
import type { ConversationConfig } from '../../common/config';
import {
  AGENT_TRANSCRIPT_OPTIONS,
  CRON_FIRE_OPTIONS,
  LOCAL_TOOL_OPTIONS,
  MCP_CONFIG_LOCAL_OPTIONS,
  SHORT_ACTIVITY_OPTIONS,
  WATCH_AGENT_OPTIONS,
  activityOptions,
  hookRunOptions,
  mcpListingOptions,
  superviseCommandOptions,
  taskOutputOptions,
} from '../../workflows/deps/activity-options';

const config = { cwd: '/w', toolTaskQueue: 'host', toolHeartbeatTimeoutMs: 30_000 } as ConversationConfig;
const oneSecondRetry = (maximumAttempts: number) => ({ initialInterval: '1 second', maximumAttempts });
const watcherRetry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' };

describe('activity options', () => {
  it('keeps the short reads, bookkeeping and MCP options', () => {
    expect(LOCAL_TOOL_OPTIONS).toEqual({
      startToCloseTimeout: '1 minute',
      retry: oneSecondRetry(5),
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    });
    expect(SHORT_ACTIVITY_OPTIONS).toEqual({ startToCloseTimeout: '1 minute', retry: oneSecondRetry(5) });
    expect(AGENT_TRANSCRIPT_OPTIONS).toEqual({ startToCloseTimeout: '2 minutes', retry: oneSecondRetry(5) });
    expect(CRON_FIRE_OPTIONS).toEqual({
      startToCloseTimeout: '1 minute',
      retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 20 },
    });
    expect(MCP_CONFIG_LOCAL_OPTIONS).toEqual({ startToCloseTimeout: '1 minute', retry: oneSecondRetry(3) });
    expect(mcpListingOptions(config, 'List', true)).toEqual({
      taskQueue: 'host',
      startToCloseTimeout: '2 minutes',
      heartbeatTimeout: 30_000,
      retry: oneSecondRetry(3),
      summary: 'List',
    });
    expect(mcpListingOptions(config, 'Load', false)).toEqual({
      taskQueue: 'host',
      startToCloseTimeout: '2 minutes',
      retry: oneSecondRetry(3),
      summary: 'Load',
    });
  });

  it('keeps the hooks, watchers and TaskOutput options', () => {
    expect(hookRunOptions(config, 60, 'Stop hooks (1)')).toEqual({
      ...activityOptions(config).stopHooks,
      startToCloseTimeout: '90 seconds',
      summary: 'Stop hooks (1)',
    });
    expect(WATCH_AGENT_OPTIONS).toEqual({
      startToCloseTimeout: '1 day',
      heartbeatTimeout: '30 seconds',
      retry: watcherRetry,
      cancellationType: ActivityCancellationType.TRY_CANCEL,
    });
    expect(superviseCommandOptions(config)).toEqual({
      startToCloseTimeout: '1 day',
      heartbeatTimeout: 10_000,
      retry: watcherRetry,
      cancellationType: ActivityCancellationType.TRY_CANCEL,
    });
    expect(superviseCommandOptions({ ...config, toolHeartbeatTimeoutMs: 4_000 }).heartbeatTimeout).toBe(4_000);
    expect(taskOutputOptions(config, 5_000)).toEqual({
      startToCloseTimeout: 65_000,
      heartbeatTimeout: 30_000,
      retry: oneSecondRetry(5),
      cancellationType: ActivityCancellationType.TRY_CANCEL,
    });
  });
});
