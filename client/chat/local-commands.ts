/**
 * The slash commands a Claude Code user types first that the chat answers itself (issue 32, item
 * 2): `/exit`, `/resume`, `/permissions`, `/memory`, `/agents`, `/hooks`, `/config`, `/doctor`,
 * `/export`, `/init`. Every other line (`/help`, `/clear`, `/compact`, `/cost`, `/status`,
 * `/model`, custom commands, prompts) goes to the conversation, whose workflow handles them
 * (workflows/): {@link runLocalCommand} says undefined.
 *
 * What is shown is read where the chat runs: the workspace's settings, CLAUDE.md files and agent
 * files as this machine sees them, with the loaders the worker uses (activities/), and the
 * conversation's own state through the API. What only the worker can know is said to be so.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ConversationClient } from '../api';
import { type ConversationConfigInput, DEFAULT_TASK_QUEUE } from '../../common/config';
import { BUILT_IN_AGENTS } from '../../common/agents';
import { HOOK_EVENTS, hookLabel, parseHookSettings } from '../../common/hooks';
import { SETTING_SOURCES } from '../../common/permissions';
import { oneLine } from '../../common/cut-text';
import { FIRST_PROMPT_SEARCH_ATTRIBUTE, STATUS_SEARCH_ATTRIBUTE } from '../../common/search-attributes';
import { loadMemoryFiles, memoryDescription, type MemoryType } from '../../activities/memory-files';
import { readAgents } from '../../activities/session-context';
import { loadSettings, readJsonObjectFile, settingsFiles } from '../../activities/settings';
import { decideWorkspaceTrust } from '../../activities/workspace-trust';
import { ripgrepPath } from '../../activities/tools/ripgrep';
import { cachedCliPath, cliVersion } from '../../infra/temporal-cli';
import { DEFAULT_TEMPORAL_ADDRESS, temporalSettings } from '../../infra/connection';
import { lastActiveAt, listQuery, newestFirst } from '../commands/list';
import { formatTranscript } from '../commands/transcript';
import { sanitizeForTerminal } from '../render/terminal-text';

export interface LocalCommandContext {
  api: ConversationClient;
  conversationId: string;
  cwd: string;
  taskQueue: string;
  config: ConversationConfigInput;
  /** The home directory (default: the user's); tests pass their own. */
  home?: string;
  /** The environment (default: process.env): $EDITOR/$VISUAL, the model key, tool paths. */
  env?: NodeJS.ProcessEnv;
}

export type LocalCommandResult =
  | { kind: 'text'; text: string }
  | { kind: 'exit' }
  | { kind: 'send'; prompt: string }
  | { kind: 'switch'; conversationId: string }
  | { kind: 'pick'; title: string; items: { label: string; value: string; hint?: string }[]; choose: (value: string) => Promise<LocalCommandResult> };

/** The chat's own commands, for `/` completion and the help line (the conversation's are listed by `/help`). */
export const LOCAL_COMMANDS: { name: string; description: string }[] = [
  { name: 'exit', description: 'Exit the chat (the conversation stays; rejoin it with --resume)' },
  { name: 'quit', description: 'Exit the chat' },
  { name: 'resume', description: "Resume another of this workspace's conversations" },
  { name: 'permissions', description: 'Show the permission mode and the allow, ask and deny rules' },
  { name: 'memory', description: 'Show the CLAUDE.md memory files and open one in your editor' },
  { name: 'agents', description: 'List the subagents available (built-in, project, user)' },
  { name: 'hooks', description: 'Show the hooks configured, by event' },
  { name: 'config', description: 'Show the effective settings and where each comes from' },
  { name: 'doctor', description: 'Check the setup: Temporal, a worker, the model, ripgrep, bubblewrap, git' },
  { name: 'export', description: 'Export the conversation as text to a file: /export [file]' },
  { name: 'init', description: 'Analyse the codebase and write a CLAUDE.md for it' },
];

/** Conversations `/resume` offers at most. */
const RESUME_LIMIT = 30;

