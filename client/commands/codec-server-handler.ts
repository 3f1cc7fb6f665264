/**
 * The remote codec endpoint the Temporal Web UI and the `temporal` CLI (`--codec-endpoint`) call to
 * show encrypted payloads: `POST …/encode` and `POST …/decode` with `{"payloads": [...]}` (Payload
 * protobuf JSON: metadata values and data in base64). Only the last path segment selects the
 * operation (Temporal's codec server protocol), so the endpoint can be mounted under a prefix.
 *
 * Access: with a token, a request must carry `Authorization: Bearer <token>` or put the token as
 * the path prefix (`/<token>/decode` — the Web UI cannot add a header of its own choosing, so its
 * endpoint setting is `http://host:port/<token>`); with the bearer header any prefix is fine. CORS: only the configured origins (the UI's) get
 * CORS headers, preflights included; a browser request from any other origin is refused.
 *
 * No I/O here beyond the codec: `handleCodecRequest` maps a request to a response (codec-server.ts
 * serves it over node:http).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { PayloadDecryptionError } from '../../infra/encryption-codec';

export interface CodecHandlerOptions {
  codec: PayloadCodec;
  /** Origins allowed to call from a browser, e.g. `http://localhost:8233`, `https://cloud.temporal.io`. */
  origins: readonly string[];
  /** Required bearer token (or path prefix); undefined: no token (loopback only, enforced by the command). */
  token?: string;
}

export interface CodecRequest {
  method: string;
  /** Path and query, as in the request line. */
  url: string;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | undefined>>;
  body: string;
}

export interface CodecResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Headers the UI and the CLI send (browsers ask for them in the preflight). */
export const ALLOWED_REQUEST_HEADERS = ['Content-Type', 'X-Namespace', 'Authorization'];

interface JsonPayload {
  metadata?: Record<string, string> | null;
  data?: string | null;
}

export async function handleCodecRequest(options: CodecHandlerOptions, request: CodecRequest): Promise<CodecResponse> {
  const origin = request.headers.origin;
  const originAllowed = origin !== undefined && options.origins.includes(origin);
  const cors: Record<string, string> = originAllowed
    ? { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Credentials': 'true', Vary: 'Origin' }
    : { Vary: 'Origin' };
  const reply = (status: number, body: unknown, extra: Record<string, string> = {}): CodecResponse => ({
    status,
    headers: { ...cors, 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...extra },
    body: JSON.stringify(body),
  });

  // A browser on another origin: no CORS headers, no work (not even a preflight answer).
  if (origin !== undefined && !originAllowed) {
    return { status: 403, headers: { Vary: 'Origin' }, body: JSON.stringify({ error: `Origin ${origin} is not allowed.` }) };
  }

  const path = request.url.split('?')[0];
  const segments = path.split('/').filter((segment) => segment !== '');
  const operation = segments.at(-1);
  const prefix = segments.slice(0, -1).join('/');

  if (request.method === 'OPTIONS') {
    if (!originAllowed) return reply(403, { error: 'A CORS preflight needs an allowed Origin.' });
    const headers: Record<string, string> = {
      'Access-Control-Allow-Methods': 'POST, OPTIONS',
      'Access-Control-Allow-Headers': ALLOWED_REQUEST_HEADERS.join(', '),
      'Access-Control-Max-Age': '600',
    };
    // Chrome's Private Network Access: a public page (cloud.temporal.io) calling localhost asks first.
    if (request.headers['access-control-request-private-network'] === 'true') headers['Access-Control-Allow-Private-Network'] = 'true';
    return { status: 204, headers: { ...cors, ...headers }, body: '' };
  }
  if (operation !== 'encode' && operation !== 'decode') return reply(404, { error: 'Not found: POST …/encode or …/decode.' });
  if (request.method !== 'POST') return reply(405, { error: `Use POST for /${operation}.` }, { Allow: 'POST, OPTIONS' });

  if (options.token !== undefined) {
    const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1]?.trim();
    if (!sameSecret(bearer, options.token) && !sameSecret(prefix, options.token)) {
      return reply(401, { error: 'Missing or wrong token.' }, { 'WWW-Authenticate': 'Bearer' });
    }
  }

  let payloads: Payload[];
  try {
    payloads = parsePayloads(request.body);
  } catch (error) {
    return reply(400, { error: `Bad request body: ${(error as Error).message}` });
  }
  try {
    const result = operation === 'decode' ? await options.codec.decode(payloads) : await options.codec.encode(payloads);
    return reply(200, { payloads: result.map(toJson) });
  } catch (error) {
    if (error instanceof PayloadDecryptionError) return reply(422, { error: error.message });
    return reply(500, { error: `The codec failed: ${(error as Error).message}` });
  }
}

/** Constant-time comparison of a presented secret with the expected one. */
function sameSecret(presented: string | undefined, expected: string): boolean {
  if (presented === undefined || presented === '') return false;
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function bytes(value: unknown, where: string): Uint8Array {
  if (typeof value !== 'string' || !BASE64.test(value)) throw new Error(`${where} must be a base64 string`);
  return Buffer.from(value, 'base64');
}

export function parsePayloads(body: string): Payload[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new Error('not JSON');
  }
  const list = (parsed as { payloads?: unknown } | null)?.payloads;
  if (!Array.isArray(list)) throw new Error('expected {"payloads": [...]}');
  return list.map((item: JsonPayload, index) => {
    if (item === null || typeof item !== 'object') throw new Error(`payloads[${index}] must be an object`);
    const metadata: Record<string, Uint8Array> = {};
    for (const [key, value] of Object.entries(item.metadata ?? {})) metadata[key] = bytes(value, `payloads[${index}].metadata.${key}`);
    return { metadata, data: item.data == null ? new Uint8Array() : bytes(item.data, `payloads[${index}].data`) };
  });
}

export function toJson(payload: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')])),
    data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
  };
}
