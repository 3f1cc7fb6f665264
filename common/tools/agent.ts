/**
 * Agent tool spec (Claude Code's Agent, called Task in earlier versions): runs a subagent — the
 * same query loop with its own transcript, tools and prompt, as a child workflow — and returns
 * its final text. Pure; the workflow bundle imports it.
 */
import { z } from 'zod';
import { defineTool } from '../tool-spec';

export const agentInputSchema = z.strictObject({
  description: z.string().min(1).describe('A short (3-5 word) description of the task'),
  prompt: z.string().min(1).describe('The task for the agent to perform'),
  subagent_type: z.string().min(1).describe('The type of specialized agent to use for this task'),
  model: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Optional model for this agent: an alias ("sonnet", "opus", "haiku") or a model id. Without it, the agent type\'s model, else this conversation\'s. Prefer haiku for quick, simple tasks.',
    ),
  run_in_background: z
    .boolean()
    .optional()
    .describe(
      "Run the agent in the background: the call returns at once with the agent's id, and you are notified when it finishes. Continue it later with SendMessage.",
    ),
  isolation: z
    .enum(['worktree'])
    .optional()
    .describe('Isolation mode. "worktree" creates a temporary git worktree so that the agent works on an isolated copy of the repository.'),
});

export type AgentInput = z.infer<typeof agentInputSchema>;

export const agentToolSpec = defineTool({
  name: 'Agent',
  permission: 'none',
  description: `Launch a new agent to handle a complex, multi-step task on its own. The agent runs with its own conversation and tools and returns one final message, which is all you see of its work.

The agent types available are listed in the system prompt (# Subagents), with the tools each has.

When to use it:
- Open-ended searches across many files where you are not sure of the right match in the first tries (use the Explore agent).
- Independent pieces of work that can proceed in parallel: launch several agents in one message (several Agent tool uses in the same response) and they run concurrently.

Usage notes:
- The agent does not see this conversation: the prompt must be complete and say exactly what to do and what to report back.
- The agent's final message is not shown to the user: summarise what it found for them.
- Trust the agent's findings, but verify changes it says it made when it matters.
- With run_in_background: true the call returns at once with the agent's id; its result arrives later as a <task-notification> (you do not need to poll). TaskOutput reads it, TaskStop stops it, and SendMessage gives a background agent a follow-up with its context intact.
- With isolation: "worktree" the agent works in its own git worktree (\`.claude/worktrees/agent-<id>\` on a new branch \`worktree-agent-<id>\` cut from HEAD), so agents running side by side do not edit one checkout. When the agent ends, a worktree without changes is removed; one with changes is kept and its path and branch are in the result.`,
  inputSchema: agentInputSchema,
  // A subagent may change the workspace: never started while the model still streams.
  isReadOnly: () => false,
  // Several agents in one message run side by side, as in Claude Code.
  isConcurrencySafe: () => true,
  maxResultSizeChars: 100_000,
  summarize: (input) => `Agent (${input.subagent_type}): ${input.description}`,
});