/** Runs `line` when it is one of {@link LOCAL_COMMANDS}; undefined otherwise (the conversation gets the line). */
export async function runLocalCommand(line: string, ctx: LocalCommandContext): Promise<LocalCommandResult | undefined> {
  const match = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(line.trim());
  if (!match) return undefined;
  const name = match[1];
  const args = (match[2] ?? '').trim();
  switch (name) {
    case 'exit':
    case 'quit':
      return { kind: 'exit' };
    case 'resume':
      return resume(ctx);
    case 'permissions':
    case 'allowed-tools':
      return permissions(ctx);
    case 'memory':
      return memory(ctx);
    case 'agents':
      return agents(ctx);
    case 'hooks':
      return hooks(ctx);
    case 'config':
    case 'settings':
      return config(ctx);
    case 'doctor':
      return doctor(ctx);
    case 'export':
      return exportTranscript(ctx, args);
    case 'init':
      return { kind: 'send', prompt: INIT_PROMPT };
    default:
      return undefined;
  }
}

const text = (value: string): LocalCommandResult => ({ kind: 'text', text: sanitizeForTerminal(value) });
const homeOf = (ctx: LocalCommandContext) => ctx.home ?? os.homedir();
const envOf = (ctx: LocalCommandContext) => ctx.env ?? process.env;
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** `~/x` for a path under the home directory. */
function shortPath(file: string, home: string): string {
  return file === home || file.startsWith(`${home}${path.sep}`) ? `~${file.slice(home.length)}` : file;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** `just now`, `5m ago`, `3h ago`, `2d ago`. */
export function age(then: Date, now = new Date()): string {
  const seconds = Math.max(0, Math.round((now.getTime() - then.getTime()) / 1000));
  if (seconds < 60) return 'just now';
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86_400)}d ago`;
}

// ── /resume ──────────────────────────────────────────────────────────────────────────────────

async function resume(ctx: LocalCommandContext): Promise<LocalCommandResult> {
  let workflows;
  try {
    workflows = await newestFirst(ctx.api.client, listQuery({ workspace: ctx.cwd }), RESUME_LIMIT + 1);
  } catch (error) {
    return text(`Cannot list this workspace's conversations: ${errorText(error)}`);
  }
  const now = new Date();
  const items = workflows
    .filter((workflow) => workflow.workflowId !== ctx.conversationId && !workflow.workflowId.includes('--agent-'))
    .slice(0, RESUME_LIMIT)
    .map((workflow) => {
      const prompt = workflow.typedSearchAttributes.get(FIRST_PROMPT_SEARCH_ATTRIBUTE);
      const status = workflow.typedSearchAttributes.get(STATUS_SEARCH_ATTRIBUTE) ?? workflow.status.name.toLowerCase();
      return {
        label: sanitizeForTerminal(prompt === undefined ? workflow.workflowId : oneLine(prompt, 70)),
        value: workflow.workflowId,
        hint: `${age(lastActiveAt(workflow), now)} · ${status} · ${workflow.workflowId}`,
      };
    });
  if (items.length === 0) return text(`No other conversation in ${ctx.cwd} to resume.`);
  return {
    kind: 'pick',
    title: 'Resume a conversation (newest first)',
    items,
    choose: async (value) => (items.some((item) => item.value === value) ? { kind: 'switch', conversationId: value } : text(`Not in the list: ${value}`)),
  };
}

// ── /permissions ─────────────────────────────────────────────────────────────────────────────

