/**
 * The options of the CLI's commands, with their help lines (issue 32, item 3): client/cli.ts
 * declares them to commander before it knows which command runs, so this module imports nothing.
 * Values reach a command keyed by the long name (`values['max-turns']`), as the user spells it.
 */

/** One option: commander's flags (`--cwd <dir>`), its help line; `multiple`: repeatable, values collected. */
export interface OptionDefinition {
  flags: string;
  description: string;
  multiple?: boolean;
  /** Accepted but not in the help (another spelling of a listed option). */
  hidden?: boolean;
}

/** The long name of an option (`--max-turns <n>` → `max-turns`): the key of its value. */
export function optionName(option: OptionDefinition): string {
  return /--([A-Za-z0-9-]+)/.exec(option.flags)![1];
}

const option = (flags: string, description: string, extra: Partial<OptionDefinition> = {}): OptionDefinition => ({ flags, description, ...extra });

export const JSON_OPTION = option('--json', 'print JSON (for scripts)');

/** Who may run which tool (ask, start, chat); camelCase spellings as Claude Code accepts them too. */
export const PERMISSION_OPTIONS: OptionDefinition[] = [
  option('--permission-mode <mode>', "default | acceptEdits | plan | bypassPermissions | dontAsk (default: the settings' defaultMode, else default)"),
  option('--allowed-tools <rules>', 'allow rules, comma or space separated: "Bash(npm test:*),Edit(src/**)" (repeatable)', { multiple: true }),
  option('--allowedTools <rules>', 'as --allowed-tools', { multiple: true, hidden: true }),
  option('--disallowed-tools <rules>', 'deny rules, same syntax (repeatable)', { multiple: true }),
  option('--disallowedTools <rules>', 'as --disallowed-tools', { multiple: true, hidden: true }),
  option('--add-dir <dir>', 'another directory the file tools may use (repeatable)', { multiple: true }),
  option('--setting-sources <list>', 'which settings apply: user,project,local (default all three)'),
  option('--dangerously-skip-permissions', "as --permission-mode bypassPermissions (Claude Code's flag)"),
];

/** The conversation options of ask, start and chat. */
export const CONFIG_OPTIONS: OptionDefinition[] = [
  option('--cwd <dir>', 'workspace directory on the worker host (default: the directory you ran the command from)'),
  option('--model <name>', 'model or alias: opus, sonnet, haiku, fable, [1m] suffix (default: claude-opus-4-8)'),
  option('--fallback-model <name>', 'model to switch to when the primary is overloaded (default: claude-sonnet-4-6)'),
  option('--effort <level>', 'low, medium, high (default) or max: how hard the model thinks, on models that take it'),
  option('--thinking <on|off>', 'extended thinking (default on where the model offers it; MAX_THINKING_TOKENS=0 turns it off)'),
  option('--max-turns <n>', 'stop after n turns (default 100)'),
  option(
    '--web-search [settings]',
    'offer the API\'s web search ($10 per 1,000 searches); settings as JSON: {"maxUses":8,"allowedDomains":[...]} or {"blockedDomains":[...]}',
  ),
  option(
    '--workspace-queue <name>',
    'run tools, hooks and session context on the workers of this task queue, on the host that holds --cwd (default: DURABLE_AGENT_WORKSPACE_TASK_QUEUE, else the main queue)',
  ),
  option('--system-prompt <text>', 'replaces the default system prompt'),
  option('--append-system-prompt <text>', 'appended to the system prompt'),
  // Issue 22: MCP servers beyond .mcp.json and ~/.claude.json (Claude Code's flags).
  option('--mcp-config <file|json>', 'MCP servers from a file or inline JSON ({"mcpServers": {...}}), besides .mcp.json and ~/.claude.json (repeatable)', {
    multiple: true,
  }),
  option('--strict-mcp-config', 'only the servers of --mcp-config'),
  // Issue 33: Claude Code's --plugin-dir.
  option(
    '--plugin-dir <path>',
    'load a Claude Code plugin from this folder: its commands (/plugin:command), agents, hooks, MCP servers and skills (repeatable)',
    {
      multiple: true,
    },
  ),
  // Issue 33: Claude Code's --worktree.
  option(
    '-w, --worktree [name]',
    'start in a new git worktree of the workspace: .claude/worktrees/<name> on branch worktree-<name> (a name is made when none is given)',
  ),
  // Issue 33: Claude Code's Setup hook triggers.
  option('--init', 'run the Setup hooks (trigger "init") before the session starts'),
  option('--maintenance', 'run the Setup hooks (trigger "maintenance") before the session starts'),
  // Issue 29: trust the workspace's own settings (hooks, MCP servers, allow rules), recorded as Claude Code's trust dialog does.
  option(
    '--trust',
    "trust this folder: its own hooks, MCP servers, allow rules and directories apply (recorded in ~/.claude.json, as Claude Code's trust dialog; untrusted, only its deny and ask rules do)",
  ),
  ...PERMISSION_OPTIONS,
];

/** Options of `ask` and `start` that limit a conversation's queries. */
export const SESSION_LIMIT_OPTIONS: OptionDefinition[] = [
  option('--max-budget-usd <n>', 'stop a query once the conversation has cost this many dollars'),
  option('--json-schema <schema>', "end each query with output matching this JSON schema (JSON text or @file), in the result's structured_output"),
];

/** Options of `ask` only. */
export const ASK_OPTIONS: OptionDefinition[] = [
  option(
    '--output-format <format>',
    'text (default), json (the result message, one line) or stream-json (one JSON message per line as they happen; needs --verbose)',
  ),
  option('--verbose', 'required by --output-format stream-json'),
];

/** Claude Code's -c / --continue, -r / --resume <id> and --fork-session (ask and chat). */
export const CONTINUE_OPTIONS: OptionDefinition[] = [
  option('--continue', "carry on from this workspace's most recent conversation (-c)"),
  option('--resume <id>', 'carry on from that conversation (-r): rejoined while open, continued by a new one once ended'),
  option('--fork-session', 'with --continue or --resume: a new conversation forked from it now, in a copy of its workspace'),
];
