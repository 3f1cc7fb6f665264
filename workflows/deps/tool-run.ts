/**
 * The loop's tool runs: one tool_use through its route or the checks (structured output in the
 * workflow first; then tools the conversation does not offer, hooks, the permission gate), then a
 * route (the parts', then a subagent's), a prefetched read, or a runTool activity — local for short reads on the workflow's queue — with its outcome as a
 * tool_result (style §9: tool failures are data), and the executor that runs a reply's calls.
 */
import { isCancellation, workflowInfo } from '@temporalio/workflow';
import type { ConversationConfig } from '../../common/config';
import type { ToolUseBlock } from '../../common/messages';
import { STRUCTURED_OUTPUT_TOOL_NAME } from '../../common/structured-output';
import { toolResultBudget } from '../../common/tool-result-budget';
import { getToolSpec, toolNamesWhere } from '../../common/tool-specs';
import { toolCallSummary, toolEndSummary } from '../../common/tool-ui';
import type { ToolInFlight } from '../definitions';
import { runSubagent, subagentWorkflowId } from '../subagents';
import { StreamingToolExecutor } from '../query/tool-orchestration';
import { takePrefetched } from '../query/prefetched-calls';
import { type ActivityOptionsSet, LOCAL_TOOL_OPTIONS, activities, localActivities } from './activity-options';
import { failureMessage, toolErrorResult } from './failures';
import type { LocalChain } from './local-chain';
import type { ActiveQuery, QueryHost } from './query-host';
import { type ToolRoute, routeFor } from './tool-routes';

/**
 * Short read-only tools (their specs' `localActivity`: Read, Glob, Grep) run as local activities:
 * in the workflow task that asked for them, on the worker that runs the workflow, with no server
 * round trip (one dispatch per loop iteration instead of two). They keep the durability
 * guarantees: read-only calls may simply run again (a local activity is at-least-once), and they
 * never run long (a minute at most, unlike Bash). In `TOOL_SPECS` order, the order prefetches start.
 */
export const LOCAL_TOOLS = toolNamesWhere((spec) => spec.localActivity === true);

/**
 * Whether this call runs as a local activity: a LOCAL_TOOLS call, when tools run on the
 * workflow's own task queue (a `toolTaskQueue` names the workspace's host, which a local activity
 * cannot reach).
 */
function runsLocally(config: ConversationConfig, name: string): boolean {
  if (!config.localReadOnlyTools || !LOCAL_TOOLS.has(name)) return false;
  return config.toolTaskQueue === undefined || config.toolTaskQueue === workflowInfo().taskQueue;
}

/** What Bash's sandbox (and a Stop hook's) needs from the conversation: the working directories besides cwd, and which settings files apply. */
export function sandboxInputs(host: Pick<QueryHost, 'config' | 'toolPermissions'>): {
  additionalDirectories?: string[];
  settingSources?: ConversationConfig['settingSources'];
} {
  const { config } = host;
  const others = (host.toolPermissions.context()?.workingDirectories ?? []).filter((directory) => directory !== config.cwd);
  return { ...(others.length > 0 && { additionalDirectories: others }), ...(config.settingSources && { settingSources: config.settingSources }) };
}

/**
 * Structured output (issue 23): checked once by a standard validator in a local activity, its
 * verdict recorded, so replay cannot decide differently. Asked before the offered-tools check,
 * hooks and the gate (the call touches nothing; its verdict is the default allow).
 */
function structuredOutputRoute(host: QueryHost): ToolRoute {
  return {
    name: 'structured output',
    takes: (block) => block.name === STRUCTURED_OUTPUT_TOOL_NAME && Boolean(host.config.jsonSchema),
    run: async ({ block, summary }) =>
      host.accounting.recordStructuredOutput(
        await localActivities({ ...LOCAL_TOOL_OPTIONS, summary }).checkStructuredOutput({ schema: host.config.jsonSchema!, input: block.input }),
      ),
  };
}

/** A foreground subagent: a child workflow (workflows/subagents.ts). After the parts' routes: a background agent is theirs. */
function subagentRoute(host: QueryHost): ToolRoute {
  return {
    name: 'subagents',
    takes: (block) => block.name === 'Agent',
    run: ({ block, entry }) => {
      entry.childWorkflowId = subagentWorkflowId(host.conversationId, block.id);
      return runSubagent(host, block);
    },
  };
}

