/**
 * Subagent types (Claude Code's `.claude/agents`): the built-in general-purpose and Explore
 * agents, and custom ones from Markdown files with front matter (`name`, `description`, `tools`,
 * `model`; the body is the system prompt). Pure: the parser (activities/agent-files.ts) runs on
 * the worker (the files live there), the definitions travel in the session context to the workflow.
 */
export interface AgentDefinition {
  name: string;
  description: string;
  /** Tools the agent gets; undefined = every tool but Agent. */
  tools?: string[];
  /** Model for the agent; undefined = the parent's. */
  model?: string;
  /** Replaces the default system prompt; undefined = the default one. */
  systemPrompt?: string;
  /** Leave CLAUDE.md and the git status out of the agent's context (Explore: slimmer, seed §2.5). */
  omitProjectContext?: boolean;
  /** Where it came from: built in, or the file that defined it. */
  source: 'built-in' | string;
}

/**
 * Tools no subagent gets: subagents do not start (or message) subagents, and schedule nothing — a subagent ends
 * with its answer, so a wakeup or a session-only cron job of its own would never reach anyone. Nor do they move
 * their working directory (EnterWorktree / ExitWorktree move the session's): a subagent works where its parent
 * put it — its own worktree with `isolation: "worktree"` (issue 33).
 */
export const SUBAGENT_EXCLUDED_TOOLS: ReadonlySet<string> = new Set([
  'Agent',
  'SendMessage',
  'ScheduleWakeup',
  'CronCreate',
  'CronDelete',
  'CronList',
  'EnterWorktree',
  'ExitWorktree',
]);

export const BUILT_IN_AGENTS: readonly AgentDefinition[] = [
  {
    name: 'general-purpose',
    description: 'General-purpose agent for researching complex questions, searching for code, and executing multi-step tasks. Has every tool.',
    source: 'built-in',
  },
  {
    name: 'Explore',
    description:
      'Fast read-only agent for exploring codebases: finding files by pattern, searching code, reading files, answering questions about the code. Cannot change files.',
    tools: ['Read', 'Glob', 'Grep'],
    omitProjectContext: true,
    systemPrompt:
      'You are a file search specialist. You explore the codebase with Read, Glob and Grep and report what you found; you cannot create, change or delete files. ' +
      'Search broadly first, then read what matters. End with a concise report: the answer, and the files and lines that support it.',
    source: 'built-in',
  },
];

/** The agent named `type` among the built-in and custom ones (custom ones override built-ins of the same name). */
export function findAgent(type: string, custom: readonly AgentDefinition[] = []): AgentDefinition | undefined {
  return custom.find((agent) => agent.name === type) ?? BUILT_IN_AGENTS.find((agent) => agent.name === type);
}

/** Every agent type, custom ones first. */
export function availableAgents(custom: readonly AgentDefinition[] = []): AgentDefinition[] {
  return [...custom, ...BUILT_IN_AGENTS.filter((builtIn) => !custom.some((agent) => agent.name === builtIn.name))];
}

/** The tools an agent gets out of the ones offered (`offered` = the parent's, in order). */
export function agentTools(agent: AgentDefinition, offered: readonly string[]): string[] {
  const allowed = agent.tools ? new Set(agent.tools) : undefined;
  return offered.filter((name) => !SUBAGENT_EXCLUDED_TOOLS.has(name) && (!allowed || allowed.has(name)));
}
