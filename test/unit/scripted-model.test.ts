/** The scripted model of `worker --scripted` (issue 19, item 5): plain prompts to real tool calls. */
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { DEMO_PROMPT, SCRIPTED_HELP, scriptedResponder } from '../../worker/scripted-model';

const request = (messages: unknown[]) => ({ index: 0, path: '/v1/messages', headers: {}, body: { messages }, stream: true, receivedAt: 0 }) as RecordedRequest;
const context = { role: 'user', content: [{ type: 'text', text: '<system-reminder>\nCLAUDE.md …\n</system-reminder>' }] };
const toolUses = (turn: ReturnType<typeof scriptedResponder>) => (turn?.content ?? []).filter((block) => block.type === 'tool_use');

describe('the scripted model', () => {
  it('turns each plain command into its tool call', () => {
    const ask = (prompt: string) => toolUses(scriptedResponder(request([context, { role: 'user', content: prompt }])));
    expect(ask('read notes.txt')).toMatchObject([{ name: 'Read', input: { file_path: 'notes.txt' } }]);
    expect(ask('write out.txt hello there')).toMatchObject([{ name: 'Write', input: { file_path: 'out.txt', content: 'hello there\n' } }]);
    expect(ask('edit math.js let i = 1; => let i = 0;')).toMatchObject([
      { name: 'Edit', input: { file_path: 'math.js', old_string: 'let i = 1;', new_string: 'let i = 0;' } },
    ]);
    expect(ask('run ls -la')).toMatchObject([{ name: 'Bash', input: { command: 'ls -la' } }]);
    expect(ask('slow 5')).toMatchObject([{ name: 'Bash', input: { command: expect.stringContaining('seq 1 5') } }]);
    expect(ask('glob **/*.ts')).toMatchObject([{ name: 'Glob', input: { pattern: '**/*.ts' } }]);
    expect(ask('grep TODO')).toMatchObject([{ name: 'Grep', input: { pattern: 'TODO' } }]);
    expect(ask('agent read notes.txt')).toMatchObject([{ name: 'Agent', input: { prompt: 'read notes.txt', subagent_type: 'general-purpose' } }]);
    expect(scriptedResponder(request([{ role: 'user', content: 'hello' }]))?.content).toEqual([{ type: 'text', text: SCRIPTED_HELP }]);
  });

  it('reports what a tool returned, and plays the demo by the turn since its prompt', () => {
    const afterRead = scriptedResponder(
      request([
        { role: 'user', content: 'read notes.txt' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'alpha\nbeta' }] },
      ]),
    );
    expect(afterRead?.content).toEqual([{ type: 'text', text: 'Here is what came back:\nalpha\nbeta' }]);
    // A later prompt in the same conversation starts its own count.
    const demo = scriptedResponder(
      request([
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: [{ type: 'text', text: 'hi' }] },
        { role: 'user', content: DEMO_PROMPT },
      ]),
    );
    expect(toolUses(demo)).toMatchObject([
      { name: 'Read', input: { file_path: 'math.js' } },
      { name: 'Read', input: { file_path: 'test.js' } },
    ]);
  });
});

const textOf = (turn: ReturnType<typeof scriptedResponder>) =>
  (turn?.content ?? []).flatMap((block) => (block.type === 'text' ? [(block as { text: string }).text] : [])).join('\n');

