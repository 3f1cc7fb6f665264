/**
 * Subagents as child workflows (Claude Code's Agent tool): a child conversation per Agent call,
 * its final text as the tool result, run side by side, read-only for Explore, custom agents from
 * .claude/agents, cancelled with the parent's abort, resumed after a worker SIGKILL without a
 * second child, and listed under its parent.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureTemporalCli } from '../../infra/temporal-cli';
import type { RecordedRequest, ScriptedTurn } from '../../testing/scripted-model-server';
import { subagentWorkflowId } from '../../workflows/subagents';
import { type Harness, createHarness, eventually, expectValidApiOrder, runToResult } from '../helpers/harness';

const execFileAsync = promisify(execFile);
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const agentCall = (id: string, description: string, prompt: string, type = 'general-purpose') => ({
  type: 'tool_use' as const,
  id,
  name: 'Agent',
  input: { description, prompt, subagent_type: type },
});
const toolNames = (request: RecordedRequest): string[] => request.body.tools.map((tool: { name: string }) => tool.name);
/** A child's requests do not offer Agent; the parent's do. */
const isChild = (request: RecordedRequest) => !toolNames(request).includes('Agent');
const firstUserText = (request: RecordedRequest) => JSON.stringify(request.body.messages[0]?.content ?? '');
const lastUserText = (request: RecordedRequest) => JSON.stringify(request.body.messages.at(-1)?.content ?? '');
const text = (value: string): ScriptedTurn => ({ content: [{ type: 'text', text: value }] });

