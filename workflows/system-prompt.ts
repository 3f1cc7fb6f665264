/**
 * System prompt assembly (seed §2.5): a static, globally cacheable part, the dynamic boundary
 * (an empty block with cache_control), then the per-session part. CLAUDE.md and the date are not
 * here — they go to the first user message (`prependUserContext`) so this prompt stays cacheable.
 * Pure.
 */
import type { SessionContext, SystemPromptBlock } from '../common/activity-types';

const STATIC_SECTIONS = [
  `You are durable-agent, an interactive coding agent that helps users with software engineering tasks. ` +
    `Use the instructions below and the tools available to you to assist the user.`,
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

/** seed §2.5: the empty block that marks where the session-specific part begins. */
export const SYSTEM_PROMPT_DYNAMIC_BOUNDARY: SystemPromptBlock = {
  type: 'text',
  text: '',
  cache_control: { type: 'ephemeral' },
};

/** Layer 1: the default prompt, static part then dynamic part. */
export function getSystemPrompt(context: SessionContext | undefined, model: string): SystemPromptBlock[] {
  const env = [
    `# Environment`,
    `Working directory: ${context?.cwd ?? '(unknown)'}`,
    `Is directory a git repo: ${context?.isGitRepo ? 'Yes' : 'No'}`,
    `Platform: ${context?.platform ?? 'unknown'}`,
    `Shell: ${context?.shell ?? 'bash'}`,
    `Model: ${model}`,
  ].join('\n');
  const dynamic: SystemPromptBlock[] = [{ type: 'text', text: env }];
  if (context?.gitStatus) {
    // seed §2.5: appendSystemContext — git status at the start of the conversation
    dynamic.push({
      type: 'text',
      text: `gitStatus: This is the git status at the start of the conversation. Note that this status is a snapshot in time, and will not update during the conversation.\n${context.gitStatus}`,
    });
  }
  return [{ type: 'text', text: STATIC_SECTIONS.join('\n\n') }, SYSTEM_PROMPT_DYNAMIC_BOUNDARY, ...dynamic];
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
  const base = options.customSystemPrompt
    ? [{ type: 'text' as const, text: options.customSystemPrompt }]
    : options.defaultPrompt;
  return options.appendSystemPrompt ? [...base, { type: 'text', text: options.appendSystemPrompt }] : base;
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
