/**
 * Streaming tool execution's signal (seed §2.4): the model activity reports each tool_use it saw
 * complete while the model still streams; a concurrency-safe call the gate allows without asking
 * starts at once on the running query's executor. Reports of another call or an older attempt are
 * dropped; a newer attempt discards the older one's early work.
 */
import { log } from '@temporalio/workflow';
import type { ToolUseBlock } from '../../common/messages';
import type { CallFacts } from '../../common/permission-facts';
import { isToolUseStartableEarly } from '../../common/tool-specs';
import { type ToolUseStreamed, toolUseStreamedSchema } from '../definitions';
import type { ActiveQuery } from '../query/active-query';
import type { PermissionGate } from '../permissions/gate';

export function acceptStreamedToolUse(
  query: ActiveQuery | undefined,
  permissions: PermissionGate,
  raw: ToolUseStreamed,
  /** PreToolUse hooks match this call (issue 22): they run once the answer is final, never for a discarded stream. */
  hooksFirst?: (block: ToolUseBlock) => boolean,
): void {
  const parsed = toolUseStreamedSchema.safeParse(raw);
  if (!parsed.success) {
    log.warn('Dropped malformed toolUseStreamed signal', { received: raw });
    return;
  }
  const streamed = parsed.data;
  // Only blocks of the model call now in flight count; late reports of an old attempt are dropped.
  if (!query?.executor || streamed.requestId !== query.requestId || query.aborted) return;
  // A report from a newer attempt of the same model call means the older attempt's stream was
  // abandoned: its early work is dropped. Reports from an older attempt come too late to count.
  const attemptSeen = query.streamAttempt ?? 0;
  if (streamed.attempt < attemptSeen) return;
  if (streamed.attempt > attemptSeen) {
    if (attemptSeen > 0) void query.executor.discard();
    query.streamAttemptSeen(streamed.attempt);
  }
  const block = streamed.block as ToolUseBlock;
  const facts = streamed.facts && (streamed.facts as CallFacts).toolUseId === block.id ? (streamed.facts as CallFacts) : undefined;
  if (facts) permissions.rememberFacts(block, facts);
  // A call that needs a person or is denied starts once the answer is final (not from a stream that may be discarded).
  // A Bash call is startable only on its parsed command's facts (issue 29).
  if (isToolUseStartableEarly(block, facts) && (!permissions.allowsWithoutAsking(block) || hooksFirst?.(block))) return;
  query.executor.addTool(block, facts);
}
