/**
 * Background agents and SendMessage (issue 21 item 3). `Agent {…, run_in_background: true}` starts
 * the child conversation workflow without waiting and returns at once; the child answers its
 * parent by a `backgroundAgentFinished` signal to the parent's workflow id (stable across the
 * parent's continue-as-new, unlike a child handle) and stays, waiting for input, so `SendMessage`
 * continues it with its transcript intact: the message is the child's next `userInput`. Each
 * answer comes back once: as a `<task-notification>` (session.notify, one key per answer), or as
 * SendMessage's tool result when that call waits for it. TaskOutput / TaskStop take agent ids;
 * the conversation's end cancels the agents still there. Bookkeeping: agent-tasks.ts (pure).
 */
import {
  CancellationScope,
  ChildWorkflowCancellationType,
  type ChildWorkflowHandle,
  ParentClosePolicy,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  startChild,
  uuid4,
} from '@temporalio/workflow';
import type { AgentWorkflowClosed } from '../../common/agent-transcript';
import type { ToolUseBlock } from '../../common/messages';
import { sendMessageInputSchema } from '../../common/tools/send-message';
import { taskOutputInputSchema } from '../../common/tools/task-output';
import { taskStopInputSchema } from '../../common/tools/task-stop';
import type { BackgroundAgentReport, BackgroundAgentSummary } from './agent-types';
import { type ConversationInput, type ConversationSummary, userInputSignal } from '../definitions';
import { WATCH_AGENT_OPTIONS, activities } from '../deps/activity-options';
import { failureMessage } from '../deps/failures';
import type { ToolOutcome, ToolRoute, ToolRouteCall } from '../deps/tool-routes';
import type { BackgroundWorkKind, PartContext, PartInternalHandlers, SessionPart } from '../session/session-part';
import { continueFinishedAgent, runForegroundAgent } from './finished-agents';
import { type SubagentHost, childFailureMessage, closeSubagentWorktree, isolateSubagent, prepareSubagent } from '../subagents';
import {
  type AgentTask,
  type AgentTasksState,
  agentNotificationKey,
  agentNotificationText,
  agentTaskId,
  agentTaskOutputText,
  findAgentTask,
  isAgentReport,
  isAlive,
  launchedText,
  shownStatus,
  takeReport,
} from './agent-tasks';

/** What background agents use of the conversation: what a subagent's launch needs, and notifications (session/session-part.ts). */
type BackgroundAgentsContext = SubagentHost & Pick<PartContext, 'notify'>;

/** The input's `run_in_background` flag, read before the input is checked (routing decides on the call alone). */
function runsInBackground(block: ToolUseBlock): boolean {
  return (block.input as { run_in_background?: unknown } | null)?.run_in_background === true;
}

function taskIdOf(block: ToolUseBlock): string | undefined {
  const taskId = (block.input as { task_id?: unknown } | null)?.task_id;
  return typeof taskId === 'string' ? taskId : undefined;
}

export class BackgroundAgents implements SessionPart {
  readonly name = 'background agents';
  private readonly state: AgentTasksState;
  /** SendMessage calls waiting for an answer: agent id → the last answer's number when the message went. */
  private readonly awaitingAnswer = new Map<string, number>();
  /** The background Agent call, SendMessage, and TaskOutput / TaskStop for agent ids (before the background commands' route). */
  readonly routes: readonly ToolRoute[] = [
    {
      name: 'background agents',
      takes: (block) => block.name === 'Agent' && runsInBackground(block),
      run: (call) => this.launch(call),
    },
    {
      name: 'foreground agents',
      // Recorded so SendMessage can continue them (finished-agents.ts).
      takes: (block) => block.name === 'Agent' && !runsInBackground(block),
      run: (call) => runForegroundAgent(this.host, this.state, call),
    },
    {
      name: 'SendMessage',
      takes: (block) => block.name === 'SendMessage',
      run: (call) => this.sendMessage(call.block, call),
    },
    {
      name: 'background agent tasks',
      takes: (block) => (block.name === 'TaskOutput' || block.name === 'TaskStop') && this.state.tasks.some((task) => task.id === taskIdOf(block)),
      run: (call) => (call.block.name === 'TaskOutput' ? this.taskOutput(call.block) : this.taskStop(call.block)),
    },
  ];
  /** The work kind the end stops. */
  readonly backgroundWork: readonly BackgroundWorkKind[] = [
    {
      name: 'background agents',
      pending: () => this.state.tasks.some((task) => task.status === 'running'),
      onEnd: () => this.stopAll(),
    },
  ];
  readonly internalHandlers: PartInternalHandlers = { backgroundAgentFinished: (report) => this.onFinished(report) };

