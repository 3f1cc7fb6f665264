/**
 * Inputs and outputs of the activities, shared by the workflow (caller) and the activities
 * (implementation). Everything here crosses Temporal's payload boundary, so it is plain JSON.
 */
import type { ApiMessage, AssistantApiMessage, Usage } from './messages';
import type { AgentDefinition } from './agents';
import type { CustomCommand } from './custom-commands';
import type { SkillEntry } from './skills';
import type { StopHookMatcher } from './config';
import type { PermissionMode, RuleWithSource, SettingSource } from './permissions';
import type { PrefetchedToolResult, ToolPrefetchPlan } from './tool-prefetch';

/** A system prompt block as the API takes it (cache_control marks the dynamic boundary, seed §2.5). */
export interface SystemPromptBlock {
  type: 'text';
  text: string;
  cache_control?: { type: 'ephemeral' };
}

/**
 * What a model request needs besides the transcript, the same for every call of a query: the
 * system prompt, the user context and the tools. Named by its digest (`valueDigest`).
 */
export interface RequestContext {
  system: SystemPromptBlock[];
  /** CLAUDE.md + date, prepended to the first user message as a <system-reminder> (seed §2.5). */
  userContext?: string;
  /** Names of the tools offered; the activity turns them into API tool definitions. */
  toolNames: string[];
  /** `jsonSchema` conversations: the StructuredOutput tool is offered with this input schema. */
  structuredOutputSchema?: Record<string, unknown>;
  /** Issue 22: the connected MCP servers' tools (`mcp__server__tool`), from the recorded listing. */
  mcpTools?: Array<{ name: string; description: string; input_schema: Record<string, unknown> }>;
  /** Issue 33: the server-side web search tool offered (common/web-search.ts); absent: none. */
  webSearch?: import('./web-search').WebSearchToolDefinition;
}

/**
 * A model call. The transcript and the system prompt never travel in it (architecture notes:
 * history grows with the conversation, not with turns × transcript): the worker materialises
 * the request from `transcript` and `context`, references it checks by digest.
 */
export interface CallModelInput {
  conversationId: string;
  model: string;
  maxTokens: number;
  /** The conversation's `thinking` and `effort` (activities/request-params.ts); absent: thinking on, the model's default effort. */
  thinking?: boolean;
  effort?: import('./models').EffortLevel;
  /** The first `length` messages of the conversation's transcript, from index `from` (default 0). */
  transcript?: { length: number; digest: string; from?: number };
  /** Digest of the query's RequestContext. */
  context?: { digest: string };
  /**
   * Inline request, as calls scheduled before model calls went by reference carried it: a
   * conversation started on older code may still have one pending when a new worker picks it up.
   */
  system?: SystemPromptBlock[];
  messages?: ApiMessage[];
  toolNames?: string[];
  /**
   * When set, the activity reports each completed tool_use block to the workflow as it streams
   * (signal `toolUseStreamed`), so concurrency-safe tools start early (seed §2.4).
   */
  streamToolUses?: {
    workflowId: string;
    runId?: string;
    requestId: string;
    /**
     * Tools run in this worker's process (no workspace queue): each report carries the call's
     * permission facts, gathered here as the tool would act (issue 17), so the workflow can decide
     * to start it early.
     */
    permissionFacts?: { cwd: string; homeDir?: string };
  };
  /**
   * A fallback model is configured: after repeated overload the activity gives up early with a
   * non-retryable `FallbackTriggered` failure instead of exhausting every retry (seed §2.8).
   */
  fallbackAvailable?: boolean;
  /** Publish text/thinking deltas and tool_use starts to the conversation's live channel. */
  stream?: import('./stream-items').StreamTarget;
  /**
   * Continue a call that `callModelLocal` started and handed over (`CallModelLocalResult`
   * `handoff`): the worker process holding run `key` attaches to it — the stream goes on, no new
   * request — and reports its outcome as this activity's first attempt. A process that does not
   * hold it (gone, expired) sends the request afresh, as every later attempt does.
   */
  attach?: { key: string };
  /** Attempts of this call made before this activity (a local phase; a handoff whose worker was gone): added to `attempt`. */
  attemptOffset?: number;
  /** Consecutive overloaded answers those attempts got (until the activity's own heartbeat details count them). */
  overloadedBefore?: number;
}

