/**
 * The foundation path end to end: a conversation workflow on the real dev server, a real worker,
 * the real Anthropic SDK against the scripted model server, real files.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { type Harness, createHarness, eventually, runToResult, expectValidApiOrder } from '../helpers/harness';

let harness: Harness;
afterEach(async () => {
  await harness?.close();
});

function toolResultsOf(request: RecordedRequest): Array<{ tool_use_id: string; content: string; is_error?: boolean }> {
  const last = request.body.messages[request.body.messages.length - 1];
  return (last.content as any[]).filter((block) => block.type === 'tool_result');
}

describe('conversation workflow', () => {
  it('reads a file, edits another, runs Bash, and ends with a result', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'text', text: 'Reading the notes.' },
            { type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } },
          ],
        },
        { content: [{ type: 'tool_use', name: 'Edit', input: { file_path: 'app.txt', old_string: 'version=1', new_string: 'version=2' } }] },
        { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'cat app.txt > built.txt && echo built' } }] },
        { content: [{ type: 'text', text: 'Bumped the version and built it.' }] },
      ],
    });
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'Bump the version.\n');
    await writeFile(path.join(harness.workspace, 'app.txt'), 'name=demo\nversion=1\n');
    await harness.startWorker();

    const { result, conversationId } = await runToResult(harness, 'Do what notes.txt says, then build.');

    expect(await readFile(path.join(harness.workspace, 'app.txt'), 'utf8')).toBe('name=demo\nversion=2\n');
    expect(await readFile(path.join(harness.workspace, 'built.txt'), 'utf8')).toBe('name=demo\nversion=2\n');
    expect(result).toMatchObject({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'Bumped the version and built it.',
      num_turns: 4,
      terminal_reason: 'completed',
      transitions: ['tool_use', 'tool_use', 'tool_use'],
      session_id: conversationId,
      stop_reason: 'end_turn',
    });
    expect(result.usage.output_tokens).toBeGreaterThan(0);
    expect(result.total_cost_usd).toBeGreaterThan(0);

    const requests = harness.model.requests;
    expect(requests).toHaveLength(4);
    expect(requests[0].stream).toBe(true);
    expect(requests[0].body.tools.map((tool: any) => tool.name)).toEqual([
      'Read',
      'Write',
      'Edit',
      'NotebookEdit',
      'Bash',
      'Glob',
      'Grep',
      'WebFetch',
      'Agent',
      'TaskOutput',
      'TaskStop',
      'SendMessage',
      'TaskCreate',
      'TaskGet',
      'TaskList',
      'TaskUpdate',
      'ScheduleWakeup',
      'CronCreate',
      'CronDelete',
      'CronList',
      'EnterWorktree',
      'ExitWorktree',
    ]);
    expect(toolResultsOf(requests[1])[0].content).toContain('Bump the version.');
    expect(toolResultsOf(requests[3])[0].content).toContain('built');
    for (const request of requests) expectValidApiOrder(request);
  });

  it('continues the same conversation with a follow-up signal, sending the full history', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', name: 'Glob', input: { pattern: '*.md' } }] },
        { content: [{ type: 'text', text: 'There is one markdown file.' }] },
        { content: [{ type: 'text', text: 'It is called README.md.' }] },
      ],
    });
    await writeFile(path.join(harness.workspace, 'README.md'), '# hi\n');
    await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'How many markdown files?');

    const inputUuid = await harness.api.send(conversationId, 'What is it called?');
    const result = await harness.api.waitForResult(conversationId, inputUuid);
    expect(result.result).toBe('It is called README.md.');
    expect(result.input_uuid).toBe(inputUuid);

    const followUp = harness.model.requests[2];
    const roles = followUp.body.messages.map((message: any) => message.role);
    expect(roles).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    const firstUser = JSON.stringify(followUp.body.messages[0].content);
    expect(firstUser).toContain('How many markdown files?');
    expect(followUp.body.messages[3].content).toEqual([{ type: 'text', text: 'There is one markdown file.' }]);
    expect(JSON.stringify(followUp.body.messages[4].content)).toContain('What is it called?');
    expectValidApiOrder(followUp);

    const status = await harness.api.status(conversationId);
    expect(status).toMatchObject({ phase: 'awaiting_input', queryCount: 2, ended: false });
  });

  it('reports the running tool in the status query while a slow tool runs', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'sleep 3; echo slept', description: 'wait a bit' } }] },
        { content: [{ type: 'text', text: 'Waited.' }] },
      ],
    });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'wait', config: harness.config(), taskQueue: harness.taskQueue });

    const status = await eventually(
      () => harness.api.status(started.conversationId),
      (current) => current.phase === 'running_tools' && current.toolsInFlight.length > 0,
    );
    expect(status.toolsInFlight[0]).toMatchObject({ name: 'Bash', summary: 'Bash: sleep 3; echo slept' });

    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
    expect(result.result).toBe('Waited.');
    expect((await harness.api.status(started.conversationId)).toolsInFlight).toEqual([]);
  });

  it('feeds schema-invalid tool input and unknown tools back to the model as errors, then continues', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'tool_use', name: 'Edit', input: { file_path: 'a.txt', new_string: 'x' } },
            { type: 'tool_use', name: 'FlyToTheMoon', input: {} },
          ],
        },
        { content: [{ type: 'text', text: 'I will fix my call.' }] },
      ],
    });
    await harness.startWorker();
    const { result } = await runToResult(harness, 'edit it');

    expect(result).toMatchObject({ subtype: 'success', result: 'I will fix my call.' });
    const [editResult, unknownResult] = toolResultsOf(harness.model.requests[1]);
    expect(editResult.is_error).toBe(true);
    expect(editResult.content).toContain('old_string');
    expect(unknownResult.is_error).toBe(true);
    expect(unknownResult.content).toContain('No such tool available: FlyToTheMoon');
  });

  it('persists an oversized tool result and gives the model a preview and the path', async () => {
    harness = await createHarness({
      script: [{ content: [{ type: 'tool_use', name: 'Bash', input: { command: 'seq 1 20000' } }] }, { content: [{ type: 'text', text: 'That was long.' }] }],
    });
    await harness.startWorker();
    const { result } = await runToResult(harness, 'count');

    expect(result.result).toBe('That was long.');
    const [toolResult] = toolResultsOf(harness.model.requests[1]);
    expect(toolResult.content.length).toBeLessThan(3_000);
    expect(toolResult.content).toContain('<persisted-output>');
    expect(toolResult.content).toMatch(/^1\n2\n3\n/m);
    const savedPath = /Full output saved to: (\S+)/.exec(toolResult.content)![1];
    expect(savedPath.startsWith(harness.stateDir)).toBe(true);
    const saved = await readFile(savedPath, 'utf8');
    expect(saved.split('\n')).toHaveLength(20_000);
    expect(saved.endsWith('19999\n20000')).toBe(true);
  });

  it('without an API key the query ends with a clear error and the conversation stays open', async () => {
    harness = await createHarness();
    await harness.startWorker({ anthropic: null });
    const { result, conversationId } = await runToResult(harness, 'hello');

    expect(result.is_error).toBe(true);
    expect(result.terminal_reason).toBe('model_error');
    expect(result.result).toContain('ANTHROPIC_API_KEY');
    expect(harness.model.requests).toHaveLength(0);
    const status = await harness.api.status(conversationId);
    expect(status).toMatchObject({ phase: 'awaiting_input', ended: false });
  });
});
