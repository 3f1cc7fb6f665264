/**
 * Background commands' pure parts (workflows/background/commands.ts, issue 21): task ids, which
 * calls the route takes, the records and texts, the UI's current details, and the permission
 * decisions (a background Bash decides as a Bash call; TaskOutput / TaskStop need none; a tool
 * without a decision of its own asks).
 */
import { describe, expect, it } from 'vitest';
import { type PermissionContext, decidePermission } from '../../common/permissions';
import { toolFacts } from '../../common/tool-facts';
import {
  endedTask,
  invalidInput,
  isBackgroundCall,
  newTaskId,
  noTaskFound,
  pruneEndedTasks,
  runningTaskLines,
  startedText,
} from '../../workflows/background/commands';
import type { BackgroundTask } from '../../workflows/background/command-tasks';
import { formatCurrentDetails } from '../../workflows/ui/details';
import { formatBackgroundTasks, formatEvent } from '../../client/format';
import { describeTaskNotification } from '../../client/task-notification';
import { taskNotificationText } from '../../common/background';

const task: BackgroundTask = {
  kind: 'bash',
  description: 'Run the dev server',
  command: 'npm run dev',
  status: 'running',
  outputPath: '/s/b1.output',
  startedAt: 1,
};

describe('background commands route', () => {
  it('makes Claude Code-like task ids: b and 8 hex characters', () => {
    expect(newTaskId('1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d')).toBe('b1a2b3c4d');
    expect(newTaskId('00000000-1111-4222-8333-444444444444')).toMatch(/^b[0-9a-f]{8}$/);
  });

  it('takes Bash only with run_in_background: true, and TaskOutput / TaskStop', () => {
    expect(isBackgroundCall({ name: 'Bash', input: { command: 'sleep 1', run_in_background: true } })).toBe(true);
    expect(isBackgroundCall({ name: 'Bash', input: { command: 'sleep 1', run_in_background: false } })).toBe(false);
    expect(isBackgroundCall({ name: 'Bash', input: { command: 'sleep 1' } })).toBe(false);
    expect(isBackgroundCall({ name: 'Bash', input: null })).toBe(false);
    expect(isBackgroundCall({ name: 'TaskOutput', input: { task_id: 'b1' } })).toBe(true);
    expect(isBackgroundCall({ name: 'TaskStop', input: {} })).toBe(true);
    expect(isBackgroundCall({ name: 'Read', input: { file_path: 'a' } })).toBe(false);
  });

  it('answers unknown ids as Claude Code does, and names the task and its output file when it starts', () => {
    expect(noTaskFound('bdeadbeef')).toEqual({ isError: true, content: 'No task found with ID: bdeadbeef' });
    expect(startedText('b1', '/s/b1.output', [])).toBe('Command running in background with ID: b1. Output is being written to: /s/b1.output');
    expect(startedText('b1', '/o', ['Sandbox: network off'])).toContain('\nSandbox: network off');
    expect(invalidInput('TaskOutput', [{ path: ['task_id'], message: 'expected string, received undefined' }])).toEqual({
      isError: true,
      content: 'InputValidationError: TaskOutput failed because: task_id: expected string, received undefined',
    });
  });

  it('records how a task ended', () => {
    expect(endedTask(task, { taskId: 'b1', status: 'failed', exitCode: 2, outputPath: '/o', tail: 'x', outputBytes: 1 }, 9)).toEqual({
      ...task,
      status: 'failed',
      exitCode: 2,
      endedAt: 9,
    });
    const gone = endedTask(task, { taskId: 'b1', status: 'interrupted', outputPath: '/o', tail: '', outputBytes: 0, detail: 'its process is gone' }, 9);
    expect(gone).toMatchObject({ status: 'interrupted', detail: 'its process is gone' });
    expect(gone.exitCode).toBeUndefined();
  });

  it('keeps every running task and the most recently ended ones', () => {
    const ended = (endedAt: number): BackgroundTask => ({ ...task, status: 'completed', endedAt });
    const pruned = pruneEndedTasks({ b1: ended(30), b2: task, b3: ended(10), b4: ended(20), b5: task }, 2);
    expect(Object.keys(pruned)).toEqual(['b1', 'b2', 'b4', 'b5']);
    expect(pruneEndedTasks({ b1: task, b2: task }, 0)).toEqual({ b1: task, b2: task });
  });

  it('shows running tasks in the UI current details, three named and the rest counted', () => {
    const tasks = { b1: task, b2: { ...task, status: 'completed' as const }, b3: task, b4: task, b5: task };
    const lines = runningTaskLines(tasks);
    expect(lines).toEqual(['b1 Run the dev server', 'b3 Run the dev server', 'b4 Run the dev server', 'b5 Run the dev server']);
    const details = formatCurrentDetails({ phase: 'awaiting_input', tools: [], turn: 1, queryCount: 1, model: 'm', costUsd: 0, background: lines });
    expect(details).toContain('**Background (4 running):** b1 Run the dev server · b3 Run the dev server · b4 Run the dev server · and 1 more');
    expect(formatCurrentDetails({ phase: 'awaiting_input', tools: [], turn: 1, queryCount: 1, model: 'm', costUsd: 0, background: [] })).not.toContain(
      'Background',
    );
  });

  it('a query a notification started shows its summary in the UI, not its XML', () => {
    const prompt = taskNotificationText(
      { taskId: 'b1a2b3c4d', status: 'completed', exitCode: 0, outputPath: '/s/b1.output', tail: 'built\n', outputBytes: 6 },
      'Background command "Build"',
    );
    const details = formatCurrentDetails({ phase: 'running', tools: [], turn: 1, queryCount: 2, model: 'm', costUsd: 0, lastPrompt: prompt });
    expect(details).toContain('**Notified:** Background command "Build" completed (exit code 0)');
    expect(details).not.toContain('task-notification');
    expect(details).not.toContain('**Asked:**');
    expect(formatCurrentDetails({ phase: 'running', tools: [], turn: 1, queryCount: 1, model: 'm', costUsd: 0, lastPrompt: 'Fix the test' })).toContain(
      '**Asked:** Fix the test',
    );
  });
});

