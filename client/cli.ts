/**
 * `durable-agent` — the command line, on commander (Claude Code's choice; issue 32, item 3): each
 * command's arguments, options and help are declared here, commander parses them (per-command
 * `--help`, "did you mean", the missing argument named) and the command's module is imported only
 * when it runs — before that this file loads commander and the help texts alone, so `--version`
 * and `--help` start at once (requiring @temporalio/client alone costs ≈0.3 s). Every command is a
 * thin shell over `ConversationClient`; conversations live in Temporal, so any command can be run
 * from any terminal at any time.
 */
import path from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import type { CommandInput, Io } from './command-line';
import { ASK_OPTIONS, CONFIG_OPTIONS, CONTINUE_OPTIONS, JSON_OPTION, type OptionDefinition, SESSION_LIMIT_OPTIONS, optionName } from './command-options';
import { claudeCodeArgv } from './claude-flags';
import { invocationName } from './invocation';
import { UsageError } from './usage-error';
import { version as packageVersion } from '../package.json';

/** One command: what `--help` says about it, and how it runs (its module imported then). */
interface CommandDefinition {
  name: string;
  /** Commander's argument syntax with each one's help line: `['<id>', 'the conversation']`. */
  arguments?: Array<[string, string]>;
  summary: string;
  /** More than the summary, for the command's own --help. */
  description?: string;
  options?: OptionDefinition[];
  hidden?: boolean;
  run?: (input: CommandInput, io: Io) => Promise<number>;
  subcommands?: CommandDefinition[];
}

const ID: [string, string] = ['<id>', 'the conversation: its id, or the last part of it (e10872b5)'];

