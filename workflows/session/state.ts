/**
 * The session's durable state (style §19): one serializable object, read from the carried state
 * in one place (`sessionStateFrom`) and returned whole by `toCarried()`; the conversation's
 * config as a run starts it (safe permission defaults); and whether to continue as new now.
 */
import type { SessionContext } from '../../common/activity-types';
import { type ConversationConfig, permissionsConfigSchema } from '../../common/config';
import { workflowInfo } from '@temporalio/workflow';
import { continueAsNewDecision, followsSuggestion } from '../continue-as-new';
import type { CarriedState, PendingInput, SubagentOrigin } from '../definitions';

/**
 * The session's own durable state: everything continue-as-new carries that no other owner
 * (transcript, feed, ledger, gate, live channel, the queries' record, the parts) holds.
 */
export interface SessionState {
  pendingInputs: PendingInput[];
  /** Runs before this one. */
  continuedAsNewCount: number;
  sessionContext?: SessionContext;
  /** Loading the session context was tried (it is not retried on every run when it failed). */
  sessionContextAttempted?: boolean;
  /** Read the session context again before the next input (after a compaction or `/clear`; Claude Code re-reads CLAUDE.md then). */
  sessionContextStale?: boolean;
  endRequested?: boolean;
  /** The model `/model` chose (when it is not the configured one). */
  selectedModel?: string;
  /** Keys of the notifications queued so far (issue 21: exactly one per background task, wakeup or fire). */
  deliveredNotifications?: string[];
}

/** The session's state as a carried state holds it (the one place it is read in). */
export function sessionStateFrom(carried: CarriedState | undefined, subagent: SubagentOrigin | undefined): SessionState {
  return {
    pendingInputs: carried?.pendingInputs ?? [],
    continuedAsNewCount: carried?.continuedAsNewCount ?? 0,
    // A subagent inherits its parent's session context instead of loading its own.
    sessionContext: carried?.sessionContext ?? subagent?.sessionContext,
    sessionContextAttempted: carried?.sessionContextAttempted,
    ...(carried?.sessionContextStale && { sessionContextStale: true }),
    endRequested: carried?.endRequested ?? false,
    ...(carried?.selectedModel && { selectedModel: carried.selectedModel }),
    ...(carried?.deliveredNotifications && { deliveredNotifications: carried.deliveredNotifications }),
  };
}

/**
 * Safe defaults (issue 17 §8): a conversation started without a `permissions` config (the stock
 * `temporal` CLI, a client) checks every tool in default mode — someone may answer through the
 * `decidePermission` update — instead of running everything unchecked.
 */
export function withDefaultPermissions(config: ConversationConfig): ConversationConfig {
  if (config.permissions) return config;
  return { ...config, permissions: permissionsConfigSchema.parse({}) };
}

/**
 * History passed the configured size, or a compaction made it a natural point, or Temporal
 * suggests it and history is large enough for that to be worth the transcript it costs
 * (continue-as-new.ts).
 */
export function continueAsNewNow(run: { fits: boolean; maxEvents: number; compactedThisRun: boolean }): boolean {
  const info = workflowInfo();
  const decision = continueAsNewDecision({
    fits: run.fits,
    historyLength: info.historyLength,
    historySizeBytes: info.historySize,
    suggested: info.continueAsNewSuggested,
    maxEvents: run.maxEvents,
    compactedThisRun: run.compactedThisRun,
  });
  if (decision !== 'suggested') return decision;
  return followsSuggestion({ historyLength: info.historyLength, historySizeBytes: info.historySize });
}
