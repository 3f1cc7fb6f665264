/**
 * The worker's workflow bundle, built once at start (the same options the SDK uses for
 * `workflowsPath`), and the bundles of earlier versions kept in the state directory so that one
 * machine that pulls new code still serves the runs pinned to its older versions
 * (worker/retained-versions.ts): `<stateDir>/workflow-bundles/<deployment>/<build id>.js`.
 */
import { type Logger, type WorkerOptions, bundleWorkflowCode } from '@temporalio/worker';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { WORKFLOWS_PATH } from './worker';
import { bundleBuildId } from './versioning';

/** A workflow bundle: its code and the build id derived from it. */
export interface WorkflowBundle {
  code: string;
}

/**
 * Bundles the workflow code as `Worker.create({ workflowsPath })` would: the data converter's
 * payload and failure converters are bundled in (encrypted failures, infra/encryption-codec.ts).
 * `banner`: text prepended to the code (tests build a second, different bundle from the same source).
 */
export async function bundleWorkflows(
  options: { dataConverter?: WorkerOptions['dataConverter']; logger?: Logger; banner?: string } = {},
): Promise<WorkflowBundle> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    ...(options.dataConverter?.failureConverterPath ? { failureConverterPath: options.dataConverter.failureConverterPath } : {}),
    ...(options.dataConverter?.payloadConverterPath ? { payloadConverterPath: options.dataConverter.payloadConverterPath } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  return { code: options.banner ? `${options.banner}\n${code}` : code };
}

/** Environment variable: a workflow bundle built ahead of time, loaded instead of bundling at start. */
export const WORKFLOW_BUNDLE_VARIABLE = 'DURABLE_AGENT_WORKFLOW_BUNDLE';

export class WorkflowBundleError extends Error {
  override readonly name = 'WorkflowBundleError';
}

/**
 * `DURABLE_AGENT_WORKFLOW_BUNDLE=<file>`: the workflow bundle a build step made from this checkout
 * (`npx tsx worker/workflow-bundles.ts <file>`, or `bundleWorkflowCode` with the same workflows path and data
 * converter); the worker loads it instead of spending seconds of CPU bundling at start. Undefined when unset.
 * A versioned worker's build id is still the content hash of what it runs (banner included).
 */
export async function prebuiltWorkflowBundle(env: NodeJS.ProcessEnv = process.env, banner?: string): Promise<WorkflowBundle | undefined> {
  const file = env[WORKFLOW_BUNDLE_VARIABLE]?.trim();
  if (!file) return undefined;
  let code: string;
  try {
    code = await readFile(file, 'utf8');
  } catch (error) {
    throw new WorkflowBundleError(
      `${WORKFLOW_BUNDLE_VARIABLE}=${file}: cannot read the workflow bundle (${error instanceof Error ? error.message : String(error)}).`,
    );
  }
  if (!code.trim()) throw new WorkflowBundleError(`${WORKFLOW_BUNDLE_VARIABLE}=${file} is empty: build it again (npx tsx worker/workflow-bundles.ts ${file}).`);
  return { code: banner ? `${banner}\n${code}` : code };
}

/** The bundles of one deployment's versions this machine has run. */
export class KeptBundles {
  readonly directory: string;

  constructor(stateDir: string, deploymentName: string) {
    this.directory = path.join(stateDir, 'workflow-bundles', deploymentName);
  }

  file(buildId: string): string {
    return path.join(this.directory, `${buildId}.js`);
  }

  /** Keeps a version's bundle (written to a temporary file first: a reader never sees half of one). */
  async keep(buildId: string, code: string): Promise<void> {
    await mkdir(this.directory, { recursive: true });
    const temporary = `${this.file(buildId)}.${process.pid}.tmp`;
    await writeFile(temporary, code);
    await rename(temporary, this.file(buildId));
  }

  /** Build ids of the kept bundles. */
  async buildIds(): Promise<string[]> {
    const names = await readdir(this.directory).catch(() => [] as string[]);
    return names.filter((name) => name.endsWith('.js')).map((name) => name.slice(0, -'.js'.length));
  }

  read(buildId: string): Promise<string> {
    return readFile(this.file(buildId), 'utf8');
  }

  remove(buildId: string): Promise<void> {
    return rm(this.file(buildId), { force: true });
  }
}

/** A versioned worker's version: its bundle, build id, and where its bundles are kept. */
export interface WorkerVersion {
  deploymentName: string;
  buildId: string;
  code: string;
  bundles: KeptBundles;
}

/**
 * Bundles the workflow code, derives the build id from it (unless overridden) and keeps the bundle
 * in the state directory, so that this machine can serve runs pinned to this version after it
 * moved on to newer code (worker/retained-versions.ts).
 */
export async function prepareWorkerVersion(
  versioning: { deploymentName: string; buildIdOverride?: string },
  options: { stateDir: string; dataConverter?: WorkerOptions['dataConverter']; logger?: Logger; banner?: string; prebuilt?: WorkflowBundle },
): Promise<WorkerVersion> {
  const { code } = options.prebuilt ?? (await bundleWorkflows(options));
  const buildId = versioning.buildIdOverride ?? bundleBuildId(code);
  const bundles = new KeptBundles(options.stateDir, versioning.deploymentName);
  await bundles.keep(buildId, code);
  return { deploymentName: versioning.deploymentName, buildId, code, bundles };
}

/** `npx tsx worker/workflow-bundles.ts <file>`: writes the workflow bundle for DURABLE_AGENT_WORKFLOW_BUNDLE (unencrypted). */
if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: npx tsx worker/workflow-bundles.ts <file>   (then DURABLE_AGENT_WORKFLOW_BUNDLE=<file> for the worker)');
    process.exit(2);
  }
  bundleWorkflows().then(
    ({ code }) => writeFile(file, code).then(() => console.log(`${file}: workflow bundle written (${code.length} bytes)`)),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
