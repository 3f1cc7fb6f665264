/**
 * What the loop's effects read and report on the session (`QueryHost`, implemented by
 * `SessionQueries`, session/queries.ts); the query they run in is `ActiveQuery` (workflows/query/active-query.ts).
 */
import type { RuleWithSource } from '../../common/permission-rules';
import type { ActiveQuery } from '../query/active-query';
import type { RequestContext, SessionContext } from '../../common/activity-types';
import type { ConversationConfig } from '../../common/config';
import type { McpToolDefinition } from '../../common/mcp-context';
import type { AssistantApiMessage, ToolUseBlock, Usage } from '../../common/messages';
import type { CallFacts } from '../../common/permission-facts';
import type { PermissionContext } from '../../common/permissions';
import type { ModelUsage } from '../../common/result';
import type { Phase, ToolInFlight } from '../definitions';
import type { LiveStream } from '../ui/live-stream';
import type { GateVerdict } from '../permissions/types';
import type { QueryAccounting } from '../query/accounting';
import type { Transcript } from '../transcript';
import type { HookSettings } from '../../common/hooks';
import type { HookPermission, PreToolUseAction } from '../extensions/hooks-decisions';
import type { StopHookDecision } from '../query/handle-stop-hooks';
import type { ActivityOptionsSet } from './activity-options';

export type { ActiveQuery } from '../query/active-query';

/**
 * What the effects read and report on the session (implemented by `SessionQueries`); what the
 * loop itself asks of the session is `LoopSession` (query/state.ts).
 */
export interface QueryHost {
  readonly conversationId: string;
  readonly config: ConversationConfig;
  readonly transcript: Transcript;
  readonly toolsInFlight: Map<string, ToolInFlight>;
  /** The live channel: tool starts and results go there, and activities publish to it. */
  readonly live?: LiveStream;
  readonly sessionContext: SessionContext | undefined;
  /** A subagent's usage and cost count in this conversation's totals. */
  recordChildUsage(usage: Usage, costUsd: number, modelUsage?: Record<string, ModelUsage>): void;
  /** The query's structured output and limits (`jsonSchema`, `maxBudgetUsd`). */
  readonly accounting: QueryAccounting;
  /** Turn number over the whole conversation, and queries so far (the UI's labels). */
  readonly conversationTurn: number;
  readonly queryCount: number;
  readonly currentModel: string;
  setPhase(phase: Phase): void;
  /** Names the request context (these prompt layers and the tools) by digest and makes it available to workers. */
  registerRequestContext(system: RequestContext['system'], userContext: string | undefined): string;
  /** Usage, cost and context size of a completed model call. */
  recordModelResponse(message: AssistantApiMessage, model: string, durationMs: number): void;
  /** Usage and cost of a call that produced no transcript message (a compaction). */
  recordUsage(usage: Usage, model: string, durationMs: number): void;
  /** Tools offered beyond the built-in ones (issue 22: MCP servers' tools); a new array whenever they change. */
  readonly extensionTools?: readonly McpToolDefinition[];
  /** The MCP servers a subagent may inherit (workflows/extensions/mcp.ts). */
  readonly mcp?: import('../subagents').SubagentMcp;
  /** The digest of the request context in effect (registered by the last model call, or now). */
  currentRequestContext(): string;
  /** seed §2.10 canUseTool, and what the tools tell it. */
  readonly toolPermissions: ToolPermissions;
  /** Tools with their own route (issues 21, 22: background work, the task list, MCP): see ToolRoute. */
  readonly toolRoutes: readonly ToolRoute[];
  /** Claude Code's tool and compaction hooks (issue 22; workflows/extensions/hooks.ts). */
  readonly hooks?: ToolHooks;
  /** A local activity's clock reading (CallModelResult.finishedAt): the query's duration counts up to at least it. */
  observeWorkerClock?(at: number): void;
}

