/**
 * Every message the conversation workflow understands, in one place (style §5). The client
 * imports these for typed handles; the stock `temporal` CLI uses the same names:
 *
 *   temporal workflow signal --workflow-id ID --name userInput --input '{"prompt":"hi"}'
 *   temporal workflow query  --workflow-id ID --type status
 */
import type { QueryGrant } from '../common/skills';
import { NETWORK_REQUEST_UPDATE, type NetworkRequest, type NetworkRequestAnswer } from '../common/network-request';
import { type Sinks, defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';
import type { RequestContext } from '../common/activity-types';
import type { ConversationConfigInput } from '../common/config';
import type { Message, TranscriptMessage, Usage } from '../common/messages';
import type { ResultMessage, TransitionType } from '../common/result';
import type { AgentTasksState, BackgroundAgentReport, BackgroundAgentSummary } from './background/agent-types';
import type { CarriedPermissions, PendingPermission, PermissionDecisionRequest, RecordedPermissionDecision } from './permissions/types';
import type { LoopCheckpoint } from './query/state';

/** A user prompt. A bare string is accepted too, for hand-typed `temporal workflow signal`s. */
export interface UserInput {
  prompt: string;
  /** Client-chosen id, echoed in the result's `input_uuid`; generated when absent. */
  uuid?: string;
}

/** An input waiting for its query; a custom slash command's carries the command and its model. */
export interface PendingInput {
  prompt: string;
  uuid: string;
  /** The model this input's query runs on (a custom command's `model`); default the conversation's. */
  model?: string;
  /** Set when `prompt` is a custom command's expansion (seed §2.10 processUserInput). */
  command?: { name: string; args: string };
  /** Issue 33 §3: what the command or skill lets run without asking during its query (its `allowed-tools`, a skill's folder). */
  grant?: QueryGrant;
  /** Not typed by a person: background work ending (`<task-notification>`), a wakeup or a cron job (issue 21). */
  origin?: InputOrigin;
  /** UserPromptSubmit hooks' context for the model (issue 22): a system reminder after the prompt. */
  hookContext?: string;
}

/** Where an input that no person typed came from (issue 21). */
export type InputOrigin = 'task-notification' | 'wakeup' | 'cron';

export interface AbortInput {
  reason?: string;
}

/** Validates `toolUseStreamed` (signals cannot reply, so a bad one is logged and dropped). */
export const toolUseStreamedSchema = z.object({
  requestId: z.string(),
  attempt: z.number().int().positive(),
  index: z.number().int().nonnegative(),
  block: z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() }),
  facts: z.object({ toolUseId: z.string() }).passthrough().optional(),
});

/** `compact` update argument: Claude Code's `/compact [instructions]`. */
export interface CompactRequest {
  /** Extra instructions for the summary ("focus on the API changes"). */
  instructions?: string;
}

/** What one compaction did (seed §2.7): the answer of the `compact` update, and the status' last compaction. */
export interface CompactionOutcome {
  trigger: 'auto' | 'manual' | 'reactive';
  compacted: boolean;
  /** Context tokens before, and (estimated) after. */
  preTokens: number;
  postTokens?: number;
  /** Messages the summary replaced. */
  messagesSummarized?: number;
  /** Why it did not compact (nothing to compact, the model failed, aborted). */
  error?: string;
  /** Workflow time it finished. */
  at: number;
}

export const userInputSignal = defineSignal<[UserInput | string]>('userInput');
/**
 * Compacts the conversation now (after the running query, if one runs) and answers with what it
 * did. An update, not a signal: the caller needs the answer.
 */
export const compactUpdate = defineUpdate<CompactionOutcome, [CompactRequest]>('compact');
export const abortSignal = defineSignal<[AbortInput?]>('abort');
/**
 * Decides a waiting permission request (`approve` / `deny`). An update: the caller learns the
 * decision, a duplicate gets the recorded one, an unknown id is rejected by the validator.
 */
export const decidePermissionUpdate = defineUpdate<RecordedPermissionDecision, [PermissionDecisionRequest]>('decidePermission');
/**
 * A sandboxed Bash command asks to reach a domain its allow-list does not name (sent by the Bash
 * activity while the command runs): answered from the session, by a person, or denied.
 */
export const requestNetworkAccessUpdate = defineUpdate<NetworkRequestAnswer, [NetworkRequest]>(NETWORK_REQUEST_UPDATE);
/** Ends the conversation once the running query (if any) finishes. */
export const endSignal = defineSignal<[]>('end');
/**
 * Issue 31, Claude Code's `/rewind`: the files and/or the conversation as they were just before
 * prompt `to` (1 = the start); waits for a running query to end. `checkpoints` lists the points
 * with the files changed since each (it runs an activity on the workspace's host, hence an update).
 */
