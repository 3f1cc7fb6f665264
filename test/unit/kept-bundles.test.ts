/** worker/workflow-bundles.ts KeptBundles: one file per version under <stateDir>/workflow-bundles/<deployment>/. */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KeptBundles, WorkflowBundleError, prebuiltWorkflowBundle, prepareWorkerVersion } from '../../worker/workflow-bundles';
import { bundleBuildId } from '../../worker/versioning';

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

describe('DURABLE_AGENT_WORKFLOW_BUNDLE', () => {
  it('loads a bundle built ahead of time (banner first), hashed into the build id as one bundled at start would be', async () => {
    stateDir = await mkdtemp(path.join(os.tmpdir(), 'kept-bundles-'));
    expect(await prebuiltWorkflowBundle({})).toBeUndefined();
    expect(await prebuiltWorkflowBundle({ DURABLE_AGENT_WORKFLOW_BUNDLE: ' ' })).toBeUndefined();
    const file = path.join(stateDir, 'bundle.js');
    await writeFile(file, 'bundled code');
    expect(await prebuiltWorkflowBundle({ DURABLE_AGENT_WORKFLOW_BUNDLE: file })).toEqual({ code: 'bundled code' });
    const prebuilt = await prebuiltWorkflowBundle({ DURABLE_AGENT_WORKFLOW_BUNDLE: file }, '// N+1');
    expect(prebuilt).toEqual({ code: '// N+1\nbundled code' });
    const version = await prepareWorkerVersion({ deploymentName: 'durable-agent' }, { stateDir, prebuilt });
    expect(version).toMatchObject({ buildId: bundleBuildId('// N+1\nbundled code'), code: '// N+1\nbundled code' });
    expect(await version.bundles.read(version.buildId)).toBe('// N+1\nbundled code');
  });

  it('a file it cannot read, or an empty one, stops the worker with the variable named', async () => {
    stateDir = await mkdtemp(path.join(os.tmpdir(), 'kept-bundles-'));
    const missing = path.join(stateDir, 'missing.js');
    await expect(prebuiltWorkflowBundle({ DURABLE_AGENT_WORKFLOW_BUNDLE: missing })).rejects.toThrow(WorkflowBundleError);
    await expect(prebuiltWorkflowBundle({ DURABLE_AGENT_WORKFLOW_BUNDLE: missing })).rejects.toThrow(`DURABLE_AGENT_WORKFLOW_BUNDLE=${missing}: cannot read`);
    const empty = path.join(stateDir, 'empty.js');
    await writeFile(empty, '\n');
    await expect(prebuiltWorkflowBundle({ DURABLE_AGENT_WORKFLOW_BUNDLE: empty })).rejects.toThrow('is empty');
  });
});
