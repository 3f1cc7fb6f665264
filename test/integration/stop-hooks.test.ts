/**
 * Stop hooks (seed §2.9) on the real dev server: Claude Code's settings format in
 * `<cwd>/.claude/settings.json` plus the conversation config's `stopHooks`; real shell commands that
 * read the hook input on stdin and answer by exit code or JSON on stdout.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConversationEvent } from '../../workflows/definitions';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { MAX_CONSECUTIVE_STOP_HOOK_BLOCKS } from '../../workflows/query/handle-stop-hooks';
import { liveSleepers } from '../helpers/processes';
import { type Harness, createHarness, eventually } from '../helpers/harness';

let harness: Harness;
afterEach(async () => {
  await harness?.close();
});

/** Writes `.claude/settings.json` with these Stop hook commands (before the conversation starts: it is read once per session). */
async function writeStopHookSettings(commands: string[]): Promise<void> {
  await mkdir(path.join(harness.workspace, '.claude'), { recursive: true });
  const settings = { hooks: { Stop: [{ hooks: commands.map((command) => ({ type: 'command', command })) }] } };
  await writeFile(path.join(harness.workspace, '.claude', 'settings.json'), JSON.stringify(settings, null, 2));
}

/** Shell snippet: append the hook input (stdin, one JSON line) to `file`. */
const recordInput = (file: string) => `{ cat; echo; } >> ${file}`;

