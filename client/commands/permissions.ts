/**
 * Permissions on the command line, as Claude Code spells them: `--permission-mode`,
 * `--allowed-tools` / `--disallowed-tools` (comma or space separated), `--add-dir`,
 * `--setting-sources`; `approve <id> <toolUseId> [--always]` and `deny <id> <toolUseId> [message]`;
 * the pending requests in `status`; and `ask`'s inline y / n / always prompt in a terminal.
 */
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { ConversationConfigInput } from '../../common/config';
import { PERMISSION_MODES, type PermissionMode, SETTING_SOURCES, type SettingSource, permissionRuleProblem, splitRuleList } from '../../common/permissions';
import { TOOL_NAMES, getToolSpec } from '../../common/tool-specs';
import { unknownRuleToolProblem } from '../claude-flags';
import type { ConversationStatus } from '../../workflows/definitions';
import type { PendingPermission, RecordedPermissionDecision } from '../../workflows/permission-gate';
import type { ConversationClient } from '../api';
import { sanitizeForTerminal } from '../format';
import { toolArgument, toolCallLine, toolPreview } from '../tool-line';
import { shorten } from '../../common/cut-text';

type Values = Record<string, string | boolean | string[] | undefined>;

/** Options of ask / start / chat that configure permissions (camelCase spellings as Claude Code accepts them too). */
export const PERMISSION_OPTIONS = {
  'permission-mode': { type: 'string' },
  'allowed-tools': { type: 'string', multiple: true },
  allowedTools: { type: 'string', multiple: true },
  'disallowed-tools': { type: 'string', multiple: true },
  disallowedTools: { type: 'string', multiple: true },
  'add-dir': { type: 'string', multiple: true },
  'setting-sources': { type: 'string' },
  'dangerously-skip-permissions': { type: 'boolean' },
} as const;

export const PERMISSION_USAGE = `Permissions (ask, start, chat):
  --permission-mode <mode>     default | acceptEdits | plan | bypassPermissions | dontAsk
                               (default: the settings' defaultMode, else default)
  --allowed-tools <rules>      allow rules, comma or space separated: "Bash(npm test:*),Edit(src/**)"
  --disallowed-tools <rules>   deny rules, same syntax
  --add-dir <dir>              another directory the file tools may use (repeatable)
  --setting-sources <list>     which settings apply: user,project,local (default all three)
  --trust                      trust this folder: its own hooks, MCP servers, allow rules and
                               directories apply (recorded in ~/.claude.json, as Claude Code's
                               trust dialog; untrusted, only its deny and ask rules do)
  --dangerously-skip-permissions
                               as --permission-mode bypassPermissions (Claude Code's flag)`;

const asList = (value: string | boolean | string[] | undefined): string[] =>
  value === undefined || typeof value === 'boolean' ? [] : Array.isArray(value) ? value : [value];

/**
 * The permissions part of a conversation config. `canApprove`: someone can answer a request
 * (`start`: later, with `approve`; `ask`: only in a terminal); otherwise it is denied at once.
 * Throws an Error with a readable message for a bad flag.
 */
