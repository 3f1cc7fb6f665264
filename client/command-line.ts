/**
 * What the CLI's commands share to read their command line (parsed by commander in client/cli.ts):
 * the conversation options of ask, start and chat (`configFrom`), and the output streams a command
 * writes to.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import type { ConversationConfigInput } from '../common/config';
import { worktreeNameProblem } from '../common/worktrees';
import { permissionConfigFrom } from './commands/permissions';
import { checkModels, effortFrom, thinkingFrom } from './model-check';
import { UsageError } from './usage-error';
import { webSearchConfigSchema } from '../common/web-search';

/** Where a command prints, and what it may read. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  /** `ask` reads a piped prompt from it, as `claude -p` does; absent: none is read. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** A terminal: answers stream as they are written (`write` appends without a newline). */
  tty?: { write: (text: string) => void };
}

/** The parsed options of a command. */
export type OptionValues = Record<string, string | boolean | string[] | undefined>;

/** A command's parsed command line (client/cli.ts, commander): options keyed by their long name, then the arguments in order. */
export interface CommandInput {
  values: OptionValues;
  positionals: string[];
}

/** Set to 1 when --cwd names a directory on a remote worker host, not on this machine. */
export const REMOTE_CWD_VARIABLE = 'DURABLE_AGENT_REMOTE_CWD';

/** The conversation config from the options; a bad value is a UsageError before anything connects. */
export function configFrom(values: OptionValues, oneShot: boolean, canApprove = true): ConversationConfigInput {
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
    // A one-shot conversation ends with its result and cannot be rewound: no checkpoint before its prompt (the
    // checkpoints before mutating tools, for exactly-once after a crash, are the worker's and still taken).
    ...(oneShot ? { checkpoints: false } : {}),
    toolTaskQueue: workspaceQueueFrom(values['workspace-queue'] as string | undefined),
    customSystemPrompt: values['system-prompt'] as string | undefined,
    appendSystemPrompt: values['append-system-prompt'] as string | undefined,
    // Cron jobs run in the user's local time, as Claude Code's (issue 21 §5).
    timeZone: localTimeZone(),
    ...mcpConfigFrom(values),
    ...pluginDirsFrom(values),
    ...worktreeFrom(values),
    ...setupFrom(values),
    ...webSearchConfigFrom(values['web-search']),
  };
}

/** --init / --maintenance (issue 33): the Setup hooks' trigger; both at once is a usage error. */
function setupFrom(values: OptionValues): Pick<ConversationConfigInput, 'setup'> {
  if (values.init && values.maintenance) throw new UsageError('--init and --maintenance cannot be used together: Setup runs with one trigger.');
  return values.init ? { setup: 'init' } : values.maintenance ? { setup: 'maintenance' } : {};
}

/** --plugin-dir <path> (issue 33, repeatable): absolute, from where the command ran; read on the worker (a missing one ends the conversation before its first prompt). */
function pluginDirsFrom(values: OptionValues): Pick<ConversationConfigInput, 'pluginDirs'> {
  const given = (values['plugin-dir'] as string[] | undefined) ?? [];
  if (given.some((value) => value.trim() === '')) throw new UsageError('--plugin-dir needs a folder path.');
  return given.length > 0 ? { pluginDirs: given.map((value) => path.resolve(value)) } : {};
}

/** -w / --worktree [name] (issue 33): the worktree the conversation starts in; a bad name is a usage error before anything connects. */
function worktreeFrom(values: OptionValues): Pick<ConversationConfigInput, 'worktree'> {
  const given = values.worktree as string | boolean | undefined;
  if (given === undefined || given === false) return {};
  if (given === true) return { worktree: '' };
  const problem = worktreeNameProblem(given);
  if (problem) throw new UsageError(`--worktree ${given}: ${problem}.`);
  return { worktree: given };
}

/** --web-search (issue 33): alone, the server tool with its defaults; with JSON settings, those (checked here). */
function webSearchConfigFrom(value: unknown): Pick<ConversationConfigInput, 'webSearch'> {
  if (value === undefined) return {};
  if (value === true) return { webSearch: {} };
  let settings: unknown;
  try {
    settings = JSON.parse(String(value));
  } catch {
    throw new UsageError(`--web-search takes JSON settings such as {"allowedDomains":["docs.temporal.io"]}, got "${String(value)}".`);
  }
  const parsed = webSearchConfigSchema.safeParse(settings);
  if (!parsed.success)
    throw new UsageError(`--web-search: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'settings'}: ${issue.message}`).join('; ')}`);
  return { webSearch: parsed.data };
}

/** This machine's IANA time zone (TZ or the system's), for cron jobs; undefined when Intl cannot say. */
export function localTimeZone(): string | undefined {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
  } catch {
    return undefined;
  }
}

/**
 * --mcp-config (files or inline JSON, repeatable) and --strict-mcp-config. A relative file is
 * resolved against the directory the command ran in, as Claude Code does; the worker reads it.
 */
function mcpConfigFrom(values: OptionValues): Pick<ConversationConfigInput, 'mcpConfig' | 'strictMcpConfig'> {
  const given = (values['mcp-config'] as string[] | undefined) ?? [];
  if (given.some((value) => value.trim() === '')) throw new UsageError('--mcp-config needs a file path or a JSON string.');
  const mcpConfig = given.map((value) => (value.trim().startsWith('{') ? value : path.resolve(value)));
  if (values['strict-mcp-config'] && mcpConfig.length === 0)
    throw new UsageError('--strict-mcp-config needs --mcp-config: it uses only the servers those name.');
  return { ...(mcpConfig.length > 0 && { mcpConfig }), ...(values['strict-mcp-config'] === true && { strictMcpConfig: true }) };
}

/** --effort and --thinking (issue 18; client/model-check.ts). */
function thinkingConfigFrom(values: OptionValues): Pick<ConversationConfigInput, 'effort' | 'thinking'> {
  try {
    const effort = effortFrom(values.effort as string | undefined);
    const thinking = thinkingFrom(values.thinking as string | undefined);
    return { ...(effort ? { effort } : {}), ...(thinking !== undefined ? { thinking } : {}) };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The config with its models resolved and checked against the Models API before anything starts. */
export async function withCheckedModels<T extends ConversationConfigInput>(config: T): Promise<T> {
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

/** The prompt from the remaining arguments; empty is a UsageError. */
export function promptFrom(positionals: string[], command: string): string {
  const prompt = positionals.join(' ').trim();
  if (!prompt) throw new UsageError(`${command}: the prompt is empty.`);
  return prompt;
}
