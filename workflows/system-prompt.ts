/**
 * System prompt assembly (seed §2.5): a static, globally cacheable part, the dynamic boundary,
 * then the per-session part. CLAUDE.md and the date are not here — they go to the first user
 * message (`prependUserContext`) so this prompt stays cacheable. Pure.
 *
 * The boundary is a marker between sections, never a block on the wire: the Messages API rejects
 * empty text blocks (and cache_control on them). `toSystemBlocks` splits at the marker and puts
 * the cache breakpoint on the last non-empty block of the static part, as Claude Code sends it
 * (an identity block and the static instructions, each non-empty and cached).
 */
import type { SessionContext, SystemPromptBlock } from '../common/activity-types';
import { availableAgents } from '../common/agents';
import { skillListing } from '../common/skills';

/** The one-line identity block (its own cached block, as Claude Code sends it). */
const IDENTITY =
  `You are durable-agent, an interactive coding agent that helps users with software engineering tasks. ` +
  `Use the instructions below and the tools available to you to assist the user.`;

const STATIC_SECTIONS = [
  `# Doing tasks
- Read the relevant code before changing it; prefer editing existing files to creating new ones.
- Keep changes focused on what was asked. Verify your work (run the tests or the command) when you can.
- When a tool fails, read its error and adapt rather than repeating the same call.`,
  `# Using your tools
- Use Read, Glob and Grep to explore; Edit and Write to change files; Bash for commands.
- Independent read-only calls can be made in one response; they run in parallel.
- File paths may be absolute or relative to the working directory.
- A tool result that says a command "may have partly run" means the worker restarted mid-command:
  check the workspace state before running it again.`,
  `# Tone and style
Be concise and direct. Report what you did and what you found; do not pad the answer.`,
];

/**
 * seed §2.5: marks where the session-specific part begins. Everything before it may be cached
 * across sessions; it is a section marker, not a block (see `toSystemBlocks`).
 */
export const SYSTEM_PROMPT_DYNAMIC_BOUNDARY = '__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__';

/** The Messages API accepts at most 4 cache breakpoints per request; the system prompt uses these. */
export const SYSTEM_PROMPT_CACHE_BREAKPOINTS = 2;

/**
 * Turns prompt sections into API blocks: empty and whitespace-only sections are dropped (the API
 * rejects empty text blocks), the boundary marker disappears, and the last block before it gets
 * `cache_control` — or the last block of all when there is no marker (a custom prompt, which is
 * stable for the whole conversation). Sections listed in `separateBlocks` keep their own cached
 * block (the identity line); the rest of the static part is one block.
 */
export function toSystemBlocks(sections: readonly string[], separateBlocks: ReadonlySet<string> = new Set()): SystemPromptBlock[] {
  const boundary = sections.indexOf(SYSTEM_PROMPT_DYNAMIC_BOUNDARY);
  const isText = (section: string) => section !== SYSTEM_PROMPT_DYNAMIC_BOUNDARY && section.trim() !== '';
  const staticPart = (boundary >= 0 ? sections.slice(0, boundary) : sections).filter(isText);
  const dynamicPart = boundary >= 0 ? sections.slice(boundary + 1).filter(isText) : [];
  const staticBlocks: SystemPromptBlock[] = [];
  let joined: string[] = [];
  const flush = () => {
    if (joined.length > 0) staticBlocks.push({ type: 'text', text: joined.join('\n\n') });
    joined = [];
  };
  for (const section of staticPart) {
    if (separateBlocks.has(section)) {
      flush();
      staticBlocks.push({ type: 'text', text: section, cache_control: { type: 'ephemeral' } });
    } else {
      joined.push(section);
    }
  }
  flush();
  const last = staticBlocks[staticBlocks.length - 1];
  if (last) last.cache_control = { type: 'ephemeral' };
  return [...staticBlocks, ...dynamicPart.map((text): SystemPromptBlock => ({ type: 'text', text }))];
}

/**
 * Layer 1: the default prompt, static part then dynamic part. A subagent's own prompt (seed §2.5
 * Layer 2, "agent prompt") takes the static part's place; the environment stays. With the Agent
 * tool offered, the dynamic part lists the agent types; with the Skill tool, the skills.
 */
export function getSystemPrompt(
  context: SessionContext | undefined,
  model: string,
  options: { agentPrompt?: string; tools?: readonly string[] } = {},
): SystemPromptBlock[] {
  const env = [
    `# Environment`,
    `Working directory: ${context?.cwd ?? '(unknown)'}`,
    `Is directory a git repo: ${context?.isGitRepo ? 'Yes' : 'No'}`,
    `Platform: ${context?.platform ?? 'unknown'}`,
    `Shell: ${context?.shell ?? 'bash'}`,
    `Model: ${model}`,
  ].join('\n');
  const dynamic = [env];
  if (context?.gitStatus?.trim()) {
    // seed §2.5: appendSystemContext — git status at the start of the conversation
    dynamic.push(
      `gitStatus: This is the git status at the start of the conversation. Note that this status is a snapshot in time, and will not update during the conversation.\n${context.gitStatus}`,
    );
  }
  if (options.tools?.includes('Agent')) {
    dynamic.push(
      [
        '# Subagents',
        'Agent types for the Agent tool (subagent_type), with the tools each has:',
        ...availableAgents(context?.agents).map((agent) => `- ${agent.name}: ${agent.description} (Tools: ${agent.tools?.join(', ') ?? 'all but Agent'})`),
      ].join('\n'),
    );
  }
  // Issue 33 §3: the skills' names and descriptions up front; a body is loaded when a skill is invoked.
  const skills = options.tools?.includes('Skill') ? skillListing(context?.skills ?? []) : undefined;
  if (skills) dynamic.push(skills);
  const staticSections = options.agentPrompt?.trim() ? [options.agentPrompt] : [IDENTITY, ...STATIC_SECTIONS];
  return toSystemBlocks([...staticSections, SYSTEM_PROMPT_DYNAMIC_BOUNDARY, ...dynamic], new Set([IDENTITY]));
}

/**
 * Layer 2 (buildEffectiveSystemPrompt): a custom prompt replaces the default; an appended prompt
 * is added to whichever is in effect.
 */
export function buildEffectiveSystemPrompt(options: {
  defaultPrompt: SystemPromptBlock[];
  customSystemPrompt?: string;
  appendSystemPrompt?: string;
}): SystemPromptBlock[] {
  // Empty strings count as absent: the API rejects empty text blocks.
  const base = options.customSystemPrompt?.trim() ? toSystemBlocks([options.customSystemPrompt]) : options.defaultPrompt;
  return options.appendSystemPrompt?.trim() ? [...base, { type: 'text', text: options.appendSystemPrompt }] : base;
}

/** The user-side context (seed §2.5 getUserContext): CLAUDE.md and today's date. */
export function buildUserContext(context: SessionContext | undefined): string | undefined {
  if (!context) return undefined;
  const parts: string[] = [];
  if (context.claudeMd) {
    parts.push(
      `As you answer the user's questions, you can use the following context:\n# claudeMd\nCodebase and user instructions are shown below. Be sure to adhere to these instructions.\n\n${context.claudeMd}`,
    );
  }
  parts.push(`# currentDate\n${context.currentDate}`);
  return parts.join('\n\n');
}