async function permissions(ctx: LocalCommandContext): Promise<LocalCommandResult> {
  const home = homeOf(ctx);
  const lines: string[] = [];
  const status = await ctx.api.status(ctx.conversationId).catch(() => undefined);
  const flags = ctx.config.permissions;
  const trust = await decideWorkspaceTrust(ctx.cwd, home, ctx.config.trusted).catch(() => ({ trusted: false }));
  const settings = await loadSettings(ctx.cwd, ctx.config.settingSources ?? SETTING_SOURCES, home, trust).catch(() => undefined);
  const mode = status?.permissionMode ?? flags?.mode ?? settings?.permissions.defaultMode ?? 'default';
  lines.push(`Permission mode: ${mode}${status?.permissionMode ? '' : ' (the conversation has not reported one yet)'}`);
  for (const list of ['allow', 'ask', 'deny'] as const) {
    const rules = [
      ...(flags?.[list] ?? []).map((rule) => ({ rule, source: list === 'allow' ? '--allowed-tools' : list === 'deny' ? '--disallowed-tools' : 'flag' })),
      ...(settings?.permissions[list] ?? []).map(({ rule, source }) => ({ rule, source: settingsSourceLabel(source, ctx.cwd, home) })),
    ];
    lines.push('', `${list[0].toUpperCase()}${list.slice(1)} rules:`);
    if (rules.length === 0) lines.push('  (none)');
    for (const { rule, source } of rules) lines.push(`  ${rule}  — ${source}`);
  }
  const directories = [...(flags?.additionalDirectories ?? []), ...(settings?.permissions.additionalDirectories ?? [])];
  if (directories.length > 0) lines.push('', 'Additional directories:', ...directories.map((directory) => `  ${directory}`));
  if (!trust.trusted) lines.push('', "The workspace is not trusted: its settings' allow rules and hooks are not applied (durable-agent chat --trust).");
  for (const problem of [...(settings?.errors ?? []), ...(settings?.warnings ?? [])]) lines.push(`! ${problem}`);
  if ((status?.pendingPermissions?.length ?? 0) > 0) lines.push('', `${status!.pendingPermissions!.length} call(s) waiting for an answer.`);
  lines.push(
    '',
    'Rules you allowed with "Yes, and don\'t ask again" in this conversation are kept by the conversation itself;',
    'they cannot be listed or removed from here yet. To change the others, edit the settings files named above.',
  );
  return text(lines.join('\n'));
}

function settingsSourceLabel(source: string, cwd: string, home: string): string {
  const files: Record<string, string> = {
    userSettings: path.join(home, '.claude', 'settings.json'),
    projectSettings: path.join(cwd, '.claude', 'settings.json'),
    localSettings: path.join(cwd, '.claude', 'settings.local.json'),
  };
  return files[source] ? shortPath(files[source], home) : source;
}

// ── /memory ──────────────────────────────────────────────────────────────────────────────────

async function memory(ctx: LocalCommandContext): Promise<LocalCommandResult> {
  const home = homeOf(ctx);
  const loaded = await loadMemoryFiles(ctx.cwd, { home }).catch(() => ({ files: [], notices: [] }));
  // The three files a person edits, whether they exist yet or not, then every other file that applies.
  const places: { file: string; type: MemoryType; label: string }[] = [
    { file: path.join(ctx.cwd, 'CLAUDE.md'), type: 'Project', label: 'Project memory' },
    { file: path.join(ctx.cwd, 'CLAUDE.local.md'), type: 'Local', label: 'Local memory' },
    { file: path.join(home, '.claude', 'CLAUDE.md'), type: 'User', label: 'User memory' },
  ];
  for (const file of loaded.files) {
    if (!places.some((place) => place.file === file.path)) places.push({ file: file.path, type: file.type, label: `${file.type} memory` });
  }
  const items = places.map((place) => {
    const read = loaded.files.find((file) => file.path === place.file);
    const state = read ? plural(read.content.split('\n').length, 'line') : existsSync(place.file) ? 'empty' : 'not created yet';
    return { label: `${place.label}: ${shortPath(place.file, home)}`, value: place.file, hint: `${state} —${memoryDescription(place.type)}` };
  });
  const editor = envOf(ctx).VISUAL || envOf(ctx).EDITOR;
  return {
    kind: 'pick',
    title: `Memory files (CLAUDE.md) for ${ctx.cwd}${loaded.notices.length > 0 ? `\n${loaded.notices.join('\n')}` : ''}\n${
      editor ? `Choose one to open it in ${editor}.` : 'Set $EDITOR or $VISUAL to open one from here.'
    }`,
    items,
    choose: async (value) => {
      if (!items.some((item) => item.value === value)) return text(`Not in the list: ${value}`);
      if (!editor)
        return text(
          `${value}\n(no $EDITOR or $VISUAL set: open it yourself; it is read again when the conversation next starts a query after /clear or a new chat)`,
        );
      return openInEditor(editor, value);
    },
  };
}

