/**
 * Claude Code's command hooks (issue 22 §4), pure: the settings format
 * (`hooks.<Event>[{matcher, hooks:[{type:"command", command, timeout}]}]`), which hooks an event
 * runs (matchers), the JSON each gets on stdin, and what their exit codes and JSON answers mean to
 * the loop (decideHookOutcome), in Claude Code's words. The workflow decides on recorded runs, so
 * a replay never runs a hook again.
 */
import { z } from 'zod';

/**
 * Every hook event Claude Code documents that this engine has a place for (the settings keep
 * them; which ones fire, and where, is workflows/extensions/hooks.ts; WorktreeCreate and
 * WorktreeRemove are fired by the worktree code, workflows/worktrees.ts, through `worktreeHookEvent`).
 */
export const HOOK_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'UserPromptSubmit',
  'SessionStart',
  'SessionEnd',
  'Stop',
  'SubagentStop',
  'PreCompact',
  'Notification',
  // issue 33
  'PermissionRequest',
  'PermissionDenied',
  'PostToolUseFailure',
  'SubagentStart',
  'TaskCreated',
  'TaskCompleted',
  'StopFailure',
  'PostCompact',
  'InstructionsLoaded',
  'ConfigChange',
  'CwdChanged',
  'UserPromptExpansion',
  'Setup',
  'WorktreeCreate',
  'WorktreeRemove',
  'PostToolBatch',
] as const;
export type HookEventName = (typeof HOOK_EVENTS)[number];

/**
 * Events Claude Code documents that have no place in this engine (agent teams, MCP elicitation
 * dialogs, file watching): configured, they are reported as not supported and ignored.
 */
export const UNSUPPORTED_HOOK_EVENTS = ['TeammateIdle', 'Elicitation', 'ElicitationResult', 'FileChanged'] as const;

export const SESSION_START_SOURCES = ['startup', 'resume', 'clear', 'compact'] as const;
export const PRE_COMPACT_TRIGGERS = ['manual', 'auto'] as const;
export const SESSION_END_REASONS = ['clear', 'logout', 'prompt_input_exit', 'other'] as const;
/** Claude Code's notification types (the Notification matcher's field). */
export const NOTIFICATION_TYPES = ['permission_prompt', 'idle_prompt', 'auth_success', 'elicitation_dialog'] as const;
/** StopFailure's matcher field: the kind of API error that ended the turn. */
export const STOP_FAILURE_ERRORS = [
  'rate_limit',
  'authentication_failed',
  'billing_error',
  'invalid_request',
  'server_error',
  'max_output_tokens',
  'unknown',
] as const;
/** InstructionsLoaded's fields (its matcher is `load_reason`). */
export const MEMORY_TYPES = ['User', 'Project', 'Local', 'Managed'] as const;
export const INSTRUCTIONS_LOAD_REASONS = ['session_start', 'nested_traversal', 'path_glob_match', 'include', 'compact'] as const;
/** ConfigChange's matcher field. */
export const CONFIG_CHANGE_SOURCES = ['user_settings', 'project_settings', 'local_settings', 'policy_settings', 'skills'] as const;
export const SETUP_TRIGGERS = ['init', 'maintenance'] as const;

/** Claude Code's default per-hook timeout, in seconds (command hooks; HTTP and prompt hooks have their own). */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 60;
/** Claude Code's default timeouts of prompt hooks (30 s) and HTTP hooks (as command hooks here). */
export const DEFAULT_PROMPT_HOOK_TIMEOUT_SECONDS = 30;

/**
 * Where a hook came from, set by the loader (never read from the file: a project's settings must
 * not claim to be the user's). User hooks run as the user; project and local hooks are workspace
 * content and run in the sandbox; plugin hooks as the plugin's scope says.
 */
export type HookScope = 'user' | 'project' | 'local' | 'plugin';

const commonHookFields = {
  timeout: z.number().positive().optional(),
  /** Claude Code: runs in the background without blocking; its output is delivered when it ends. */
  async: z.boolean().optional(),
  statusMessage: z.string().optional(),
};
const commandHookSchema = z.object({ type: z.literal('command'), command: z.string().min(1), ...commonHookFields });
const httpHookSchema = z.object({
  type: z.literal('http'),
  url: z
    .string()
    .url()
    .refine((url) => /^https?:\/\//i.test(url), 'must be an http:// or https:// URL'),
  headers: z.record(z.string(), z.string()).optional(),
  allowedEnvVars: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).optional(),
  ...commonHookFields,
});
const promptHookSchema = z.object({ type: z.literal('prompt'), prompt: z.string().min(1), model: z.string().min(1).optional(), ...commonHookFields });
/** Claude Code's `mcp_tool` hook: a tool of one of the conversation's connected MCP servers, its `input`'s `${path}` strings filled from the hook's input. */
const mcpToolHookSchema = z.object({
  type: z.literal('mcp_tool'),
  server: z.string().min(1),
  tool: z.string().min(1),
  input: z.record(z.string(), z.unknown()).optional(),
  ...commonHookFields,
});
const hookHandlerSchema = z.discriminatedUnion('type', [commandHookSchema, httpHookSchema, promptHookSchema, mcpToolHookSchema]);