/**
 * The first part of a model call, run as a local activity inside the workflow task that asked
 * for it (no server round trip: docs/architecture.md, "Loop overhead"). It answers within
 * `handoffAfterMs`: with the call's outcome when the model answered by then, otherwise by handing
 * the call over to a regular `callModel` activity (`attach`) on the worker-specific task queue
 * of the process that holds the stream, so the workflow task completes and signals, updates and
 * queries get through while the model streams.
 */
export interface CallModelLocalInput extends CallModelInput {
  handoffAfterMs: number;
  /**
   * The attach activity's schedule-to-start timeout (the config's `modelHandoffStartTimeoutMs`;
   * default 10 s): a handed-over stream nobody attached to within it (+5 s) is aborted and dropped.
   */
  handoffStartTimeoutMs?: number;
  /**
   * An answer that asks for tools runs these of its calls before it returns (common/tool-prefetch.ts):
   * the reads the workflow would run next as local activities. Not for a handed-over call.
   */
  prefetch?: ToolPrefetchPlan;
}

export type CallModelLocalResult =
  | (Extract<CallModelResult, { type: 'message' }> & {
      /** The results of the calls run under `prefetch`, recorded in this local activity's marker (replay sees the same). */
      prefetched?: PrefetchedToolResult[];
      /** The whole local phase (ms, the worker's clock), prefetched reads included: what it held the workflow task for. */
      elapsedMs?: number;
    })
  | (Extract<CallModelResult, { type: 'prompt_too_long' }> & { elapsedMs?: number })
  | {
      type: 'handoff';
      /**
       * Where the call goes on: a regular `callModel` with `attach: { key }` on `taskQueue` (that
       * process's handoff queue). Absent when nothing was sent (the transcript was not in this
       * worker's cache, or the process has no handoff queue): call `callModel` on the workflow's queue.
       */
      attach?: { key: string; taskQueue: string };
      /** Why: still streaming at the deadline; the request failed (the attached activity reports the failure); or not started. */
      reason: 'slow' | 'failed' | 'cache_miss' | 'no_handoff_queue';
      /** Time the local phase took (ms, the worker's clock; recorded in the marker, so replay sees the same). */
      elapsedMs: number;
    };

/** A compaction model call (seed §2.7 compactConversation), by reference like `callModel`. */
export interface CompactConversationInput {
  conversationId: string;
  model: string;
  maxTokens: number;
  thinking?: boolean;
  effort?: import('./models').EffortLevel;
  /** The transcript prefix; the window starts at `from`, and its oldest `skip` messages are left out. */
  transcript: { length: number; digest: string; from: number };
  skip: number;
  context: { digest: string };
  customInstructions?: string;
}

/** The compaction's answer: the model's text (the workflow reads the summary out of it), or too long. */
export type CompactConversationResult =
  { type: 'summary'; text: string; usage: Usage; model: string; durationMs: number } | { type: 'prompt_too_long'; errorMessage: string; durationMs: number };

/**
 * Recoverable conditions come back as data so the loop can withhold and recover them (seed §2.3);
 * transient API failures are thrown as retryable ApplicationFailures, invalid requests as
 * non-retryable ones.
 */
export type CallModelResult = (
  | { type: 'message'; message: AssistantApiMessage; durationMs: number; attempt: number }
  | { type: 'prompt_too_long'; errorMessage: string; actualTokens?: number; limitTokens?: number; durationMs: number; attempt: number }
) & {
  /**
   * The worker's clock (ms since epoch) when a local call's answer was ready. Inside one workflow
   * task of local activities the workflow's clock advances only by their own run time, not by
   * the time between them: the session takes the later of the two as "now" for `duration_ms`.
   */
  finishedAt?: number;
};