/**
 * Opens `file` in `editor` (a shell word list, as $EDITOR is: `code -w`, `vim`) on this terminal and
 * waits for it. Synchronous on purpose: the chat's UI does not read the keyboard meanwhile.
 */
function openInEditor(editor: string, file: string): LocalCommandResult {
  const run = spawnSync('/bin/sh', ['-c', `${editor} "$1"`, 'editor', file], { stdio: 'inherit' });
  if (run.error) return text(`Could not start ${editor}: ${run.error.message}\nThe file: ${file}`);
  if (run.status !== 0) return text(`${editor} exited with ${run.status ?? run.signal}. The file: ${file}`);
  return text(`Edited ${file}. The conversation reads memory files at its start and after /clear or /compact.`);
}

// ── /agents ──────────────────────────────────────────────────────────────────────────────────

async function agents(ctx: LocalCommandContext): Promise<LocalCommandResult> {
  const home = homeOf(ctx);
  const trust = await decideWorkspaceTrust(ctx.cwd, home, ctx.config.trusted).catch(() => ({ trusted: false }));
  const { agents: custom, errors } = await readAgents(ctx.cwd, home).catch((error: unknown) => ({ agents: [], errors: [errorText(error)] }));
  const describe = (agent: { name: string; description: string; model?: string; tools?: string[] }) =>
    `  ${agent.name}${agent.model ? ` (${agent.model})` : ''} — ${oneLine(agent.description, 100)}${agent.tools ? `\n      tools: ${agent.tools.join(', ')}` : ''}`;
  const project = custom.filter((agent) => agent.source.startsWith(path.join(ctx.cwd, '.claude', 'agents')));
  const user = custom.filter((agent) => !project.includes(agent));
  const lines = ['Built-in agents:', ...BUILT_IN_AGENTS.map(describe)];
  const projectHeading = `Project agents (${path.join(ctx.cwd, '.claude', 'agents')})${trust.trusted || project.length === 0 ? '' : ' — not loaded: this workspace is not trusted'}:`;
  lines.push('', projectHeading, ...(project.length > 0 ? project.map(describe) : ['  (none)']));
  lines.push('', `User agents (${shortPath(path.join(home, '.claude', 'agents'), home)}):`, ...(user.length > 0 ? user.map(describe) : ['  (none)']));
  for (const error of errors) lines.push(`! ${error}`);
  lines.push('', 'To add one, write a Markdown file with name and description front matter in one of those directories.');
  return text(lines.join('\n'));
}

// ── /hooks ───────────────────────────────────────────────────────────────────────────────────

async function hooks(ctx: LocalCommandContext): Promise<LocalCommandResult> {
  const home = homeOf(ctx);
  const trust = await decideWorkspaceTrust(ctx.cwd, home, ctx.config.trusted).catch(() => ({ trusted: false }));
  const byEvent = new Map<string, string[]>();
  const problems: string[] = [];
  for (const { source, file } of settingsFiles(ctx.cwd, ctx.config.settingSources ?? SETTING_SOURCES, home)) {
    const read = await readJsonObjectFile(file);
    if (read.kind === 'absent') continue;
    if (read.kind === 'invalid') {
      problems.push(read.error);
      continue;
    }
    const parsed = parseHookSettings(read.value.hooks, file);
    problems.push(...parsed.problems);
    const skipped = source !== 'user' && !trust.trusted ? ' (not run: the workspace is not trusted)' : '';
    for (const [event, matchers] of Object.entries(parsed.hooks)) {
      for (const matcher of matchers ?? []) {
        for (const hook of matcher.hooks) {
          const lines = byEvent.get(event) ?? [];
          lines.push(`  ${matcher.matcher ? `[${matcher.matcher}] ` : ''}${oneLine(hookLabel(hook), 120)}  — ${shortPath(file, home)}${skipped}`);
          byEvent.set(event, lines);
        }
      }
    }
  }
  for (const hook of ctx.config.stopHooks ?? []) {
    for (const command of hook.hooks) {
      const lines = byEvent.get('Stop') ?? [];
      lines.push(`  ${oneLine(hookLabel(command), 120)}  — the conversation's config`);
      byEvent.set('Stop', lines);
    }
  }
  const lines: string[] = [];
  for (const event of HOOK_EVENTS) {
    const entries = byEvent.get(event);
    if (entries) lines.push(`${event}:`, ...entries);
  }
  if (lines.length === 0)
    lines.push(
      'No hooks configured.',
      `Add them under "hooks" in ${shortPath(path.join(ctx.cwd, '.claude', 'settings.json'), home)} or ~/.claude/settings.json.`,
    );
  for (const problem of problems) lines.push(`! ${problem}`);
  return text(lines.join('\n'));
}

