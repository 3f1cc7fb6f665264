/**
 * Issue 33 on the real dev server: the hook events added to Claude Code's set firing with their
 * documented input (each hook writes its stdin to a file), an HTTP hook against a local HTTP
 * server, a prompt hook answered by the scripted model server, and where hooks run — the user's
 * own hook (~/.claude/settings.json of a fake HOME) as the user, the workspace's in the sandbox.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROMPT_HOOK_SYSTEM } from '../../common/hooks';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { type Harness, createHarness, eventually } from '../helpers/harness';

let harness: Harness | undefined;
let server: http.Server | undefined;
let home: string | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
  if (home) await rm(home, { recursive: true, force: true });
  home = undefined;
});

type Hook = { type: string; [field: string]: unknown };
type Hooks = Record<string, Array<{ matcher?: string; hooks: Hook[] }>>;

async function writeSettings(dir: string, hooks: Hooks): Promise<void> {
  await mkdir(path.join(dir, '.claude'), { recursive: true });
  await writeFile(path.join(dir, '.claude', 'settings.json'), JSON.stringify({ hooks }, null, 2));
}

const command = (text: string): Hook => ({ type: 'command', command: text });
/** Shell: append the hook's stdin (one JSON line) to `file` (relative: in the workspace). */
const record = (file: string) => `{ cat; echo; } >> ${file}`;

