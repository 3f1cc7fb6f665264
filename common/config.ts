/**
 * Conversation configuration: the immutable parameters of one conversation (seed §2.10's
 * QueryEngineConfig). Validated with zod at the client boundary; defaults live here so the client,
 * the worker and the workflow agree. Pure: imported by the workflow bundle.
 */
import { z } from 'zod';
import { type HookMatcher, hookMatchersSchema } from './hooks';
import { DEFAULT_MODEL, EFFORT_LEVELS } from './models';
import { PERMISSION_MODES, SETTING_SOURCES, permissionRuleProblem } from './permissions';
import { webSearchConfigSchema } from './web-search';

/** The default model (common/models.ts: Claude Code's default). */
export { DEFAULT_MODEL };
/** Default task queue for conversation workflows and their activities. */
export const DEFAULT_TASK_QUEUE = 'durable-agent';

/** Claude Code's default output cap before max_output_tokens escalation (seed §2.8). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 8_192;
/** The escalated cap used once after a max_tokens stop. */
export const ESCALATED_MAX_OUTPUT_TOKENS = 64_000;

/** Claude Code's settings.json hook format: `hooks.Stop[].hooks[]`. */
export const stopHooksSchema = hookMatchersSchema;
export type StopHookMatcher = HookMatcher;

const durationMs = z.number().int().positive();

const permissionRuleSchema = z.string().superRefine((rule, context) => {
  const problem = permissionRuleProblem(rule);
  if (problem) context.addIssue({ code: 'custom', message: problem });
});

/**
 * Permissions (seed §2.10 canUseTool, Claude Code's flags). Absent: tools run unchecked, as for
 * conversations started before permissions existed (the CLI always sets it).
 */
export const permissionsConfigSchema = z.object({
  /** `--permission-mode`; unset: the settings' `defaultMode`, else `default`. */
  mode: z.enum(PERMISSION_MODES).optional(),
  /** `--allowed-tools`, `--disallowed-tools`, and ask rules, in Claude Code's rule syntax. */
  allow: z.array(permissionRuleSchema).default([]),
  deny: z.array(permissionRuleSchema).default([]),
  ask: z.array(permissionRuleSchema).default([]),
  /** `--add-dir`: directories the file tools may use besides the workspace (absolute). */
  additionalDirectories: z.array(z.string().min(1)).default([]),
  /** Someone can answer a permission request (`approve`/`deny`, an interactive `ask`); false: it is denied at once. */
  canApprove: z.boolean().default(true),
  /** How long a request waits for a decision before it is denied. */
  approvalTimeoutMs: durationMs.default(24 * 60 * 60 * 1000),
});
export type PermissionsConfig = z.output<typeof permissionsConfigSchema>;

