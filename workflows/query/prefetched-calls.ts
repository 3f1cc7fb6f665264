/**
 * Tool prefetch, the workflow's side (common/tool-prefetch.ts has the rules): the plan a local
 * model call gets — which reads it may run before it returns — and the results it brought back,
 * kept on the query until the tool executor asks for them. Pure decisions; `deps/model-call.ts` and
 * `deps/tool-run.ts` wire them in (where a prefetched result replaces a local activity).
 *
 * A prefetched result is used only for the call it was run for: same id, same tool and input,
 * same number of calls sharing the result budget; once. Anything else — a call started early
 * from a streamed report, a call the permission gate does not allow now — runs as ever.
 */
import type { CallModelLocalResult, CallModelResult } from '../../common/activity-types';
import type { ConversationConfig } from '../../common/config';
import type { ToolUseBlock } from '../../common/messages';
import type { PermissionContext } from '../../common/permissions';
import type { StreamTarget } from '../../common/stream-items';
import { DEFAULT_MAX_RESULT_SIZE_CHARS, type PrefetchedToolResult, type ToolPrefetchPlan } from '../../common/tool-prefetch';
import { getToolSpec } from '../../common/tool-specs';

/** A prefetched call, as the workflow keeps it for the tool executor. */
export interface PrefetchedCall {
  block: Pick<ToolUseBlock, 'name' | 'input'>;
  /** tool_use blocks in the message (the budget's divisor the activity used). */
  siblings: number;
  result: PrefetchedToolResult['result'];
  /** The permission facts the local phase gathered for it (the gate decides on them instead of gathering again). */
  facts?: PrefetchedToolResult['facts'];
}

/** Prefetched results of the model call last answered, by tool_use id. */
export type PrefetchedCalls = Map<string, PrefetchedCall>;

export interface PlanSources {
  config: Pick<ConversationConfig, 'cwd' | 'tools' | 'toolTaskQueue' | 'localReadOnlyTools' | 'prefetchReadOnlyTools' | 'maxToolUseConcurrency'>;
  /** The workflow's own task queue. */
  taskQueue: string;
  /** The tools that run as local activities (deps/tool-run.ts LOCAL_TOOLS: the specs' `localActivity`). */
  localTools: ReadonlySet<string>;
  /** The permission gate's context, or undefined when tools run unchecked; absent: the host cannot tell (no prefetch). */
  permission: (() => PermissionContext | undefined) | undefined;
  stream?: StreamTarget;
}

/**
 * The plan for a local model call, or undefined when nothing may be prefetched: local read-only
 * tools off, tools on another task queue (the workspace's host, which a local activity cannot
 * reach), or switched off. The same conditions as `runsLocally` in deps/tool-run.ts (its patch aside).
 */
export function toolPrefetchPlan(sources: PlanSources): ToolPrefetchPlan | undefined {
  const { config } = sources;
  if (config.prefetchReadOnlyTools === false || !config.localReadOnlyTools || !sources.permission) return undefined;
  if (config.toolTaskQueue !== undefined && config.toolTaskQueue !== sources.taskQueue) return undefined;
  // A tool this conversation does not offer gets a "No such tool" result from the workflow, never a run.
  const tools = [...sources.localTools].filter((name) => !config.tools || config.tools.includes(name));
  if (tools.length === 0) return undefined;
  const maxResultSizeChars = Object.fromEntries(tools.map((name) => [name, getToolSpec(name)?.maxResultSizeChars ?? DEFAULT_MAX_RESULT_SIZE_CHARS]));
  const permission = sources.permission();
  return {
    tools,
    cwd: config.cwd,
    maxResultSizeChars,
    maxConcurrency: config.maxToolUseConcurrency,
    ...(permission && { permission }),
    ...(sources.stream && { stream: sources.stream }),
  };
}

/** The prefetched results a model call brought back, keyed for `takePrefetched`; undefined when none. */
export function prefetchedCalls(result: CallModelResult | Exclude<CallModelLocalResult, { type: 'handoff' }>): PrefetchedCalls | undefined {
  if (result.type !== 'message' || !('prefetched' in result) || !result.prefetched?.length) return undefined;
  const blocks = result.message.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
  const calls: PrefetchedCalls = new Map();
  for (const prefetched of result.prefetched) {
    const block = blocks.find((candidate) => candidate.id === prefetched.toolUseId);
    if (block)
      calls.set(prefetched.toolUseId, {
        block: { name: block.name, input: block.input },
        siblings: blocks.length,
        result: prefetched.result,
        facts: prefetched.facts,
      });
  }
  return calls.size > 0 ? calls : undefined;
}

/** The prefetched result for exactly this call (removed: used once), or undefined. */
export function takePrefetched(calls: PrefetchedCalls | undefined, block: ToolUseBlock, siblings: number): PrefetchedCall['result'] | undefined {
  const call = calls?.get(block.id);
  if (!call) return undefined;
  calls!.delete(block.id);
  if (call.siblings !== siblings || call.block.name !== block.name || JSON.stringify(call.block.input) !== JSON.stringify(block.input)) return undefined;
  return call.result;
}
