/**
 * Slash commands, transcript export and resume end to end (seed §2.10 processUserInput /
 * shouldQuery, §2.5), on the dev server with the strict scripted model server: local commands
 * answer without a model call, a custom command's expansion reaches the model, /clear and
 * /compact re-read the session context, /model switches the next request's model, an unknown
 * command is answered plainly, an ended conversation exports, and `start --resume` carries the
 * old transcript into the new conversation's first request. Every request the model server sees
 * must pass its validator (the harness fails the test otherwise).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../../common/messages';
import type { ResultMessage } from '../../common/result';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { cli, isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness, expectValidApiOrder, runToResult } from '../helpers/harness';

isolateEnvironment();
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const isCompactionRequest = (request: RecordedRequest) => JSON.stringify(request.body.messages).includes('write a detailed summary of the conversation');
/** Answers "Answer N" to the Nth ordinary request, a summary to compaction requests. */
function numberedAnswers() {
  let count = 0;
  return (request: RecordedRequest) => {
    if (isCompactionRequest(request)) return { content: [{ type: 'text' as const, text: '<summary>Earlier: the user asked two questions.</summary>' }] };
    return { content: [{ type: 'text' as const, text: `Answer ${++count}` }] };
  };
}

async function say(conversationId: string, prompt: string): Promise<ResultMessage> {
  const uuid = await harness!.api.send(conversationId, prompt);
  return harness!.api.waitForResult(conversationId, uuid);
}

const requestText = (request: RecordedRequest) => JSON.stringify(request.body.messages);

describe('local slash commands', () => {
  it('/help, /cost, /status and /model answer without a model call, in the feed, the transcript and the CLI', async () => {
    harness = await createHarness({ respond: numberedAnswers() });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await mkdir(path.join(harness.workspace, '.claude', 'commands'), { recursive: true });
    await writeFile(
      path.join(harness.workspace, '.claude', 'commands', 'review.md'),
      '---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $ARGUMENTS',
    );
    await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'Hello');
    expect(harness.model.requests).toHaveLength(1);

    const help = await say(conversationId, '/help');
    expect(help).toMatchObject({ subtype: 'success', is_error: false, num_turns: 0, total_cost_usd: 0 });
    expect(help.result).toContain('/compact [instructions]');
    expect(help.result).toContain('/review <file> — Review a file (project)');
    expect((await say(conversationId, '/cost')).result).toMatch(/Total cost: +\$0\.\d{4}\nQueries: +1/);
    const status = await say(conversationId, '/status');
    expect(status.result).toContain(`Conversation:  ${conversationId}`);
    expect(status.result).toContain('Model:         claude-sonnet-4-6');
    expect((await say(conversationId, '/model')).result).toContain('Model: claude-sonnet-4-6');
    const badModel = await say(conversationId, '/model gpt-5');
    expect(badModel).toMatchObject({ is_error: true, result: expect.stringContaining('"gpt-5" is not a model the API serves') });

    // The CLI prints a local command's output (send --follow; ask, one-shot).
    const followed = await cli('send', '--follow', conversationId, '/cost');
    expect(followed.code).toBe(0);
    expect(followed.out).toContain('> /cost');
    expect(followed.out).toMatch(/Total cost: +\$/);
    const asked = await cli('ask', '--cwd', harness.workspace, '/help');
    expect(asked).toMatchObject({ code: 0, out: expect.stringContaining('/clear — Clear the conversation history') });

    // None of it reached the model.
    expect(harness.model.requests).toHaveLength(1);
    const history = (await harness.api.transcript(conversationId)) as TranscriptMessage[];
    const records = history.filter((message) => message.type === 'user' && message.command?.kind === 'local');
    expect(records.map((message) => (message.type === 'user' ? message.command!.name : ''))).toEqual(['help', 'cost', 'status', 'model', 'model', 'cost']);
    const { events } = await harness.api.events(conversationId);
    expect(JSON.stringify(events)).toContain('<local-command-stdout>Total cost:');

    // The conversation goes on; the records never reach the model.
    expect((await say(conversationId, 'And now?')).result).toBe('Answer 2');
    expect(requestText(harness.model.requests[1])).not.toContain('local-command');
    expect(harness.model.requests[1].body.messages).toHaveLength(3);
  });

  it('an unknown command is answered with the list, nothing is lost, and a path is still a prompt', async () => {
    harness = await createHarness({ respond: numberedAnswers() });
    await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'Hello');
    const unknown = await say(conversationId, '/deploy to production');
    expect(unknown).toMatchObject({ is_error: true, num_turns: 0 });
    expect(unknown.result).toContain(
      'Unknown command: /deploy. Nothing was sent to the model. Available commands: /help, /clear, /compact, /rewind, /cost, /status, /model',
    );
    expect(harness.model.requests).toHaveLength(1);
    const transcript = await harness.api.transcript(conversationId);
    expect(JSON.stringify(transcript)).toContain('<command-name>/deploy</command-name>\\n<command-args>to production</command-args>');

    expect((await say(conversationId, '/usr/bin/env is missing, why?')).result).toBe('Answer 2');
    expect(requestText(harness.model.requests[1])).toContain('/usr/bin/env is missing, why?');
    expect(requestText(harness.model.requests[1])).not.toContain('deploy');
  });
});