async function recorded(file: string): Promise<Array<Record<string, any>>> {
  const text = await readFile(path.isAbsolute(file) ? file : path.join(harness!.workspace, file), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

function toolResults(request: RecordedRequest): Array<{ tool_use_id: string; content: string; is_error?: boolean }> {
  const last = request.body.messages.at(-1) as { content: unknown };
  return Array.isArray(last.content) ? ((last.content as Array<{ type: string }>).filter((block) => block.type === 'tool_result') as never) : [];
}
const resultOf = (request: RecordedRequest, id: string) => toolResults(request).find((result) => result.tool_use_id === id)!;
const isPromptHook = (request: RecordedRequest) => JSON.stringify(request.body.system ?? '').includes('You are evaluating a hook');
const exists = (file: string) =>
  readFile(file).then(
    () => true,
    () => false,
  );

describe('issue 33: hook events and handler kinds', () => {
  it('PermissionRequest answers an ask (no person asked); PostToolUseFailure gets the failed call and its context reaches the model; TaskCreated exit 2 keeps the task list', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'tool_use', id: 'toolu_task', name: 'TaskCreate', input: { subject: 'Ship it', description: 'Release 7' } },
            // Writes a file (asks in default mode), then fails.
            { type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: 'touch asked.txt && exit 3' } },
          ],
        },
        { content: [{ type: 'text', text: 'Done.' }] },
      ],
    });
    const allow = JSON.stringify({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
    const context = JSON.stringify({ hookSpecificOutput: { hookEventName: 'PostToolUseFailure', additionalContext: 'Exit 3 means the cache is stale.' } });
    await writeSettings(harness.workspace, {
      PermissionRequest: [{ matcher: 'Bash', hooks: [command(`${record('permission-request.jsonl')}; echo '${allow}'`)] }],
      PostToolUseFailure: [{ matcher: 'Bash', hooks: [command(`${record('failure.jsonl')}; echo '${context}'`)] }],
      TaskCreated: [{ hooks: [command(`${record('task-created.jsonl')}; echo "tasks need a ticket number" >&2; exit 2`)] }],
    });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'go', config: harness.config({ permissions: {} }), taskQueue: harness.taskQueue });
    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'Done.' });

    // PermissionRequest: the documented input; its allow ran the command with nobody to approve it.
    expect(await recorded('permission-request.jsonl')).toMatchObject([
      {
        hook_event_name: 'PermissionRequest',
        session_id: started.conversationId,
        cwd: harness.workspace,
        tool_name: 'Bash',
        tool_input: { command: 'touch asked.txt && exit 3' },
      },
    ]);
    expect(await exists(path.join(harness.workspace, 'asked.txt'))).toBe(true);
    // PostToolUseFailure: the failed call, its error; the hook's context beside the error result.
    expect(await recorded('failure.jsonl')).toMatchObject([
      {
        hook_event_name: 'PostToolUseFailure',
        tool_name: 'Bash',
        tool_use_id: 'toolu_bash',
        tool_input: { command: 'touch asked.txt && exit 3' },
        error: expect.any(String),
      },
    ]);
    const after = harness.model.requests[1];
    expect(resultOf(after, 'toolu_bash')).toMatchObject({ is_error: true, content: expect.stringContaining('Exit 3 means the cache is stale.') });
    // TaskCreated: the task as it would be; exit 2 is the tool's error and the list stays empty.
    expect(await recorded('task-created.jsonl')).toMatchObject([
      { hook_event_name: 'TaskCreated', task_id: '1', task_subject: 'Ship it', task_description: 'Release 7' },
    ]);
    expect(resultOf(after, 'toolu_task')).toMatchObject({ is_error: true, content: expect.stringContaining('tasks need a ticket number') });
    expect((await harness.api.status(started.conversationId)).tasks ?? []).toEqual([]);
  }, 120_000);

  it('an HTTP hook gets the event JSON (headers with allowed variables only) and its answer denies; a prompt hook asks the model and its "no" blocks', async () => {
    const bodies: Array<{ headers: http.IncomingHttpHeaders; body: Record<string, any> }> = [];
    server = http.createServer((request, response) => {
      let text = '';
      request.on('data', (chunk) => (text += chunk));
      request.on('end', () => {
        bodies.push({ headers: request.headers, body: JSON.parse(text) });
        response.setHeader('content-type', 'application/json');
        response.end(
          JSON.stringify({
            hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'the audit service says no' },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pre-tool-use`;
    process.env.DA_TEST_HOOK_TOKEN = 'token-123';
    process.env.DA_TEST_HOOK_SECRET = 'must-not-leak';

    harness = await createHarness({
      respond: (request) => {
        if (isPromptHook(request)) return { content: [{ type: 'text', text: '{"ok": false, "reason": "no writes on release day"}' }] };
        const turn = harness!.model.requests.filter((one) => !isPromptHook(one)).length;
        if (turn === 1) {
          return {
            content: [
              { type: 'tool_use', id: 'toolu_write', name: 'Write', input: { file_path: 'notes.txt', content: 'hi\n' } },
              { type: 'tool_use', id: 'toolu_ls', name: 'Bash', input: { command: 'ls' } },
            ],
          };
        }
        return { content: [{ type: 'text', text: 'Done.' }] };
      },
    });
    await writeSettings(harness.workspace, {
      PreToolUse: [
        {
          matcher: 'Bash',
          hooks: [
            {
              type: 'http',
              url,
              headers: { Authorization: 'Bearer $DA_TEST_HOOK_TOKEN', 'X-Secret': '${DA_TEST_HOOK_SECRET}' },
              allowedEnvVars: ['DA_TEST_HOOK_TOKEN'],
            },
          ],
        },
        { matcher: 'Write', hooks: [{ type: 'prompt', prompt: 'Is this write allowed? $ARGUMENTS' }] },
      ],
    });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'go', config: harness.config(), taskQueue: harness.taskQueue });
    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'Done.' });

    // HTTP: the event JSON as a command's stdin; only the allowed variable expanded.
    expect(bodies).toHaveLength(1);
    expect(bodies[0].body).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'toolu_ls' });
    expect(bodies[0].headers.authorization).toBe('Bearer token-123');
    expect(bodies[0].headers['x-secret']).toBe('');
    // Prompt: one model call with the event JSON in its prompt, through the worker's model client.
    const hookCalls = harness.model.requests.filter(isPromptHook);
    expect(hookCalls).toHaveLength(1);
    expect(JSON.stringify(hookCalls[0].body.system)).toContain(PROMPT_HOOK_SYSTEM.slice(0, 40));
    expect(JSON.stringify(hookCalls[0].body.messages)).toContain('Is this write allowed?');
    expect(JSON.stringify(hookCalls[0].body.messages)).toContain('\\"tool_use_id\\":\\"toolu_write\\"');
    const after = harness.model.requests.filter((one) => !isPromptHook(one))[1];
    expect(resultOf(after, 'toolu_ls')).toMatchObject({ is_error: true, content: 'the audit service says no' });
    expect(resultOf(after, 'toolu_write')).toMatchObject({ is_error: true, content: expect.stringContaining('no writes on release day') });
    expect(await exists(path.join(harness.workspace, 'notes.txt'))).toBe(false);
    delete process.env.DA_TEST_HOOK_TOKEN;
    delete process.env.DA_TEST_HOOK_SECRET;
  }, 120_000);

  it("the user's own hook runs as the user (it writes under ~/.claude/); the workspace's hook runs in the sandbox and cannot", async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-home-'));
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'Hello.' }] }] });
    const userLog = path.join(home, '.claude', 'logs', 'user-session.jsonl');
    const projectLog = path.join(home, '.claude', 'logs', 'project-session.jsonl');
    await writeSettings(home, {
      SessionStart: [{ hooks: [command(`mkdir -p "$HOME/.claude/logs" && ${record('"$HOME/.claude/logs/user-session.jsonl"')}`)] }],
      // The user's Stop hooks run too (the workspace's go through runStopHooks, sandboxed).
      Stop: [{ hooks: [command(`mkdir -p "$HOME/.claude/logs" && ${record('"$HOME/.claude/logs/user-stop.jsonl"')}`)] }],
    });
    await writeSettings(harness.workspace, {
      // The same write to the real home (by its path), then a mark in the workspace (writable in the sandbox) that it ran.
      SessionStart: [{ hooks: [command(`mkdir -p "${path.dirname(projectLog)}"; ${record(`"${projectLog}"`)}; echo ran > project-ran.txt`)] }],
    });
    await harness.startWorker({ activityDeps: { home } });
    const started = await harness.api.start({ prompt: 'hi', config: harness.config(), taskQueue: harness.taskQueue });
    expect(await harness.api.waitForResult(started.conversationId, started.inputUuid!)).toMatchObject({ subtype: 'success' });
    expect(await recorded(userLog)).toMatchObject([{ hook_event_name: 'SessionStart', source: 'startup', session_id: started.conversationId }]);
    expect(await recorded(path.join(home, '.claude', 'logs', 'user-stop.jsonl'))).toMatchObject([
      { hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'Hello.' },
    ]);
    // The workspace's hook ran, in the sandbox: the home it sees is not the user's (private /tmp, read-only home).
    expect(await readFile(path.join(harness.workspace, 'project-ran.txt'), 'utf8')).toBe('ran\n');
    expect(await exists(projectLog)).toBe(false);
  }, 120_000);

  it("UserPromptExpansion gets a custom command's expansion and its stdout reaches the model; an async hook does not hold the loop and its context comes with the next prompt", async () => {
    harness = await createHarness({
      respond: () =>
        harness!.model.requests.length === 1
          ? { content: [{ type: 'tool_use', id: 'toolu_write', name: 'Write', input: { file_path: 'notes.txt', content: 'hi\n' } }] }
          : { content: [{ type: 'text', text: `Answer ${harness!.model.requests.length}` }] },
    });
    await mkdir(path.join(harness.workspace, '.claude', 'commands'), { recursive: true });
    await writeFile(path.join(harness.workspace, '.claude', 'commands', 'deploy.md'), 'Deploy $ARGUMENTS now.');
    const lint = JSON.stringify({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'lint found 2 warnings' } });
    await writeSettings(harness.workspace, {
      UserPromptExpansion: [{ matcher: 'deploy', hooks: [command(`${record('expansion.jsonl')}; echo "Use the staging checklist."`)] }],
      PostToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: `cat > /dev/null; echo '${lint}'`, async: true }] }],
    });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: '/deploy prod', config: harness.config(), taskQueue: harness.taskQueue });
    expect(await harness.api.waitForResult(started.conversationId, started.inputUuid!)).toMatchObject({ subtype: 'success' });
    expect(await recorded('expansion.jsonl')).toMatchObject([
      { hook_event_name: 'UserPromptExpansion', expansion_type: 'slash_command', command_name: 'deploy', command_args: 'prod', prompt: 'Deploy prod now.' },
    ]);
    const first = JSON.stringify(harness.model.requests[0].body.messages);
    expect(first).toContain('Deploy prod now.');
    expect(first).toContain('UserPromptExpansion:deploy hook success: Use the staging checklist.');
    // The async hook's answer is in the feed when it ended; the model hears it with the next prompt.
    await eventually(
      async () => JSON.stringify((await harness!.api.events(started.conversationId)).events),
      (text) => text.includes('lint found 2 warnings'),
    );
    const uuid = await harness.api.send(started.conversationId, 'next');
    await harness.api.waitForResult(started.conversationId, uuid);
    const last = harness.model.requests.at(-1)!;
    expect(JSON.stringify(last.body.messages.at(-1))).toContain('lint found 2 warnings');
    // Only once: the prompt after that does not repeat it.
    const again = await harness.api.send(started.conversationId, 'and again');
    await harness.api.waitForResult(started.conversationId, again);
    expect(JSON.stringify(harness.model.requests.at(-1)!.body.messages.at(-1))).not.toContain('lint found 2 warnings');
  }, 120_000);

  it('InstructionsLoaded for CLAUDE.md, SubagentStart (its context reaches the subagent), PermissionDenied on a deny rule (retry), PostCompact with the summary', async () => {
    const text = (request: RecordedRequest) => JSON.stringify(request.body.messages);
    const isCompaction = (request: RecordedRequest) => text(request).includes('write a detailed summary of the conversation');
    const isChild = (request: RecordedRequest) => JSON.stringify(request.body.messages[0]).includes('CHILD-TASK');
    harness = await createHarness({
      respond: (request) => {
        if (isCompaction(request)) return { content: [{ type: 'text', text: '<summary>Earlier: one agent ran.</summary>' }] };
        if (isChild(request)) return { content: [{ type: 'text', text: 'Child done.' }] };
        const main = harness!.model.requests.filter((one) => !isChild(one) && !isCompaction(one)).length;
        if (main === 1) {
          return {
            content: [
              {
                type: 'tool_use',
                id: 'toolu_agent',
                name: 'Agent',
                input: { description: 'look', prompt: 'CHILD-TASK list files', subagent_type: 'general-purpose' },
              },
              { type: 'tool_use', id: 'toolu_rm', name: 'Bash', input: { command: 'rm -rf build' } },
            ],
          };
        }
        return { content: [{ type: 'text', text: 'Done.' }] };
      },
    });
    await writeFile(path.join(harness.workspace, 'CLAUDE.md'), 'Be careful.');
    const start = JSON.stringify({ hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: 'Subagent rule: be brief.' } });
    const retry = JSON.stringify({ hookSpecificOutput: { hookEventName: 'PermissionDenied', retry: true } });
    await writeSettings(harness.workspace, {
      InstructionsLoaded: [{ hooks: [command(record('instructions.jsonl'))] }],
      SubagentStart: [{ matcher: 'general-purpose', hooks: [command(`${record('subagent-start.jsonl')}; echo '${start}'`)] }],
      PermissionDenied: [{ matcher: 'Bash', hooks: [command(`${record('denied.jsonl')}; echo '${retry}'`)] }],
      PostCompact: [{ matcher: 'manual', hooks: [command(record('post-compact.jsonl'))] }],
      // A denied call never ran: no PostToolUseFailure for it.
      PostToolUseFailure: [{ hooks: [command(record('failure.jsonl'))] }],
    });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'go', config: harness.config({ permissions: { deny: ['Bash(rm:*)'] } }), taskQueue: harness.taskQueue });
    expect(await harness.api.waitForResult(started.conversationId, started.inputUuid!)).toMatchObject({ subtype: 'success', result: 'Done.' });

    expect(await recorded('instructions.jsonl')).toMatchObject([
      { hook_event_name: 'InstructionsLoaded', file_path: expect.stringMatching(/CLAUDE\.md$/), memory_type: 'Project', load_reason: 'session_start' },
    ]);
    expect(await recorded('subagent-start.jsonl')).toMatchObject([
      { hook_event_name: 'SubagentStart', agent_id: 'toolu_agent', agent_type: 'general-purpose' },
    ]);
    const child = harness.model.requests.find(isChild)!;
    expect(text(child)).toContain('Subagent rule: be brief.');
    expect(await recorded('denied.jsonl')).toMatchObject([
      { hook_event_name: 'PermissionDenied', tool_name: 'Bash', tool_use_id: 'toolu_rm', tool_input: { command: 'rm -rf build' }, reason: expect.any(String) },
    ]);
    expect(await recorded('failure.jsonl')).toEqual([]);
    const after = harness.model.requests.filter((one) => !isChild(one) && !isCompaction(one))[1];
    expect(resultOf(after, 'toolu_rm')).toMatchObject({
      is_error: true,
      content: expect.stringContaining('A PermissionDenied hook says you may retry this call.'),
    });

    const uuid = await harness.api.send(started.conversationId, '/compact');
    await harness.api.waitForResult(started.conversationId, uuid);
    expect(await recorded('post-compact.jsonl')).toMatchObject([
      { hook_event_name: 'PostCompact', trigger: 'manual', compact_summary: expect.stringContaining('Earlier: one agent ran.') },
    ]);
  }, 120_000);

  it('StopFailure when the turn ends on an API error, matched on the error kind (Stop does not run)', async () => {
    harness = await createHarness({ respond: () => ({ error: { status: 401, message: 'invalid x-api-key' } }) });
    await writeSettings(harness.workspace, {
      StopFailure: [
        { matcher: 'authentication_failed', hooks: [command(record('stop-failure.jsonl'))] },
        { matcher: 'rate_limit', hooks: [command(record('rate-limit.jsonl'))] },
      ],
      Stop: [{ hooks: [command(record('stop.jsonl'))] }],
    });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'go', config: harness.config(), taskQueue: harness.taskQueue });
    expect(await harness.api.waitForResult(started.conversationId, started.inputUuid!)).toMatchObject({ is_error: true });
    expect(await recorded('stop-failure.jsonl')).toMatchObject([
      { hook_event_name: 'StopFailure', error: 'authentication_failed', error_details: expect.stringContaining('invalid x-api-key') },
    ]);
    expect(await recorded('rate-limit.jsonl')).toEqual([]);
    expect(await recorded('stop.jsonl')).toEqual([]);
  }, 120_000);
  it('PostToolBatch gets every call of a reply with its result once they all ran; its context reaches the next request; exit 2 stops the query', async () => {
    harness = await createHarness({
      respond: () =>
        harness!.model.requests.length === 1
          ? {
              content: [
                { type: 'tool_use', id: 'toolu_w1', name: 'Write', input: { file_path: 'one.txt', content: '1\n' } },
                { type: 'tool_use', id: 'toolu_w2', name: 'Write', input: { file_path: 'two.txt', content: '2\n' } },
              ],
            }
          : harness!.model.requests.length === 2
            ? { content: [{ type: 'tool_use', id: 'toolu_w3', name: 'Write', input: { file_path: 'stop.txt', content: '3\n' } }] }
            : { content: [{ type: 'text', text: 'never asked' }] },
    });
    const context = JSON.stringify({ hookSpecificOutput: { hookEventName: 'PostToolBatch', additionalContext: 'the batch was checked' } });
    await writeSettings(harness.workspace, {
      PostToolBatch: [
        {
          hooks: [command(`${record('batch.jsonl')}; if grep -q stop.txt batch.jsonl; then echo "run the tests first" >&2; exit 2; fi; echo '${context}'`)],
        },
      ],
    });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'write both', config: harness.config(), taskQueue: harness.taskQueue });
    expect(await harness.api.waitForResult(started.conversationId, started.inputUuid!)).toMatchObject({
      is_error: true,
      terminal_reason: 'hook_stopped',
      result: expect.stringContaining('run the tests first'),
    });
    const batches = await recorded('batch.jsonl');
    expect(batches).toMatchObject([
      {
        hook_event_name: 'PostToolBatch',
        tool_calls: [
          { tool_name: 'Write', tool_use_id: 'toolu_w1', tool_input: { file_path: 'one.txt' }, tool_response: expect.stringContaining('one.txt') },
          { tool_name: 'Write', tool_use_id: 'toolu_w2', tool_input: { file_path: 'two.txt' } },
        ],
      },
      { hook_event_name: 'PostToolBatch', tool_calls: [{ tool_use_id: 'toolu_w3' }] },
    ]);
    expect(JSON.stringify(harness.model.requests[1].body.messages.at(-1))).toContain('PostToolBatch hook additional context: the batch was checked');
    expect(harness.model.requests).toHaveLength(2); // stopped before a third model call
  }, 120_000);
  it('Setup runs before SessionStart when the conversation starts with --init (its stdout is context); not without it', async () => {
    harness = await createHarness({ respond: () => ({ content: [{ type: 'text', text: `Answer ${harness!.model.requests.length}` }] }) });
    await writeSettings(harness.workspace, {
      Setup: [{ matcher: 'init', hooks: [command(`${record('setup.jsonl')}; echo "dependencies installed"`)] }],
      SessionStart: [{ hooks: [command(record('setup.jsonl'))] }],
    });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'hi', config: harness.config({ setup: 'init' }), taskQueue: harness.taskQueue });
    expect(await harness.api.waitForResult(started.conversationId, started.inputUuid!)).toMatchObject({ subtype: 'success' });
    expect(await recorded('setup.jsonl')).toMatchObject([
      { hook_event_name: 'Setup', trigger: 'init' },
      { hook_event_name: 'SessionStart', source: 'startup' },
    ]);
    expect(JSON.stringify(harness.model.requests[0].body.messages)).toContain('Setup:init hook success: dependencies installed');
    const plain = await harness.api.start({ prompt: 'again', config: harness.config(), taskQueue: harness.taskQueue });
    await harness.api.waitForResult(plain.conversationId, plain.inputUuid!);
    expect((await recorded('setup.jsonl')).map((event) => event.hook_event_name)).toEqual(['Setup', 'SessionStart', 'SessionStart']);
  }, 120_000);
});