  constructor(
    private readonly host: BackgroundAgentsContext,
    carried: AgentTasksState | undefined,
  ) {
    this.state = { tasks: (carried?.tasks ?? []).map((task) => ({ ...task })) };
    // After continue-as-new this run has no handle on the agents' children: a watcher waits for each, so one
    // terminated or failed from outside is reported (and stops holding off the idle timeout) instead of waited for forever.
    for (const task of this.state.tasks.filter((task) => !task.foreground && isAlive(task))) this.watch(task);
  }

  /** For continue-as-new (nothing when no agent was ever started). */
  carried(): { backgroundAgents?: AgentTasksState } {
    return this.state.tasks.length > 0 ? { backgroundAgents: { tasks: this.state.tasks.map((task) => ({ ...task })) } } : {};
  }

  /** For `status`: every background agent of the conversation, or nothing. */
  status(): { backgroundAgents?: BackgroundAgentSummary[] } {
    // Foreground agents (recorded for SendMessage) show as the Agent calls they were.
    const background = this.state.tasks.filter((task) => !task.foreground);
    if (background.length === 0) return {};
    return {
      backgroundAgents: background.map((task) => ({
        id: task.id,
        description: task.description,
        agentType: task.agentType,
        model: task.model,
        status: task.status === 'idle' ? `${shownStatus(task)} (waiting for SendMessage)` : task.status,
        childWorkflowId: task.childWorkflowId,
      })),
    };
  }

  /** `backgroundAgentFinished` signal: an agent answered. Taken once; a SendMessage waiting for it gets it, else a notification. */
  onFinished(report: BackgroundAgentReport): void {
    if (!isAgentReport(report)) {
      log.warn('Dropped malformed backgroundAgentFinished signal', { received: report });
      return;
    }
    const before = this.state.tasks.find((task) => task.id === report.agentId)?.lastSeq;
    const task = takeReport(this.state, report);
    if (before !== undefined && report.seq > before) this.host.recordChildUsage(report.usage, report.costUsd, report.modelUsage);
    if (!task) return;
    const waiting = this.awaitingAnswer.get(task.id);
    if (waiting !== undefined && report.seq > waiting) return; // SendMessage's result carries it
    this.host.notify(agentNotificationKey(task.id, report.seq), agentNotificationText(task, report), 'task-notification');
  }

  // ---- Agent {run_in_background: true} ----

  private async launch(call: ToolRouteCall): Promise<ToolOutcome> {
    const agentId = agentTaskId(uuid4());
    const unisolated = prepareSubagent(this.host, call.block, { agentId });
    if (!('childInput' in unisolated)) return unisolated;
    const prepared = await isolateSubagent(this.host, unisolated);
    if (!('childInput' in prepared)) return prepared;
    call.entry.childWorkflowId = prepared.workflowId;
    // Recorded before the start: the child's first answer may arrive in the same activation as its start.
    const task: AgentTask = {
      id: agentId,
      description: prepared.input.description,
      agentType: prepared.agentName,
      childWorkflowId: prepared.workflowId,
      model: prepared.model,
      status: 'running',
      lastSeq: 0,
      ...(prepared.worktree && { worktree: prepared.worktree }),
    };
    this.state.tasks.push(task);
    let handle: ChildWorkflowHandle<(input: ConversationInput) => Promise<ConversationSummary>>;
    try {
      // Not in the query's scope: an abort of this query leaves the agent running (as Claude Code).
      handle = await CancellationScope.nonCancellable(() =>
        startChild<(input: ConversationInput) => Promise<ConversationSummary>>('conversationWorkflow', {
          workflowId: prepared.workflowId,
          args: [prepared.childInput],
          staticSummary: prepared.staticSummary,
          cancellationType: ChildWorkflowCancellationType.ABANDON,
          // The parent's continue-as-new closes its run: the agent must outlive that. The parent stops it at `end`.
          parentClosePolicy: ParentClosePolicy.ABANDON,
          typedSearchAttributes: prepared.typedSearchAttributes,
        }),
      );
    } catch (error) {
      task.status = 'failed';
      return { isError: true, content: `The ${prepared.agentName} agent could not start: ${childFailureMessage(error)}` };
    }
    // In this run the child's close is seen too: an agent that ends without having answered is reported once.
    void handle.result().then(
      (summary) => this.onChildClosed(task.id, summary),
      (error: unknown) => this.onChildFailed(task.id, error),
    );
    return { isError: false, content: launchedText(task) };
  }

