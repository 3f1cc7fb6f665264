/**
 * The benchmark workflow of bench/dispatch-latency.ts: `hops` no-op activities awaited one after another, so each
 * hop is pure orchestration (activity completion → workflow task → next activity task). Returns the time each
 * activity ran on the worker, so the benchmark can see every hop, not just the total.
 */
import { proxyActivities } from '@temporalio/workflow';

export interface DispatchLatencyActivities {
  /** Returns Date.now() on the worker. */
  noop(): Promise<number>;
}

const { noop } = proxyActivities<DispatchLatencyActivities>({ startToCloseTimeout: '10 seconds' });

export async function dispatchLatencyWorkflow(hops: number): Promise<number[]> {
  const ranAt: number[] = [];
  for (let hop = 0; hop < hops; hop++) ranAt.push(await noop());
  return ranAt;
}
