/**
 * `durable-agent` — the command line. Every command is a thin shell over `ConversationClient`;
 * conversations live in Temporal, so any command can be run from any terminal at any time.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ServiceError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ZodError } from 'zod';
import type { ConversationConfigInput } from '../common/config';
import type { ResultMessage } from '../common/result';
import type { ConversationEvent } from '../workflows/definitions';
import {
  ConversationClient,
  ConversationEndedError,
  ConversationExistsError,
  ConversationNotFoundError,
  InvalidConversationIdError,
  conversationIdProblem,
} from './api';
import { TemporalUnreachableError, connectClient, temporalSettings } from '../infra/connection';
import { missingKeyMessage } from '../infra/encryption-codec';
import { ASK_OPTIONS, SESSION_LIMIT_OPTIONS, outputFormatFrom, printAskOutput, readAskPrompt, sessionLimitsFrom } from './commands/ask';
import { exportTranscript, fetchTranscript, transcriptToResume } from './commands/transcript';
import { UsageError } from './usage-error';
import { checkModels, effortFrom, thinkingFrom } from './model-check';
import { PERMISSION_OPTIONS, PERMISSION_USAGE, decide, pendingPermissionLines, permissionConfigFrom, promptForPermissions } from './commands/permissions';
import { LIST_HEADER, ListFilterError, formatTable, listQuery, listRow, mostRecentConversation, newestFirst, resolveConversationId } from './commands/list';
import { WORKSPACE_SEARCH_ATTRIBUTE } from '../common/search-attributes';
import { claudeCodeArgv } from './claude-flags';
import { RESTORE_AND_CLEAR, SAVE_CURSOR } from './live-printer';
import { LiveView } from './live-view';
import { version as packageVersion } from '../package.json';
import { formatCompactionOutcome, formatContextWarning, formatEvent, formatResultLine, formatStatus, sanitizeForTerminal } from './format';

const USAGE = `durable-agent — a coding agent whose conversations are durable Temporal workflows

Usage:
  durable-agent ask [options] <prompt>           one-shot: start, wait, print the answer (like \`claude -p\`)
  durable-agent start [options] <prompt>         start a conversation, print its id (--follow to watch it)
  durable-agent start --resume <id> [prompt]    a new conversation that continues <id>'s transcript (like \`claude --resume\`)
  durable-agent send [--follow] <id> <prompt>    send a follow-up to a conversation; a prompt starting with / is a
                                                 slash command (/help, /clear, /compact, /cost, /status, /model,
                                                 and the custom commands of .claude/commands/*.md)
  durable-agent transcript [--jsonl] <id>        print a conversation's transcript (also an ended one), or JSON lines
  durable-agent status [--json] <id>             phase, turns, tools in flight, usage, context, last result
  durable-agent compact [--json] <id> [instructions]
                                                 summarize the conversation so far to free context
                                                 (after the running query; like Claude Code's /compact)
  durable-agent approve <id> <toolUseId> [--always]
                                                 allow a tool call waiting for permission (--always: for the session)
  durable-agent deny <id> <toolUseId> [message]  refuse it (the message is told to the model)
  durable-agent abort <id>                       interrupt the running query (the conversation stays open)
  durable-agent end <id>                         end the conversation after the running query
  durable-agent chat [options] [id | "prompt"]   interactive session on a new (or that) conversation:
                                                 streamed answers, permission prompts inline (y / n / always);
                                                 Ctrl-C aborts, Ctrl-D leaves (it stays alive)
  durable-agent list [--status s] [--workspace dir] [--model m] [--limit n] [--json]
                                                 conversations on the server, newest first; status is
                                                 running, awaiting_input, awaiting_permission or ended.
                                                 Any <id> may be shortened to its last part (e10872b5)
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
abort, end; status, events, history; compact {"instructions": "..."}; decidePermission {"toolUseId": "...", "behavior": "allow"|"deny"}.`;

export { UsageError };

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  /** `ask` reads a piped prompt from it, as `claude -p` does; absent: none is read. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** A terminal: answers stream as they are written (`write` appends without a newline). */
  tty?: { write: (text: string) => void };
}

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
      case 'approve':
      case 'deny':
        return await decideCommand(rest, io, command);
      case 'abort':
        return await simpleCommand(rest, io, 'abort');
      case 'end':
        return await simpleCommand(rest, io, 'end');
      case 'list':
        return await listCommand(rest, io);
      case 'transcript':
        return await transcriptCommand(rest, io);
      case 'chat': {
        const { values, positionals } = parse(rest, { ...CONFIG_OPTIONS, ...CONTINUE_OPTIONS }, [0, 1], 'chat');
        if (positionals[0] !== undefined && (values.resume !== undefined || values.continue)) {
          throw new UsageError('chat: give a conversation id, --resume <id> or --continue, not several.');
        }
        checkContinueFlags(values);
        const config = configFrom(values, false);
        const { chatCommand } = await import('./commands/chat');
        const { api, taskQueue, close } = await connect();
        try {
          let conversationId: string | undefined;
          let initialPrompt: string | undefined;
          if (positionals[0] !== undefined) {
            // `chat "fix the bug"` (claude "…"): a text with spaces that names no conversation is the first prompt.
            conversationId = await resolveConversationId(api, positionals[0]);
            const exists = await api.client.workflow.getHandle(conversationId).describe().then(() => true, () => false);
            if (!exists && /\s/.test(positionals[0].trim())) {
              initialPrompt = positionals[0].trim();
              conversationId = undefined;
            }
          }
          let resume: ResumeInput | undefined;
          const from = await continuedConversation(api, values, config.cwd);
          if (from) {
            // A conversation still open is rejoined; an ended one is continued by a new conversation.
            const open = await api.status(from).then((status) => !status.ended, () => false);
            if (open) conversationId = from;
            else resume = await resumeFrom(api, from);
          }
          return await chatCommand({ api, taskQueue, conversationId, config, resume, initialPrompt });
        } finally {
          await close();
        }
      }
      case 'worker': {
        const { values } = parse(rest, { 'workspace-queue': { type: 'string' }, scripted: { type: 'boolean' } }, 0, 'worker');
        const workspaceQueue = values['workspace-queue'] as string | undefined;
        if (workspaceQueue !== undefined && workspaceQueue.trim() === '') throw new UsageError('worker: --workspace-queue needs a task queue name.');
        if (workspaceQueue !== undefined && values.scripted) throw new UsageError('worker: --scripted answers model calls; a --workspace-queue worker makes none.');
        const { runWorker } = await import('../worker/main');
        await runWorker(process.env, { workspaceQueue, scripted: values.scripted === true });
        return 0;
      }
      case 'server':
        return await (await import('./commands/server')).serverCommand(rest);
      case 'codec-server': {
        const { codecServerCommand } = await import('./commands/codec-server');
        return await codecServerCommand(rest, io);
      }
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

