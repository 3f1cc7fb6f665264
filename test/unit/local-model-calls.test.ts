import { describe, expect, it } from 'vitest';
import { LOCAL_CHAIN_BUDGET_MS, MIN_LOCAL_PHASE_MS, chainAfter, continueAfterAttachFailure, routeModelCall } from '../../workflows/query/local-model-calls';

describe('routeModelCall', () => {
  it('starts a call locally with the whole budget at the start of a chain', () => {
    expect(routeModelCall(true, 0)).toEqual({ kind: 'local', handoffAfterMs: LOCAL_CHAIN_BUDGET_MS });
  });

  it('gives a later call of the chain only what is left of the budget', () => {
    expect(routeModelCall(true, 120, 500)).toEqual({ kind: 'local', handoffAfterMs: 380 });
  });

  it('sends the call to a regular activity once too little is left, so the workflow task ends', () => {
    expect(routeModelCall(true, 500 - MIN_LOCAL_PHASE_MS + 1, 500)).toEqual({ kind: 'regular' });
    expect(routeModelCall(true, 500 - MIN_LOCAL_PHASE_MS, 500)).toEqual({ kind: 'local', handoffAfterMs: MIN_LOCAL_PHASE_MS });
    expect(routeModelCall(true, 10_000, 500)).toEqual({ kind: 'regular' });
  });

  it('is always regular when local model calls are off (the conversation’s config)', () => {
    expect(routeModelCall(false, 0)).toEqual({ kind: 'regular' });
  });

  it('treats a negative measurement (a clock step on the worker) as nothing spent', () => {
    expect(routeModelCall(true, -50, 500)).toEqual({ kind: 'local', handoffAfterMs: 500 });
  });
});

describe('chainAfter', () => {
  it('adds a local step to the chain', () => {
    expect(chainAfter(100, { local: true, elapsedMs: 42 })).toBe(142);
    expect(chainAfter(100, { local: true, elapsedMs: -3 })).toBe(100);
  });

  it('starts a new chain after anything that waited on the server', () => {
    expect(chainAfter(480, { local: false })).toBe(0);
  });

  it('keeps a run of quick calls local until the budget is spent, then one regular call resets it', () => {
    let chain = 0;
    const kinds: string[] = [];
    for (let call = 0; call < 12; call++) {
      const route = routeModelCall(true, chain, 500);
      kinds.push(route.kind);
      chain = route.kind === 'local' ? chainAfter(chain, { local: true, elapsedMs: 90 }) : chainAfter(chain, { local: false });
    }
    // 90 ms each: 0, 90, 180, 270, 360 leave ≥ 100 ms; 450 leaves 50 → regular, then a new chain.
    expect(kinds).toEqual(['local', 'local', 'local', 'local', 'local', 'regular', 'local', 'local', 'local', 'local', 'local', 'regular']);
  });
});

describe('continueAfterAttachFailure', () => {
  const base = { aborted: false, nonRetryable: false };

  it('stands when the query was aborted or no retry can mend the failure', () => {
    expect(continueAfterAttachFailure({ ...base, aborted: true, type: 'overloaded_error' }, 1000)).toBeUndefined();
    expect(continueAfterAttachFailure({ ...base, nonRetryable: true, type: 'invalid_request_error' }, 1000)).toBeUndefined();
    expect(continueAfterAttachFailure({ ...base, nonRetryable: true, type: 'FallbackTriggered' }, 1000)).toBeUndefined();
  });

  it('an overloaded answer goes on after the retry interval, counted as one overload', () => {
    expect(continueAfterAttachFailure({ ...base, type: 'overloaded_error' }, 1000)).toEqual({ delayMs: 1000, overloadedBefore: 1 });
  });

  it('the API’s retry-after wins over the interval', () => {
    expect(continueAfterAttachFailure({ ...base, type: 'rate_limit_error', nextRetryDelayMs: 7000 }, 1000)).toEqual({ delayMs: 7000, overloadedBefore: 0 });
  });

  it('a timeout or a cancelled attempt (its worker died or stopped) goes on at once', () => {
    expect(continueAfterAttachFailure(base, 1000)).toEqual({ delayMs: 0, overloadedBefore: 0 });
  });
});
