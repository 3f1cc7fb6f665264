/**
 * The query being run (or a manual compaction): its cancellation scope, whether it was aborted, and
 * the model call in flight with what that call prefetched. One owner (issue 30): the session's
 * query slot creates it (session/query-slot.ts); the model call, the tool runs and the
 * `toolUseStreamed` signal change it only through these methods, and read the rest.
 */
import type { CancellationScope } from '@temporalio/workflow';
import type { PrefetchedCalls } from './prefetched-calls';
import type { StreamingToolExecutor } from './tool-orchestration';

export class ActiveQuery {
  private abortedFlag = false;
  private modelCall: { requestId: string; executor: StreamingToolExecutor; streamAttempt?: number } | undefined;
  private prefetchedCalls: PrefetchedCalls | undefined;
  private prefetchedReads: string[] = [];

  constructor(readonly scope: CancellationScope) {}

  get aborted(): boolean {
    return this.abortedFlag;
  }

  /** The executor of the model call in flight (the early tool runs of its stream). */
  get executor(): StreamingToolExecutor | undefined {
    return this.modelCall?.executor;
  }

  /** The model call in flight (a streamed report of another one is dropped). */
  get requestId(): string | undefined {
    return this.modelCall?.requestId;
  }

  /** The newest stream attempt of the model call in flight that reported a tool_use. */
  get streamAttempt(): number | undefined {
    return this.modelCall?.streamAttempt;
  }

  /** Reads the last model call's local phase ran for its answer (workflows/query/prefetched-calls.ts). */
  get prefetched(): PrefetchedCalls | undefined {
    return this.prefetchedCalls;
  }

  /** `abort`: the scope is cancelled once; false when it was aborted already. */
  abort(): boolean {
    if (this.abortedFlag) return false;
    this.abortedFlag = true;
    this.scope.cancel();
    return true;
  }

  /**
   * A model call starts: earlier prefetched reads no longer apply. Returns the summaries of the
   * prefetched reads whose results this call sends (its label names them).
   */
  startModelCall(requestId: string, executor: StreamingToolExecutor): string[] {
    this.modelCall = { requestId, executor };
    this.prefetchedCalls = undefined;
    const reads = this.prefetchedReads;
    this.prefetchedReads = [];
    return reads;
  }

  /** The model call answered, with the reads its local phase ran. */
  answeredWith(prefetched: PrefetchedCalls | undefined): void {
    this.prefetchedCalls = prefetched;
  }

  /** The model call ended (answered or not). */
  endModelCall(): void {
    this.modelCall = undefined;
  }

  /** A newer stream attempt of the call in flight reported a tool_use. */
  streamAttemptSeen(attempt: number): void {
    if (this.modelCall) this.modelCall.streamAttempt = attempt;
  }

  /** A prefetched read's result was used for this tool call (summary: its one-line summary). */
  usedPrefetchedRead(summary: string): void {
    this.prefetchedReads.push(summary);
  }
}