/** One hook handler: a command, an HTTP endpoint, a prompt for a model or an MCP tool (with where it came from). */
export type HookHandler = z.infer<typeof hookHandlerSchema> & {
  scope?: HookScope;
  /** Issue 33: a plugin's hook, run with `CLAUDE_PLUGIN_ROOT` set to this folder (set by the loader). */
  pluginRoot?: string;
};
/** Kept under its first name: callers (plugins) build and select hooks as HookCommand. */
export type HookCommand = HookHandler;
export type CommandHook = Extract<HookHandler, { type: 'command' }>;
export type HttpHook = Extract<HookHandler, { type: 'http' }>;
export type PromptHook = Extract<HookHandler, { type: 'prompt' }>;
export type McpToolHook = Extract<HookHandler, { type: 'mcp_tool' }>;
/** The handler kinds that run here (Claude Code's `agent` kind does not). */
export const HOOK_HANDLER_TYPES = ['command', 'http', 'prompt', 'mcp_tool'] as const;

/** Events whose prompt hooks Claude Code supports (the rest take command and HTTP hooks). */
export const PROMPT_HOOK_EVENTS: readonly HookEventName[] = [
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PermissionRequest',
  'UserPromptSubmit',
  'Stop',
  'SubagentStop',
  'TaskCreated',
  'TaskCompleted',
];

/** A hook's name in messages and in its recorded outcome: the command, the URL, or the prompt. */
export function hookLabel(hook: HookHandler): string {
  switch (hook.type) {
    case 'command':
      return hook.command;
    case 'http':
      return hook.url;
    case 'prompt':
      return `prompt: ${hook.prompt.length <= 80 ? hook.prompt : `${hook.prompt.slice(0, 79)}…`}`;
    case 'mcp_tool':
      return `mcp_tool: ${hook.server}/${hook.tool}`;
  }
}

/**
 * An `mcp_tool` hook's arguments: every `${path}` in its `input`'s strings replaced by the hook
 * input's value at that dotted path (`${tool_input.file_path}`, `${session_id}`, `${cwd}`); a string
 * that is one placeholder takes the value as it is (a number stays a number); an unknown path is
 * empty. Pure: the runHooks activity calls it with the JSON the hook would read on stdin.
 */
export function substituteHookInput(input: Record<string, unknown> | undefined, hookInput: Record<string, unknown>): Record<string, unknown> {
  const at = (dotted: string): unknown =>
    dotted
      .split('.')
      .reduce<unknown>((value, key) => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined), hookInput);
  const fill = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const whole = /^\$\{([A-Za-z0-9_.]+)\}$/.exec(value);
      if (whole) return at(whole[1]) ?? '';
      return value.replace(/\$\{([A-Za-z0-9_.]+)\}/g, (_match, dotted: string) => {
        const found = at(dotted);
        return found === undefined || found === null ? '' : typeof found === 'string' ? found : JSON.stringify(found);
      });
    }
    if (Array.isArray(value)) return value.map(fill);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fill(item)]));
    return value;
  };
  return fill(input ?? {}) as Record<string, unknown>;
}

/** One event's hooks in Claude Code's settings format: `[{matcher, hooks:[{type, …}]}]`. */
export const hookMatchersSchema = z.array(z.object({ matcher: z.string().optional(), hooks: z.array(hookHandlerSchema) }));
export type HookMatcher = { matcher?: string; hooks: HookHandler[] };
/** A matcher whose hooks are read one by one (a bad hook is reported and skipped, not the whole matcher). */
const matcherSchema = z.object({ matcher: z.string().optional(), hooks: z.array(z.unknown()) });
/** Hooks by event, from one or more settings files (concatenated lowest precedence first). */
export type HookSettings = Partial<Record<HookEventName, HookMatcher[]>>;

/**
 * Reads a settings file's `hooks` object. Bad entries are reported with the file and the place and
 * skipped; the rest of the file's hooks are kept. Handler kinds that do not run here (`agent`,
 * `mcp_tool`) and events without a place here are reported as not supported. `scope` (where the
 * file is: the user's, the project's…) is put on every hook; the file cannot set it.
 */
