/**
 * Results as the Agent SDK and `claude -p` give them, through the CLI against a real dev server
 * and worker and the strict scripted model server: `--max-budget-usd`, `--json-schema`
 * (structured output, retries exhausted, a malformed schema), `--output-format json` (one line,
 * every field) and `stream-json` (one message per line, in order), the prompt from stdin and from
 * a file, and an oversized prompt refused with its size and the limit.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Client } from '@temporalio/client';
import { afterEach, describe, expect, it } from 'vitest';
import { ConversationClient } from '../../client/api';
import { main } from '../../client/cli';
import { MAX_PROMPT_BYTES } from '../../client/prompt-limits';
import { STRUCTURED_OUTPUT_REQUIRED_MESSAGE } from '../../common/structured-output';
import type { RecordedRequest, ScriptedModelServerOptions } from '../../testing/scripted-model-server';
import { cli, isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness, eventually } from '../helpers/harness';

isolateEnvironment();
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function setUp(options: ScriptedModelServerOptions): Promise<Harness> {
  harness = await createHarness(options);
  process.env.TEMPORAL_ADDRESS = harness.address;
  process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
  await harness.startWorker();
  return harness;
}

/** The text of every block of a request's last user message. */
function lastUserContent(request: RecordedRequest): string {
  const last = [...(request.body.messages as Array<{ role: string; content: unknown }>)].reverse().find((message) => message.role === 'user')!;
  return typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
}

/** Exactly one line on stdout, parsed. */
function oneJsonLine(out: string): any {
  const lines = out.split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]);
}

// 1000 input + 100 output tokens on a Sonnet model: $0.0045 per call.
const USAGE = { input_tokens: 1000, output_tokens: 100 };
const SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, population: { type: 'integer', minimum: 0 } },
  required: ['city', 'population'],
  additionalProperties: false,
};

