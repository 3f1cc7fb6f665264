/**
 * `readAgentTranscript` (issue 21 item 3): the transcript of a finished child conversation, for
 * SendMessage to continue it in a new child. It runs on the main worker because it needs the
 * Temporal client: it pages the child's `transcriptSlice` query, which Temporal answers for a
 * closed workflow by replaying it on a worker of its queue. Bounded: see common/agent-transcript.ts.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { type Client, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { CancelledFailure, TerminatedFailure, TimeoutFailure } from '@temporalio/common';
import {
  type AgentTranscript,
  type AgentWorkflowClosed,
  MAX_AGENT_TRANSCRIPT_BYTES,
  type ReadAgentTranscriptInput,
  type ReadRunTranscriptInput,
  type WatchAgentInput,
  transcriptToContinue,
} from '../common/agent-transcript';
import type { TranscriptMessage } from '../common/messages';
import type { ResultMessage } from '../common/result';
import { transcriptSliceQuery } from '../common/worker-messages';

/** One page of the query (the workflow caps it at 1 MB too). */
const PAGE_BYTES = 1_000_000;

/** How often the watcher heartbeats while the child runs (its heartbeat timeout is a few times this). */
export const WATCH_HEARTBEAT_MS = 5_000;

/** How a child's run ended, from the failure its result() threw. */
export function closedBy(error: unknown): AgentWorkflowClosed | undefined {
  if (error instanceof WorkflowNotFoundError) return { status: 'gone', message: 'its workflow no longer exists' };
  if (!(error instanceof WorkflowFailedError)) return undefined;
  const cause = error.cause;
  if (cause instanceof TerminatedFailure) return { status: 'terminated', message: cause.message || 'Workflow execution terminated' };
  if (cause instanceof CancelledFailure) return { status: 'cancelled', message: cause.message || 'Workflow execution cancelled' };
  if (cause instanceof TimeoutFailure) return { status: 'timed_out', message: cause.message || 'Workflow execution timed out' };
  return { status: 'failed', message: cause?.message || error.message };
}

/** A workflow's transcript, paged by its `transcriptSlice` query (a run id: that run's, even closed). */
async function readTranscript(client: Client, workflowId: string, runId?: string): Promise<TranscriptMessage[]> {
  const handle = client.workflow.getHandle(workflowId, runId);
  const messages: TranscriptMessage[] = [];
  for (let from = 0; ;) {
    const slice = await handle.query(transcriptSliceQuery, { from, maxBytes: PAGE_BYTES });
    messages.push(...slice.messages);
    from = slice.from + slice.messages.length;
    if (from >= slice.length || slice.messages.length === 0) break;
  }
  return messages;
}

export function createAgentTranscriptActivities(deps: { temporalClient?: Client }) {
  return {
    async readAgentTranscript(input: ReadAgentTranscriptInput): Promise<AgentTranscript> {
      if (!deps.temporalClient) {
        throw ApplicationFailure.nonRetryable('This worker has no Temporal client: an agent transcript cannot be read here', 'NoTemporalClient');
      }
      const maxBytes = Math.min(input.maxBytes ?? MAX_AGENT_TRANSCRIPT_BYTES, MAX_AGENT_TRANSCRIPT_BYTES);
      let messages: TranscriptMessage[];
      try {
        messages = await readTranscript(deps.temporalClient, input.workflowId);
      } catch (error) {
        if (error instanceof WorkflowNotFoundError)
          return { problem: `The agent's conversation ${input.workflowId} no longer exists (its history was deleted after the retention period).` };
        throw error;
      }
      return transcriptToContinue(input.workflowId, messages, maxBytes);
    },

    /**
     * Issue 31, a rewind past a compaction of an earlier run: the transcript of the run that
     * recorded the prompt (its query, answered for a closed run by replaying it), up to the prompt.
     */
    async readRunTranscript(input: ReadRunTranscriptInput): Promise<AgentTranscript> {
      if (!deps.temporalClient) {
        throw ApplicationFailure.nonRetryable('This worker has no Temporal client: an earlier run cannot be read here', 'NoTemporalClient');
      }
      let messages: TranscriptMessage[];
      try {
        messages = await readTranscript(deps.temporalClient, input.workflowId, input.runId);
      } catch (error) {
        if (error instanceof WorkflowNotFoundError)
          return { problem: `The run ${input.runId} no longer exists (its history was deleted after the retention period).` };
        throw error;
      }
      const index = messages.findIndex((message) => message.uuid === input.beforeUuid);
      if (index < 0) return { problem: `The run ${input.runId} does not hold the prompt ${input.beforeUuid}.` };
      const before = messages.slice(0, index);
      const bytes = new TextEncoder().encode(JSON.stringify(before)).length;
      if (bytes > MAX_AGENT_TRANSCRIPT_BYTES) {
        return { problem: `The conversation before that prompt is ${bytes} bytes, more than the ${MAX_AGENT_TRANSCRIPT_BYTES} a rewind can bring back.` };
      }
      return { messages: before, bytes };
    },

    async watchAgentWorkflow(input: WatchAgentInput): Promise<AgentWorkflowClosed> {
      if (!deps.temporalClient) {
        throw ApplicationFailure.nonRetryable('This worker has no Temporal client: an agent cannot be watched here', 'NoTemporalClient');
      }
      const context = Context.current();
      const client = deps.temporalClient;
      // The latest run, following the child's own continue-as-new chain.
      const handle = client.workflow.getHandle(input.workflowId);
      context.heartbeat();
      const beating = setInterval(() => context.heartbeat(), WATCH_HEARTBEAT_MS);
      try {
        // The long poll is bound to the activity's cancellation and settles before the activity does: none is left
        // retrying on a connection a stopping worker closes.
        const summary = (await client.withAbortSignal(context.cancellationSignal, () => handle.result())) as { lastResult?: ResultMessage } | undefined;
        return summary?.lastResult ? { status: 'completed', lastResult: summary.lastResult } : { status: 'completed' };
      } catch (error) {
        if (context.cancellationSignal.aborted) throw error;
        const closed = closedBy(error);
        if (closed) return closed;
        throw error;
      } finally {
        clearInterval(beating);
      }
    },
  };
}
