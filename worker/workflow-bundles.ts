/**
 * The worker's workflow bundle (the same options the SDK uses for `workflowsPath`), reused from a cache in the state
 * directory while the workflow code is unchanged, and the bundles of earlier versions kept there so that one machine
 * that pulls new code still serves the runs pinned to its older versions (worker/retained-versions.ts):
 * `<stateDir>/workflow-bundles/<deployment>/<build id>.js`.
 */
import { type Logger, type WorkerOptions, bundleWorkflowCode } from '@temporalio/worker';
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { WORKFLOWS_PATH } from './worker';
import { bundleBuildId } from './versioning';

/** A workflow bundle: its code and the build id derived from it. */
export interface WorkflowBundle {
  code: string;
}

interface BundleOptions {
  dataConverter?: WorkerOptions['dataConverter'];
  logger?: Logger;
  /** Text prepended to the code (tests build a second, different bundle from the same source). */
  banner?: string;
}

const withBanner = (code: string, banner: string | undefined) => (banner ? `${banner}\n${code}` : code);

/** What bundleWorkflowCode is given besides the sources: the converters' paths (encrypted failures, infra/encryption-codec.ts). */
function bundlerOptions(dataConverter: WorkerOptions['dataConverter'] | undefined) {
  return {
    workflowsPath: WORKFLOWS_PATH,
    ...(dataConverter?.failureConverterPath ? { failureConverterPath: dataConverter.failureConverterPath } : {}),
    ...(dataConverter?.payloadConverterPath ? { payloadConverterPath: dataConverter.payloadConverterPath } : {}),
  };
}

/**
 * Bundles the workflow code as `Worker.create({ workflowsPath })` would: the data converter's
 * payload and failure converters are bundled in (encrypted failures, infra/encryption-codec.ts).
 * Also returns the files webpack read (sources, packages' files and their package.json): what the bundle depends on.
 */
async function bundleAndListInputs(options: BundleOptions): Promise<{ code: string; inputs: string[] }> {
  let inputs: string[] = [];
  const { code } = await bundleWorkflowCode({
    ...bundlerOptions(options.dataConverter),
    ...(options.logger ? { logger: options.logger } : {}),
    // Only reads what webpack resolved once it is done: the code is the same as without the hook (the build id too).
    webpackConfigHook: (config) => ({
      ...config,
      plugins: [
        ...(config.plugins ?? []),
        {
          apply(compiler) {
            compiler.hooks.done.tap('durable-agent-bundle-inputs', (stats) => {
              inputs = [...stats.compilation.fileDependencies];
            });
          },
        },
      ],
    }),
  });
  // Files only (webpack lists some directories too). The SDK's generated entry point lives in memory: it follows from
  // the options, which key the cache.
  return { code, inputs: inputs.filter((file) => path.isAbsolute(file) && statSync(file, { throwIfNoEntry: false })?.isFile()).sort() };
}

