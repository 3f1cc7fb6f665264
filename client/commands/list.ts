/**
 * `durable-agent list [--status s] [--workspace dir] [--model m] [--limit n]`: conversations on
 * the server, newest first, filtered and shown through the search attributes
 * (common/search-attributes.ts) — the same columns and filters the Temporal UI offers.
 */
import os from 'node:os';
import path from 'node:path';
import type { ConversationClient } from '../api';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import {
  COST_SEARCH_ATTRIBUTE,
  FIRST_PROMPT_SEARCH_ATTRIBUTE,
  LAST_ACTIVITY_SEARCH_ATTRIBUTE,
  MODEL_SEARCH_ATTRIBUTE,
  SEARCH_STATUSES,
  STATUS_SEARCH_ATTRIBUTE,
  TURNS_SEARCH_ATTRIBUTE,
  WORKSPACE_SEARCH_ATTRIBUTE,
  FORKED_FROM_SEARCH_ATTRIBUTE,
  sqlSafeKeyword,
} from '../../common/search-attributes';
import { formatUsd } from '../../common/money';
import { oneLine } from '../../common/cut-text';
import type { CommandInput, Io } from '../command-line';
import { withConnection } from '../connect';
import { sanitizeForTerminal } from '../format';
import { UsageError } from '../usage-error';
import { cliCommand } from '../invocation';

export interface ListFilters {
  status?: string;
  workspace?: string;
  model?: string;
}

/** Thrown for a filter value `list` cannot use (a usage error). */
export class ListFilterError extends UsageError {
  override readonly name = 'ListFilterError';
}

/** The visibility query for these filters. Values are quoted; a workspace is made absolute. */
export function listQuery(filters: ListFilters): string {
  // A run that continued as new (after /compact, an upgrade, a long history) is the same conversation as its
  // successor: only the latest run is listed (issue 32, item 3).
  const clauses = [`WorkflowType = 'conversationWorkflow'`, `ExecutionStatus != 'ContinuedAsNew'`];
  if (filters.status !== undefined) {
    if (!(SEARCH_STATUSES as readonly string[]).includes(filters.status)) {
      throw new ListFilterError(`--status must be one of ${SEARCH_STATUSES.join(', ')}; got "${filters.status}".`);
    }
    clauses.push(`${STATUS_SEARCH_ATTRIBUTE.name} = ${quote(filters.status)}`);
  }
  if (filters.workspace !== undefined) clauses.push(`${WORKSPACE_SEARCH_ATTRIBUTE.name} = ${quote(sqlSafeKeyword(path.resolve(filters.workspace)))}`);
  if (filters.model !== undefined) clauses.push(`${MODEL_SEARCH_ATTRIBUTE.name} = ${quote(sqlSafeKeyword(filters.model))}`);
  return clauses.join(' AND ');
}

/** A visibility-query string literal. */
function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The header of {@link listRow}'s columns. */
export const LIST_HEADER = ['ID', 'STATUS', 'TURNS', 'COST', 'LAST ACTIVITY', 'WORKSPACE', 'FIRST PROMPT'];

/** Rows as aligned columns (the last one is not padded). */
export function formatTable(rows: string[][]): string[] {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  '));
}

/** `list --json`: one object per conversation. */
export interface ListEntry {
  id: string;
  status: string;
  turns?: number;
  costUsd?: number;
  lastActivity: string;
  workspace?: string;
  firstPrompt?: string;
  /** A fork's parent (issue 31). */
  forkedFrom?: string;
}

type Listed = Pick<WorkflowExecutionInfo, 'workflowId' | 'status' | 'startTime' | 'typedSearchAttributes'>;

/**
 * One conversation: id, status (the conversation's, or how its run closed when that is not
 * "ended"), turns, cost, last activity, workspace and first prompt. Conversations started before
 * these attributes existed show "-".
 */
export function listRow(workflow: Listed): string[];
export function listRow(workflow: Listed, shape: 'json'): ListEntry;
export function listRow(workflow: Listed, shape: 'table' | 'json' = 'table'): string[] | ListEntry {
  const attributes = workflow.typedSearchAttributes;
  const execution = workflow.status.name.toLowerCase();
  const status = attributes.get(STATUS_SEARCH_ATTRIBUTE);
  // A run that failed or was terminated says so, whatever status it last reported.
  const shown = execution === 'running' || execution === 'completed' ? (status ?? execution) : execution;
  const turns = attributes.get(TURNS_SEARCH_ATTRIBUTE);
  const cost = attributes.get(COST_SEARCH_ATTRIBUTE);
  const lastActivity = lastActiveAt(workflow)
    .toISOString()
    .replace(/\.\d+Z$/, 'Z');
  // Empty: a chat conversation before its first query (it is named then).
  const prompt = attributes.get(FIRST_PROMPT_SEARCH_ATTRIBUTE) || undefined;
  const workspace = attributes.get(WORKSPACE_SEARCH_ATTRIBUTE);
  const forkedFrom = attributes.get(FORKED_FROM_SEARCH_ATTRIBUTE);
  if (shape === 'json') {
    return { id: workflow.workflowId, status: shown, turns, costUsd: cost, lastActivity, workspace, firstPrompt: prompt, ...(forkedFrom && { forkedFrom }) };
  }
  return [
    workflow.workflowId,
    shown,
    turns === undefined ? '-' : String(turns),
    cost === undefined ? '-' : formatUsd(cost),
    lastActivity,
    workspace === undefined ? '-' : homeRelative(workspace),
    `${forkedFrom ? `fork of ${forkedFrom}: ` : ''}${prompt === undefined ? '-' : JSON.stringify(oneLine(prompt, 60))}`,
  ];
}