  /** After continue-as-new: waits for the agent's child to close (watchAgentWorkflow), then as if this run had started it. */
  private watch(task: AgentTask): void {
    const watching = CancellationScope.nonCancellable(() =>
      activities({ ...WATCH_AGENT_OPTIONS, summary: `Watch agent ${task.id}: ${task.description}` }).watchAgentWorkflow({ workflowId: task.childWorkflowId }),
    );
    watching.then(
      (closed) => this.onChildClosedElsewhere(task.id, closed),
      (error: unknown) => {
        if (!isCancellation(error)) log.warn('Stopped watching a background agent', { agentId: task.id, error: failureMessage(error) });
      },
    );
  }

  private onChildClosedElsewhere(agentId: string, closed: AgentWorkflowClosed): void {
    if (closed.status === 'completed') this.onChildClosed(agentId, { lastResult: closed.lastResult });
    else this.childEndedWithoutAnswer(agentId, closed.message, closed.status === 'cancelled');
  }

  private onChildClosed(agentId: string, summary: Pick<ConversationSummary, 'lastResult'>): void {
    const task = this.state.tasks.find((candidate) => candidate.id === agentId);
    if (!task) return;
    const result = summary.lastResult;
    // Its answer's signal did not arrive (a parent busy continuing as new when it was sent): the result says it.
    if (task.lastSeq === 0 && result) {
      this.onFinished({
        agentId,
        seq: 1,
        result: result.result,
        isError: result.is_error,
        usage: result.usage,
        costUsd: result.total_cost_usd,
        modelUsage: result.modelUsage,
      });
    }
    if (isAlive(task)) task.status = 'ended';
    void this.closeWorktree(task);
  }

  private onChildFailed(agentId: string, error: unknown): void {
    this.childEndedWithoutAnswer(agentId, childFailureMessage(error), isCancellation(error));
  }

  private childEndedWithoutAnswer(agentId: string, message: string, cancelled: boolean): void {
    const task = this.state.tasks.find((candidate) => candidate.id === agentId);
    if (!task || !isAlive(task)) return; // stopped by TaskStop or the end: nothing to tell
    const wasRunning = task.status === 'running';
    task.status = 'failed';
    void this.closeWorktree(task);
    if (!wasRunning || cancelled) return;
    const answer = { result: `The agent stopped with an error: ${message}`, isError: true };
    task.result = answer.result;
    task.isError = true;
    this.host.notify(agentNotificationKey(agentId, 'closed'), agentNotificationText(task, answer), 'task-notification');
  }

  // ---- SendMessage ----

