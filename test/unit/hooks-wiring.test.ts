/**
 * What the conversation does with a hook decision (workflows/extensions/hooks-decisions.ts) and
 * how a PreToolUse decision meets the permission rules (workflows/permissions/gate.ts): pure.
 */
import { describe, expect, it } from 'vitest';
import { type HookDecision, decideHookOutcome } from '../../common/hooks';
import type { PermissionContext } from '../../common/permissions';
import { toolFacts } from '../../common/tool-facts';
import { blockedPromptText, preToolUseAction, withPostToolUseFeedback, withSessionStartContext } from '../../workflows/extensions/hooks-decisions';
import { decideUnderHook } from '../../workflows/extensions/hooks-decisions';

const decision = (over: Partial<HookDecision>): HookDecision => ({
  hookName: 'PreToolUse:Bash',
  blocked: false,
  preventContinuation: false,
  additionalContext: [],
  userMessages: [],
  ...over,
});
const pre = { hook_event_name: 'PreToolUse' as const, tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 't1' };
const ok = (json: object) => ({ command: 'hook', exitCode: 0, stdout: JSON.stringify(json), stderr: '' });

describe('PreToolUse decisions', () => {
  it('no hook ran: the call runs as asked and the gate decides alone', () => {
    expect(preToolUseAction(undefined)).toEqual({ type: 'run', input: undefined });
  });

  it('exit 2 blocks with the hook error Claude Code shows the model', () => {
    const decided = decideHookOutcome(pre, [{ command: 'check.sh', exitCode: 2, stdout: '', stderr: 'no ls\n' }]);
    expect(preToolUseAction(decided)).toEqual({ type: 'block', message: 'PreToolUse:Bash hook error: [check.sh]: no ls' });
  });

  it('deny blocks with its reason; ask and allow go to the gate with the reason; updatedInput replaces the input', () => {
    const deny = decideHookOutcome(pre, [ok({ hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'not today' } })]);
    expect(preToolUseAction(deny)).toEqual({ type: 'block', message: 'not today' });
    const ask = decideHookOutcome(pre, [ok({ hookSpecificOutput: { permissionDecision: 'ask', permissionDecisionReason: 'look first' } })]);
    expect(preToolUseAction(ask)).toEqual({ type: 'run', input: undefined, permission: { decision: 'ask', reason: 'look first' } });
    const allow = decideHookOutcome(pre, [ok({ hookSpecificOutput: { permissionDecision: 'allow', updatedInput: { command: 'ls -la' } } })]);
    expect(preToolUseAction(allow)).toEqual({ type: 'run', input: { command: 'ls -la' }, permission: { decision: 'allow' } });
  });

  it('a deny among allows wins, and its updatedInput is dropped', () => {
    const both = decideHookOutcome(pre, [
      ok({ hookSpecificOutput: { permissionDecision: 'allow', updatedInput: { command: 'x' } } }),
      ok({ hookSpecificOutput: { permissionDecision: 'deny' } }),
    ]);
    expect(preToolUseAction(both)).toEqual({ type: 'block', message: 'PreToolUse:Bash hook denied this tool' });
  });
});

describe('a PreToolUse decision meets the permission rules', () => {
  const context = (over: Partial<PermissionContext> = {}): PermissionContext => ({
    mode: 'default',
    rules: { deny: [], ask: [], allow: [] },
    workingDirectories: ['/work'],
    ...over,
  });
  const write = { toolName: 'Write', input: { file_path: '/work/a.txt', content: 'a' } };
  const decide = (ctx: PermissionContext, hook?: { decision: 'allow' | 'ask'; reason?: string }) =>
    decideUnderHook(write, toolFacts({ name: write.toolName, input: write.input }), ctx, hook);

  it('without a hook: a Write asks in default mode', () => {
    expect(decide(context()).behavior).toBe('ask');
  });

  it('allow skips the prompt', () => {
    expect(decide(context(), { decision: 'allow' }).behavior).toBe('allow');
  });

  it('allow does not override a deny rule or an ask rule, nor plan mode', () => {
    expect(decide(context({ rules: { deny: [{ rule: 'Write', source: 'cliArg' }], ask: [], allow: [] } }), { decision: 'allow' }).behavior).toBe('deny');
    expect(decide(context({ rules: { deny: [], ask: [{ rule: 'Write', source: 'cliArg' }], allow: [] } }), { decision: 'allow' }).behavior).toBe('ask');
    expect(decide(context({ mode: 'plan' }), { decision: 'allow' }).behavior).toBe('deny');
  });

  it('allow does not open a protected path', () => {
    const protectedWrite = { toolName: 'Write', input: { file_path: '/work/.git/config', content: 'x' } };
    const ctx = context();
    const hook = { decision: 'allow' as const };
    const decided = decideUnderHook(protectedWrite, toolFacts({ name: 'Write', input: protectedWrite.input }), ctx, hook);
    expect(decided.behavior).toBe('ask');
  });

  it('ask makes an allowed call ask, with the hook reason; a denial stays a denial', () => {
    expect(decide(context({ mode: 'acceptEdits' }), { decision: 'ask', reason: 'look first' })).toEqual({
      behavior: 'ask',
      reason: 'PreToolUse hook: look first',
    });
    expect(decide(context({ rules: { deny: [{ rule: 'Write', source: 'cliArg' }], ask: [], allow: [] } }), { decision: 'ask' }).behavior).toBe('deny');
  });
});

describe('context and feedback for the model', () => {
  it('SessionStart context follows the user context', () => {
    expect(withSessionStartContext('# currentDate\n2026-12-02', ['SessionStart:startup hook success: hi'])).toBe(
      '# currentDate\n2026-12-02\n\nSessionStart:startup hook success: hi',
    );
    expect(withSessionStartContext(undefined, ['x'])).toBe('x');
    expect(withSessionStartContext('base', [])).toBe('base');
  });

  it('PostToolUse context and blocking messages go beside the result in a system reminder', () => {
    const post = { hook_event_name: 'PostToolUse' as const, tool_name: 'Write', tool_input: {}, tool_response: 'ok', tool_use_id: 't' };
    const context = decideHookOutcome(post, [ok({ hookSpecificOutput: { additionalContext: 'lint ok' } })]);
    expect(withPostToolUseFeedback('File written.', context)).toBe(
      'File written.\n\n<system-reminder>\nPostToolUse:Write hook additional context: lint ok\n</system-reminder>',
    );
    const blocked = decideHookOutcome(post, [ok({ decision: 'block', reason: 'fix the lint' })]);
    expect(withPostToolUseFeedback('File written.', blocked)).toContain('PostToolUse:Write hook blocking error: fix the lint');
    expect(withPostToolUseFeedback('File written.', decideHookOutcome(post, [ok({})]))).toBe('File written.');
  });

  it('a blocked prompt tells the user why', () => {
    const blocked = decideHookOutcome({ hook_event_name: 'UserPromptSubmit', prompt: 'x' }, [{ command: 'h', exitCode: 2, stdout: '', stderr: 'no secrets' }]);
    expect(blockedPromptText(blocked)).toBe('UserPromptSubmit operation blocked by hook:\n[h]: no secrets');
  });
});

describe('decision helper defaults', () => {
  it('a decision without permission or input runs unchanged', () => {
    expect(preToolUseAction(decision({}))).toEqual({ type: 'run', input: undefined });
  });
});