describe('subagents', () => {
  it('runs an Agent call as a child workflow and returns its final text as the tool result', async () => {
    harness = await createHarness({
      respond: (request) => {
        if (isChild(request)) return text('There are 2 text files: a.txt and b.txt.');
        if (lastUserText(request).includes('tool_result')) return text('The agent counted 2 files.');
        return { content: [agentCall('toolu_agent1', 'count files', 'Count the .txt files in the workspace and list them.')] };
      },
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'How many text files?');
    expect(result).toMatchObject({ subtype: 'success', result: 'The agent counted 2 files.' });

    const parentRequests = harness.model.requests.filter((request) => !isChild(request));
    const toolResult = parentRequests[1].body.messages.at(-1).content[0];
    expect(toolResult).toMatchObject({
      type: 'tool_result',
      tool_use_id: 'toolu_agent1',
      content: expect.stringMatching(/^There are 2 text files: a\.txt and b\.txt\.\n\nagentId: a[0-9a-f]{8} /),
    });
    const childRequest = harness.model.requests.find(isChild)!;
    expect(firstUserText(childRequest)).toContain('Count the .txt files');
    // No Agent, and nothing scheduled (a subagent ends with its answer); its own task list and background commands (stopped when it ends).
    expect(toolNames(childRequest)).toEqual([
      'Read',
      'Write',
      'Edit',
      'NotebookEdit',
      'Bash',
      'Glob',
      'Grep',
      'WebFetch',
      'TaskOutput',
      'TaskStop',
      'TaskCreate',
      'TaskGet',
      'TaskList',
      'TaskUpdate',
    ]);
    for (const request of harness.model.requests) expectValidApiOrder(request);

    // The child is a workflow of its own: described, and answering the status query.
    const childId = subagentWorkflowId(conversationId, 'toolu_agent1');
    expect((await harness.client.workflow.getHandle(childId).describe()).status.name).toBe('COMPLETED');
    const childStatus = await harness.api.status(childId);
    expect(childStatus.lastResult?.result).toBe('There are 2 text files: a.txt and b.txt.');
    // Its cost counts in the parent's, and its progress shows in the parent's feed.
    const parentStatus = await harness.api.status(conversationId);
    expect(parentStatus.totalCostUsd).toBeGreaterThan(childStatus.totalCostUsd);
    // (A signal from the child: it may land just after the parent's result.)
    await eventually(
      async () => (await harness!.api.events(conversationId)).events.map((event) => event.message),
      (messages) => messages.some((message) => message.type === 'system' && message.content === '[count files] There are 2 text files: a.txt and b.txt.'),
    );
  });

  it('runs three Agent calls of one message side by side', async () => {
    harness = await createHarness({
      respond: (request) => {
        if (isChild(request)) return { ...text(`answer to ${firstUserText(request).match(/task \w/)?.[0]}`), delayMs: 1_500 };
        if (lastUserText(request).includes('tool_result')) return text('All three done.');
        return {
          content: [
            agentCall('toolu_p1', 'task one', 'Do task a'),
            agentCall('toolu_p2', 'task two', 'Do task b'),
            agentCall('toolu_p3', 'task three', 'Do task c'),
          ],
        };
      },
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Do three things');
    expect(result).toMatchObject({ subtype: 'success', result: 'All three done.' });
    const results = harness.model.requests.filter((request) => !isChild(request))[1].body.messages.at(-1).content;
    // Each answer, then the agent id SendMessage takes.
    expect(results.map((block: { content: string }) => block.content.replace(/\n\nagentId: .*$/s, ''))).toEqual([
      'answer to task a',
      'answer to task b',
      'answer to task c',
    ]);
    // All three children started before any of them finished.
    const history = await harness.client.workflow.getHandle(conversationId).fetchHistory();
    const events = history.events ?? [];
    const started = events.filter((event) => event.childWorkflowExecutionStartedEventAttributes).map((event) => Number(event.eventId));
    const firstDone = Math.min(...events.filter((event) => event.childWorkflowExecutionCompletedEventAttributes).map((event) => Number(event.eventId)));
    expect(started).toHaveLength(3);
    expect(Math.max(...started)).toBeLessThan(firstDone);
  });

  it('gives Explore only read-only tools and no project context; a write it tries is refused', async () => {
    harness = await createHarness({
      respond: (request) => {
        if (isChild(request)) {
          if (lastUserText(request).includes('tool_result')) return text('I could not write; the file says hello.');
          return {
            content: [
              { type: 'tool_use', name: 'Write', input: { file_path: 'hacked.txt', content: 'x' } },
              { type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } },
            ],
          };
        }
        if (lastUserText(request).includes('tool_result')) return text('Explored.');
        return { content: [agentCall('toolu_explore', 'look around', 'What does notes.txt say?', 'Explore')] };
      },
    });
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'hello\n');
    await writeFile(path.join(harness.workspace, 'CLAUDE.md'), 'PROJECT RULES: always say banana.\n');
    await harness.startWorker();
    const { result } = await runToResult(harness, 'Explore');
    expect(result).toMatchObject({ subtype: 'success', result: 'Explored.' });
    const childRequests = harness.model.requests.filter(isChild);
    expect(toolNames(childRequests[0])).toEqual(['Read', 'Glob', 'Grep']);
    expect(JSON.stringify(childRequests[0].body.system)).toContain('file search specialist');
    expect(JSON.stringify(childRequests[0].body.messages)).not.toContain('PROJECT RULES');
    expect(JSON.stringify(harness.model.requests[0].body.messages)).toContain('PROJECT RULES'); // the parent has it
    const childResults = childRequests[1].body.messages.at(-1).content;
    expect(childResults[0]).toMatchObject({ is_error: true, content: expect.stringContaining('No such tool available: Write') });
    expect(childResults[1].content).toContain('hello');
    await expect(readFile(path.join(harness.workspace, 'hacked.txt'), 'utf8')).rejects.toThrow();
  });

  it('runs a custom agent from .claude/agents with its prompt, tools and model; an unknown type is an error result', async () => {
    harness = await createHarness({
      respond: (request) => {
        if (isChild(request)) return text('Looks fine to me.');
        const last = lastUserText(request);
        if (last.includes('not found')) return { content: [agentCall('toolu_rev', 'review', 'Review a.ts', 'reviewer')] };
        if (last.includes('tool_result')) return text('Reviewed.');
        return { content: [agentCall('toolu_bad', 'oops', 'Do it', 'no-such-agent')] };
      },
    });
    await mkdir(path.join(harness.workspace, '.claude', 'agents'), { recursive: true });
    await writeFile(
      path.join(harness.workspace, '.claude', 'agents', 'reviewer.md'),
      '---\nname: reviewer\ndescription: Reviews code changes\ntools: Read, Grep\nmodel: claude-haiku-4-5\n---\nYou are a strict code reviewer. Report problems only.\n',
    );
    await harness.startWorker();
    const { result } = await runToResult(harness, 'Review please');
    expect(result).toMatchObject({ subtype: 'success', result: 'Reviewed.' });
    const parentRequests = harness.model.requests.filter((request) => !isChild(request));
    expect(JSON.stringify(parentRequests[0].body.system)).toContain('reviewer: Reviews code changes');
    expect(parentRequests[1].body.messages.at(-1).content[0]).toMatchObject({
      is_error: true,
      content: expect.stringContaining("Agent type 'no-such-agent' not found. Available agents: reviewer, general-purpose, Explore"),
    });
    const child = harness.model.requests.find(isChild)!;
    expect(child.body.model).toBe('claude-haiku-4-5');
    expect(toolNames(child)).toEqual(['Read', 'Grep']);
    expect(JSON.stringify(child.body.system)).toContain('You are a strict code reviewer.');
  });

  it('abort of the parent cancels its running children', async () => {
    harness = await createHarness({
      respond: (request) => {
        if (isChild(request)) return { ...text('too late'), delayMs: 60_000 };
        return { content: [agentCall('toolu_slow', 'slow work', 'Take your time')] };
      },
    });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'go slow', config: harness.config(), taskQueue: harness.taskQueue });
    const childId = subagentWorkflowId(started.conversationId, 'toolu_slow');
    await eventually(
      () => harness!.api.status(started.conversationId),
      (status) => status.toolsInFlight.some((tool) => tool.childWorkflowId === childId),
    );
    await eventually(
      async () => harness!.model.requests.filter(isChild).length,
      (count) => count === 1,
    );
    await harness.api.abort(started.conversationId);
    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
    expect(result).toMatchObject({ terminal_reason: 'aborted_tools' });
    expect((await harness.client.workflow.getHandle(childId).describe()).status.name).toBe('CANCELLED');
  });

  it('a worker SIGKILLed while a child runs: both resume, with one child, listed under the parent', async () => {
    let childCalls = 0;
    harness = await createHarness({
      respond: (request) => {
        if (isChild(request)) {
          childCalls++;
          return { content: [{ type: 'text', text: 'Child finished after the crash.' }], deltaDelayMs: 200, chunkSize: 4 };
        }
        if (lastUserText(request).includes('tool_result')) return text('Parent done.');
        return { content: [agentCall('toolu_crash', 'survive', 'Survive a crash')] };
      },
    });
    const first = await harness.spawnWorkerProcess();
    const started = await harness.api.start({ prompt: 'crash test', config: harness.config(), taskQueue: harness.taskQueue });
    await eventually(
      async () => childCalls,
      (count) => count === 1,
    );
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    await harness.spawnWorkerProcess();
    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'Parent done.' });
    const toolResult = harness.model.requests.filter((request) => !isChild(request))[1].body.messages.at(-1).content[0];
    expect(toolResult.content).toMatch(/^Child finished after the crash\.\n\nagentId: a[0-9a-f]{8} /);

    // One child for the tool_use, visible to the stock CLI under its parent.
    const childId = subagentWorkflowId(started.conversationId, 'toolu_crash');
    const cli = await ensureTemporalCli();
    const listed = await eventually(
      async () => {
        const { stdout } = await execFileAsync(cli.path, [
          'workflow',
          'list',
          '--address',
          harness!.address,
          '--namespace',
          'default',
          '--query',
          `ParentWorkflowId = '${started.conversationId}'`,
          '--output',
          'json',
        ]);
        return (JSON.parse(stdout || '[]') as Array<{ execution: { workflowId: string } }>).map((entry) => entry.execution.workflowId);
      },
      (ids) => ids.length > 0,
    );
    expect(listed).toEqual([childId]);
  });
});
