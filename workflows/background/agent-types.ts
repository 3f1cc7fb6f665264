/**
 * Background agents' types (issue 21 item 3): what the parent carries, what a child reports, what
 * `status` shows. Types only, so definitions.ts can name them without importing the workflow code.
 */
import type { Usage } from '../../common/messages';
import type { ModelUsage } from '../../common/result';
import type { Worktree } from '../../common/worktrees';

/**
 * running: working on its prompt or a message; idle: answered, alive and waiting for SendMessage;
 * ended: its workflow closed on its own (idle timeout); failed: it closed with an error; killed:
 * TaskStop or the conversation's end cancelled it.
 */
export type AgentTaskStatus = 'running' | 'idle' | 'ended' | 'failed' | 'killed';

/** One background agent as its parent records it (carried across continue-as-new). */
export interface AgentTask {
  /** The id the model uses (`a` + 8 hex characters). */
  id: string;
  description: string;
  agentType: string;
  /** The child conversation's workflow id (derived from the parent's id and the Agent call's id). */
  childWorkflowId: string;
  model: string;
  status: AgentTaskStatus;
  /** The child's query number of the last answer taken (0: none yet). */
  lastSeq: number;
  /** The last answer. */
  result?: string;
  isError?: boolean;
  /** A foreground Agent call: its child ended with its answer; SendMessage continues it in a new child. */
  foreground?: boolean;
  /** The first child's workflow id, when SendMessage continued the agent in newer children (`<first>--msg-<n>`; childWorkflowId is the newest). */
  rootWorkflowId?: string;
  /** How many times SendMessage continued it in a new child. */
  continuations?: number;
  /** `isolation: "worktree"` (issue 33): the git worktree it works in; `worktreeClosed` once it was kept or removed at the agent's end. */
  worktree?: Worktree;
  worktreeClosed?: boolean;
}

/** The parent's background agents, in the order started. */
export interface AgentTasksState {
  tasks: AgentTask[];
}

/** A background agent's answer to one input (its first prompt or a SendMessage), reported to its parent. */
export interface BackgroundAgentReport {
  agentId: string;
  /** The child's query number: the parent takes each answer once. */
  seq: number;
  result: string;
  isError: boolean;
  /** This answer's usage and cost (the parent's totals include its children's). */
  usage: Usage;
  costUsd: number;
  modelUsage?: Record<string, ModelUsage>;
}

/** One line of `status` per background agent. */
export interface BackgroundAgentSummary {
  id: string;
  description: string;
  agentType: string;
  model: string;
  status: string;
  childWorkflowId: string;
}
