/**
 * Issue 33: the hook events and handler kinds added to Claude Code's set, as pure decisions —
 * each new event's documented decision read from recorded outcomes, the prompt and HTTP handlers'
 * answers, where a hook's scope comes from, and WorktreeCreate's path.
 */
import { describe, expect, it } from 'vitest';
import {
  type HookEvent,
  type HookRunOutcome,
  decideHookOutcome,
  decideWorktreeCreate,
  expandHookHeaders,
  hookDisplayName,
  parseHookSettings,
  promptHookOutcome,
  promptHookText,
  selectHookCommands,
  splitAsyncHooks,
  stopFailureError,
  worktreeHookEvent,
} from '../../common/hooks';

const ran = (stdout: string, exitCode = 0, stderr = ''): HookRunOutcome => ({ command: 'hook', exitCode, stdout, stderr });
const permissionRequest: HookEvent = { hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 't1' };
const answer = (decision: unknown) => JSON.stringify({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } });

describe('PermissionRequest', () => {
  it('allow and deny answer the ask; deny wins; exit 2 denies with stderr; nothing else answers', () => {
    expect(decideHookOutcome(permissionRequest, [ran(answer({ behavior: 'allow' }))]).permissionRequest).toEqual({ behavior: 'allow' });
    expect(
      decideHookOutcome(permissionRequest, [ran(answer({ behavior: 'allow' })), ran(answer({ behavior: 'deny', message: 'no ls', interrupt: true }))])
        .permissionRequest,
    ).toEqual({
      behavior: 'deny',
      message: 'no ls',
      interrupt: true,
    });
    expect(decideHookOutcome(permissionRequest, [ran('', 2, 'not on Fridays')]).permissionRequest).toEqual({
      behavior: 'deny',
      message: '[hook]: not on Fridays',
    });
    expect(decideHookOutcome(permissionRequest, [ran(answer({ behavior: 'allow', updatedInput: { command: 'ls -a' } }))]).permissionRequest).toEqual({
      behavior: 'allow',
      updatedInput: { command: 'ls -a' },
    });
    // Not an answer: plain output, a malformed decision, the PreToolUse form, a failing hook.
    for (const outcome of [ran('ok'), ran(answer({ behavior: 'maybe' })), ran('{"hookSpecificOutput":{"permissionDecision":"allow"}}'), ran('', 1, 'boom')]) {
      expect(decideHookOutcome(permissionRequest, [outcome]).permissionRequest).toBeUndefined();
    }
    expect(decideHookOutcome(permissionRequest, [ran('', 2, 'x')]).blocked).toBe(false);
  });
});