function homeRelative(directory: string): string {
  const home = os.homedir();
  return directory === home || directory.startsWith(`${home}/`) ? `~${directory.slice(home.length)}` : directory;
}

/** How many conversations `list` reads at most to sort them (the server's order puts running ones first). */
export const LIST_SCAN = 2_000;

/** The `limit` most recently active conversations matching `query`, newest first, one row each. */
export async function newestFirst(client: Client, query: string, limit: number, scan = LIST_SCAN): Promise<WorkflowExecutionInfo[]> {
  const latest = new Map<string, WorkflowExecutionInfo>();
  let seen = 0;
  for await (const workflow of client.workflow.list({ query })) {
    // Visibility lags: a run just continued as new may still be listed beside its successor; the later run wins.
    const other = latest.get(workflow.workflowId);
    if (!other || workflow.startTime.getTime() > other.startTime.getTime()) latest.set(workflow.workflowId, workflow);
    if (++seen >= scan) break;
  }
  return [...latest.values()].sort((a, b) => lastActiveAt(b).getTime() - lastActiveAt(a).getTime()).slice(0, limit);
}

/**
 * A conversation id as typed: the full id, or a unique shorter part of it — its random suffix
 * (`e10872b5`) or its beginning. An unknown or ambiguous text is returned as typed, so the
 * command's own "not found" error names it.
 */
export async function resolveConversationId(api: ConversationClient, text: string): Promise<string> {
  if (text.length < 4 || (await api.describe(text).catch(() => undefined))) return text;
  const matches = new Set<string>();
  let seen = 0;
  for await (const workflow of api.client.workflow.list({ query: listQuery({}) })) {
    const id = workflow.workflowId;
    if (!id.includes('--agent-') && (id.endsWith(`-${text}`) || id.startsWith(text))) matches.add(id);
    if (matches.size > 1 || ++seen >= LIST_SCAN) break;
  }
  return matches.size === 1 ? [...matches][0] : text;
}

/** When a conversation was last active: its last-activity attribute, else its start. */
export function lastActiveAt(workflow: Pick<WorkflowExecutionInfo, 'startTime' | 'typedSearchAttributes'>): Date {
  return workflow.typedSearchAttributes.get(LAST_ACTIVITY_SEARCH_ATTRIBUTE) ?? workflow.startTime;
}

/** The id of the conversation in this workspace that was active last (Claude Code's --continue), or undefined. */
export async function mostRecentConversation(client: Client, cwd: string, scan = 1_000): Promise<string | undefined> {
  let best: { id: string; at: number } | undefined;
  let seen = 0;
  for await (const workflow of client.workflow.list({ query: listQuery({ workspace: cwd }) })) {
    if (workflow.workflowId.includes('--agent-')) continue; // a subagent is not a conversation of its own
    const at = lastActiveAt(workflow).getTime();
    if (!best || at > best.at) best = { id: workflow.workflowId, at };
    if (++seen >= scan) break;
  }
  return best?.id;
}

/** `durable-agent list [--status s] [--workspace dir] [--model m] [--limit n] [--json]`. */
export async function listCommand({ values }: CommandInput, io: Io): Promise<number> {
  const limitText = (values.limit as string | undefined) ?? '50';
  if (!/^[0-9]+$/.test(limitText) || Number(limitText) < 1) throw new UsageError(`--limit must be a positive whole number, got "${limitText}".`);
  const filters = { status: values.status, workspace: values.workspace, model: values.model } as ListFilters;
  const query = listQuery(filters);
  const filtered = Object.values(filters).some((value) => value !== undefined);
  return withConnection(async (api) => {
    // The server lists running conversations first whatever their age: read them all (up to a bound), then sort.
    const workflows = await newestFirst(api.client, query, Number(limitText));
    if (values.json) {
      io.out(JSON.stringify(workflows.map((workflow) => listRow(workflow, 'json'))));
      return 0;
    }
    const rows = workflows.map((workflow) => listRow(workflow) as string[]);
    if (rows.length > 0) for (const line of formatTable([LIST_HEADER, ...rows])) io.out(sanitizeForTerminal(line));
    else
      io.out(filtered ? 'No conversation matches.' : `No conversations yet. Start one with \`${cliCommand('chat')}\` or \`${cliCommand('ask "<prompt>"')}\`.`);
    return 0;
  });
}
