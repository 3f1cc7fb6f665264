/**
 * SendMessage to a FINISHED agent (issue 21 item 3). A
 * foreground Agent call's child ends with its answer, so the parent records it as an agent (id,
 * description, type, child workflow id) and its result names the agent id. SendMessage to an
 * agent whose child has ended reads that child's transcript (`readAgentTranscript`, on the main
 * worker: a query on the closed workflow, which Temporal answers by replaying it) and starts a NEW
 * child `<first child>--msg-<n>` with `resume: { messages }` and the message as its prompt,
 * awaited like a foreground Agent call; the agent id then points at that newest child.
 */
import { uuid4 } from '@temporalio/workflow';
import type { ToolUseBlock } from '../../common/messages';
import { AGENT_TRANSCRIPT_OPTIONS, activities } from '../deps/activity-options';
import type { ToolOutcome, ToolRouteCall } from '../deps/tool-routes';
import { type PreparedSubagent, type SubagentHost, executeSubagent, isolateSubagent, prepareSubagent } from '../subagents';
import { type AgentTask, type AgentTasksState, agentTaskId } from './agent-tasks';

/** What the model is told after a foreground agent's answer: the id SendMessage takes. */
function withAgentId(outcome: ToolOutcome, task: AgentTask): ToolOutcome {
  return { ...outcome, content: `${outcome.content}\n\nagentId: ${task.id} (use SendMessage with it to continue this agent with its context)` };
}

/** Runs a foreground Agent call as before, recorded as an agent SendMessage can continue. */
export async function runForegroundAgent(host: SubagentHost, state: AgentTasksState, call: ToolRouteCall): Promise<ToolOutcome> {
  const unisolated = prepareSubagent(host, call.block);
  if (!('childInput' in unisolated)) return unisolated;
  const prepared = await isolateSubagent(host, unisolated);
  if (!('childInput' in prepared)) return prepared;
  call.entry.childWorkflowId = prepared.workflowId;
  const task: AgentTask = {
    id: agentTaskId(uuid4()),
    description: prepared.input.description,
    agentType: prepared.agentName,
    childWorkflowId: prepared.workflowId,
    model: prepared.model,
    status: 'running',
    lastSeq: 0,
    foreground: true,
    ...(prepared.worktree && { worktree: prepared.worktree }),
  };
  state.tasks.push(task);
  return withAgentId(await awaitChild(host, task, prepared), task);
}

/** SendMessage to an agent whose child has ended: a new child resumes its transcript with the message. */
export async function continueFinishedAgent(
  host: SubagentHost,
  task: AgentTask,
  message: string,
  block: ToolUseBlock,
  call: ToolRouteCall,
): Promise<ToolOutcome> {
  const transcript = await activities({
    ...AGENT_TRANSCRIPT_OPTIONS,
    summary: `Read agent ${task.id}'s transcript (${task.childWorkflowId})`,
  }).readAgentTranscript({ workflowId: task.childWorkflowId });
  if ('problem' in transcript) return { isError: true, content: `Agent ${task.id} ("${task.description}") cannot be continued: ${transcript.problem}` };
  // The same agent type, description and model; the SendMessage call's id names the start (deterministic).
  const agentCall: ToolUseBlock = {
    type: 'tool_use',
    id: block.id,
    name: 'Agent',
    input: { description: task.description, prompt: message, subagent_type: task.agentType },
  };
  const unisolated = prepareSubagent(host, agentCall);
  if (!('childInput' in unisolated)) return { isError: true, content: `Agent ${task.id} ("${task.description}") cannot be continued: ${unisolated.content}` };
  // An isolated agent goes on in its worktree (issue 33): the one kept at its end, or a fresh one of the same name.
  const prepared = task.worktree ? await isolateSubagent(host, unisolated, task.worktree.name) : unisolated;
  if (!('childInput' in prepared)) return { isError: true, content: `Agent ${task.id} ("${task.description}") cannot be continued: ${prepared.content}` };
  const root = task.rootWorkflowId ?? task.childWorkflowId;
  const continuations = (task.continuations ?? 0) + 1;
  const continued: PreparedSubagent = {
    ...prepared,
    model: task.model,
    workflowId: `${root}--msg-${continuations}`,
    staticSummary: `SendMessage → agent ${task.id} (${task.agentType}): ${task.description}`,
    childInput: {
      ...prepared.childInput,
      config: { ...prepared.childInput.config, model: task.model as typeof prepared.childInput.config.model },
      resume: { fromConversationId: task.childWorkflowId, messages: transcript.messages },
    },
  };
  task.rootWorkflowId = root;
  task.continuations = continuations;
  task.childWorkflowId = continued.workflowId;
  call.entry.childWorkflowId = continued.workflowId;
  return awaitChild(host, task, continued);
}

/** Awaits the child; the task then records its answer and that its child has ended. */
async function awaitChild(host: SubagentHost, task: AgentTask, prepared: PreparedSubagent): Promise<ToolOutcome> {
  task.status = 'running';
  let outcome: ToolOutcome;
  try {
    outcome = await executeSubagent(host, prepared);
  } catch (error) {
    // Cancelled (abort): the child was cancelled with the call.
    task.status = 'killed';
    throw error;
  }
  task.status = 'ended';
  task.lastSeq += 1;
  task.result = outcome.content;
  task.isError = outcome.isError;
  return outcome;
}