describe('--max-budget-usd', () => {
  it('stops the query once the cost reaches the budget: error_max_budget_usd, and the reply’s tool calls do not run', async () => {
    const { workspace, model } = await setUp({
      script: [
        { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo one' } }], usage: USAGE },
        { content: [{ type: 'tool_use', name: 'Write', input: { file_path: 'never.txt', content: 'x' } }], usage: USAGE },
      ],
    });
    const { code, out } = await cli(
      'ask',
      '--cwd',
      workspace,
      '--model',
      'claude-sonnet-4-6',
      '--max-budget-usd',
      '0.005',
      '--output-format',
      'json',
      'Write a file',
    );
    expect(code).toBe(1);
    const result = oneJsonLine(out);
    expect(result).toMatchObject({
      type: 'result',
      subtype: 'error_max_budget_usd',
      is_error: true,
      terminal_reason: 'budget_exhausted',
      num_turns: 2,
      errors: [expect.stringContaining('Reached the maximum budget of $0.005')],
    });
    expect(result.total_cost_usd).toBeCloseTo(0.009, 10);
    expect(model.requests).toHaveLength(2);
    expect(existsSync(path.join(workspace, 'never.txt'))).toBe(false);
  });

  it('rejects a budget that is not a positive amount before anything starts', async () => {
    for (const bad of ['0', '-1', 'ten', '1e3']) {
      const { code, err } = await cli('ask', `--max-budget-usd=${bad}`, 'hi');
      expect(code).toBe(2);
      expect(err).toContain('--max-budget-usd must be a positive amount in dollars');
    }
  });
});

describe('--json-schema', () => {
  it('asks for the StructuredOutput tool until a valid call, tells the model what is wrong, and fills structured_output', async () => {
    const { workspace, model } = await setUp({
      script: [
        { content: [{ type: 'text', text: 'Lisbon has about 545,000 people.' }] },
        { content: [{ type: 'tool_use', name: 'StructuredOutput', input: { city: 'Lisbon', population: '545k' } }] },
        { content: [{ type: 'tool_use', name: 'StructuredOutput', input: { city: 'Lisbon', population: 545_000 } }] },
        { content: [{ type: 'text', text: 'Done.' }] },
      ],
    });
    const schemaFile = path.join(workspace, 'schema.json');
    await writeFile(schemaFile, JSON.stringify(SCHEMA));
    const { code, out } = await cli('ask', '--cwd', workspace, '--json-schema', `@${schemaFile}`, '--output-format', 'json', 'How many people live in Lisbon?');
    expect(code).toBe(0);
    const result = oneJsonLine(out);
    expect(result).toMatchObject({ subtype: 'success', structured_output: { city: 'Lisbon', population: 545_000 }, result: 'Done.', errors: [] });

    // The tool is offered with the user's schema as its input schema.
    const tool = model.requests[0].body.tools.find((candidate: { name: string }) => candidate.name === 'StructuredOutput');
    expect(tool.input_schema).toEqual(SCHEMA);
    // Ending the turn without it sends the model back; an invalid call gets an error result naming the problem.
    expect(lastUserContent(model.requests[1])).toContain(STRUCTURED_OUTPUT_REQUIRED_MESSAGE);
    expect(lastUserContent(model.requests[2])).toMatch(/does not match the required schema: population: .*"is_error":true/);
    expect(model.requests).toHaveLength(4);
  });

  it('is an error a script can tell when the model never calls the tool (issue 19, item 12)', async () => {
    const prose = { content: [{ type: 'text' as const, text: 'Lisbon, about half a million.' }] };
    const { workspace } = await setUp({ script: Array.from({ length: 12 }, () => prose) });
    const { code, out } = await cli('ask', '--cwd', workspace, '--json-schema', JSON.stringify(SCHEMA), '--output-format', 'json', 'Lisbon?');
    expect(code).toBe(1);
    const result = oneJsonLine(out);
    expect(result).toMatchObject({ subtype: 'error_max_structured_output_retries', is_error: true, errors: [expect.stringContaining('structured output')] });
    expect(result.structured_output).toBeUndefined();
  });

  it('ends error_max_structured_output_retries after 5 invalid calls', async () => {
    const invalid = { content: [{ type: 'tool_use' as const, name: 'StructuredOutput', input: { city: 42 } }] };
    const { workspace, model } = await setUp({ script: [invalid, invalid, invalid, invalid, invalid, invalid] });
    const { code, out } = await cli('ask', '--cwd', workspace, '--json-schema', JSON.stringify(SCHEMA), '--output-format', 'json', 'Lisbon?');
    expect(code).toBe(1);
    const result = oneJsonLine(out);
    expect(result).toMatchObject({
      subtype: 'error_max_structured_output_retries',
      is_error: true,
      terminal_reason: 'structured_output_retry_exhausted',
      errors: [expect.stringContaining('5 attempts')],
    });
    expect(result.structured_output).toBeUndefined();
    expect(model.requests).toHaveLength(5);
  });

  it('refuses a malformed schema with a clear message before anything starts', async () => {
    const { workspace, model } = await setUp({ script: [] });
    const cases: Array<[string, RegExp]> = [
      ['{"type": "object", ', /--json-schema: the schema is not valid JSON/],
      ['{"type": "array", "items": {"type": "string"}}', /--json-schema: the schema's top level must have "type": "object"/],
      [
        '{"type": "object", "properties": {"a": {"type": "strin"}}}',
        /--json-schema: the schema is not valid JSON Schema \(draft 2020-12\): properties\.a\.type: .*"strin"/,
      ],
      ['@does-not-exist.json', /--json-schema: cannot read .*does-not-exist\.json: no such file/],
    ];
    for (const [schema, message] of cases) {
      const { code, err, out } = await cli('ask', '--cwd', workspace, '--json-schema', schema, 'hi');
      expect(code).toBe(2);
      expect(err).toMatch(message);
      expect(out).toBe('');
    }
    expect(model.requests).toHaveLength(0);
    const started = [];
    for await (const workflow of harness!.client.workflow.list({ query: `TaskQueue = '${harness!.taskQueue}'` })) started.push(workflow);
    expect(started).toHaveLength(0);
  });
});

describe('--output-format', () => {
  it('json prints the whole result message on exactly one line', async () => {
    const { workspace } = await setUp({ script: [{ content: [{ type: 'text', text: 'Forty-two.' }], usage: USAGE }] });
    const { code, out } = await cli('ask', '--cwd', workspace, '--model', 'claude-sonnet-4-6', '--output-format', 'json', 'The answer?');
    expect(code).toBe(0);
    expect(out.endsWith('\n')).toBe(true);
    const result = oneJsonLine(out);
    for (const field of [
      'type',
      'subtype',
      'is_error',
      'result',
      'stop_reason',
      'terminal_reason',
      'num_turns',
      'duration_ms',
      'duration_api_ms',
      'total_cost_usd',
      'usage',
      'modelUsage',
      'permission_denials',
      'errors',
      'session_id',
      'uuid',
    ]) {
      expect(result, field).toHaveProperty(field);
    }
    expect(result).toMatchObject({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'Forty-two.',
      stop_reason: 'end_turn',
      terminal_reason: 'completed',
      num_turns: 1,
      permission_denials: [],
      errors: [],
      usage: { input_tokens: 1000, output_tokens: 100 },
      modelUsage: {
        'claude-sonnet-4-6': {
          inputTokens: 1000,
          outputTokens: 100,
          cacheReadInputTokens: 0,
          cacheCreationInputTokens: 0,
          webSearchRequests: 0,
          costUSD: 0.0045,
          contextWindow: 200_000,
          maxOutputTokens: 64_000,
        },
      },
    });
    expect(result.total_cost_usd).toBeCloseTo(0.0045, 10);
    expect(result.duration_ms).toBeGreaterThanOrEqual(0);
    expect(result.duration_api_ms).toBeGreaterThanOrEqual(0);
    expect(result.session_id).toMatch(/^conversation-the-answer-/);
  });

  it('json: a one-shot conversation terminated before it answers is an error that says so, not a wait', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const { workspace } = await setUp({ script: [{ content: [{ type: 'text', text: 'never seen' }], hold: { afterBlocks: 0, until: held } }] });
    const asked = cli('ask', '--cwd', workspace, '--output-format', 'json', 'Wait for me');
    const h = harness!;
    const conversationId = await eventually(
      async () => {
        for await (const execution of h.client.workflow.list({ query: `TaskQueue = '${h.taskQueue}'` })) return execution.workflowId;
        return undefined;
      },
      Boolean,
      60_000,
    );
    await eventually(
      async () => (await h.api.status(conversationId!)).phase,
      (phase) => phase === 'calling_model',
      60_000,
    );
    await h.client.workflow.getHandle(conversationId!).terminate('test: gone before the answer');
    const { code, out, err } = await asked;
    release();
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toContain(`Conversation "${conversationId}" is terminated and will not answer input`);
  });

  it('stream-json prints init, each message as it happens, then the result — one JSON per line; it requires --verbose', async () => {
    const { workspace } = await setUp({
      script: [
        {
          content: [
            { type: 'text', text: 'Looking.' },
            { type: 'tool_use', name: 'Bash', input: { command: 'echo hello' } },
          ],
        },
        { content: [{ type: 'text', text: 'It said hello.' }] },
      ],
    });
    const refused = await cli('ask', '--cwd', workspace, '--output-format', 'stream-json', 'hi');
    expect(refused).toMatchObject({ code: 2, err: expect.stringContaining('--output-format stream-json requires --verbose') });

    const { code, out } = await cli('ask', '--cwd', workspace, '--model', 'claude-sonnet-4-6', '--output-format', 'stream-json', '--verbose', 'Run echo');
    expect(code).toBe(0);
    const messages = out
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(messages.map((message) => (message.subtype && message.type === 'system' ? `system/${message.subtype}` : message.type))).toEqual([
      'system/init',
      'assistant',
      'user',
      'assistant',
      'result',
    ]);
    const [init, toolCall, toolResult, answer, result] = messages;
    const sessionId = result.session_id;
    expect(init).toMatchObject({
      session_id: sessionId,
      cwd: workspace,
      model: 'claude-sonnet-4-6',
      permissionMode: 'default',
      tools: expect.arrayContaining(['Bash', 'Read']),
    });
    expect(toolCall).toMatchObject({
      session_id: sessionId,
      parent_tool_use_id: null,
      message: { role: 'assistant', content: [{ type: 'text' }, { type: 'tool_use', name: 'Bash' }] },
    });
    const toolUseId = toolCall.message.content[1].id;
    expect(toolResult).toMatchObject({ session_id: sessionId, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId }] } });
    expect(JSON.stringify(toolResult.message.content)).toContain('hello');
    expect(answer.message.content).toEqual([{ type: 'text', text: 'It said hello.' }]);
    expect(result).toMatchObject({ type: 'result', subtype: 'success', result: 'It said hello.', num_turns: 2 });
  });
});

