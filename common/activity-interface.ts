/**
 * The activities as the workflow calls them: the interface lives on the shared side, so the
 * workflow bundle (and `common/`) never imports from `activities/`, not even a type (issue 20,
 * item 5). `activities/index.ts` builds an object that satisfies it (`createActivities(): Activities`),
 * so a signature that drifts fails the typecheck on the activities' side.
 */
import type {
  CallModelInput,
  CallModelLocalInput,
  CallModelLocalResult,
  CallModelResult,
  CompactConversationInput,
  CallMcpToolInput,
  CallMcpToolResult,
  CompactConversationResult,
  ListMcpServersInput,
  ListMcpServersResult,
  LoadHookSettingsInput,
  LoadSessionContextInput,
  LoadHookSettingsResult,
  LoadMcpConfigInput,
  LoadMcpConfigResult,
  SaveMcpApprovalsInput,
  SaveMcpApprovalsResult,
  RunHooksInput,
  RunHooksResult,
  RunStopHooksInput,
  RunStopHooksResult,
  RunToolInput,
  RunToolResult,
  SessionContext,
} from './activity-types';
import type {
  BackgroundOutcome,
  BackgroundTaskRef,
  ReadTaskOutputInput,
  ReadTaskOutputResult,
  StartBackgroundCommandInput,
  StartBackgroundCommandResult,
  StopResult,
} from './background';
import type {
  CheckpointWorkspaceInput,
  CheckpointWorkspaceResult,
  ForkWorkspaceInput,
  ForkWorkspaceResult,
  RestoreWorkspaceInput,
  RestoreWorkspaceResult,
  WorkspaceChangesInput,
  WorkspaceChangesResult,
} from './checkpoints';
import type { AgentTranscript, AgentWorkflowClosed, ReadAgentTranscriptInput, ReadRunTranscriptInput, WatchAgentInput } from './agent-transcript';
import type { CreateCronScheduleInput, CronDeliveryResult, CronFireInput, CronJobSummary } from './cron';
import type { GatherFactsInput, GatherFactsResult } from './permission-facts';
import type { OutputSchema, StructuredOutputCheck } from './structured-output';
import type { CloseWorktreeInput, CreateWorktreeInput, CreateWorktreeResult, WorktreeClosed } from './worktrees';
import type { LoadSkillBodyInput, LoadSkillBodyResult } from './skills';

export interface Activities {
  /** One model call by reference (streams, heartbeats, classifies API errors). */
  callModel(input: CallModelInput): Promise<CallModelResult>;
  /** The local first phase of a model call: an answer by its deadline, or a handoff. */
  callModelLocal(input: CallModelLocalInput): Promise<CallModelLocalResult>;
  /** seed §2.7: the compaction model call. */
  compactConversation(input: CompactConversationInput): Promise<CompactConversationResult>;
  /** One tool_use, journaled when it mutates. */
  runTool(input: RunToolInput): Promise<RunToolResult>;
  /** Permission facts gathered where the tool acts (issue 17). */
  gatherPermissionFacts(input: GatherFactsInput): Promise<GatherFactsResult>;
  /** CLAUDE.md, git state, settings, agents, commands: once per session. */
  loadSessionContext(input: LoadSessionContextInput): Promise<SessionContext>;
  /** Issue 33 §3: an invoked skill's body, read from its own SKILL.md (the session context carries none). */
  loadSkillBody(input: LoadSkillBodyInput): Promise<LoadSkillBodyResult>;
  /** seed §2.9: the Stop hooks. */
  runStopHooks(input: RunStopHooksInput): Promise<RunStopHooksResult>;
  /** Issue 23: a StructuredOutput call checked against the conversation's JSON Schema (local, its verdict recorded). */
  checkStructuredOutput(input: { schema: OutputSchema; input: unknown }): Promise<StructuredOutputCheck>;