/** The hooks the loop's effects run (workflows/extensions/hooks.ts): nothing runs when no command matches. */
export interface ToolHooks {
  /** Before the permission check: block the call, or run it (with an updated input, and what the gate hears). */
  preToolUse(block: ToolUseBlock): Promise<PreToolUseAction>;
  /** Once after a tool that succeeded: the result with the hooks' messages beside it. */
  postToolUse(block: ToolUseBlock, outcome: ToolOutcome, ran?: boolean): Promise<ToolOutcome>;
  /** Whether PreToolUse hooks match this tool's calls: they run before the call, so it is not prefetched or started early. */
  matchesPreToolUse(toolName: string): boolean;
  /** Issue 33: after every call of one reply has its result (PostToolBatch); context for the model, or why the query stops. */
  postToolBatch?(calls: ReadonlyArray<{ block: ToolUseBlock; response: string }>): Promise<{ context?: string; stop?: string }>;
  /** Before a compaction's model call. */
  preCompact(trigger: 'manual' | 'auto', customInstructions: string | undefined): Promise<void>;
  /** A top-level turn ended on an API error: StopFailure hooks (issue 33; output ignored). */
  stopFailure?(error: string, lastAssistantMessage: string | undefined): Promise<void>;
  /** After a compaction's summary (issue 33). */
  postCompact(trigger: 'manual' | 'auto', summary: string): Promise<void>;
  /** A subagent's SubagentStop hooks, folded into its Stop decision (only a subagent's hooks have it). */
  readonly subagentStop?: (args: { lastAssistantMessage: string; stopHookActive: boolean }, decision: StopHookDecision) => Promise<StopHookDecision>;
  /** Issue 33: a top-level conversation's Stop hooks runStopHooks does not run (the user's, HTTP, prompt), folded into its decision. */
  readonly stop?: (args: { lastAssistantMessage: string; stopHookActive: boolean }, decision: StopHookDecision) => Promise<StopHookDecision>;
  /** The hook settings, for a subagent to inherit (undefined: none configured). */
  readonly inheritable: HookSettings | undefined;
}

/** seed §2.10 canUseTool as the effects use it (implemented by session/tool-permissions.ts). */
export interface ToolPermissions {
  /** Before every tool run (may wait for a person). */
  check(block: ToolUseBlock, hook?: HookPermission): Promise<GateVerdict>;
  /** Facts a model call gathered for a tool_use of its answer, where the tool acts (the gate need not gather them again). */
  rememberFacts(block: { id: string; input: unknown }, facts: CallFacts): void;
  /** Issue 29: the facts of a reply's calls whose concurrency depends on them (Bash), by tool_use id, gathered before the reply is partitioned. */
  factsForReply(blocks: readonly ToolUseBlock[]): Promise<ReadonlyMap<string, CallFacts>>;
  /** A large result was saved to this file (outside the workspace): reading it back needs no approval. */
  allowReadOf(file: string): void;
  /** Issue 33 §3: the running query's allow rules (an active skill's or command's `allowed-tools`, a skill's folder). */
  setQueryAllowRules(rules: readonly RuleWithSource[]): void;
  /** The gate's rule context, or undefined when tools run unchecked (a local model call prefetches what it allows). */
  context(): PermissionContext | undefined;
}

// ---- tools with their own route (issues 21, 22; tool-routes.ts picks one) ----

/** A tool call's outcome: the tool_result's text and whether it is an error (style §9: failures are data). */
export interface ToolOutcome {
  content: string;
  isError: boolean;
}

/** One allowed call, as a route runs it. */
export interface ToolRouteCall {
  readonly block: ToolUseBlock;
  /** Calls in the same assistant message (the tool-result budget shares between them). */
  readonly siblings: number;
  /** The permission gate's verdict (allow), with what the tool must enforce where it acts. */
  readonly verdict: Extract<GateVerdict, { behavior: 'allow' }>;
  /** The call's one-line summary (UI summaries of the commands it issues). */
  readonly summary: string;
  readonly options: ActivityOptionsSet;
  readonly query: ActiveQuery;
  /** The call's line in `status` (a route may add its child workflow id). */
  readonly entry: ToolInFlight;
}

/**
 * Tools that do not run as `runTool` on the workspace: the workflow answers them itself (the task
 * list, ScheduleWakeup, cron jobs) or routes them to their own activities (background commands,
 * MCP servers, background agents). Registered with the session in a fixed order.
 */
export interface ToolRoute {
  /** For logs and messages: "background commands", "MCP servers"… */
  readonly name: string;
  /** Whether this route runs the call (decided on the call alone: deterministic). */
  takes(block: ToolUseBlock): boolean;
  run(call: ToolRouteCall): Promise<ToolOutcome>;
  /** Whether a call this route takes may run beside others (seed §2.4 partitioning); default not. */
  concurrencySafe?(block: ToolUseBlock): boolean;
}
