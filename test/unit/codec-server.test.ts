import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { codecServerSettings, isLoopback } from '../../client/commands/codec-server';
import { type CodecRequest, handleCodecRequest, parsePayloads, toJson } from '../../client/commands/codec-server-handler';
import { EncryptionCodec, parseKeyRing } from '../../infra/encryption-codec';
import { cli, isolateEnvironment } from '../helpers/cli';

isolateEnvironment();

const KEY = randomBytes(32).toString('base64');
const codec = new EncryptionCodec(parseKeyRing(`k1:${KEY}`, 'test'));
const UI = 'http://localhost:8233';
const TOKEN = 'token-0123456789abcdef';
const options = { codec, origins: [UI], token: TOKEN };

const request = (overrides: Partial<CodecRequest> & { body?: string }): CodecRequest => ({
  method: 'POST',
  url: '/decode',
  headers: {},
  body: '{"payloads":[]}',
  ...overrides,
});

describe('codec server handler', () => {
  it('encodes and decodes payload JSON, with the token as bearer or as the path prefix', async () => {
    const plain = toJson(defaultPayloadConverter.toPayload({ prompt: 'hello' }));
    const encoded = await handleCodecRequest(
      options,
      request({ url: '/encode', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ payloads: [plain] }) }),
    );
    expect(encoded.status).toBe(200);
    const encodedPayloads = JSON.parse(encoded.body).payloads;
    expect(Buffer.from(encodedPayloads[0].metadata.encoding, 'base64').toString()).toBe('binary/encrypted');
    const decoded = await handleCodecRequest(options, request({ url: `/${TOKEN}/decode?x=1`, body: JSON.stringify({ payloads: encodedPayloads }) }));
    expect(decoded.status).toBe(200);
    expect(JSON.parse(decoded.body)).toEqual({ payloads: [plain] });
    expect(decoded.headers['Cache-Control']).toBe('no-store');
  });

  it('refuses a missing or wrong token (401), other paths (404) and methods (405)', async () => {
    expect((await handleCodecRequest(options, request({}))).status).toBe(401);
    expect((await handleCodecRequest(options, request({ headers: { authorization: 'Bearer nope-nope-nope-nope' } }))).status).toBe(401);
    expect((await handleCodecRequest(options, request({ headers: { authorization: TOKEN } }))).status).toBe(401); // no "Bearer"
    expect((await handleCodecRequest(options, request({ url: '/other-prefix/decode' }))).status).toBe(401);
    expect((await handleCodecRequest(options, request({ url: '/', headers: { authorization: `Bearer ${TOKEN}` } }))).status).toBe(404);
    expect((await handleCodecRequest(options, request({ method: 'GET', headers: { authorization: `Bearer ${TOKEN}` } }))).status).toBe(405);
    // Only the last path segment selects the operation (the protocol; the CLI may add /{namespace}).
    expect((await handleCodecRequest(options, request({ url: '/default/decode', headers: { authorization: `Bearer ${TOKEN}` } }))).status).toBe(200);
    const open = { codec, origins: [UI] };
    expect((await handleCodecRequest(open, request({}))).status).toBe(200);
    expect((await handleCodecRequest(open, request({ url: '/default/decode' }))).status).toBe(200);
  });

  it('answers preflights for allowed origins only and adds CORS headers to their responses', async () => {
    const preflight = await handleCodecRequest(options, request({ method: 'OPTIONS', headers: { origin: UI } }));
    expect(preflight.status).toBe(204);
    expect(preflight.headers).toMatchObject({
      'Access-Control-Allow-Origin': UI,
      'Access-Control-Allow-Methods': 'POST, OPTIONS',
      'Access-Control-Allow-Headers': 'Content-Type, X-Namespace, Authorization',
      'Access-Control-Allow-Credentials': 'true',
      Vary: 'Origin',
    });
    expect(preflight.headers['Access-Control-Allow-Private-Network']).toBeUndefined();
    const other = await handleCodecRequest(options, request({ method: 'OPTIONS', headers: { origin: 'http://localhost:8234' } }));
    expect(other.status).toBe(403);
    expect(other.headers['Access-Control-Allow-Origin']).toBeUndefined();
    const noOrigin = await handleCodecRequest(options, request({ method: 'OPTIONS' }));
    expect(noOrigin.status).toBe(403);
    const post = await handleCodecRequest(options, request({ headers: { origin: UI, authorization: `Bearer ${TOKEN}` } }));
    expect(post.headers['Access-Control-Allow-Origin']).toBe(UI);
    // Even an error response carries them, so the UI can read why.
    const unauthorized = await handleCodecRequest(options, request({ headers: { origin: UI } }));
    expect(unauthorized).toMatchObject({ status: 401, headers: { 'Access-Control-Allow-Origin': UI, 'WWW-Authenticate': 'Bearer' } });
  });

  it('says what is wrong with a bad body (400) and names an unknown key id (422)', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    for (const [body, message] of [
      ['not json', /not JSON/],
      ['{"nope":1}', /expected \{"payloads": \[\.\.\.\]\}/],
      ['{"payloads":[{"data":"%%%"}]}', /payloads\[0\]\.data must be a base64 string/],
      ['{"payloads":[{"metadata":{"encoding":5}}]}', /payloads\[0\]\.metadata\.encoding must be a base64 string/],
    ] as const) {
      const response = await handleCodecRequest(options, request({ headers: auth, body }));
      expect(response.status).toBe(400);
      expect(JSON.parse(response.body).error).toMatch(message);
    }
    const [foreign] = await new EncryptionCodec(parseKeyRing(`old-key:${randomBytes(32).toString('base64')}`, 'test')).encode([
      defaultPayloadConverter.toPayload('x'),
    ]);
    const response = await handleCodecRequest(options, request({ headers: auth, body: JSON.stringify({ payloads: [toJson(foreign)] }) }));
    expect(response.status).toBe(422);
    expect(JSON.parse(response.body).error).toContain('key id "old-key"');
  });

  it('parses payload JSON with missing metadata or data', () => {
    expect(parsePayloads('{"payloads":[{}]}')).toEqual([{ metadata: {}, data: new Uint8Array() }]);
  });
});

