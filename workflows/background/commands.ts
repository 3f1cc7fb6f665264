/**
 * Background Bash (issue 21 §1, §2, §7), the workflow side: `Bash {run_in_background: true}`,
 * `TaskOutput` and `TaskStop` run on this route instead of `runTool`. A command is started
 * detached on the workspace's queue (activities/background/background-command.ts) and the tool
 * result comes back at once; a heartbeating `superviseBackgroundCommand`, in a scope a query's
 * abort does not cancel, waits for its end — a worker that dies mid-command is replaced by a
 * retried attempt that re-attaches — and its outcome becomes one `<task-notification>` (seed §2.2
 * ⑦: joined to the running query before its next model call, or starting a query when idle).
 * The tasks are this module's carried state; after continue-as-new the new run supervises the
 * ones still running again. `end` stops them; `abort` leaves them alone (as Claude Code).
 */
import { type ActivityOptions, CancellationScope, isCancellation, uuid4 } from '@temporalio/workflow';
import { type BackgroundOutcome, taskNotificationText } from '../../common/background';
import type { ToolUseBlock } from '../../common/messages';
import { oneLine } from '../../common/cut-text';
import { bashInputSchema } from '../../common/tools/bash';
import { taskOutputInputSchema } from '../../common/tools/task-output';
import { taskStopInputSchema } from '../../common/tools/task-stop';
import { SHORT_ACTIVITY_OPTIONS, activities, superviseCommandOptions, taskOutputOptions } from '../deps/activity-options';
import { failureMessage } from '../deps/failures';
import type { ToolOutcome, ToolRoute, ToolRouteCall } from '../deps/query-host';
import type { BackgroundWorkKind, PartContext, PartDetails, SessionPart } from '../session/session-part';
import { sandboxInputs } from '../deps/tool-run';
import type { BackgroundTask, BackgroundTaskStatus, BackgroundTasks } from './command-tasks';

export type { BackgroundTask, BackgroundTaskStatus, BackgroundTasks } from './command-tasks';

/** What the module uses of the conversation (session/session-part.ts). */
type BackgroundCommandsContext = Pick<PartContext, 'conversationId' | 'config' | 'toolPermissions' | 'notify' | 'refreshDetails'>;

/** The tool names this route answers (Bash only with run_in_background). */
const TASK_TOOLS = new Set(['TaskOutput', 'TaskStop']);

/** A new task id: `b` and 8 characters of a (deterministic, workflow) uuid, like Claude Code's shell ids. */
export function newTaskId(uuid: string): string {
  return `b${uuid.replace(/-/g, '').slice(0, 8)}`;
}

/** Whether this call is one the route runs, on the call alone. */
export function isBackgroundCall(block: Pick<ToolUseBlock, 'name' | 'input'>): boolean {
  if (TASK_TOOLS.has(block.name)) return true;
  return block.name === 'Bash' && (block.input as { run_in_background?: unknown } | null)?.run_in_background === true;
}

/** Claude Code's answer for an id it does not know. */
export function noTaskFound(taskId: string): ToolOutcome {
  return { isError: true, content: `No task found with ID: ${taskId}` };
}

/** Invalid input, in the words the tools use for it (activities/tools: `InputValidationError: X failed because: …`). */
export function invalidInput(toolName: string, issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): ToolOutcome {
  const reasons = issues.map((issue) => (issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message));
  return { isError: true, content: `InputValidationError: ${toolName} failed because: ${reasons.join('; ')}` };
}

/** The tool result of a started command (Claude Code's wording). */
export function startedText(taskId: string, outputPath: string, notices: readonly string[]): string {
  return [`Command running in background with ID: ${taskId}. Output is being written to: ${outputPath}`, ...notices].join('\n');
}

/** The task's record once its supervisor reported how it ended. */
export function endedTask(task: BackgroundTask, outcome: BackgroundOutcome, now: number): BackgroundTask {
  const ended: BackgroundTask = { ...task, status: outcome.status, endedAt: now };
  if (outcome.exitCode !== undefined) ended.exitCode = outcome.exitCode;
  if (outcome.detail !== undefined) ended.detail = outcome.detail;
  return ended;
}

/** Ended tasks kept (for TaskOutput, `status` and the carried state); older ended ones are dropped first. */
export const ENDED_TASKS_KEPT = 50;

