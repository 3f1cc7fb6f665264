/**
 * What the Temporal UI shows about a conversation, as pure text: the current details (Markdown,
 * from `__temporal_workflow_metadata`), the idle timer's summary and the model calls' turn labels.
 * Imports nothing from Temporal, so it is unit-tested directly (test/unit/ui-details.test.ts).
 */
import { oneLine } from '../../common/cut-text';
import { formatUsd } from '../../common/money';
import { readTaskNotification } from '../../common/task-notification';
import { showInvisibleCharacters } from '../../common/visible-text';

/** Characters of a tool call's summary inside another summary (the UI cuts labels at 120). */
export const NESTED_SUMMARY_CHARS = 50;

/** Characters of the last answer the current details show. */
export const LAST_ANSWER_CHARS = 400;

export interface CurrentDetailsInput {
  phase: string;
  /** Summaries of the tools running now (`Bash: node test.js`). */
  tools: string[];
  /** Conversation-wide number of the current (or last) turn. */
  turn: number;
  queryCount: number;
  model: string;
  costUsd: number;
  /** The last answer's text, or an error result's message. */
  lastAnswer?: { text: string; isError: boolean };
  /** The last prompt a person sent (issue 19, item 15: otherwise only inside userInput payloads). */
  lastPrompt?: string;
  /** The latest permission decisions, oldest first: what was allowed or denied. */
  decisions?: ReadonlyArray<{ toolName: string; behavior: 'allow' | 'deny'; decidedBy: 'user' | 'timeout' }>;
  /** The task list, one line per task (TaskList's lines). */
  tasks?: readonly string[];
  /** Wakeups and cron jobs waiting to fire. */
  scheduled?: readonly string[];
  /** Background commands running now (issue 21): `b1a2b3c4d Run the dev server`. */
  background?: readonly string[];
  /** Issue 22: the conversation's MCP servers (name, state, how many tools). */
  mcpServers?: ReadonlyArray<{ name: string; state: string; tools: number }>;
}

/** MCP servers the current details name (the rest are counted). */
export const MCP_SERVERS_SHOWN = 5;

/** Background tasks the current details name (the rest are counted). */
export const BACKGROUND_LINES_SHOWN = 3;

/** Characters of the last prompt the current details show. */
export const LAST_PROMPT_CHARS = 200;

/**
 * The UI's "Current Details" card (Markdown):
 *
 *     **running_tools** — Bash: node test.js · turn 7 · query 2 · claude-sonnet-4-6 · $0.0123
 *
 *     **Asked:** The test in test.js fails…
 *
 *     **Last answer:** Fixed: `sum` started …
 *
 *     **Permissions:** Write allowed · Bash denied
 */
export function formatCurrentDetails(input: CurrentDetailsInput): string {
  const tools = input.tools.length > 0 ? ` — ${input.tools.map(escapeMarkdown).join(', ')}` : '';
  // One line for the state: the UI shows the card in a frame of fixed height, and the last answer must fit.
  const lines = [`**${input.phase}**${tools} · turn ${input.turn} · query ${input.queryCount} · ${escapeMarkdown(input.model)} · ${formatUsd(input.costUsd)}`];
  if (input.lastPrompt && input.lastPrompt.trim() !== '') {
    // A background task's end is XML for the model: a person reads its summary.
    const notification = readTaskNotification(input.lastPrompt);
    if (notification) lines.push(`**Notified:** ${escapeMarkdown(oneLine(notification.summary, LAST_PROMPT_CHARS))}`);
    else lines.push(`**Asked:** ${escapeMarkdown(oneLine(input.lastPrompt, LAST_PROMPT_CHARS))}`);
  }
  // The answer before the decisions: the UI's card shows about four lines without scrolling.
  if (input.lastAnswer && input.lastAnswer.text.trim() !== '') {
    const label = input.lastAnswer.isError ? '**Last error:**' : '**Last answer:**';
    lines.push(`${label} ${escapeMarkdown(oneLine(input.lastAnswer.text, LAST_ANSWER_CHARS))}`);
  }
  if (input.decisions && input.decisions.length > 0) {
    const decided = input.decisions.map(
      (decision) =>
        `${escapeMarkdown(decision.toolName)} ${decision.behavior === 'allow' ? 'allowed' : decision.decidedBy === 'timeout' ? 'denied (no answer in time)' : 'denied'}`,
    );
    lines.push(`**Permissions:** ${decided.join(' · ')}`);
  }
  if (input.tasks && input.tasks.length > 0) lines.push(`**Tasks:** ${input.tasks.map(escapeMarkdown).join(' · ')}`);
  if (input.scheduled && input.scheduled.length > 0)
    lines.push(`**Scheduled:** ${input.scheduled.map((line) => escapeMarkdown(oneLine(line, 120))).join(' · ')}`);
  if (input.background && input.background.length > 0) {
    const shown = input.background.slice(0, BACKGROUND_LINES_SHOWN).map(escapeMarkdown);
    const more = input.background.length > shown.length ? ` · and ${input.background.length - shown.length} more` : '';
    lines.push(`**Background (${input.background.length} running):** ${shown.join(' · ')}${more}`);
  }
  if (input.mcpServers && input.mcpServers.length > 0) {
    const shown = input.mcpServers
      .slice(0, MCP_SERVERS_SHOWN)
      .map(
        (server) =>
          `${escapeMarkdown(server.name)}: ${server.state.replace('-', ' ')}${server.state === 'connected' ? ` (${server.tools} tool${server.tools === 1 ? '' : 's'})` : ''}`,
      );
    const more = input.mcpServers.length > shown.length ? ` · and ${input.mcpServers.length - shown.length} more` : '';
    lines.push(`**MCP servers:** ${shown.join(' · ')}${more}`);
  }
  return lines.join('\n\n');
}