export const rewindUpdate = defineUpdate<import('../common/checkpoints').RewindOutcome, [import('../common/checkpoints').RewindRequest]>('rewind');
export const forkUpdate = defineUpdate<import('../common/checkpoints').ForkOutcome, [import('../common/checkpoints').ForkRequest]>('fork');
export const checkpointsUpdate = defineUpdate<import('../common/checkpoints').RewindPointListing[], []>('checkpoints');
/**
 * `durable-agent upgrade`: an idle conversation gets no workflow task, so it never hears that a
 * newer Worker Deployment version is current. This update is such a task: when it tells the run so,
 * the idle run continues as new on that version now (a query in progress moves at its end).
 * `moving`: it continues as new now; `after_query`: when the running query ends; `not_told`: this
 * task did not say a newer version is current (or the state does not fit one payload): it stays.
 */
export interface UpgradeAnswer {
  outcome: 'moving' | 'after_query' | 'not_told';
  /** The build id of the version this run is on. */
  buildId: string;
}
export const upgradeUpdate = defineUpdate<UpgradeAnswer, []>('upgrade');
/**
 * Issue 22: a person's answer to "Use the MCP server … from .mcp.json?" for servers waiting for
 * approval: saved in the workspace's `.claude/settings.local.json`, then the servers are listed
 * again and the answer gives their new states. Unknown or not-pending names are rejected by the validator.
 */
export const approveMcpServersUpdate = defineUpdate<import('./extensions/mcp-state').McpApprovalOutcome, [import('./extensions/mcp-state').McpApprovalRequest]>(
  'approveMcpServers',
);
/** Internal: a subagent (child workflow) reports progress to its parent's events feed. */
export const subagentProgressSignal = defineSignal<[SubagentProgress]>('subagentProgress');
/** Internal: a cron job's Schedule fired (workflows/cron-fire.ts delivers it; signal-with-start for a durable job). */
export const cronFiredSignal = defineSignal<[import('../common/cron').CronFire]>('cronFired');
/** Internal: a background agent (child workflow) answered; sent to its parent's conversation id, which survives continue-as-new. */
export type { BackgroundAgentReport } from './background/agent-types';
export const backgroundAgentFinishedSignal = defineSignal<[BackgroundAgentReport]>('backgroundAgentFinished');

export const PHASES = ['idle', 'calling_model', 'running_tools', 'compacting', 'stop_hooks', 'awaiting_input', 'awaiting_permission', 'ended'] as const;
export type Phase = (typeof PHASES)[number];

export interface ToolInFlight {
  toolUseId: string;
  name: string;
  summary: string;
  startedAt: number;
  /** A subagent's child workflow (`durable-agent status <id>` works on it too). */
  childWorkflowId?: string;
}

/** How full the context window is (seed §2.6), and the state of compaction (seed §2.7). */
export interface ContextStatus {
  /** Tokens of the next request: the last reported input plus an estimate of what came since. */
  tokens: number;
  contextWindow: number;
  /** Context window minus the output reserve (min(model max output, 20k)). */
  effectiveWindow: number;
  /** tokens ÷ effectiveWindow, in percent. */
  percentUsed: number;
  autoCompactThreshold: number;
  warningThreshold: number;
  errorThreshold: number;
  blockingLimit: number;
  /** The highest threshold crossed. */
  level: 'ok' | 'warning' | 'error' | 'autocompact' | 'blocking';
  autoCompactEnabled: boolean;
  /** Compactions this conversation has had (all runs). */
  compactions: number;
  lastCompaction?: CompactionOutcome;
  /** seed §2.7 circuit breaker: after 3 consecutive failures autocompact stops trying. */
  breaker: { consecutiveFailures: number; open: boolean };
}

