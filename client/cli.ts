/**
 * `durable-agent` — the command line: it parses the command name and dispatches to
 * client/commands/ (one file per command), and turns errors into messages and exit codes. Every
 * command is a thin shell over `ConversationClient`; conversations live in Temporal, so any
 * command can be run from any terminal at any time.
 */
import path from 'node:path';
import { ServiceError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ZodError } from 'zod';
import { ConversationEndedError, ConversationExistsError, ConversationNotFoundError, InvalidConversationIdError } from './api';
import { TemporalUnreachableError } from '../infra/connection';
import { missingKeyMessage } from '../infra/encryption-codec';
import { type Io, parse } from './command-line';
import { abortOrEndCommand } from './commands/abort-or-end';
import { approveOrDenyCommand } from './commands/approve-or-deny';
import { askCommand } from './commands/ask';
import { compactCommand } from './commands/compact';
import { listCommand } from './commands/list';
import { PERMISSION_USAGE } from './commands/permissions';
import { sendCommand } from './commands/send';
import { startCommand } from './commands/start';
import { statusCommand } from './commands/status';
import { transcriptCommand } from './commands/transcript';
import { UsageError } from './usage-error';
import { claudeCodeArgv } from './claude-flags';
import { version as packageVersion } from '../package.json';

const USAGE = `durable-agent — a coding agent whose conversations are durable Temporal workflows

Usage:
  durable-agent ask [options] <prompt>           one-shot: start, wait, print the answer (like \`claude -p\`)
  durable-agent start [options] <prompt>         start a conversation, print its id (--follow to watch it)
  durable-agent start --resume <id> [prompt]    a new conversation that continues <id>'s transcript (like \`claude --resume\`)
  durable-agent ask|chat -r <id> --fork-session  a new conversation forked from <id> now, in a copy of its workspace (or -c)
  durable-agent send [--follow] <id> <prompt>    send a follow-up to a conversation; a prompt starting with / is a
                                                 slash command (/help, /clear, /compact, /cost, /status, /model,
                                                 and the custom commands of .claude/commands/*.md)
  durable-agent transcript [--jsonl] <id>        print a conversation's transcript (also an ended one), or JSON lines
  durable-agent status [--json] <id>             phase, turns, tools in flight, usage, context, last result
  durable-agent compact [--json] <id> [instructions]
                                                 summarize the conversation so far to free context
                                                 (after the running query; like Claude Code's /compact)
  durable-agent checkpoints [--json] <id>        the prompts a rewind can go back to: number, time, first line,
                                                 files changed in the workspace since
  durable-agent rewind <id> --to <n> [--code | --conversation] [--json]
                                                 files and conversation as they were just before prompt n
                                                 (1 = the start; Bash edits and git commits included;
                                                 --code: files only, --conversation: transcript only)
  durable-agent fork <id> [--at <n>] [--cwd <dir>] [--id <new id>] [prompt]
                                                 a new conversation from <id>'s transcript before prompt n
                                                 (default: now), in its own copy of the workspace at that
                                                 checkpoint (beside it, or --cwd); prints the new id
  durable-agent approve <id> <toolUseId> [--always]
                                                 allow a tool call waiting for permission (--always: for the session)
  durable-agent deny <id> <toolUseId> [message]  refuse it (the message is told to the model)
  durable-agent abort <id>                       interrupt the running query (the conversation stays open)
  durable-agent end <id>                         end the conversation after the running query
  durable-agent upgrade <id> | --all [--timeout s]
                                                 move idle conversations to the current worker version now
                                                 (otherwise at their next input; needs Temporal server 1.31+)
  durable-agent chat [options] [id | "prompt"]   interactive session on a new (or that) conversation:
                                                 streamed answers, permission prompts inline (y / n / always);
                                                 Ctrl-C aborts, Ctrl-D leaves (it stays alive)
  durable-agent list [--status s] [--workspace dir] [--model m] [--limit n] [--json]
                                                 conversations on the server, newest first; status is
                                                 running, awaiting_input, awaiting_permission or ended.
                                                 Any <id> may be shortened to its last part (e10872b5)
  durable-agent mcp list <id>                    a conversation's MCP servers: state and tools
  durable-agent mcp approve [--all] <id> <server…> / mcp reject <id> <server…>
                                                 answer "use this .mcp.json server?" (saved in the workspace's
                                                 .claude/settings.local.json; --all: all future project servers)
  durable-agent cron list [--json] [id]          cron jobs (CronCreate, /loop 5m …) on the server: id, cron, next
                                                 fire, conversation, prompt (the UI's Schedules page shows them too)
  durable-agent worker                           run a worker (needs ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL)
  durable-agent worker --scripted                run a worker whose model is a local scripted one (no key): try
                                                 tools, permissions and subagents with prompts like "read FILE",
                                                 "write FILE TEXT", "run CMD", "agent TASK" (it lists them)
  durable-agent worker --workspace-queue <name>  run a workspace worker: only tools, hooks and session context, on
                                                 the queue of this host's workspaces (no model key needed)
  durable-agent server                           run a local Temporal dev server (UI on http://localhost:8233)
  durable-agent server --postgres                run the Temporal server on PostgreSQL instead (docs/deployment.md)
  durable-agent codec-server [--port 8888] [--host 127.0.0.1] [--origin <url>]... [--token <t>]
                                                 decrypt encrypted history for the Temporal UI / CLI

Claude Code's spellings work too: \`durable-agent -p "<prompt>"\` (or --print) is ask; a command line that starts
with a flag is chat; -c / --continue carries on from this workspace's most recent conversation and
-r / --resume <id> from that one (ask and chat); -v / --version; --dangerously-skip-permissions is
--permission-mode bypassPermissions.

Options for ask and start:
  --cwd <dir>              workspace directory on the worker host (default: the directory you ran the command from)
  --model <name>           model or alias: opus, sonnet, haiku, fable, [1m] suffix (default: claude-opus-4-8)
  --fallback-model <name>  model to switch to when the primary is overloaded (default: claude-sonnet-4-6)
  --effort <level>         low, medium, high (default) or max: how hard the model thinks, on models that take it
  --thinking on|off        extended thinking (default on where the model offers it; MAX_THINKING_TOKENS=0 turns it off)
  --max-turns <n>          stop after n turns (default 100)
  --system-prompt <text>   replaces the default system prompt
  --append-system-prompt <text>
                           appended to the system prompt
  --mcp-config <file|json> MCP servers from a file or inline JSON ({"mcpServers": {...}}), besides .mcp.json
                           and ~/.claude.json (repeatable); --strict-mcp-config: only these servers
  --id <id>                conversation id (start only; default: generated from the prompt)
  --output-format <fmt>    ask only: text (default), json (the result message, one line) or
                           stream-json (one JSON message per line as they happen; needs --verbose)
  --verbose                ask only: required by --output-format stream-json
  --max-budget-usd <n>     stop a query once the conversation has cost this many dollars
  --json-schema <schema>   end each query with output matching this JSON schema (JSON text or @file)
                           in the result's structured_output
  --follow                 start only: print progress until the first result
  --workspace-queue <name> run tools, hooks and session context on the workers of this task queue, on the host
                           that holds --cwd (default: DURABLE_AGENT_WORKSPACE_TASK_QUEUE, else the main queue)

${PERMISSION_USAGE}
  ask asks inline (y / n / always) when stdin and stdout are a terminal; otherwise a tool that needs
  permission is denied at once. A started conversation waits (up to 24 h) for approve / deny.

Environment: TEMPORAL_ADDRESS (default localhost:7233), TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
DURABLE_AGENT_TASK_QUEUE (default durable-agent), DURABLE_AGENT_MAX_TOOL_USE_CONCURRENCY (default 10),
ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, DURABLE_AGENT_ENCRYPTION_KEY or DURABLE_AGENT_ENCRYPTION_KEY_FILE
(encrypt history: base64 of 32 random bytes, several comma-separated for rotation, the first encrypts).
Signals, queries and updates (for \`temporal workflow signal/query/update execute\`): userInput {"prompt": "..."},
abort, end; status, events, history; compact {"instructions": "..."}; rewind {"to": n, "mode"?: "both"|"code"|"conversation"}; checkpoints; fork {"at"?: n, "cwd"?: "dir"}; upgrade; decidePermission {"toolUseId": "...", "behavior": "allow"|"deny"};
approveMcpServers {"servers": ["name"], "decision": "approve"|"approve-all"|"reject"}.`;