export const conversationConfigSchema = z.object({
  /** Workspace directory on the worker host; tools resolve relative paths against it. */
  cwd: z.string().min(1),
  /**
   * `--worktree [name]` (issue 33): start in a new git worktree of cwd's repository
   * (`.claude/worktrees/<name>`, branch `worktree-<name>`); '' makes a name from the conversation's id.
   */
  worktree: z.string().optional(),
  /** `--init` / `--maintenance` (issue 33, Claude Code's flags): Setup hooks with that trigger run before SessionStart on the first run. */
  setup: z.enum(['init', 'maintenance']).optional(),
  model: z.string().min(1).default(DEFAULT_MODEL),
  /** Used for the rest of a query when overload outlasts the primary model's retries. */
  fallbackModel: z.string().min(1).optional(),
  maxTurns: z.number().int().positive().default(100),
  /**
   * `--thinking` / settings `alwaysThinkingEnabled`: extended thinking on models whose capabilities
   * offer it (adaptive, else enabled with a budget); false sends `thinking: {type: "disabled"}`
   * where the model accepts that. Unset: on.
   */
  thinking: z.boolean().optional(),
  /** `--effort`: `output_config.effort` on models that take it; unset: the model's default (high). */
  effort: z.enum(EFFORT_LEVELS).optional(),
  maxOutputTokens: z.number().int().positive().default(DEFAULT_MAX_OUTPUT_TOKENS),
  /** Replaces the default system prompt (seed §2.5 customSystemPrompt). */
  customSystemPrompt: z.string().optional(),
  /** A subagent's own prompt (seed §2.5 Layer 2 "agent prompt"): replaces the default's static part. */
  agentSystemPrompt: z.string().optional(),
  /** Appended to whichever system prompt is in effect. */
  appendSystemPrompt: z.string().optional(),
  /** Tool names offered to the model; default all built-in tools. */
  tools: z.array(z.string()).optional(),
  /** Issue 33: the API's server-side web search, offered with these filters (common/web-search.ts); unset: not offered. */
  webSearch: webSearchConfigSchema.optional(),
  /**
   * The user's IANA time zone (the client sets it from Intl): cron jobs (CronCreate, /loop with an
   * interval) run in it, as Claude Code's run in local time. Unset: UTC.
   */
  timeZone: z.string().min(1).refine(isTimeZone, { message: 'not an IANA time zone (e.g. Europe/Paris, America/New_York, UTC)' }).optional(),
  /**
   * ScheduleWakeup's shortest delay, seconds (Claude Code: 60; the longest is 3600). Tests lower it
   * so a wakeup fires within the test.
   */
  wakeupMinimumSeconds: z.number().int().positive().max(3600).default(60),
  /** The conversation completes after this long without input. */
  idleTimeoutMs: durationMs.default(24 * 60 * 60 * 1000),
  /**
   * Notification hooks' idle_prompt fires after this long without input (Claude Code's
   * `messageIdleNotifThresholdMs`, 60 s). Tests lower it.
   */
  messageIdleNotifThresholdMs: durationMs.default(60_000),
  /** End the workflow after the first query (one-shot `ask`). */
  oneShot: z.boolean().default(false),
  /** Start concurrency-safe tools while the model still streams (seed §2.4 StreamingToolExecutor). */
  streamingToolExecution: z.boolean().default(true),
  /** Host the live channel (model deltas, tool progress) clients read (issue 10); off: clients poll `events`. */
  liveStream: z.boolean().default(true),
  maxToolUseConcurrency: z.number().int().positive().default(10),
  /** Extra Stop hooks beside `<cwd>/.claude/settings.json`. */
  stopHooks: stopHooksSchema.optional(),
  /** Activity tuning; tests shorten these so crash recovery is quick. */
  modelHeartbeatTimeoutMs: durationMs.default(30_000),
  toolHeartbeatTimeoutMs: durationMs.default(30_000),
  modelMaximumAttempts: z.number().int().positive().default(10),
  modelInitialRetryIntervalMs: durationMs.default(1_000),
  /** Output-token target per query (seed §2.6); a prompt's own "+500k" is used when unset. */
  tokenBudget: z.number().int().positive().optional(),
  /** Override of the model's context window (tokens), e.g. for models this build does not know. */
  contextWindowTokens: z.number().int().positive().optional(),
  /** Override of the model's largest output (tokens), which sizes the effective window (seed §2.6). */
  modelMaxOutputTokens: z.number().int().positive().optional(),
  /** Compact automatically near the end of the window (seed §2.7); off: the blocking limit ends the query. */
  autoCompact: z.boolean().default(true),
  /** Drop the oldest rounds before summarising when past the warning threshold (seed §2.7 snip). */
  snip: z.boolean().default(false),
  /** Time-based microcompact: clear old tool results after this long without a reply (workflow time); 0 = off. */
  microcompactGapMs: z
    .number()
    .int()
    .nonnegative()
    .default(60 * 60 * 1000),
  /**
   * Continue-as-new between queries once history has this many events, even if the server has
   * not suggested it yet (it suggests it near its own limits).
   */
  continueAsNewAfterEvents: z.number().int().positive().default(20_000),
  /**
   * Run short read-only tools (Read, Glob, Grep) as local activities when tools share the
   * workflow's task queue: one server round trip per loop iteration instead of two.
   */
  localReadOnlyTools: z.boolean().default(true),
  /**
   * Start each model call as a local activity that answers within the local budget (below) or
   * hands the stream over to a regular activity on the same worker process: an instant answer
   * costs no server round trip, a streaming one keeps signals, queries and heartbeats.
   */
  localModelCalls: z.boolean().default(true),
  /**
   * A local model call whose answer asks for local read-only tools (above) runs those the
   * permission rules allow before it returns: one local activity per loop iteration instead of two.
   */
  prefetchReadOnlyTools: z.boolean().default(true),
  /**
   * How long a handed-over model call may wait to be picked up on its worker's handoff queue
   * before it is sent afresh on the workflow's queue (the worker died meanwhile).
   */
  modelHandoffStartTimeoutMs: z.number().int().positive().default(10_000),
  /** Task queue for tool activities (the host that holds the workspace); default the workflow's. */
  toolTaskQueue: z.string().optional(),
  /**
   * Issue 31: a checkpoint of the workspace before each prompt (the points `rewind` goes back
   * to; docs/checkpoints.md). The checkpoints before mutating tools are the worker's own
   * (`DURABLE_AGENT_CHECKPOINTS=0` turns those off).
   */
  checkpoints: z.boolean().default(true),
  /** Set on a fork (`durable-agent fork`, `--fork-session`): the conversation it was forked from, and before which prompt. */
  forkedFrom: z.object({ conversationId: z.string().min(1), prompt: z.number().int().positive().optional() }).optional(),
  /** `--max-budget-usd`: a query stops (`error_max_budget_usd`) once the conversation has cost this much. */
  maxBudgetUsd: z.number().positive().optional(),
  /** `--json-schema`: each query ends with output validated against this schema (the StructuredOutput tool). */
  jsonSchema: z.record(z.string(), z.unknown()).optional(),
  permissions: permissionsConfigSchema.optional(),
  /** `--setting-sources`: which settings files (and their hooks and rules) apply; default all. */
  settingSources: z.array(z.enum(SETTING_SOURCES)).optional(),
  /** `--mcp-config` (issue 22): MCP config files or inline JSON strings, read on the workspace's host. */
  mcpConfig: z.array(z.string().min(1)).optional(),
  /** `--strict-mcp-config`: only the `--mcp-config` servers (not .mcp.json nor ~/.claude.json). */
  strictMcpConfig: z.boolean().optional(),
  /**
   * `--plugin-dir` (issue 33, Claude Code's flag): plugin folders on the workspace's host, absolute.
   * Their commands, agents, hooks, MCP servers and skills load with the session context; one that
   * is missing or has a bad manifest ends the conversation before its first prompt.
   */
  pluginDirs: z
    .array(
      z
        .string()
        .min(1)
        .refine((dir) => dir.startsWith('/'), 'a --plugin-dir must be an absolute path'),
    )
    .optional(),
  /**
   * Issue 29: the person who started the conversation trusts the workspace (`--trust`, or Claude
   * Code's trust dialog accepted on their machine), so its settings' hooks, MCP servers, allow rules
   * and additionalDirectories apply. Absent (the stock `temporal` CLI): the worker's own
   * `~/.claude.json` decides, and a workspace trusted nowhere is untrusted.
   */
  trusted: z.boolean().optional(),
});

/** Whether Intl knows this IANA zone (the Temporal server reads a Schedule's zone by the same name). */
function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export type ConversationConfigInput = z.input<typeof conversationConfigSchema>;
export type ConversationConfig = z.output<typeof conversationConfigSchema>;

/** Parses and fills defaults; throws a ZodError with field paths on bad input. */
export function parseConversationConfig(input: ConversationConfigInput): ConversationConfig {
  return conversationConfigSchema.parse(input);
}
