/**
 * Subagents as child workflows (Claude Code's Agent tool; the seed's `agentId` loops). An Agent
 * call starts a child conversation workflow — the same session and query loop, with the agent's
 * tools and prompt, one-shot — and its final text becomes the call's tool_result. The child's id
 * derives from the parent's id and the tool_use id, so a retry or a replay never starts a second
 * one; cancelling the call (abort, a Bash cascade) cancels the child.
 */
import {
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  ParentClosePolicy,
  executeChild,
  isCancellation,
  workflowInfo,
} from '@temporalio/workflow';
import type { SearchAttributePair } from '@temporalio/common';
import type { SessionContext } from '../common/activity-types';
import { agentTools, availableAgents, findAgent } from '../common/agents';
import type { ConversationConfig, ConversationConfigInput } from '../common/config';
import type { HookSettings } from '../common/hooks';
import type { ToolUseBlock, Usage } from '../common/messages';
import type { ModelUsage } from '../common/result';
import { MODEL_SEARCH_ATTRIBUTE, STATUS_SEARCH_ATTRIBUTE, SEARCH_ATTRIBUTES, startSearchAttributes } from '../common/search-attributes';
import { agentInputSchema, TOOL_NAMES } from '../common/tool-specs';
import type { ConversationInput, ConversationSummary } from './definitions';
import type { ToolOutcome } from './tool-orchestration';
import { sqlSafe, uiPatched } from './visibility';

/** What the subagent runner needs from the parent session. */
export interface SubagentHost {
  readonly conversationId: string;
  readonly config: ConversationConfig;
  readonly sessionContext: SessionContext | undefined;
  /** The parent's hooks: the child runs the same tool hooks (issue 22). */
  readonly hooks?: { readonly inheritable: HookSettings | undefined };
  /** The child's usage and cost count in the parent's totals. */
  recordChildUsage(usage: Usage, costUsd: number, modelUsage?: Record<string, ModelUsage>): void;
  /** Allow rules added during the session (`approve --always`): the child inherits them. */
  sessionAllowRules?(): string[];
}

/** The child workflow id of an Agent call: derived, so retries and replays find the same child. */
export function subagentWorkflowId(parentId: string, toolUseId: string): string {
  return `${parentId}--agent-${toolUseId}`;
}

/** Runs one Agent call as a child workflow; its failures are tool results, never the parent's. */
export async function runSubagent(host: SubagentHost, block: ToolUseBlock): Promise<ToolOutcome> {
  const parsed = agentInputSchema.safeParse(block.input);
  if (!parsed.success) {
    return { isError: true, content: `Invalid Agent input: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`).join('; ')}` };
  }
  const input = parsed.data;
  const custom = host.sessionContext?.agents ?? [];
  const agent = findAgent(input.subagent_type, custom);
  if (!agent) {
    const known = availableAgents(custom).map((candidate) => candidate.name).join(', ');
    return { isError: true, content: `Agent type '${input.subagent_type}' not found. Available agents: ${known}` };
  }
  const offered = host.config.tools ?? [...TOOL_NAMES];
  const config: ConversationConfigInput = {
    ...host.config,
    model: agent.model ?? host.config.model,
    tools: agentTools(agent, offered),
    agentSystemPrompt: agent.systemPrompt,
    oneShot: true,
    // seed §2.6: subagents never self-continue on a token budget.
    tokenBudget: undefined,
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
  const workflowId = subagentWorkflowId(host.conversationId, block.id);
  const useSearchAttributes = workflowInfo().typedSearchAttributes.get(STATUS_SEARCH_ATTRIBUTE) !== undefined;
  try {
    const summary = await executeChild<(input: ConversationInput) => Promise<ConversationSummary>>('conversationWorkflow', {
      workflowId,
      args: [
        {
          config,
          initialPrompt: input.prompt,
          subagent: { parentId: host.conversationId, toolUseId: block.id, agentType: agent.name, description: input.description, sessionContext: inherited, ...(host.hooks?.inheritable && { hookSettings: host.hooks.inheritable }) },
        },
      ],
      staticSummary: `Agent (${agent.name}): ${input.description}`,
      // Abort waits until the child has stopped; a parent that goes away takes its children along.
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      typedSearchAttributes: useSearchAttributes ? childSearchAttributes(String(config.model), input.prompt, host.config.cwd) : undefined,
    });
    host.recordChildUsage(summary.usage, summary.totalCostUsd, summary.lastResult?.modelUsage);
    const result = summary.lastResult;
    if (!result) return { isError: true, content: `The ${agent.name} agent ended without an answer.` };
    if (result.is_error) return { isError: true, content: `The ${agent.name} agent failed (${result.terminal_reason}): ${result.result}` };
    return { isError: false, content: result.result.trim() === '' ? `The ${agent.name} agent finished without a final message.` : result.result };
  } catch (error) {
    if (isCancellation(error)) throw error;
    const cause = error instanceof ChildWorkflowFailure && error.cause ? error.cause.message : error instanceof Error ? error.message : String(error);
    return { isError: true, content: `The ${agent.name} agent could not run: ${cause}` };
  }
}

/**
 * A child's start attributes: those its parent has (so only registered ones), or in a history
 * from before the UI changes, the two it was started with then.
 */
function childSearchAttributes(model: string, prompt: string, cwd: string): SearchAttributePair[] {
  if (!uiPatched()) {
    return [
      { key: STATUS_SEARCH_ATTRIBUTE, value: 'calling_model' },
      { key: MODEL_SEARCH_ATTRIBUTE, value: model },
    ];
  }
  const parent = workflowInfo().typedSearchAttributes;
  const registered = new Set(SEARCH_ATTRIBUTES.filter((key) => parent.get(key) !== undefined).map((key) => key.name));
  return sqlSafe(startSearchAttributes({ status: 'running', model, firstPrompt: prompt, workspace: cwd, now: new Date(Date.now()) }, registered));
}