export function parseHookSettings(value: unknown, file: string, scope?: HookScope): { hooks: HookSettings; problems: string[] } {
  const hooks: HookSettings = {};
  const problems: string[] = [];
  if (value === undefined) return { hooks, problems };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { hooks, problems: [`${file}: "hooks" must be an object of events; it was ignored.`] };
  }
  for (const [event, matchers] of Object.entries(value)) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      problems.push(
        (UNSUPPORTED_HOOK_EVENTS as readonly string[]).includes(event)
          ? `${file}: hooks.${event} is a Claude Code event durable-agent does not support (it has no place here); it was ignored.`
          : `${file}: hooks.${event} is not a hook event (one of ${HOOK_EVENTS.join(', ')}); it was ignored.`,
      );
      continue;
    }
    if (!Array.isArray(matchers)) {
      problems.push(`${file}: hooks.${event} must be an array of {matcher, hooks}; it was ignored.`);
      continue;
    }
    const kept: HookMatcher[] = [];
    matchers.forEach((raw, index) => {
      const at = `hooks.${event}[${index}]`;
      const parsed = matcherSchema.safeParse(raw);
      if (!parsed.success) {
        problems.push(`${file}: ${at} is not {matcher, hooks:[…]}; it was ignored.`);
        return;
      }
      if (parsed.data.matcher !== undefined && matcherProblem(parsed.data.matcher)) {
        problems.push(`${file}: ${at}.matcher ${JSON.stringify(parsed.data.matcher)} is not a valid regular expression; it was ignored.`);
        return;
      }
      const handlers: HookHandler[] = [];
      parsed.data.hooks.forEach((hook, hookIndex) => {
        const where = `${file}: ${at}.hooks[${hookIndex}]`;
        const type = (hook as { type?: unknown } | null)?.type;
        if (typeof type === 'string' && !(HOOK_HANDLER_TYPES as readonly string[]).includes(type)) {
          problems.push(`${where} has type "${type}"; only ${HOOK_HANDLER_TYPES.map((kind) => `"${kind}"`).join(', ')} hooks run here; it was ignored.`);
          return;
        }
        const handler = hookHandlerSchema.safeParse(hook);
        if (!handler.success) {
          problems.push(
            `${where} is not a valid ${typeof type === 'string' ? `"${type}" ` : ''}hook: ${handler.error.issues.map((issue) => `${issue.path.join('.') || 'hook'}: ${issue.message}`).join('; ')}; it was ignored.`,
          );
          return;
        }
        if (handler.data.type === 'prompt' && !PROMPT_HOOK_EVENTS.includes(event as HookEventName)) {
          problems.push(`${where}: ${event} does not take prompt hooks (only ${PROMPT_HOOK_EVENTS.join(', ')}); it was ignored.`);
          return;
        }
        handlers.push(scope ? { ...handler.data, scope } : handler.data);
      });
      if (handlers.length > 0) kept.push({ ...(parsed.data.matcher !== undefined ? { matcher: parsed.data.matcher } : {}), hooks: handlers });
    });
    if (kept.length > 0) hooks[event as HookEventName] = [...(hooks[event as HookEventName] ?? []), ...kept];
  }
  return { hooks, problems };
}

/** Merges hook settings of several files (each event's matchers concatenated in order). */
export function mergeHookSettings(settings: readonly HookSettings[]): HookSettings {
  const merged: HookSettings = {};
  for (const one of settings) {
    for (const event of HOOK_EVENTS) {
      if (one[event]) merged[event] = [...(merged[event] ?? []), ...one[event]!];
    }
  }
  return merged;
}

function matcherProblem(matcher: string): boolean {
  if (matcher === '*' || isSimpleMatcher(matcher)) return false;
  try {
    new RegExp(matcher);
    return false;
  } catch {
    return true;
  }
}

/** Names and `A|B` lists are compared exactly; anything else is a regular expression. */
function isSimpleMatcher(matcher: string): boolean {
  return /^[a-zA-Z0-9_|]*$/.test(matcher);
}

/**
 * Claude Code's matcher rule: empty, absent or `*` matches everything; `Write` or `Edit|Write`
 * match those names exactly; anything else (`Notebook.*`, `mcp__.*`, `mcp__github__.*`) is a
 * regular expression tested against the value.
 */
export function hookMatcherMatches(matcher: string | undefined, value: string | undefined): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return true;
  if (value === undefined) return false;
  if (isSimpleMatcher(matcher)) return matcher.split('|').includes(value);
  try {
    return new RegExp(matcher).test(value);
  } catch {
    return false;
  }
}

// ---- events: what each hook gets on stdin (Claude Code's field names) ----

