/**
 * Tool orchestration (seed §2.4): partitioning into concurrent and serial batches, ordered
 * results, the Bash error cascade, and the streaming executor that starts concurrency-safe tools
 * while the model still streams. Workflow code: cancellation uses Temporal CancellationScopes.
 */
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import { isToolUseConcurrencySafe, isToolUseStartableEarly } from '../../common/tool-specs';
import type { AssistantMessage, Message, ToolUseBlock, UserMessage } from '../../common/messages';
import type { CallFacts } from '../../common/permission-facts';
import { createToolResultMessage } from '../messages';
import type { ToolExecutor } from './loop';

export const INTERRUPTED_BY_USER = 'Interrupted by user';
const BASH = 'Bash';

export interface ToolCallBatch {
  isConcurrencySafe: boolean;
  blocks: ToolUseBlock[];
}

/**
 * seed §2.4 partitionToolCalls: consecutive concurrency-safe calls form one concurrent batch;
 * every other call is a serial batch of its own. Batches run in order. `facts`: the calls' facts
 * gathered where they act, by tool_use id (a Bash call is concurrency-safe only on its facts).
 */
export function partitionToolCalls(
  blocks: readonly ToolUseBlock[],
  isConcurrencySafe: (block: ToolUseBlock, facts?: CallFacts) => boolean = isToolUseConcurrencySafe,
  facts?: ReadonlyMap<string, CallFacts>,
): ToolCallBatch[] {
  const batches: ToolCallBatch[] = [];
  for (const block of blocks) {
    const safe = isConcurrencySafe(block, facts?.get(block.id));
    const last = batches[batches.length - 1];
    if (safe && last?.isConcurrencySafe) last.blocks.push(block);
    else batches.push({ isConcurrencySafe: safe, blocks: [block] });
  }
  return batches;
}

/** A one-line label of a call for cascade messages: `Bash(npm test)`. */
export function describeToolUse(block: Pick<ToolUseBlock, 'name' | 'input'>): string {
  const input = block.input as Record<string, unknown> | undefined;
  const detail = typeof input?.command === 'string' ? input.command : typeof input?.file_path === 'string' ? input.file_path : '';
  const short = detail.length > 80 ? `${detail.slice(0, 77)}...` : detail;
  return `${block.name}(${short})`;
}

export interface ToolOutcome {
  content: string;
  isError: boolean;
}

export interface ToolExecutorDeps {
  uuid(): string;
  /** Runs one tool (an activity); throws a cancellation when its scope is cancelled. */
  /** `siblings`: calls of the same message known when it starts (they share a result budget). */
  runTool(block: ToolUseBlock, siblings: number): Promise<ToolOutcome>;
  isAborted(): boolean;
  maxConcurrency: number;
  /** The query's scope: aborting the query cancels every tool through it. */
  parentScope: CancellationScope;
  /**
   * Concurrency safety of a call where something other than the built-in tool's spec decides it
   * (issue 22: MCP tools annotated read-only); undefined: the spec decides, on the call's facts.
   */
  isConcurrencySafe?: (block: ToolUseBlock) => boolean | undefined;
  /**
   * Issue 29 (one Bash analysis): the facts of a reply's calls whose concurrency depends on them
   * (Bash), by tool_use id, gathered where they act before the reply is partitioned. Absent, or
   * failing: such calls run alone (what is not known to be read-only is not concurrency-safe).
   */
  factsForReply?: (blocks: readonly ToolUseBlock[]) => Promise<ReadonlyMap<string, CallFacts>>;
}

interface TrackedTool {
  block: ToolUseBlock;
  isConcurrencySafe: boolean;
  scope: CancellationScope;
  promise: Promise<ToolOutcome | { cancelled: true }>;
  cancelReason?: string;
}

/**
 * seed §2.4 StreamingToolExecutor, which also serves as the batch runner (`runTools`) when no tool
 * was added during streaming. Execution is concurrent, results are yielded in request order.
 */