type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;

function parse(args: string[], options: OptionSpec, positionals: number | [number, number], command: string) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${command}: ${(error as Error).message.replace(/\. To specify a positional.*$/, '')}`);
  }
  const [min, max] = Array.isArray(positionals) ? positionals : [positionals, positionals];
  if (parsed.positionals.length < min) throw new UsageError(`${command}: missing argument${min - parsed.positionals.length > 1 ? 's' : ''}.`);
  if (parsed.positionals.length > max) {
    throw new UsageError(`${command}: unexpected argument "${parsed.positionals[max]}" (quote a prompt that has spaces).`);
  }
  return parsed as { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] };
}

const CONFIG_OPTIONS: OptionSpec = {
  cwd: { type: 'string' },
  model: { type: 'string' },
  'fallback-model': { type: 'string' },
  effort: { type: 'string' },
  thinking: { type: 'string' },
  'max-turns': { type: 'string' },
  'workspace-queue': { type: 'string' },
  'system-prompt': { type: 'string' },
  'append-system-prompt': { type: 'string' },
  ...PERMISSION_OPTIONS,
};

/** Set to 1 when --cwd names a directory on a remote worker host, not on this machine. */
const REMOTE_CWD_VARIABLE = 'DURABLE_AGENT_REMOTE_CWD';

function configFrom(values: Record<string, string | boolean | string[] | undefined>, oneShot: boolean, canApprove = true): ConversationConfigInput {
  const maxTurnsText = values['max-turns'] as string | undefined;
  let maxTurns: number | undefined;
  if (maxTurnsText !== undefined) {
    // Digits only: Number() would also take "0x10", "1e3" and " 5 ".
    maxTurns = /^[0-9]+$/.test(maxTurnsText) ? Number(maxTurnsText) : NaN;
    if (!Number.isSafeInteger(maxTurns) || maxTurns < 1) {
      throw new UsageError(`--max-turns must be a positive whole number in decimal digits, got "${maxTurnsText}".`);
    }
  }
  const concurrencyText = process.env.DURABLE_AGENT_MAX_TOOL_USE_CONCURRENCY;
  let maxToolUseConcurrency: number | undefined;
  if (concurrencyText) {
    maxToolUseConcurrency = Number(concurrencyText);
    if (!Number.isInteger(maxToolUseConcurrency) || maxToolUseConcurrency < 1) {
      throw new UsageError(`DURABLE_AGENT_MAX_TOOL_USE_CONCURRENCY must be a positive whole number, got "${concurrencyText}".`);
    }
  }
  const cwd = path.resolve((values.cwd as string | undefined) ?? process.cwd());
  // Without this check, a typo'd --cwd was accepted and Write created the directory.
  if (process.env[REMOTE_CWD_VARIABLE] !== '1') {
    const cwdStat = statSync(cwd, { throwIfNoEntry: false });
    if (!cwdStat?.isDirectory()) {
      throw new UsageError(
        `--cwd ${cwd} ${cwdStat ? 'is not a directory' : 'does not exist'}. ` +
          `(If the workspace lives only on a remote worker host, set ${REMOTE_CWD_VARIABLE}=1 to skip this check.)`,
      );
    }
  }
  let permissions: ReturnType<typeof permissionConfigFrom>;
  try {
    permissions = permissionConfigFrom(values, canApprove);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return {
    ...permissions,
    maxToolUseConcurrency,
    cwd,
    model: values.model as string | undefined,
    fallbackModel: values['fallback-model'] as string | undefined,
    ...thinkingConfigFrom(values),
    maxTurns,
    oneShot,
    toolTaskQueue: workspaceQueueFrom(values['workspace-queue'] as string | undefined),
    customSystemPrompt: values['system-prompt'] as string | undefined,
    appendSystemPrompt: values['append-system-prompt'] as string | undefined,
  };
}

/** --effort and --thinking (issue 18; client/model-check.ts). */
function thinkingConfigFrom(values: Record<string, string | boolean | string[] | undefined>): Pick<ConversationConfigInput, 'effort' | 'thinking'> {
  try {
    const effort = effortFrom(values.effort as string | undefined);
    const thinking = thinkingFrom(values.thinking as string | undefined);
    return { ...(effort ? { effort } : {}), ...(thinking !== undefined ? { thinking } : {}) };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The config with its models resolved and checked against the Models API before anything starts. */
async function withCheckedModels<T extends ConversationConfigInput>(config: T): Promise<T> {
  try {
    return { ...config, ...(await checkModels(config)) };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** --workspace-queue, else DURABLE_AGENT_WORKSPACE_TASK_QUEUE, else none (tools on the main queue). */
function workspaceQueueFrom(flag: string | undefined): string | undefined {
  if (flag !== undefined && flag.trim() === '') throw new UsageError('--workspace-queue needs a task queue name.');
  return flag ?? (process.env.DURABLE_AGENT_WORKSPACE_TASK_QUEUE?.trim() || undefined);
}

function promptFrom(positionals: string[], command: string): string {
  const prompt = positionals.join(' ').trim();
  if (!prompt) throw new UsageError(`${command}: the prompt is empty.`);
  return prompt;
}

/** Claude Code's -c / --continue and -r / --resume <id> (ask and chat). */
const CONTINUE_OPTIONS: OptionSpec = { continue: { type: 'boolean' }, resume: { type: 'string' } };

type ResumeInput = { fromConversationId: string; messages: Awaited<ReturnType<typeof fetchTranscript>> };

/** -c and -r together, or an empty id: a usage error before anything connects. */
function checkContinueFlags(values: Record<string, unknown>): void {
  if (values.resume !== undefined && values.continue) throw new UsageError('--continue and --resume: give one of them.');
  if (typeof values.resume === 'string' && values.resume.trim() === '') throw new UsageError('--resume needs a conversation id.');
}

/** The conversation --resume names, or --continue's: the workspace's most recent one. */
async function continuedConversation(api: ConversationClient, values: Record<string, unknown>, cwd: string): Promise<string | undefined> {
  checkContinueFlags(values);
  if (typeof values.resume === 'string') return resolveConversationId(api, values.resume);
  if (!values.continue) return undefined;
  const latest = await mostRecentConversation(api.client, cwd);
  if (!latest) throw new UsageError(`--continue: no conversation in ${cwd} yet.`);
  return latest;
}

async function resumeFrom(api: ConversationClient, conversationId: string): Promise<ResumeInput> {
  return { fromConversationId: conversationId, messages: transcriptToResume(conversationId, await fetchTranscript(api, conversationId)) };
}

async function connect(): Promise<{ api: ConversationClient; taskQueue: string; close: () => Promise<void> }> {
  const settings = temporalSettings();
  const client = await connectClient(settings);
  return { api: new ConversationClient(client), taskQueue: settings.taskQueue, close: () => client.connection.close() };
}

/** Warns when nobody polls the task queue: the conversation would wait for a worker forever. */
async function warnIfNoWorker(api: ConversationClient, taskQueue: string, io: Io): Promise<void> {
  try {
    const response = await api.client.workflowService.describeTaskQueue({
      namespace: api.client.options.namespace,
      taskQueue: { name: taskQueue },
    });
    if ((response.pollers ?? []).length === 0) {
      io.err(`Note: no worker is polling task queue "${taskQueue}" right now; the conversation waits until one starts (\`durable-agent worker\`).`);
    }
  } catch {
    /* best effort */
  }
}

