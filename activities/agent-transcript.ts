/**
 * `readAgentTranscript` (issue 21 item 3): the transcript of a finished child conversation, for
 * SendMessage to continue it in a new child. It runs on the main worker because it needs the
 * Temporal client: it pages the child's `transcriptSlice` query, which Temporal answers for a
 * closed workflow by replaying it on a worker of its queue. Bounded: see common/agent-transcript.ts.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { type AgentTranscript, MAX_AGENT_TRANSCRIPT_BYTES, type ReadAgentTranscriptInput, transcriptToContinue } from '../common/agent-transcript';
import type { TranscriptMessage } from '../common/messages';
import { transcriptSliceQuery } from '../workflows/definitions';

/** One page of the query (the workflow caps it at 1 MB too). */
const PAGE_BYTES = 1_000_000;

export function createAgentTranscriptActivities(deps: { temporalClient?: Client }) {
  return {
    async readAgentTranscript(input: ReadAgentTranscriptInput): Promise<AgentTranscript> {
      if (!deps.temporalClient) {
        throw ApplicationFailure.nonRetryable('This worker has no Temporal client: an agent transcript cannot be read here', 'NoTemporalClient');
      }
      const maxBytes = Math.min(input.maxBytes ?? MAX_AGENT_TRANSCRIPT_BYTES, MAX_AGENT_TRANSCRIPT_BYTES);
      const handle = deps.temporalClient.workflow.getHandle(input.workflowId);
      const messages: TranscriptMessage[] = [];
      try {
        for (let from = 0; ; ) {
          const slice = await handle.query(transcriptSliceQuery, { from, maxBytes: PAGE_BYTES });
          messages.push(...slice.messages);
          from = slice.from + slice.messages.length;
          if (from >= slice.length || slice.messages.length === 0) break;
        }
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return { problem: `The agent's conversation ${input.workflowId} no longer exists (its history was deleted after the retention period).` };
        throw error;
      }
      return transcriptToContinue(input.workflowId, messages, maxBytes);
    },
  };
}