export function permissionConfigFrom(values: Values, canApprove: boolean): Pick<ConversationConfigInput, 'permissions' | 'settingSources'> {
  let mode = values['permission-mode'] as string | undefined;
  if (values['dangerously-skip-permissions'] === true) {
    // Claude Code's flag: every tool runs without asking (protected paths still ask, as in bypassPermissions).
    if (mode !== undefined && mode !== 'bypassPermissions') {
      throw new Error(`--dangerously-skip-permissions is --permission-mode bypassPermissions; it cannot go with --permission-mode ${mode}.`);
    }
    mode = 'bypassPermissions';
  }
  if (mode !== undefined && !(PERMISSION_MODES as readonly string[]).includes(mode)) {
    throw new Error(`--permission-mode must be one of ${PERMISSION_MODES.join(', ')}, got "${mode}".`);
  }
  const rules = (flag: string, camel: string) => {
    const list = [...asList(values[flag]), ...asList(values[camel])].flatMap(splitRuleList);
    for (const rule of list) {
      const problem = permissionRuleProblem(rule) ?? unknownRuleToolProblem(rule, TOOL_NAMES);
      if (problem) throw new Error(`--${flag}: ${problem}`);
    }
    return list;
  };
  const allow = rules('allowed-tools', 'allowedTools');
  const deny = rules('disallowed-tools', 'disallowedTools');
  const additionalDirectories = asList(values['add-dir']).map((directory) => path.resolve(directory));
  let settingSources: SettingSource[] | undefined;
  const sourcesText = values['setting-sources'] as string | undefined;
  if (sourcesText !== undefined) {
    settingSources = sourcesText
      .split(',')
      .map((source) => source.trim())
      .filter(Boolean) as SettingSource[];
    const unknown = settingSources.filter((source) => !(SETTING_SOURCES as readonly string[]).includes(source));
    if (unknown.length > 0) throw new Error(`--setting-sources takes a comma-separated list of ${SETTING_SOURCES.join(', ')}; unknown: ${unknown.join(', ')}.`);
  }
  return {
    permissions: { mode: mode as PermissionMode | undefined, allow, deny, additionalDirectories, canApprove },
    settingSources,
  };
}

/** One line per waiting request, with the commands that answer it. */
export function formatPendingPermissions(conversationId: string, pending: PendingPermission[]): string[] {
  return pending.map(
    (request) =>
      `permission    ${request.toolUseId}  ${request.toolName} ${oneLine(JSON.stringify(request.input), 160)}  waiting since ${new Date(request.since).toISOString()}\n` +
      `              ${request.reason}\n` +
      `              approve: durable-agent approve ${conversationId} ${request.toolUseId} [--always]   deny: durable-agent deny ${conversationId} ${request.toolUseId} [message]`,
  );
}

/** The status' own pending requests and those of its running subagents (child workflows). */
export async function pendingPermissionLines(api: ConversationClient, status: ConversationStatus): Promise<string[]> {
  const lines = formatPendingPermissions(status.conversationId, status.pendingPermissions ?? []);
  for (const tool of status.toolsInFlight) {
    if (!tool.childWorkflowId) continue;
    const child = await api.status(tool.childWorkflowId).catch(() => undefined);
    if (child) lines.push(...(await pendingPermissionLines(api, child)).map((line) => `${line}  (subagent)`));
  }
  return lines;
}

/** `approve <id> <toolUseId> [--always]` / `deny <id> <toolUseId> [message]`: the decision as recorded. */
export async function decide(
  api: ConversationClient,
  conversationId: string,
  toolUseId: string,
  behavior: 'allow' | 'deny',
  options: { always?: boolean; message?: string },
): Promise<{ decision: RecordedPermissionDecision; line: string }> {
  const decision = await api.decidePermission(conversationId, {
    toolUseId,
    behavior,
    ...(options.message?.trim() ? { message: options.message.trim() } : {}),
    ...(options.always ? { remember: true } : {}),
  });
  const duplicate = decision.behavior !== behavior ? ' (it had already been decided)' : '';
  const verb = decision.behavior === 'allow' ? 'allowed' : 'denied';
  const extra = decision.addedRule ? `; allow rule ${decision.addedRule} added for this session` : '';
  const by = decision.decidedBy === 'timeout' ? ' (the wait timed out)' : '';
  return { decision, line: `${decision.toolName} ${toolUseId} ${verb}${by}${extra}${duplicate}` };
}

/**
 * `ask` in a terminal (claude -p asks inline): polls the conversation (and its subagents) for
 * waiting requests and asks y / n / always for each, until `signal` aborts.
 */
