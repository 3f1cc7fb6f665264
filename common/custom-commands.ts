/**
 * Custom slash commands in Claude Code's format: Markdown files under `.claude/commands/`
 * (workspace) and `~/.claude/commands/` (user). The file name is the command (`review.md` →
 * `/review`), a subdirectory namespaces it (`frontend/test.md` → `/frontend:test`), and optional
 * `---` front matter sets `description`, `argument-hint`, `model` and `allowed-tools`. The body is
 * the prompt; `$ARGUMENTS` and `$1`…`$9` take what follows the command. Pure: the session-context
 * activity reads and parses the files (activities/custom-commands.ts), the workflow expands them.
 */
export interface CustomCommand {
  /** What follows the slash: `review`, or `frontend:test` for a file in a subdirectory. */
  name: string;
  /** From the front matter, else the body's first non-empty line. */
  description: string;
  argumentHint?: string;
  /** The model the command's query runs on (`inherit` or absent: the conversation's). */
  model?: string;
  /** Tools the command may use without asking during its query (allow rules of the query: workflows/permissions/gate.ts `setQueryAllowRules`). */
  allowedTools?: string[];
  /** The prompt template. */
  body: string;
  /** `project` (the workspace's .claude/commands), `user` (~/.claude/commands) or `plugin` (a plugin's commands/, named `plugin:command`). */
  scope: 'project' | 'user' | 'plugin';
  /** The file it came from. */
  source: string;
}

/** Names a slash command can have (Claude Code's: letters, digits, `_`, `-`, `.`, and `:` between namespaces). */
export const COMMAND_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*(?::[A-Za-z0-9][A-Za-z0-9_.-]*)*$/;

/**
 * The command name of a file at `relativePath` under a commands directory (`a/b/c.md` →
 * `a:b:c`), or undefined when it is not a command file.
 */
export function commandNameOf(relativePath: string): string | undefined {
  const parts = relativePath.split(/[\\/]/).filter(Boolean);
  const file = parts.pop();
  if (!file || !file.endsWith('.md')) return undefined;
  const name = [...parts, file.slice(0, -'.md'.length)].join(':');
  return COMMAND_NAME_PATTERN.test(name) ? name : undefined;
}
