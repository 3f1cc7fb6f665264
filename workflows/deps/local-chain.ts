/**
 * The chain of local steps (local activities: the local phase of model calls, local reads) that
 * holds one workflow task open, measured by the steps themselves; its budget is decided in
 * workflows/query/local-model-calls.ts. Shared by the model call and the tool run of one query.
 */
import { chainAfter } from '../query/local-model-calls';

/** Time the current chain of local steps has held the workflow task open (query/local-model-calls.ts). */
export class LocalChain {
  private ms = 0;
  get elapsedMs(): number {
    return this.ms;
  }
  /** A regular activity ran: the chain ends. */
  afterRegular(): void {
    this.ms = chainAfter(this.ms, { local: false });
  }
  /** A local step ran for this long (the worker's clock). */
  afterLocal(elapsedMs: number): void {
    this.ms = chainAfter(this.ms, { local: true, elapsedMs });
  }
}
