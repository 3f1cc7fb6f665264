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
import { TOOL_NAMES } from '../../common/tool-specs';
import { unknownRuleToolProblem } from '../claude-flags';
import type { ConversationStatus } from '../../workflows/definitions';
import type { PendingPermission, RecordedPermissionDecision } from '../../workflows/permissions/types';
import type { ConversationClient } from '../api';
import { sanitizeForTerminal, terminalWidth } from '../format';
import { approvalView } from '../tool-line';
import { parseCutText } from '../../common/cut-text';
import { toolUseBlocksOf } from '../../common/messages';
import { showInvisibleCharacters } from '../../common/visible-text';
import { transcriptSliceQuery } from '../../workflows/definitions';
import { cliCommand } from '../invocation';

type Values = Record<string, string | boolean | string[] | undefined>;

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

/**
 * Each waiting request, with the commands that answer it: the call as a person approves it
 * (client/tool-line.ts approvalView: a command whole, wrapped to `width`, nothing invisible).
 */
export function formatPendingPermissions(conversationId: string, pending: PendingPermission[], width = terminalWidth()): string[] {
  const indent = ' '.repeat(14);
  return pending.map((request) => {
    const { call, lines } = approvalView(request.toolName, request.input, width, indent);
    return [
      `permission    ${request.toolUseId}  ${call}  waiting since ${new Date(request.since).toISOString()}`,
      ...lines,
      `${indent}${showInvisibleCharacters(request.reason, 'show')}`,
      `${indent}approve: ${cliCommand(`approve ${conversationId} ${request.toolUseId}`)} [--always]   deny: ${cliCommand(`deny ${conversationId} ${request.toolUseId}`)} [message]`,
    ].join('\n');
  });
}

/** The status' own pending requests and those of its running subagents (child workflows). */
export async function pendingPermissionLines(api: ConversationClient, status: ConversationStatus): Promise<string[]> {
  const pending = await Promise.all((status.pendingPermissions ?? []).map((request) => withWholeInput(api, status.conversationId, request)));
  const lines = formatPendingPermissions(status.conversationId, pending);
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
  return { decision, line: showInvisibleCharacters(`${decision.toolName} ${toolUseId} ${verb}${by}${extra}${duplicate}`, 'show') };
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
        err(
          sanitizeForTerminal(permissionQuestionLines(request, workflowId === conversationId ? '' : ' (subagent)', terminalWidth(process.stderr)).join('\n')),
        );
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
 * — why it asks, and what it would do: a command whole (wrapped to `width`, never cut, invisible
 * characters shown), a Write's content, an Edit's change.
 */
export function permissionQuestionLines(
  request: Pick<PendingPermission, 'toolName' | 'input' | 'reason'>,
  subagent = '',
  width = terminalWidth(),
  color = false,
): string[] {
  const { call, lines } = approvalView(request.toolName, request.input, width, '    ', color);
  return [`⚠ ${call}${subagent} needs permission: ${showInvisibleCharacters(request.reason, 'show')}`, ...lines];
}

/** Waiting requests of the conversation and of its running subagents (child workflows). */
export async function collectPending(api: ConversationClient, workflowId: string): Promise<Array<{ workflowId: string; request: PendingPermission }>> {
  const status = await api.status(workflowId);
  const found = await Promise.all(
    (status.pendingPermissions ?? []).map(async (request) => ({ workflowId, request: await withWholeInput(api, workflowId, request) })),
  );
  for (const tool of status.toolsInFlight) {
    if (tool.childWorkflowId) found.push(...(await collectPending(api, tool.childWorkflowId).catch(() => [])));
  }
  return found;
}

/** Messages at the transcript's end searched for a waiting call (its assistant message is the last one, or near it). */
const TRANSCRIPT_TAIL_MESSAGES = 8;

/**
 * `request` with its whole input: the status query cuts long fields (`… (N characters)`), and a
 * person must see all of what they approve — the call is then read from the end of the
 * transcript. As the status gave it when it is not there (the cut stays marked with its length).
 */
export async function withWholeInput(api: ConversationClient, workflowId: string, request: PendingPermission): Promise<PendingPermission> {
  const fields = typeof request.input === 'object' && request.input !== null ? Object.values(request.input) : [];
  if (!fields.some((value) => typeof value === 'string' && parseCutText(value) !== undefined)) return request;
  try {
    const handle = api.client.workflow.getHandle(workflowId);
    const { length } = await handle.query(transcriptSliceQuery, { from: Number.MAX_SAFE_INTEGER, maxBytes: 0 });
    const { messages } = await handle.query(transcriptSliceQuery, { from: Math.max(0, length - TRANSCRIPT_TAIL_MESSAGES) });
    for (const message of messages) {
      if (message.type !== 'assistant') continue;
      const call = toolUseBlocksOf(message).find((block) => block.id === request.toolUseId);
      if (call) return { ...request, input: call.input };
    }
  } catch {
    /* as the status gave it */
  }
  return request;
}
