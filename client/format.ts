/**
 * Human-readable rendering of conversation events and status for the terminal.
 */
import { webSearchDisplay } from '../common/web-search';
import type { ResultMessage } from '../common/result';
import { type ToolCall, toolArgument, toolCallLine, toolResultLine } from './tool-line';
import type { CompactionOutcome, ContextStatus, ConversationEvent, ConversationStatus } from '../workflows/definitions';
import { formatUsd } from '../common/money';
import { shorten } from '../common/cut-text';
import { cliCommand } from './invocation';
import { describeTaskNotification } from './task-notification';

/** Where it lives now (client/render/terminal-text.ts); imported from here by most views. */
export { sanitizeForTerminal } from './render/terminal-text';

/**
 * The columns of the terminal `stream` writes to, for wrapping what a person approves; Infinity
 * when it is not a terminal (a pipe or a file gets each line whole, unwrapped).
 */
export function terminalWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout): number {
  return stream.isTTY && stream.columns ? stream.columns : Number.POSITIVE_INFINITY;
}

function firstLine(text: string, max = 160): string {
  const line = text.split('\n').find((candidate) => candidate.trim() !== '') ?? '';
  return shorten(line, max);
}

/** Token counts the way Claude Code prints them: 850, 9.4k, 152k, 1.2M. */
export function formatTokens(tokens: number): string {
  const trim = (text: string) => text.replace(/\.0$/, '');
  if (tokens < 1_000) return String(Math.round(tokens));
  if (tokens < 10_000) return `${trim((tokens / 1_000).toFixed(1))}k`;
  if (tokens < 1_000_000) return `${Math.round(tokens / 1_000)}k`;
  return `${trim((tokens / 1_000_000).toFixed(1))}M`;
}

/** "152k → 9k tokens", or "152k tokens" when the size after is not known. */
function tokensBeforeAfter(preTokens: number, postTokens?: number): string {
  return postTokens === undefined ? `${formatTokens(preTokens)} tokens` : `${formatTokens(preTokens)} → ${formatTokens(postTokens)} tokens`;
}

/** The `compact` command's line: "Compacted: 152k → 9k tokens (312 messages summarized)" or "Not compacted: <why>". */
export function formatCompactionOutcome(outcome: CompactionOutcome): string {
  if (!outcome.compacted) return `Not compacted: ${outcome.error ?? 'no reason given'}`;
  const summarized = outcome.messagesSummarized === undefined ? '' : ` (${plural(outcome.messagesSummarized, 'message')} summarized)`;
  return `Compacted: ${tokensBeforeAfter(outcome.preTokens, outcome.postTokens)}${summarized}`;
}

/**
 * One event as terminal lines, or undefined for events people need not see. `calls`: kept by the
 * caller across events, so a tool's result is told in Claude Code's words (`Read 11 lines`): the
 * calls of assistant messages go in, their results take them out.
 */
export function formatEvent(event: ConversationEvent, calls?: Map<string, ToolCall>): string | undefined {
  const message = event.message;
  switch (message.type) {
    case 'user_input':
      // A background task's end (issue 21) shows as its summary line, not its XML.
      return describeTaskNotification(message.prompt) ?? `> ${message.prompt}`;
    case 'assistant': {
      const lines: string[] = [];
      for (const block of message.message.content) {
        if (block.type === 'text' && block.text.trim()) lines.push(block.text.trim());
        if (block.type === 'tool_use') {
          lines.push(toolCallLine(block.name, toolArgument(block.name, block.input)));
          calls?.set(block.id, { name: block.name, input: block.input });
        }
      }
      // Issue 33: the searches the API ran (before the text they informed) and the sources it cites.
      const { searches, sources } = webSearchDisplay(message.message.content);
      lines.unshift(...searches);
      lines.push(...sources);
      return lines.length > 0 ? lines.join('\n') : undefined;
    }
    case 'user': {
      if (message.command?.kind === 'local' && typeof message.message.content === 'string') {
        // A local slash command's output (seed §2.10): shown whole, as the command printed it.
        // (The feed cuts long texts, closing tag included.)
        return /<local-command-stdout>([\s\S]*?)(?:<\/local-command-stdout>|$)/.exec(message.message.content)?.[1];
      }
      if (typeof message.message.content === 'string') return message.isMeta ? `  (${firstLine(message.message.content)})` : undefined;
      const lines = message.message.content
        .filter((block) => block.type === 'tool_result')
        .map((block) => {
          const call = calls?.get(block.tool_use_id);
          calls?.delete(block.tool_use_id);
          const text = typeof block.content === 'string' ? block.content : block.content.map((part) => part.text).join('');
          return toolResultLine(text, block.is_error === true, undefined, call);
        });
      return lines.length > 0 ? lines.join('\n') : undefined;
    }
    case 'compact_boundary':
      return `── conversation compacted (${message.trigger}): ${tokensBeforeAfter(message.preTokens, message.postTokens)} ──`;
    case 'system':
      return `[${message.level}] ${message.content}`;
    case 'result':
      return formatResultLine(message);
    default:
      return undefined;
  }
}

