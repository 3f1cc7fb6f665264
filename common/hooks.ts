/**
 * Claude Code's command hooks (issue 22 §4), pure: the settings format
 * (`hooks.<Event>[{matcher, hooks:[{type:"command", command, timeout}]}]`), which hooks an event
 * runs (matchers), the JSON each gets on stdin, and what their exit codes and JSON answers mean to
 * the loop (decideHookOutcome), in Claude Code's words. The workflow decides on recorded runs, so
 * a replay never runs a hook again.
 */
import { z } from 'zod';

/** Every command hook event Claude Code has that this engine has a place for. */
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
] as const;
export type HookEventName = (typeof HOOK_EVENTS)[number];

export const SESSION_START_SOURCES = ['startup', 'resume', 'clear', 'compact'] as const;
export const PRE_COMPACT_TRIGGERS = ['manual', 'auto'] as const;
export const SESSION_END_REASONS = ['clear', 'logout', 'prompt_input_exit', 'other'] as const;
/** Claude Code's notification types (the Notification matcher's field). */
export const NOTIFICATION_TYPES = ['permission_prompt', 'idle_prompt', 'auth_success', 'elicitation_dialog'] as const;

/** Claude Code's default per-hook timeout, in seconds. */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 60;

const commandHookSchema = z.object({
  type: z.literal('command'),
  command: z.string().min(1),
  timeout: z.number().positive().optional(),
});
export type HookCommand = z.infer<typeof commandHookSchema>;

/** One event's hooks in Claude Code's settings format: `[{matcher, hooks:[{type:"command", command, timeout}]}]`. */
export const hookMatchersSchema = z.array(z.object({ matcher: z.string().optional(), hooks: z.array(commandHookSchema) }));
export type HookMatcher = z.infer<typeof hookMatchersSchema>[number];
/** A matcher whose hooks are read one by one (a bad hook is reported and skipped, not the whole matcher). */
const matcherSchema = z.object({ matcher: z.string().optional(), hooks: z.array(z.unknown()) });
/** Hooks by event, from one or more settings files (concatenated lowest precedence first). */
export type HookSettings = Partial<Record<HookEventName, HookMatcher[]>>;

/** Events Claude Code has that this engine does not run yet (reported, not an error). */
const KNOWN_OTHER_EVENTS = ['PermissionRequest', 'PostToolUseFailure', 'PermissionDenied', 'SubagentStart', 'PreToolUseFailure'];

/**
 * Reads a settings file's `hooks` object. Bad entries are reported with the file and the place and
 * skipped; the rest of the file's hooks are kept. Hook types other than `command` (prompt, http,
 * agent) are reported as not supported.
 */
export function parseHookSettings(value: unknown, file: string): { hooks: HookSettings; problems: string[] } {
  const hooks: HookSettings = {};
  const problems: string[] = [];
  if (value === undefined) return { hooks, problems };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { hooks, problems: [`${file}: "hooks" must be an object of events; it was ignored.`] };
  }
  for (const [event, matchers] of Object.entries(value)) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      problems.push(
        KNOWN_OTHER_EVENTS.includes(event)
          ? `${file}: hooks.${event} is not run by durable-agent yet; it was ignored.`
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
      const commands: HookCommand[] = [];
      parsed.data.hooks.forEach((hook, hookIndex) => {
        const command = commandHookSchema.safeParse(hook);
        if (command.success) commands.push(command.data);
        else {
          const type = (hook as { type?: unknown } | null)?.type;
          problems.push(
            typeof type === 'string' && type !== 'command'
              ? `${file}: ${at}.hooks[${hookIndex}] has type "${type}"; only "command" hooks run here; it was ignored.`
              : `${file}: ${at}.hooks[${hookIndex}] is not {type:"command", command, timeout?}: ${command.error.issues.map((issue) => `${issue.path.join('.') || 'hook'}: ${issue.message}`).join('; ')}; it was ignored.`,
          );
        }
      });
      if (commands.length > 0) kept.push({ ...(parsed.data.matcher !== undefined ? { matcher: parsed.data.matcher } : {}), hooks: commands });
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
  | { hook_event_name: 'Notification'; message: string; notification_type: (typeof NOTIFICATION_TYPES)[number]; title?: string };

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
      return event.tool_name;
    case 'SessionStart':
      return event.source;
    case 'PreCompact':
      return event.trigger;
    case 'Notification':
      return event.notification_type;
    case 'SessionEnd':
      return event.reason;
    default:
      return undefined;
  }
}

/**
 * The commands an event runs: those under a matching matcher (for events without a matcher,
 * all), each distinct command once (Claude Code deduplicates identical commands).
 */
export function selectHookCommands(settings: HookSettings, event: HookEvent): HookCommand[] {
  const value = hookMatchValue(event);
  const hasMatcher = value !== undefined;
  const seen = new Set<string>();
  const selected: HookCommand[] = [];
  for (const matcher of settings[event.hook_event_name] ?? []) {
    if (hasMatcher && !hookMatcherMatches(matcher.matcher, value)) continue;
    for (const hook of matcher.hooks) {
      if (seen.has(hook.command)) continue;
      seen.add(hook.command);
      selected.push(hook);
    }
  }
  return selected;
}

/** Claude Code's name for the hook in messages: `PreToolUse:Bash`, `SessionStart:startup`, `UserPromptSubmit`. */
export function hookDisplayName(event: HookEvent): string {
  const value = hookMatchValue(event);
  return value !== undefined && event.hook_event_name !== 'SessionEnd' && event.hook_event_name !== 'Notification'
    ? `${event.hook_event_name}:${value}`
    : event.hook_event_name;
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

const CONTEXT_EVENTS: readonly HookEventName[] = ['SessionStart', 'UserPromptSubmit'];
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
  const canBlock = name === 'PreToolUse' || name === 'PostToolUse' || name === 'UserPromptSubmit' || name === 'Stop' || name === 'SubagentStop';

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
    } else if (json.decision === 'block' && canBlock) {
      blockReasons.push(reason ?? `Blocked by hook [${outcome.command}]`);
    }
    if (typeof specific?.additionalContext === 'string' && specific.additionalContext !== '' && (CONTEXT_EVENTS.includes(name) || name === 'PostToolUse')) {
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
  } else if (blockedByHooks) {
    decision.blocked = true;
    decision.blockingMessage = blockingMessage(name, hookName, blockingErrors, blockReasons);
  }
  return decision;
}

function blockingMessage(name: HookEventName, hookName: string, errors: string[], reasons: string[]): string {
  switch (name) {
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