/** The tasks without the oldest ended ones beyond `keep` (running ones always stay). */
export function pruneEndedTasks(tasks: BackgroundTasks, keep = ENDED_TASKS_KEPT): BackgroundTasks {
  const ended = Object.entries(tasks)
    .filter(([, task]) => task.status !== 'running')
    .sort(([, a], [, b]) => (a.endedAt ?? 0) - (b.endedAt ?? 0));
  const dropped = new Set(ended.slice(0, Math.max(0, ended.length - keep)).map(([id]) => id));
  return Object.fromEntries(Object.entries(tasks).filter(([id]) => !dropped.has(id)));
}

/** One line per running task for the UI's current details (`b1a2b3c4d Run the dev server`). */
export function runningTaskLines(tasks: BackgroundTasks): string[] {
  return Object.entries(tasks)
    .filter(([, task]) => task.status === 'running')
    .map(([id, task]) => `${id} ${oneLine(task.description, 60)}`);
}

export class BackgroundCommands implements SessionPart {
  readonly name = 'background commands';
  private tasks: BackgroundTasks;
  readonly routes: readonly ToolRoute[] = [{ name: 'background commands', takes: (block) => isBackgroundCall(block), run: (call) => this.run(call) }];
  readonly backgroundWork: readonly BackgroundWorkKind[] = [
    { name: 'background commands', pending: () => this.runningIds().length > 0, onEnd: () => this.stopAll() },
  ];

  constructor(
    private readonly host: BackgroundCommandsContext,
    carried: BackgroundTasks | undefined,
  ) {
    this.tasks = { ...(carried ?? {}) };
    // After continue-as-new: the previous run's supervisors are gone; new ones re-attach.
    for (const id of this.runningIds()) this.supervise(id);
  }

  /** The carried state (continue-as-new). */
  carried(): { backgroundTasks?: BackgroundTasks } {
    return Object.keys(this.tasks).length > 0 ? { backgroundTasks: { ...this.tasks } } : {};
  }

  /** For `status`, oldest first. */
  list(): BackgroundTaskStatus[] {
    return Object.entries(this.tasks).map(([id, task]) => ({ id, ...task }));
  }

  status(): { backgroundTasks?: BackgroundTaskStatus[] } {
    const tasks = this.list();
    return tasks.length > 0 ? { backgroundTasks: tasks } : {};
  }

  /** For the UI's current details. */
  details(): Pick<PartDetails, 'background'> {
    return { background: runningTaskLines(this.tasks) };
  }

  private runningIds(): string[] {
    return Object.keys(this.tasks).filter((id) => this.tasks[id].status === 'running');
  }

  private ref(taskId: string) {
    return { conversationId: this.host.conversationId, taskId, cwd: this.host.config.cwd };
  }

  private options(overrides: ActivityOptions): ActivityOptions {
    return { taskQueue: this.host.config.toolTaskQueue, ...overrides };
  }

  private run(call: ToolRouteCall): Promise<ToolOutcome> {
    switch (call.block.name) {
      case 'TaskOutput':
        return this.taskOutput(call);
      case 'TaskStop':
        return this.taskStop(call);
      default:
        return this.start(call);
    }
  }

  // ---- Bash {run_in_background: true} ----

  private async start(call: ToolRouteCall): Promise<ToolOutcome> {
    const parsed = bashInputSchema.safeParse(call.block.input);
    if (!parsed.success) return invalidInput(call.block.name, parsed.error.issues);
    const input = parsed.data;
    const taskId = newTaskId(uuid4());
    const access = call.verdict.access;
    const sandbox = sandboxInputs(this.host);
    const additionalDirectories = [...(access?.workingDirectories ?? []), ...(sandbox.additionalDirectories ?? [])].filter(
      (directory) => directory !== this.host.config.cwd,
    );
    // An abort of the query must not orphan a command that started: the start and its record are not cancellable.
    return CancellationScope.nonCancellable(async () => {
      const started = await activities(this.options({ ...SHORT_ACTIVITY_OPTIONS, summary: `Start ${taskId}: ${call.summary}` })).startBackgroundCommand({
        ...this.ref(taskId),
        command: input.command,
        ...(input.description && { description: input.description }),
        ...(additionalDirectories.length > 0 && { additionalDirectories: [...new Set(additionalDirectories)] }),
        ...(sandbox.settingSources && { settingSources: sandbox.settingSources }),
        ...(input.dangerouslyDisableSandbox !== undefined && { dangerouslyDisableSandbox: input.dangerouslyDisableSandbox }),
        ...(access?.readDeny && access.readDeny.length > 0 && { readDenyRules: access.readDeny }),
      });
      if (started.refusal) return { isError: true, content: [started.refusal, ...started.notices].join('\n') };
      this.tasks[taskId] = {
        kind: 'bash',
        description: input.description?.trim() || oneLine(input.command, 80),
        command: input.command,
        status: 'running',
        outputPath: started.outputPath,
        startedAt: Date.now(),
      };
      // The model may read its output file with Read (outside the workspace: as a large result's file).
      this.host.toolPermissions.allowReadOf(started.outputPath);
      this.supervise(taskId);
      this.host.refreshDetails();
      return { isError: false, content: startedText(taskId, started.outputPath, started.notices) };
    });
  }

