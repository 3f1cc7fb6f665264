/**
 * Subagents as child workflows (Claude Code's Agent tool; the seed's `agentId` loops). An Agent
 * call starts a child conversation workflow — the same session and query loop, with the agent's
 * tools, prompt and model, one-shot — and its final text becomes the call's tool_result. The
 * child's id derives from the parent's id and the tool_use id, so a retry or a replay never starts
 * a second one; cancelling the call (abort, a Bash cascade) cancels the child. A background call
 * (`run_in_background`) is prepared here too and started by workflows/background/agents.ts.
 */
import { ChildWorkflowCancellationType, ChildWorkflowFailure, ParentClosePolicy, executeChild, isCancellation, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributePair } from '@temporalio/common';
import type { SessionContext } from '../common/activity-types';
import { agentTools, availableAgents, findAgent } from '../common/agents';
import type { ConversationConfig, ConversationConfigInput } from '../common/config';
import type { HookSettings } from '../common/hooks';
import type { ToolUseBlock, Usage } from '../common/messages';
import type { ModelUsage } from '../common/result';
import { STATUS_SEARCH_ATTRIBUTE, SEARCH_ATTRIBUTES, sqlSafeSearchAttributes, startSearchAttributes } from '../common/search-attributes';
import { type AgentInput, agentInputSchema, TOOL_NAMES } from '../common/tool-specs';
import { WEB_SEARCH_TOOL_NAME } from '../common/web-search';
import { resolveModelName } from '../common/models';
import { type Worktree, agentWorktreeName, worktreeClosedText } from '../common/worktrees';

import type { ConversationInput, ConversationSummary } from './definitions';
import type { ToolOutcome } from './query/tool-orchestration';
import { type WorktreeHooks, makeWorktree, removeWorktree } from './worktrees';

/** What the subagent runner needs from the parent session. */
export interface SubagentHost {
  readonly conversationId: string;
  readonly config: ConversationConfig;
  readonly sessionContext: SessionContext | undefined;
  /** The parent's hooks: the child runs the same tool hooks (issue 22); an isolated child's worktree is made and removed with them (issue 33). */
  readonly hooks?: { readonly inheritable: HookSettings | undefined } & Partial<WorktreeHooks>;
  /** The parent's MCP servers: a child gets the tools its agent type allows (issue 22). */
  readonly mcp?: SubagentMcp;
  /** The child's usage and cost count in the parent's totals. */
  recordChildUsage(usage: Usage, costUsd: number, modelUsage?: Record<string, ModelUsage>): void;
  /** Allow rules added during the session (`approve --always`): the child inherits them. */
  sessionAllowRules?(): string[];
}

/** What a child takes of its parent's MCP servers (workflows/extensions/mcp.ts). */
export interface SubagentMcp {
  readonly offeredToolNames: readonly string[];
  inheritable(toolNames: readonly string[]): import('./extensions/mcp-state').McpCarried | undefined;
}

/** The child workflow id of an Agent call: derived, so retries and replays find the same child. */
export function subagentWorkflowId(parentId: string, toolUseId: string): string {
  return `${parentId}--agent-${toolUseId}`;
}

/** An Agent call made ready to start: the child's id, input and start options (foreground or background). */
export interface PreparedSubagent {
  readonly input: AgentInput;
  readonly agentName: string;
  readonly model: string;
  readonly workflowId: string;
  readonly childInput: ConversationInput;
  readonly staticSummary: string;
  readonly typedSearchAttributes: SearchAttributePair[] | undefined;
  /** `isolation: "worktree"`: the git worktree the child works in (its cwd), made before it starts (`isolateSubagent`). */
  readonly worktree?: Worktree;
}

/**
 * The checks and the child's input of an Agent call; a problem is a tool result the model can act
 * on (an unknown agent type or model). `background`: the child answers its parent by signal and
 * then waits for SendMessage instead of ending (workflows/background/agents.ts).
 */
