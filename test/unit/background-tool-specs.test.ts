/**
 * Issue 21's tool specs: Claude Code's tool names and input field names (claude-code-observed.md
 * "Tools offered"), so a model trained on them is understood; not offered to the model yet.
 */
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { TOOL_SPECS } from '../../common/tool-specs';
import { cronCreateToolSpec } from '../../common/tools/cron-create';
import { cronDeleteToolSpec } from '../../common/tools/cron-delete';
import { cronListToolSpec } from '../../common/tools/cron-list';
import { scheduleWakeupToolSpec } from '../../common/tools/schedule-wakeup';
import { sendMessageToolSpec } from '../../common/tools/send-message';
import { taskCreateToolSpec } from '../../common/tools/task-create';
import { taskGetToolSpec } from '../../common/tools/task-get';
import { taskListToolSpec } from '../../common/tools/task-list';
import { taskOutputToolSpec } from '../../common/tools/task-output';
import { taskStopToolSpec } from '../../common/tools/task-stop';
import { taskUpdateToolSpec } from '../../common/tools/task-update';

const specs = [
  taskOutputToolSpec,
  taskStopToolSpec,
  taskCreateToolSpec,
  taskGetToolSpec,
  taskListToolSpec,
  taskUpdateToolSpec,
  scheduleWakeupToolSpec,
  cronCreateToolSpec,
  cronDeleteToolSpec,
  cronListToolSpec,
  sendMessageToolSpec,
];

/** The input fields Claude Code 2.1.197 sends for each tool. */
const CLAUDE_CODE_FIELDS: Record<string, string[]> = {
  TaskOutput: ['block', 'task_id', 'timeout'],
  TaskStop: ['task_id'],
  TaskCreate: ['activeForm', 'description', 'metadata', 'subject'],
  TaskGet: ['taskId'],
  TaskList: [],
  TaskUpdate: ['activeForm', 'addBlockedBy', 'addBlocks', 'description', 'metadata', 'owner', 'status', 'subject', 'taskId'],
  ScheduleWakeup: ['delaySeconds', 'prompt', 'reason'],
  CronCreate: ['cron', 'durable', 'prompt', 'recurring'],
  CronDelete: ['id'],
  CronList: [],
  SendMessage: ['message', 'summary', 'to'],
};

describe('issue 21 tool specs', () => {
  it.each(specs.map((spec) => [spec.name, spec] as const))("%s has Claude Code's input fields and a JSON Schema the API accepts", (name, spec) => {
    const schema = z.toJSONSchema(spec.inputSchema, { target: 'draft-7', io: 'input' }) as {
      type: string;
      properties?: Record<string, unknown>;
      additionalProperties?: boolean;
    };
    expect(schema.type).toBe('object');
    expect(Object.keys(schema.properties ?? {}).sort()).toEqual(CLAUDE_CODE_FIELDS[name]);
    expect(schema.additionalProperties).toBe(false);
    expect(spec.description.length).toBeGreaterThan(40);
  });

  it('SendMessage, TaskOutput, TaskStop, the task list, ScheduleWakeup and the cron tools are offered (the workflow answers them: workflows/background/)', () => {
    const offered = new Set(TOOL_SPECS.map((spec) => spec.name));
    expect(offered.has('Bash')).toBe(true);
    const wired = [
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
    ];
    for (const spec of specs) expect(offered.has(spec.name)).toBe(wired.includes(spec.name));
  });

  it('fill Claude Code defaults and reject what it would reject', () => {
    expect(taskOutputToolSpec.inputSchema.parse({ task_id: 'b1' })).toEqual({ task_id: 'b1', block: true, timeout: 30_000 });
    expect(taskOutputToolSpec.inputSchema.safeParse({ task_id: 'b1', timeout: 700_000 }).success).toBe(false);
    expect(cronCreateToolSpec.inputSchema.parse({ cron: '*/5 * * * *', prompt: 'p' })).toEqual({
      cron: '*/5 * * * *',
      prompt: 'p',
      recurring: true,
      durable: false,
    });
    expect(taskUpdateToolSpec.inputSchema.safeParse({ taskId: '1', status: 'resolved' }).success).toBe(false);
    expect(taskCreateToolSpec.inputSchema.safeParse({ subject: 'x', description: 'y', run_in_background: true }).success).toBe(false);
    expect(scheduleWakeupToolSpec.summarize({ delaySeconds: 300, reason: 'poll CI', prompt: 'again' })).toBe('ScheduleWakeup 300s: poll CI');
  });
});