/** Bundles the workflow code (no cache). */
export async function bundleWorkflows(options: BundleOptions = {}): Promise<WorkflowBundle> {
  const { code } = await bundleAndListInputs(options);
  return { code: withBanner(code, options.banner) };
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** `<stateDir>/workflow-bundle-cache/<key>.json`: the inputs' hashes when `<key>.js` was bundled. */
interface CacheRecord {
  /** Absolute path → SHA-256 of its content. */
  inputs: Record<string, string>;
  codeSha256: string;
  bundledAt: string;
  bundleMs: number;
}

/** How {@link cachedWorkflowBundle} got the bundle. */
export type BundleSource = { reused: true; checkMs: number; file: string } | { reused: false; bundleMs: number; file: string; why: string };

/**
 * The key of a cache entry: what the bundle depends on besides its input files — the SDK's bundler version
 * (webpack, swc and their settings come with it), the workflows path and the converters' paths.
 */
function cacheKey(dataConverter: WorkerOptions['dataConverter'] | undefined): string {
  const fromSdk = createRequire(require.resolve('@temporalio/worker'));
  const version = (name: string) => {
    try {
      return (fromSdk(`${name}/package.json`) as { version: string }).version;
    } catch {
      return 'unknown';
    }
  };
  const bundler = { sdk: version('@temporalio/worker'), webpack: version('webpack'), swc: version('@swc/core'), swcLoader: version('swc-loader') };
  return sha256(JSON.stringify({ ...bundler, ...bundlerOptions(dataConverter) })).slice(0, 16);
}

/** A path as the worker's line shows it: relative to the checkout when inside it. */
const shown = (file: string) => {
  const relative = path.relative(path.dirname(WORKFLOWS_PATH), file);
  return relative.startsWith('..') ? file : relative;
};

/** Why the cached bundle cannot be reused, or undefined when it can. */
async function cacheMiss(record: CacheRecord | undefined, code: string | undefined): Promise<string | undefined> {
  if (!record || code === undefined) return 'no bundle cached yet';
  if (sha256(code) !== record.codeSha256) return 'the cached bundle is damaged';
  for (const [file, hash] of Object.entries(record.inputs)) {
    const content = await readFile(file).catch(() => undefined);
    if (content === undefined) return `${shown(file)} is gone`;
    if (sha256(content) !== hash) return `${shown(file)} changed`;
  }
  return undefined;
}

/**
 * The workflow bundle, bundled once per change of the workflow code: `<stateDir>/workflow-bundle-cache/<key>.js`
 * is reused while every file webpack read to make it (the workflow sources and what they import, the bundled packages'
 * files and package.json) has the same content — checked by hash, some tens of milliseconds against seconds of webpack.
 * The banner is added after the cache, so the same cached code serves a different banner. `onBundling` is told
 * before webpack starts (it takes seconds: the worker says so).
 */
export async function cachedWorkflowBundle(
  options: BundleOptions & { stateDir: string; onBundling?: (why: string) => void },
): Promise<WorkflowBundle & { source: BundleSource }> {
  const directory = path.join(options.stateDir, 'workflow-bundle-cache');
  const key = cacheKey(options.dataConverter);
  const codeFile = path.join(directory, `${key}.js`);
  const recordFile = path.join(directory, `${key}.json`);
  const started = performance.now();
  const record = await readFile(recordFile, 'utf8')
    .then((text) => JSON.parse(text) as CacheRecord)
    .catch(() => undefined);
  const cached = record ? await readFile(codeFile, 'utf8').catch(() => undefined) : undefined;
  const why = await cacheMiss(record, cached);
  if (why === undefined && cached !== undefined) {
    return { code: withBanner(cached, options.banner), source: { reused: true, checkMs: performance.now() - started, file: codeFile } };
  }
  options.onBundling?.(why ?? 'no bundle cached yet');
  const bundlingStarted = performance.now();
  const { code, inputs } = await bundleAndListInputs(options);
  const bundleMs = performance.now() - bundlingStarted;
  const hashes: Record<string, string> = {};
  for (const file of inputs) hashes[file] = sha256(await readFile(file));
  // Code first, then the record that vouches for it; each written whole (a temporary file renamed): a worker starting
  // at the same time reads the old pair, the new pair, or a record whose code hash does not match (and bundles).
  await mkdir(directory, { recursive: true });
  const next: CacheRecord = { inputs: hashes, codeSha256: sha256(code), bundledAt: new Date().toISOString(), bundleMs: Math.round(bundleMs) };
  for (const [file, text] of [
    [codeFile, code],
    [recordFile, `${JSON.stringify(next, null, 1)}\n`],
  ] as const) {
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, text);
    await rename(temporary, file);
  }
  return { code: withBanner(code, options.banner), source: { reused: false, bundleMs, file: codeFile, why: why ?? 'no bundle cached yet' } };
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
 * Bundles the workflow code (or reuses its cached bundle, or takes `prebuilt`), derives the build id from it (unless overridden) and keeps the bundle
 * in the state directory, so that this machine can serve runs pinned to this version after it
 * moved on to newer code (worker/retained-versions.ts).
 */
export async function prepareWorkerVersion(
  versioning: { deploymentName: string; buildIdOverride?: string },
  options: BundleOptions & { stateDir: string; prebuilt?: WorkflowBundle; onBundling?: (why: string) => void },
): Promise<WorkerVersion> {
  const { code } = options.prebuilt ?? (await cachedWorkflowBundle(options));
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