async function askCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { ...CONFIG_OPTIONS, ...ASK_OPTIONS, ...SESSION_LIMIT_OPTIONS, ...CONTINUE_OPTIONS }, [0, Infinity], 'ask');
  const format = outputFormatFrom(values);
  checkContinueFlags(values);
  // claude -p: a terminal answers permission requests inline; without one they are denied at once.
  const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const config = await withCheckedModels({ ...configFrom(values, true, interactive), ...sessionLimitsFrom(values) });
  const prompt = await readAskPrompt(positionals, io);
  const { api, taskQueue, close } = await connect();
  const prompting = new AbortController();
  let removeInterrupt = () => {};
  try {
    // -c / -r: a new one-shot conversation that carries on from that one's transcript (claude -p -c).
    const from = await continuedConversation(api, values, config.cwd);
    const resume = from ? await resumeFrom(api, from) : undefined;
    const { conversationId, inputUuid } = await api.start({ prompt, config, taskQueue, resume });
    await warnIfNoWorker(api, taskQueue, io);
    // Ctrl-C stops the query, as with claude -p; a second one leaves at once (issue 19, item 4).
    let interrupts = 0;
    const interrupt = () => {
      interrupts++;
      if (interrupts > 1) process.exit(130);
      io.err('\nInterrupting… (Ctrl-C again to quit now)');
      api.abort(conversationId, 'Ctrl-C in ask').catch(() => undefined);
    };
    process.on('SIGINT', interrupt);
    removeInterrupt = () => process.off('SIGINT', interrupt);
    if (interactive) {
      void promptForPermissions(api, conversationId, prompting.signal, io.err, undefined, interrupt).catch((error: unknown) => io.err(`Error: ${String(error)}`));
    }
    const result = await printAskOutput({ api, conversationId, inputUuid: inputUuid!, config, format, io });
    prompting.abort();
    return interrupts > 0 ? 130 : result.is_error ? 1 : 0;
  } finally {
    removeInterrupt();
    prompting.abort();
    await close();
  }
}