export class StreamingToolExecutor implements ToolExecutor {
  private readonly tracked = new Map<string, TrackedTool>();
  /** Set once a Bash call of this message failed: the reason every later call is not run. */
  private bashError: { reason: string; toolUseId: string } | undefined;
  private sawUnsafeWhileStreaming = false;
  private running = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly deps: ToolExecutorDeps) {}

  /**
   * Called for each tool_use block as it finishes streaming, with its facts when the model call
   * gathered them (a Bash call starts early only on them). Only concurrency-safe calls that no
   * unsafe call precedes start early: a retried model call can answer differently, so work
   * started early must have no side effects.
   */
  addTool(block: ToolUseBlock, facts?: CallFacts): void {
    if (this.tracked.has(block.id) || this.sawUnsafeWhileStreaming) return;
    if (!isToolUseStartableEarly(block, facts)) {
      this.sawUnsafeWhileStreaming = true;
      return;
    }
    this.start(block, true, this.tracked.size + 1);
  }

  async discard(): Promise<void> {
    const pending = [...this.tracked.values()];
    this.tracked.clear();
    this.bashError = undefined; // it belonged to the abandoned attempt
    for (const tool of pending) tool.scope.cancel();
    await Promise.all(pending.map((tool) => tool.promise));
  }

  async *getRemainingResults(toolUses: ToolUseBlock[], assistant: AssistantMessage): AsyncGenerator<Message, void> {
    // Early work for blocks that are not in the final answer belongs to a discarded attempt.
    const finalIds = new Set(toolUses.map((block) => block.id));
    const dropped: Array<Promise<unknown>> = [];
    for (const [id, tool] of this.tracked) {
      if (
        !finalIds.has(id) ||
        !sameCall(
          tool.block,
          toolUses.find((block) => block.id === id)!,
        )
      ) {
        tool.scope.cancel();
        this.tracked.delete(id);
        dropped.push(tool.promise);
        if (this.bashError?.toolUseId === id) this.bashError = undefined;
      }
    }
    // Let dropped work release its concurrency slots before the final calls start.
    await Promise.all(dropped);
    const facts = await this.factsForReply(toolUses);
    const safe = (block: ToolUseBlock, known?: CallFacts) => this.deps.isConcurrencySafe?.(block) ?? isToolUseConcurrencySafe(block, known);
    for (const batch of partitionToolCalls(toolUses, safe, facts)) {
      const tools = batch.blocks.map((block) => this.tracked.get(block.id) ?? this.start(block, batch.isConcurrencySafe, toolUses.length));
      for (const tool of tools) {
        const outcome = await tool.promise;
        this.tracked.delete(tool.block.id);
        yield this.resultMessage(tool, outcome, assistant);
      }
    }
  }

  /**
   * The facts the partition needs (issue 29), in the query's scope: none for a single call (it is a
   * batch of its own whatever it is), after an abort, or when gathering fails — then every call
   * that depends on them runs alone.
   */
  private async factsForReply(toolUses: ToolUseBlock[]): Promise<ReadonlyMap<string, CallFacts> | undefined> {
    const gather = this.deps.factsForReply;
    if (!gather || toolUses.length < 2 || this.deps.isAborted()) return undefined;
    try {
      return await this.deps.parentScope.run(() => gather(toolUses));
    } catch {
      // A cancellation (abort) or a failed activity: the calls still get their results (cancelled ones, or each checked alone).
      return undefined;
    }
  }

  private resultMessage(tool: TrackedTool, outcome: ToolOutcome | { cancelled: true }, assistant: AssistantMessage): UserMessage {
    if ('cancelled' in outcome) {
      const reason = this.deps.isAborted() ? INTERRUPTED_BY_USER : (tool.cancelReason ?? INTERRUPTED_BY_USER);
      return createToolResultMessage(this.deps.uuid(), tool.block, reason, true, assistant.uuid);
    }
    return createToolResultMessage(this.deps.uuid(), tool.block, outcome.content, outcome.isError, assistant.uuid);
  }

  /**
   * seed §2.4 Bash error cascade: Bash commands often depend on each other (mkdir fails → the cp
   * after it is pointless), so a failing Bash call cancels the calls still running beside it and
   * every later call of the same message. Read/Glob/Grep failures are independent and do not.
   */
  private onBashError(failed: TrackedTool): void {
    // Only a call of the current attempt cascades (a dropped early call no longer counts).
    if (this.tracked.get(failed.block.id) !== failed) return;
    this.bashError ??= { reason: `Cancelled: parallel tool call ${describeToolUse(failed.block)} errored`, toolUseId: failed.block.id };
    for (const sibling of this.tracked.values()) {
      if (sibling !== failed && sibling.cancelReason === undefined) {
        sibling.cancelReason = this.bashError.reason;
        sibling.scope.cancel();
      }
    }
  }

  private start(block: ToolUseBlock, isConcurrencySafe: boolean, siblings: number): TrackedTool {
    const scope = new CancellationScope({ cancellable: true, parent: this.deps.parentScope });
    const tool: TrackedTool = {
      block,
      isConcurrencySafe,
      scope,
      promise: scope
        .run(async () => {
          await this.acquire();
          try {
            // Aborted or cascaded while queued (or after an earlier Bash call failed): never start.
            if (this.bashError !== undefined) tool.cancelReason ??= this.bashError.reason;
            if (this.deps.isAborted() || tool.cancelReason !== undefined) return { cancelled: true as const };
            const outcome = await this.deps.runTool(block, siblings);
            if (block.name === BASH && outcome.isError) this.onBashError(tool);
            return outcome;
          } finally {
            this.release();
          }
        })
        .catch((error: unknown) => {
          if (isCancellation(error)) return { cancelled: true as const };
          const message = error instanceof Error ? error.message : String(error);
          return { content: `Error: ${message}`, isError: true };
        }),
    };
    this.tracked.set(block.id, tool);
    return tool;
  }

  private async acquire(): Promise<void> {
    if (this.running < this.deps.maxConcurrency) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.running++;
  }

  private release(): void {
    this.running--;
    this.waiters.shift()?.();
  }
}

function sameCall(a: ToolUseBlock, b: ToolUseBlock): boolean {
  return a.name === b.name && JSON.stringify(a.input) === JSON.stringify(b.input);
}
