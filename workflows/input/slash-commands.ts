/**
 * Slash commands (seed §2.10 processUserInput / shouldQuery): input starting with `/` is parsed
 * before the model sees it. Built-in commands are local — they answer without a model call —
 * and custom commands (Claude Code's `.claude/commands/*.md`) expand into a prompt that goes to
 * the model. Pure: the decisions and texts here; `process-user-input.ts` carries them out.
 */
import { COMMAND_NAME_PATTERN, type CustomCommand } from '../../common/custom-commands';
import type { SkillEntry } from '../../common/skills';
import { type Usage, webSearchRequestsOf } from '../../common/messages';
import { formatUsd } from '../../common/money';

/** A parsed `/name args` input. */
export interface ParsedSlashCommand {
  name: string;
  /** Everything after the name, trimmed ('' without arguments). */
  args: string;
}

export const LOCAL_COMMANDS = ['help', 'clear', 'compact', 'rewind', 'cost', 'status', 'model', 'tasks', 'mcp'] as const;
export type LocalCommandName = (typeof LOCAL_COMMANDS)[number];

/** The built-in commands, as `/help` lists them. */
export const LOCAL_COMMAND_HELP: ReadonlyArray<{ name: LocalCommandName; argumentHint?: string; description: string }> = [
  { name: 'help', description: 'Show the commands' },
  { name: 'clear', description: 'Clear the conversation history and free up context (CLAUDE.md and git status are read again)' },
  { name: 'compact', argumentHint: '[instructions]', description: 'Summarize the conversation so far to free context, optionally with focus instructions' },
  {
    name: 'rewind',
    argumentHint: '[n] [both|code|conversation]',
    description: 'List the prompts, or restore the files and/or the conversation to just before prompt n (Bash edits and commits included)',
  },
  { name: 'cost', description: 'Show the total cost and token usage of this conversation' },
  { name: 'status', description: 'Show the conversation status: model, phase, context, usage' },
  { name: 'model', argumentHint: '[model]', description: 'Show the model, or switch the model for the next queries' },
  { name: 'tasks', description: 'Show the task list, pending wakeups and cron jobs' },
  { name: 'mcp', description: 'List the MCP servers, their state and tools (the config is read and the servers listed again)' },
];

/** What to do with an input (seed §2.10 shouldQuery). */
export type SlashDecision =
  | { type: 'local'; command: LocalCommandName; args: string }
  | { type: 'prompt'; command: CustomCommand; args: string; prompt: string }
  | { type: 'unknown'; name: string; args: string };

/**
 * `/name args` → the name and arguments; undefined for anything else, which goes to the model as
 * it is — including text that only looks like a command, such as a path (`/usr/bin/env is …`).
 */
export function parseSlashCommand(input: string): ParsedSlashCommand | undefined {
  const trimmed = input.trim();
  if (!trimmed.startsWith('/')) return undefined;
  const match = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(trimmed);
  if (!match || !COMMAND_NAME_PATTERN.test(match[1])) return undefined;
  return { name: match[1], args: (match[2] ?? '').trim() };
}

/** True when the input is handled as a slash command (rather than sent to the model as text). */
export function isSlashCommand(input: string): boolean {
  return parseSlashCommand(input) !== undefined;
}

/** Built-in first (as Claude Code: a custom command cannot shadow /clear), then custom commands. */
export function resolveSlashCommand(parsed: ParsedSlashCommand, custom: readonly CustomCommand[] = []): SlashDecision {
  const builtIn = LOCAL_COMMANDS.find((name) => name === parsed.name.toLowerCase());
  if (builtIn) return { type: 'local', command: builtIn, args: parsed.args };
  const command = custom.find((candidate) => candidate.name === parsed.name);
  if (command) return { type: 'prompt', command, args: parsed.args, prompt: expandCommandArguments(command.body, parsed.args) };
  return { type: 'unknown', name: parsed.name, args: parsed.args };
}

/**
 * Claude Code's argument substitution: `$ARGUMENTS` is the whole argument string, `$1`…`$9` the
 * whitespace-separated words (quotes group words). A template that uses neither gets the
 * arguments appended, so they are never lost.
 */
export function expandCommandArguments(body: string, args: string): string {
  const words = splitArguments(args);
  const usesArguments = /\$ARGUMENTS\b/.test(body);
  const usesPositional = /\$[1-9]\b/.test(body);
  let expanded = body.replace(/\$ARGUMENTS\b/g, () => args).replace(/\$([1-9])\b/g, (_, index: string) => words[Number(index) - 1] ?? '');
  if (!usesArguments && !usesPositional && args) expanded = `${expanded}\n\nARGUMENTS: ${args}`;
  return expanded.trim() === '' ? args || body : expanded;
}

/** Words of an argument string; "double" or 'single' quotes keep spaces inside one word. */
export function splitArguments(args: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let match = pattern.exec(args); match; match = pattern.exec(args)) words.push(match[1] ?? match[2] ?? match[3]);
  return words;
}