/** Why a query ended, in plain words (the result's `terminal_reason` is for programs). */
const ENDINGS: Partial<Record<ResultMessage['terminal_reason'], string>> = {
  aborted_streaming: 'interrupted while the model was answering',
  aborted_tools: 'interrupted while tools ran',
  max_turns: 'stopped at the turn limit (--max-turns)',
  prompt_too_long: "the conversation no longer fits the model's context (compact it)",
  model_error: 'the model API failed',
  blocking_limit: 'the context is full (compact it)',
  stop_hook_prevented: 'a Stop hook ended it',
  budget_exhausted: 'stopped: the budget (--max-budget-usd) is spent',
  structured_output_retry_exhausted: 'no valid structured output after repeated tries',
};

export function formatResultLine(result: ResultMessage): string {
  const cost = formatUsd(result.total_cost_usd);
  // A local command that failed ended "completed" without running: its subtype says more.
  const why = result.terminal_reason === 'completed' ? result.subtype : (ENDINGS[result.terminal_reason] ?? result.terminal_reason);
  const head = result.is_error ? `✗ ${why}` : '✓ done';
  return (
    `${head} · ${result.num_turns} turn${result.num_turns === 1 ? '' : 's'} · ${(result.duration_ms / 1000).toFixed(1)}s · ${cost}` +
    (result.structured_output !== undefined ? `\n  structured output: ${JSON.stringify(result.structured_output)}` : '')
  );
}

function plural(count: number, noun: string): string {
  return `${count.toLocaleString('en-US')} ${noun}${count === 1 ? '' : 's'}`;
}

/** "152,340 / 180,000 tokens (85%) · autocompact at 167,000 · 2 compactions · breaker closed" */
function formatContextLine(context: ContextStatus): string {
  const number = (value: number) => value.toLocaleString('en-US');
  const { consecutiveFailures, open } = context.breaker;
  // The circuit breaker in plain words: said only once a compaction has failed.
  const failures = open
    ? [`autocompact stopped after ${plural(consecutiveFailures, 'failed compaction')}`]
    : consecutiveFailures > 0
      ? [plural(consecutiveFailures, 'failed compaction')]
      : [];
  return [
    `${number(context.tokens)} / ${number(context.effectiveWindow)} tokens (${Math.round(context.percentUsed)}%)`,
    context.autoCompactEnabled ? `autocompact at ${number(context.autoCompactThreshold)}` : 'autocompact off',
    plural(context.compactions, 'compaction'),
    ...failures,
  ].join(' · ');
}

/**
 * Claude Code's context warning (its TokenWarning), or undefined while the level is ok:
 * "Context low (9% remaining) · Run durable-agent compact <id> to compact & continue".
 */
export function formatContextWarning(status: ConversationStatus): string | undefined {
  const context = status.context as ContextStatus | undefined; // a worker from before compaction reports none
  if (!context || context.level === 'ok') return undefined;
  const action = `Run ${cliCommand(`compact ${status.conversationId}`)} to compact & continue`;
  if (context.level === 'blocking') return `Context limit reached · ${action}`;
  // Remaining as Claude Code's calculateTokenWarningState counts it: relative to the autocompact
  // threshold while autocompact will run (0% = it compacts on the next turn), else to the
  // effective window, i.e. 100 − percentUsed. An open breaker (seed §2.7) means it will not run.
  const autoCompacts = context.autoCompactEnabled && !context.breaker.open;
  const threshold = autoCompacts ? context.autoCompactThreshold : context.effectiveWindow;
  const remaining = threshold > 0 ? Math.round((Math.max(0, threshold - context.tokens) / threshold) * 100) : 0;
  return `Context low (${remaining}% remaining) · ${action}`;
}

/** Background tasks `status` lists (issue 21), newest last: at most this many. */
const BACKGROUND_TASKS_SHOWN = 8;

