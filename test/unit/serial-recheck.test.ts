import { describe, expect, it } from 'vitest';
import { SerialRecheck } from '../../client/serial-recheck';

/** A check the test lets finish. */
function gatedCheck() {
  const gates: Array<() => void> = [];
  let runs = 0;
  const check = () => {
    runs++;
    return new Promise<void>((resolve) => gates.push(resolve));
  };
  return { check, runs: () => runs, release: () => gates.shift()?.() };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('SerialRecheck (chat prompters)', () => {
  it('runs one check at a time; requests while it runs make exactly one more run after it', async () => {
    const gated = gatedCheck();
    const recheck = new SerialRecheck(gated.check, () => {}, new AbortController().signal);
    recheck.request();
    recheck.request();
    recheck.request();
    expect(gated.runs()).toBe(1);
    gated.release();
    await settle();
    expect(gated.runs()).toBe(2);
    gated.release();
    await settle();
    expect(gated.runs()).toBe(2);
    recheck.request(); // idle again: runs at once
    expect(gated.runs()).toBe(3);
    gated.release();
  });

  it('reports a failed check and checks again on the next request', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const recheck = new SerialRecheck(
      async () => {
        calls++;
        if (calls === 1) throw new Error('status query failed');
      },
      (error) => errors.push(error),
      new AbortController().signal,
    );
    recheck.request();
    await settle();
    expect(errors.map(String)).toEqual(['Error: status query failed']);
    recheck.request();
    await settle();
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
  });

  it('does not run again once chat is leaving', async () => {
    const gated = gatedCheck();
    const leaving = new AbortController();
    const recheck = new SerialRecheck(gated.check, () => {}, leaving.signal);
    recheck.request();
    recheck.request();
    leaving.abort();
    gated.release();
    await settle();
    expect(gated.runs()).toBe(1);
  });
});
