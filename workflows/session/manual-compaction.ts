/**
 * Manual compaction (`compact` update, Claude Code's `/compact [instructions]`), between queries:
 * the loop's own compaction (`compactTranscript`, workflows/compaction/summary.ts) with the user's
 * instructions, through the same compaction call as autocompact's (deps/compact-call.ts). It runs
 * as the conversation's query (`query`: an abort cancels it); the caller records the outcome.
 */
import { uuid4 } from '@temporalio/workflow';
import type { ActiveQuery } from '../query/active-query';
import { thresholdsForModel, tokenCountWithEstimation } from '../compaction/auto';
import { type CompactOutcome, compactTranscript } from '../compaction/summary';
import type { CompactionOutcome } from '../definitions';
import { compactConversation } from '../deps/compact-call';
import type { SubmitHost } from './submit-message';

export async function compactNow(
  queries: Pick<
    SubmitHost,
    'conversationId' | 'config' | 'currentModel' | 'currentRequestContext' | 'recordUsage' | 'setPhase' | 'sessionContext' | 'hooks' | 'transcript' | 'consume'
  >,
  query: ActiveQuery,
  instructions: string | undefined,
  /** Records the outcome (a success closes the breaker; a failure does not count toward it). */
  record: (outcome: CompactOutcome) => CompactionOutcome,
): Promise<CompactionOutcome> {
  const preTokens = tokenCountWithEstimation(queries.transcript.messages);
  const generator = compactTranscript(
    queries.transcript,
    { uuid: uuid4, now: () => Date.now(), compactConversation: (request) => compactConversation(queries, query, request) },
    { trigger: 'manual', preTokens, customInstructions: instructions, contextWindow: thresholdsForModel(queries.config.model, queries.config).contextWindow },
  );
  let next = await generator.next();
  while (!next.done) {
    queries.consume(next.value);
    next = await generator.next();
  }
  const recorded = record(next.value);
  // A success shows as its compact_boundary in the feed; a failure is said in words.
  if (!recorded.compacted) queries.consume({ type: 'system', uuid: uuid4(), level: 'warning', content: recorded.error ?? 'Not compacted.' });
  return recorded;
}
