/**
 * Tool prefetch (issue 7, docs/architecture.md "Loop overhead"): the local phase of a model call
 * (`callModelLocal`) that ends with a `tool_use` answer runs, before it returns, the read-only
 * calls the workflow would run next as local activities anyway — so one loop iteration costs one
 * local activity and one activation instead of two of each. The workflow says which in a plan
 * (`ToolPrefetchPlan`); this module decides, the same way on both sides, which blocks of an
 * answer qualify and with what result budget. Pure.
 *
 * A block is prefetched only when it is certain the workflow would run it at once with exactly
 * this input: its tool is in the plan (Read, Glob, Grep running locally, offered to the model);
 * the permission engine allows it with the workflow gate's own context (a call that would ask or
 * is denied is never run, so its content never reaches history); and no call before it in the
 * message is unsafe (a Bash or an Edit before a Read runs first and may change what it reads —
 * the rule by which the workflow starts calls while the model streams).
 */
import type { CallFacts } from './permission-facts';
import type { PermissionContext } from './permissions';
import { decidePermission } from './permissions';
import type { StreamTarget } from './stream-items';
import { toolFacts } from './tool-facts';
import { toolResultBudget } from './tool-result-budget';
import { concurrencyNeedsFacts, isToolUseStartableEarly } from './tool-specs';

/** What the workflow allows the local phase of a model call to run (`CallModelLocalInput.prefetch`). */
export interface ToolPrefetchPlan {
  /** Tools whose calls may be prefetched: those that run as local activities and are offered. */
  tools: string[];
  cwd: string;
  /** Each tool's own result cap (`maxResultSizeChars` of its spec), before the message's shared budget. */
  maxResultSizeChars: Record<string, number>;
  /** The permission gate's context; absent when the conversation runs tools unchecked (no `permissions` config). */
  permission?: PermissionContext;
  /** The runTool activity's `stream` (the live channel), so a prefetched call behaves as that activity would. */
  stream?: StreamTarget;
  /** At most this many calls run at once (`maxToolUseConcurrency`, as the tool executor); absent: all. */
  maxConcurrency?: number;
}

/** A prefetched call's outcome, as the runTool activity produced it. */
export interface PrefetchedToolResult {
  toolUseId: string;
  result: { content: string; isError: boolean; persistedPath?: string };
  /** The facts the call was allowed on, gathered where it ran (the workflow's gate decides on the same). */
  facts?: CallFacts;
}

/** A block to prefetch, with the result budget the workflow's runTool would give it. */
export interface PrefetchCall {
  id: string;
  name: string;
  input: unknown;
  maxResultSizeChars: number;
}

type ContentBlock = { type: string; id?: string; name?: string; input?: unknown };

/**
 * The calls of an answer to prefetch under `plan`. `siblings` (the budget's divisor) is the
 * number of tool_use blocks in the message: what the tool executor passes for a final answer.
 */
export function toolsToPrefetch(content: readonly ContentBlock[], plan: ToolPrefetchPlan, facts?: ReadonlyMap<string, CallFacts>): PrefetchCall[] {
  const blocks = toolUseBlocks(content);
  const calls: PrefetchCall[] = [];
  for (const block of blocks) {
    // An unsafe call runs before every later one: stop there (a Bash call is safe only on its facts, `facts`).
    if (!isToolUseStartableEarly({ name: block.name, input: block.input }, facts?.get(block.id))) break;
    if (!plan.tools.includes(block.name)) continue;
    if (!allowedWithoutAsking({ name: block.name, input: block.input }, plan.permission)) continue;
    calls.push({
      id: block.id,
      name: block.name,
      input: block.input,
      maxResultSizeChars: toolResultBudget(plan.maxResultSizeChars[block.name] ?? DEFAULT_MAX_RESULT_SIZE_CHARS, blocks.length),
    });
  }
  return calls;
}

function toolUseBlocks(content: readonly ContentBlock[]): (ContentBlock & { id: string; name: string })[] {
  return content.filter(
    (block): block is ContentBlock & { id: string; name: string } =>
      block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string',
  );
}

/**
 * The calls of an answer whose facts `toolsToPrefetch` needs (issue 29: a Bash call is safe only on
 * its parsed command): those that come before a call the plan could prefetch. None otherwise.
 */
export function callsJudgedOnFacts(content: readonly ContentBlock[], plan: ToolPrefetchPlan): { id: string; name: string; input: unknown }[] {
  const blocks = toolUseBlocks(content);
  let last = blocks.length - 1;
  while (last >= 0 && !plan.tools.includes(blocks[last].name)) last--;
  return blocks
    .slice(0, Math.max(0, last))
    .filter((block) => concurrencyNeedsFacts(block.name))
    .map(({ id, name, input }) => ({ id, name, input }));
}

/** A tool's result cap when its spec names none (as the workflow's runTool). */
export const DEFAULT_MAX_RESULT_SIZE_CHARS = 30_000;

/** The gate's `allowsWithoutAsking`: no permission context (tools run unchecked) allows everything. */
export function allowedWithoutAsking(block: { name: string; input: unknown }, permission: PermissionContext | undefined, gathered?: CallFacts): boolean {
  if (!permission) return true;
  return (
    decidePermission({ toolName: block.name, input: block.input }, { ...toolFacts(block), ...(gathered && { gathered }) }, permission).behavior === 'allow'
  );
}