const defaultIo: Io = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  stdin: process.stdin,
  tty: process.stdout.isTTY ? { write: (text) => process.stdout.write(text) } : undefined,
};

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const [command, ...rest] = claudeCodeArgv(argv);
  try {
    switch (command) {
      case 'version':
        parse(rest, {}, 0, '--version');
        io.out(`${packageVersion} (durable-agent)`);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.out(USAGE);
        return command === undefined ? 2 : 0;
      case 'ask':
        return await askCommand(rest, io);
      case 'start':
        return await startCommand(rest, io);
      case 'send':
        return await sendCommand(rest, io);
      case 'status':
        return await statusCommand(rest, io);
      case 'compact':
        return await compactCommand(rest, io);
      case 'rewind':
        return await (await import('./commands/rewind')).rewindCommand(rest, io);
      case 'fork':
        return await (await import('./commands/rewind')).forkCommand(rest, io);
      case 'checkpoints':
        return await (await import('./commands/rewind')).checkpointsCommand(rest, io);
      case 'approve':
      case 'deny':
        return await approveOrDenyCommand(rest, io, command);
      case 'abort':
      case 'end':
        return await abortOrEndCommand(rest, io, command);
      case 'upgrade':
        return await (await import('./commands/upgrade')).upgradeCommand(rest, io);
      case 'list':
        return await listCommand(rest, io);
      case 'transcript':
        return await transcriptCommand(rest, io);
      case 'mcp':
        return await (await import('./commands/mcp')).mcpCommand(rest, io);
      case 'cron':
        return await (await import('./commands/cron')).cronCommand(rest, io);
      // Loaded when used: chat's terminal and stream readers, the worker, the dev server and the
      // codec server are more than the other commands need.
      case 'chat':
        return await (await import('./commands/chat')).chatFromCommandLine(rest);
      case 'worker':
        return await (await import('./commands/worker')).workerCommand(rest);
      case 'server':
        return await (await import('./commands/server')).serverCommand(rest);
      case 'codec-server':
        return await (await import('./commands/codec-server')).codecServerCommand(rest, io);
      default:
        throw new UsageError(`Unknown command "${command}".`);
    }
  } catch (error) {
    return reportError(error, io);
  }
}