export type HookEvent =
  | { hook_event_name: 'PreToolUse'; tool_name: string; tool_input: Record<string, unknown>; tool_use_id: string }
  | { hook_event_name: 'PostToolUse'; tool_name: string; tool_input: Record<string, unknown>; tool_response: unknown; tool_use_id: string }
  | { hook_event_name: 'UserPromptSubmit'; prompt: string }
  | { hook_event_name: 'SessionStart'; source: (typeof SESSION_START_SOURCES)[number] }
  | { hook_event_name: 'SessionEnd'; reason: (typeof SESSION_END_REASONS)[number] }
  | { hook_event_name: 'Stop'; stop_hook_active: boolean; last_assistant_message?: string }
  | { hook_event_name: 'SubagentStop'; stop_hook_active: boolean; agent_id?: string; agent_type?: string; last_assistant_message?: string }
  | { hook_event_name: 'PreCompact'; trigger: (typeof PRE_COMPACT_TRIGGERS)[number]; custom_instructions: string }
  | { hook_event_name: 'Notification'; message: string; notification_type: (typeof NOTIFICATION_TYPES)[number]; title?: string }
  // issue 33
  | {
      hook_event_name: 'PermissionRequest';
      tool_name: string;
      tool_input: Record<string, unknown>;
      tool_use_id?: string;
      permission_suggestions?: unknown[];
    }
  | { hook_event_name: 'PermissionDenied'; tool_name: string; tool_input: Record<string, unknown>; tool_use_id: string; reason: string }
  | {
      hook_event_name: 'PostToolUseFailure';
      tool_name: string;
      tool_input: Record<string, unknown>;
      tool_use_id: string;
      error: string;
      is_interrupt?: boolean;
    }
  | { hook_event_name: 'SubagentStart'; agent_id: string; agent_type: string }
  | { hook_event_name: 'TaskCreated' | 'TaskCompleted'; task_id: string; task_subject: string; task_description?: string }
  | {
      hook_event_name: 'StopFailure';
      error: (typeof STOP_FAILURE_ERRORS)[number];
      error_details?: string;
      last_assistant_message?: string;
    }
  | { hook_event_name: 'PostCompact'; trigger: (typeof PRE_COMPACT_TRIGGERS)[number]; compact_summary: string }
  | {
      hook_event_name: 'InstructionsLoaded';
      file_path: string;
      memory_type: (typeof MEMORY_TYPES)[number];
      load_reason: (typeof INSTRUCTIONS_LOAD_REASONS)[number];
      globs?: string[];
      trigger_file_path?: string;
      parent_file_path?: string;
    }
  | { hook_event_name: 'ConfigChange'; source: (typeof CONFIG_CHANGE_SOURCES)[number]; file_path?: string }
  | { hook_event_name: 'CwdChanged'; old_cwd: string; new_cwd: string }
  | {
      hook_event_name: 'UserPromptExpansion';
      expansion_type: 'slash_command' | 'mcp_prompt';
      command_name: string;
      command_args: string;
      command_source?: string;
      prompt: string;
    }
  | { hook_event_name: 'Setup'; trigger: (typeof SETUP_TRIGGERS)[number] }
  | { hook_event_name: 'WorktreeCreate'; name: string }
  | { hook_event_name: 'WorktreeRemove'; worktree_path: string }
  /** After every tool call of one model reply has its result, before the next model call (Claude Code's). */
  | {
      hook_event_name: 'PostToolBatch';
      tool_calls: Array<{ tool_name: string; tool_input: Record<string, unknown>; tool_use_id: string; tool_response: string }>;
    };

/** Fields every hook input has. */
export interface HookCommonInput {
  session_id: string;
  transcript_path: string;
  cwd: string;
  permission_mode?: string;
}

/** The JSON a hook reads on stdin. */
export function hookInputJson(common: HookCommonInput, event: HookEvent): string {
  return JSON.stringify({ ...common, ...event });
}

/** The value an event's matcher is tested against (undefined: the event has no matcher; every hook runs). */
export function hookMatchValue(event: HookEvent): string | undefined {
  switch (event.hook_event_name) {
    case 'PreToolUse':
    case 'PostToolUse':
    case 'PermissionRequest':
    case 'PermissionDenied':
    case 'PostToolUseFailure':
      return event.tool_name;
    case 'SessionStart':
      return event.source;
    case 'PreCompact':
    case 'PostCompact':
      return event.trigger;
    case 'Notification':
      return event.notification_type;
    case 'SessionEnd':
      return event.reason;
    case 'SubagentStart':
      return event.agent_type;
    case 'SubagentStop':
      return event.agent_type;
    case 'StopFailure':
      return event.error;
    case 'InstructionsLoaded':
      return event.load_reason;
    case 'ConfigChange':
      return event.source;
    case 'UserPromptExpansion':
      return event.command_name;
    case 'Setup':
      return event.trigger;
    default:
      return undefined;
  }
}

/**
 * The hooks an event runs: those under a matching matcher (for events without a matcher, all),
 * each distinct hook once (Claude Code deduplicates identical commands and URLs).
 */
