/**
 * Claude Code's hook lifecycle in the conversation (issue 22 §4) on the real dev server: real
 * shell hook commands in `<workspace>/.claude/settings.json`, read at session start, run by the
 * runHooks activity at each event; the scripted model shows what the model saw.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResultMessage } from '../../common/result';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import type { ConversationEvent } from '../../workflows/definitions';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { TranscriptCache } from '../../activities/transcript-cache';
import { transcriptCacheSinks } from '../../worker/worker';
import { type Harness, createHarness, eventually, workflowBundle } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

type Hooks = Record<string, Array<{ matcher?: string; hooks: Array<{ type: 'command'; command: string }> }>>;

async function writeHooks(hooks: Hooks): Promise<void> {
  await mkdir(path.join(harness!.workspace, '.claude'), { recursive: true });
  await writeFile(path.join(harness!.workspace, '.claude', 'settings.json'), JSON.stringify({ hooks }, null, 2));
}

const command = (text: string) => ({ type: 'command' as const, command: text });
/** Shell: append the hook's stdin (one JSON line) to `file`. */
const record = (file: string) => `{ cat; echo; } >> ${file}`;

async function recorded(file: string): Promise<Array<Record<string, any>>> {
  const text = await readFile(path.join(harness!.workspace, file), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

const requestText = (request: RecordedRequest) => JSON.stringify(request.body.messages);

function toolResults(request: RecordedRequest): Array<{ tool_use_id: string; content: string; is_error?: boolean }> {
  const last = request.body.messages.at(-1) as { content: unknown };
  return Array.isArray(last.content) ? ((last.content as Array<{ type: string }>).filter((block) => block.type === 'tool_result') as never) : [];
}
const resultOf = (request: RecordedRequest, id: string) => toolResults(request).find((result) => result.tool_use_id === id)!;

function systemLines(events: ConversationEvent[]): string[] {
  return events
    .map((event) => event.message as { type: string; content?: string })
    .filter((message) => message.type === 'system')
    .map((message) => message.content ?? '');
}

async function say(conversationId: string, prompt: string): Promise<ResultMessage> {
  const uuid = await harness!.api.send(conversationId, prompt);
  return harness!.api.waitForResult(conversationId, uuid);
}

const exists = (file: string) =>
  readFile(path.join(harness!.workspace, file)).then(
    () => true,
    () => false,
  );

describe('hooks in the conversation', () => {
  it('SessionStart and UserPromptSubmit context reach the model; PreToolUse exit 2 blocks Bash with its stderr; PostToolUse runs once after Write; SessionEnd at the end', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            // Write first: a Bash call that errs (as a blocked one does) cancels the calls after it.
            { type: 'tool_use', id: 'toolu_write', name: 'Write', input: { file_path: 'notes.txt', content: 'hello\n' } },
            { type: 'tool_use', id: 'toolu_rm', name: 'Bash', input: { command: 'rm -f keep.txt' } },
          ],
        },
        { content: [{ type: 'text', text: 'Done.' }] },
      ],
    });
    const blockRm = `${record('pre.jsonl')}; echo "rm is not allowed here" >&2; exit 2`;
    await writeHooks({
      SessionStart: [{ matcher: 'startup', hooks: [command(`${record('session-start.jsonl')}; echo "The deploy branch is release-7."`)] }],
      UserPromptSubmit: [
        {
          hooks: [command(`cat > /dev/null; echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"Ticket ABC-12 is open."}}'`)],
        },
      ],
      PreToolUse: [{ matcher: 'Bash', hooks: [command(blockRm)] }],
      PostToolUse: [
        {
          matcher: 'Edit|Write',
          hooks: [
            command(`${record('post.jsonl')}; echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"Lint passed for notes.txt."}}'`),
          ],
        },
      ],
      SessionEnd: [{ hooks: [command(record('session-end.jsonl'))] }],
    });
    await writeFile(path.join(harness.workspace, 'keep.txt'), 'keep\n');
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'tidy up', config: harness.config(), taskQueue: harness.taskQueue });
    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'Done.' });

    const first = requestText(harness.model.requests[0]);
    expect(first).toContain('SessionStart:startup hook success: The deploy branch is release-7.');
    expect(first).toContain('UserPromptSubmit hook additional context: Ticket ABC-12 is open.');
    expect(first).toContain('tidy up');
    const second = harness.model.requests[1];
    expect(resultOf(second, 'toolu_rm')).toMatchObject({ is_error: true, content: `PreToolUse:Bash hook error: [${blockRm}]: rm is not allowed here` });
    expect(await exists('keep.txt')).toBe(true);
    expect(resultOf(second, 'toolu_write').is_error).toBeFalsy();
    expect(resultOf(second, 'toolu_write').content).toContain('PostToolUse:Write hook additional context: Lint passed for notes.txt.');
    expect(await readFile(path.join(harness.workspace, 'notes.txt'), 'utf8')).toBe('hello\n');

    const post = await recorded('post.jsonl');
    expect(post).toHaveLength(1);
    expect(post[0]).toMatchObject({
      hook_event_name: 'PostToolUse',
      tool_name: 'Write',
      tool_use_id: 'toolu_write',
      session_id: started.conversationId,
      cwd: harness.workspace,
    });
    expect(await recorded('pre.jsonl')).toMatchObject([{ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'rm -f keep.txt' } }]);
    expect(await recorded('session-start.jsonl')).toMatchObject([{ hook_event_name: 'SessionStart', source: 'startup' }]);

    await harness.api.end(started.conversationId);
    const ended = await eventually(
      () => recorded('session-end.jsonl'),
      (lines) => lines.length > 0,
    );
    expect(ended).toMatchObject([{ hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' }]);
  }, 120_000);

  it('PreToolUse JSON: deny with its reason, ask waits for a person (and Notification runs), allow with updatedInput runs the new input; allow never overrides a deny rule', async () => {
    harness = await createHarness({
      script: [
        // One call per turn: a Bash call that errs cancels the calls after it in the same message.
        { content: [{ type: 'tool_use', id: 'toolu_deny', name: 'Bash', input: { command: 'echo deny-me' } }] },
        { content: [{ type: 'tool_use', id: 'toolu_rewrite', name: 'Bash', input: { command: 'echo rewrite-me > original.txt' } }] },
        { content: [{ type: 'tool_use', id: 'toolu_denied_rule', name: 'Bash', input: { command: 'touch allow-me.txt' } }] },
        { content: [{ type: 'tool_use', id: 'toolu_ask', name: 'Bash', input: { command: 'echo ask-me > asked.txt' } }] },
        { content: [{ type: 'tool_use', id: 'toolu_sneak', name: 'Bash', input: { command: 'echo sneak-me' } }] },
        { content: [{ type: 'text', text: 'Done.' }] },
      ],
    });
    const answer = (json: object) => `echo '${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', ...json } })}'`;
    const decide = [
      'input=$(cat)',
      'case "$input" in',
      `  *deny-me*) ${answer({ permissionDecision: 'deny', permissionDecisionReason: 'deny-me is off limits' })};;`,
      `  *rewrite-me*) ${answer({ permissionDecision: 'allow', updatedInput: { command: 'echo rewritten > rewritten.txt' } })};;`,
      // An updated input is checked by the rules, not the one the model wrote.
      `  *sneak-me*) ${answer({ permissionDecision: 'allow', updatedInput: { command: 'touch allow-me.txt' } })};;`,
      `  *allow-me*) ${answer({ permissionDecision: 'allow' })};;`,
      `  *ask-me*) ${answer({ permissionDecision: 'ask', permissionDecisionReason: 'a person should look at this' })};;`,
      'esac',
    ].join('\n');
    await writeHooks({
      PreToolUse: [{ matcher: 'Bash', hooks: [command(decide)] }],
      Notification: [{ matcher: 'permission_prompt', hooks: [command(record('notified.jsonl'))] }],
    });
    await harness.startWorker();
    // default mode: a command that writes asks, unless a hook allows it.
    const config = harness.config({ permissions: { deny: ['Bash(touch allow-me.txt)'] } });
    const started = await harness.api.start({ prompt: 'go', config, taskQueue: harness.taskQueue });
    const waiting = await eventually(
      () => harness!.api.status(started.conversationId),
      (status) => (status.pendingPermissions ?? []).some((pending) => pending.toolUseId === 'toolu_ask'),
    );
    expect(waiting.pendingPermissions).toMatchObject([{ toolUseId: 'toolu_ask', reason: 'PreToolUse hook: a person should look at this' }]);
    const notified = await eventually(
      () => recorded('notified.jsonl'),
      (lines) => lines.length > 0,
    );
    expect(notified).toMatchObject([{ hook_event_name: 'Notification', notification_type: 'permission_prompt', message: expect.stringContaining('Bash') }]);
    await harness.api.decidePermission(started.conversationId, { toolUseId: 'toolu_ask', behavior: 'allow' });
    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'Done.' });

    const [, afterDeny, afterRewrite, afterRule] = harness.model.requests;
    expect(resultOf(afterDeny, 'toolu_deny')).toMatchObject({ is_error: true, content: 'deny-me is off limits' });
    expect(resultOf(afterRewrite, 'toolu_rewrite').is_error).toBeFalsy();
    expect(await readFile(path.join(harness.workspace, 'rewritten.txt'), 'utf8')).toBe('rewritten\n');
    expect(await exists('original.txt')).toBe(false);
    expect(resultOf(afterRule, 'toolu_denied_rule')).toMatchObject({ is_error: true, content: expect.stringContaining('denied by') });
    expect(await exists('allow-me.txt')).toBe(false);
    expect(await readFile(path.join(harness.workspace, 'asked.txt'), 'utf8')).toBe('ask-me\n');
    const afterSneak = harness.model.requests.at(-1)!;
    expect(resultOf(afterSneak, 'toolu_sneak')).toMatchObject({ is_error: true, content: expect.stringContaining('denied by') });
    expect(await exists('allow-me.txt')).toBe(false);
  }, 120_000);

  it('UserPromptSubmit exit 2 drops the prompt and tells the user; PreCompact on /compact; SessionStart(compact) and, after /clear, SessionEnd(clear) and SessionStart(clear)', async () => {
    const isCompaction = (request: RecordedRequest) => requestText(request).includes('write a detailed summary of the conversation');
    let answers = 0;
    harness = await createHarness({
      respond: (request) =>
        isCompaction(request)
          ? { content: [{ type: 'text', text: '<summary>Earlier: one question.</summary>' }] }
          : { content: [{ type: 'text', text: `Answer ${++answers}` }] },
    });
    await writeHooks({
      UserPromptSubmit: [{ hooks: [command('input=$(cat); case "$input" in *password*) echo "prompts with passwords are blocked" >&2; exit 2;; esac')] }],
      PreCompact: [{ matcher: 'manual', hooks: [command(record('pre-compact.jsonl'))] }],
      SessionStart: [{ matcher: 'compact|clear', hooks: [command(`${record('session-start.jsonl')}; echo "Re-read the plan."`)] }],
      SessionEnd: [{ hooks: [command(record('session-end.jsonl'))] }],
    });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'first question', config: harness.config(), taskQueue: harness.taskQueue });
    const { conversationId } = started;
    expect(await harness.api.waitForResult(conversationId, started.inputUuid!)).toMatchObject({ result: 'Answer 1' });

    const blocked = await say(conversationId, 'my password is hunter2');
    expect(blocked).toMatchObject({ is_error: true, result: expect.stringContaining('UserPromptSubmit operation blocked by hook') });
    expect(blocked.result).toContain('prompts with passwords are blocked');
    expect(harness.model.requests).toHaveLength(1);
    expect(JSON.stringify(await harness.api.transcript(conversationId))).not.toContain('hunter2');

    const compacted = await say(conversationId, '/compact keep it short');
    expect(compacted.is_error).toBe(false);
    expect(await recorded('pre-compact.jsonl')).toMatchObject([{ hook_event_name: 'PreCompact', trigger: 'manual', custom_instructions: 'keep it short' }]);
    expect(await recorded('session-start.jsonl')).toEqual([]);

    expect(await say(conversationId, 'next question')).toMatchObject({ result: 'Answer 2' });
    expect(await recorded('session-start.jsonl')).toMatchObject([{ hook_event_name: 'SessionStart', source: 'compact' }]);
    const next = requestText(harness.model.requests.at(-1)!);
    expect(next).toContain('SessionStart:compact hook success: Re-read the plan.');
    expect(next).toContain('Earlier: one question.');

    // /clear: SessionEnd(clear) at once, SessionStart(clear) before the next prompt, its context in the fresh start.
    await say(conversationId, '/clear');
    expect(await recorded('session-end.jsonl')).toMatchObject([{ hook_event_name: 'SessionEnd', reason: 'clear' }]);
    expect(await say(conversationId, 'fresh question')).toMatchObject({ result: 'Answer 3' });
    expect((await recorded('session-start.jsonl')).map((input) => input.source)).toEqual(['compact', 'clear']);
    const fresh = requestText(harness.model.requests.at(-1)!);
    expect(fresh).toContain('SessionStart:clear hook success: Re-read the plan.');
    expect(fresh).not.toContain('Earlier: one question.');
    const { events } = await harness.api.events(conversationId);
    const lines = systemLines(events).join('\n');
    expect(lines).not.toContain('hook error');
    // People see what the hooks told the model.
    expect(lines).toContain('SessionStart:compact hook success: Re-read the plan.');
  }, 120_000);

  it('a replay of the history runs no hook again (each run is a recorded activity)', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_w', name: 'Write', input: { file_path: 'a.txt', content: 'a' } }] },
        { content: [{ type: 'text', text: 'Done.' }] },
      ],
    });
    const count = 'echo run >> hook-runs.txt';
    await writeHooks({
      SessionStart: [{ hooks: [command(count)] }],
      UserPromptSubmit: [{ hooks: [command(count)] }],
      PreToolUse: [{ hooks: [command(count)] }],
      PostToolUse: [{ hooks: [command(count)] }],
      SessionEnd: [{ hooks: [command(count)] }],
    });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'write a.txt', config: harness.config(), taskQueue: harness.taskQueue });
    await harness.api.waitForResult(started.conversationId, started.inputUuid!);
    await harness.api.end(started.conversationId);
    await harness.client.workflow.getHandle(started.conversationId).result();
    const runs = async () => (await readFile(path.join(harness!.workspace, 'hook-runs.txt'), 'utf8')).split('\n').filter(Boolean).length;
    // SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, SessionEnd: once each.
    expect(await runs()).toBe(5);

    const history = await harness.client.workflow.getHandle(started.conversationId).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: workflowBundle(), sinks: transcriptCacheSinks(new TranscriptCache()) }, history, started.conversationId);
    expect(await runs()).toBe(5);
  }, 120_000);

  it('a subagent runs the same tool hooks, and SubagentStop (not Stop) at its end: a block sends the feedback to its model', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            {
              type: 'tool_use',
              id: 'toolu_agent',
              name: 'Agent',
              input: { description: 'look around', prompt: 'List the files', subagent_type: 'general-purpose' },
            },
          ],
        },
        { content: [{ type: 'tool_use', id: 'toolu_child_bash', name: 'Bash', input: { command: 'ls' } }] },
        { content: [{ type: 'text', text: 'Child done.' }] },
        { content: [{ type: 'text', text: 'Child checked its work.' }] },
        { content: [{ type: 'text', text: 'Parent done.' }] },
      ],
    });
    await writeHooks({
      PreToolUse: [{ matcher: 'Bash', hooks: [command(`${record('pre.jsonl')}; echo "no Bash in agents" >&2; exit 2`)] }],
      SubagentStop: [
        { hooks: [command(`${record('subagent-stop.jsonl')}; if [ -f checked ]; then exit 0; fi; touch checked; echo "check your work" >&2; exit 2`)] },
      ],
      Stop: [{ hooks: [command(record('stop.jsonl'))] }],
    });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'delegate', config: harness.config(), taskQueue: harness.taskQueue });
    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'Parent done.' });

    const [, afterBash, afterChildDone] = harness.model.requests.slice(1);
    expect(resultOf(afterBash, 'toolu_child_bash')).toMatchObject({ is_error: true, content: expect.stringContaining('PreToolUse:Bash hook error') });
    expect(requestText(afterChildDone)).toContain('check your work');
    const stops = await recorded('subagent-stop.jsonl');
    expect(stops.map((input) => [input.hook_event_name, input.stop_hook_active, input.agent_type])).toEqual([
      ['SubagentStop', false, 'general-purpose'],
      ['SubagentStop', true, 'general-purpose'],
    ]);
    // The parent's own end runs Stop (once); the subagent's does not.
    expect(await recorded('stop.jsonl')).toHaveLength(1);
  }, 120_000);

  it('a read a PreToolUse hook denies is never read: not prefetched by the model call, not started while streaming', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_secret', name: 'Read', input: { file_path: 'secret.txt' } }] },
        { content: [{ type: 'text', text: 'Could not read it.' }] },
      ],
    });
    await writeFile(path.join(harness.workspace, 'secret.txt'), 'TOPSECRET-4711\n');
    const deny = JSON.stringify({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'secrets stay unread' },
    });
    await writeHooks({ PreToolUse: [{ matcher: 'Read', hooks: [command(`cat > /dev/null; echo '${deny}'`)] }] });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'read the secret', config: harness.config(), taskQueue: harness.taskQueue });
    expect(await harness.api.waitForResult(started.conversationId, started.inputUuid!)).toMatchObject({ result: 'Could not read it.' });
    expect(resultOf(harness.model.requests[1], 'toolu_secret')).toMatchObject({ is_error: true, content: 'secrets stay unread' });
    // Every payload of the history, decoded (what a prefetched read would have recorded).
    const history = historyToJSON(await harness.client.workflow.getHandle(started.conversationId).fetchHistory());
    const payloads = [...history.matchAll(/"data":\s*"([^"]+)"/g)].map((match) => Buffer.from(match[1], 'base64').toString('utf8')).join('\n');
    expect(payloads).toContain('secrets stay unread');
    expect(payloads).not.toContain('TOPSECRET');
  }, 120_000);

  it('settings and SessionStart context are carried across continue-as-new (no second load, no second SessionStart); PreCompact(auto) before an autocompact', async () => {
    const isCompaction = (request: RecordedRequest) => requestText(request).includes('write a detailed summary of the conversation');
    let answers = 0;
    harness = await createHarness({
      respond: (request) => {
        if (isCompaction(request)) return { content: [{ type: 'text', text: '<summary>Asked twice.</summary>' }] };
        answers++;
        // The second answer reports a context past the autocompact threshold of a 50k window (17k).
        return { content: [{ type: 'text', text: `Answer ${answers}` }], ...(answers === 2 ? { usage: { input_tokens: 18_000 } } : {}) };
      },
    });
    await writeHooks({
      SessionStart: [{ hooks: [command(`${record('session-start.jsonl')}; echo "Deploys go to release-7."`)] }],
      PreCompact: [{ matcher: 'auto', hooks: [command(record('pre-compact.jsonl'))] }],
    });
    await harness.startWorker();
    const config = harness.config({ continueAsNewAfterEvents: 10, contextWindowTokens: 50_000 });
    const started = await harness.api.start({ prompt: 'first', config, taskQueue: harness.taskQueue });
    const { conversationId } = started;
    await harness.api.waitForResult(conversationId, started.inputUuid!);
    // The settings file goes away: a carried conversation keeps the hooks it started with.
    await writeFile(path.join(harness.workspace, '.claude', 'settings.json'), '{}');
    expect(await say(conversationId, 'second')).toMatchObject({ result: 'Answer 2' });
    // The autocompact runs before the third prompt's model call; SessionStart(compact) before the next prompt.
    expect(await say(conversationId, 'third')).toMatchObject({ result: 'Answer 3' });
    expect(await say(conversationId, 'fourth')).toMatchObject({ result: 'Answer 4' });

    const status = await harness.api.status(conversationId);
    expect(status.continuedAsNewCount).toBeGreaterThanOrEqual(1);
    expect(requestText(harness.model.requests[1])).toContain('SessionStart:startup hook success: Deploys go to release-7.');
    expect(harness.model.requests.some(isCompaction)).toBe(true);
    expect(await recorded('pre-compact.jsonl')).toMatchObject([{ hook_event_name: 'PreCompact', trigger: 'auto' }]);
    // startup once (not again in the new runs); then compact, before the prompt after the autocompact.
    expect((await recorded('session-start.jsonl')).map((input) => input.source)).toEqual(['startup', 'compact']);
    expect(requestText(harness.model.requests.at(-1)!)).toContain('SessionStart:compact hook success: Deploys go to release-7.');
  }, 120_000);

  it('start --resume runs SessionStart with source resume', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'First.' }] }, { content: [{ type: 'text', text: 'Resumed.' }] }] });
    await writeHooks({ SessionStart: [{ matcher: 'resume', hooks: [command(`${record('session-start.jsonl')}; echo "Welcome back."`)] }] });
    await harness.startWorker();
    const first = await harness.api.start({ prompt: 'hello', config: harness.config(), taskQueue: harness.taskQueue });
    await harness.api.waitForResult(first.conversationId, first.inputUuid!);
    // The first conversation started fresh: the resume matcher did not match.
    expect(await recorded('session-start.jsonl')).toEqual([]);
    const messages = await harness.api.transcript(first.conversationId);
    const resumed = await harness.api.start({
      prompt: 'again',
      config: harness.config(),
      taskQueue: harness.taskQueue,
      resume: { fromConversationId: first.conversationId, messages },
    });
    expect(await harness.api.waitForResult(resumed.conversationId, resumed.inputUuid!)).toMatchObject({ result: 'Resumed.' });
    expect(await recorded('session-start.jsonl')).toMatchObject([{ hook_event_name: 'SessionStart', source: 'resume', session_id: resumed.conversationId }]);
    expect(requestText(harness.model.requests[1])).toContain('SessionStart:resume hook success: Welcome back.');
  }, 120_000);
});