describe('the scripted model after an interruption and a compaction', () => {
  it('answers the prompt typed after a Ctrl-C, not the interrupted call', () => {
    // As buildApiMessages sends it: the interrupted call's result, the mark and the new prompt share one user turn.
    const turn = scriptedResponder(
      request([
        context,
        { role: 'user', content: 'slow 30' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'for i in …' } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: 'Interrupted by user', is_error: true },
            { type: 'text', text: '[Request interrupted by user for tool use]' },
            { type: 'text', text: 'read notes.txt' },
          ],
        },
      ]),
    );
    expect(textOf(turn)).not.toMatch(/did not work|Interrupted/);
    expect(toolUses(turn)).toMatchObject([{ name: 'Read', input: { file_path: 'notes.txt' } }]);
    // A text-only prompt after an interrupted answer (the mark is its own user message before it).
    const afterText = scriptedResponder(
      request([
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: [{ type: 'text', text: 'I am' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: '[Request interrupted by user]' },
            { type: 'text', text: 'glob *.js' },
          ],
        },
      ]),
    );
    expect(toolUses(afterText)).toMatchObject([{ name: 'Glob', input: { pattern: '*.js' } }]);
  });

  const compactInstruction =
    'IMPORTANT: Respond with text only. Do not call any tools in this turn — tool calls will be rejected and waste the turn.\n\n' +
    'Your task is to write a detailed summary of the conversation so far, so that the work can continue without it.\n…';

  it("answers a compaction's request with a summary and no tool call, even in the demo", () => {
    const conversation = [
      context,
      { role: 'user', content: DEMO_PROMPT },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'math.js' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'function sum…' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Fixed.' }] },
      { role: 'user', content: 'read notes.txt' },
      { role: 'assistant', content: [{ type: 'text', text: 'Here is what came back: alpha' }] },
    ];
    const summary = scriptedResponder(request([...conversation, { role: 'user', content: [{ type: 'text', text: compactInstruction }] }]));
    expect(toolUses(summary)).toEqual([]);
    expect(textOf(summary)).toMatch(/<summary>[\s\S]*The test in test.js fails[\s\S]*read notes.txt[\s\S]*Read \{"file_path":"math.js"\}[\s\S]*<\/summary>/);
    // Mid-task (automatic compaction), the instruction joins the tool results' user turn: still a summary.
    const midTask = scriptedResponder(
      request([
        ...conversation.slice(0, 3),
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: 'function sum…' },
            { type: 'text', text: compactInstruction },
          ],
        },
      ]),
    );
    expect(toolUses(midTask)).toEqual([]);
    expect(textOf(midTask)).toContain('<summary>');
  });

  const summaryMessage = {
    role: 'user',
    content: [
      { type: 'text', text: '<system-reminder>\nCLAUDE.md …\n</system-reminder>' },
      {
        type: 'text',
        text: `This session is being continued from an earlier conversation that ran out of context. The summary below covers the earlier part.\n\n1. Primary request: ${DEMO_PROMPT}\n\nContinue from where the work left off without asking further questions, and without acknowledging this summary.`,
      },
      { type: 'text', text: `<system-reminder>\nThe user's latest request, verbatim:\n${DEMO_PROMPT}\n</system-reminder>` },
      { type: 'text', text: '<system-reminder>\nContents of math.js as last read before the compaction:\nfunction sum…\n</system-reminder>' },
    ],
  };

  it('after a compaction, answers the next prompt (not the demo the summary mentions)', () => {
    const next = scriptedResponder(request([{ ...summaryMessage, content: [...summaryMessage.content, { type: 'text', text: 'read notes.txt' }] }]));
    expect(toolUses(next)).toMatchObject([{ name: 'Read', input: { file_path: 'notes.txt' } }]);
    const afterTool = scriptedResponder(
      request([
        { ...summaryMessage, content: [...summaryMessage.content, { type: 'text', text: 'read notes.txt' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't9', name: 'Read', input: { file_path: 'notes.txt' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't9', content: 'alpha' }] },
      ]),
    );
    expect(textOf(afterTool)).toBe('Here is what came back:\nalpha');
    // The summary alone (an automatic compaction mid-task): it carries on in words, without replaying anything.
    const alone = scriptedResponder(request([summaryMessage]));
    expect(toolUses(alone)).toEqual([]);
    expect(textOf(alone)).toMatch(/after the compaction/);
  });
});

