/**
 * Background agents' bookkeeping (issue 21 item 3), pure: the parent's record of each agent it
 * started with `run_in_background`, which answer it has taken, and the texts the model sees (the
 * launch result, the `<task-notification>`, TaskOutput). No Temporal imports: unit-tested in
 * test/unit/background-agents.test.ts; workflows/background/agents.ts does the effects.
 */
import type { AgentTask, AgentTasksState, BackgroundAgentReport } from './agent-types';
import { worktreeWorkingText } from '../../common/worktrees';

export type { AgentTask, AgentTaskStatus, AgentTasksState } from './agent-types';

/** The agent id for a fresh uuid (deterministic in the workflow: `uuid4()`). */
export function agentTaskId(uuid: string): string {
  return `a${uuid.replace(/-/g, '').slice(0, 8)}`;
}

/** Whether the agent's workflow is (as far as the parent knows) still there to take a message. */
export function isAlive(task: AgentTask): boolean {
  return task.status === 'running' || task.status === 'idle';
}

/** `to` of SendMessage (or a task id): the agent by id, child workflow id, or — when it names exactly one — description or type. */
export function findAgentTask(state: AgentTasksState, to: string): { task: AgentTask } | { problem: string } {
  const wanted = to.trim();
  const exact = state.tasks.find((task) => task.id === wanted || task.childWorkflowId === wanted);
  if (exact) return { task: exact };
  const lower = wanted.toLowerCase();
  const byName = state.tasks.filter((task) => task.description.toLowerCase() === lower);
  const candidates = byName.length > 0 ? byName : state.tasks.filter((task) => task.agentType.toLowerCase() === lower);
  if (candidates.length === 1) return { task: candidates[0]! };
  const known = state.tasks.map((task) => `${task.id} ("${task.description}", ${task.status})`).join(', ') || 'none';
  if (candidates.length > 1) return { problem: `"${to}" names ${candidates.length} agents; use the agent id. Background agents: ${known}.` };
  return { problem: `No background agent "${to}" in this conversation. Background agents: ${known}.` };
}

/**
 * A report from a child: taken once (a repeat, a report for an agent not known, or one after it
 * was stopped returns undefined). The task moves to `idle`: it answered and waits for a message.
 */
export function takeReport(state: AgentTasksState, report: BackgroundAgentReport): AgentTask | undefined {
  const task = state.tasks.find((candidate) => candidate.id === report.agentId);
  if (!task || report.seq <= task.lastSeq) return undefined;
  task.lastSeq = report.seq;
  task.result = report.result;
  task.isError = report.isError;
  if (task.status === 'killed') return undefined;
  if (task.status === 'running') task.status = 'idle';
  return task;
}

/** Whether a signal's payload is a report (signals cannot reply: a malformed one is dropped). */
export function isAgentReport(value: unknown): value is BackgroundAgentReport {
  const report = value as Partial<BackgroundAgentReport> | null;
  return (
    typeof report === 'object' &&
    report !== null &&
    typeof report.agentId === 'string' &&
    typeof report.seq === 'number' &&
    typeof report.result === 'string' &&
    typeof report.isError === 'boolean' &&
    typeof report.costUsd === 'number' &&
    typeof report.usage === 'object' &&
    report.usage !== null
  );
}

/** The key of a notification: one per answer of an agent (the first is `agent:<id>`). */
export function agentNotificationKey(agentId: string, seq: number | 'closed'): string {
  return seq === 1 ? `agent:${agentId}` : `agent:${agentId}:${seq}`;
}

/** The tool result of a background Agent call (Claude Code's "Async agent launched successfully", in our words). */
export function launchedText(task: AgentTask): string {
  return [
    'Async agent launched successfully.',
    `agentId: ${task.id} (use it with SendMessage to continue this agent, TaskOutput to read its result, TaskStop to stop it)`,
    `The agent "${task.description}" is working in the background on ${task.model}. You will be notified with its result when it finishes — do not poll, and do not duplicate its work; continue with other tasks meanwhile.`,
    ...(task.worktree ? [worktreeWorkingText(task.worktree)] : []),
  ].join('\n');
}

/** What the model is told when an agent answered (a `<task-notification>`, as for background commands). */
export function agentNotificationText(task: AgentTask, answer: { result: string; isError: boolean }): string {
  const status = answer.isError ? 'failed' : 'completed';
  return [
    '<task-notification>',
    `<task-id>${task.id}</task-id>`,
    `<status>${status}</status>`,
    `<summary>Agent "${task.description}" ${status}</summary>`,
    '<result>',
    answer.result.trim() === '' ? '(the agent finished without a final message)' : answer.result,
    '</result>',
    // Claude Code's notification of an isolated agent names its worktree.
    ...(task.worktree
      ? ['<worktree>', `<worktreePath>${task.worktree.path}</worktreePath>`, `<worktreeBranch>${task.worktree.branch}</worktreeBranch>`, '</worktree>']
      : []),
    '</task-notification>',
  ].join('\n');
}

/** The status TaskOutput shows (Claude Code's words: an idle agent has completed its task). */
export function shownStatus(task: AgentTask): string {
  if (task.status === 'running' || task.status === 'killed') return task.status;
  if (task.status === 'failed' || task.isError) return 'failed';
  return 'completed';
}

/** TaskOutput for an agent: its status and last answer, in the shape TaskOutput has for commands. */
export function agentTaskOutputText(task: AgentTask, timedOut: boolean): string {
  const lines = [
    `<retrieval_status>${timedOut ? 'timeout' : task.status === 'running' ? 'not_ready' : 'success'}</retrieval_status>`,
    `<task_id>${task.id}</task_id>`,
    '<task_type>local_agent</task_type>',
    `<status>${shownStatus(task)}</status>`,
  ];
  if (task.result !== undefined) lines.push('<output>', task.result, '</output>');
  return lines.join('\n');
}