function reportError(error: unknown, io: Io): number {
  if (error instanceof UsageError) {
    io.err(`Error: ${error.message}\nRun \`durable-agent help\` for usage.`);
    return 2;
  }
  if (error instanceof ZodError) {
    io.err(`Error: invalid option: ${error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
    return 2;
  }
  if (error instanceof InvalidConversationIdError) {
    io.err(`Error: --id: ${error.message}.`);
    return 2;
  }
  if (
    error instanceof TemporalUnreachableError ||
    error instanceof ConversationNotFoundError ||
    error instanceof ConversationEndedError ||
    error instanceof ConversationExistsError
  ) {
    io.err(`Error: ${error.message}`);
    return 1;
  }
  if (error instanceof ServiceError && error.cause) {
    // "Failed to start Workflow" alone does not say why: the server's answer does.
    const cause = error.cause as Error & { details?: string };
    io.err(`Error: ${error.message}: ${cause.details || cause.message}`);
    return 1;
  }
  if (error instanceof WorkflowUpdateFailedError && error.cause) {
    // The workflow refused the update (its validator, or no handler on an older worker): say why.
    io.err(`Error: ${error.message}: ${error.cause.message}`);
    return 1;
  }
  io.err(`Error: ${missingKeyMessage(error) ?? (error instanceof Error ? error.message : String(error))}`);
  return 1;
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
