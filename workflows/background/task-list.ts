/**
 * The task list (issue 21 §6): TaskCreate / TaskGet / TaskList / TaskUpdate answered in the
 * workflow by `applyTaskCall` (common/tasks.ts) — no activity, they touch only the conversation's
 * own state — which is carried across continue-as-new and shown in `status`, the chat and the UI's
 * current details. Claude Code asks no permission for them; deny rules still apply (the gate runs first).
 */
import type { HookEvent } from '../../common/hooks';
import type { ToolUseBlock } from '../../common/messages';
import { type TaskCall, type TaskListState, applyTaskCall, emptyTaskList, normalizeTaskId, taskListLines } from '../../common/tasks';
import type { ToolOutcome, ToolRoute, ToolRouteCall } from '../deps/query-host';
import { parseRouteInput } from './route-input';

export const TASK_LIST_TOOLS: ReadonlySet<string> = new Set(['TaskCreate', 'TaskGet', 'TaskList', 'TaskUpdate']);

export class TaskList implements ToolRoute {
  readonly name = 'the task list';
  private state: TaskListState;
  /** Issue 33: TaskCreated / TaskCompleted hooks (a message: they blocked the change, the tool's error). */
  hooks?: { taskChange(event: Extract<HookEvent, { hook_event_name: 'TaskCreated' | 'TaskCompleted' }>): Promise<string | undefined> };

  constructor(
    carried: TaskListState | undefined,
    /** The list changed: the UI's current details show it. */
    private readonly onChange: () => void,
  ) {
    this.state = carried ?? emptyTaskList();
  }

  takes(block: ToolUseBlock): boolean {
    return TASK_LIST_TOOLS.has(block.name);
  }

  async run({ block }: ToolRouteCall): Promise<ToolOutcome> {
    const parsed = parseRouteInput<TaskCall['input']>(block);
    if (!parsed.ok) return parsed.outcome;
    const call = { name: block.name, input: parsed.input } as TaskCall;
    const blocked = await this.taskHooks(call);
    if (blocked !== undefined) return { content: blocked, isError: true };
    const result = applyTaskCall(this.state, call);
    if (result.state !== this.state) {
      this.state = result.state;
      this.onChange();
    }
    return { content: result.content, isError: result.isError };
  }

  /**
   * TaskCreated (a TaskCreate) and TaskCompleted (a TaskUpdate to `completed` of a task that was
   * not), with the task as it will be; undefined when nothing blocked (or no hooks).
   */
  private async taskHooks(call: TaskCall): Promise<string | undefined> {
    if (!this.hooks) return undefined;
    if (call.name === 'TaskCreate') {
      return this.hooks.taskChange({
        hook_event_name: 'TaskCreated',
        task_id: String(this.state.nextId),
        task_subject: call.input.subject,
        task_description: call.input.description,
      });
    }
    if (call.name === 'TaskUpdate' && call.input.status === 'completed') {
      const task = this.state.tasks.find((candidate) => candidate.id === normalizeTaskId(call.input.taskId));
      if (!task || task.status === 'completed') return undefined;
      return this.hooks.taskChange({
        hook_event_name: 'TaskCompleted',
        task_id: task.id,
        task_subject: call.input.subject ?? task.subject,
        task_description: call.input.description ?? task.description,
      });
    }
    return undefined;
  }

  /** One line per task (TaskList's own text). */
  lines(): string[] {
    return taskListLines(this.state);
  }

  get tasks(): TaskListState['tasks'] {
    return this.state.tasks;
  }

  /** Carried across continue-as-new; nothing when the list was never used (older runs carry the same). */
  carried(): TaskListState | undefined {
    return this.state.nextId > 1 ? this.state : undefined;
  }
}