// ── /config ──────────────────────────────────────────────────────────────────────────────────

async function config(ctx: LocalCommandContext): Promise<LocalCommandResult> {
  const home = homeOf(ctx);
  const env = envOf(ctx);
  const sources = ctx.config.settingSources ?? SETTING_SOURCES;
  const status = await ctx.api.status(ctx.conversationId).catch(() => undefined);
  const lines: string[] = [`Settings of ${ctx.conversationId}:`];
  const row = (name: string, value: string, from: string) => lines.push(`  ${name.padEnd(18)} ${value}  — ${from}`);
  row('workspace', ctx.cwd, 'where the chat started');
  row(
    'task queue',
    ctx.taskQueue,
    env.DURABLE_AGENT_TASK_QUEUE ? 'DURABLE_AGENT_TASK_QUEUE' : ctx.taskQueue === DEFAULT_TASK_QUEUE ? 'default' : "the chat's connection",
  );
  row('Temporal server', temporalAddress(env), env.TEMPORAL_ADDRESS ? 'TEMPORAL_ADDRESS' : 'the Temporal config, else the default');
  const model = status?.currentModel ?? ctx.config.model;
  row('model', model ?? '(the default)', status?.currentModel ? 'the conversation (/model changes it)' : ctx.config.model ? '--model' : 'default');
  if (ctx.config.fallbackModel) row('fallback model', ctx.config.fallbackModel, '--fallback-model');
  const trust = await decideWorkspaceTrust(ctx.cwd, home, ctx.config.trusted).catch(() => ({ trusted: false, by: undefined }));
  const settings = await loadSettings(ctx.cwd, sources, home, trust).catch(() => undefined);
  const modeFrom = ctx.config.permissions?.mode
    ? '--permission-mode'
    : settings?.permissions.defaultMode
      ? 'permissions.defaultMode in the settings'
      : 'default';
  row('permission mode', status?.permissionMode ?? ctx.config.permissions?.mode ?? settings?.permissions.defaultMode ?? 'default', modeFrom);
  const thinking = ctx.config.thinking ?? settings?.alwaysThinkingEnabled;
  row(
    'thinking',
    thinking === undefined ? "the model's default" : thinking ? 'on' : 'off',
    ctx.config.thinking !== undefined ? '--thinking' : settings?.alwaysThinkingEnabled !== undefined ? 'alwaysThinkingEnabled in the settings' : 'default',
  );
  if (ctx.config.maxTurns !== undefined) row('max turns', String(ctx.config.maxTurns), '--max-turns');
  if (ctx.config.maxBudgetUsd !== undefined) row('max budget', `$${ctx.config.maxBudgetUsd}`, '--max-budget-usd');
  row(
    'workspace trust',
    trust.trusted ? 'trusted' : 'not trusted',
    trust.trusted ? (trust.by === 'config' ? '--trust' : `~/.claude.json (${trust.by ?? ''})`) : '~/.claude.json has no entry for it',
  );
  row('setting sources', sources.join(', '), ctx.config.settingSources ? '--setting-sources' : 'default');
  row(
    'model API',
    env.ANTHROPIC_BASE_URL ?? 'api.anthropic.com',
    env.ANTHROPIC_BASE_URL ? 'ANTHROPIC_BASE_URL here (the worker uses its own environment)' : 'default',
  );
  lines.push('', 'Settings files (lowest precedence first):');
  for (const { file } of settingsFiles(ctx.cwd, sources, home)) {
    const read = await readJsonObjectFile(file);
    const state =
      read.kind === 'absent' ? 'absent' : read.kind === 'invalid' ? `cannot be read: ${read.error}` : `keys: ${Object.keys(read.value).join(', ') || '(none)'}`;
    lines.push(`  ${shortPath(file, home)}  ${state}`);
  }
  for (const problem of [...(settings?.errors ?? []), ...(settings?.warnings ?? [])]) lines.push(`! ${problem}`);
  lines.push('', 'Change them with flags when the chat starts, or in the files above.');
  return text(lines.join('\n'));
}

