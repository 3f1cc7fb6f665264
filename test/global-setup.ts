/**
 * vitest globalSetup for the `integration` project (see vitest.config.ts): one Temporal dev server for the whole
 * run, shared by every integration test file through `inject('temporalAddress')`.
 *
 * - `TEMPORAL_TEST_ADDRESS=host:port` uses a server you already run (it must have the project's search
 *   attributes; `npm run server` does) instead of starting one.
 * - Otherwise: ensureTemporalCli() (which may build the CLI with Go on the first run — hence hookTimeout) and an
 *   ephemeral, in-memory, headless dev server on free ports, stopped at teardown.
 */
import { DefaultLogger } from '@temporalio/worker';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { cachedWorkflowBundle } from '../worker/workflow-bundles';
import { isTemporalReachable, startDevServer, type DevServer } from '../infra/dev-server';
import { ensureTemporalCli } from '../infra/temporal-cli';

declare module 'vitest' {
  export interface ProvidedContext {
    /** host:port of the Temporal frontend the integration tests use (namespace `default`). */
    temporalAddress: string;
    /** File holding the workflow bundle, built once per test run (see test/helpers/harness.ts). */
    workflowBundlePath: string;
  }
}

/**
 * Bundles the workflow code once for the whole run (every test file's workers load it), or reuses the bundle of an
 * earlier run while the workflow code is unchanged: the worker's own cache (worker/workflow-bundles.ts), kept in
 * the system's temporary directory.
 */
async function bundleOnce(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const { code, source } = await cachedWorkflowBundle({
    stateDir: path.join(os.tmpdir(), 'durable-agent-test-bundle-cache'),
    logger: new DefaultLogger('WARN'),
  });
  log(
    source.reused
      ? `workflow bundle reused (checked in ${Date.now() - started} ms)`
      : `workflow code bundled in ${((Date.now() - started) / 1000).toFixed(1)} s (${source.why})`,
  );
  const directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-bundle-'));
  const file = path.join(directory, 'workflow-bundle.js');
  await writeFile(file, code);
  project.provide('workflowBundlePath', file);
  return () => rm(directory, { recursive: true, force: true });
}

const log = (line: string) => process.stderr.write(`[global-setup] ${line}\n`);

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const existing = process.env.TEMPORAL_TEST_ADDRESS;
  if (existing) {
    if (!(await isTemporalReachable(existing, 5_000))) {
      throw new Error(`TEMPORAL_TEST_ADDRESS=${existing}, but no Temporal server answers there (GetSystemInfo).`);
    }
    log(`Using the Temporal server at TEMPORAL_TEST_ADDRESS=${existing}`);
    project.provide('temporalAddress', existing);
    return bundleOnce(project);
  }

  const cli = await ensureTemporalCli({ log });
  let server: DevServer | undefined = await startDevServer({ ephemeral: true, headless: true, cliPath: cli.path, log });
  project.provide('temporalAddress', server.address);
  const removeBundle = await bundleOnce(project);
  return async () => {
    const s = server;
    server = undefined;
    await s?.stop();
    await removeBundle();
  };
}
