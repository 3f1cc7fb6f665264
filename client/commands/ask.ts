/**
 * `durable-agent ask` beyond starting a conversation — following `claude -p`: the prompt from the
 * arguments, stdin (prompt first, then what was piped, joined by a newline) or a file (`@path`);
 * `--output-format text|json|stream-json` (stream-json requires `--verbose`); `--max-budget-usd`
 * and `--json-schema` (a JSON string or `@path`), shared with `start`. The printing itself is
 * a pure mapping in `client/output-formats.ts`.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type ConversationConfigInput, DEFAULT_MODEL } from '../../common/config';
import type { ResultMessage } from '../../common/result';
import { OutputSchemaError, STRUCTURED_OUTPUT_TOOL_NAME, parseOutputSchema } from '../../common/structured-output';
import { TOOL_NAMES } from '../../common/tool-specs';
import type { AssistantContentBlock } from '../../common/messages';
import { webSearchDisplay } from '../../common/web-search';
import type { ConversationEvent } from '../../workflows/definitions';
import type { ConversationClient } from '../api';
import { sanitizeForTerminal } from '../format';
import { LiveTextPrinter } from '../live-printer';
import { OUTPUT_FORMATS, type OutputFormat, formatFinalOutput, sdkMessagesFor, systemInitMessage } from '../output-formats';
import { UsageError } from '../usage-error';
import { type CommandInput, type Io, type OptionValues, configFrom, withCheckedModels } from '../command-line';
import { warnIfNoWorker, withConnection } from '../connect';
import { checkContinueFlags, continuedConversation, describeFork, forkIgnoredOptionsLine, forkSession, resumeFrom } from '../continue-conversation';
import { promptForPermissions } from './permissions';
import { checkHeadlessWorkspace } from '../workspace-trust';

/** `--output-format` and `--verbose`, checked as Claude Code checks them. */
export function outputFormatFrom(values: OptionValues): OutputFormat {
  const format = (values['output-format'] as string | undefined) ?? 'text';
  if (!(OUTPUT_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--output-format must be "text", "json" or "stream-json", got "${format}".`);
  }
  if (format === 'stream-json' && !values.verbose) throw new UsageError('--output-format stream-json requires --verbose (as with claude -p).');
  return format as OutputFormat;
}

/** `--max-budget-usd` and `--json-schema` as conversation config; a bad value is a UsageError before anything starts. */
export function sessionLimitsFrom(values: OptionValues, cwd: string = process.cwd()): Pick<ConversationConfigInput, 'maxBudgetUsd' | 'jsonSchema'> {
  const limits: Pick<ConversationConfigInput, 'maxBudgetUsd' | 'jsonSchema'> = {};
  const budgetText = values['max-budget-usd'] as string | undefined;
  if (budgetText !== undefined) {
    const budget = /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(budgetText.trim()) ? Number(budgetText) : NaN;
    if (!Number.isFinite(budget) || budget <= 0) {
      throw new UsageError(`--max-budget-usd must be a positive amount in dollars (e.g. 0.50), got "${budgetText}".`);
    }
    limits.maxBudgetUsd = budget;
  }
  const schemaText = values['json-schema'] as string | undefined;
  if (schemaText !== undefined) {
    const text = schemaText.startsWith('@') ? readArgumentFile('--json-schema', schemaText.slice(1), cwd) : schemaText;
    try {
      limits.jsonSchema = parseOutputSchema(text);
    } catch (error) {
      if (error instanceof OutputSchemaError) throw new UsageError(`--json-schema: ${error.message}.`);
      throw error;
    }
  }
  return limits;
}

/**
 * The prompt as `claude -p` takes it: the arguments (one `@path` argument names a file holding
 * the prompt), then whatever is piped on stdin, joined by a newline.
 */
export async function readAskPrompt(positionals: string[], io: Io, cwd: string = process.cwd()): Promise<string> {
  let prompt = positionals.join(' ');
  if (positionals.length === 1 && /^@\S/.test(positionals[0])) prompt = readArgumentFile('ask', positionals[0].slice(1), cwd);
  const piped = io.stdin && !io.stdin.isTTY ? await readStdin(io.stdin, io) : '';
  const combined = [prompt, piped].filter(Boolean).join('\n');
  if (combined.trim() === '') throw new UsageError('ask: the prompt is empty (give it as an argument, as @file, or on stdin).');
  return combined;
}

/**
 * With a schema, a result a script can trust (issue 19, item 12): a query that ended "success"
 * without structured output (the model never called the tool, and the re-prompts ran out) is
 * an error, `error_max_structured_output_retries`, with the reason in `errors`.
 */
export function requireStructuredOutput(result: ResultMessage, config: Pick<ConversationConfigInput, 'jsonSchema'>): ResultMessage {
  if (!config.jsonSchema || result.is_error || result.structured_output !== undefined) return result;
  return {
    ...result,
    is_error: true,
    subtype: 'error_max_structured_output_retries',
    errors: [...(result.errors ?? []), 'The model ended without giving the structured output the --json-schema asks for.'],
  };
}

/**
 * The web pages the query's answers cite (issue 33), listed after the printed answer: the
 * assistant messages since the last prompt the feed showed.
 */
class CitedSourcesOfQuery {
  private content: AssistantContentBlock[] = [];

  onEvent(event: ConversationEvent): void {
    if (event.message.type === 'user_input') this.content = [];
    else if (event.message.type === 'assistant') this.content.push(...event.message.message.content);
  }

  lines(): string[] {
    return webSearchDisplay(this.content).sources;
  }
}

/**
 * Waits for the result and prints it in `format`; stream-json prints the init message, each
 * message as the feed shows it, then the result.
 */
export async function printAskOutput(options: {
  api: ConversationClient;
  conversationId: string;
  inputUuid: string;
  config: ConversationConfigInput;
  format: OutputFormat;
  io: Io;
  /** The conversation closes once it has answered (a one-shot's own, not a fork's): its result is its workflow's. */
  closesWithResult?: boolean;
}): Promise<ResultMessage> {
  const { api, conversationId, inputUuid, config, format, io, closesWithResult } = options;
  const wait = async (waitOptions?: Parameters<ConversationClient['waitForResult']>[2]) =>
    requireStructuredOutput(await api.waitForResult(conversationId, inputUuid, waitOptions), config);
  if (format === 'text' && io.tty) {
    // On a terminal the answer streams from the live channel; piped, it is printed once final.
    const printer = new LiveTextPrinter(io.tty.write);
    const sources = new CitedSourcesOfQuery();
    const result = await wait({
      onLive: (entry) => {
        printer.onLive(entry);
        if (entry.kind === 'event') sources.onEvent(entry.event);
      },
      closesWithResult,
    });
    printer.finish(result);
    const cited = sources.lines();
    if (cited.length > 0) io.tty.write(`${sanitizeForTerminal(cited.join('\n'))}\n`);
    if (result.is_error && result.errors?.length) io.err(`Error: ${result.errors.join('; ')}`);
    return result;
  }
  if (format !== 'stream-json') {
    const sources = new CitedSourcesOfQuery();
    // Cited sources come from the query's messages: they are read only when web search is offered;
    // otherwise the result is all there is to wait for (one long poll when the conversation closes with it).
    const listSources = format === 'text' && config.webSearch !== undefined;
    const result = await wait(listSources ? { onEvent: (event) => sources.onEvent(event) } : { closesWithResult });
    // Text reaches a terminal: escape sequences from the model are neutralised (JSON escapes them itself).
    const output = [formatFinalOutput(format, result), ...(format === 'text' ? sources.lines() : [])].join('\n');
    io.out(format === 'text' ? sanitizeForTerminal(output) : output);
    if (format === 'text' && result.is_error && result.errors?.length) io.err(sanitizeForTerminal(`Error: ${result.errors.join('; ')}`));
    return result;
  }
  const tools = [...(config.tools ?? TOOL_NAMES), ...(config.jsonSchema ? [STRUCTURED_OUTPUT_TOOL_NAME] : [])];
  const init = systemInitMessage({
    sessionId: conversationId,
    uuid: randomUUID(),
    cwd: config.cwd,
    model: config.model ?? DEFAULT_MODEL,
    tools,
    permissionMode: config.permissions?.mode,
  });
  io.out(JSON.stringify(init));
  return wait({
    onEvent: (event: ConversationEvent) => {
      // The result line goes out after the check below.
      if (event.message.type === 'result') return;
      for (const message of sdkMessagesFor(event, conversationId)) io.out(JSON.stringify(message));
    },
  }).then((result) => {
    for (const message of sdkMessagesFor({ seq: -1, message: result } as ConversationEvent, conversationId)) io.out(JSON.stringify(message));
    return result;
  });
}

function readArgumentFile(option: string, file: string, cwd: string): string {
  const resolved = path.resolve(cwd, file);
  try {
    return readFileSync(resolved, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : ((error as Error).message ?? String(error));
    throw new UsageError(`${option}: cannot read ${resolved}: ${why}.`);
  }
}

/** Reads stdin to its end; like Claude Code, gives up with a warning when nothing arrives within 3 s. */
function readStdin(stdin: NodeJS.ReadableStream, io: Io, firstDataTimeoutMs = 3_000): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    let received = false;
    const finish = () => {
      clearTimeout(timer);
      stdin.off('data', onData);
      stdin.off('end', finish);
      stdin.off('error', finish);
      stdin.pause();
      resolve(data);
    };
    const onData = (chunk: Buffer | string) => {
      received = true;
      data += chunk.toString();
    };
    const timer = setTimeout(() => {
      if (received) return;
      io.err('Warning: nothing arrived on stdin within 3 s; going on without it (redirect stdin from /dev/null to skip the wait).');
      finish();
    }, firstDataTimeoutMs);
    stdin.on('data', onData);
    stdin.once('end', finish);
    stdin.once('error', finish);
  });
}

/** `durable-agent ask [options] <prompt>` (and `-p`): start a conversation, wait, print the answer; exit 1 on an error result, 130 after Ctrl-C. */
export async function askCommand({ values, positionals }: CommandInput, io: Io): Promise<number> {
  const format = outputFormatFrom(values);
  checkContinueFlags(values);
  // claude -p: a terminal answers permission requests inline; without one they are denied at once.
  const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const config = await checkHeadlessWorkspace(
    await withCheckedModels({ ...configFrom(values, true, interactive), ...sessionLimitsFrom(values) }),
    values,
    io.err,
  );
  const prompt = await readAskPrompt(positionals, io);
  return withConnection(async (api, taskQueue) => {
    const prompting = new AbortController();
    let removeInterrupt = () => {};
    try {
      // -c / -r: a new one-shot conversation that carries on from that one's transcript (claude -p -c);
      // with --fork-session, forked from it now, in its own copy of the workspace, with its settings.
      const from = await continuedConversation(api, values, config.cwd);
      const forked = from && values['fork-session'] ? await forkSession(api, from, { taskQueue, prompt }) : undefined;
      if (forked) {
        io.err(describeFork(forked));
        const ignored = forkIgnoredOptionsLine(values, forked.parentConversationId);
        if (ignored) io.err(ignored);
      }
      const resume = from && !forked ? await resumeFrom(api, from) : undefined;
      // Whether a worker polls is asked beside the start (one round trip less before the wait).
      const [{ conversationId, inputUuid }] = await Promise.all([
        forked ?? api.start({ prompt, config, taskQueue, resume }),
        warnIfNoWorker(api, taskQueue, io),
      ]);
      // The fork's own config is its parent's: its --json-schema, if any, is not this command's.
      const shownConfig = forked ? { ...config, cwd: forked.fork.cwd, jsonSchema: undefined } : config;
      // Ctrl-C stops the query, as with claude -p; a second one leaves at once (issue 19, item 4).
      let interrupts = 0;
      const interrupt = () => {
        interrupts++;
        if (interrupts > 1) process.exit(130);
        io.err('\nInterrupting… (Ctrl-C again to quit now)');
        api
          .abort(conversationId, 'Ctrl-C in ask')
          .catch((error: unknown) =>
            io.err(`Could not interrupt ${conversationId}: ${error instanceof Error ? error.message : String(error)} (Ctrl-C again to quit now).`),
          );
      };
      process.on('SIGINT', interrupt);
      removeInterrupt = () => process.off('SIGINT', interrupt);
      if (interactive) {
        void promptForPermissions(api, conversationId, prompting.signal, io.err, undefined, interrupt).catch((error: unknown) =>
          io.err(`Error: ${String(error)}`),
        );
      }
      const result = await printAskOutput({
        api,
        conversationId,
        inputUuid: inputUuid!,
        config: shownConfig,
        format,
        io,
        closesWithResult: !forked && config.oneShot === true,
      });
      return interrupts > 0 ? 130 : result.is_error ? 1 : 0;
    } finally {
      removeInterrupt();
      prompting.abort();
    }
  });
}