/** `/help`: the built-in commands, then the custom ones with their scope, then the skills (issue 33 §3). */
export function helpText(custom: readonly CustomCommand[] = [], skills: readonly Pick<SkillEntry, 'name' | 'description' | 'scope'>[] = []): string {
  const line = (name: string, hint: string | undefined, description: string) => `  /${name}${hint ? ` ${hint}` : ''} — ${description}`;
  const lines = ['Commands:', ...LOCAL_COMMAND_HELP.map((command) => line(command.name, command.argumentHint, command.description))];
  lines.push(
    line('loop', '[interval] <prompt>', 'Run a prompt now and again: every interval (5m, 2h: a cron job), or when the model decides (ScheduleWakeup)'),
  );
  if (custom.length > 0) {
    lines.push('', 'Custom commands (.claude/commands):');
    for (const command of [...custom].sort((a, b) => a.name.localeCompare(b.name))) {
      lines.push(line(command.name, command.argumentHint, `${command.description} (${command.scope})`));
    }
  }
  if (skills.length > 0) {
    lines.push('', 'Skills (.claude/skills):');
    for (const skill of [...skills].sort((a, b) => a.name.localeCompare(b.name)))
      lines.push(line(skill.name, undefined, `${skill.description} (${skill.scope})`));
  }
  lines.push(
    '',
    'Anything else is sent to the model. A custom command is a Markdown file in .claude/commands/ (or ~/.claude/commands/); $ARGUMENTS takes what follows it.',
  );
  return lines.join('\n');
}

/** An unknown command: said plainly, with the list, and how to send the text to the model anyway. */
export function unknownCommandText(name: string, custom: readonly CustomCommand[] = [], skills: readonly Pick<SkillEntry, 'name'>[] = []): string {
  const names = [...new Set([...LOCAL_COMMANDS, ...custom.map((command) => command.name), ...skills.map((skill) => skill.name)])].map(
    (command) => `/${command}`,
  );
  return `Unknown command: /${name}. Nothing was sent to the model. Available commands: ${names.join(', ')}. (To send text that starts with "/" to the model, begin it with another character, e.g. quote it.)`;
}

/** `/cost`: what this conversation has cost so far. */
export function costText(totalCostUsd: number, usage: Usage, queryCount: number): string {
  const number = (value: number) => value.toLocaleString('en-US');
  return [
    `Total cost:    ${formatUsd(totalCostUsd)}`,
    `Queries:       ${queryCount}`,
    `Usage:         ${number(usage.input_tokens)} input, ${number(usage.output_tokens)} output, ${number(usage.cache_read_input_tokens)} cache read, ${number(usage.cache_creation_input_tokens)} cache write`,
    // Issue 33: billed web searches ($10 per 1,000, in the total above).
    ...(webSearchRequestsOf(usage) > 0 ? [`Web searches:  ${number(webSearchRequestsOf(usage))}`] : []),
  ].join('\n');
}

/** `/status`: the parts of the status query a person asks for in a conversation. */
export function statusText(status: {
  conversationId: string;
  model: string;
  cwd: string;
  queryCount: number;
  messageCount: number;
  context: { tokens: number; effectiveWindow: number; percentUsed: number; compactions: number };
  totalCostUsd: number;
  claudeMdFiles?: readonly string[];
  customCommands: number;
  /** Issue 22: one line per MCP server. */
  mcpServers?: readonly string[];
}): string {
  const number = (value: number) => value.toLocaleString('en-US');
  return [
    `Conversation:  ${status.conversationId}`,
    `Model:         ${status.model}`,
    `Directory:     ${status.cwd}`,
    `Queries:       ${status.queryCount} (${status.messageCount} messages in the transcript)`,
    `Context:       ${number(status.context.tokens)} / ${number(status.context.effectiveWindow)} tokens (${status.context.percentUsed}%), ${status.context.compactions} compaction${status.context.compactions === 1 ? '' : 's'}`,
    `Memory:        ${status.claudeMdFiles && status.claudeMdFiles.length > 0 ? status.claudeMdFiles.join(', ') : 'no CLAUDE.md files'}`,
    `Commands:      ${status.customCommands} custom`,
    `Cost:          ${formatUsd(status.totalCostUsd)}`,
    ...(status.mcpServers && status.mcpServers.length > 0 ? [`MCP servers:   ${status.mcpServers.join('\n               ')}`] : []),
  ].join('\n');
}

/**
 * The transcript record of a local command (Claude Code stores `<command-name>` and
 * `<local-command-stdout>` messages): kept for people and exports, never sent to the model.
 */
export function localCommandRecord(name: string, args: string, stdout: string): string {
  return `<command-name>/${name}</command-name>\n<command-args>${args}</command-args>\n<local-command-stdout>${stdout}</local-command-stdout>`;
}

/** `/tasks`: the task list (TaskList's lines), then the wakeups and cron jobs waiting to fire (issue 21). */
export function tasksText(status: {
  taskLines: readonly string[];
  wakeups?: ReadonlyArray<{ id: string; reason: string; dueAt: string }>;
  cronJobs?: ReadonlyArray<{ id: string; cron: string; timeZone: string; prompt: string; recurring: boolean; durable: boolean }>;
}): string {
  const lines = ['Tasks:', ...(status.taskLines.length > 0 ? status.taskLines.map((line) => `  ${line}`) : ['  (none)'])];
  if (status.wakeups && status.wakeups.length > 0) {
    lines.push('Wakeups:', ...status.wakeups.map((wakeup) => `  ${wakeup.id} at ${wakeup.dueAt}: ${wakeup.reason}`));
  }
  if (status.cronJobs && status.cronJobs.length > 0) {
    lines.push(
      'Cron jobs:',
      ...status.cronJobs.map(
        (job) => `  ${job.id} "${job.cron}" (${job.timeZone}) ${job.recurring ? 'recurring' : 'one-shot'}${job.durable ? ', durable' : ''}: ${job.prompt}`,
      ),
    );
  }
  return lines.join('\n');
}