export interface ConversationStatus {
  conversationId: string;
  phase: Phase;
  model: string;
  /** Model in use right now (the fallback after a switch). */
  currentModel: string;
  /** Turns (model calls that led to tool use + 1) in the current or last query. */
  turnCount: number;
  queryCount: number;
  /** Transition sequence of the running query (empty when idle). */
  transitions: TransitionType[];
  /** Transition sequence of the last finished query. */
  lastQueryTransitions: TransitionType[];
  toolsInFlight: ToolInFlight[];
  queuedInputs: number;
  usage: Usage;
  totalCostUsd: number;
  /** Input tokens of the last model call — how full the context is. */
  contextTokens: number;
  /** Context usage against the thresholds, and compaction state. */
  context: ContextStatus;
  messageCount: number;
  lastResult?: ResultMessage;
  ended: boolean;
  /** Set when the conversation was carried over by continue-as-new. */
  continuedAsNewCount: number;
  /** Sequence number the next event will get: poll `events` from here to see only what is new. */
  nextEventSeq: number;
  /** Tool calls waiting for `approve` / `deny` (phase `awaiting_permission`). */
  pendingPermissions?: PendingPermission[];
  /** A fork's parent (issue 31): the conversation and the prompt it was forked before. */
  forkedFrom?: { conversationId: string; prompt?: number };
  /** The permission mode in effect (absent: tools run unchecked). */
  permissionMode?: string;
  /** The task list, pending wakeups and cron jobs (issue 21; absent when there are none). */
  tasks?: import('../common/tasks').Task[];
  wakeups?: Array<{ id: string; reason: string; prompt: string; dueAt: string }>;
  cronJobs?: Array<{ id: string; cron: string; prompt: string; recurring: boolean; durable: boolean; timeZone: string; expiresAt?: string }>;
  /** Issue 22: one line per MCP server (name, scope, transport, state, tools), as `/mcp` shows them. */
  mcpServers?: string[];
  /** Issue 22: project servers waiting for a person's approval (chat asks; `durable-agent mcp approve`). */
  mcpNeedsApproval?: string[];
  /** Background commands (issue 21): running and ended, oldest first (absent: none). */
  backgroundTasks?: import('./background/command-tasks').BackgroundTaskStatus[];
  /** Set by the client for a closed conversation answered without a worker (client/closed-status.ts). */
  closed?: { executionStatus: string; closedAt?: string; answeredFrom: 'result' | 'search_attributes' };
  /** Background agents (issue 21): id, description, status, child workflow id. */
  backgroundAgents?: BackgroundAgentSummary[];
  /** Issue 33: the git worktree the conversation works in (EnterWorktree, --worktree), and the directory it came from. */
  worktree?: { path: string; branch: string; originalCwd: string };
}

/** One entry of the progress feed clients poll (`events` query). */
export interface ConversationEvent {
  seq: number;
  message: Message | ResultMessage | { type: 'user_input'; uuid: string; prompt: string };
}

export interface EventsPage {
  events: ConversationEvent[];
  nextSeq: number;
}

export const statusQuery = defineQuery<ConversationStatus>('status');
/** Events with seq >= afterSeq (default 0); at most the last 1000 are kept. */
export const eventsQuery = defineQuery<EventsPage, [number?]>('events');
/** The transcript (what the model sees, after the last compact boundary). */
export const historyQuery = defineQuery<TranscriptMessage[]>('history');

/**
 * Sinks the workflow feeds the worker's transcript cache with (model calls by reference): they
 * run on the worker that runs the workflow, write no history, and run on replay too, so a worker
 * that picks a conversation up fills its cache from the replayed history.
 */
export interface TranscriptCacheSinks extends Sinks {
  transcriptCache: {
    /** The conversation's messages from index `from` on are now `messages` (an append, or a rewrite from there). */
    feed(from: number, messages: readonly TranscriptMessage[]): void;
    /** The request context with this digest. */
    putContext(digest: string, context: RequestContext): void;
  };
}

/** Workflow input. `carried` is set only by continue-as-new. */
export interface ConversationInput {
  config: ConversationConfigInput;
  /** First prompt, queued before the workflow waits for signals. */
  initialPrompt?: string;
  initialPromptUuid?: string;
  carried?: CarriedState;
  /** Set for a subagent: who started it, and the session context it inherits (no load of its own). */
  subagent?: SubagentOrigin;
  /**
   * `start --resume`: the transcript of the conversation this one continues (`claude --resume`),
   * loaded once by the first run; continue-as-new carries it on as its own messages.
   */
  resume?: { fromConversationId: string; messages: TranscriptMessage[] };
}

/** A subagent's parent conversation and the Agent call that started it. */
export interface SubagentOrigin {
  parentId: string;
  toolUseId: string;
  agentType: string;
  description: string;
  sessionContext?: import('../common/activity-types').SessionContext;
  /** A background agent (Agent with run_in_background): it reports each answer to its parent and then waits for SendMessage. */
  background?: { agentId: string };
  /** The parent's hook settings: a subagent runs its tool hooks (issue 22). */
  hookSettings?: import('../common/hooks').HookSettings;
  /** The parent's MCP servers whose tools the child gets (their recorded listing; the parent's connections): issue 22. */
  mcp?: import('./extensions/mcp-state').McpCarried;
}