async function startCommand(args: string[], io: Io): Promise<number> {
  const options: OptionSpec = { ...CONFIG_OPTIONS, ...SESSION_LIMIT_OPTIONS, id: { type: 'string' }, follow: { type: 'boolean' }, resume: { type: 'string' } };
  const resumeFrom = parse(args, options, [0, Infinity], 'start').values.resume as string | undefined;
  const { values, positionals } = parse(args, options, [resumeFrom ? 0 : 1, Infinity], 'start');
  // With --resume the prompt may wait for `send` (claude --resume takes none either).
  const prompt = resumeFrom && positionals.length === 0 ? undefined : promptFrom(positionals, 'start');
  if (!prompt && values.follow) throw new UsageError('start: --follow needs a prompt.');
  const id = values.id as string | undefined;
  const idProblem = id === undefined ? undefined : conversationIdProblem(id);
  if (idProblem) throw new UsageError(`--id: ${idProblem}.`);
  const config = await withCheckedModels({ ...configFrom(values, false), ...sessionLimitsFrom(values) });
  const { api, taskQueue, close } = await connect();
  try {
    const resume = resumeFrom ? { fromConversationId: resumeFrom, messages: transcriptToResume(resumeFrom, await fetchTranscript(api, resumeFrom)) } : undefined;
    const { conversationId, inputUuid } = await api.start({ id, prompt, config, taskQueue, resume });
    io.out(conversationId);
    await warnIfNoWorker(api, taskQueue, io);
    if (!values.follow) return 0;
    const result = await follow(api, conversationId, inputUuid!, io);
    return result.is_error ? 1 : 0;
  } finally {
    await close();
  }
}