/** The idle timer's summary: what it waits for and what happens when it fires. */
export function idleTimerSummary(idleTimeoutMs: number): string {
  return `Waiting for input; ends the conversation after ${formatDuration(idleTimeoutMs)} idle`;
}

/**
 * A model call's label, unique over the conversation (`turn 7 (query 2)`) — turn numbers
 * restart with every query, so `turn 1` alone repeats.
 */
export function modelCallSummary(model: string, turn: number, queryCount: number): string {
  return `${model}: turn ${turn} (query ${queryCount})`;
}

/**
 * A model call's label that also names the reads the previous call ran in its local phase
 * (workflows/query/prefetched-calls.ts): their results go to the model with this call, and nothing else
 * in the history shows them. `claude-sonnet-4-6: turn 7 (query 2) · with Read a.ts, Read b.ts`.
 */
export function modelCallSummaryWithReads(model: string, turn: number, queryCount: number, prefetchedReads: readonly string[]): string {
  const base = modelCallSummary(model, turn, queryCount);
  if (prefetchedReads.length === 0) return base;
  const shown = prefetchedReads.slice(0, 3).map((read) => oneLine(read, NESTED_SUMMARY_CHARS));
  const more = prefetchedReads.length > shown.length ? ` and ${prefetchedReads.length - shown.length} more` : '';
  return `${base} · with ${shown.join(', ')}${more}`;
}

/**
 * The permission wait's timer: which call asks and what ends the wait. The UI shows the timer
 * "Canceled" when a decision came (the `decidePermission` update next to it says which), "Fired"
 * when none came in time. Invisible and control characters in the call are shown (`⟨U+202E⟩`,
 * common/visible-text.ts) before it is cut: a summary is capped by the server
 * (`limit.userMetadataSummarySize`, 400 bytes), so the whole call is what `status` and the
 * approval prompts show, never this label.
 */
export function permissionWaitSummary(toolSummary: string, timeoutMs: number): string {
  return `Permission asked: ${oneLine(showInvisibleCharacters(toolSummary, 'show'), NESTED_SUMMARY_CHARS)} — until decidePermission; denied if none in ${formatDuration(timeoutMs)}`;
}

/** "1d", "2h 30m", "45s", "250ms". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const units: Array<[string, number]> = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ];
  const parts: string[] = [];
  let rest = Math.round(ms / 1000) * 1000;
  for (const [unit, size] of units) {
    const count = Math.floor(rest / size);
    if (count > 0) parts.push(`${count}${unit}`);
    rest -= count * size;
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

/** Model text must not turn into headings, links or HTML in the card; code spans are shown as they are. */
function escapeMarkdown(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, index) => (index % 2 === 1 ? part : part.replace(/[\\*_[\]<>#|]/g, (character) => `\\${character}`)))
    .join('');
}