/** Every command, in the order the help lists them. */
const COMMANDS: CommandDefinition[] = [
  {
    name: 'ask',
    arguments: [['[prompt...]', 'the prompt; one @path argument names a file holding it; piped stdin is added']],
    summary: 'one-shot: start, wait, print the answer (like `claude -p`)',
    description: 'ask asks inline (y / n / always) when stdin and stdout are a terminal; otherwise a tool that needs permission is denied at once.',
    options: [...CONFIG_OPTIONS, ...ASK_OPTIONS, ...SESSION_LIMIT_OPTIONS, ...CONTINUE_OPTIONS],
    run: async (input, io) => (await import('./commands/ask')).askCommand(input, io),
  },
  {
    name: 'start',
    arguments: [['[prompt...]', 'the first prompt (optional with --resume)']],
    summary: 'start a conversation, print its id (--follow to watch it)',
    description: 'A started conversation waits (up to 24 h) for approve / deny when a tool needs permission.',
    options: [
      ...CONFIG_OPTIONS,
      ...SESSION_LIMIT_OPTIONS,
      { flags: '--id <id>', description: 'conversation id (default: made from the prompt)' },
      { flags: '--follow', description: 'print progress until the first result' },
      { flags: '--resume <id>', description: "a new conversation that continues <id>'s transcript (like `claude --resume`)" },
    ],
    run: async (input, io) => (await import('./commands/start')).startCommand(input, io),
  },
  {
    name: 'chat',
    arguments: [['[id-or-prompt]', 'a conversation to rejoin, or (with spaces, quoted) the first prompt of a new one']],
    summary: 'interactive session on a new (or that) conversation',
    description: 'Streamed answers, permission prompts inline; Ctrl-C aborts, Ctrl-D leaves (the conversation stays alive).',
    options: [...CONFIG_OPTIONS, ...CONTINUE_OPTIONS],
    run: async (input) => (await import('./commands/chat')).chatFromCommandLine(input),
  },
  {
    name: 'send',
    arguments: [ID, ['<prompt...>', 'a follow-up; one starting with / is a slash command (/help, /compact, /cost, …)']],
    summary: 'send a follow-up to a conversation',
    options: [{ flags: '--follow', description: 'print from this input on until its result' }],
    run: async (input, io) => (await import('./commands/send')).sendCommand(input, io),
  },
  {
    name: 'list',
    summary: 'conversations on the server, newest first',
    options: [
      { flags: '--status <status>', description: 'running, awaiting_input, awaiting_permission or ended' },
      { flags: '--workspace <dir>', description: 'only conversations in this workspace' },
      { flags: '--model <model>', description: 'only conversations on this model' },
      { flags: '--limit <n>', description: 'at most n rows (default 50)' },
      JSON_OPTION,
    ],
    run: async (input, io) => (await import('./commands/list')).listCommand(input, io),
  },
  {
    name: 'status',
    arguments: [ID],
    summary: 'phase, turns, tools in flight, usage, context, last result',
    options: [JSON_OPTION],
    run: async (input, io) => (await import('./commands/status')).statusCommand(input, io),
  },
  {
    name: 'transcript',
    arguments: [ID],
    summary: "print a conversation's transcript (also an ended one)",
    options: [{ flags: '--jsonl', description: 'as JSON lines' }],
    run: async (input, io) => (await import('./commands/transcript')).transcriptCommand(input, io),
  },
  {
    name: 'compact',
    arguments: [ID, ['[instructions...]', 'what the summary should keep']],
    summary: "summarize the conversation so far to free context (after the running query; like Claude Code's /compact)",
    options: [JSON_OPTION],
    run: async (input, io) => (await import('./commands/compact')).compactCommand(input, io),
  },
  {
    name: 'checkpoints',
    arguments: [ID],
    summary: 'the prompts a rewind can go back to: number, time, first line, files changed since',
    options: [JSON_OPTION],
    run: async (input, io) => (await import('./commands/rewind')).checkpointsCommand(input, io),
  },
  {
    name: 'rewind',
    arguments: [ID],
    summary: 'files and conversation as they were just before prompt n (Bash edits and git commits included)',
    options: [
      { flags: '--to <n>', description: 'the prompt to go back to (1 = the start; `checkpoints` lists them)' },
      { flags: '--code', description: 'files only' },
      { flags: '--conversation', description: 'transcript only' },
      JSON_OPTION,
    ],
    run: async (input, io) => (await import('./commands/rewind')).rewindCommand(input, io),
  },
  {
    name: 'fork',
    arguments: [ID, ['[prompt...]', "the new conversation's first prompt"]],
    summary: "a new conversation from <id>'s transcript, in its own copy of the workspace; prints the new id",
    options: [
      { flags: '--at <n>', description: 'from before prompt n (default: now)' },
      { flags: '--cwd <dir>', description: 'where the copy of the workspace goes (default: beside it)' },
      { flags: '--id <id>', description: "the new conversation's id" },
      JSON_OPTION,
    ],
    run: async (input, io) => (await import('./commands/rewind')).forkCommand(input, io),
  },
  {
    name: 'approve',
    arguments: [ID, ['<toolUseId>', 'the tool call waiting for permission (`status` lists them)']],
    summary: 'allow a tool call waiting for permission',
    options: [{ flags: '--always', description: 'and an allow rule for the rest of the session' }],
    run: async (input, io) => (await import('./commands/approve-or-deny')).approveOrDenyCommand(input, io, 'approve'),
  },
  {
    name: 'deny',
    arguments: [ID, ['<toolUseId>', 'the tool call waiting for permission'], ['[message...]', 'told to the model']],
    summary: 'refuse a tool call waiting for permission',
    run: async (input, io) => (await import('./commands/approve-or-deny')).approveOrDenyCommand(input, io, 'deny'),
  },
  {
    name: 'abort',
    arguments: [ID],
    summary: 'interrupt the running query (the conversation stays open)',
    run: async (input, io) => (await import('./commands/abort-or-end')).abortOrEndCommand(input, io, 'abort'),
  },
  {
    name: 'end',
    arguments: [ID],
    summary: 'end the conversation after the running query',
    run: async (input, io) => (await import('./commands/abort-or-end')).abortOrEndCommand(input, io, 'end'),
  },
  {
    name: 'upgrade',
    arguments: [['[id]', 'the conversation (or --all)']],
    summary: 'move idle conversations to the current worker version now (otherwise at their next input; server 1.31+)',
    options: [
      { flags: '--all', description: 'every open conversation' },
      { flags: '--timeout <s>', description: 'seconds to wait for each (default 30)' },
    ],
    run: async (input, io) => (await import('./commands/upgrade')).upgradeCommand(input, io),
  },
  {
    name: 'mcp',
    summary: 'a conversation\'s MCP servers: list them, answer "use this .mcp.json server?"',
    subcommands: [
      {
        name: 'list',
        arguments: [ID],
        summary: 'the MCP servers: state and tools',
        options: [JSON_OPTION],
        run: async (input, io) => (await import('./commands/mcp')).mcpCommand('list', input, io),
      },
      {
        name: 'approve',
        arguments: [ID, ['<server...>', 'the servers to use']],
        summary: "use these .mcp.json servers (saved in the workspace's .claude/settings.local.json)",
        options: [{ flags: '--all', description: 'and all future project servers' }, JSON_OPTION],
        run: async (input, io) => (await import('./commands/mcp')).mcpCommand('approve', input, io),
      },
      {
        name: 'reject',
        arguments: [ID, ['<server...>', 'the servers not to use']],
        summary: 'do not use these .mcp.json servers',
        options: [JSON_OPTION],
        run: async (input, io) => (await import('./commands/mcp')).mcpCommand('reject', input, io),
      },
    ],
  },
  {
    name: 'cron',
    summary: 'cron jobs (CronCreate, /loop 5m …) on the server',
    subcommands: [
      {
        name: 'list',
        arguments: [['[id]', "only this conversation's jobs"]],
        summary: "id, cron, next fire, conversation, prompt (the UI's Schedules page shows them too)",
        options: [JSON_OPTION],
        run: async (input, io) => (await import('./commands/cron')).cronCommand(input, io),
      },
    ],
  },
  {
    name: 'worker',
    summary: 'run a worker (needs ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL, or --scripted)',
    options: [
      {
        flags: '--scripted',
        description:
          'its model is a local scripted one (no key): try tools, permissions and subagents with prompts like "read FILE", "run CMD" (it lists them)',
      },
      { flags: '--workspace-queue <name>', description: "a workspace worker: only tools, hooks and session context, on the queue of this host's workspaces" },
    ],
    run: async (input) => (await import('./commands/worker')).workerCommand(input),
  },
  {
    name: 'server',
    summary: 'run a local Temporal dev server (UI on http://localhost:8233)',
    options: [
      { flags: '--port <n>', description: 'gRPC port (default 7233; set TEMPORAL_ADDRESS=localhost:<n> for the other commands)' },
      { flags: '--ui-port <n>', description: 'Web UI port (default 8233)' },
      { flags: '--postgres', description: 'the Temporal server on PostgreSQL instead (docs/deployment.md)' },
    ],
    run: async (input) => (await import('./commands/server')).serverCommand(input),
  },
  {
    name: 'codec-server',
    summary: 'decrypt encrypted history for the Temporal UI / CLI',
    description:
      "Serves the Temporal UI's remote codec endpoint (POST /encode, /decode) with the keys of DURABLE_AGENT_ENCRYPTION_KEY (or DURABLE_AGENT_ENCRYPTION_KEY_FILE).",
    options: [
      { flags: '--port <n>', description: 'port (default 8888)' },
      { flags: '--host <host>', description: 'address to listen on (default 127.0.0.1)' },
      { flags: '--origin <url>', description: 'browser origin allowed to call it (repeatable; default the dev server UI)', multiple: true },
      {
        flags: '--token <token>',
        description: 'required bearer token (or DURABLE_AGENT_CODEC_TOKEN); 16+ characters of [A-Za-z0-9._~-]; mandatory off loopback',
      },
    ],
    run: async (input, io) => (await import('./commands/codec-server')).codecServerCommand(input, io),
  },
  {
    name: 'version',
    summary: 'print the version (also -v, --version)',
    hidden: true,
    run: async (_input, io) => {
      io.out(`${packageVersion} (durable-agent)`);
      return 0;
    },
  },
];