/** One tool_use of the query, to its result. */
export function createRunTool(
  host: QueryHost,
  query: ActiveQuery,
  options: ActivityOptionsSet,
  chain: LocalChain,
): (block: ToolUseBlock, siblings: number) => Promise<{ content: string; isError: boolean }> {
  const { conversationId } = host;
  const routes = { early: [structuredOutputRoute(host)], checked: [...host.toolRoutes, subagentRoute(host)] };
  /** Calls that never ran (not offered, blocked by a hook, denied): no PostToolUseFailure for them (issue 33). */
  const notRun = new Set<string>();
  const run = async (block: ToolUseBlock, siblings: number): Promise<{ content: string; isError: boolean }> => {
    // The config as it is when the call runs: EnterWorktree / ExitWorktree move the working directory mid-query (issue 33).
    const config = host.config;
    const spec = getToolSpec(block.name);
    const summary = toolCallSummary(block.name, block.input);
    const entry: ToolInFlight = { toolUseId: block.id, name: block.name, summary, startedAt: Date.now() };
    host.toolsInFlight.set(block.id, entry);
    host.setPhase('running_tools');
    host.live?.publishTool({ type: 'tool_start', toolUseId: block.id, name: block.name, summary });
    let outcome: { content: string; isError: boolean } | undefined;
    try {
      // The final answer's check (structured output) comes before every other check: it touches nothing.
      const early = routeFor(routes.early, block);
      if (early) return (outcome = await early.run({ block, siblings, verdict: { behavior: 'allow' }, summary, options, query, entry }));
      // A tool this conversation does not offer (an Explore agent's Write) is not run, whatever the model asks.
      const offered = config.tools;
      if (offered && !offered.includes(block.name)) {
        notRun.add(block.id);
        outcome = { isError: true, content: `No such tool available: ${block.name}. Available tools: ${offered.join(', ')}` };
        return outcome;
      }
      // PreToolUse hooks (issue 22), before the permission check as in Claude Code: block, or run with their input and say.
      const hooked = host.hooks ? await host.hooks.preToolUse(block) : undefined;
      if (hooked?.type === 'block') {
        notRun.add(block.id);
        return (outcome = { isError: true, content: hooked.message });
      }
      if (hooked?.input) block = { ...block, input: hooked.input };
      const verdict = await host.toolPermissions.check(block, hooked?.permission);
      // Every return sets `outcome`: the live tool line shows it ("cancelled" only when none came; the stream is in memory).
      if (verdict.behavior === 'deny') {
        notRun.add(block.id);
        return (outcome = { isError: true, content: verdict.message });
      }
      // Background work, the task list, wakeups, cron jobs, MCP tools, a subagent: their own route (tool-routes.ts).
      const route = routeFor(routes.checked, block);
      if (route) return (outcome = await route.run({ block, siblings, verdict, summary, options, query, entry }));
      const local = runsLocally(config, block.name);
      // The model call's local phase ran this read already (workflows/query/prefetched-calls.ts): its result, recorded in that call's marker.
      const prefetched = local ? takePrefetched(query.prefetched, block, siblings) : undefined;
      if (prefetched) {
        // As below (a failed call's persisted file is not offered back, as the ToolError path does not).
        if (!prefetched.isError && prefetched.persistedPath) host.toolPermissions.allowReadOf(prefetched.persistedPath);
        query.usedPrefetchedRead(summary);
        return (outcome = { content: prefetched.content, isError: prefetched.isError });
      }
      const runner = local ? localActivities({ ...LOCAL_TOOL_OPTIONS, summary }) : activities({ ...options.tool, summary });
      const result = await runner.runTool({
        conversationId,
        toolUseId: block.id,
        name: block.name,
        input: block.input,
        cwd: config.cwd,
        // seed §2.7 layer 1: the tool's cap, or its share of the message's aggregate budget.
        maxResultSizeChars: toolResultBudget(spec?.maxResultSizeChars ?? 30_000, siblings),
        stream: host.live?.enabled ? { workflowId: conversationId } : undefined,
        // What the tool enforces where it acts (real paths, Read deny rules): issue 17 §4.
        ...(verdict.access && { access: verdict.access }),
        // Bash's sandbox: the other working directories are writable in it; the settings files it reads (issue 17 §10).
        ...sandboxInputs(host),
      });
      if (!local) chain.afterRegular();
      if (result.persistedPath) host.toolPermissions.allowReadOf(result.persistedPath);
      outcome = { content: result.content, isError: result.isError };
      return outcome;
    } catch (error) {
      if (isCancellation(error)) throw error;
      // A tool that ended in error (failed on purpose, to show in red in the UI): its result.
      const toolError = toolErrorResult(error);
      if (toolError) return (outcome = { content: toolError.content, isError: true });
      // Infrastructure failure after retries: the model still gets a result it can act on.
      outcome = { content: `Tool execution failed: ${failureMessage(error)}`, isError: true };
      return outcome;
    } finally {
      host.live?.publishTool({
        type: 'tool_end',
        toolUseId: block.id,
        name: block.name,
        isError: outcome?.isError ?? true,
        summary: outcome ? toolEndSummary(block.name, block.input, outcome.content, outcome.isError) : 'cancelled',
      });
      // A discarded early run may share its id with the final one: remove only our own entry.
      if (host.toolsInFlight.get(block.id) === entry) host.toolsInFlight.delete(block.id);
      // Tools started early finish while the model may still stream.
      if (host.toolsInFlight.size === 0 && query.requestId !== undefined) host.setPhase('calling_model');
    }
  };
  // PostToolUse hooks (issue 22), once after a call that succeeded; PostToolUseFailure (issue 33) after one that ran and failed.
  const hooks = host.hooks;
  return hooks
    ? async (block, siblings) => {
        const outcome = await run(block, siblings);
        return hooks.postToolUse(block, outcome, !notRun.delete(block.id));
      }
    : run;
}

/** The executor that runs one reply's tool calls (seed §2.4 StreamingToolExecutor), in the query's scope. */
export function createToolExecutor(
  config: ConversationConfig,
  query: ActiveQuery,
  runTool: ReturnType<typeof createRunTool>,
  uuid: () => string,
  routes: readonly ToolRoute[] = [],
  factsForReply?: ConstructorParameters<typeof StreamingToolExecutor>[0]['factsForReply'],
): StreamingToolExecutor {
  return new StreamingToolExecutor({
    uuid,
    runTool,
    isAborted: () => query.aborted,
    maxConcurrency: config.maxToolUseConcurrency,
    parentScope: query.scope,
    // A route that decides it (MCP: read-only annotated tools) says whether a call runs beside others; the rest by their spec.
    isConcurrencySafe: (block) => {
      const route = routes.find((candidate) => candidate.concurrencySafe !== undefined && candidate.takes(block));
      return route?.concurrencySafe ? route.concurrencySafe(block) : undefined;
    },
    // Issue 29: a Bash call runs beside others only on its parsed command's facts (the gate's check reuses them).
    ...(factsForReply && { factsForReply }),
  });
}