/** The server address the chat connected to, as infra/connection.ts reads it. */
function temporalAddress(env: NodeJS.ProcessEnv): string {
  try {
    return temporalSettings(env).address;
  } catch {
    return env.TEMPORAL_ADDRESS ?? DEFAULT_TEMPORAL_ADDRESS;
  }
}

// ── /doctor ──────────────────────────────────────────────────────────────────────────────────

interface Check {
  ok: boolean;
  name: string;
  detail: string;
  /** What to do about a failure. */
  fix?: string;
}

/** `✓ name  detail` or `✗ name  detail` with what to do under it. */
export function formatChecks(checks: readonly Check[]): string {
  return checks.map((check) => `${check.ok ? '✓' : '✗'} ${check.name}: ${check.detail}${!check.ok && check.fix ? `\n    → ${check.fix}` : ''}`).join('\n');
}

async function doctor(ctx: LocalCommandContext): Promise<LocalCommandResult> {
  const env = envOf(ctx);
  const checks: Check[] = [];
  const address = temporalAddress(env);
  let reachable = false;
  try {
    const connection = ctx.api.client.connection;
    await connection.withDeadline(Date.now() + 3_000, () => connection.workflowService.getSystemInfo({}));
    reachable = true;
    checks.push({ ok: true, name: 'Temporal', detail: `reachable at ${address}` });
  } catch (error) {
    checks.push({
      ok: false,
      name: 'Temporal',
      detail: `not reachable at ${address} (${oneLine(errorText(error), 120)})`,
      fix: 'start it: npm run server (or durable-agent server), or set TEMPORAL_ADDRESS',
    });
  }
  if (reachable) {
    const polling = await ctx.api.hasPollers(ctx.taskQueue);
    checks.push(
      polling === true
        ? { ok: true, name: 'Worker', detail: `polling task queue "${ctx.taskQueue}"` }
        : {
            ok: false,
            name: 'Worker',
            detail: polling === false ? `none polling task queue "${ctx.taskQueue}"` : 'the server cannot say whether one polls',
            fix: 'start one in another terminal: npm run worker (or durable-agent worker)',
          },
    );
  } else checks.push({ ok: false, name: 'Worker', detail: 'not checked (Temporal is not reachable)' });
  const key = env.ANTHROPIC_API_KEY || env.ANTHROPIC_AUTH_TOKEN;
  const base = env.ANTHROPIC_BASE_URL;
  checks.push(
    key || base
      ? {
          ok: true,
          name: 'Model API',
          detail: `${key ? 'a key is set' : 'no key'}${base ? `, base URL ${base}` : ', api.anthropic.com'} (here; the worker's own environment is what it uses)`,
        }
      : {
          ok: false,
          name: 'Model API',
          detail: 'neither ANTHROPIC_API_KEY nor ANTHROPIC_BASE_URL is set here',
          fix: "set ANTHROPIC_API_KEY for the worker, or run the key-less scripted model (npm start does); the worker's environment is the one that counts",
        },
  );
  checks.push(toolCheck('ripgrep', () => ripgrepPath(env), ['--version'], 'install ripgrep (apt-get install ripgrep), or set RIPGREP_PATH'));
  checks.push(
    toolCheck(
      'bubblewrap',
      () => env.DURABLE_AGENT_BWRAP || 'bwrap',
      ['--version'],
      'install bubblewrap (apt-get install bubblewrap): Bash runs sandboxed with it, on the worker host',
    ),
  );
  checks.push(toolCheck('git', () => 'git', ['--version'], 'install git (apt-get install git): checkpoints and the git status in the context use it'));
  const cli = cachedCliPath();
  const version = existsSync(cli) ? cliVersion(cli) : undefined;
  checks.push(
    version
      ? { ok: true, name: 'Temporal CLI', detail: `${version} (${shortPath(cli, homeOf(ctx))})` }
      : {
          ok: false,
          name: 'Temporal CLI',
          detail: `not in the cache (${cli})`,
          fix: 'npm start (or durable-agent server) builds it once; a server you run yourself does not need it',
        },
  );
  const failed = checks.filter((check) => !check.ok).length;
  return text(`${formatChecks(checks)}\n\n${failed === 0 ? 'All checks passed.' : `${failed} check${failed === 1 ? '' : 's'} failed.`}`);
}

