/**
 * Worker entry point: `npm run worker` / `durable-agent worker`. Connects with the usual Temporal
 * settings (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY / TLS via @temporalio/envconfig),
 * runs until SIGINT/SIGTERM, then shuts down gracefully (the SDK's Runtime handles the signals).
 */
import Anthropic from '@anthropic-ai/sdk';
import { NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { anthropicFromEnvironment, createActivities, defaultStateDir } from '../activities';
import { startScriptedModelServer } from '../testing/scripted-model-server';
import { installPeopleLogger } from './runtime-logger';
import { SCRIPTED_HELP, scriptedResponder } from './scripted-model';
import { TemporalUnreachableError, connectClient, connectionOptions, temporalSettings } from '../infra/connection';
import { EncryptionKeyError } from '../infra/encryption-codec';
import { settleLivePublishers } from '../activities/live-publisher';
import { McpConnectionManager } from '../activities/mcp/connections';
import { setWorkerTemporalAddress } from '../activities/sandbox-network';
import { sandboxStatusLine } from '../activities/sandbox';
import { ripgrepStatusLine } from '../activities/tools/ripgrep';
import { createWorker } from './worker';
import { WorkerTuningError, workerTuningFromEnvironment } from './tuning';
import { type BecomeCurrentOutcome, WorkerVersioningError, becomeCurrentVersion, versionedDeployment, versioningFromEnvironment } from './versioning';
import { type BundleSource, WorkflowBundleError, cachedWorkflowBundle, prebuiltWorkflowBundle, prepareWorkerVersion } from './workflow-bundles';
import { RetainedVersions } from './retained-versions';
import { createWorkspaceWorker } from './workspace-worker';

export interface RunWorkerOptions {
  /** Run a workspace worker on this task queue instead (tools, hooks, session context only). */
  workspaceQueue?: string;
  /**
   * Answer model calls from the local scripted model server (worker/scripted-model.ts) instead of
   * the API: every feature can be tried without a key (issue 19, item 5).
   */
  scripted?: boolean;
  /**
   * Text prepended to the workflow bundle: the same source, another content hash, so another
   * build id (tests make version N+1 without a second commit).
   */
  bundleBanner?: string;
  /** How often older kept versions are checked for pinned runs (default 60 s). */
  retainedVersionsIntervalMs?: number;
}

export async function runWorker(env: NodeJS.ProcessEnv = process.env, options: RunWorkerOptions = {}): Promise<void> {
  // Warnings and errors only, no colours when piped (not the bundler's INFO lines).
  installPeopleLogger();
  const settings = temporalSettings(env);
  // Checked before connecting: a bad value is a clear error, not a half-started worker.
  const tuning = workerTuningFromEnvironment(env);
  const versioning = versioningFromEnvironment(env);
  // DURABLE_AGENT_WORKFLOW_BUNDLE: a bundle built ahead of time instead of bundling here (seconds of CPU).
  const prebuilt = options.workspaceQueue === undefined ? await prebuiltWorkflowBundle(env, options.bundleBanner) : undefined;
  // The sandbox's network and WebFetch never reach this server (whatever profile or variable named it).
  setWorkerTemporalAddress(settings.address);
  const client = await connectClient(settings);
  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect(connectionOptions(settings));
  } catch (error) {
    throw new TemporalUnreachableError(settings.address, error instanceof Error ? error.message : String(error));
  }
  const scripted = options.scripted ? await startScriptedModelServer({ respond: scriptedResponder }) : undefined;
  const anthropic = scripted ? new Anthropic({ apiKey: 'scripted', baseURL: scripted.url, maxRetries: 0 }) : anthropicFromEnvironment(env);
  // The worker's MCP server connections (stdio servers are processes of this worker): closed when it stops.
  const mcpConnections = new McpConnectionManager();
  const closeMcp = { close: () => mcpConnections.close() };
  if (options.workspaceQueue !== undefined) {
    return runUntilStopped(
      await createWorkspaceWorker({
        connection,
        namespace: settings.namespace,
        taskQueue: options.workspaceQueue,
        dataConverter: settings.dataConverter,
        activities: createActivities({ anthropic: undefined, stateDir: defaultStateDir(env), temporalClient: client, mcpConnections }),
        overrides: tuning,
      }),
      `durable-agent worker: polling workspace task queue "${options.workspaceQueue}" on ${settings.address} (namespace ${settings.namespace}) ` +
        `for tools, hooks and session context in workspaces on this host` +
        (settings.dataConverter ? `; payloads encrypted with key ${settings.dataConverter.payloadCodecs[0].keyRing.primary.id}` : ''),
      closeMcp,
      connection,
      client.connection,
    );
  }
  if (scripted) {
    console.log(
      `durable-agent worker: SCRIPTED model (no API key used) at ${scripted.url}. Prompts it understands:\n${SCRIPTED_HELP.split('\n').slice(1).join('\n')}`,
    );
  } else if (!anthropic) {
    console.warn('durable-agent worker: ANTHROPIC_API_KEY is not set (nor ANTHROPIC_BASE_URL); model calls will fail with a clear error until it is.');
  }
  // Versioned by default (issue 30): the build id is the bundle's content hash, and the bundle is
  // kept in the state directory so that this machine serves the runs pinned to it after an upgrade.
  const stateDir = defaultStateDir(env);
  const activities = createActivities({ anthropic, stateDir, temporalClient: client, mcpConnections });
  const workerFor = (code: string | undefined, buildId: string | undefined, handoff = true) =>
    createWorker({
      connection,
      namespace: settings.namespace,
      taskQueue: settings.taskQueue,
      dataConverter: settings.dataConverter,
      activities,
      overrides: tuning,
      ...(code !== undefined ? { workflowBundle: { code } } : {}),
      ...(versioning && buildId ? { deployment: versionedDeployment(versioning.deploymentName, buildId) } : {}),
      handoff,
    });
  // The workflow bundle: webpack runs once per change of the workflow code (seconds), then the cached bundle is reused.
  const bundle =
    prebuilt ??
    (await cachedWorkflowBundle({
      stateDir,
      dataConverter: settings.dataConverter,
      logger: Runtime.instance().logger,
      banner: options.bundleBanner,
      onBundling: () => process.stdout.write('durable-agent worker: bundling workflow code (once per change of it)…'),
    }).then(
      (cached) => {
        console.log(bundleLine(cached.source));
        return cached;
      },
      (error: unknown) => {
        process.stdout.write('\n');
        throw error;
      },
    ));
  const version = versioning ? await prepareWorkerVersion(versioning, { stateDir, prebuilt: bundle }) : undefined;
  const worker = await workerFor(bundle.code, version?.buildId);
  const retained =
    versioning && version
      ? new RetainedVersions({
          service: client.workflowService,
          namespace: settings.namespace,
          deploymentName: versioning.deploymentName,
          currentBuildId: version.buildId,
          bundles: version.bundles,
          createWorker: (buildId, bundleCode) => workerFor(bundleCode, buildId, false),
          intervalMs: options.retainedVersionsIntervalMs,
        })
      : undefined;
  await runUntilStopped(
    worker,
    async () => {
      let versionLine = ', unversioned (DURABLE_AGENT_UNVERSIONED=1)';
      if (versioning && version) {
        const name = `${versioning.deploymentName}:${version.buildId}`;
        const outcome: BecomeCurrentOutcome | undefined = versioning.becomeCurrent
          ? await becomeCurrentVersion(
              client.workflowService,
              { namespace: settings.namespace, deploymentName: versioning.deploymentName, buildId: version.buildId },
              { identity: `durable-agent worker ${process.pid}` },
            )
          : undefined;
        const state =
          outcome === undefined
            ? 'not made current (DURABLE_AGENT_BECOME_CURRENT=0)'
            : typeof outcome === 'string'
              ? `${outcome === 'made current' ? 'now' : 'already'} the current version`
              : `NOT current: ${outcome.notCurrent}`;
        await retained?.start();
        const serving = retained?.serving.length ? `; also serving runs pinned to ${retained.serving.join(', ')}` : '';
        versionLine = `, Worker Deployment version ${name} (conversations pinned; ${state}${serving})`;
      }
      return (
        `durable-agent worker: polling task queue "${settings.taskQueue}" on ${settings.address} (namespace ${settings.namespace})` +
        `, model calls handed over on "${worker.handoffTaskQueue}"` +
        versionLine +
        (scripted ? ', scripted model' : env.ANTHROPIC_BASE_URL ? `, model API at ${env.ANTHROPIC_BASE_URL}` : '') +
        (settings.dataConverter ? `, payloads encrypted with key ${settings.dataConverter.payloadCodecs[0].keyRing.primary.id}` : '')
      );
    },
    { close: async () => retained?.stop() },
    closeMcp,
    connection,
    client.connection,
    { close: async () => scripted?.close() },
  );
}