/** A subagent's progress, reported to its parent's feed (one line per assistant message). */
export interface SubagentProgress {
  toolUseId: string;
  description: string;
  line: string;
}

/** What survives continue-as-new. */
export interface CarriedState {
  messages: TranscriptMessage[];
  usage: Usage;
  totalCostUsd: number;
  queryCount: number;
  pendingInputs: PendingInput[];
  lastResult?: ResultMessage;
  lastQueryTransitions: TransitionType[];
  /** Turns of all finished queries (the UI numbers turns over the conversation). */
  completedTurns?: number;
  continuedAsNewCount: number;
  nextEventSeq: number;
  /** The events feed's tail, so clients polling across continue-as-new miss nothing. */
  recentEvents?: ConversationEvent[];
  sessionContext?: import('../common/activity-types').SessionContext;
  /** A query suspended mid-way for continue-as-new; the new run resumes it first. */
  queryInProgress?: QueryInProgress;
  /** Loading the session context was tried (it is not retried on every run when it failed). */
  sessionContextAttempted?: boolean;
  /** `end` arrived before the switch: the conversation ends after the running query. */
  endRequested?: boolean;
  /** Compactions so far and the autocompact failure streak (the breaker is per conversation). */
  compaction?: CompactionState;
  /** The model `/model` chose for the next queries. */
  selectedModel?: string;
  /** The session context is read again before the next input (after a compaction or `/clear`). */
  sessionContextStale?: boolean;
  /** Session allow rules (`approve --always`), recorded decisions, the running query's denials. */
  permissions?: CarriedPermissions;
  /** The live channel's tail and offsets (issue 10), so readers resume where they were. */
  streamState?: import('@temporalio/workflow-streams/workflow').WorkflowStreamState;
  /** Keys of the notifications already queued (issue 21): each is delivered once, across retries and runs. */
  deliveredNotifications?: string[];
  /** The task list (TaskCreate…), wakeups not yet fired and this conversation's cron jobs (issue 21; workflows/background/). */
  taskList?: import('../common/tasks').TaskListState;
  wakeups?: import('../common/background').WakeupRecord[];
  cronJobs?: import('./background/cron-job-record').CronJobRecord[];
  /** Issue 22: the MCP servers' config and recorded listing (workflows/extensions/mcp.ts). */
  mcp?: import('./extensions/mcp-state').McpCarried;
  /** Background agents (issue 21): workflows/background/agents.ts. */
  backgroundAgents?: AgentTasksState;
  /** Hook settings and SessionStart's context (issue 22; workflows/extensions/hooks.ts). */
  hooks?: import('./extensions/hooks-decisions').HooksState;
  /** Background commands (issue 21, workflows/background/commands.ts): running ones are supervised again by the next run. */
  backgroundTasks?: import('./background/command-tasks').BackgroundTasks;
  /** Issue 31: the rewind points (a checkpoint before each prompt) and the rewinds so far (workflows/session/rewinds.ts). */
  rewinds?: import('../common/checkpoints').RewindsState;
  /** Issue 33: the worktree the conversation works in (EnterWorktree, --worktree) and where it came from (workflows/session/worktree-session.ts). */
  worktreeSession?: import('../common/worktrees').WorktreeSessionState;
}

/** Compaction bookkeeping carried across queries and runs. */
export interface CompactionState {
  compactions: number;
  consecutiveFailures: number;
  lastCompaction?: CompactionOutcome;
}

/** A running query's bookkeeping, carried across continue-as-new. */
export interface QueryInProgress {
  pending: PendingInput;
  startedAt: number;
  usageBefore: Usage;
  costBefore: number;
  apiDurationMs: number;
  turnCount: number;
  transitions: TransitionType[];
  consumedInputUuids: string[];
  lastAssistantText: string;
  lastStopReason: string | null;
  tokenBudget: number | null;
  checkpoint: LoopCheckpoint;
  /** Usage per model and structured output so far (absent in runs recorded before they existed). */
  accounting?: import('./query/accounting').QueryAccountingState;
}

/** The workflow's return value: the conversation's totals when it ends. */
export interface ConversationSummary {
  conversationId: string;
  endedBy: 'end_signal' | 'idle_timeout' | 'one_shot';
  queryCount: number;
  usage: Usage;
  totalCostUsd: number;
  lastResult?: ResultMessage;
}

// The messages our activities exchange with a conversation live on the shared side (activities may not import workflows/).
export { type ToolUseStreamed, type TranscriptSlice, requestContextQuery, toolUseStreamedSignal, transcriptSliceQuery } from '../common/worker-messages';
