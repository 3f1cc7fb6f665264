/**
 * The hook activities (issue 22 §4): `loadHookSettings` reads every command hook from Claude
 * Code's settings files, `runHooks` runs the commands the workflow selected for one event on the
 * shared runner (sandbox, timeout, heartbeats, bounded output) and returns what each did. The
 * workflow decides with decideHookOutcome (common/hooks.ts) on this recorded result, so a replay
 * never runs a hook again.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import os from 'node:os';
import type { LoadHookSettingsInput, LoadHookSettingsResult, RunHooksInput, RunHooksResult } from '../../common/activity-types';
import {
  DEFAULT_PROMPT_HOOK_TIMEOUT_SECONDS,
  type HookHandler,
  type HookRunOutcome,
  type HookScope,
  type HookSettings,
  type HttpHook,
  type McpToolHook,
  PROMPT_HOOK_SYSTEM,
  type PromptHook,
  expandHookHeaders,
  hookInputJson,
  hookLabel,
  mergeHookSettings,
  parseHookJson,
  parseHookSettings,
  promptHookOutcome,
  promptHookText,
  substituteHookInput,
} from '../../common/hooks';
import { mapMcpCallResult } from '../../common/mcp-tools';
import type { McpConnectionManager } from '../mcp/connections';
import { askSmallModel } from '../small-model';
import { loadPlugins } from '../plugins';
import { SETTING_SOURCES } from '../../common/permissions';
import { readJsonObjectFile, settingsFiles } from '../settings';
import { DEFAULT_HOOK_TIMEOUT_SECONDS, MAX_HOOK_TIMEOUT_SECONDS, boundHookOutput, runHookProcesses } from './runner';

export interface HookActivitiesDeps {
  /** Root for persisted hook output (the worker's state dir). */
  stateDir: string;
  /** The user's home: where ~/.claude/settings.json is, and HOME for the user's own hooks. */
  home?: string;
  /** The worker's model client (prompt hooks); undefined: prompt hooks report that there is none. */
  anthropic?: Anthropic;
  /** The worker's environment (HTTP hooks' `allowedEnvVars`; default process.env). */
  env?: Record<string, string | undefined>;
  /** The worker's MCP connections (`mcp_tool` hooks call through them, as the model's calls do). */
  mcpConnections?: McpConnectionManager;
}

export function createHookActivities(deps: HookActivitiesDeps) {
  return {
    loadHookSettings: (input: LoadHookSettingsInput) => loadHookSettings(input, deps.home ?? os.homedir()),
    runHooks: (input: RunHooksInput) => runHooksIn(deps, input),
  };
}

/**
 * Hooks from the user's, the project's and the local settings (Claude Code reads all three),
 * filtered by `--setting-sources`; a bad file or entry is a warning naming it, the rest is kept.
 * (A file that is not valid JSON stops the session context first, with its position.) Issue 29:
 * the project's and local files' hooks only when the session context recorded the workspace as
 * trusted (`input.trusted`). Issue 33: each hook carries its file's scope (user hooks run as the user).
 */
export async function loadHookSettings(input: LoadHookSettingsInput, home = os.homedir()): Promise<LoadHookSettingsResult> {
  const all: HookSettings[] = [];
  const warnings: string[] = [];
  for (const { source, file } of settingsFiles(input.cwd, input.settingSources ?? SETTING_SOURCES, home)) {
    if (source !== 'user' && input.trusted !== true) continue;
    const read = await readJsonObjectFile(file);
    if (read.kind !== 'object') continue;
    const parsed = parseHookSettings(read.value.hooks, file, source as HookScope);
    all.push(parsed.hooks);
    warnings.push(...parsed.problems);
  }
  // Issue 33: plugin hooks are the user's choice (a --plugin-dir they passed, a plugin they installed
  // and enabled): they run as the user's hooks do, with CLAUDE_PLUGIN_ROOT in their environment.
  const plugins = await loadPlugins({ cwd: input.cwd, pluginDirs: input.pluginDirs, home, trusted: input.trusted === true });
  for (const plugin of plugins.plugins) {
    if (plugin.hooks === undefined) continue;
    const parsed = parseHookSettings(plugin.hooks, `plugin ${plugin.name} (${plugin.root})`, 'user');
    all.push(withPluginRoot(parsed.hooks, plugin.root));
    warnings.push(...parsed.problems);
  }
  return { hooks: mergeHookSettings(all), warnings };
}

function withPluginRoot(settings: HookSettings, pluginRoot: string): HookSettings {
  return Object.fromEntries(
    Object.entries(settings).map(([event, matchers]) => [
      event,
      matchers?.map((matcher) => ({ ...matcher, hooks: matcher.hooks.map((hook) => ({ ...hook, pluginRoot })) })),
    ]),
  ) as HookSettings;
}

/**
 * One event's hooks, each by its kind, all at once: commands on the shared runner (the user's own
 * as the user, the workspace's in the sandbox), HTTP hooks POSTed the event JSON, prompt hooks one
 * model call. The outcomes come back in the order of `input.commands`.
 */
