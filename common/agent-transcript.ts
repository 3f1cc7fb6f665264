/**
 * SendMessage to a finished agent (issue 21 item 3): what the `readAgentTranscript` activity
 * returns, and the pure cut it makes — the last compact boundary and what follows, as
 * `start --resume` carries, within a cap so the new child's start input stays under Temporal's
 * payload limit. Pure: unit-tested in test/unit/agent-transcript.test.ts.
 */
import type { TranscriptMessage } from './messages';
import type { ResultMessage } from './result';

/** The most a finished agent's transcript may weigh to be continued (as `start --resume`: client/commands/transcript.ts). */
export const MAX_AGENT_TRANSCRIPT_BYTES = 1_500_000;

export interface ReadAgentTranscriptInput {
  /** The finished child conversation's workflow id. */
  workflowId: string;
  /** At most this many bytes (JSON) are returned; default and ceiling MAX_AGENT_TRANSCRIPT_BYTES. */
  maxBytes?: number;
}

/** A run's transcript before one of its messages (issue 31: a rewind past an earlier run's compaction). */
export interface ReadRunTranscriptInput {
  workflowId: string;
  runId: string;
  beforeUuid: string;
}

/** The transcript to resume from, or why it cannot be (a tool result the model can act on). */
export type AgentTranscript = { messages: TranscriptMessage[]; bytes: number } | { problem: string };

/** The last compact boundary and what follows it, or a problem when that is more than `maxBytes`. */
export function transcriptToContinue(workflowId: string, messages: readonly TranscriptMessage[], maxBytes: number): AgentTranscript {
  let boundary = messages.length - 1;
  while (boundary >= 0 && messages[boundary]!.type !== 'compact_boundary') boundary--;
  const carried = messages.slice(Math.max(0, boundary));
  if (carried.length === 0) return { problem: `The agent's conversation ${workflowId} has no messages to continue from.` };
  const bytes = new TextEncoder().encode(JSON.stringify(carried)).length;
  if (bytes > maxBytes) {
    return {
      problem:
        `The agent's transcript (${workflowId}) is ${(bytes / 1e6).toFixed(1)} MB since its last compaction, more than an agent can be continued with ` +
        `(${(maxBytes / 1e6).toFixed(1)} MB). Start a new agent and give it what it needs in its prompt.`,
    };
  }
  return { messages: carried, bytes };
}

/** `watchAgentWorkflow`: the agent's child conversation to wait for (its latest run). */
export interface WatchAgentInput {
  workflowId: string;
}

/**
 * How an agent's child conversation closed, seen by a parent run that did not start it (after the
 * parent continued as new it has no handle on the child; the watcher waits for it instead).
 */
export type AgentWorkflowClosed =
  { status: 'completed'; lastResult?: ResultMessage } | { status: 'failed' | 'terminated' | 'timed_out' | 'cancelled' | 'gone'; message: string };