const AFTER_HELP = `
Any <id> may be shortened to its last part (e10872b5). \`<command> --help\` shows a command's options.

Claude Code's spellings work too: \`-p "<prompt>"\` (or --print) is ask; a command line that starts
with a flag or a quoted prompt is chat; -c / --continue carries on from this workspace's most recent
conversation and -r / --resume <id> from that one (ask and chat; --fork-session: a fork of it);
-v / --version; --dangerously-skip-permissions is --permission-mode bypassPermissions.

Environment: TEMPORAL_ADDRESS (default localhost:7233), TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
DURABLE_AGENT_TASK_QUEUE (default durable-agent), DURABLE_AGENT_MAX_TOOL_USE_CONCURRENCY (default 10),
ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, DURABLE_AGENT_ENCRYPTION_KEY or DURABLE_AGENT_ENCRYPTION_KEY_FILE
(encrypt history: base64 of 32 random bytes, several comma-separated for rotation, the first encrypts).
Signals, queries and updates (for \`temporal workflow signal/query/update execute\`): userInput {"prompt": "..."},
abort, end; status, events, history; compact {"instructions": "..."}; rewind {"to": n, "mode"?: "both"|"code"|"conversation"};
checkpoints; fork {"at"?: n, "cwd"?: "dir"}; upgrade; decidePermission {"toolUseId": "...", "behavior": "allow"|"deny"};
approveMcpServers {"servers": ["name"], "decision": "approve"|"approve-all"|"reject"}.`;

