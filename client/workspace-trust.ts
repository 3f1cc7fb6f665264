/**
 * Before a conversation starts (issue 29): its settings files are read on this machine, and one
 * that cannot be read stops everything with its file, line and column (nothing is started, as
 * Claude Code fails on a bad `--mcp-config`); then the workspace's trust — `--trust` (recorded in
 * `~/.claude.json`, as Claude Code's trust dialog records it), the person's own `~/.claude.json`,
 * or chat's question. An untrusted workspace's own hooks, MCP servers, allow rules and directories
 * are not applied by the worker; `ask`, `-p` and `start` say so in one line.
 */
import os from 'node:os';
import readline from 'node:readline';
import type { ConversationConfigInput } from '../common/config';
import { SETTING_SOURCES } from '../common/permissions';
import { unreadableSettings } from '../activities/settings';
import {
  describeIgnoredSettings,
  recordWorkspaceTrust,
  settingsIgnoredWithoutTrust,
  trustedDirectoryFor,
  untrustedWorkspaceLine,
} from '../activities/workspace-trust';
import { type OptionValues, REMOTE_CWD_VARIABLE } from './command-line';

/** Settings that cannot be read: the conversation is not started (exit code 1, the files named). */
export class UnreadableSettingsError extends Error {
  override readonly name = 'UnreadableSettingsError';
  constructor(readonly problems: readonly string[]) {
    super(
      `the settings cannot be read, so nothing was started (a conversation must not run with fewer rules than they hold). Fix ${problems.length === 1 ? 'it' : 'them'}:\n${problems.map((problem) => `  ${problem}`).join('\n')}`,
    );
  }
}

/** Where the trust step stands for a new conversation. */
export interface WorkspaceCheck {
  /** Trusted here (`--trust`, or this machine's `~/.claude.json`): the config says so to the worker. */
  trusted: boolean;
  /** Untrusted: what the workspace's own files hold that will not be applied (undefined: nothing). */
  ignored?: string;
}

/**
 * Reads the settings a new conversation will use (throws UnreadableSettingsError), records
 * `--trust`, and says whether the workspace is trusted and what it would otherwise ignore.
 */
export async function checkWorkspace(config: ConversationConfigInput, values: OptionValues, home = os.homedir()): Promise<WorkspaceCheck> {
  const trustFlag = values.trust === true;
  // A workspace only the worker's host has: that host's ~/.claude.json decides, or --trust.
  if (process.env[REMOTE_CWD_VARIABLE] === '1') return { trusted: trustFlag };
  const sources = config.settingSources ?? SETTING_SOURCES;
  const problems = await unreadableSettings(config.cwd, sources, home, config.mcpConfig ?? []);
  if (problems.length > 0) throw new UnreadableSettingsError(problems);
  if (trustFlag) {
    await recordWorkspaceTrust(config.cwd, home);
    return { trusted: true };
  }
  if ((await trustedDirectoryFor(config.cwd, home)) !== undefined) return { trusted: true };
  return { trusted: false, ignored: describeIgnoredSettings(await settingsIgnoredWithoutTrust(config.cwd, sources, home), config.cwd) };
}

/** The config with the trust the check found (only `true` is said: the worker's host may still trust it). */
function withTrust<T extends ConversationConfigInput>(config: T, check: WorkspaceCheck): T {
  return check.trusted ? { ...config, trusted: true } : config;
}

/** For `ask`, `-p` and `start`: the check, and the one line on stderr when settings were ignored. */
export async function checkHeadlessWorkspace<T extends ConversationConfigInput>(config: T, values: OptionValues, err: (text: string) => void): Promise<T> {
  const check = await checkWorkspace(config, values);
  if (!check.trusted && check.ignored) err(untrustedWorkspaceLine(config.cwd, check.ignored));
  return withTrust(config, check);
}

/** The question chat asks once, in an untrusted workspace with settings of its own (Claude Code's trust dialog). */
function trustQuestion(cwd: string, ignored: string): string {
  return [
    `Do you trust the files in this folder? ${cwd}`,
    `It has settings of its own: ${ignored}.`,
    'Its hooks and MCP servers run programs, and its allow rules let tools run without asking.',
    '  1. Yes, trust this folder (recorded in ~/.claude.json)',
    '  2. No, continue without them (its deny and ask rules still apply)',
    'Answer 1 or 2: ',
  ].join('\n');
}

/** Yes (`1`, `y`, `yes`), no (`2`, `n`, `no`), or undefined for anything else (asked again). */
export function trustAnswer(line: string): boolean | undefined {
  const answer = line.trim().toLowerCase();
  if (['1', 'y', 'yes'].includes(answer)) return true;
  if (['2', 'n', 'no'].includes(answer)) return false;
  return undefined;
}

/**
 * Chat's trust step for a new conversation: the check, then — untrusted, with settings to
 * ignore — the question; Yes records the trust. End of input counts as No.
 */
export async function checkChatWorkspace<T extends ConversationConfigInput>(
  config: T,
  values: OptionValues,
  terminal: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream },
  home = os.homedir(),
): Promise<T> {
  const check = await checkWorkspace(config, values, home);
  if (check.trusted || !check.ignored) return withTrust(config, check);
  const rl = readline.createInterface({ input: terminal.input, terminal: false });
  // Lines are queued: a paste of several answers is read one at a time, none lost between questions.
  const lines: Array<string | undefined> = [];
  let wake: (() => void) | undefined;
  rl.on('line', (line) => {
    lines.push(line);
    wake?.();
  });
  rl.once('close', () => {
    lines.push(undefined);
    wake?.();
  });
  const nextLine = async (): Promise<string | undefined> => {
    while (lines.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    return lines.shift();
  };
  try {
    terminal.output.write(trustQuestion(config.cwd, check.ignored));
    for (;;) {
      const line = await nextLine();
      const yes = line === undefined ? false : trustAnswer(line);
      if (yes === undefined) {
        terminal.output.write('Answer 1 (yes, trust this folder) or 2 (no, continue without its settings): ');
        continue;
      }
      if (!yes) {
        terminal.output.write("\nContinuing without the folder's own settings.\n");
        return config;
      }
      const { file } = await recordWorkspaceTrust(config.cwd, home);
      terminal.output.write(`Trusted ${config.cwd} (recorded in ${file}).\n`);
      return { ...config, trusted: true };
    }
  } finally {
    rl.close();
  }
}