function toolCheck(name: string, bin: () => string, args: string[], fix: string): Check {
  let binary: string;
  try {
    binary = bin();
  } catch (error) {
    return { ok: false, name, detail: errorText(error), fix };
  }
  const run = spawnSync(binary, args, { encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (run.error || run.status !== 0) return { ok: false, name, detail: `${binary} does not run (${run.error?.message ?? `exit ${run.status}`})`, fix };
  return { ok: true, name, detail: `${`${run.stdout}${run.stderr}`.trim().split('\n')[0]}` };
}

// ── /export ──────────────────────────────────────────────────────────────────────────────────

/** `2026-12-07-fix-the-failing-test.txt`: the date and the first prompt's first words. */
export function exportFileName(firstPrompt: string | undefined, now = new Date()): string {
  const date = now.toISOString().slice(0, 10);
  const words = (firstPrompt ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean)
    .slice(0, 6)
    .join('-');
  return `${date}-${words || 'conversation'}.txt`;
}

async function exportTranscript(ctx: LocalCommandContext, args: string): Promise<LocalCommandResult> {
  let transcript;
  try {
    transcript = await ctx.api.transcript(ctx.conversationId);
  } catch (error) {
    return text(`Cannot read the transcript: ${errorText(error)}`);
  }
  const body = sanitizeForTerminal(formatTranscript(transcript));
  if (body.trim() === '') return text('Nothing to export yet: the conversation is empty.');
  const firstPrompt = transcript.flatMap((message) =>
    message.type === 'user' && typeof message.message.content === 'string' && !message.isMeta ? [message.message.content] : [],
  )[0];
  const target = path.resolve(ctx.cwd, args.replace(/^["']|["']$/g, '') || exportFileName(firstPrompt));
  try {
    await writeFile(target, `${body}\n`, { flag: 'w' });
    return text(`Conversation exported to ${target}`);
  } catch (error) {
    // Nowhere to write: the text itself, so nothing is lost.
    return text(`Could not write ${target} (${errorText(error)}); here it is:\n\n${body}`);
  }
}

// ── /init ────────────────────────────────────────────────────────────────────────────────────

/** What `/init` asks the model (our wording of Claude Code's /init). */
export const INIT_PROMPT = `Study this repository and write a CLAUDE.md at its root for future coding-agent sessions working in it.

Put in it:
1. The commands people use here: how to install, build, lint and run the tests, and how to run one single test.
2. The architecture at a high level: the parts that only make sense after reading several files — how the main pieces fit together and where data flows — so a new session gets productive quickly.

Guidelines:
- If a CLAUDE.md exists already, improve it rather than starting over.
- Keep it short. Leave out generic advice ("write tests", "handle errors", "keep secrets out of commits") and lists of every file or component, which anyone can find.
- Include the important parts of the README and of any rules files for other assistants (.cursor/rules/, .cursorrules, .github/copilot-instructions.md).
- Do not invent sections (tips, common tasks, support) that nothing in the repository backs up.
- Start the file with:

# CLAUDE.md

This file gives guidance to coding agents working with the code in this repository.`;