export interface RunToolInput {
  conversationId: string;
  toolUseId: string;
  name: string;
  input: unknown;
  cwd: string;
  /** Results longer than this are persisted by the activity and replaced by a preview and a path. */
  maxResultSizeChars: number;
  /** Publish output progress (Bash) to the conversation's live channel. */
  stream?: import('./stream-items').StreamTarget;
  /**
   * What the file tools enforce where they act (issue 17 §4): the working directories, the Read
   * deny rules and the real paths the decision allowed. Absent in older histories: no such checks.
   */
  access?: import('./permission-facts').ToolAccess;
  /** Bash's sandbox (issue 17 §10): working directories besides cwd, writable inside it. */
  additionalDirectories?: string[];
  /** `--setting-sources`: which settings files' `sandbox` keys apply (default all). */
  settingSources?: SettingSource[];
  /** Claude Code's `sandbox` settings object from the conversation's config; may weaken the sandbox, as the user's settings may. */
  sandbox?: Record<string, unknown>;
}

export interface RunToolResult {
  toolUseId: string;
  content: string;
  isError: boolean;
  /** Where the full output was saved when it exceeded the result budget. */
  persistedPath?: string;
  /** True when the journal answered (a retried activity whose first attempt had finished). */
  fromJournal?: boolean;
  /**
   * The workspace checkpoint taken before a mutating call ran (issue 31): its id only, never its
   * content, so the conversation's history names the state a rewind goes back to.
   */
  checkpointId?: string;
  durationMs: number;
}

export interface SessionContext {
  /** Contents of CLAUDE.md files that apply to cwd, concatenated with their paths. */
  claudeMd?: string;
  /** `git status` snapshot at the start of the session, truncated to 2000 chars (seed §2.5). */
  gitStatus?: string;
  currentDate: string;
  platform: string;
  shell: string;
  cwd: string;
  isGitRepo: boolean;
  /** Stop hooks found in <cwd>/.claude/settings.json. */
  stopHooks: StopHookMatcher[];
  /** The CLAUDE.md files in `claudeMd`, in the order they appear. */
  claudeMdFiles?: string[];
  /** Custom slash commands from .claude/commands/ (workspace and user). */
  commands?: CustomCommand[];
  /** Issue 33: the session's plugins (their commands, agents, hooks and MCP servers are loaded with them). */
  plugins?: SessionPlugin[];
  /** Custom subagents from .claude/agents/*.md (workspace and user). */
  agents?: AgentDefinition[];
  /** Issue 33 §3: Agent Skills (user, plugin, and the workspace's when trusted), without their bodies (common/skills.ts). */
  skills?: SkillEntry[];
  /** Problems people should hear about (a malformed agent file). */
  warnings?: string[];
  /** Permission rules and mode from the settings files (absent in sessions loaded before permissions). */
  permissionSettings?: PermissionSettings;
  /** The settings' `alwaysThinkingEnabled`: false turns extended thinking off unless `--thinking` says otherwise. */
  alwaysThinkingEnabled?: boolean;
  /**
   * Issue 29: whether the workspace's own settings (hooks, MCP servers, allow rules,
   * additionalDirectories) apply, decided on the workspace's host where they were read and recorded
   * here; absent in sessions loaded before the trust step (and then untrusted for what loads later).
   */
  workspaceTrust?: WorkspaceTrust;
}

/** Issue 29: the trust decision for a workspace, as recorded by the session context. */
export interface WorkspaceTrust {
  trusted: boolean;
  /** Why: `config` (the starter said so) or the directory whose `hasTrustDialogAccepted` covers it. */
  by?: string;
  /** Untrusted: what was not applied, in one line ("3 allow rules, 2 hooks from .claude/settings.json; …"). */
  ignored?: string;
}

/**
 * The failure type of a session context whose settings cannot be read (issue 29): the conversation
 * ends with it rather than run tools with fewer rules than the person wrote.
 */
