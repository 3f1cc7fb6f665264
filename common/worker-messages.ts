/**
 * The signals and queries our activities exchange with a conversation (the worker's transcript
 * cache, the model activity's streamed tool calls): defined on the shared side so activities need
 * nothing from workflows/. Internal: the workflow answers them through its default handlers
 * (workflows/internal-messages.ts), so the Temporal UI does not offer them to a person;
 * workflows/definitions.ts re-exports them with every other message.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { RequestContext } from './activity-types';
import type { TranscriptMessage } from './messages';
import type { CallFacts } from './permission-facts';

/** Reported by the model activity for each tool_use block as soon as it has streamed completely. */
export interface ToolUseStreamed {
  requestId: string;
  attempt: number;
  index: number;
  block: { type: 'tool_use'; id: string; name: string; input: unknown };
  /** The call's permission facts, gathered where the tool acts (when the model call runs in the tools' process). */
  facts?: CallFacts;
}

/** Internal: the model activity reports each tool_use block as soon as it has streamed (the loop may start it early). */
export const toolUseStreamedSignal = defineSignal<[ToolUseStreamed]>('toolUseStreamed');

/** A page of the transcript (the `transcriptSlice` query's answer; workflows/transcript.ts takes it). */
export interface TranscriptSlice {
  from: number;
  digestBefore: string;
  messages: TranscriptMessage[];
  /** Total length of the transcript when the slice was taken. */
  length: number;
}

/**
 * Where a worker that misses part of a transcript in its cache gets it (model calls by
 * reference): queries write no history. Pages of at most `maxBytes` (default 1 MB), so a long
 * transcript never meets the payload limit.
 */
export const transcriptSliceQuery = defineQuery<TranscriptSlice, [{ from: number; maxBytes?: number }]>('transcriptSlice');
/** The request context (system prompt, user context, tools) with this digest, or null if it is not the current one. */
export const requestContextQuery = defineQuery<RequestContext | null, [string]>('requestContext');