const defaultIo: Io = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  stdin: process.stdin,
  tty: process.stdout.isTTY ? { write: (text) => process.stdout.write(text) } : undefined,
};

/** commander's error text as ours: `status: Unknown option '--colour' (Did you mean --json?)` and how to get help. */
function usageMessage(text: string, commandPath: string): string {
  const message = text
    .trim()
    .replace(/^error: /, '')
    .replace(/^unknown (option|command)/, (words) => `U${words.slice(1)}`)
    .replace(
      /^too many arguments(?: for '[^']*')?\. Expected (\d+) arguments? but got (\d+)\.$/m,
      (_line, expected: string, got: string) => `too many arguments: it takes ${expected}, got ${got} (quote an argument that has spaces).`,
    );
  const help = `${invocationName()}${commandPath ? ` ${commandPath}` : ''} --help`;
  return `Error: ${commandPath ? `${commandPath}: ` : ''}${message}\nRun \`${help}\` for usage.`;
}

/** The commander program for one run: the commands of {@link COMMANDS}, output to `io`, the exit code kept in `result`. */
function buildProgram(io: Io, result: { code: number }): Command {
  const program = new Command(invocationName())
    .description('a coding agent whose conversations are durable Temporal workflows')
    .exitOverride()
    .showSuggestionAfterError()
    .configureHelp({ sortSubcommands: false })
    .addHelpText('after', AFTER_HELP);
  const configure = (command: Command, commandPath: string) =>
    command.configureOutput({
      writeOut: (text) => io.out(text.replace(/\n$/, '')),
      writeErr: (text) => io.err(text.replace(/\n$/, '')),
      outputError: (text) => io.err(usageMessage(text, commandPath)),
    });
  configure(program, '');
  const add = (parent: Command, definition: CommandDefinition, parentPath: string) => {
    const commandPath = `${parentPath}${parentPath ? ' ' : ''}${definition.name}`;
    const command = parent.command(definition.name, { hidden: definition.hidden }).summary(definition.summary);
    command.description(definition.description ? `${definition.summary}\n\n${definition.description}` : definition.summary);
    configure(command, commandPath);
    for (const [syntax, description] of definition.arguments ?? []) command.argument(syntax, description);
    for (const definitionOption of definition.options ?? []) {
      const option = new Option(definitionOption.flags, definitionOption.description);
      if (definitionOption.hidden) option.hideHelp();
      if (definitionOption.multiple) option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
      command.addOption(option);
    }
    for (const subcommand of definition.subcommands ?? []) add(command, subcommand, commandPath);
    const run = definition.run;
    if (!run) return;
    command.action(async () => {
      const options = command.opts();
      const values: CommandInput['values'] = {};
      for (const definitionOption of definition.options ?? []) {
        // A hidden spelling (--allowedTools) shares its listed option's value (commander keys both alike).
        if (!definitionOption.hidden) values[optionName(definitionOption)] = options[new Option(definitionOption.flags).attributeName()] as never;
      }
      const positionals = (command.processedArgs as Array<string | string[] | undefined>).flat().filter((arg) => arg !== undefined);
      try {
        result.code = await run({ values, positionals }, io);
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        io.err(`Error: ${error.message}\nRun \`${invocationName()} ${commandPath} --help\` for usage.`);
        result.code = 2;
      }
    });
  };
  for (const definition of COMMANDS) add(program, definition, '');
  return program;
}

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const result = { code: 0 };
  try {
    await buildProgram(io, result).parseAsync(claudeCodeArgv(argv), { from: 'user' });
    return result.code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and `help` exit 0; a usage mistake (and no command at all) 2, as before.
      return error.exitCode === 0 ? 0 : 2;
    }
    // Loaded only now: what it recognizes (Temporal's and zod's errors) is more than --help needs.
    return (await import('./report-error')).reportError(error, io);
  }
}

/**
 * Under `npm run cli` npm starts the CLI in the package's directory; the person ran it from
 * INIT_CWD. Relative paths and the default --cwd mean that directory (issue 19, item 10).
 */
export function enterInvocationDirectory(env: NodeJS.ProcessEnv = process.env): void {
  const from = env.INIT_CWD;
  if (!from || env.npm_lifecycle_event === undefined || path.resolve(from) === process.cwd()) return;
  // Only where npm put us (the package's directory): a CLI started elsewhere, e.g. by a tool that
  // inherited npm's variables, is where the person wants it.
  if (process.cwd() !== path.resolve(__dirname, '..')) return;
  try {
    process.chdir(from);
  } catch {
    /* gone: stay where npm put us */
  }
}

if (require.main === module) {
  enterInvocationDirectory();
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
