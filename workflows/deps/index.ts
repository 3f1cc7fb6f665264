/**
 * The loop's effects behind one seam (style §16; Claude Code's `query/deps.ts`), assembled for one
 * query. Each effect lives in its own file under deps/: activity options (deps/activity-options.ts),
 * failure mapping (deps/failures.ts), the model call with its local-first routing and handoff
 * (deps/model-call.ts), tool runs and prefetched reads (deps/tool-run.ts), the Stop hooks
 * (deps/stop-hooks-call.ts) and the compaction call (deps/compact-call.ts). A subagent reuses it with
 * other options (its own conversation config).
 */
import { uuid4 } from '@temporalio/workflow';
import { activityOptions } from './activity-options';
import { compactConversation } from './compact-call';
import { LocalChain } from './local-chain';
import { createModelCall } from './model-call';
import type { ActiveQuery, QueryHost } from './query-host';
import { createRunStopHooks } from './stop-hooks-call';
import { createRunTool, createToolExecutor } from './tool-run';
import type { QueryDeps } from '../query/loop';
import type { StreamingToolExecutor } from '../query/tool-orchestration';

export type { ActiveQuery, QueryHost } from './query-host';

/** The loop's deps for one query, wired to activities. */
export function createQueryDeps(host: QueryHost, query: ActiveQuery): QueryDeps {
  const options = activityOptions(host.config);
  const chain = new LocalChain();
  const callModel = createModelCall(host, query, options, chain);
  const runTool = createRunTool(host, query, options, chain);
  return {
    uuid: uuid4,
    now: () => Date.now(),
    isAborted: () => query.aborted,
    callModel: (request, executor) => callModel(request, executor as StreamingToolExecutor),
    newToolExecutor: () => createToolExecutor(host.config, query, runTool, uuid4, host.toolRoutes, (blocks) => host.toolPermissions.factsForReply(blocks)),
    runStopHooks: createRunStopHooks(host, query, options),
    ...(host.hooks?.postToolBatch && { runPostToolBatchHooks: (calls) => host.hooks!.postToolBatch!(calls) }),
    compactConversation: (request) => compactConversation(host, query, request),
  };
}
