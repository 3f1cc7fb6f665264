/** Background agents' pure bookkeeping (workflows/background/agent-tasks.ts): ids, lookup by `to`, reports taken once, texts. */
import { describe, expect, it } from 'vitest';
import { formatStatus } from '../../client/format';
import {
  type AgentTask,
  type AgentTasksState,
  agentNotificationKey,
  agentNotificationText,
  agentTaskId,
  agentTaskOutputText,
  findAgentTask,
  isAgentReport,
  launchedText,
  takeReport,
} from '../../workflows/background/agent-tasks';
import type { BackgroundAgentReport } from '../../workflows/background/agent-types';
import type { ConversationStatus } from '../../workflows/definitions';

const task = (overrides: Partial<AgentTask> = {}): AgentTask => ({
  id: 'a1234abcd',
  description: 'count files',
  agentType: 'general-purpose',
  childWorkflowId: 'conv--agent-toolu_1',
  model: 'claude-haiku-4-5',
  status: 'running',
  lastSeq: 0,
  ...overrides,
});
const usage = { input_tokens: 1, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
const report = (overrides: Partial<BackgroundAgentReport> = {}): BackgroundAgentReport => ({
  agentId: 'a1234abcd',
  seq: 1,
  result: 'Two files.',
  isError: false,
  usage,
  costUsd: 0.01,
  ...overrides,
});

describe('background agent tasks', () => {
  it('makes short ids from a uuid', () => {
    expect(agentTaskId('0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b')).toBe('a0f1e2d3c');
  });

  it('finds an agent by id, child workflow id, or a description or type that names exactly one', () => {
    const state: AgentTasksState = {
      tasks: [task(), task({ id: 'a99999999', description: 'lint', childWorkflowId: 'conv--agent-toolu_2', agentType: 'Explore' })],
    };
    expect(findAgentTask(state, 'a99999999')).toEqual({ task: state.tasks[1] });
    expect(findAgentTask(state, 'conv--agent-toolu_1')).toEqual({ task: state.tasks[0] });
    expect(findAgentTask(state, ' Count Files ')).toEqual({ task: state.tasks[0] });
    expect(findAgentTask(state, 'explore')).toEqual({ task: state.tasks[1] });
    expect(findAgentTask(state, 'general-purpose')).toEqual({ task: state.tasks[0] });
    const unknown = findAgentTask(state, 'nobody');
    expect(unknown).toEqual({ problem: expect.stringContaining('No background agent "nobody"') });
    expect((unknown as { problem: string }).problem).toContain('a1234abcd ("count files", running)');
    const twice: AgentTasksState = { tasks: [task(), task({ id: 'a2', childWorkflowId: 'x' })] };
    expect(findAgentTask(twice, 'count files')).toEqual({ problem: expect.stringContaining('names 2 agents') });
  });

  it('takes each answer once, in order, and none after the agent was stopped', () => {
    const state: AgentTasksState = { tasks: [task()] };
    expect(takeReport(state, report())).toMatchObject({ status: 'idle', lastSeq: 1, result: 'Two files.' });
    expect(takeReport(state, report())).toBeUndefined(); // a repeat (retried signal, the close seen too)
    expect(takeReport(state, report({ agentId: 'other' }))).toBeUndefined();
    state.tasks[0]!.status = 'running';
    expect(takeReport(state, report({ seq: 3, result: 'Three.', isError: true }))).toMatchObject({ status: 'idle', lastSeq: 3, isError: true });
    expect(takeReport(state, report({ seq: 2 }))).toBeUndefined(); // older than the last taken
    state.tasks[0]!.status = 'killed';
    expect(takeReport(state, report({ seq: 4 }))).toBeUndefined();
    expect(state.tasks[0]).toMatchObject({ status: 'killed', lastSeq: 4 });
  });

  it('checks a report signal before taking it', () => {
    expect(isAgentReport(report())).toBe(true);
    expect(isAgentReport({ ...report(), seq: '1' })).toBe(false);
    expect(isAgentReport({ agentId: 'a1' })).toBe(false);
    expect(isAgentReport(null)).toBe(false);
  });

  it('keys the first answer as agent:<id>, later ones by number', () => {
    expect(agentNotificationKey('a1', 1)).toBe('agent:a1');
    expect(agentNotificationKey('a1', 2)).toBe('agent:a1:2');
    expect(agentNotificationKey('a1', 'closed')).toBe('agent:a1:closed');
  });

  it('tells the model what it needs: the id on launch, the answer in a task-notification, the status in TaskOutput', () => {
    expect(launchedText(task())).toMatch(/^Async agent launched successfully\.\nagentId: a1234abcd /);
    expect(agentNotificationText(task(), { result: 'Two files.', isError: false })).toBe(
      [
        '<task-notification>',
        '<task-id>a1234abcd</task-id>',
        '<status>completed</status>',
        '<summary>Agent "count files" completed</summary>',
        '<result>',
        'Two files.',
        '</result>',
        '</task-notification>',
      ].join('\n'),
    );
    expect(agentNotificationText(task(), { result: ' ', isError: true })).toContain('<status>failed</status>');
    expect(agentTaskOutputText(task(), true)).toBe(
      '<retrieval_status>timeout</retrieval_status>\n<task_id>a1234abcd</task_id>\n<task_type>local_agent</task_type>\n<status>running</status>',
    );
    expect(agentTaskOutputText(task({ status: 'idle', result: 'Done.', lastSeq: 1 }), false)).toContain(
      '<retrieval_status>success</retrieval_status>\n<task_id>a1234abcd</task_id>\n<task_type>local_agent</task_type>\n<status>completed</status>\n<output>\nDone.\n</output>',
    );
    expect(agentTaskOutputText(task({ status: 'killed' }), false)).toContain('<status>killed</status>');
  });
});

describe('status of background agents', () => {
  it('shows one line per agent in `status`, with the child workflow to follow', () => {
    const status = {
      conversationId: 'conv',
      phase: 'awaiting_input',
      model: 'claude-sonnet-4-6',
      currentModel: 'claude-sonnet-4-6',
      turnCount: 1,
      queryCount: 2,
      transitions: [],
      lastQueryTransitions: [],
      toolsInFlight: [],
      queuedInputs: 0,
      usage,
      totalCostUsd: 0.01,
      contextTokens: 10,
      messageCount: 4,
      ended: false,
      continuedAsNewCount: 0,
      nextEventSeq: 3,
      backgroundAgents: [
        {
          id: 'a1234abcd',
          description: 'count files',
          agentType: 'general-purpose',
          model: 'claude-haiku-4-5',
          status: 'completed (waiting for SendMessage)',
          childWorkflowId: 'conv--agent-toolu_1',
        },
      ],
    } as unknown as ConversationStatus;
    expect(formatStatus(status).split('\n')).toContain(
      'agent         a1234abcd "count files" (general-purpose, claude-haiku-4-5): completed (waiting for SendMessage)  conv--agent-toolu_1',
    );
  });
});
