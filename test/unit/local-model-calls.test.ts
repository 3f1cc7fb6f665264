import { describe, expect, it } from 'vitest';
import { LOCAL_CHAIN_BUDGET_MS, MIN_LOCAL_PHASE_MS, chainAfter, routeModelCall } from '../../workflows/local-model-calls';

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

  it('is always regular when local model calls are off (config, or a history recorded before them)', () => {
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