  // ---- issue 22: MCP servers and hooks (workspace activities) ----
  /** `.mcp.json`, `~/.claude.json`, `--mcp-config` and the approvals: the unexpanded config. */
  loadMcpConfig(input: LoadMcpConfigInput): Promise<LoadMcpConfigResult>;
  /** Each server's tools (schemas, annotations), instructions and state; a failing server is an entry, not an error. */
  listMcpServers(input: ListMcpServersInput): Promise<ListMcpServersResult>;
  /** One MCP tool call (at most once unless the tool is read-only or idempotent). */
  callMcpTool(input: CallMcpToolInput): Promise<CallMcpToolResult>;
  /** A person's approval of project (`.mcp.json`) servers, merged into `.claude/settings.local.json` (never the shared settings.json). */
  saveMcpApprovals(input: SaveMcpApprovalsInput): Promise<SaveMcpApprovalsResult>;
  /** Hooks from the user's, project's and local settings (by `--setting-sources`). */
  loadHookSettings(input: LoadHookSettingsInput): Promise<LoadHookSettingsResult>;
  /** The selected hook commands of one event, in parallel; their outcomes. */
  runHooks(input: RunHooksInput): Promise<RunHooksResult>;
  // ---- issue 21: background work (commands on the workspace; cron on the main worker: it needs the Temporal client) ----
  /** Starts a command detached; returns at once; idempotent per task id. */
  startBackgroundCommand(input: StartBackgroundCommandInput): Promise<StartBackgroundCommandResult>;
  /** Waits for a background command (heartbeats; a retry re-attaches, never starts it again). */
  superviseBackgroundCommand(input: BackgroundTaskRef): Promise<BackgroundOutcome>;
  /** TaskOutput. */
  readTaskOutput(input: ReadTaskOutputInput): Promise<ReadTaskOutputResult>;
  /** TaskStop (process-group kill). */
  stopBackgroundCommand(input: BackgroundTaskRef): Promise<StopResult>;
  /** CronCreate: the job as a Temporal Schedule. */
  createCronSchedule(input: CreateCronScheduleInput): Promise<{ scheduleId: string; nextFireTimes: string[] }>;
  /** CronList. */
  listCronSchedules(input: { conversationId: string }): Promise<CronJobSummary[]>;
  /** CronDelete. */
  deleteCronSchedule(input: { conversationId: string; id: string }): Promise<{ deleted: boolean; message: string }>;
  /** `end`: the conversation's session-only jobs. */
  deleteSessionCronSchedules(input: { conversationId: string }): Promise<{ deleted: string[] }>;
  /** Run by workflows/cron-fire.ts when a job's Schedule fires. */
  deliverCronPrompt(input: CronFireInput & { scheduledAt?: string }): Promise<CronDeliveryResult>;
  /** SendMessage to a finished agent: its transcript, read by the closed child's query (main worker: it needs the Temporal client). */
  readAgentTranscript(input: ReadAgentTranscriptInput): Promise<AgentTranscript>;
  /**
   * After the parent continued as new: waits (heartbeating) for a background agent's child to
   * close and says how — a child terminated or failed from outside is then reported, not waited for forever.
   */
  watchAgentWorkflow(input: WatchAgentInput): Promise<AgentWorkflowClosed>;
  // ---- issue 31: workspace checkpoints (workspace activities) ----
  /** A checkpoint of the workspace (before a prompt, before a rewind); a retry finds the one an earlier attempt took. */
  checkpointWorkspace(input: CheckpointWorkspaceInput): Promise<CheckpointWorkspaceResult>;
  /** A rewind's files: a checkpoint of the workspace as it is (the undo), then the workspace as the checkpoint holds it. */
  restoreWorkspace(input: RestoreWorkspaceInput): Promise<RestoreWorkspaceResult>;
  /** A rewind past an earlier run's compaction: that run's transcript before the prompt (main worker: it needs the Temporal client). */
  readRunTranscript(input: ReadRunTranscriptInput): Promise<AgentTranscript>;
  /** A fork's workspace from a checkpoint (a git repository of its own when the parent's is one). */
  forkWorkspace(input: ForkWorkspaceInput): Promise<ForkWorkspaceResult>;
  /** What differs between each checkpoint and the workspace now. */
  workspaceChanges(input: WorkspaceChangesInput): Promise<WorkspaceChangesResult>;
  // ---- issue 33: git worktrees (workspace activities) ----
  /** A worktree cut from a directory's HEAD (an isolated agent, `--worktree`); a retry finds the one an earlier attempt made. */
  createWorktree(input: CreateWorktreeInput): Promise<CreateWorktreeResult>;
  /** A worktree's end: kept with its changes, removed with its branch without; a retry after the removal reports it removed. */
  closeWorktree(input: CloseWorktreeInput): Promise<WorktreeClosed>;
}