export const INVALID_SETTINGS_FAILURE = 'InvalidSettings';

/** loadSessionContext's input. */
export interface LoadSessionContextInput {
  cwd: string;
  settingSources?: SettingSource[];
  /** The conversation config's `trusted`. */
  trusted?: boolean;
  /** Issue 33: `--plugin-dir`s, read on the workspace's host. */
  pluginDirs?: string[];
}

/** Issue 33: a plugin loaded in the session (`--plugin-dir`, or installed and enabled in the user's settings). */
export interface SessionPlugin {
  name: string;
  /** Its folder on the workspace's host. */
  root: string;
  origin: 'plugin-dir' | 'installed';
  /** Installed plugins: `name@marketplace`. */
  id?: string;
}

/** What the settings files say about permissions (Claude Code's `permissions` key), merged. */
export interface PermissionSettings {
  allow: RuleWithSource[];
  deny: RuleWithSource[];
  ask: RuleWithSource[];
  defaultMode?: PermissionMode;
  /** Absolute. */
  additionalDirectories: string[];
  /** The worker's home directory, for `~/` rules. */
  homeDir: string;
}

export interface RunStopHooksInput {
  conversationId: string;
  cwd: string;
  hooks: StopHookMatcher[];
  stopHookActive: boolean;
  transcriptPath?: string;
  lastAssistantMessage: string;
  /** The hooks' sandbox (as Bash's): working directories besides cwd, setting sources, the config's `sandbox` object. */
  additionalDirectories?: string[];
  settingSources?: SettingSource[];
  sandbox?: Record<string, unknown>;
}

export interface StopHookOutcome {
  command: string;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** Exit code 2 or {"decision":"block"}: the reason is fed back to the model. */
  blockingError?: string;
  /** {"continue": false}: the query ends. */
  preventContinuation?: boolean;
  stopReason?: string;
  /** Non-blocking failure (other exit codes, timeouts): reported, not fatal. */
  nonBlockingError?: string;
}

export interface RunStopHooksResult {
  outcomes: StopHookOutcome[];
}

// ---- issue 22: MCP servers and hooks (activity side; appended as one block for the merge) ----

/** loadMcpConfig: reads Claude Code's MCP configuration files on the workspace's host. */
export interface LoadMcpConfigInput {
  cwd: string;
  /** Issue 33: `--plugin-dir`s; their servers and the enabled installed plugins' are the user's (no project approval). */
  pluginDirs?: string[];
  /** `--setting-sources`: `project` gates `.mcp.json`, `user` and `local` gate `~/.claude.json`'s servers; default all. */
  settingSources?: SettingSource[];
  /** `--mcp-config`: file paths or inline JSON strings, in order. */
  mcpConfig?: string[];
  /** `--strict-mcp-config`: only the `--mcp-config` servers. */
  strictMcpConfig?: boolean;
  /** Issue 29: the session context's recorded trust; not true: `.mcp.json` and the local approvals are not applied. */
  trusted?: boolean;
}

export interface LoadMcpConfigResult {
  /** Unexpanded (`${VAR}` stays): secrets from the worker's environment never reach history. */
  servers: Array<import('./mcp-config').McpServerEntry>;
  /** One line per bad file or server (file, server, field), for the feed. */
  warnings: string[];
}

/** listMcpServers: connect to the approved servers (or reuse their connections) and list their tools. */
export interface ListMcpServersInput {
  /** What connections are shared by: a conversation id, or a workspace+config key. */
  scope: string;
  cwd: string;
  servers: Array<import('./mcp-config').McpServerEntry>;
}

export interface McpToolListing {
  /** The API name (`mcp__server__tool`, within 64 characters). */
  name: string;
  server: string;
  /** The server's own name for the tool. */
  originalName: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations?: import('./mcp-tools').McpToolAnnotations;
  /** Only a tool annotated readOnlyHint runs beside others. */
  concurrencySafe: boolean;
}