/** `status`'s background lines: `b1a2b3c4d  running    Run the dev server` (the first one labelled). */
export function formatBackgroundTasks(tasks: NonNullable<ConversationStatus['backgroundTasks']>): string[] {
  const running = tasks.filter((task) => task.status === 'running').length;
  const shown = tasks.slice(-BACKGROUND_TASKS_SHOWN);
  const lines = shown.map((task) => {
    const state = task.status === 'running' ? 'running' : `${task.status}${task.exitCode !== undefined ? ` (exit ${task.exitCode})` : ''}`;
    return `${task.id}  ${state.padEnd(16)} ${firstLine(task.description)}`;
  });
  const header = `${running} running, ${tasks.length - running} ended${tasks.length > shown.length ? ` (last ${shown.length} shown)` : ''}`;
  return [`background    ${header}`, ...lines.map((line) => `              ${line}`)];
}

export function formatStatus(status: ConversationStatus, workspace?: string): string {
  const lines = [
    `conversation  ${status.conversationId}`,
    ...(workspace ? [`workspace     ${workspace}`] : []),
    `phase         ${status.phase}`,
    `model         ${status.currentModel}${status.currentModel !== status.model ? ` (fallback from ${status.model})` : ''}`,
    // An ended conversation answers from its result: the transcript's size is not in it (no "messages 0").
    `queries       ${status.queryCount}   turn ${status.turnCount}${status.closed ? '' : `   messages ${status.messageCount}`}`,
    `usage         in ${status.usage.input_tokens}  out ${status.usage.output_tokens}  cost ${formatUsd(status.totalCostUsd)}${status.closed ? '' : `  context ${status.contextTokens} tokens`}`,
  ];
  const context = status.context as ContextStatus | undefined; // a worker from before compaction reports none
  if (context && !status.closed) lines.push(`context       ${formatContextLine(context)}`);
  if (status.transitions.length > 0) lines.push(`transitions   ${status.transitions.join(' → ')}`);
  if (status.toolsInFlight.length > 0) lines.push(`tools         ${status.toolsInFlight.map((tool) => tool.summary).join(', ')}`);
  if (status.queuedInputs > 0) lines.push(`queued        ${status.queuedInputs} input(s)`);
  // Background agents (issue 21): one line each, with the child workflow to follow with `status <child id>`.
  for (const agent of status.backgroundAgents ?? [])
    lines.push(`agent         ${agent.id} "${agent.description}" (${agent.agentType}, ${agent.model}): ${agent.status}  ${agent.childWorkflowId}`);
  // Issue 33: a conversation in a git worktree (EnterWorktree, --worktree).
  if (status.worktree) lines.push(`worktree      ${status.worktree.path} (branch ${status.worktree.branch}; from ${status.worktree.originalCwd})`);
  if (status.permissionMode) lines.push(`permissions   ${status.permissionMode} mode, ${status.pendingPermissions?.length ?? 0} waiting`);
  for (const [index, line] of (status.mcpServers ?? []).entries()) lines.push(`${index === 0 ? 'mcp servers ' : '            '}  ${line}`);
  if (status.backgroundTasks && status.backgroundTasks.length > 0) lines.push(...formatBackgroundTasks(status.backgroundTasks));
  if (status.lastResult) lines.push(`last result   ${formatResultLine(status.lastResult)}`, `              ${firstLine(status.lastResult.result)}`);
  // issue 21: the task list, wakeups and cron jobs (absent fields: none, or a worker from before).
  for (const [index, task] of (status.tasks ?? []).entries())
    lines.push(`${index === 0 ? 'tasks' : ''}`.padEnd(14) + `#${task.id} [${task.status}] ${firstLine(task.subject)}`);
  for (const [index, wakeup] of (status.wakeups ?? []).entries())
    lines.push(`${index === 0 ? 'wakeups' : ''}`.padEnd(14) + `${wakeup.dueAt}  ${firstLine(wakeup.reason)}`);
  for (const [index, job] of (status.cronJobs ?? []).entries()) {
    lines.push(
      `${index === 0 ? 'cron jobs' : ''}`.padEnd(14) +
        `${job.id} "${job.cron}" (${job.timeZone}) ${job.recurring ? 'recurring' : 'one-shot'}${job.durable ? ', durable' : ''}: ${firstLine(job.prompt)}`,
    );
  }
  if (status.closed) {
    const source = status.closed.answeredFrom === 'result' ? 'its result' : 'its search attributes';
    lines.push(
      `closed        ${status.closed.executionStatus}${status.closed.closedAt ? ` at ${status.closed.closedAt}` : ''} (from ${source}; no worker needed)`,
    );
  }
  const warning = formatContextWarning(status);
  if (warning) lines.push(warning);
  return lines.join('\n');
}
