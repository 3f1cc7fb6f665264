/** worker/workflow-bundles.ts KeptBundles: one file per version under <stateDir>/workflow-bundles/<deployment>/. */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KeptBundles } from '../../worker/workflow-bundles';

let stateDir: string | undefined;
afterEach(async () => {
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

describe('KeptBundles', () => {
  it('keeps, lists, reads and deletes the bundles of one deployment', async () => {
    stateDir = await mkdtemp(path.join(os.tmpdir(), 'kept-bundles-'));
    const kept = new KeptBundles(stateDir, 'durable-agent');
    expect(await kept.buildIds()).toEqual([]); // no directory yet
    await kept.keep('b111', 'code one');
    await kept.keep('b222', 'code two');
    await kept.keep('b111', 'code one'); // an unchanged bundle kept again
    expect((await kept.buildIds()).sort()).toEqual(['b111', 'b222']);
    expect(await kept.read('b222')).toBe('code two');
    expect(kept.file('b111')).toBe(path.join(stateDir, 'workflow-bundles', 'durable-agent', 'b111.js'));
    // Another deployment's bundles are its own.
    expect(await new KeptBundles(stateDir, 'other').buildIds()).toEqual([]);
    await kept.remove('b111');
    expect(await readdir(kept.directory)).toEqual(['b222.js']); // no temporary files left either
  });
});