export async function promptForPermissions(
  api: ConversationClient,
  conversationId: string,
  signal: AbortSignal,
  err: (text: string) => void,
  /** Asks one question (default: on the terminal). */
  question?: (prompt: string, signal: AbortSignal) => Promise<string>,
  /** Ctrl-C on the terminal (its readline holds the keys, so no SIGINT reaches the process). */
  onInterrupt?: () => void,
): Promise<void> {
  const asked = new Set<string>();
  const readline = question ? undefined : createInterface({ input: process.stdin, output: process.stderr });
  if (onInterrupt) readline?.on('SIGINT', onInterrupt);
  const ask = question ?? ((prompt: string, abort: AbortSignal) => readline!.question(prompt, { signal: abort }));
  try {
    while (!signal.aborted) {
      const waiting = await collectPending(api, conversationId).catch(() => []);
      for (const { workflowId, request } of waiting) {
        if (asked.has(request.toolUseId) || signal.aborted) continue;
        asked.add(request.toolUseId);
        err(sanitizeForTerminal(permissionQuestionLines(request, workflowId === conversationId ? '' : ' (subagent)').join('\n')));
        const answer = await askAllow(ask, signal);
        if (signal.aborted || answer === undefined) return;
        const { line } = await decide(api, workflowId, request.toolUseId, answer === 'deny' ? 'deny' : 'allow', { always: answer === 'always' });
        err(sanitizeForTerminal(line));
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    readline?.close();
  }
}

/** The question asked for each waiting request (ask and chat). */
export const ALLOW_QUESTION = 'Allow? [y]es / [n]o / [a]lways: ';

/** Asks until the answer is y(es) / n(o) / a(lways); undefined once `signal` aborts. */
export async function askAllow(
  question: (prompt: string, signal: AbortSignal) => Promise<string>,
  signal: AbortSignal,
): Promise<'allow' | 'deny' | 'always' | undefined> {
  while (!signal.aborted) {
    // A question that cannot be asked (the terminal closed) is a no, as before.
    const answer = (await question(ALLOW_QUESTION, signal).catch(() => 'n')).trim().toLowerCase();
    if (signal.aborted) return undefined;
    if (['y', 'yes'].includes(answer)) return 'allow';
    if (['n', 'no'].includes(answer)) return 'deny';
    if (['a', 'always'].includes(answer)) return 'always';
  }
  return undefined;
}

/**
 * The lines before "Allow?" (ask and chat): the call as every view shows it — `⚠ Write(notes.txt)`
 * — why it asks, and a preview of what it would do (a Write's content, an Edit's change).
 */
export function permissionQuestionLines(request: Pick<PendingPermission, 'toolName' | 'input' | 'reason'>, subagent = ''): string[] {
  const call = toolCallLine(request.toolName, toolArgument(request.toolName, request.input)).replace(/^● /, '⚠ ');
  return [`${call}${subagent} needs permission: ${request.reason}`, ...toolPreview(request.toolName, request.input)];
}

/** A waiting call's input in a few words: the tool's own summary (`Write notes.txt`), else its JSON. */
export function permissionInputSummary(request: Pick<PendingPermission, 'toolName' | 'input'>, max = 160): string {
  const spec = getToolSpec(request.toolName);
  const parsed = spec?.inputSchema.safeParse(request.input);
  if (spec && parsed?.success) {
    try {
      return oneLine(spec.summarize(parsed.data), max);
    } catch {
      /* fall back to the JSON */
    }
  }
  return oneLine(JSON.stringify(request.input) ?? '', max);
}

/** Waiting requests of the conversation and of its running subagents (child workflows). */
export async function collectPending(api: ConversationClient, workflowId: string): Promise<Array<{ workflowId: string; request: PendingPermission }>> {
  const status = await api.status(workflowId);
  const found = (status.pendingPermissions ?? []).map((request) => ({ workflowId, request }));
  for (const tool of status.toolsInFlight) {
    if (tool.childWorkflowId) found.push(...(await collectPending(api, tool.childWorkflowId).catch(() => [])));
  }
  return found;
}

/** Runs of whitespace as one space (not trimmed: the input is shown as the model wrote it), shortened. */
function oneLine(text: string, max: number): string {
  return shorten(text.replace(/\s+/g, ' '), max);
}