describe('custom commands (.claude/commands)', () => {
  it('expand $ARGUMENTS into the prompt the model sees, on the model the command names', async () => {
    harness = await createHarness({ respond: numberedAnswers() });
    const commands = path.join(harness.workspace, '.claude', 'commands');
    await mkdir(path.join(commands, 'frontend'), { recursive: true });
    await writeFile(path.join(commands, 'review.md'), '---\ndescription: Review a file\nmodel: claude-haiku-4-5\n---\nReview $ARGUMENTS with care; $1 first.');
    await writeFile(path.join(commands, 'frontend', 'test.md'), 'Run the frontend tests.');
    await harness.startWorker();
    const { conversationId, result } = await runToResult(harness, '/review src/a.ts src/b.ts');
    expect(result.result).toBe('Answer 1');
    const [first] = harness.model.requests;
    expect(first.body.model).toBe('claude-haiku-4-5');
    const lastUser = JSON.stringify(first.body.messages.at(-1));
    expect(lastUser).toContain('Review src/a.ts src/b.ts with care; src/a.ts first.');
    expect(lastUser).not.toContain('/review');

    await say(conversationId, '/frontend:test only the login page');
    const second = harness.model.requests[1];
    expect(second.body.model).toBe('claude-sonnet-4-6'); // the command's model held for its own query only
    expect(JSON.stringify(second.body.messages.at(-1))).toContain('Run the frontend tests.\\n\\nARGUMENTS: only the login page');
    const { events } = await harness.api.events(conversationId);
    expect(events.filter((event) => event.message.type === 'user_input').map((event) => (event.message as { prompt: string }).prompt)).toEqual([
      '/review src/a.ts src/b.ts',
      '/frontend:test only the login page',
    ]);
    for (const request of harness.model.requests) expectValidApiOrder(request);
  });
});

