/**
 * The task list of Claude Code's TaskCreate / TaskGet / TaskList / TaskUpdate (pure; the workflow
 * bundle imports it). The state is one serializable object the conversation carries across
 * continue-as-new (style §19); `applyTaskCall` is the only thing that changes it, and returns the
 * text result the model reads (tool failures are data: an unknown id is an error result).
 */
import type { TaskCreateInput } from './tools/task-create';
import type { TaskGetInput } from './tools/task-get';
import type { TaskListInput } from './tools/task-list';
import type { TaskUpdateInput } from './tools/task-update';

export const TASK_STATUSES = ['pending', 'in_progress', 'completed'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export interface Task {
  /** "1", "2", … in creation order, never reused (as Claude Code's). */
  id: string;
  subject: string;
  description: string;
  /** Present-continuous form shown while in progress ("Running tests"). */
  activeForm?: string;
  status: TaskStatus;
  /** Ids of tasks that cannot start until this one completes. */
  blocks: string[];
  /** Ids of tasks that must complete before this one can start. */
  blockedBy: string[];
  owner?: string;
  metadata?: Record<string, unknown>;
}

export interface TaskListState {
  nextId: number;
  tasks: Task[];
}

export function emptyTaskList(): TaskListState {
  return { nextId: 1, tasks: [] };
}

/** A task tool call, its input as the tool's schema parsed it. */
export type TaskCall =
  | { name: 'TaskCreate'; input: TaskCreateInput }
  | { name: 'TaskGet'; input: TaskGetInput }
  | { name: 'TaskList'; input: TaskListInput }
  | { name: 'TaskUpdate'; input: TaskUpdateInput };

export interface TaskCallResult {
  state: TaskListState;
  content: string;
  isError: boolean;
}

/** `#3` or `3` → `3`: models write both. */
export function normalizeTaskId(id: string): string {
  return id.trim().replace(/^#/, '');
}

function openBlockers(state: TaskListState, task: Task): string[] {
  return task.blockedBy.filter((id) => state.tasks.find((other) => other.id === id)?.status !== 'completed');
}

function describeTask(state: TaskListState, task: Task): string {
  const lines = [`Task #${task.id}: ${task.subject}`, `Status: ${task.status}`];
  if (task.owner) lines.push(`Owner: ${task.owner}`);
  if (task.activeForm) lines.push(`Active form: ${task.activeForm}`);
  lines.push(`Description: ${task.description || '(none)'}`);
  const blockers = openBlockers(state, task);
  if (blockers.length > 0) lines.push(`Blocked by: ${blockers.map((id) => `#${id}`).join(', ')}`);
  if (task.blocks.length > 0) lines.push(`Blocks: ${task.blocks.map((id) => `#${id}`).join(', ')}`);
  return lines.join('\n');
}

/** One line per task, as TaskList shows them (also what `status` and the chat can print). */
export function taskListLines(state: TaskListState): string[] {
  return state.tasks.map((task) => {
    const blockers = openBlockers(state, task);
    return (
      `#${task.id} [${task.status}] ${task.subject}` +
      (task.owner ? ` (owner: ${task.owner})` : '') +
      (blockers.length > 0 ? ` [blocked by ${blockers.map((id) => `#${id}`).join(', ')}]` : '')
    );
  });
}

function error(state: TaskListState, content: string): TaskCallResult {
  return { state, content, isError: true };
}

function mergeMetadata(current: Record<string, unknown> | undefined, patch: Record<string, unknown>): Record<string, unknown> | undefined {
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return Object.keys(merged).length > 0 ? merged : undefined;
}

/** Applies one task tool call (input already validated by its schema). Never mutates `state`. */
export function applyTaskCall(state: TaskListState, call: TaskCall): TaskCallResult {
  switch (call.name) {
    case 'TaskCreate': {
      const id = String(state.nextId);
      const task: Task = {
        id,
        subject: call.input.subject,
        description: call.input.description,
        ...(call.input.activeForm ? { activeForm: call.input.activeForm } : {}),
        status: 'pending',
        blocks: [],
        blockedBy: [],
        ...(call.input.metadata && Object.keys(call.input.metadata).length > 0 ? { metadata: call.input.metadata } : {}),
      };
      return {
        state: { nextId: state.nextId + 1, tasks: [...state.tasks, task] },
        content: `Task #${id} created successfully: ${task.subject}`,
        isError: false,
      };
    }
    case 'TaskGet': {
      const id = normalizeTaskId(call.input.taskId);
      const task = state.tasks.find((candidate) => candidate.id === id);
      if (!task) return error(state, `Task #${id} not found`);
      return { state, content: describeTask(state, task), isError: false };
    }
    case 'TaskList': {
      const lines = taskListLines(state);
      return { state, content: lines.length > 0 ? lines.join('\n') : 'No tasks found', isError: false };
    }
    case 'TaskUpdate': {
      const { input } = call;
      const id = normalizeTaskId(input.taskId);
      const task = state.tasks.find((candidate) => candidate.id === id);
      if (!task) return error(state, `Task #${id} not found`);
      if (input.status === 'deleted') {
        const tasks = state.tasks
          .filter((candidate) => candidate.id !== id)
          .map((other) => ({ ...other, blocks: other.blocks.filter((ref) => ref !== id), blockedBy: other.blockedBy.filter((ref) => ref !== id) }));
        return { state: { ...state, tasks }, content: `Task #${id} deleted`, isError: false };
      }
      const addBlocks = (input.addBlocks ?? []).map(normalizeTaskId);
      const addBlockedBy = (input.addBlockedBy ?? []).map(normalizeTaskId);
      for (const ref of [...addBlocks, ...addBlockedBy]) {
        if (ref === id) return error(state, `Task #${id} cannot block itself`);
        if (!state.tasks.some((candidate) => candidate.id === ref)) return error(state, `Task #${ref} not found`);
      }
      const updated: string[] = [];
      const next: Task = { ...task, blocks: [...task.blocks], blockedBy: [...task.blockedBy] };
      for (const field of ['subject', 'description', 'activeForm', 'status', 'owner'] as const) {
        const value = input[field];
        if (value !== undefined && value !== task[field]) {
          (next as unknown as Record<string, unknown>)[field] = value;
          updated.push(field);
        }
      }
      if (input.metadata !== undefined) {
        const metadata = mergeMetadata(task.metadata, input.metadata);
        if (metadata === undefined) delete next.metadata;
        else next.metadata = metadata;
        updated.push('metadata');
      }
      // Dependencies are kept on both sides, so TaskGet of either task shows them.
      const links: Array<[blocker: string, blocked: string]> = [
        ...addBlocks.map((ref) => [id, ref] as [string, string]),
        ...addBlockedBy.map((ref) => [ref, id] as [string, string]),
      ];
      let tasks = state.tasks.map((candidate) => (candidate.id === id ? next : candidate));
      let linked = false;
      for (const [blocker, blocked] of links) {
        tasks = tasks.map((candidate) => {
          if (candidate.id === blocker && !candidate.blocks.includes(blocked)) {
            linked = true;
            return { ...candidate, blocks: [...candidate.blocks, blocked] };
          }
          if (candidate.id === blocked && !candidate.blockedBy.includes(blocker)) {
            linked = true;
            return { ...candidate, blockedBy: [...candidate.blockedBy, blocker] };
          }
          return candidate;
        });
      }
      if (addBlocks.length > 0 && linked) updated.push('blocks');
      if (addBlockedBy.length > 0 && linked) updated.push('blockedBy');
      return {
        state: { ...state, tasks },
        content: updated.length > 0 ? `Updated task #${id} ${updated.join(', ')}` : `Task #${id} unchanged`,
        isError: false,
      };
    }
  }
}