describe("a one-shot's result", () => {
  it('arrives when the conversation closes even if the live read shown on a terminal falls silent', async () => {
    const { workspace } = await setUp({ script: [{ content: [{ type: 'text', text: 'Answered anyway.' }] }] });
    const h = harness!;
    // A client whose live reads (workflow-stream polls are updates) never get an answer.
    const silent = new Client({
      connection: h.client.connection,
      namespace: 'default',
      interceptors: { workflow: [{ startUpdate: () => new Promise<never>(() => {}) }] },
    });
    const api = new ConversationClient(silent);
    const { conversationId, inputUuid } = await api.start({
      prompt: 'Answer me',
      config: h.config({ cwd: workspace, oneShot: true }),
      taskQueue: h.taskQueue,
    });
    const shown: string[] = [];
    const result = await api.waitForResult(conversationId, inputUuid!, { onLive: (entry) => shown.push(entry.kind), closesWithResult: true });
    expect(result).toMatchObject({ subtype: 'success', result: 'Answered anyway.' });
    expect(shown).toEqual([]);
  });
});

describe('the prompt', () => {
  /** The CLI with `stdin` piped (not a terminal). */
  async function cliWithStdin(stdin: string, ...argv: string[]) {
    let out = '';
    let err = '';
    const code = await main(argv, { out: (text) => (out += `${text}\n`), err: (text) => (err += `${text}\n`), stdin: Readable.from([stdin]) });
    return { code, out, err };
  }

  it('comes from stdin as with claude -p: alone, or after the argument prompt, and from an @file', async () => {
    const { workspace, model } = await setUp({
      script: [{ content: [{ type: 'text', text: 'one' }] }, { content: [{ type: 'text', text: 'two' }] }, { content: [{ type: 'text', text: 'three' }] }],
    });
    expect(await cliWithStdin('hi from a pipe\n', 'ask', '--cwd', workspace)).toMatchObject({ code: 0, out: 'one\n' });
    expect(lastUserContent(model.requests[0])).toContain('hi from a pipe');

    expect(await cliWithStdin('line 1\nline 2\n', 'ask', '--cwd', workspace, 'Summarise this:')).toMatchObject({ code: 0, out: 'two\n' });
    expect(lastUserContent(model.requests[1])).toContain(JSON.stringify('Summarise this:\nline 1\nline 2\n').slice(1, -1));

    const promptFile = path.join(workspace, 'task.md');
    await writeFile(promptFile, 'The task, from a file.');
    expect(await cli('ask', '--cwd', workspace, `@${promptFile}`)).toMatchObject({ code: 0, out: 'three\n' });
    expect(lastUserContent(model.requests[2])).toContain('The task, from a file.');

    expect(await cliWithStdin('', 'ask', '--cwd', workspace)).toMatchObject({ code: 2, err: expect.stringContaining('ask: the prompt is empty') });
    expect(await cli('ask', '--cwd', workspace, '@missing-task.md')).toMatchObject({
      code: 2,
      err: expect.stringMatching(/cannot read .*missing-task\.md: no such file/),
    });
    expect(model.requests).toHaveLength(3);
  });

  it('over the limit is refused with its size and the limit, and nothing starts', async () => {
    const { workspace, model } = await setUp({ script: [{ content: [{ type: 'text', text: 'Hello back.' }] }] });
    const huge = 'x'.repeat(MAX_PROMPT_BYTES + 1);
    const asked = await cliWithStdin(huge, 'ask', '--cwd', workspace);
    expect(asked.code).toBe(1);
    expect(asked.err).toContain('The prompt is 2.0 MB (2,000,001 bytes); the limit is 2.0 MB (2,000,000 bytes)');
    expect(asked.err).not.toContain('Failed to start Workflow');

    const started = await cli('start', '--cwd', workspace, '--id', 'results-small', 'hello');
    expect(started.code).toBe(0);
    const sent = await cli('send', 'results-small', huge);
    expect(sent.code).toBe(1);
    expect(sent.err).toContain('the limit is 2.0 MB');
    expect(model.requests.length).toBeLessThanOrEqual(1);
  });

  it('a start the server refuses says why, not only "Failed to start Workflow"', async () => {
    const { workspace, model } = await setUp({ script: [] });
    // A 2.5 MB schema passes the prompt check but not the server's payload limit.
    const schemaFile = path.join(workspace, 'huge-schema.json');
    await writeFile(schemaFile, JSON.stringify({ type: 'object', description: 'x'.repeat(2_500_000) }));
    const { code, err } = await cli('ask', '--cwd', workspace, '--json-schema', `@${schemaFile}`, 'hi');
    expect(code).toBe(1);
    expect(err).toMatch(/^Error: Failed to start Workflow: .*(size|limit)/i);
    expect(model.requests).toHaveLength(0);
  });
});