  /**
   * Waits for the command's end (not awaited by the tool call): heartbeats find a dead worker,
   * and the retried attempt re-attaches. Not cancellable by a query's abort.
   */
  private supervise(taskId: string): void {
    const task = this.tasks[taskId];
    const supervising = CancellationScope.nonCancellable(() =>
      activities(
        this.options({ ...superviseCommandOptions(this.host.config), summary: `Background ${taskId}: ${oneLine(task.description, 60)}` }),
      ).superviseBackgroundCommand(this.ref(taskId)),
    );
    supervising.then(
      (outcome) => this.ended(taskId, outcome),
      (error) => {
        if (isCancellation(error)) return;
        const detail = `its supervisor failed: ${failureMessage(error)}`;
        this.ended(taskId, { taskId, status: 'interrupted', outputPath: task.outputPath, tail: '', outputBytes: 0, detail });
      },
    );
  }

  /** The outcome is recorded; one notification (unless the model stopped it itself). */
  private ended(taskId: string, outcome: BackgroundOutcome): void {
    const task = this.tasks[taskId];
    if (!task || task.status !== 'running') return;
    this.tasks[taskId] = endedTask(task, outcome, Date.now());
    this.tasks = pruneEndedTasks(this.tasks);
    if (!task.stoppedByModel)
      this.host.notify(`task:${taskId}`, taskNotificationText(outcome, `Background command "${task.description}"`), 'task-notification');
    this.host.refreshDetails();
  }

  // ---- TaskOutput / TaskStop ----

  private async taskOutput(call: ToolRouteCall): Promise<ToolOutcome> {
    const parsed = taskOutputInputSchema.safeParse(call.block.input);
    if (!parsed.success) return invalidInput(call.block.name, parsed.error.issues);
    const { task_id: taskId, block, timeout } = parsed.data;
    if (!this.tasks[taskId]) return noTaskFound(taskId);
    const result = await activities(this.options({ ...taskOutputOptions(this.host.config, block ? timeout : 0), summary: call.summary })).readTaskOutput({
      ...this.ref(taskId),
      block,
      timeout,
    });
    return { isError: false, content: result.content };
  }

  private async taskStop(call: ToolRouteCall): Promise<ToolOutcome> {
    const parsed = taskStopInputSchema.safeParse(call.block.input);
    if (!parsed.success) return invalidInput(call.block.name, parsed.error.issues);
    const taskId = parsed.data.task_id;
    const task = this.tasks[taskId];
    if (!task) return noTaskFound(taskId);
    if (task.status !== 'running') return { isError: true, content: `Task ${taskId} is not running (status: ${task.status}).` };
    task.stoppedByModel = true;
    const stopped = await this.stop(taskId, call.summary);
    if (stopped.result !== 'stopped') delete task.stoppedByModel;
    return { isError: stopped.result === 'not-found', content: stopped.message };
  }

  private stop(taskId: string, summary: string) {
    return activities(this.options({ ...SHORT_ACTIVITY_OPTIONS, summary })).stopBackgroundCommand(this.ref(taskId));
  }

  /** `end`: each running command is stopped (its supervisor then reports it killed). No command when none runs. */
  private async stopAll(): Promise<void> {
    const running = this.runningIds();
    await Promise.all(running.map((id) => this.stop(id, `Stop ${id} at the end`)));
  }
}