export function selectHookCommands(settings: HookSettings, event: HookEvent): HookCommand[] {
  const value = hookMatchValue(event);
  const hasMatcher = value !== undefined;
  const seen = new Set<string>();
  const selected: HookCommand[] = [];
  for (const matcher of settings[event.hook_event_name] ?? []) {
    if (hasMatcher && !hookMatcherMatches(matcher.matcher, value)) continue;
    for (const hook of matcher.hooks) {
      const key = `${hook.type}\u0000${hook.type === 'prompt' ? hook.prompt : hook.type === 'mcp_tool' ? `${hookLabel(hook)}\u0000${JSON.stringify(hook.input ?? {})}` : hookLabel(hook)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      selected.push(hook);
    }
  }
  return selected;
}

/** The hooks that hold the loop (the rest are `async: true`: they run beside it). */
export function splitAsyncHooks(hooks: readonly HookHandler[]): { blocking: HookHandler[]; background: HookHandler[] } {
  return { blocking: hooks.filter((hook) => hook.async !== true), background: hooks.filter((hook) => hook.async === true) };
}

/** Claude Code's name for the hook in messages: `PreToolUse:Bash`, `SessionStart:startup`, `UserPromptSubmit`. */
export function hookDisplayName(event: HookEvent): string {
  const value = hookMatchValue(event);
  return value !== undefined && event.hook_event_name !== 'SessionEnd' && event.hook_event_name !== 'Notification' && event.hook_event_name !== 'SubagentStop'
    ? `${event.hook_event_name}:${value}`
    : event.hook_event_name;
}

/** StopFailure's `error` for the message of the API error that ended a turn (its matcher field). */
export function stopFailureError(message: string): (typeof STOP_FAILURE_ERRORS)[number] {
  if (/max_output_tokens|maximum output tokens/i.test(message)) return 'max_output_tokens';
  if (/\b429\b|rate.?limit/i.test(message)) return 'rate_limit';
  if (/\b401\b|authentication|api key|x-api-key/i.test(message)) return 'authentication_failed';
  if (/billing|credit balance|payment/i.test(message)) return 'billing_error';
  if (/\b400\b|invalid_request|prompt is too long/i.test(message)) return 'invalid_request';
  if (/\b5\d\d\b|overloaded|server error|internal error|api_error/i.test(message)) return 'server_error';
  return 'unknown';
}

/**
 * WorktreeCreate / WorktreeRemove for the worktree code: the event to give runHooks (through the
 * conversation's hooks, SessionHooks.worktreeCreate / worktreeRemove). A WorktreeCreate hook
 * replaces git's worktree creation: it prints the new worktree's absolute path (command hooks on
 * stdout; HTTP hooks as `hookSpecificOutput.worktreePath`); `decideWorktreeCreate` reads it.
 */
export function worktreeHookEvent(
  action: { type: 'create'; name: string } | { type: 'remove'; worktreePath: string },
): Extract<HookEvent, { hook_event_name: 'WorktreeCreate' | 'WorktreeRemove' }> {
  return action.type === 'create'
    ? { hook_event_name: 'WorktreeCreate', name: action.name }
    : { hook_event_name: 'WorktreeRemove', worktree_path: action.worktreePath };
}

/**
 * What WorktreeCreate's hooks decided: the path the first successful hook gave, or why creation
 * failed (Claude Code: any non-zero exit fails the creation). No hooks: undefined (git creates it).
 */
export function decideWorktreeCreate(outcomes: readonly HookRunOutcome[]): { path: string } | { error: string } | undefined {
  if (outcomes.length === 0) return undefined;
  for (const outcome of outcomes) {
    if (outcome.error !== undefined || outcome.timedOut) return { error: `WorktreeCreate hook [${outcome.command}]: ${outcome.error ?? 'timed out'}` };
    if (outcome.exitCode !== 0) {
      return {
        error: `WorktreeCreate hook [${outcome.command}] failed with exit code ${outcome.exitCode}: ${clip(outcome.stderr.trim() || 'No stderr output')}`,
      };
    }
    const specific = jsonOf(outcome)?.hookSpecificOutput as Record<string, unknown> | undefined;
    const given = typeof specific?.worktreePath === 'string' ? specific.worktreePath : outcome.stdout.trim().split('\n').at(-1)?.trim();
    if (given && given.startsWith('/')) return { path: given };
  }
  return { error: 'WorktreeCreate hooks gave no absolute worktree path' };
}

// ---- outcomes ----

/** One hook's run, as the runHooks activity records it (output bounded). */
export interface HookRunOutcome {
  command: string;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut?: boolean;
  /** It did not run: could not start, or the sandbox refused. */
  error?: string;
  /** Sandbox notices (ran unsandboxed on this host, ignored settings): for the user. */
  notices?: string;
  /** stdout parsed as a JSON object (from the whole output, before bounding), when it was one. */
  json?: Record<string, unknown>;
}

export type HookPermissionDecision = 'allow' | 'deny' | 'ask';

/** What the loop does after an event's hooks ran. */
export interface HookDecision {
  hookName: string;
  /**
   * The action is blocked: PreToolUse (the tool does not run: `blockingMessage` is its error
   * result), PostToolUse (the model sees `blockingMessage` beside the result), UserPromptSubmit
   * (the prompt is not processed: `blockingMessage` is for the user), Stop/SubagentStop (the loop
   * goes on with `blockingMessage` as feedback).
   */
  blocked: boolean;
  blockingMessage?: string;
  /** PreToolUse: the strongest decision of the hooks (deny > ask > allow). */
  permissionDecision?: HookPermissionDecision;
  permissionDecisionReason?: string;
  /** PreToolUse: the input the tool runs with instead (from the hook that decided). */
  updatedInput?: Record<string, unknown>;
  /** `continue: false`: the conversation's query ends after this (stopReason for the user). */
  preventContinuation: boolean;
  stopReason?: string;
  /** Text for the model's context, already in Claude Code's words (`SessionStart:startup hook success: …`). */
  additionalContext: string[];
  /** Lines for the user's feed: systemMessage, non-blocking errors, stderr shown to the user only. */
  userMessages: Array<{ level: 'info' | 'warning'; text: string }>;
  /**
   * PermissionRequest: the hooks answered the ask for the person (deny over allow); `updatedInput`
   * (allow only) is what runs, `interrupt` (deny) stops the turn, `message` (deny) tells the model why.
   */
  permissionRequest?: { behavior: 'allow' | 'deny'; message?: string; updatedInput?: Record<string, unknown>; interrupt?: boolean };
  /** PermissionDenied: a hook said the model may retry the call (`hookSpecificOutput.retry: true`). */
  retry?: boolean;
}

/** Longest text taken from a hook into a message. */
const MAX_HOOK_MESSAGE_CHARS = 10_000;

function clip(text: string): string {
  return text.length <= MAX_HOOK_MESSAGE_CHARS ? text : `${text.slice(0, MAX_HOOK_MESSAGE_CHARS)}… [truncated]`;
}

function jsonOf(outcome: HookRunOutcome): Record<string, unknown> | undefined {
  return outcome.json ?? parseHookJson(outcome.stdout);
}

/** A hook's stdout as Claude Code reads it: a JSON object, or undefined (plain text, an array, invalid JSON). */
export function parseHookJson(text: string): Record<string, unknown> | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(trimmed);
    return value && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Events whose plain stdout (exit 0) is context for the model. */
const CONTEXT_EVENTS: readonly HookEventName[] = ['SessionStart', 'UserPromptSubmit', 'UserPromptExpansion', 'Setup'];
/** Events whose `hookSpecificOutput.additionalContext` reaches the model. */
const ADDITIONAL_CONTEXT_EVENTS: readonly HookEventName[] = [...CONTEXT_EVENTS, 'PostToolUse', 'PostToolUseFailure', 'SubagentStart', 'PostToolBatch'];
/**
 * Events a hook can block (exit 2 or `decision: "block"`): Claude Code's table. PermissionRequest's
 * exit 2 denies the ask; PostToolUseFailure's shows stderr to the model; TaskCreated/TaskCompleted
 * stop the task change; ConfigChange keeps the old configuration; UserPromptExpansion drops the
 * expanded prompt. The others (StopFailure, PostCompact, InstructionsLoaded, CwdChanged, …) only
 * show stderr to the user.
 */
const BLOCKING_EVENTS: readonly HookEventName[] = [
  'PreToolUse',
  'PostToolUse',
  'UserPromptSubmit',
  'Stop',
  'SubagentStop',
  'PermissionRequest',
  'PostToolUseFailure',
  'TaskCreated',
  'TaskCompleted',
  'ConfigChange',
  'UserPromptExpansion',
  'PostToolBatch',
];
const PERMISSION_RANK: Record<HookPermissionDecision, number> = { allow: 1, ask: 2, deny: 3 };

/**
 * Claude Code's hook protocol for one event, over the recorded runs of its hooks (in the order
 * they were selected): exit 0 (stdout is context for SessionStart and UserPromptSubmit; JSON is
 * read), exit 2 (a blocking error from stderr, for the events that can block; otherwise stderr is
 * shown to the user), any other exit code or a timeout (a non-blocking error for the user).
 */
export function decideHookOutcome(event: HookEvent, outcomes: readonly HookRunOutcome[]): HookDecision {
  const name = event.hook_event_name;
  const hookName = hookDisplayName(event);
  const decision: HookDecision = { hookName, blocked: false, preventContinuation: false, additionalContext: [], userMessages: [] };
  const blockingErrors: string[] = [];
  const blockReasons: string[] = [];
  let permission: { decision: HookPermissionDecision; reason?: string; updatedInput?: Record<string, unknown> } | undefined;
  const canBlock = BLOCKING_EVENTS.includes(name);
  let permissionRequest: HookDecision['permissionRequest'];

  for (const outcome of outcomes) {
    const warn = (text: string) => decision.userMessages.push({ level: 'warning', text: `${hookName} hook error: [${outcome.command}]: ${text}` });
    if (outcome.notices) decision.userMessages.push({ level: 'warning', text: `${hookName} hook [${outcome.command}]: ${outcome.notices}` });
    if (outcome.error !== undefined || outcome.timedOut) {
      warn(outcome.error ?? 'timed out');
      continue;
    }
    if (outcome.exitCode === 2) {
      const stderr = clip(outcome.stderr.trim() || 'No stderr output');
      if (canBlock) blockingErrors.push(`[${outcome.command}]: ${stderr}`);
      else warn(stderr);
      continue;
    }
    if (outcome.exitCode !== 0) {
      const stderr = outcome.stderr.trim();
      warn(`Failed with non-blocking status code ${outcome.exitCode}${stderr ? `: ${clip(stderr)}` : ': No stderr output'}`);
      continue;
    }
    const json = jsonOf(outcome);
    if (!json) {
      // Plain stdout: context for the model on SessionStart and UserPromptSubmit (Claude Code's "hook success").
      const stdout = outcome.stdout.trim();
      if (CONTEXT_EVENTS.includes(name) && stdout !== '') decision.additionalContext.push(`${hookName} hook success: ${clip(stdout)}`);
      continue;
    }
    if (json.continue === false) {
      decision.preventContinuation = true;
      if (typeof json.stopReason === 'string' && decision.stopReason === undefined) decision.stopReason = clip(json.stopReason);
    }
    if (typeof json.systemMessage === 'string' && json.systemMessage !== '') decision.userMessages.push({ level: 'info', text: clip(json.systemMessage) });
    const reason = typeof json.reason === 'string' && json.reason !== '' ? clip(json.reason) : undefined;
    const specific = json.hookSpecificOutput && typeof json.hookSpecificOutput === 'object' ? (json.hookSpecificOutput as Record<string, unknown>) : undefined;
    if (name === 'PreToolUse') {
      let choice: HookPermissionDecision | undefined;
      let choiceReason: string | undefined;
      const value = specific?.permissionDecision;
      if (value === 'allow' || value === 'deny' || value === 'ask') {
        choice = value;
        if (typeof specific?.permissionDecisionReason === 'string') choiceReason = clip(specific.permissionDecisionReason);
      } else if (json.decision === 'approve' || json.decision === 'block') {
        // The older top-level form: approve → allow, block → deny.
        choice = json.decision === 'approve' ? 'allow' : 'deny';
        choiceReason = reason;
      }
      const updatedInput =
        specific?.updatedInput && typeof specific.updatedInput === 'object' && !Array.isArray(specific.updatedInput)
          ? (specific.updatedInput as Record<string, unknown>)
          : undefined;
      if (choice && (!permission || PERMISSION_RANK[choice] > PERMISSION_RANK[permission.decision] || (choice === permission.decision && updatedInput))) {
        permission = {
          decision: choice,
          ...(choiceReason !== undefined
            ? { reason: choiceReason }
            : permission?.decision === choice && permission.reason
              ? { reason: permission.reason }
              : {}),
          ...(updatedInput ? { updatedInput } : {}),
        };
      }
    } else if (name === 'PermissionRequest') {
      const answer = permissionRequestAnswer(specific?.decision);
      if (answer && (!permissionRequest || (answer.behavior === 'deny' && permissionRequest.behavior === 'allow'))) permissionRequest = answer;
    } else if (json.decision === 'block' && canBlock) {
      blockReasons.push(reason ?? `Blocked by hook [${outcome.command}]`);
    }
    if (name === 'PermissionDenied' && specific?.retry === true) decision.retry = true;
    if (typeof specific?.additionalContext === 'string' && specific.additionalContext !== '' && ADDITIONAL_CONTEXT_EVENTS.includes(name)) {
      decision.additionalContext.push(`${hookName} hook additional context: ${clip(specific.additionalContext)}`);
    }
  }

  if (permission) {
    decision.permissionDecision = permission.decision;
    if (permission.reason !== undefined) decision.permissionDecisionReason = permission.reason;
    if (permission.updatedInput && permission.decision !== 'deny') decision.updatedInput = permission.updatedInput;
  }
  const blockedByHooks = blockingErrors.length > 0 || blockReasons.length > 0;
  if (name === 'PreToolUse' && (blockedByHooks || permission?.decision === 'deny')) {
    decision.blocked = true;
    decision.permissionDecision = 'deny';
    delete decision.updatedInput;
    decision.blockingMessage =
      blockingErrors.length > 0
        ? blockingErrors.map((error) => `${hookName} hook error: ${error}`).join('\n')
        : (permission?.reason ?? `${hookName} hook denied this tool`);
  } else if (name === 'PermissionRequest') {
    // Exit 2 denies the ask with stderr for the model; a deny answer wins over an allow.
    if (blockedByHooks) {
      decision.permissionRequest = { behavior: 'deny', message: [...blockingErrors, ...blockReasons].join('\n') };
    } else if (permissionRequest) decision.permissionRequest = permissionRequest;
  } else if (blockedByHooks) {
    decision.blocked = true;
    decision.blockingMessage = blockingMessage(name, hookName, blockingErrors, blockReasons);
  }
  return decision;
}

/** PermissionRequest's `hookSpecificOutput.decision`, as Claude Code reads it (anything else: no answer). */
function permissionRequestAnswer(value: unknown): HookDecision['permissionRequest'] | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const answer = value as Record<string, unknown>;
  if (answer.behavior === 'allow') {
    const updated = answer.updatedInput;
    return {
      behavior: 'allow',
      ...(updated && typeof updated === 'object' && !Array.isArray(updated) ? { updatedInput: updated as Record<string, unknown> } : {}),
    };
  }
  if (answer.behavior === 'deny') {
    return {
      behavior: 'deny',
      ...(typeof answer.message === 'string' && answer.message !== '' ? { message: clip(answer.message) } : {}),
      ...(answer.interrupt === true ? { interrupt: true } : {}),
    };
  }
  return undefined;
}

/**
 * A prompt hook's answer as a run's outcome (Claude Code: the model answers `{"ok": true}` or
 * `{"ok": false, "reason": "…"}`): ok is exit 0; not ok is a blocking error with the reason (exit 2,
 * so each event reads it as its exit 2: PreToolUse blocks, Stop goes on, PermissionRequest denies).
 * An answer that is not that JSON is a non-blocking error.
 */
export function promptHookOutcome(label: string, answer: string): HookRunOutcome {
  const text = answer.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, '$1');
  const json = parseHookJson(text);
  if (json && json.ok === true) return { command: label, exitCode: 0, stdout: '', stderr: '' };
  if (json && json.ok === false) {
    return { command: label, exitCode: 2, stdout: '', stderr: typeof json.reason === 'string' && json.reason !== '' ? json.reason : 'The prompt hook said no' };
  }
  return {
    command: label,
    exitCode: null,
    stdout: answer,
    stderr: '',
    error: `the model's answer was not {"ok": true|false, "reason"}: ${clip(answer.trim()).slice(0, 300)}`,
  };
}

/** The prompt a prompt hook sends: `$ARGUMENTS` replaced by the event JSON, or the JSON appended (Claude Code). */
export function promptHookText(prompt: string, inputJson: string): string {
  return prompt.includes('$ARGUMENTS') ? prompt.split('$ARGUMENTS').join(inputJson) : `${prompt}\n\n${inputJson}`;
}

/** The system prompt of a prompt hook's model call: answer only the decision JSON. */
export const PROMPT_HOOK_SYSTEM =
  'You are evaluating a hook in Claude Code. Answer with only a JSON object: {"ok": true} if the condition is met or the action may proceed, or {"ok": false, "reason": "why"} if not.';

/**
 * An HTTP hook's headers with `$VAR` / `${VAR}` replaced by the environment's value only for names
 * in `allowedEnvVars` (Claude Code: other references become empty, so a hook cannot read the
 * worker's secrets it was not granted).
 */
export function expandHookHeaders(
  headers: Record<string, string> | undefined,
  allowed: readonly string[] | undefined,
  env: Record<string, string | undefined>,
): Record<string, string> {
  const expanded: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    expanded[name] = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, braced: string | undefined, bare: string | undefined) => {
      const variable = (braced ?? bare)!;
      return allowed?.includes(variable) ? (env[variable] ?? '') : '';
    });
  }
  return expanded;
}

function blockingMessage(name: HookEventName, hookName: string, errors: string[], reasons: string[]): string {
  switch (name) {
    case 'TaskCreated':
    case 'TaskCompleted':
      return `${hookName} hook blocked this task change:\n${[...errors, ...reasons].join('\n')}`;
    case 'Stop':
    case 'SubagentStop':
      // seed §2.9, claude-code-observed.md "Recovery paths": the loop goes on with this as a user message.
      return `${name} hook feedback:\n${[...errors, ...reasons].join('\n')}`;
    case 'UserPromptSubmit':
      // The prompt is not processed; the user (not the model) sees why.
      return `UserPromptSubmit operation blocked by hook:\n${[...errors, ...reasons].join('\n')}`;
    default:
      // PostToolUse: the tool already ran; the model sees this beside its result.
      return [...errors.map((error) => `${hookName} hook error: ${error}`), ...reasons.map((reason) => `${hookName} hook blocking error: ${reason}`)].join(
        '\n',
      );
  }
}
