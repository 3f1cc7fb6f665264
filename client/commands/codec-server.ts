/**
 * `durable-agent codec-server [--port 8888] [--host 127.0.0.1] [--origin <url>]... [--token <t>]`:
 * serves the remote codec endpoint (codec-server-handler.ts) with the keys of
 * DURABLE_AGENT_ENCRYPTION_KEY(_FILE), so people who run it read encrypted conversations in the
 * Temporal Web UI or with `temporal workflow show --codec-endpoint`; everyone else sees ciphertext.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ENCRYPTION_KEY_FILE_VARIABLE, ENCRYPTION_KEY_VARIABLE, EncryptionCodec, type KeyRing, keyRingFromEnvironment } from '../../infra/encryption-codec';
import type { CommandInput } from '../command-line';
import { UsageError } from '../usage-error';
import { type CodecHandlerOptions, handleCodecRequest } from './codec-server-handler';

export const DEFAULT_CODEC_PORT = 8888;
export const DEFAULT_CODEC_HOST = '127.0.0.1';
/** The dev server's Web UI (`durable-agent server`, `temporal server start-dev`). */
export const DEFAULT_CODEC_ORIGINS = ['http://localhost:8233', 'http://127.0.0.1:8233'];
export const CODEC_TOKEN_VARIABLE = 'DURABLE_AGENT_CODEC_TOKEN';
/** Larger request bodies are refused (413): Temporal payloads are limited to a few MB each. */
export const MAX_CODEC_BODY_BYTES = 64 * 1024 * 1024;
const TOKEN_PATTERN = /^[A-Za-z0-9._~-]{16,512}$/;

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

export interface CodecServerSettings extends CodecHandlerOptions {
  host: string;
  port: number;
}

export interface RunningCodecServer {
  /** Base URL, e.g. http://127.0.0.1:8888 (without the token). */
  url: string;
  server: Server;
  close(): Promise<void>;
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The codec server's options (the `codec-server` command's, parsed by client/cli.ts). */
export interface CodecServerOptions {
  port?: string;
  host?: string;
  origin?: string[];
  token?: string;
}

/** Checks the options and the environment (pure apart from reading the key file). */
export function codecServerSettings(values: CodecServerOptions, env: NodeJS.ProcessEnv = process.env): CodecServerSettings {
  const portText = values.port ?? String(DEFAULT_CODEC_PORT);
  const port = /^[0-9]+$/.test(portText) ? Number(portText) : NaN;
  if (!Number.isInteger(port) || port > 65535) throw new UsageError(`--port must be a port number (0–65535), got "${portText}".`);
  const host = values.host ?? DEFAULT_CODEC_HOST;
  const origins = values.origin ?? DEFAULT_CODEC_ORIGINS;
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      /* reported below */
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.origin !== origin) {
      throw new UsageError(
        `--origin "${origin}" is not an origin: give scheme, host and port only, e.g. https://cloud.temporal.io or http://localhost:8233 (no path, no trailing slash).`,
      );
    }
  }
  const token = values.token ?? (env[CODEC_TOKEN_VARIABLE] || undefined);
  if (token !== undefined && !TOKEN_PATTERN.test(token)) {
    throw new UsageError(
      `The token must be 16–512 characters of letters, digits, ".", "_", "~" or "-" (it can appear in a URL path). Make one with \`openssl rand -hex 32\`.`,
    );
  }
  if (token === undefined && !isLoopback(host)) {
    throw new UsageError(
      `--host ${host} is reachable from other machines: anyone who reaches it could decrypt conversations. ` +
        `Give a --token (or ${CODEC_TOKEN_VARIABLE}), e.g. \`--token "$(openssl rand -hex 32)"\`.`,
    );
  }
  const keyRing: KeyRing | undefined = keyRingFromEnvironment(env);
  if (!keyRing) {
    throw new UsageError(`codec-server needs the encryption keys: set ${ENCRYPTION_KEY_VARIABLE} (or ${ENCRYPTION_KEY_FILE_VARIABLE}) as for the worker.`);
  }
  return { host, port, origins, token, codec: new EncryptionCodec(keyRing) };
}

/** Serves the codec endpoint until `close()`. */
export async function startCodecServer(settings: CodecServerSettings): Promise<RunningCodecServer> {
  const server = createServer((request, response) => {
    void (async () => {
      let body: string;
      try {
        body = await readBody(request);
      } catch {
        response.writeHead(413, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: `Request body over ${MAX_CODEC_BODY_BYTES} bytes.` }));
        request.resume();
        return;
      }
      const headers: Record<string, string | undefined> = {};
      for (const [name, value] of Object.entries(request.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      const answer = await handleCodecRequest(settings, { method: request.method ?? 'GET', url: request.url ?? '/', headers, body }).catch(
        (error: unknown) => ({ status: 500, headers: {}, body: JSON.stringify({ error: String(error) }) }),
      );
      response.writeHead(answer.status, answer.headers).end(answer.body);
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = settings.host.includes(':') && !settings.host.startsWith('[') ? `[${settings.host}]` : settings.host;
  return {
    url: `http://${host}:${port}`,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_CODEC_BODY_BYTES) {
        request.removeAllListeners('data');
        reject(new Error('too large'));
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** The `codec-server` command: runs until SIGINT/SIGTERM. Returns the exit code. */
export async function codecServerCommand({ values }: CommandInput, io: Io): Promise<number> {
  // A bad option or a missing key is a UsageError: printed, exit code 2.
  const settings = codecServerSettings(values as CodecServerOptions);
  let running: RunningCodecServer;
  try {
    running = await startCodecServer(settings);
  } catch (error) {
    io.err(`Error: cannot listen on ${settings.host}:${settings.port}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
    return 1;
  }
  const { keyRing } = settings.codec as EncryptionCodec;
  io.out(
    `durable-agent codec server on ${running.url} (encrypts with key ${keyRing.primary.id}; decrypts ${[...keyRing.keys.keys()].join(', ')})\n` +
      `  allowed browser origins: ${settings.origins.join(', ')}\n` +
      `  Temporal UI → Settings (Data Encoder / codec server) endpoint: ${running.url}${settings.token ? '/<token>' : ''}\n` +
      `  temporal CLI: --codec-endpoint ${running.url}${settings.token ? ' --codec-auth "Bearer <token>"' : ''}`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await running.close();
  io.out('durable-agent codec server: stopped');
  return 0;
}
