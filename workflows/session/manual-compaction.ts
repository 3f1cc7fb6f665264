/**
 * Manual compaction (`compact` update, Claude Code's `/compact [instructions]`), between queries:
 * the loop's own compaction (`compactTranscript`, workflows/compact.ts) with the user's
 * instructions, through the same compaction call as autocompact's (deps/compact-call.ts).
 */
import { CancellationScope, uuid4 } from '@temporalio/workflow';
import { thresholdsForModel, tokenCountWithEstimation } from '../auto-compact';
import { type CompactOutcome, compactTranscript } from '../compact';
import type { CompactionOutcome } from '../definitions';
import { compactConversation } from '../deps/compact-call';
import type { ActiveQuery, QueryHost } from '../query-deps';
import type { LoopOutput } from '../query-state';
import type { Transcript } from '../transcript';

/** What manual compaction needs of the session. */
export interface ManualCompactionHost extends Pick<QueryHost, 'conversationId' | 'config' | 'currentModel' | 'currentRequestContext' | 'recordUsage' | 'setPhase' | 'sessionContext' | 'hooks'> {
  readonly transcript: Transcript;
  /** The compaction runs as the session's query (an abort cancels it); it ends with `endQuery`. */
  startCompaction(query: ActiveQuery): void;
  endCompaction(): void;
  /** A message of the compaction: appended and shown. */
  consume(message: LoopOutput): void;
  /** A success closes the breaker; a failure does not count toward it. */
  onManualCompaction(outcome: CompactOutcome): CompactionOutcome;
}

export async function compactNow(session: ManualCompactionHost, instructions: string | undefined): Promise<CompactionOutcome> {
  const scope = new CancellationScope({ cancellable: true });
  const query: ActiveQuery = { scope, aborted: false };
  session.startCompaction(query);
  const preTokens = tokenCountWithEstimation(session.transcript.messages);
  try {
    const generator = compactTranscript(
      session.transcript,
      { uuid: uuid4, now: () => Date.now(), compactConversation: (request) => compactConversation(session, query, request) },
      { trigger: 'manual', preTokens, customInstructions: instructions, contextWindow: thresholdsForModel(session.config.model, session.config).contextWindow },
    );
    let next = await generator.next();
    while (!next.done) {
      session.consume(next.value);
      next = await generator.next();
    }
    const recorded = session.onManualCompaction(next.value);
    // A success shows as its compact_boundary in the feed; a failure is said in words.
    if (!recorded.compacted) session.consume({ type: 'system', uuid: uuid4(), level: 'warning', content: recorded.error ?? 'Not compacted.' });
    return recorded;
  } finally {
    session.endCompaction();
  }
}
