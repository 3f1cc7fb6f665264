/**
 * Temporal connection settings, read the usual way (`@temporalio/envconfig`: TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE and the config file), with
 * a clear message when the server does not answer.
 */
import { Client, Connection } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { DEFAULT_TASK_QUEUE } from '../common/config';
import { encryptionDataConverter, keyRingFromEnvironment } from './encryption-codec';

export const DEFAULT_TEMPORAL_ADDRESS = 'localhost:7233';

export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  tls?: unknown;
  apiKey?: string;
  metadata?: Record<string, string>;
  /** Set when DURABLE_AGENT_ENCRYPTION_KEY(_FILE) is: the encrypting codec, for clients and workers alike. */
  dataConverter?: ReturnType<typeof encryptionDataConverter>;
}

/** Thrown when the Temporal server cannot be reached; its message tells a person what to do. */
export class TemporalUnreachableError extends Error {
  override readonly name = 'TemporalUnreachableError';
  constructor(
    readonly address: string,
    readonly detail: string,
  ) {
    super(
      `Cannot reach the Temporal server at ${address} (${detail}).\n` +
        `Start a local one with \`npm run server\` (or \`durable-agent server\`), ` +
        `or point TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE (and TEMPORAL_API_KEY for Temporal Cloud) at yours.`,
    );
  }
}

export function temporalSettings(env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  const { connectionOptions, namespace } = loadClientConnectConfig();
  return {
    address: connectionOptions.address ?? env.TEMPORAL_ADDRESS ?? DEFAULT_TEMPORAL_ADDRESS,
    namespace: namespace ?? env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: env.DURABLE_AGENT_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
    tls: connectionOptions.tls,
    apiKey: typeof connectionOptions.apiKey === 'string' ? connectionOptions.apiKey : undefined,
    metadata: connectionOptions.metadata as Record<string, string> | undefined,
    // A malformed key fails here, at startup, with EncryptionKeyError's message.
    dataConverter: encryptionDataConverter(keyRingFromEnvironment(env)),
  };
}

/** The connection options both Connection (client) and NativeConnection (worker) take. */
export function connectionOptions(settings: TemporalSettings) {
  return {
    address: settings.address,
    tls: settings.tls as never,
    apiKey: settings.apiKey,
    metadata: settings.metadata,
  };
}

/** Connects a Client, failing fast (5 s by default) with TemporalUnreachableError. */
export async function connectClient(settings: TemporalSettings = temporalSettings(), timeoutMs = 5_000): Promise<Client> {
  let connection: Connection;
  try {
    connection = await Connection.connect({ ...connectionOptions(settings), connectTimeout: timeoutMs });
    await connection.workflowService.getSystemInfo({});
  } catch (error) {
    throw new TemporalUnreachableError(settings.address, error instanceof Error ? error.message.split('\n')[0] : String(error));
  }
  return new Client({ connection, namespace: settings.namespace, dataConverter: settings.dataConverter });
}