describe('/clear, /compact and /model', () => {
  it('/clear empties the conversation: the next request has only the new prompt and the re-read CLAUDE.md', async () => {
    harness = await createHarness({ respond: numberedAnswers() });
    await writeFile(path.join(harness.workspace, 'CLAUDE.md'), 'Rule one.');
    await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'First question');
    expect(requestText(harness.model.requests[0])).toContain('Rule one.');
    await writeFile(path.join(harness.workspace, 'CLAUDE.md'), 'Rule two.');

    const cleared = await say(conversationId, '/clear');
    expect(cleared.result).toContain('Conversation cleared (2 messages removed)');
    expect(harness.model.requests).toHaveLength(1);
    expect(await harness.api.transcript(conversationId)).toHaveLength(1); // the /clear record

    expect((await say(conversationId, 'Second question')).result).toBe('Answer 2');
    const after = harness.model.requests[1];
    expect(after.body.messages).toHaveLength(1);
    const text = requestText(after);
    expect(text).toContain('Second question');
    expect(text).toContain('Rule two.');
    expect(text).not.toContain('First question');
    expect(text).not.toContain('Rule one.');
    expect(text).not.toContain('Answer 1');
  });

  it('/compact [instructions] compacts with the instructions, then the session context is read again', async () => {
    harness = await createHarness({ respond: numberedAnswers() });
    await writeFile(path.join(harness.workspace, 'CLAUDE.md'), 'Old rule.');
    await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'First question');
    await say(conversationId, 'Second question');
    await writeFile(path.join(harness.workspace, 'CLAUDE.md'), 'New rule.');

    const compacted = await say(conversationId, '/compact keep the numbers');
    expect(compacted).toMatchObject({ is_error: false, result: expect.stringMatching(/^Compacted: \d+ → \d+ tokens \(\d+ messages summarized\)\.$/) });
    const compaction = harness.model.requests[2];
    expect(isCompactionRequest(compaction)).toBe(true);
    expect(requestText(compaction)).toContain('keep the numbers');

    await say(conversationId, 'Third question');
    const next = harness.model.requests[3];
    const text = requestText(next);
    expect(text).toContain('Earlier: the user asked two questions.');
    expect(text).toContain('Third question');
    expect(text).toContain('New rule.');
    expect(text).not.toContain('Old rule.');
    expect(text).not.toContain('local-command');
    expect((await harness.api.status(conversationId)).context.compactions).toBe(1);
  });

  it('/model switches the model of the next requests', async () => {
    harness = await createHarness({ respond: numberedAnswers() });
    await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'On sonnet');
    const switched = await say(conversationId, '/model claude-opus-4-8');
    expect(switched.result).toBe('Model set to claude-opus-4-8 for the next queries.');
    await say(conversationId, 'On opus');
    expect(harness.model.requests.map((request) => request.body.model)).toEqual(['claude-sonnet-4-6', 'claude-opus-4-8']);
    expect(await harness.api.status(conversationId)).toMatchObject({ model: 'claude-opus-4-8', currentModel: 'claude-opus-4-8' });
  });
});