describe('`status` lists background tasks', () => {
  it('with a count, each task id, status (exit code) and description', () => {
    const lines = formatBackgroundTasks([
      { id: 'b1a2b3c4d', ...task },
      { id: 'b00000002', ...task, description: 'Build', status: 'failed', exitCode: 2 },
    ]);
    expect(lines).toEqual([
      'background    1 running, 1 ended',
      '              b1a2b3c4d  running          Run the dev server',
      '              b00000002  failed (exit 2)  Build',
    ]);
  });
});

describe('chat shows a task notification as its summary line', () => {
  it('not as XML; a prompt that is not one is left alone', () => {
    const prompt = taskNotificationText(
      { taskId: 'b1', status: 'failed', exitCode: 1, outputPath: '/s/b1.output', tail: 'boom', outputBytes: 4 },
      'Background command "Build"',
    );
    expect(describeTaskNotification(prompt)).toBe('● Background command "Build" failed (exit code 1) · output: /s/b1.output');
    expect(describeTaskNotification('fix the <task-notification> parser')).toBeUndefined();
    // `start --follow` / `send --follow` print it the same way.
    expect(formatEvent({ seq: 1, message: { type: 'user_input', uuid: 'u', prompt } })).toMatch(/^● Background command "Build" failed/);
    expect(formatEvent({ seq: 2, message: { type: 'user_input', uuid: 'u', prompt: 'hello' } })).toBe('> hello');
  });
});

describe('permissions of background calls', () => {
  const context = (mode: PermissionContext['mode'], rules: Partial<Record<'allow' | 'deny' | 'ask', string[]>> = {}): PermissionContext => {
    const of = (list: string[] = []) => list.map((rule) => ({ rule, source: 'cliArg' as const }));
    return { mode, rules: { allow: of(rules.allow), deny: of(rules.deny), ask: of(rules.ask) }, workingDirectories: ['/work/p'] };
  };
  const decide = (name: string, input: unknown, ctx: PermissionContext) =>
    decidePermission({ toolName: name, input }, toolFacts({ name, input }), ctx).behavior;

  it('a background Bash is decided exactly as the same Bash call', () => {
    for (const mode of ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'] as const) {
      for (const command of ['git status', 'npm run dev', 'rm -rf build']) {
        for (const rules of [{}, { allow: ['Bash(npm run:*)'] }, { deny: ['Bash(rm:*)'] }, { ask: ['Bash(git:*)'] }]) {
          const ctx = context(mode, rules);
          expect(decide('Bash', { command, run_in_background: true }, ctx), `${mode} ${command} ${JSON.stringify(rules)}`).toBe(
            decide('Bash', { command }, ctx),
          );
        }
      }
    }
  });

  it('TaskOutput and TaskStop need no permission in any mode; rules still apply', () => {
    for (const mode of ['default', 'acceptEdits', 'plan', 'dontAsk'] as const) {
      expect(decide('TaskOutput', { task_id: 'b1' }, context(mode))).toBe('allow');
      expect(decide('TaskStop', { task_id: 'b1' }, context(mode))).toBe('allow');
    }
    expect(decide('TaskStop', { task_id: 'b1' }, context('default', { deny: ['TaskStop'] }))).toBe('deny');
    expect(decide('TaskOutput', { task_id: 'b1' }, context('default', { ask: ['TaskOutput'] }))).toBe('ask');
  });

  it('a tool with a spec but no decision of its own fails closed (asks); Agent still needs none', () => {
    const facts = { validInput: true, readOnly: false };
    expect(decidePermission({ toolName: 'SomeNewTool', input: {} }, facts, context('default')).behavior).toBe('ask');
    expect(decidePermission({ toolName: 'SomeNewTool', input: {} }, facts, context('dontAsk')).behavior).toBe('deny');
    expect(decide('Agent', { description: 'd', prompt: 'p', subagent_type: 'Explore' }, context('default'))).toBe('allow');
  });
});
