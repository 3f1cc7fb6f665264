/**
 * Claude Code's command hooks (issue 22 §4): the settings format and matchers, and for each event
 * and decision a real shell command run by the runHooks activity (in @temporalio/testing's activity
 * environment) whose recorded outcome decideHookOutcome turns into what the loop does.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunHooksResult } from '../../common/activity-types';
import {
  type HookEvent,
  type HookSettings,
  decideHookOutcome,
  hookDisplayName,
  hookMatcherMatches,
  parseHookSettings,
  selectHookCommands,
  hookLabel,
} from '../../common/hooks';
import { createHookActivities, loadHookSettings } from '../../activities/hooks/run-hooks';

let root: string;
let workspace: string;
let activities: ReturnType<typeof createHookActivities>;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'hooks-'));
  workspace = path.join(root, 'workspace');
  await mkdir(workspace, { recursive: true });
  activities = createHookActivities({ stateDir: path.join(root, 'state'), home: path.join(root, 'home') });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Runs `commands` for `event` with the real runner, then decides. */
async function fire(event: HookEvent, commands: string[], options: { timeout?: number } = {}) {
  const result: RunHooksResult = await new MockActivityEnvironment().run(activities.runHooks, {
    conversationId: 'conversation-hooks',
    cwd: workspace,
    transcriptPath: '/tmp/transcript.jsonl',
    permissionMode: 'default',
    event,
    commands: commands.map((command) => ({ type: 'command' as const, command, ...(options.timeout ? { timeout: options.timeout } : {}) })),
  });
  return { outcomes: result.outcomes, decision: decideHookOutcome(event, result.outcomes) };
}

const preToolUse = (toolName = 'Bash', input: Record<string, unknown> = { command: 'rm -rf build' }): HookEvent => ({
  hook_event_name: 'PreToolUse',
  tool_name: toolName,
  tool_input: input,
  tool_use_id: 'toolu_1',
});

