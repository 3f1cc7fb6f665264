/** seed §2.6: the context against the thresholds, and compaction state, as the `status` query shows it. Pure. */
import type { ConversationConfig } from '../../common/config';
import { contextLevel, isBreakerOpen, thresholdsForModel } from '../compaction/auto';
import type { CompactionState, ContextStatus } from '../definitions';

export function contextStatus(config: ConversationConfig, tokens: number, compaction: CompactionState): ContextStatus {
  const thresholds = thresholdsForModel(config.model, config);
  return {
    tokens,
    contextWindow: thresholds.contextWindow,
    effectiveWindow: thresholds.effectiveContextWindow,
    percentUsed: Math.round((tokens / thresholds.effectiveContextWindow) * 100),
    autoCompactThreshold: thresholds.autoCompactThreshold,
    warningThreshold: thresholds.warningThreshold,
    errorThreshold: thresholds.errorThreshold,
    blockingLimit: thresholds.blockingLimit,
    level: contextLevel(tokens, thresholds, config.autoCompact && !isBreakerOpen(compaction.consecutiveFailures)),
    autoCompactEnabled: config.autoCompact,
    compactions: compaction.compactions,
    lastCompaction: compaction.lastCompaction,
    breaker: { consecutiveFailures: compaction.consecutiveFailures, open: isBreakerOpen(compaction.consecutiveFailures) },
  };
}