async function sendCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { follow: { type: 'boolean' } }, [2, Infinity], 'send');
  const [shortId, ...words] = positionals;
  const prompt = promptFrom(words, 'send');
  const { api, close } = await connect();
  try {
    const conversationId = await resolveConversationId(api, shortId);
    // Signal first: a signal needs no worker, a query does (querying first lost the message when
    // no worker ran). --follow then prints from this input's own user_input event.
    const inputUuid = await api.send(conversationId, prompt);
    io.out(`sent to ${conversationId} (input ${inputUuid})`);
    if (!values.follow) return 0;
    const result = await follow(api, conversationId, inputUuid, io, { fromInput: true });
    return result.is_error ? 1 : 0;
  } finally {
    await close();
  }
}

/**
 * Prints the query's events (compaction boundaries and notices among them) until its result,
 * then, like Claude Code under its prompt, the context warning once if the context is running out.
 */
async function follow(
  api: ConversationClient,
  conversationId: string,
  inputUuid: string,
  io: Io,
  options: { fromInput?: boolean } = {},
): Promise<ResultMessage> {
  // With fromInput, events before this input's user_input event belong to earlier queries.
  let printing = options.fromInput !== true;
  const printEvent = (event: ConversationEvent, textShown = false) => {
    if (!printing && event.message.type === 'user_input' && event.message.uuid === inputUuid) printing = true;
    if (!printing) return;
    // Text that streamed already: only the message's tool calls are left to print.
    const shown =
      textShown && event.message.type === 'assistant'
        ? { ...event, message: { ...event.message, message: { ...event.message.message, content: event.message.message.content.filter((block) => block.type !== 'text') } } }
        : event;
    const line = formatEvent(shown as ConversationEvent);
    if (line) io.out(sanitizeForTerminal(line));
  };
  let result: ResultMessage;
  if (io.tty) {
    // On a terminal the model's text streams as it is written (issue 19, item 6), as in chat.
    const tty = io.tty;
    const view = new LiveView();
    let streamed = '';
    result = await api.waitForResult(conversationId, inputUuid, {
      onLive: (entry) => {
        for (const op of view.apply(entry)) {
          if (op.op === 'event') printEvent(op.event, op.textShown);
          else if (!printing) continue;
          else if (op.op === 'text') {
            if (streamed === '') tty.write(SAVE_CURSOR);
            streamed += op.text;
            tty.write(sanitizeForTerminal(op.text));
          } else if (op.op === 'retract') {
            tty.write(RESTORE_AND_CLEAR);
            streamed = '';
          } else if (op.op === 'text_end') {
            if (streamed !== '') tty.write('\n');
            streamed = '';
          }
        }
      },
    });
  } else {
    result = await api.waitForResult(conversationId, inputUuid, { onEvent: (event: ConversationEvent) => printEvent(event) });
  }
  // Best effort: a one-shot conversation may have closed already and answer no queries.
  const warning = await api.status(conversationId).then(formatContextWarning, () => undefined);
  if (warning) io.out(sanitizeForTerminal(warning));
  return result;
}