describe('codec-server settings', () => {
  const env = { DURABLE_AGENT_ENCRYPTION_KEY: KEY };

  it('defaults to 127.0.0.1:8888 and the dev server UI origins, with no token', () => {
    const settings = codecServerSettings({}, env);
    expect(settings).toMatchObject({ host: '127.0.0.1', port: 8888, origins: ['http://localhost:8233', 'http://127.0.0.1:8233'], token: undefined });
    expect(codecServerSettings({ origin: ['https://cloud.temporal.io', UI], port: '0' }, env)).toMatchObject({
      port: 0,
      origins: ['https://cloud.temporal.io', UI],
    });
    expect(codecServerSettings({}, { ...env, DURABLE_AGENT_CODEC_TOKEN: TOKEN }).token).toBe(TOKEN);
    expect(isLoopback('127.0.0.1') && isLoopback('::1') && isLoopback('localhost') && !isLoopback('0.0.0.0')).toBe(true);
  });

  it.each([
    [{ host: '0.0.0.0' }, /reachable from other machines.*--token/],
    [{ token: 'short' }, /16–512 characters/],
    [{ token: 'has/slash-0123456789' }, /16–512 characters/],
    [{ origin: ['http://localhost:8233/'] }, /is not an origin/],
    [{ origin: ['localhost:8233'] }, /is not an origin/],
    [{ port: '99999' }, /--port must be a port number/],
    [{ port: '0x10' }, /--port must be a port number/],
  ])('refuses %j clearly', (values, message) => {
    expect(() => codecServerSettings(values, env)).toThrow(message);
  });

  it('the command line refuses an unknown option, naming the ones it has', async () => {
    const bogus = await cli('codec-server', '--bogus');
    expect(bogus.code).toBe(2);
    expect(bogus.err).toContain("codec-server: Unknown option '--bogus'");
    expect((await cli('codec-server', '--prot', '1')).err).toContain('Did you mean --port?');
  });

  it('the CLI command refuses to start without keys, with a bad key, or unprotected on a public address', async () => {
    delete process.env.DURABLE_AGENT_ENCRYPTION_KEY;
    delete process.env.DURABLE_AGENT_ENCRYPTION_KEY_FILE;
    const noKey = await cli('codec-server');
    expect(noKey.code).toBe(2);
    expect(noKey.err).toContain('codec-server needs the encryption keys: set DURABLE_AGENT_ENCRYPTION_KEY');
    process.env.DURABLE_AGENT_ENCRYPTION_KEY = 'c2hvcnQ=';
    const badKey = await cli('codec-server');
    expect(badKey.code).toBe(1);
    expect(badKey.err).toContain('DURABLE_AGENT_ENCRYPTION_KEY: key 1 of 1 decodes to 5 bytes; AES-256 needs exactly 32');
    process.env.DURABLE_AGENT_ENCRYPTION_KEY = KEY;
    const open = await cli('codec-server', '--host', '0.0.0.0');
    expect(open.code).toBe(2);
    expect(open.err).toContain('--host 0.0.0.0 is reachable from other machines');
  });

  it('a bad key stops every other command before it connects', async () => {
    process.env.DURABLE_AGENT_ENCRYPTION_KEY = 'not base64!';
    process.env.TEMPORAL_ADDRESS = '127.0.0.1:1'; // "Cannot reach" would mean it connected first
    const result = await cli('status', 'some-id');
    expect(result.code).toBe(1);
    expect(result.err).toContain('DURABLE_AGENT_ENCRYPTION_KEY: key 1 of 1 is not base64');
    expect(result.err).not.toContain('Cannot reach');
  });
});
