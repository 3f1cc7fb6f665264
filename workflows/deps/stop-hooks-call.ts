/**
 * The Stop hooks' effect (`QueryDeps.runStopHooks`): the runStopHooks activity on the
 * workspace's host, its outcomes folded into one decision; structured-output enforcement counts
 * as a blocking hook. What the loop does with the decision is workflows/query/handle-stop-hooks.ts.
 */
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import { textOf } from '../../common/messages';
import { STRUCTURED_OUTPUT_REQUIRED_MESSAGE } from '../../common/structured-output';
import type { QueryDeps, StopHookDecision } from '../query/loop';
import { type ActivityOptionsSet, activities } from './activity-options';
import { failureMessage } from './failures';
import type { ActiveQuery, QueryHost } from './query-host';
import { sandboxInputs } from './tool-run';

export function createRunStopHooks(host: QueryHost, query: ActiveQuery, options: ActivityOptionsSet): QueryDeps['runStopHooks'] {
  const { config, conversationId } = host;
  return async ({ lastAssistant, stopHookActive }) => {
    const hooks = [...(host.sessionContext?.stopHooks ?? []), ...(config.stopHooks ?? [])];
    const decision: StopHookDecision = { blockingErrors: [], preventContinuation: false, notices: [] };
    // Claude Code's structured-output enforcement is a Stop hook too: no valid call yet, no stopping.
    if (host.accounting.structuredOutputMissing) decision.blockingErrors.push(STRUCTURED_OUTPUT_REQUIRED_MESSAGE);
    // A subagent's end runs SubagentStop hooks instead (issue 22; none configured: no activity).
    if (host.hooks?.subagentStop) return host.hooks.subagentStop({ lastAssistantMessage: textOf(lastAssistant), stopHookActive }, decision);
    // Issue 33: the user's own Stop hooks and HTTP/prompt ones run through the session's hooks, after these.
    const more = host.hooks?.stop;
    const withMore = (folded: StopHookDecision) => (more ? more({ lastAssistantMessage: textOf(lastAssistant), stopHookActive }, folded) : folded);
    if (hooks.length === 0) return withMore(decision);
    host.setPhase('stop_hooks');
    const scope = new CancellationScope({ cancellable: true, parent: query.scope });
    try {
      const { outcomes } = await scope.run(() =>
        activities({
          ...options.stopHooks,
          summary: `Stop hooks (${hooks.reduce((count, matcher) => count + matcher.hooks.length, 0)})`,
        }).runStopHooks({
          conversationId,
          cwd: config.cwd,
          hooks,
          stopHookActive,
          lastAssistantMessage: textOf(lastAssistant),
          ...sandboxInputs(host),
        }),
      );
      for (const outcome of outcomes) {
        if (outcome.blockingError) decision.blockingErrors.push(outcome.blockingError);
        if (outcome.preventContinuation) {
          decision.preventContinuation = true;
          decision.stopReason = outcome.stopReason ?? decision.stopReason;
        }
        if (outcome.nonBlockingError) decision.notices.push(`Stop hook error (${outcome.command}): ${outcome.nonBlockingError}`);
      }
    } catch (error) {
      if (isCancellation(error)) return decision;
      decision.notices.push(`Stop hooks failed: ${failureMessage(error)}`);
    }
    return withMore(decision);
  };
}