describe('the scripted model: background commands, wakeups, cron and agents', () => {
  const ask = (prompt: string, tools?: string[]) =>
    scriptedResponder({
      ...request([{ role: 'user', content: prompt }]),
      body: { messages: [{ role: 'user', content: prompt }], tools: tools?.map((name) => ({ name })) },
    });

  it('runs a command in the background, then reads its output with TaskOutput', () => {
    expect(toolUses(ask('run in background sleep 1; echo done'))).toMatchObject([
      { name: 'Bash', input: { command: 'sleep 1; echo done', run_in_background: true } },
    ]);
    const started = [
      { role: 'user', content: 'run in background sleep 1; echo done' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'sleep 1; echo done', run_in_background: true } }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'Command running in background with ID: bash_1a2b. Output is being written to: /tmp/x.out' },
        ],
      },
    ];
    expect(toolUses(scriptedResponder(request(started)))).toMatchObject([{ name: 'TaskOutput', input: { task_id: 'bash_1a2b', block: true } }]);
    const read = scriptedResponder(
      request([
        ...started,
        { role: 'assistant', content: [{ type: 'tool_use', id: 't2', name: 'TaskOutput', input: { task_id: 'bash_1a2b' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't2', content: 'status: completed\ndone' }] },
      ]),
    );
    expect(textOf(read)).toMatch(/Here is what came back:[\s\S]*done/);
  });

  it('answers a task notification with what it says', () => {
    const notification = [
      '<task-notification>',
      '<task-id>bash_1a2b</task-id>',
      '<status>completed</status>',
      '<summary>Background command "Run sleep 1; echo done" completed (exit code 0)</summary>',
      '<output-file>/tmp/x.out</output-file>',
      '<output-tail>',
      'done',
      '</output-tail>',
      '</task-notification>',
    ].join('\n');
    expect(toolUses(ask(notification))).toEqual([]);
    expect(textOf(ask(notification))).toBe('Background command "Run sleep 1; echo done" completed (exit code 0). It said:\ndone');
  });

  it('schedules a wakeup, a cron job, lists them, and starts a background agent', () => {
    expect(toolUses(ask('wakeup 90s read notes.txt'))).toMatchObject([
      { name: 'ScheduleWakeup', input: { delaySeconds: 90, prompt: 'read notes.txt', reason: 'read notes.txt' } },
    ]);
    expect(toolUses(ask('wakeup 2m run date'))).toMatchObject([{ name: 'ScheduleWakeup', input: { delaySeconds: 120, prompt: 'run date' } }]);
    expect(toolUses(ask('every 5m read notes.txt'))).toMatchObject([
      { name: 'CronCreate', input: { cron: '*/5 * * * *', prompt: 'read notes.txt', recurring: true } },
    ]);
    expect(toolUses(ask('every 1h run date'))).toMatchObject([{ name: 'CronCreate', input: { cron: '0 * * * *', prompt: 'run date' } }]);
    expect(toolUses(ask('crons'))).toMatchObject([{ name: 'CronList', input: {} }]);
    expect(toolUses(ask('agent in background read notes.txt'))).toMatchObject([
      { name: 'Agent', input: { prompt: 'read notes.txt', subagent_type: 'general-purpose', run_in_background: true } },
    ]);
    // Half a command is not a command: the help.
    expect(textOf(ask('every 5m'))).toBe(SCRIPTED_HELP);
    expect(textOf(ask('wakeup soon read notes.txt'))).toBe(SCRIPTED_HELP);
    // A tool the request does not offer (a subagent has no CronCreate) is said, not called.
    expect(toolUses(ask('every 5m read notes.txt', ['Read', 'Bash']))).toEqual([]);
    expect(textOf(ask('every 5m read notes.txt', ['Read', 'Bash']))).toMatch(/CronCreate is not among the tools/);
  });

  it('lists every prompt in its help', () => {
    for (const command of ['run in background', 'agent in background', 'wakeup <delay>', 'every <interval>', 'crons', 'agent <task>', 'slow <seconds>'])
      expect(SCRIPTED_HELP).toContain(command);
  });
});
