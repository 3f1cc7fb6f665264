/**
 * The `durable-agent` CLI as a person uses it: clear errors for bad input, a dead server and
 * unknown conversations; `ask`, `start`, `send`, `status` against a real server and worker.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { cli, isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness } from '../helpers/harness';
import { FIRST_PROMPT_SEARCH_ATTRIBUTE } from '../../common/search-attributes';

/** The text of a request's last user message. */
function lastUserText(request: RecordedRequest): string {
  const last = [...(request.body.messages as Array<{ role: string; content: unknown }>)].reverse().find((message) => message.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return (last.content as Array<{ type: string; text?: string }>).map((block) => block.text ?? '').join('\n');
}

/** A compaction request: its last user turn asks for the summary in <summary> tags (activities/compact-conversation.ts `compactInstruction`). */
function isCompactionRequest(request: RecordedRequest): boolean {
  return lastUserText(request).includes('<summary>');
}

isolateEnvironment();
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('CLI input errors', () => {
  it('explains usage mistakes with exit code 2', async () => {
    expect(await cli('frobnicate')).toMatchObject({ code: 2, err: expect.stringContaining("Unknown command 'frobnicate'") });
    expect(await cli('ask')).toMatchObject({
      code: 2,
      err: expect.stringContaining('ask: the prompt is empty (give it as an argument, as @file, or on stdin)'),
    });
    expect(await cli('ask', '--max-turns', 'many', 'hi')).toMatchObject({
      code: 2,
      err: expect.stringContaining('--max-turns must be a positive whole number'),
    });
    expect(await cli('ask', '--output-format', 'yaml', 'hi')).toMatchObject({
      code: 2,
      err: expect.stringContaining('--output-format must be "text", "json" or "stream-json"'),
    });
    expect(await cli('status', '--colour', 'x')).toMatchObject({ code: 2, err: expect.stringContaining("Unknown option '--colour'") });
    expect(await cli('send', 'only-an-id')).toMatchObject({ code: 2, err: expect.stringContaining("send: missing required argument 'prompt'") });
    expect(await cli('compact')).toMatchObject({ code: 2, err: expect.stringContaining("compact: missing required argument 'id'") });
  });

  it('says when no Temporal server answers, and how to start one', async () => {
    process.env.TEMPORAL_ADDRESS = '127.0.0.1:1';
    const { code, err } = await cli('status', 'some-conversation');
    expect(code).toBe(1);
    expect(err).toContain('Cannot reach the Temporal server at 127.0.0.1:1');
    expect(err).toContain('npm run server');
  });
});

describe('CLI against a server', () => {
  it('checks --model against the Models API before anything starts; aliases resolve, --effort and --thinking reach the request', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'Hi.' }] }] });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    process.env.ANTHROPIC_BASE_URL = harness.model.url;
    const unknown = await cli('ask', '--cwd', harness.workspace, '--model', 'claude-opus-9', 'hi');
    expect(unknown).toMatchObject({ code: 2, err: expect.stringContaining('"claude-opus-9" is not a model the API serves') });
    expect(await cli('ask', '--cwd', harness.workspace, '--effort', 'extreme', 'hi')).toMatchObject({
      code: 2,
      err: expect.stringContaining('--effort must be one of low, medium, high, max'),
    });
    expect(harness.model.requests).toHaveLength(0);
    await harness.startWorker();
    expect(await cli('ask', '--cwd', harness.workspace, '--model', 'sonnet', '--effort', 'low', '--thinking', 'off', 'hi')).toMatchObject({
      code: 0,
      out: 'Hi.\n',
    });
    expect(harness.model.requests[0].body).toMatchObject({ model: 'claude-sonnet-5', output_config: { effort: 'low' }, thinking: { type: 'disabled' } });
  });

  it('reports an unknown conversation id clearly', async () => {
    harness = await createHarness();
    process.env.TEMPORAL_ADDRESS = harness.address;
    for (const command of ['status', 'abort', 'end', 'compact']) {
      const { code, err } = await cli(command, 'no-such-conversation');
      expect(code).toBe(1);
      expect(err).toContain('No conversation with id "no-such-conversation"');
    }
    const sent = await cli('send', 'no-such-conversation', 'hello');
    expect(sent.err).toContain('No conversation with id "no-such-conversation"');
  });

  it('ask prints the answer, or the JSON result, and exits non-zero on an error result', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'text', text: 'Forty-two.' }] },
        { content: [{ type: 'text', text: 'Again forty-two.' }] },
        { error: { status: 400, message: 'max_tokens: 999999 > 64000, which is the maximum' } },
      ],
    });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();

    const text = await cli('ask', '--cwd', harness.workspace, 'What is the answer?');
    expect(text).toMatchObject({ code: 0, out: 'Forty-two.\n' });

    const json = await cli('ask', '--cwd', harness.workspace, '--output-format', 'json', 'And again?');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toMatchObject({ type: 'result', subtype: 'success', result: 'Again forty-two.', num_turns: 1 });

    const failed = await cli('ask', '--cwd', harness.workspace, 'Break');
    expect(failed.code).toBe(1);
    expect(failed.out).toContain('max_tokens: 999999 > 64000');
  });

  it('a conversation started without a prompt (chat) is named by its first one, in list as in the UI', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'Hello.' }] }, { content: [{ type: 'text', text: 'Again.' }] }] });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();
    // As chat starts one: no prompt, then the first prompt as an input.
    const { conversationId } = await harness.api.start({ config: harness.config(), taskQueue: harness.taskQueue });
    const firstPrompt = async () =>
      (JSON.parse((await cli('list', '--json', '--workspace', harness!.workspace)).out) as Array<{ id: string; firstPrompt?: string }>).find(
        (row) => row.id === conversationId,
      );
    await expect.poll(firstPrompt).toMatchObject({ id: conversationId });
    expect((await firstPrompt())!.firstPrompt).toBeUndefined();
    expect((await cli('list', '--workspace', harness.workspace)).out).toMatch(new RegExp(`^${conversationId} .* -\n`, 'm'));
    await harness.api.waitForResult(conversationId, await harness.api.send(conversationId, 'Say hello'));
    await harness.api.waitForResult(conversationId, await harness.api.send(conversationId, 'Once more'));
    await expect.poll(async () => (await firstPrompt())?.firstPrompt).toBe('Say hello');
    const described = await harness.client.workflow.getHandle(conversationId).describe();
    expect(described.typedSearchAttributes.get(FIRST_PROMPT_SEARCH_ATTRIBUTE)).toBe('Say hello'); // the UI's column too
  });

  it('start, send --follow and status drive one conversation', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo hi' } }] },
        { content: [{ type: 'text', text: 'Said hi.' }] },
        { content: [{ type: 'text', text: 'Still here.' }] },
      ],
    });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();

    const started = await cli('start', '--cwd', harness.workspace, '--id', 'cli-conversation', '--follow', 'say', 'hi');
    expect(started.code).toBe(0);
    expect(started.out.split('\n')[0]).toBe('cli-conversation');
    expect(started.out).toContain('● Bash(echo hi)');
    expect(started.out).toContain('Said hi.');
    expect(started.out).toContain('✓ done · 2 turns');

    const sent = await cli('send', '--follow', 'cli-conversation', 'still', 'there?');
    expect(sent.code).toBe(0);
    expect(sent.out).toContain('Still here.');

    const status = await cli('status', 'cli-conversation');
    expect(status.out).toMatch(/phase\s+awaiting_input/);
    expect(status.out).toMatch(/queries\s+2/);
    const json = JSON.parse((await cli('status', '--json', 'cli-conversation')).out);
    expect(json).toMatchObject({ conversationId: 'cli-conversation', queryCount: 2, lastResult: { result: 'Still here.' } });
  });

  it('follow warns when the context runs low; compact summarizes, and the next request carries the summary instead of the old messages', async () => {
    harness = await createHarness({
      respond: (request) =>
        isCompactionRequest(request)
          ? { content: [{ type: 'text', text: '<analysis>Short chat.</analysis>\n<summary>Earlier: the user asked about the weather.</summary>' }] }
          : undefined,
      script: [
        // Past the error threshold (160k of claude-sonnet-4-6's 200k window), short of autocompact (167k).
        { content: [{ type: 'text', text: 'It is sunny in Lisbon.' }], usage: { input_tokens: 163_000 } },
        { content: [{ type: 'text', text: 'Rain tomorrow.' }] },
      ],
    });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();

    const started = await cli('start', '--cwd', harness.workspace, '--model', 'claude-sonnet-4-6', '--id', 'cli-compact', '--follow', 'How is the weather?');
    expect(started.out).toContain('It is sunny in Lisbon.');
    expect(started.out.trimEnd().split('\n').at(-1)).toMatch(/^Context low \(\d+% remaining\) · Run durable-agent compact cli-compact to compact & continue$/);

    const compacted = await cli('compact', 'cli-compact', 'focus', 'on', 'the', 'weather');
    expect(compacted.err).toBe('');
    expect(compacted.code).toBe(0);
    expect(compacted.out).toMatch(/^Compacted: 163k → \d+ tokens \(2 messages summarized\)\n$/);
    const compactionRequests = harness.model.requests.filter(isCompactionRequest);
    expect(compactionRequests).toHaveLength(1);
    expect(lastUserText(compactionRequests[0])).toContain('focus on the weather');

    const status = await cli('status', 'cli-compact');
    expect(status.out).toMatch(/context\s+[\d,]+ \/ 180,000 tokens \(0%\) · autocompact at 167,000 · 1 compaction\n/);
    expect(status.out).not.toContain('Context low');

    const sent = await cli('send', '--follow', 'cli-compact', 'And tomorrow?');
    expect(sent.out).toContain('Rain tomorrow.');
    const next = harness.model.requests.at(-1)!;
    expect(isCompactionRequest(next)).toBe(false);
    const sentMessages = JSON.stringify(next.body.messages);
    expect(sentMessages).toContain('Earlier: the user asked about the weather.');
    expect(sentMessages).not.toContain('It is sunny in Lisbon.');
    expect(lastUserText(next)).toContain('And tomorrow?');

    const json = await cli('compact', '--json', 'cli-compact');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toMatchObject({ trigger: 'manual', compacted: true, preTokens: expect.any(Number), messagesSummarized: 3 });
    // Right after a compaction there is nothing left to summarize: an answer, exit code 1.
    expect(await cli('compact', 'cli-compact')).toMatchObject({ code: 1, out: expect.stringMatching(/^Not compacted: .+\n$/) });
  });

  it('explains that an ended conversation takes no more input, and never waits forever for one', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'One and done.' }] }] });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();
    const { api } = harness;
    const { conversationId } = await api.start({ prompt: 'once', config: harness.config({ oneShot: true }), taskQueue: harness.taskQueue });
    await api.summary(conversationId);

    const sent = await cli('send', conversationId, 'and again?');
    expect(sent.code).toBe(1);
    expect(sent.err).toContain(`Conversation "${conversationId}" has ended (completed)`);
    const compacted = await cli('compact', conversationId);
    expect(compacted.code).toBe(1);
    expect(compacted.err).toContain(`Conversation "${conversationId}" has ended (completed)`);

    // A conversation terminated while a client waits: the wait ends with a clear error.
    const waiting = await api.start({ prompt: 'hang', config: harness.config(), taskQueue: 'no-worker-polls-this-queue' });
    const waitForIt = api.waitForResult(waiting.conversationId, waiting.inputUuid!, { pollMs: 20 });
    await harness.client.workflow.getHandle(waiting.conversationId).terminate('test');
    await expect(waitForIt).rejects.toThrow(`Conversation "${waiting.conversationId}" is terminated`);
  });
});