async function runHooksIn(deps: HookActivitiesDeps, input: RunHooksInput): Promise<RunHooksResult> {
  const stdin = hookInputJson(
    {
      session_id: input.conversationId,
      transcript_path: input.transcriptPath ?? '',
      cwd: input.cwd,
      ...(input.permissionMode ? { permission_mode: input.permissionMode } : {}),
    },
    input.event,
  );
  const home = deps.home ?? os.homedir();
  const commandIndexes = input.commands.flatMap((hook, index) => (hook.type === 'command' ? [index] : []));
  const commandRuns = runHookProcesses<HookRunOutcome>(
    deps.stateDir,
    {
      conversationId: input.conversationId,
      cwd: input.cwd,
      stdin,
      commands: commandIndexes.map((index) => {
        const hook = input.commands[index] as Extract<HookHandler, { type: 'command' }>;
        return {
          command: hook.command,
          timeout: hook.timeout,
          ...(hook.scope === 'user' ? { asUser: true, env: { HOME: home, ...(hook.pluginRoot && { CLAUDE_PLUGIN_ROOT: hook.pluginRoot }) } } : {}),
        };
      }),
      additionalDirectories: input.additionalDirectories,
      settingSources: input.settingSources,
      sandbox: input.sandbox,
      label: `${input.event.hook_event_name} hooks cancelled`,
    },
    async (result) => {
      if (result.kind === 'not-run') return { command: result.command, exitCode: null, stdout: '', stderr: '', error: result.message };
      const { run } = result;
      const json = parseHookJson(run.stdout);
      return {
        command: result.command,
        exitCode: run.exitCode,
        stdout: await boundHookOutput(run.stdout, run.truncated, () => result.save('stdout', run.stdout)),
        stderr: await boundHookOutput(run.stderr, run.truncated, () => result.save('stderr', run.stderr)),
        ...(run.timedOut ? { timedOut: true } : {}),
        ...(result.notices ? { notices: result.notices } : {}),
        // Parsed from the whole output: a long JSON answer (a big updatedInput) is still read.
        ...(json && JSON.stringify(json).length <= MAX_HOOK_JSON_CHARS ? { json } : {}),
      };
    },
  );
  const signal = Context.current().cancellationSignal;
  const others = Promise.all(
    input.commands.map(async (hook): Promise<HookRunOutcome | undefined> => {
      if (hook.type === 'http') return runHttpHook(hook, stdin, deps.env ?? process.env, signal);
      if (hook.type === 'prompt') return runPromptHook(hook, stdin, deps.anthropic, signal);
      if (hook.type === 'mcp_tool') return runMcpToolHook(hook, JSON.parse(stdin) as Record<string, unknown>, input, deps.mcpConnections, signal);
      return undefined;
    }),
  );
  const [commandOutcomes, rest] = await Promise.all([commandRuns, others]);
  const byIndex = new Map(commandIndexes.map((index, position) => [index, commandOutcomes[position]!]));
  return { outcomes: rest.map((outcome, index) => outcome ?? byIndex.get(index)!) };
}

/** Longest response body read from an HTTP hook (as a command's stdout is bounded). */
const MAX_HTTP_HOOK_BODY_CHARS = 100_000;

/**
 * An HTTP hook (Claude Code's `type: "http"`): the event JSON POSTed to `url`; a 2xx body is read
 * as a command's stdout (JSON decisions, or plain text); any other status, a timeout or a
 * connection failure is a non-blocking error (to block, a hook answers 2xx with a decision).
 * Headers get `$VAR` only for `allowedEnvVars`; redirects are not followed (the event JSON must not
 * go where the settings did not say).
 */
export async function runHttpHook(hook: HttpHook, body: string, env: Record<string, string | undefined>, signal: AbortSignal): Promise<HookRunOutcome> {
  const label = hookLabel(hook);
  const timeoutMs = Math.min(hook.timeout ?? DEFAULT_HOOK_TIMEOUT_SECONDS, MAX_HOOK_TIMEOUT_SECONDS) * 1000;
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(hook.url, {
      method: 'POST',
      headers: { ...expandHookHeaders(hook.headers, hook.allowedEnvVars, env), 'content-type': 'application/json' },
      body,
      redirect: 'manual',
      signal: AbortSignal.any([signal, timeout]),
    });
    const text = (await response.text()).slice(0, MAX_HTTP_HOOK_BODY_CHARS);
    if (response.status < 200 || response.status >= 300) {
      return { command: label, exitCode: null, stdout: '', stderr: '', error: `HTTP ${response.status}${text.trim() ? `: ${text.trim().slice(0, 300)}` : ''}` };
    }
    const json = parseHookJson(text);
    return { command: label, exitCode: 0, stdout: text, stderr: '', ...(json ? { json } : {}) };
  } catch (error) {
    signal.throwIfAborted();
    if (timeout.aborted) return { command: label, exitCode: null, stdout: '', stderr: '', timedOut: true };
    return { command: label, exitCode: null, stdout: '', stderr: '', error: `request failed: ${(error as Error).message}` };
  }
}

