/**
 * The compaction model call (`QueryDeps.compactConversation`, seed §2.7), shared by the loop's
 * autocompact and the session's manual compaction.
 */
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import type { CompactRequestParams, CompactResponse } from '../compaction/summary';
import { activities, activityOptions, thinkingOptions } from './activity-options';
import { failureMessage } from './failures';
import type { ActiveQuery, QueryHost } from './query-host';

/**
 * seed §2.7: the compaction model call, as data for the loop (and for manual compaction): the
 * summary text, too long (the caller drops the oldest rounds), an error, or aborted.
 */
export async function compactConversation(
  host: Pick<QueryHost, 'conversationId' | 'config' | 'currentModel' | 'currentRequestContext' | 'recordUsage' | 'setPhase' | 'sessionContext' | 'hooks'>,
  query: Pick<ActiveQuery, 'scope' | 'aborted'>,
  request: CompactRequestParams,
): Promise<CompactResponse> {
  // PreCompact hooks (issue 22), once per compaction: before its first call (a retry that drops rounds has skip > 0).
  if (request.skip === 0 && host.hooks) await host.hooks.preCompact(request.trigger === 'manual' ? 'manual' : 'auto', request.customInstructions);
  host.setPhase('compacting');
  const scope = new CancellationScope({ cancellable: true, parent: query.scope });
  try {
    const result = await scope.run(() =>
      activities({ ...activityOptions(host.config).model, summary: `Compact conversation (${request.trigger})` }).compactConversation({
        conversationId: host.conversationId,
        model: host.currentModel,
        maxTokens: request.maxTokens,
        ...thinkingOptions(host.config, host.sessionContext),
        transcript: request.transcript,
        skip: request.skip,
        context: { digest: host.currentRequestContext() },
        customInstructions: request.customInstructions,
      }),
    );
    if (result.type === 'prompt_too_long') return { type: 'prompt_too_long', errorMessage: result.errorMessage };
    host.recordUsage(result.usage, result.model, result.durationMs);
    // PostCompact hooks (issue 33), with the summary the conversation goes on from.
    if (host.hooks) await host.hooks.postCompact(request.trigger === 'manual' ? 'manual' : 'auto', result.text);
    return { type: 'summary', text: result.text };
  } catch (error) {
    if (query.aborted || isCancellation(error)) return { type: 'aborted' };
    return { type: 'error', errorMessage: failureMessage(error) };
  }
}
