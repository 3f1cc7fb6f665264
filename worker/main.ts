/**
 * Worker entry point: `npm run worker` / `durable-agent worker`. Connects with the usual Temporal
 * settings (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY / TLS via @temporalio/envconfig),
 * runs until SIGINT/SIGTERM, then shuts down gracefully (the SDK's Runtime handles the signals).
 */
import Anthropic from '@anthropic-ai/sdk';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { anthropicFromEnvironment, createActivities, defaultStateDir } from '../activities';
import { startScriptedModelServer } from '../testing/scripted-model-server';
import { installPeopleLogger } from './runtime-logger';
import { SCRIPTED_HELP, scriptedResponder } from './scripted-model';
import { TemporalUnreachableError, connectClient, connectionOptions, temporalSettings } from '../infra/connection';
import { EncryptionKeyError } from '../infra/encryption-codec';
import { settleLivePublishers } from '../activities/live-publisher';
import { McpConnectionManager } from '../activities/mcp/connections';
import { sandboxStatusLine } from '../activities/sandbox';
import { ripgrepStatusLine } from '../activities/tools/ripgrep';
import { createWorker } from './worker';
import { WorkerTuningError, workerTuningFromEnvironment } from './tuning';
import { WorkerVersioningError, workerDeploymentFromEnvironment } from './versioning';
import { createWorkspaceWorker } from './workspace-worker';

export interface RunWorkerOptions {
  /** Run a workspace worker on this task queue instead (tools, hooks, session context only). */
  workspaceQueue?: string;
  /**
   * Answer model calls from the local scripted model server (worker/scripted-model.ts) instead of
   * the API: every feature can be tried without a key (issue 19, item 5).
   */
  scripted?: boolean;
}

export async function runWorker(env: NodeJS.ProcessEnv = process.env, options: RunWorkerOptions = {}): Promise<void> {
  // Warnings and errors only, no colours when piped (not the bundler's INFO lines).
  installPeopleLogger();
  const settings = temporalSettings(env);
  // Checked before connecting: a bad value is a clear error, not a half-started worker.
  const tuning = workerTuningFromEnvironment(env);
  const deployment = workerDeploymentFromEnvironment(env);
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
    console.log(`durable-agent worker: SCRIPTED model (no API key used) at ${scripted.url}. Prompts it understands:\n${SCRIPTED_HELP.split('\n').slice(1).join('\n')}`);
  } else if (!anthropic) {
    console.warn(
      'durable-agent worker: ANTHROPIC_API_KEY is not set (nor ANTHROPIC_BASE_URL); model calls will fail with a clear error until it is.',
    );
  }
  const worker = await createWorker({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    dataConverter: settings.dataConverter,
    activities: createActivities({ anthropic, stateDir: defaultStateDir(env), temporalClient: client, mcpConnections }),
    overrides: tuning,
    deployment,
  });
  await runUntilStopped(
    worker,
    `durable-agent worker: polling task queue "${settings.taskQueue}" on ${settings.address} (namespace ${settings.namespace})` +
      `, model calls handed over on "${worker.handoffTaskQueue}"` +
      (deployment ? `, Worker Deployment version ${deployment.version.deploymentName}.${deployment.version.buildId} (conversations pinned)` : '') +
      (scripted ? ', scripted model' : env.ANTHROPIC_BASE_URL ? `, model API at ${env.ANTHROPIC_BASE_URL}` : '') +
      (settings.dataConverter ? `, payloads encrypted with key ${settings.dataConverter.payloadCodecs[0].keyRing.primary.id}` : ''),
    closeMcp,
    connection,
    client.connection,
    { close: async () => scripted?.close() },
  );
}

async function runUntilStopped(worker: Worker, banner: string, ...connections: Array<{ close(): Promise<void> }>): Promise<void> {
  console.log(banner);
  // Whether Bash commands and Stop hooks on this host will run in the OS sandbox (issue 17 §10).
  console.log(await sandboxStatusLine());
  // Whether Grep and Glob have their engine on this host (issue 23): said now, not at the first search.
  console.log(ripgrepStatusLine());
  try {
    await worker.run();
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
        error instanceof EncryptionKeyError
        ? error.message
        : error,
    );
    process.exit(1);
  });
}
