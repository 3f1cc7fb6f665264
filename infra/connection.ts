/**
 * Temporal connection settings, read the usual way (`@temporalio/envconfig`: TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE and the config file), with
 * a clear message when the server does not answer.
 */
import { Client, Connection } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import net from 'node:net';
import { DEFAULT_TASK_QUEUE } from '../common/config';
import { encryptionDataConverter, keyRingFromEnvironment } from './encryption-codec';
import { closeSafeInterceptors } from './grpc-retry';

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

/** Errors of a TCP connect that mean nobody can answer there now (not a slow network). */
const DEFINITIVE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * A plain TCP connect to host:port: the reason when it is definitively refused (nothing listens,
 * no such host), else undefined (it connected, or it is merely slow: the gRPC connect decides).
 * gRPC itself retries a refused connection until its deadline (issue 19, item 14: 5.7 s).
 */
export function refusedReason(address: string, timeoutMs = 1_000): Promise<string | undefined> {
  const match = /^\[?([^\]]*?)\]?:(\d+)$/.exec(address.replace(/^[a-z]+:\/\//i, ''));
  if (!match) return Promise.resolve(undefined);
  const [, host, port] = match;
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: Number(port) });
    const done = (reason: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reason);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.once('connect', () => done(undefined));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code && DEFINITIVE.has(error.code) ? `${error.code}: ${error.message}` : undefined));
  });
}

/** Connects a Client, failing fast (5 s by default; at once when nothing listens) with TemporalUnreachableError. */
export async function connectClient(settings: TemporalSettings = temporalSettings(), timeoutMs = 5_000): Promise<Client> {
  const refused = await refusedReason(settings.address);
  if (refused)
    throw new TemporalUnreachableError(
      settings.address,
      refused.replace(/^(\w+): .*$/, (_, code: string) => (code === 'ECONNREFUSED' ? 'nothing listens there' : code)),
    );
  let connection: Connection;
  try {
    connection = await Connection.connect({ ...connectionOptions(settings), connectTimeout: timeoutMs, interceptors: closeSafeInterceptors() });
    await connection.workflowService.getSystemInfo({});
  } catch (error) {
    throw new TemporalUnreachableError(settings.address, error instanceof Error ? error.message.split('\n')[0] : String(error));
  }
  return new Client({ connection, namespace: settings.namespace, dataConverter: settings.dataConverter });
}