  private async sendMessage(block: ToolUseBlock, call: ToolRouteCall): Promise<ToolOutcome> {
    const parsed = sendMessageInputSchema.safeParse(block.input);
    if (!parsed.success) {
      return {
        isError: true,
        content: `Invalid SendMessage input: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`).join('; ')}`,
      };
    }
    const found = findAgentTask(this.state, parsed.data.to);
    if ('problem' in found) return { isError: true, content: found.problem };
    const task = found.task;
    // Its child ended (a foreground agent answered, a background one timed out idle): a new child continues its transcript.
    if (task.status === 'ended') return continueFinishedAgent(this.host, task, parsed.data.message, block, call);
    // A foreground agent still answering its Agent call (a call beside it): it reports by its result, not by notification.
    if (task.foreground && task.status === 'running') {
      return {
        isError: true,
        content: `Agent ${task.id} ("${task.description}") is still answering its Agent call; send the message after that call returns.`,
      };
    }
    if (!isAlive(task)) {
      return {
        isError: true,
        content: `Agent ${task.id} ("${task.description}") has ${task.status === 'killed' ? 'been stopped' : task.status}; it cannot take messages. Start a new agent instead.`,
      };
    }
    const wasRunning = task.status === 'running';
    const after = task.lastSeq;
    try {
      await getExternalWorkflowHandle(task.childWorkflowId).signal(userInputSignal, { prompt: parsed.data.message });
    } catch (error) {
      if (isCancellation(error)) throw error;
      // Its workflow is gone (it timed out idle, or was stopped from outside): continued from its transcript.
      task.status = 'ended';
      return continueFinishedAgent(this.host, task, parsed.data.message, block, call);
    }
    if (wasRunning) {
      return {
        isError: false,
        content: `Message sent to agent ${task.id} ("${task.description}"), which is still working: it reads the message before its next step, and its answer comes as a notification when it finishes.`,
      };
    }
    // It was waiting: it works on the message now, and this call waits for its answer (abort stops the waiting, not the agent).
    task.status = 'running';
    this.awaitingAnswer.set(task.id, after);
    try {
      await condition(() => task.lastSeq > after || !isAlive(task));
    } finally {
      this.awaitingAnswer.delete(task.id);
    }
    if (task.lastSeq <= after) return { isError: true, content: `Agent ${task.id} ("${task.description}") ${task.status} before answering.` };
    return { isError: task.isError === true, content: task.result?.trim() ? task.result : `Agent ${task.id} finished without a final message.` };
  }

  // ---- TaskOutput / TaskStop for agent ids ----

  private async taskOutput(block: ToolUseBlock): Promise<ToolOutcome> {
    const parsed = taskOutputInputSchema.safeParse(block.input);
    if (!parsed.success) {
      return {
        isError: true,
        content: `Invalid TaskOutput input: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`).join('; ')}`,
      };
    }
    const task = this.state.tasks.find((candidate) => candidate.id === parsed.data.task_id)!;
    let timedOut = false;
    if (parsed.data.block && task.status === 'running') {
      timedOut = !(await condition(() => task.status !== 'running', parsed.data.timeout, { summary: `TaskOutput: waiting for agent ${task.id}` }));
    }
    return { isError: false, content: agentTaskOutputText(task, timedOut) };
  }

  private async taskStop(block: ToolUseBlock): Promise<ToolOutcome> {
    const parsed = taskStopInputSchema.safeParse(block.input);
    if (!parsed.success) return { isError: true, content: `Invalid TaskStop input: ${parsed.error.issues.map((issue) => issue.message).join('; ')}` };
    const task = this.state.tasks.find((candidate) => candidate.id === parsed.data.task_id)!;
    if (!isAlive(task))
      return {
        isError: false,
        content: `Agent ${task.id} ("${task.description}") already ${task.status === 'killed' ? 'stopped' : task.status}; nothing to stop.`,
      };
    const worktree = await this.stop(task);
    return { isError: false, content: `Stopped agent ${task.id} ("${task.description}").${worktree ? `\n\n${worktree}` : ''}` };
  }

  /**
   * Cancels the agent's workflow (it may have closed on its own meanwhile: then there is nothing to
   * cancel); an isolated agent's worktree is then kept or removed, and what became of it returned.
   */
  private async stop(task: AgentTask): Promise<string | undefined> {
    task.status = 'killed';
    try {
      await CancellationScope.nonCancellable(() => getExternalWorkflowHandle(task.childWorkflowId).cancel());
    } catch (error) {
      log.info('Background agent was already gone when stopped', { agentId: task.id, error: String(error) });
    }
    return this.closeWorktree(task);
  }

  /** An isolated agent's end (issue 33): its worktree kept with changes, removed without — once. */
  private async closeWorktree(task: AgentTask): Promise<string | undefined> {
    if (!task.worktree || task.worktreeClosed) return undefined;
    task.worktreeClosed = true;
    return closeSubagentWorktree(this.host, task.worktree);
  }

  /** The conversation ends: every agent still there is cancelled (none: no command). */
  private async stopAll(): Promise<void> {
    for (const task of this.state.tasks.filter(isAlive)) await this.stop(task);
  }
}