describe('the other new events', () => {
  it('PermissionDenied: retry', () => {
    const event: HookEvent = { hook_event_name: 'PermissionDenied', tool_name: 'Bash', tool_input: {}, tool_use_id: 't', reason: 'deny rule' };
    expect(decideHookOutcome(event, [ran('{"hookSpecificOutput":{"hookEventName":"PermissionDenied","retry":true}}')]).retry).toBe(true);
    expect(decideHookOutcome(event, [ran('{}')]).retry).toBeUndefined();
  });

  it('PostToolUseFailure: additionalContext and exit 2 reach the model; SubagentStart: context', () => {
    const failure: HookEvent = { hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', tool_input: {}, tool_use_id: 't', error: 'exit 1' };
    expect(
      decideHookOutcome(failure, [ran('{"hookSpecificOutput":{"hookEventName":"PostToolUseFailure","additionalContext":"try make clean"}}')]).additionalContext,
    ).toEqual(['PostToolUseFailure:Bash hook additional context: try make clean']);
    const blocked = decideHookOutcome(failure, [ran('', 2, 'the build is broken upstream')]);
    expect(blocked.blocked).toBe(true);
    expect(blocked.blockingMessage).toBe('PostToolUseFailure:Bash hook error: [hook]: the build is broken upstream');
    const start: HookEvent = { hook_event_name: 'SubagentStart', agent_id: 'a', agent_type: 'Explore' };
    expect(hookDisplayName(start)).toBe('SubagentStart:Explore');
    expect(
      decideHookOutcome(start, [ran('{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"read docs/ first"}}')]).additionalContext,
    ).toEqual(['SubagentStart:Explore hook additional context: read docs/ first']);
    // SubagentStart cannot block: exit 2 is for the user.
    expect(decideHookOutcome(start, [ran('', 2, 'x')]).blocked).toBe(false);
  });

  it('TaskCreated / TaskCompleted block with exit 2 or decision block; StopFailure, PostCompact, InstructionsLoaded cannot block', () => {
    const created: HookEvent = { hook_event_name: 'TaskCreated', task_id: '1', task_subject: 'Ship it' };
    expect(decideHookOutcome(created, [ran('', 2, 'tasks need a ticket')]).blockingMessage).toBe(
      'TaskCreated hook blocked this task change:\n[hook]: tasks need a ticket',
    );
    const completed: HookEvent = { hook_event_name: 'TaskCompleted', task_id: '1', task_subject: 'Ship it' };
    expect(decideHookOutcome(completed, [ran('{"decision":"block","reason":"tests fail"}')]).blockingMessage).toBe(
      'TaskCompleted hook blocked this task change:\ntests fail',
    );
    const observers: HookEvent[] = [
      { hook_event_name: 'StopFailure', error: 'rate_limit', error_details: '429' },
      { hook_event_name: 'PostCompact', trigger: 'auto', compact_summary: 's' },
      { hook_event_name: 'InstructionsLoaded', file_path: '/w/CLAUDE.md', memory_type: 'Project', load_reason: 'session_start' },
    ];
    for (const event of observers) {
      const decision = decideHookOutcome(event, [ran('{"decision":"block","reason":"no"}'), ran('', 2, 'stderr')]);
      expect(decision.blocked).toBe(false);
      expect(decision.userMessages.map((message) => message.text)).toEqual([expect.stringContaining('stderr')]);
    }
  });

  it('UserPromptExpansion: plain stdout is context, a block drops the prompt; its matcher is the command name', () => {
    const event: HookEvent = {
      hook_event_name: 'UserPromptExpansion',
      expansion_type: 'slash_command',
      command_name: 'deploy',
      command_args: 'prod',
      prompt: 'Deploy prod',
    };
    expect(decideHookOutcome(event, [ran('Use the staging checklist.')]).additionalContext).toEqual([
      'UserPromptExpansion:deploy hook success: Use the staging checklist.',
    ]);
    expect(decideHookOutcome(event, [ran('{"decision":"block","reason":"frozen"}')]).blocked).toBe(true);
    const { hooks } = parseHookSettings({ UserPromptExpansion: [{ matcher: 'deploy', hooks: [{ type: 'command', command: 'gate' }] }] }, 'f');
    expect(selectHookCommands(hooks, event)).toHaveLength(1);
    expect(selectHookCommands(hooks, { ...event, command_name: 'review' })).toHaveLength(0);
  });

  it('StopFailure: the error kind from the API error message', () => {
    expect(stopFailureError('429 {"type":"rate_limit_error"}')).toBe('rate_limit');
    expect(stopFailureError('401 invalid x-api-key')).toBe('authentication_failed');
    expect(stopFailureError('Your credit balance is too low')).toBe('billing_error');
    expect(stopFailureError('400 invalid_request_error: bad')).toBe('invalid_request');
    expect(stopFailureError('529 Overloaded')).toBe('server_error');
    expect(stopFailureError('something odd')).toBe('unknown');
  });
});

describe('handler kinds', () => {
  it('a prompt hook: ok is success, not ok blocks with the reason (as exit 2), anything else is a non-blocking error', () => {
    expect(promptHookOutcome('p', '{"ok": true}')).toMatchObject({ exitCode: 0 });
    expect(promptHookOutcome('p', '```json\n{"ok": false, "reason": "tests not run"}\n```')).toMatchObject({ exitCode: 2, stderr: 'tests not run' });
    expect(promptHookOutcome('p', 'Sure, looks fine')).toMatchObject({ exitCode: null, error: expect.stringContaining('not {"ok"') });
    const pre: HookEvent = { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: {}, tool_use_id: 't' };
    expect(decideHookOutcome(pre, [promptHookOutcome('p', '{"ok": false, "reason": "no"}')]).blocked).toBe(true);
    expect(promptHookText('Check: $ARGUMENTS', '{"a":1}')).toBe('Check: {"a":1}');
    expect(promptHookText('Check this', '{"a":1}')).toBe('Check this\n\n{"a":1}');
  });

  it("an HTTP hook's headers expand only the allowed variables", () => {
    const env = { TOKEN: 's3cret', ANTHROPIC_API_KEY: 'sk-worker' };
    expect(
      expandHookHeaders({ Authorization: 'Bearer $TOKEN', 'X-Key': '${ANTHROPIC_API_KEY}', 'X-Both': '${TOKEN}-$MISSING' }, ['TOKEN', 'MISSING'], env),
    ).toEqual({
      Authorization: 'Bearer s3cret',
      'X-Key': '',
      'X-Both': 's3cret-',
    });
    expect(expandHookHeaders({ A: '$TOKEN' }, undefined, env)).toEqual({ A: '' });
  });

  it("the scope is the loader's, never the file's; async hooks are split off", () => {
    const { hooks } = parseHookSettings(
      {
        PreToolUse: [
          {
            hooks: [
              { type: 'command', command: 'a', scope: 'user' },
              { type: 'command', command: 'b', async: true },
            ],
          },
        ],
      },
      '/w/.claude/settings.json',
      'project',
    );
    const selected = selectHookCommands(hooks, { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: {}, tool_use_id: 't' });
    expect(selected.map((hook) => hook.scope)).toEqual(['project', 'project']);
    const { blocking, background } = splitAsyncHooks(selected);
    expect(blocking.map((hook) => hook.type === 'command' && hook.command)).toEqual(['a']);
    expect(background.map((hook) => hook.type === 'command' && hook.command)).toEqual(['b']);
    const http = parseHookSettings(
      { Stop: [{ hooks: [{ type: 'http', url: 'http://127.0.0.1:9/h', headers: { A: '$X' }, allowedEnvVars: ['X'] }] }] },
      'f',
    ).hooks;
    expect(http.Stop?.[0].hooks[0]).toEqual({ type: 'http', url: 'http://127.0.0.1:9/h', headers: { A: '$X' }, allowedEnvVars: ['X'] });
  });
});

describe('WorktreeCreate / WorktreeRemove (for the worktree code)', () => {
  it('the events, and the path a WorktreeCreate hook gives (or why creation failed)', () => {
    expect(worktreeHookEvent({ type: 'create', name: 'feature-x' })).toEqual({ hook_event_name: 'WorktreeCreate', name: 'feature-x' });
    expect(worktreeHookEvent({ type: 'remove', worktreePath: '/w/.claude/worktrees/x' })).toEqual({
      hook_event_name: 'WorktreeRemove',
      worktree_path: '/w/.claude/worktrees/x',
    });
    expect(decideWorktreeCreate([])).toBeUndefined();
    expect(decideWorktreeCreate([ran('creating…\n/tmp/wt/feature-x\n')])).toEqual({ path: '/tmp/wt/feature-x' });
    expect(decideWorktreeCreate([ran('{"hookSpecificOutput":{"hookEventName":"WorktreeCreate","worktreePath":"/srv/wt"}}')])).toEqual({ path: '/srv/wt' });
    expect(decideWorktreeCreate([ran('', 1, 'disk full')])).toEqual({ error: expect.stringContaining('disk full') });
    expect(decideWorktreeCreate([ran('relative/path')])).toEqual({ error: 'WorktreeCreate hooks gave no absolute worktree path' });
  });
});

describe('--init / --maintenance (Setup hooks)', () => {
  it('set the Setup trigger of the conversation; both at once is a usage error', async () => {
    const { configFrom } = await import('../../client/command-line');
    const { UsageError } = await import('../../client/usage-error');
    expect(configFrom({ init: true }, false).setup).toBe('init');
    expect(configFrom({ maintenance: true }, false).setup).toBe('maintenance');
    expect(configFrom({}, false).setup).toBeUndefined();
    expect(() => configFrom({ init: true, maintenance: true }, false)).toThrow(UsageError);
  });
});