async function recordedInputs(file: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(path.join(harness.workspace, file), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

async function run(prompt: string, overrides: Parameters<Harness['config']>[0] = {}) {
  const started = await harness.api.start({ prompt, config: harness.config(overrides), taskQueue: harness.taskQueue });
  const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
  const { events } = await harness.api.events(started.conversationId);
  return { ...started, result, events };
}

function systemEvents(events: ConversationEvent[], level?: string): Array<{ level: string; content: string }> {
  return events.map((event) => event.message as any).filter((message) => message.type === 'system' && (level === undefined || message.level === level));
}

function lastUserText(request: RecordedRequest): string {
  const last = request.body.messages.at(-1);
  expect(last.role).toBe('user');
  return (last.content as any[])
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

describe('Stop hooks', () => {
  it('exit code 2 feeds stderr back to the model once, then the query succeeds (stop_hook_active false, then true)', async () => {
    harness = await createHarness({
      script: [{ content: [{ type: 'text', text: 'Done.' }] }, { content: [{ type: 'text', text: 'Fixed the lint error.' }] }],
    });
    await writeStopHookSettings([`${recordInput('hook-inputs.jsonl')}; if [ -f linted ]; then exit 0; fi; touch linted; echo "lint failed" >&2; exit 2`]);
    await harness.startWorker();
    const { result, conversationId } = await run('write some code');

    expect(result).toMatchObject({
      subtype: 'success',
      terminal_reason: 'completed',
      result: 'Fixed the lint error.',
      transitions: ['stop_hook_retry'],
    });
    expect(harness.model.requests).toHaveLength(2);
    expect(lastUserText(harness.model.requests[1])).toContain('lint failed');
    const second = harness.model.requests[1].body.messages;
    expect(second.at(-2)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'Done.' }] });

    const inputs = await recordedInputs('hook-inputs.jsonl');
    expect(inputs.map((input) => input.stop_hook_active)).toEqual([false, true]);
    expect(inputs[0]).toMatchObject({
      hook_event_name: 'Stop',
      session_id: conversationId,
      cwd: harness.workspace,
      last_assistant_message: 'Done.',
    });
    expect(inputs[1].last_assistant_message).toBe('Fixed the lint error.');
  });

  it('{"decision":"block","reason"} on stdout is a blocking error too', async () => {
    harness = await createHarness({
      script: [{ content: [{ type: 'text', text: 'Done.' }] }, { content: [{ type: 'text', text: 'Tests are green now.' }] }],
    });
    await writeStopHookSettings([
      `${recordInput('hook-inputs.jsonl')}; if [ -f ran ]; then exit 0; fi; touch ran; echo '{"decision":"block","reason":"tests are red: 2 failing"}'`,
    ]);
    await harness.startWorker();
    const { result } = await run('fix the tests');

    expect(result).toMatchObject({ subtype: 'success', result: 'Tests are green now.', transitions: ['stop_hook_retry'] });
    expect(harness.model.requests).toHaveLength(2);
    expect(lastUserText(harness.model.requests[1])).toContain('tests are red: 2 failing');
    expect((await recordedInputs('hook-inputs.jsonl')).map((input) => input.stop_hook_active)).toEqual([false, true]);
  });

  it('{"continue": false, "stopReason"} ends the query with stop_hook_prevented', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'Done.' }] }] });
    await writeStopHookSettings([`cat > /dev/null; echo '{"continue": false, "stopReason": "done by hook"}'`]);
    await harness.startWorker();
    const { result, conversationId } = await run('go');

    expect(result).toMatchObject({ terminal_reason: 'stop_hook_prevented', transitions: [] });
    expect(result.result).toContain('done by hook');
    expect(harness.model.requests).toHaveLength(1);
    const status = await harness.api.status(conversationId);
    expect(status).toMatchObject({ phase: 'awaiting_input', ended: false });
  });

  it('a hook failing with another exit code is reported as a warning and the query still succeeds', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'Done.' }] }] });
    await writeStopHookSettings([`cat > /dev/null; echo "linter crashed" >&2; exit 1`]);
    await harness.startWorker();
    const { result, events } = await run('go');

    expect(result).toMatchObject({ subtype: 'success', terminal_reason: 'completed', result: 'Done.', transitions: [] });
    expect(harness.model.requests).toHaveLength(1);
    const warnings = systemEvents(events, 'warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0].content).toContain('exit code 1');
    expect(warnings[0].content).toContain('linter crashed');
  });

  it(`a hook that always blocks ends the turn with a warning after ${MAX_CONSECUTIVE_STOP_HOOK_BLOCKS} consecutive blocks`, async () => {
    let replies = 0;
    harness = await createHarness({ respond: () => ({ content: [{ type: 'text', text: `Attempt ${++replies}.` }] }) });
    await writeStopHookSettings([`${recordInput('hook-inputs.jsonl')}; echo "still failing" >&2; exit 2`]);
    await harness.startWorker();
    const { result, events } = await run('go');

    // Each block but the last is fed back to the model; the last one ends the turn.
    expect(MAX_CONSECUTIVE_STOP_HOOK_BLOCKS).toBe(8);
    const inputs = await recordedInputs('hook-inputs.jsonl');
    expect(inputs).toHaveLength(MAX_CONSECUTIVE_STOP_HOOK_BLOCKS);
    expect(inputs.map((input) => input.stop_hook_active)).toEqual([false, ...Array(MAX_CONSECUTIVE_STOP_HOOK_BLOCKS - 1).fill(true)]);
    expect(harness.model.requests).toHaveLength(MAX_CONSECUTIVE_STOP_HOOK_BLOCKS);
    expect(result).toMatchObject({
      subtype: 'success',
      terminal_reason: 'completed',
      transitions: Array(MAX_CONSECUTIVE_STOP_HOOK_BLOCKS - 1).fill('stop_hook_retry'),
    });
    const warnings = systemEvents(events, 'warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0].content).toContain(`blocked ${MAX_CONSECUTIVE_STOP_HOOK_BLOCKS} times in a row`);
    expect(warnings[0].content).toContain('still failing');
    for (const request of harness.model.requests.slice(1)) expect(lastUserText(request)).toContain('still failing');
  });

  it('runs the config stopHooks beside settings.json, all in parallel', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'Done.' }] }] });
    // A rendezvous: each hook announces itself, then waits (up to 20 s) for the other. Run one
    // after the other, the first would give up and fail (exit 1, reported as a warning).
    const meet = (name: string, other: string) =>
      `cat > /dev/null; touch ${name}.here; for i in $(seq 400); do [ -f ${other}.here ] && echo met >> ${name}.log && exit 0; sleep 0.05; done; exit 1`;
    await writeStopHookSettings([meet('settings', 'config')]);
    await harness.startWorker();
    const { result, events } = await run('go', { stopHooks: [{ hooks: [{ type: 'command', command: meet('config', 'settings') }] }] });

    expect(result).toMatchObject({ subtype: 'success', result: 'Done.' });
    expect(systemEvents(events, 'warning')).toEqual([]);
    expect(await readFile(path.join(harness.workspace, 'settings.log'), 'utf8')).toBe('met\n');
    expect(await readFile(path.join(harness.workspace, 'config.log'), 'utf8')).toBe('met\n');
  });

  it('an abort while hooks run kills them and ends the query as aborted_tools', async () => {
    harness = await createHarness({
      script: [{ content: [{ type: 'text', text: 'Done.' }] }, { content: [{ type: 'text', text: 'Still here.' }] }],
    });
    // Only the first run hangs; the follow-up query's hook run returns at once.
    await writeStopHookSettings(['if [ -f hook.pid ]; then exit 0; fi; echo started > hook.pid; sleep 60.125']);
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'finish', config: harness.config(), taskQueue: harness.taskQueue });
    await eventually(
      () => harness.api.status(started.conversationId),
      (status) => status.phase === 'stop_hooks',
    );
    // Found by its unique command line: the hook runs in the sandbox, where `$$` is a sandbox PID.
    await eventually(
      async () => liveSleepers('60.125').length,
      (count) => count === 1,
    );
    await harness.api.abort(started.conversationId);
    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);

    expect(result).toMatchObject({ is_error: true, terminal_reason: 'aborted_tools' });
    expect(liveSleepers('60.125')).toEqual([]);
    const next = await harness.api.send(started.conversationId, 'still there?');
    expect((await harness.api.waitForResult(started.conversationId, next)).result).toBe('Still here.');
  });

  it('a malformed settings.json is reported as a warning and the conversation still works', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'Working anyway.' }] }] });
    await mkdir(path.join(harness.workspace, '.claude'), { recursive: true });
    await writeFile(path.join(harness.workspace, '.claude', 'settings.json'), '{"hooks": {"Stop": [{"hooks": [{"type": "cmd"}]}]}}');
    await harness.startWorker();
    const { result, events } = await run('hello');

    expect(result).toMatchObject({ subtype: 'success', result: 'Working anyway.' });
    const warning = systemEvents(events, 'warning')
      .map((event) => event.content)
      .join('\n');
    // Only the hooks are skipped: the rest of the session context (CLAUDE.md, git, rules) still loads.
    expect(warning).not.toContain('Session context not loaded');
    expect(warning).toContain('settings.json: hooks.Stop is not in Claude Code\'s format ({hooks:[{type:"command",command}]}), so its Stop hooks were ignored');
  });

  it('a hook that blocked sees stop_hook_active on its next run even when the model used tools in between', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'text', text: 'Done.' }] },
        { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'touch fixed' } }] },
        { content: [{ type: 'text', text: 'Fixed it.' }] },
      ],
    });
    await writeStopHookSettings([`${recordInput('hook-inputs.jsonl')}; if [ -f fixed ]; then exit 0; fi; echo "not fixed" >&2; exit 2`]);
    await harness.startWorker();
    const { result } = await run('do it');

    expect(result).toMatchObject({ subtype: 'success', result: 'Fixed it.', transitions: ['stop_hook_retry', 'tool_use'] });
    expect((await recordedInputs('hook-inputs.jsonl')).map((input) => input.stop_hook_active)).toEqual([false, true]);
  });
});