async function transcriptCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { jsonl: { type: 'boolean' } }, 1, 'transcript');
  const { api, close } = await connect();
  try {
    const text = await exportTranscript(api, await resolveConversationId(api, positionals[0]), Boolean(values.jsonl));
    // JSON escapes control characters itself; sanitizing would change the data.
    io.out(values.jsonl ? text : sanitizeForTerminal(text));
    return 0;
  } finally {
    await close();
  }
}

async function statusCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, 1, 'status');
  const { api, close } = await connect();
  try {
    const conversationId = await resolveConversationId(api, positionals[0]);
    const status = await api.status(conversationId);
    const pending = values.json ? [] : await pendingPermissionLines(api, status);
    // The workspace, from the conversation's search attributes (the status query does not carry it).
    const workspace = await api.client.workflow
      .getHandle(conversationId)
      .describe()
      .then((description) => description.typedSearchAttributes.get(WORKSPACE_SEARCH_ATTRIBUTE), () => undefined);
    io.out(values.json ? JSON.stringify({ ...status, workspace }, null, 2) : [formatStatus(status, workspace), ...pending].join('\n'));
    return 0;
  } finally {
    await close();
  }
}

async function compactCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, [1, Infinity], 'compact');
  const [shortId, ...words] = positionals;
  const { api, close } = await connect();
  try {
    const outcome = await api.compact(await resolveConversationId(api, shortId), words.join(' '));
    io.out(values.json ? JSON.stringify(outcome) : formatCompactionOutcome(outcome));
    return outcome.compacted ? 0 : 1;
  } finally {
    await close();
  }
}

async function decideCommand(args: string[], io: Io, command: 'approve' | 'deny'): Promise<number> {
  const { values, positionals } = parse(args, command === 'approve' ? { always: { type: 'boolean' } } : {}, command === 'approve' ? 2 : [2, Infinity], command);
  const [shortId, toolUseId, ...words] = positionals;
  const { api, close } = await connect();
  try {
    const conversationId = await resolveConversationId(api, shortId);
    const { line } = await decide(api, conversationId, toolUseId, command === 'approve' ? 'allow' : 'deny', {
      always: values.always === true,
      message: words.join(' '),
    });
    io.out(sanitizeForTerminal(line));
    return 0;
  } finally {
    await close();
  }
}

async function simpleCommand(args: string[], io: Io, command: 'abort' | 'end'): Promise<number> {
  const { positionals } = parse(args, {}, 1, command);
  const { api, close } = await connect();
  try {
    const conversationId = await resolveConversationId(api, positionals[0]);
    await (command === 'abort' ? api.abort(conversationId) : api.end(conversationId));
    io.out(command === 'abort' ? `abort sent to ${conversationId}` : `end sent to ${conversationId}`);
    return 0;
  } finally {
    await close();
  }
}

async function listCommand(args: string[], io: Io): Promise<number> {
  const { values } = parse(
    args,
    { status: { type: 'string' }, workspace: { type: 'string' }, model: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
    0,
    'list',
  );
  const limitText = (values.limit as string | undefined) ?? '50';
  if (!/^[0-9]+$/.test(limitText) || Number(limitText) < 1) throw new UsageError(`--limit must be a positive whole number, got "${limitText}".`);
  let query: string;
  try {
    query = listQuery({ status: values.status as string | undefined, workspace: values.workspace as string | undefined, model: values.model as string | undefined });
  } catch (error) {
    if (error instanceof ListFilterError) throw new UsageError(error.message);
    throw error;
  }
  const filtered = values.status !== undefined || values.workspace !== undefined || values.model !== undefined;
  const { api, close } = await connect();
  try {
    // The server lists running conversations first whatever their age: read them all (up to a bound), then sort.
    const workflows = await newestFirst(api.client, query, Number(limitText));
    if (values.json) {
      io.out(JSON.stringify(workflows.map((workflow) => listRow(workflow, 'json'))));
      return 0;
    }
    const rows = workflows.map((workflow) => listRow(workflow) as string[]);
    if (rows.length > 0) for (const line of formatTable([LIST_HEADER, ...rows])) io.out(sanitizeForTerminal(line));
    else io.out(filtered ? 'No conversation matches.' : 'No conversations yet. Start one with `durable-agent chat` or `durable-agent ask "<prompt>"`.');
    return 0;
  } finally {
    await close();
  }
}

export { formatResultLine };

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