/** The line the worker prints about its workflow bundle (ends the "bundling…" line when it bundled). */
function bundleLine(source: BundleSource): string {
  return source.reused
    ? `durable-agent worker: workflow code unchanged since it was bundled: bundle reused (checked in ${Math.round(source.checkMs)} ms)`
    : ` done in ${(source.bundleMs / 1000).toFixed(1)} s (${source.why}; kept in ${source.file})`;
}

/** Runs the worker; the banner is made once it polls (a versioned worker first becomes current). */
async function runUntilStopped(worker: Worker, banner: string | (() => Promise<string>), ...connections: Array<{ close(): Promise<void> }>): Promise<void> {
  const running = worker.run();
  try {
    console.log(typeof banner === 'string' ? banner : await banner());
    // Whether Bash commands and Stop hooks on this host will run in the OS sandbox (issue 17 §10).
    console.log(await sandboxStatusLine());
    // Whether Grep and Glob have their engine on this host (issue 23): said now, not at the first search.
    console.log(ripgrepStatusLine());
    await running;
  } catch (error) {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running.catch(() => undefined);
    throw error;
  } finally {
    await settleLivePublishers();
    for (const connection of connections) await connection.close();
  }
  console.log('durable-agent worker: stopped');
}

if (require.main === module) {
  runWorker(process.env, { scripted: process.argv.includes('--scripted') }).catch((error: unknown) => {
    console.error(
      error instanceof TemporalUnreachableError ||
        error instanceof WorkerTuningError ||
        error instanceof WorkerVersioningError ||
        error instanceof WorkflowBundleError ||
        error instanceof EncryptionKeyError
        ? error.message
        : error,
    );
    process.exit(1);
  });
}