export interface McpServerStatus {
  name: string;
  scope: import('./mcp-config').McpScope;
  transport: import('./mcp-config').McpTransportKind;
  /** `needs-approval`: a project server nobody approved; `disabled`: in disabledMcpjsonServers. */
  state: 'connected' | 'failed' | 'needs-approval' | 'disabled';
  error?: string;
  serverInfo?: { name: string; version: string };
  /** The server's `instructions` (for the "# MCP Server Instructions" system section), bounded. */
  instructions?: string;
  tools: McpToolListing[];
  /** How many `tools/list_changed` notifications this connection has seen: a change means list again. */
  listChangedCount: number;
}

export interface ListMcpServersResult {
  servers: McpServerStatus[];
}

/**
 * A person's answer to "Use the MCP server … from .mcp.json?" (Claude Code's three choices):
 * `approve` (this server), `approve-all` (this and all future project servers:
 * `enableAllProjectMcpServers`), `reject` (`disabledMcpjsonServers`).
 */
export const MCP_APPROVAL_DECISIONS = ['approve', 'approve-all', 'reject'] as const;
export type McpApprovalDecision = (typeof MCP_APPROVAL_DECISIONS)[number];

/** saveMcpApprovals: the choice written into `<cwd>/.claude/settings.local.json`. */
export interface SaveMcpApprovalsInput {
  cwd: string;
  servers: string[];
  decision: McpApprovalDecision;
}

export interface SaveMcpApprovalsResult {
  /** The file written. */
  file: string;
}

/** callMcpTool: one `tools/call` on the server's connection, at most once unless the tool is read-only/idempotent. */
export interface CallMcpToolInput {
  scope: string;
  cwd: string;
  server: import('./mcp-config').McpServerEntry;
  /** The API name, for messages. */
  toolName: string;
  /** The server's name for the tool. */
  originalName: string;
  arguments: Record<string, unknown>;
  /** From the listing: decides whether a retried attempt calls again. */
  annotations?: import('./mcp-tools').McpToolAnnotations;
  timeoutMs?: number;
}

export interface CallMcpToolResult {
  content: Array<import('./mcp-tools').ToolResultContentBlock>;
  isError: boolean;
  /** The attempt found an earlier one had started and did not call again. */
  mayHaveRun?: boolean;
  /** Issue 31: the workspace checkpoint taken before a tool not marked read-only. */
  checkpointId?: string;
  listChangedCount: number;
  durationMs: number;
}

/** loadHookSettings: every command hook in the settings files `--setting-sources` allows. */
export interface LoadHookSettingsInput {
  cwd: string;
  /** Issue 33: `--plugin-dir`s; their hooks and the enabled installed plugins' run as the user's. */
  pluginDirs?: string[];
  settingSources?: SettingSource[];
  /** Issue 29: the session context's recorded trust; not true: the project's and local files' hooks are not applied. */
  trusted?: boolean;
}

export interface LoadHookSettingsResult {
  hooks: import('./hooks').HookSettings;
  warnings: string[];
}

/** runHooks: the commands the workflow selected for one event (selectHookCommands), run once; the outcome is recorded. */
export interface RunHooksInput {
  conversationId: string;
  cwd: string;
  transcriptPath?: string;
  permissionMode?: string;
  event: import('./hooks').HookEvent;
  commands: Array<import('./hooks').HookCommand>;
  /** The hooks' sandbox (as Bash's and the Stop hooks'). */
  additionalDirectories?: string[];
  settingSources?: SettingSource[];
  sandbox?: Record<string, unknown>;
  /** `mcp_tool` hooks (issue 33): the conversation's MCP servers and their connections' scope (only when such a hook runs). */
  mcp?: { scope: string; servers: Array<import('./mcp-config').McpServerEntry> };
}

export interface RunHooksResult {
  /** In the order of `commands`; decideHookOutcome(event, outcomes) gives what the loop does. */
  outcomes: Array<import('./hooks').HookRunOutcome>;
}