/**
 * A prompt hook (Claude Code's `type: "prompt"`): one model call through the worker's model client
 * with the event JSON (`$ARGUMENTS`), its `{"ok": …, "reason"}` answer read by promptHookOutcome.
 */
export async function runPromptHook(hook: PromptHook, inputJson: string, anthropic: Anthropic | undefined, signal: AbortSignal): Promise<HookRunOutcome> {
  const label = hookLabel(hook);
  if (!anthropic) return { command: label, exitCode: null, stdout: '', stderr: '', error: 'no model client on this worker (ANTHROPIC_API_KEY is not set)' };
  const timeout = AbortSignal.timeout(Math.min(hook.timeout ?? DEFAULT_PROMPT_HOOK_TIMEOUT_SECONDS, MAX_HOOK_TIMEOUT_SECONDS) * 1000);
  try {
    // Claude Code's prompt hooks default to its small fast model.
    const text = await askSmallModel(anthropic, {
      model: hook.model,
      system: PROMPT_HOOK_SYSTEM,
      prompt: promptHookText(hook.prompt, inputJson),
      maxTokens: 1024,
      signal: AbortSignal.any([signal, timeout]),
      maxRetries: 2,
    });
    return promptHookOutcome(label, text);
  } catch (error) {
    signal.throwIfAborted();
    if (timeout.aborted) return { command: label, exitCode: null, stdout: '', stderr: '', timedOut: true };
    return { command: label, exitCode: null, stdout: '', stderr: '', error: `model call failed: ${(error as Error).message}` };
  }
}

/**
 * An `mcp_tool` hook (Claude Code's, v2.1.118): one `tools/call` on a server of the conversation,
 * its `input` filled from the event JSON (substituteHookInput); the tool's text is read as a
 * command's stdout (JSON decisions, or plain text). An error result, a server that is not
 * connected or not the conversation's, or a timeout is a non-blocking error (fail open, as
 * Claude Code's). A project or local hook may call only the workspace's own servers (project and
 * local scope): a workspace's settings do not reach the user's servers without the model's
 * permission check.
 */
export async function runMcpToolHook(
  hook: McpToolHook,
  hookInput: Record<string, unknown>,
  input: Pick<RunHooksInput, 'mcp' | 'cwd'>,
  connections: McpConnectionManager | undefined,
  signal: AbortSignal,
): Promise<HookRunOutcome> {
  const label = hookLabel(hook);
  const failed = (error: string): HookRunOutcome => ({ command: label, exitCode: null, stdout: '', stderr: '', error });
  const server = input.mcp?.servers.find((entry) => entry.name === hook.server);
  if (!server || !connections) return failed(`MCP server "${hook.server}" is not one of this conversation's servers`);
  if (server.approval !== 'approved') return failed(`MCP server "${hook.server}" is not approved`);
  const workspaceHook = hook.scope === 'project' || hook.scope === 'local';
  if (workspaceHook && server.scope !== 'project' && server.scope !== 'local') {
    return failed(`a workspace's hook may call only the workspace's own MCP servers; "${hook.server}" is ${server.scope}-scoped`);
  }
  const timeoutMs = Math.min(hook.timeout ?? DEFAULT_HOOK_TIMEOUT_SECONDS, MAX_HOOK_TIMEOUT_SECONDS) * 1000;
  try {
    const connection = await connections.get(input.mcp!.scope, server.name, server.config, input.cwd, server.scope);
    if (connection.state !== 'connected' || !connection.client)
      return failed(`MCP server "${hook.server}" is not connected: ${connection.error ?? 'unknown error'}`);
    const client = connection.client;
    const result = await connections.using(connection, () =>
      client.callTool({ name: hook.tool, arguments: substituteHookInput(hook.input, hookInput) }, undefined, { timeout: timeoutMs, signal }),
    );
    const mapped = mapMcpCallResult(result as Parameters<typeof mapMcpCallResult>[0]);
    const text = mapped.content
      .map((block) => (block.type === 'text' ? block.text : ''))
      .join('\n')
      .slice(0, MAX_HTTP_HOOK_BODY_CHARS);
    if (mapped.isError) return failed(`the tool answered with an error${text.trim() ? `: ${text.trim().slice(0, 300)}` : ''}`);
    const json = parseHookJson(text);
    return { command: label, exitCode: 0, stdout: text, stderr: '', ...(json ? { json } : {}) };
  } catch (error) {
    signal.throwIfAborted();
    const message = (error as Error).message;
    if (/timed? ?out/i.test(message)) return { command: label, exitCode: null, stdout: '', stderr: '', timedOut: true };
    return failed(`tools/call failed: ${message}`);
  }
}

/** A JSON answer larger than this is not recorded (it would bloat history); its bounded stdout stays. */
const MAX_HOOK_JSON_CHARS = 100_000;