export function prepareSubagent(host: SubagentHost, block: ToolUseBlock, background?: { agentId: string }): PreparedSubagent | ToolOutcome {
  const parsed = agentInputSchema.safeParse(block.input);
  if (!parsed.success) {
    return {
      isError: true,
      content: `Invalid Agent input: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`).join('; ')}`,
    };
  }
  const input = parsed.data;
  const custom = host.sessionContext?.agents ?? [];
  const agent = findAgent(input.subagent_type, custom);
  if (!agent) {
    const known = availableAgents(custom)
      .map((candidate) => candidate.name)
      .join(', ');
    return { isError: true, content: `Agent type '${input.subagent_type}' not found. Available agents: ${known}` };
  }
  // The call's `model` (an alias or an id) wins over the agent type's, which wins over the conversation's.
  let model = agent.model ?? host.config.model;
  if (input.model !== undefined) {
    const resolved = resolveModelName(input.model);
    if ('problem' in resolved) return { isError: true, content: `Agent model: ${resolved.problem}` };
    model = resolved.model;
  }
  // Issue 33: a conversation that offers WebSearch offers it to its agents too (unless their `tools` leave it out).
  const offered = host.config.tools ?? [...TOOL_NAMES, ...(host.config.webSearch ? [WEB_SEARCH_TOOL_NAME] : [])];
  // Issue 22: the parent's MCP tools join what the agent type may get (all for general-purpose; the
  // listed `mcp__…` names for an agent with a `tools` list).
  const parentMcp = host.mcp?.offeredToolNames ?? [];
  const withMcp = parentMcp.length > 0;
  const tools = agentTools(agent, withMcp ? [...offered, ...parentMcp.filter((name) => !offered.includes(name))] : offered);
  const mcp = withMcp ? host.mcp?.inheritable(tools) : undefined;
  const config: ConversationConfigInput = {
    ...host.config,
    model,
    tools,
    agentSystemPrompt: agent.systemPrompt,
    // A background agent stays to take SendMessage; its parent stops it when the conversation ends.
    oneShot: background === undefined,
    // seed §2.6: subagents never self-continue on a token budget.
    tokenBudget: undefined,
    // The parent's working directory (a worktree it entered included) is the child's; it makes none of its own at start.
    worktree: undefined,
    stopHooks: [],
    // The parent's structured output and budget are the parent's: it checks its own total, children's costs included.
    jsonSchema: undefined,
    maxBudgetUsd: undefined,
    // The child inherits the mode and rules (its settings come with the inherited session context).
    permissions: host.config.permissions && { ...host.config.permissions, allow: [...host.config.permissions.allow, ...(host.sessionAllowRules?.() ?? [])] },
  };
  // Explore and the like get a slimmer context: no CLAUDE.md, no git status (seed §2.5). No
  // subagent runs the parent's Stop hooks.
  const inherited: SessionContext | undefined = host.sessionContext && {
    ...host.sessionContext,
    stopHooks: [],
    ...(agent.omitProjectContext ? { claudeMd: undefined, gitStatus: undefined } : {}),
  };
  const useSearchAttributes = workflowInfo().typedSearchAttributes.get(STATUS_SEARCH_ATTRIBUTE) !== undefined;
  return {
    input,
    agentName: agent.name,
    model: String(model),
    workflowId: subagentWorkflowId(host.conversationId, block.id),
    childInput: {
      config,
      initialPrompt: input.prompt,
      subagent: {
        parentId: host.conversationId,
        toolUseId: block.id,
        agentType: agent.name,
        description: input.description,
        sessionContext: inherited,
        ...(host.hooks?.inheritable && { hookSettings: host.hooks.inheritable }),
        ...(mcp && { mcp }),
        ...(background && { background }),
      },
    },
    staticSummary: `Agent (${agent.name}): ${input.description}${background ? ' [background]' : ''}`,
    typedSearchAttributes: useSearchAttributes ? childSearchAttributes(String(model), input.prompt, host.config.cwd) : undefined,
  };
}

/** Runs one Agent call as a child workflow; its failures are tool results, never the parent's. */
export async function runSubagent(host: SubagentHost, block: ToolUseBlock): Promise<ToolOutcome> {
  const prepared = prepareSubagent(host, block);
  if (!('childInput' in prepared)) return prepared;
  const isolated = await isolateSubagent(host, prepared);
  if (!('childInput' in isolated)) return isolated;
  return executeSubagent(host, isolated);
}

/**
 * `isolation: "worktree"` (issue 33): the child's own git worktree, made before it starts — named
 * after the call (`agent-<tool_use id>`), so a retry or replay finds the one made first — and the
 * child's working directory. Without isolation the call is as prepared; a workspace that is not a
 * git repository is a result the model can act on.
 */
export async function isolateSubagent(host: SubagentHost, prepared: PreparedSubagent, worktreeName?: string): Promise<PreparedSubagent | ToolOutcome> {
  if (prepared.input.isolation !== 'worktree' && worktreeName === undefined) return prepared;
  // SendMessage continuing an isolated agent names its worktree: the one kept (found again), or a fresh one of that name.
  const name = worktreeName ?? agentWorktreeName(prepared.childInput.subagent!.toolUseId);
  // WorktreeCreate hooks (issue 33 item 5), when configured, make it instead of git.
  const made = await makeWorktree(worktreeHooksOf(host), host.config, name);
  if ('problem' in made) return { isError: true, content: `The ${prepared.agentName} agent could not be isolated: ${made.problem}` };
  const { worktree } = made;
  const subagent = prepared.childInput.subagent!;
  return {
    ...prepared,
    worktree,
    childInput: {
      ...prepared.childInput,
      config: { ...prepared.childInput.config, cwd: worktree.path },
      subagent: { ...subagent, ...(subagent.sessionContext && { sessionContext: { ...subagent.sessionContext, cwd: worktree.path } }) },
    },
  };
}

/**
 * An isolated agent's end: its worktree kept with its changes (path and branch told), removed
 * without (Claude Code's). Not cancelled with the call: an abort leaves a tidy workspace too.
 */
export async function closeSubagentWorktree(host: SubagentHost, worktree: Worktree): Promise<string> {
  // WorktreeRemove hooks (issue 33 item 5) run when it is removed (workflows/worktrees.ts).
  return worktreeClosedText(await removeWorktree(worktreeHooksOf(host), host.config, worktree));
}

function worktreeHooksOf(host: SubagentHost): WorktreeHooks | undefined {
  const hooks = host.hooks;
  return hooks?.worktreeHooks ? { worktreeHooks: (event) => hooks.worktreeHooks!(event) } : undefined;
}

/** Runs a prepared child and awaits its answer (an Agent call, or SendMessage continuing a finished agent). */
export async function executeSubagent(host: SubagentHost, prepared: PreparedSubagent): Promise<ToolOutcome> {
  const outcome = await executeChildAgent(host, prepared);
  if (!prepared.worktree) return outcome;
  return { ...outcome, content: `${outcome.content}\n\n${await closeSubagentWorktree(host, prepared.worktree)}` };
}

async function executeChildAgent(host: SubagentHost, prepared: PreparedSubagent): Promise<ToolOutcome> {
  const agentName = prepared.agentName;
  try {
    const summary = await executeChild<(input: ConversationInput) => Promise<ConversationSummary>>('conversationWorkflow', {
      workflowId: prepared.workflowId,
      args: [prepared.childInput],
      staticSummary: prepared.staticSummary,
      // Abort waits until the child has stopped; a parent that goes away takes its children along.
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      typedSearchAttributes: prepared.typedSearchAttributes,
    });
    host.recordChildUsage(summary.usage, summary.totalCostUsd, summary.lastResult?.modelUsage);
    const result = summary.lastResult;
    if (!result) return { isError: true, content: `The ${agentName} agent ended without an answer.` };
    if (result.is_error) return { isError: true, content: `The ${agentName} agent failed (${result.terminal_reason}): ${result.result}` };
    return { isError: false, content: result.result.trim() === '' ? `The ${agentName} agent finished without a final message.` : result.result };
  } catch (error) {
    if (isCancellation(error)) throw error;
    return { isError: true, content: `The ${agentName} agent could not run: ${childFailureMessage(error)}` };
  }
}

/** Why a child workflow failed, in one line. */
export function childFailureMessage(error: unknown): string {
  return error instanceof ChildWorkflowFailure && error.cause ? error.cause.message : error instanceof Error ? error.message : String(error);
}

/** A child's start attributes: those its parent has (so only registered ones). */
function childSearchAttributes(model: string, prompt: string, cwd: string): SearchAttributePair[] {
  const parent = workflowInfo().typedSearchAttributes;
  const registered = new Set(SEARCH_ATTRIBUTES.filter((key) => parent.get(key) !== undefined).map((key) => key.name));
  return sqlSafeSearchAttributes(
    startSearchAttributes({ status: 'running', model, firstPrompt: prompt, workspace: cwd, now: new Date(Date.now()) }, registered),
  );
}
