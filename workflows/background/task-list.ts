/**
 * The task list (issue 21 §6): TaskCreate / TaskGet / TaskList / TaskUpdate answered in the
 * workflow by `applyTaskCall` (common/tasks.ts) — no activity, they touch only the conversation's
 * own state — which is carried across continue-as-new and shown in `status`, the chat and the UI's
 * current details. Claude Code asks no permission for them; deny rules still apply (the gate runs first).
 */
import type { ToolUseBlock } from '../../common/messages';
import { type TaskCall, type TaskListState, applyTaskCall, emptyTaskList, taskListLines } from '../../common/tasks';
import type { ToolOutcome, ToolRoute, ToolRouteCall } from '../deps/query-host';
import { parseRouteInput } from './route-input';

export const TASK_LIST_TOOLS: ReadonlySet<string> = new Set(['TaskCreate', 'TaskGet', 'TaskList', 'TaskUpdate']);

export class TaskList implements ToolRoute {
  readonly name = 'the task list';
  private state: TaskListState;

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
    const result = applyTaskCall(this.state, { name: block.name, input: parsed.input } as TaskCall);
    if (result.state !== this.state) {
      this.state = result.state;
      this.onChange();
    }
    return { content: result.content, isError: result.isError };
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