describe('across continue-as-new', () => {
  it('/model and /clear hold in the next run, and a running conversation can be resumed', async () => {
    harness = await createHarness({ respond: numberedAnswers() });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();
    // Continue as new after every input.
    const { conversationId } = await runToResult(harness, 'Before', { continueAsNewAfterEvents: 1 });
    await say(conversationId, '/model sonnet');
    await say(conversationId, '/clear');
    await say(conversationId, 'After');
    const status = await harness.api.status(conversationId);
    expect(status.continuedAsNewCount).toBeGreaterThanOrEqual(3);
    expect(status.model).toBe('claude-sonnet-5');
    const after = harness.model.requests[1];
    expect(after.body.model).toBe('claude-sonnet-5');
    expect(after.body.messages).toHaveLength(1);
    expect(requestText(after)).not.toContain('Before');
    // Those runs are one conversation: one row in `list` once visibility lists them all (issue 32, item 3).
    const runs = async () => {
      let continued = 0;
      for await (const run of harness!.client.workflow.list({ query: `WorkflowId = '${conversationId}'` }))
        if (run.status.name === 'CONTINUED_AS_NEW') continued++;
      return continued;
    };
    await expect.poll(runs).toBeGreaterThanOrEqual(3);
    const listed = JSON.parse((await cli('list', '--json')).out) as Array<{ id: string }>;
    expect(listed.filter((row) => row.id === conversationId)).toHaveLength(1);

    // Still running: --resume reads it as it is now.
    const resumed = await cli('start', '--resume', conversationId, '--cwd', harness.workspace, '--follow', 'Go on');
    expect(resumed.code).toBe(0);
    const first = harness.model.requests[2];
    expect(first.body.model).toBe('claude-opus-4-8'); // the new conversation's own model (the CLI's default)
    expect(first.body.messages.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(requestText(first)).toContain('After');
    expect(requestText(first)).toContain('Go on');
    expect(requestText(first)).not.toContain('Before');
  });
});

describe('prompt layers from the CLI (seed §2.5)', () => {
  it('--system-prompt replaces the default prompt and --append-system-prompt is added to it', async () => {
    harness = await createHarness({ respond: numberedAnswers() });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await writeFile(path.join(harness.workspace, 'CLAUDE.md'), 'Workspace rule.');
    await harness.startWorker();
    const custom = await cli(
      'ask',
      '--cwd',
      harness.workspace,
      '--system-prompt',
      'You are a terse pirate.',
      '--append-system-prompt',
      'Answer in French.',
      'Hi',
    );
    expect(custom).toMatchObject({ code: 0, out: 'Answer 1\n' });
    const appended = await cli('ask', '--cwd', harness.workspace, '--append-system-prompt', 'Answer in French.', 'Hi');
    expect(appended.code).toBe(0);
    const [first, second] = harness.model.requests;
    const systemTexts = (request: RecordedRequest) => (request.body.system as Array<{ text: string }>).map((block) => block.text);
    expect(systemTexts(first)).toEqual(['You are a terse pirate.', 'Answer in French.']);
    expect(systemTexts(second)[0]).toContain('You are durable-agent');
    expect(systemTexts(second).at(-1)).toBe('Answer in French.');
    // CLAUDE.md stays in the user context either way, labelled as Claude Code labels it.
    for (const request of [first, second])
      expect(requestText(request)).toContain('CLAUDE.md (project instructions, checked into the codebase):\\n\\nWorkspace rule.');
  });
});

describe('transcript export and resume', () => {
  it('exports an ended conversation as text and JSON lines, and says so when no worker can answer', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } }] },
        { content: [{ type: 'text', text: 'The notes say alpha.' }] },
      ],
    });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'alpha\n');
    const worker = await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'What do the notes say?', { oneShot: true });
    await harness.api.summary(conversationId); // ended

    const text = await cli('transcript', conversationId);
    expect(text.code).toBe(0);
    expect(text.out).toContain('> What do the notes say?');
    expect(text.out).toContain('● Read(notes.txt)');
    expect(text.out).toContain('  ⎿ ');
    expect(text.out).toContain('The notes say alpha.');

    const jsonl = await cli('transcript', '--jsonl', conversationId);
    expect(jsonl.code).toBe(0);
    const messages = jsonl.out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as TranscriptMessage);
    expect(messages.map((message) => message.type)).toEqual(['user', 'assistant', 'user', 'assistant']);

    await harness.stopWorker(worker);
    const noWorker = await cli('transcript', conversationId);
    expect(noWorker.code).toBe(1);
    expect(noWorker.err).toContain(`Conversation "${conversationId}" has ended (completed), but no worker answered for its task queue`);
    expect((await cli('transcript', 'no-such-conversation')).err).toContain('No conversation with id "no-such-conversation"');
  });

  it('start --resume begins a new conversation whose first request holds the old transcript and the new prompt', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } }] },
        { content: [{ type: 'text', text: 'The notes say alpha.' }] },
        { content: [{ type: 'text', text: 'You asked about the notes.' }] },
      ],
    });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'alpha\n');
    await harness.startWorker();
    const old = await runToResult(harness, 'What do the notes say?');
    await say(old.conversationId, '/cost'); // a local record travels along, and stays out of requests
    await harness.api.end(old.conversationId);
    await harness.api.summary(old.conversationId);

    const started = await cli('start', '--resume', old.conversationId, '--cwd', harness.workspace, '--follow', 'What did I ask before?');
    expect(started.code).toBe(0);
    const newId = started.out.split('\n')[0];
    expect(newId).not.toBe(old.conversationId);
    expect(started.out).toContain('You asked about the notes.');

    const first = harness.model.requests[2];
    const messages = first.body.messages as Array<{ role: string; content: unknown }>;
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    const text = requestText(first);
    expect(text).toContain('What do the notes say?');
    expect(text).toContain('alpha');
    expect(text).toContain('The notes say alpha.');
    expect(JSON.stringify(messages.at(-1))).toContain('What did I ask before?');
    expect(text).not.toContain('local-command');
    expectValidApiOrder(first);
    // The old transcript was loaded once, by the start input; model calls stay by reference.
    expect(await harness.api.transcript(newId)).toHaveLength(7);
    expect((await harness.api.status(old.conversationId).catch(() => undefined))?.ended ?? true).toBe(true);
  });
});