/** A shell command printing `json` on stdout (exit 0). */
const answer = (json: unknown) => `printf '%s' '${JSON.stringify(json).replace(/'/g, `'\\''`)}'`;

describe('hook settings and matchers (Claude Code format)', () => {
  it('matchers: empty and * match all, names and A|B exactly, anything else is a regex', () => {
    expect(hookMatcherMatches(undefined, 'Bash')).toBe(true);
    expect(hookMatcherMatches('', 'Bash')).toBe(true);
    expect(hookMatcherMatches('*', 'Write')).toBe(true);
    expect(hookMatcherMatches('Bash', 'Bash')).toBe(true);
    expect(hookMatcherMatches('Bash', 'BashOutput')).toBe(false);
    expect(hookMatcherMatches('Edit|Write', 'Write')).toBe(true);
    expect(hookMatcherMatches('Edit|Write', 'Read')).toBe(false);
    expect(hookMatcherMatches('Notebook.*', 'NotebookEdit')).toBe(true);
    expect(hookMatcherMatches('mcp__.*', 'mcp__github__create_issue')).toBe(true);
    expect(hookMatcherMatches('mcp__github__.*', 'mcp__gitlab__x')).toBe(false);
    expect(hookMatcherMatches('mcp__.*', 'Bash')).toBe(false);
  });

  it('parses every event, reports what it cannot run, and selects by matcher', () => {
    const { hooks, problems } = parseHookSettings(
      {
        PreToolUse: [
          { matcher: 'Bash', hooks: [{ type: 'command', command: 'check-bash' }] },
          { matcher: 'mcp__.*', hooks: [{ type: 'command', command: 'check-mcp', timeout: 5 }] },
          {
            matcher: '*',
            hooks: [
              { type: 'command', command: 'audit' },
              { type: 'prompt', prompt: 'is this ok?' },
              { type: 'agent', prompt: 'check it' },
            ],
          },
          { matcher: '(', hooks: [{ type: 'command', command: 'never' }] },
        ],
        SessionStart: [
          { matcher: 'startup|resume', hooks: [{ type: 'command', command: 'context' }] },
          { matcher: 'compact', hooks: [{ type: 'command', command: 'after-compact' }] },
        ],
        PreCompact: [{ matcher: 'auto', hooks: [{ type: 'command', command: 'auto-only' }] }],
        Notification: [{ matcher: 'permission_prompt', hooks: [{ type: 'command', command: 'notify' }] }],
        UserPromptSubmit: [{ matcher: 'ignored-for-this-event', hooks: [{ type: 'command', command: 'prompt-check' }] }],
        PermissionRequest: [{ hooks: [{ type: 'command', command: 'x' }] }],
        TeammateIdle: [{ hooks: [{ type: 'command', command: 'y' }] }],
        SessionEnd: [
          {
            hooks: [
              { type: 'prompt', prompt: 'no prompts here' },
              { type: 'http', url: 'file:///etc/passwd' },
            ],
          },
        ],
        Bogus: [],
        Stop: 'not-an-array',
      },
      '/w/.claude/settings.json',
    );
    expect(problems).toEqual([
      '/w/.claude/settings.json: hooks.PreToolUse[2].hooks[2] has type "agent"; only "command", "http", "prompt", "mcp_tool" hooks run here; it was ignored.',
      '/w/.claude/settings.json: hooks.PreToolUse[3].matcher "(" is not a valid regular expression; it was ignored.',
      '/w/.claude/settings.json: hooks.TeammateIdle is a Claude Code event durable-agent does not support (it has no place here); it was ignored.',
      '/w/.claude/settings.json: hooks.SessionEnd[0].hooks[0]: SessionEnd does not take prompt hooks (only PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest, UserPromptSubmit, Stop, SubagentStop, TaskCreated, TaskCompleted); it was ignored.',
      expect.stringContaining('hooks.SessionEnd[0].hooks[1] is not a valid "http" hook: url: must be an http:// or https:// URL'),
      expect.stringContaining('hooks.Bogus is not a hook event'),
      '/w/.claude/settings.json: hooks.Stop must be an array of {matcher, hooks}; it was ignored.',
    ]);
    const names = (event: HookEvent) => selectHookCommands(hooks, event).map((hook) => hookLabel(hook));
    expect(names(preToolUse('Bash'))).toEqual(['check-bash', 'audit', 'prompt: is this ok?']);
    expect(names(preToolUse('mcp__github__create_issue'))).toEqual(['check-mcp', 'audit', 'prompt: is this ok?']);
    expect(names(preToolUse('Write'))).toEqual(['audit', 'prompt: is this ok?']);
    expect(names({ hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: {} })).toEqual(['x']);
    expect(names({ hook_event_name: 'SessionStart', source: 'resume' })).toEqual(['context']);
    expect(names({ hook_event_name: 'SessionStart', source: 'compact' })).toEqual(['after-compact']);
    expect(names({ hook_event_name: 'SessionStart', source: 'clear' })).toEqual([]);
    expect(names({ hook_event_name: 'PreCompact', trigger: 'manual', custom_instructions: '' })).toEqual([]);
    expect(names({ hook_event_name: 'PreCompact', trigger: 'auto', custom_instructions: '' })).toEqual(['auto-only']);
    expect(names({ hook_event_name: 'Notification', message: 'Claude needs your permission', notification_type: 'permission_prompt' })).toEqual(['notify']);
    expect(names({ hook_event_name: 'Notification', message: 'idle', notification_type: 'idle_prompt' })).toEqual([]);
    // UserPromptSubmit has no matcher: every hook runs.
    expect(names({ hook_event_name: 'UserPromptSubmit', prompt: 'hi' })).toEqual(['prompt-check']);
  });

  it('a command listed twice runs once', () => {
    const settings: HookSettings = {
      PostToolUse: [
        { matcher: 'Write', hooks: [{ type: 'command', command: 'fmt' }] },
        { matcher: '*', hooks: [{ type: 'command', command: 'fmt' }] },
      ],
    };
    expect(
      selectHookCommands(settings, { hook_event_name: 'PostToolUse', tool_name: 'Write', tool_input: {}, tool_response: {}, tool_use_id: 't' }),
    ).toHaveLength(1);
  });

  it('loadHookSettings reads user, project and local settings, filtered by --setting-sources', async () => {
    const home = path.join(root, 'home');
    await mkdir(path.join(home, '.claude'), { recursive: true });
    await mkdir(path.join(workspace, '.claude'), { recursive: true });
    await writeFile(
      path.join(home, '.claude', 'settings.json'),
      JSON.stringify({ hooks: { Notification: [{ hooks: [{ type: 'command', command: 'user-notify' }] }] } }),
    );
    await writeFile(
      path.join(workspace, '.claude', 'settings.json'),
      JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'project-check' }] }] } }),
    );
    await writeFile(
      path.join(workspace, '.claude', 'settings.local.json'),
      JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: 'local-check' }] }], Nope: [] } }),
    );
    const all = await loadHookSettings({ cwd: workspace, trusted: true }, home);
    expect(all.hooks.PreToolUse?.map((matcher) => hookLabel(matcher.hooks[0]))).toEqual(['project-check', 'local-check']);
    // Issue 29: an untrusted workspace's own hooks are not loaded (the user's are).
    const untrusted = await loadHookSettings({ cwd: workspace }, home);
    expect(untrusted.hooks.PreToolUse).toBeUndefined();
    expect(untrusted.hooks.Notification).toHaveLength(1);
    expect(all.hooks.Notification?.[0].hooks[0].type === 'command' && all.hooks.Notification?.[0].hooks[0].command).toBe('user-notify');
    expect(all.warnings).toEqual([expect.stringContaining('settings.local.json: hooks.Nope is not a hook event')]);
    const userOnly = await loadHookSettings({ cwd: workspace, settingSources: ['user'] }, home);
    expect(userOnly.hooks.PreToolUse).toBeUndefined();
    expect(userOnly.hooks.Notification).toHaveLength(1);
    await rm(path.join(workspace, '.claude'), { recursive: true, force: true });
  });
});

describe('hook runs and decisions, with real commands', () => {
  it("every event gets Claude Code's input on stdin", async () => {
    const events: HookEvent[] = [
      preToolUse(),
      {
        hook_event_name: 'PostToolUse',
        tool_name: 'Write',
        tool_input: { file_path: '/w/a.txt', content: 'x' },
        tool_response: { filePath: '/w/a.txt', success: true },
        tool_use_id: 'toolu_2',
      },
      { hook_event_name: 'UserPromptSubmit', prompt: 'fix the build' },
      ...(['startup', 'resume', 'clear', 'compact'] as const).map((source): HookEvent => ({ hook_event_name: 'SessionStart', source })),
      { hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' },
      { hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'done' },
      { hook_event_name: 'SubagentStop', stop_hook_active: true, agent_type: 'general-purpose' },
      ...(['manual', 'auto'] as const).map((trigger): HookEvent => ({
        hook_event_name: 'PreCompact',
        trigger,
        custom_instructions: trigger === 'manual' ? 'keep the API notes' : '',
      })),
      { hook_event_name: 'Notification', message: 'Claude needs your permission to use Bash', notification_type: 'permission_prompt' },
      { hook_event_name: 'Notification', message: 'Claude is waiting for your input', notification_type: 'idle_prompt' },
    ];
    for (const event of events) {
      // Inside the workspace: hooks run in the sandbox, which keeps writes there.
      const file = path.join(workspace, `input-${hookDisplayName(event).replace(/[^a-zA-Z]/g, '_')}.json`);
      const { outcomes } = await fire(event, [`cat > ${file}`]);
      expect(outcomes[0].exitCode).toBe(0);
      const input = JSON.parse(await readFile(file, 'utf8'));
      expect(input).toEqual({
        session_id: 'conversation-hooks',
        transcript_path: '/tmp/transcript.jsonl',
        cwd: workspace,
        permission_mode: 'default',
        ...event,
      });
    }
  });

  it("PreToolUse exit 2 blocks the tool; the model sees Claude Code's wording", async () => {
    const { decision } = await fire(preToolUse(), ['echo "rm is not allowed here" >&2; exit 2']);
    expect(decision).toMatchObject({ blocked: true, permissionDecision: 'deny', hookName: 'PreToolUse:Bash' });
    expect(decision.blockingMessage).toBe('PreToolUse:Bash hook error: [echo "rm is not allowed here" >&2; exit 2]: rm is not allowed here');
  });

  it('PreToolUse JSON deny / ask / allow with updatedInput; deny beats ask beats allow', async () => {
    const deny = answer({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no deletes on Fridays' } });
    const ask = answer({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: 'looks risky' } });
    const allow = answer({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        permissionDecisionReason: 'safe',
        updatedInput: { command: 'rm -rf build/tmp' },
      },
    });

    const denied = (await fire(preToolUse(), [deny])).decision;
    expect(denied).toMatchObject({ blocked: true, permissionDecision: 'deny', blockingMessage: 'no deletes on Fridays' });
    const asked = (await fire(preToolUse(), [ask])).decision;
    expect(asked).toMatchObject({ blocked: false, permissionDecision: 'ask', permissionDecisionReason: 'looks risky' });
    const allowed = (await fire(preToolUse(), [allow])).decision;
    expect(allowed).toMatchObject({ blocked: false, permissionDecision: 'allow', updatedInput: { command: 'rm -rf build/tmp' } });

    // The input change belongs to the decision that lost: the user is asked about the original input.
    const allowThenAsk = (await fire(preToolUse(), [allow, ask])).decision;
    expect(allowThenAsk).toMatchObject({ permissionDecision: 'ask', permissionDecisionReason: 'looks risky' });
    expect(allowThenAsk.updatedInput).toBeUndefined();
    const all = (await fire(preToolUse(), [allow, ask, deny])).decision;
    expect(all).toMatchObject({ blocked: true, permissionDecision: 'deny', blockingMessage: 'no deletes on Fridays' });
    expect(all.updatedInput).toBeUndefined();
    // The older top-level form.
    expect((await fire(preToolUse(), [answer({ decision: 'block', reason: 'legacy no' })])).decision).toMatchObject({
      blocked: true,
      blockingMessage: 'legacy no',
    });
    expect((await fire(preToolUse(), [answer({ decision: 'approve' })])).decision).toMatchObject({ blocked: false, permissionDecision: 'allow' });
  });

  it('PostToolUse: additionalContext for the model; exit 2 and decision block show the model why', async () => {
    const event: HookEvent = {
      hook_event_name: 'PostToolUse',
      tool_name: 'Write',
      tool_input: { file_path: 'a.ts' },
      tool_response: { success: true },
      tool_use_id: 't',
    };
    const context = (await fire(event, [answer({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'formatted with prettier' } })]))
      .decision;
    expect(context).toMatchObject({ blocked: false, additionalContext: ['PostToolUse:Write hook additional context: formatted with prettier'] });
    const exit2 = (await fire(event, ['echo "lint failed: 3 errors" >&2; exit 2'])).decision;
    expect(exit2).toMatchObject({
      blocked: true,
      blockingMessage: 'PostToolUse:Write hook error: [echo "lint failed: 3 errors" >&2; exit 2]: lint failed: 3 errors',
    });
    const block = (await fire(event, [answer({ decision: 'block', reason: 'tests must pass first' })])).decision;
    expect(block.blockingMessage).toBe('PostToolUse:Write hook blocking error: tests must pass first');
    // Plain stdout of a PostToolUse hook is not the model's.
    expect((await fire(event, ['echo just a log line'])).decision.additionalContext).toEqual([]);
  });

  it('UserPromptSubmit: stdout and additionalContext are context; exit 2 or decision block stop the prompt', async () => {
    const event: HookEvent = { hook_event_name: 'UserPromptSubmit', prompt: 'deploy it' };
    const plain = (await fire(event, ['echo "current sprint: S42"'])).decision;
    expect(plain.additionalContext).toEqual(['UserPromptSubmit hook success: current sprint: S42']);
    const json = (await fire(event, [answer({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'on-call: Ana' } })])).decision;
    expect(json.additionalContext).toEqual(['UserPromptSubmit hook additional context: on-call: Ana']);
    const exit2 = (await fire(event, ['echo "prompts mentioning deploy need a ticket" >&2; exit 2'])).decision;
    expect(exit2).toMatchObject({ blocked: true, blockingMessage: expect.stringContaining('UserPromptSubmit operation blocked by hook:\n[') });
    expect(exit2.blockingMessage).toContain('prompts mentioning deploy need a ticket');
    expect((await fire(event, [answer({ decision: 'block', reason: 'no secrets in prompts' })])).decision).toMatchObject({
      blocked: true,
      blockingMessage: 'UserPromptSubmit operation blocked by hook:\nno secrets in prompts',
    });
  });

  it('SessionStart (startup, resume, clear, compact): stdout and additionalContext reach the model', async () => {
    for (const source of ['startup', 'resume', 'clear', 'compact'] as const) {
      const event: HookEvent = { hook_event_name: 'SessionStart', source };
      const { decision } = await fire(event, [
        'echo "branch: main"',
        answer({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: `source was ${source}` } }),
      ]);
      expect(decision.additionalContext).toEqual([
        `SessionStart:${source} hook success: branch: main`,
        `SessionStart:${source} hook additional context: source was ${source}`,
      ]);
      expect(decision.blocked).toBe(false);
    }
  });

  it('Stop and SubagentStop: exit 2 and decision block are feedback that keeps the loop going', async () => {
    const stop = (await fire({ hook_event_name: 'Stop', stop_hook_active: false }, ['echo "tests are red" >&2; exit 2'])).decision;
    expect(stop).toMatchObject({ blocked: true, blockingMessage: 'Stop hook feedback:\n[echo "tests are red" >&2; exit 2]: tests are red' });
    const sub = (await fire({ hook_event_name: 'SubagentStop', stop_hook_active: false }, [answer({ decision: 'block', reason: 'summarise first' })])).decision;
    expect(sub).toMatchObject({ blocked: true, blockingMessage: 'SubagentStop hook feedback:\nsummarise first' });
  });

  it('events that cannot block (PreCompact, SessionEnd, Notification): exit 2 is shown to the user only', async () => {
    for (const event of [
      { hook_event_name: 'PreCompact', trigger: 'auto', custom_instructions: '' },
      { hook_event_name: 'SessionEnd', reason: 'other' },
      { hook_event_name: 'Notification', message: 'waiting', notification_type: 'idle_prompt' },
    ] as HookEvent[]) {
      const { decision } = await fire(event, ['echo "cannot block this" >&2; exit 2']);
      expect(decision.blocked).toBe(false);
      expect(decision.additionalContext).toEqual([]);
      expect(decision.userMessages).toEqual([{ level: 'warning', text: expect.stringContaining('cannot block this') }]);
    }
  });

  it('continue:false, stopReason, systemMessage; other exit codes and timeouts are non-blocking', async () => {
    const stopped = (await fire(preToolUse(), [answer({ continue: false, stopReason: 'budget reached', systemMessage: 'hook says: stopping' })])).decision;
    expect(stopped).toMatchObject({
      preventContinuation: true,
      stopReason: 'budget reached',
      blocked: false,
      userMessages: [{ level: 'info', text: 'hook says: stopping' }],
    });
    const failed = (await fire(preToolUse(), ['echo oops >&2; exit 1'])).decision;
    expect(failed).toMatchObject({
      blocked: false,
      userMessages: [{ level: 'warning', text: 'PreToolUse:Bash hook error: [echo oops >&2; exit 1]: Failed with non-blocking status code 1: oops' }],
    });
    const started = Date.now();
    const slow = await fire(preToolUse(), ['sleep 30'], { timeout: 1 });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(slow.outcomes[0].timedOut).toBe(true);
    expect(slow.decision).toMatchObject({ blocked: false, userMessages: [{ level: 'warning', text: expect.stringContaining('timed out') }] });
  });

  it('the recorded outcome keeps a large JSON answer parsed and the output bounded', async () => {
    const big = 'x'.repeat(50_000);
    const { outcomes, decision } = await fire(preToolUse('Write', { content: 'small' }), [
      `node -e 'process.stdout.write(JSON.stringify({hookSpecificOutput:{hookEventName:"PreToolUse",permissionDecision:"allow",updatedInput:{content:"${big}"}}}))'`,
    ]);
    expect(outcomes[0].stdout.length).toBeLessThan(25_000);
    expect((decision.updatedInput as { content: string }).content).toHaveLength(50_000);
  });
});

describe('mcp_tool hooks (issue 33)', () => {
  it("fill ${path} strings from the hook's input; a whole placeholder keeps its value's type", async () => {
    const { substituteHookInput } = await import('../../common/hooks');
    const hookInput = { session_id: 's1', cwd: '/w', tool_input: { file_path: '/w/a.ts', limit: 5 } };
    expect(
      substituteHookInput(
        { path: '${tool_input.file_path}', n: '${tool_input.limit}', text: 'in ${cwd}: ${tool_input.limit} ${missing.x}', nested: ['${session_id}'], keep: 3 },
        hookInput,
      ),
    ).toEqual({ path: '/w/a.ts', n: 5, text: 'in /w: 5 ', nested: ['s1'], keep: 3 });
    expect(substituteHookInput(undefined, hookInput)).toEqual({});
  });

  it('parse with server and tool; a workspace hook may not call a user-scoped server', async () => {
    const { parseHookSettings } = await import('../../common/hooks');
    const { runMcpToolHook } = await import('../../activities/hooks/run-hooks');
    const parsed = parseHookSettings(
      {
        Stop: [
          {
            hooks: [
              { type: 'mcp_tool', server: 'mem', tool: 'save', input: { id: '${session_id}' } },
              { type: 'mcp_tool', tool: 'x' },
            ],
          },
        ],
      },
      'settings.json',
      'project',
    );
    expect(parsed.hooks.Stop?.[0].hooks).toEqual([{ type: 'mcp_tool', server: 'mem', tool: 'save', input: { id: '${session_id}' }, scope: 'project' }]);
    expect(parsed.problems).toEqual([expect.stringMatching(/hooks\[1\] is not a valid "mcp_tool" hook: server/)]);
    const hook = parsed.hooks.Stop![0].hooks[0] as Parameters<typeof runMcpToolHook>[0];
    const userServer = { name: 'mem', scope: 'user' as const, file: '~/.claude.json', config: { command: 'true' }, approval: 'approved' as const };
    const refused = await runMcpToolHook(hook, {}, { cwd: '/w', mcp: { scope: 'c1', servers: [userServer] } }, undefined, new AbortController().signal);
    expect(refused.error).toMatch(/not one of this conversation's servers/); // no connections on this side
    const { McpConnectionManager } = await import('../../activities/mcp/connections');
    const connections = new McpConnectionManager();
    const scoped = await runMcpToolHook(hook, {}, { cwd: '/w', mcp: { scope: 'c1', servers: [userServer] } }, connections, new AbortController().signal);
    expect(scoped).toMatchObject({ exitCode: null, error: expect.stringMatching(/only the workspace's own MCP servers; "mem" is user-scoped/) });
    await connections.close();
  });
});
