/**
 * worker/workflow-bundles.ts cachedWorkflowBundle (issue 32): the worker bundles its workflow code once per change of
 * it and reuses `<stateDir>/workflow-bundle-cache/<key>.js` otherwise. Real webpack bundles (seconds each).
 */
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleBuildId } from '../../worker/versioning';
import { WORKFLOWS_PATH } from '../../worker/worker';
import { cachedWorkflowBundle } from '../../worker/workflow-bundles';

const logger = new DefaultLogger('WARN');
let stateDir: string | undefined;
afterAll(async () => {
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

describe('cachedWorkflowBundle', () => {
  it('bundles once, reuses the bundle while its inputs are unchanged, bundles again when one changed', { timeout: 300_000 }, async () => {
    stateDir = await mkdtemp(path.join(os.tmpdir(), 'bundle-cache-'));
    const told: string[] = [];
    const onBundling = (why: string) => told.push(why);

    const cold = await cachedWorkflowBundle({ stateDir, onBundling, logger });
    expect(cold.source).toMatchObject({ reused: false, why: 'no bundle cached yet' });
    expect(told).toEqual(['no bundle cached yet']);
    // The same code as the SDK's own bundling of the workflows folder: the build id does not depend on the cache.
    const plain = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger });
    expect(bundleBuildId(cold.code)).toBe(bundleBuildId(plain.code));

    const directory = path.join(stateDir, 'workflow-bundle-cache');
    const names = (await readdir(directory)).sort();
    expect(names).toHaveLength(2); // <key>.js and <key>.json, no temporary files
    const recordFile = path.join(
      directory,
      names.find((name) => name.endsWith('.json'))!,
    );
    const record = JSON.parse(await readFile(recordFile, 'utf8')) as { inputs: Record<string, string> };
    const inputs = Object.keys(record.inputs);
    // What webpack read: the workflow sources, the shared code they import, the bundled packages (with their package.json).
    expect(inputs).toContain(path.join(WORKFLOWS_PATH, 'index.ts'));
    expect(inputs.some((file) => file.startsWith(path.join(WORKFLOWS_PATH, '..', 'common') + path.sep))).toBe(true);
    expect(inputs.some((file) => file.endsWith(path.join('node_modules', '@temporalio', 'workflow', 'package.json')))).toBe(true);

    const warm = await cachedWorkflowBundle({ stateDir, onBundling, logger, banner: '// N+1' });
    expect(warm.source.reused).toBe(true);
    expect(warm.code).toBe(`// N+1\n${cold.code}`); // the banner is added after the cache
    expect(told).toHaveLength(1);

    // An input whose content is not what was bundled (as after an edit of workflows/index.ts).
    record.inputs[path.join(WORKFLOWS_PATH, 'index.ts')] = '0'.repeat(64);
    await writeFile(recordFile, JSON.stringify(record));
    const again = await cachedWorkflowBundle({ stateDir, onBundling, logger });
    expect(again.source).toMatchObject({ reused: false, why: 'workflows/index.ts changed' });
    expect(again.code).toBe(cold.code);
    expect((await cachedWorkflowBundle({ stateDir, logger })).source.reused).toBe(true);

    // A damaged cached bundle is never run.
    const codeFile = path.join(
      directory,
      names.find((name) => name.endsWith('.js'))!,
    );
    await writeFile(codeFile, 'half a bundle');
    const repaired = await cachedWorkflowBundle({ stateDir, onBundling, logger });
    expect(repaired.source).toMatchObject({ reused: false, why: 'the cached bundle is damaged' });
    expect(repaired.code).toBe(cold.code);
  });
});
