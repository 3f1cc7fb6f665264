/**
 * Issue 12, encrypted history: with DURABLE_AGENT_ENCRYPTION_KEY set, the real worker process
 * (`worker/main.ts`) and the CLI encrypt every payload. A client without the key reads only
 * ciphertext from the history (no prompt, no file content, no model text anywhere in its bytes);
 * with the codec it reads the conversation; the codec server decrypts the same payloads over HTTP
 * for the Temporal UI and the `temporal` CLI (`--codec-endpoint`), behind its token and CORS rules.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@temporalio/client';
import { METADATA_ENCODING_KEY, type Payload, defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningCodecServer, startCodecServer } from '../../client/commands/codec-server';
import { toJson } from '../../client/commands/codec-server-handler';
import { ENCRYPTED_ENCODING, EncryptionCodec, encryptionDataConverter, parseKeyRing } from '../../infra/encryption-codec';
import { ensureTemporalCli } from '../../infra/temporal-cli';
import { statusQuery } from '../../workflows/definitions';
import { cli, isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness } from '../helpers/harness';

const execFileAsync = promisify(execFile);

isolateEnvironment();
let harness: Harness | undefined;
let codecServer: RunningCodecServer | undefined;
afterEach(async () => {
  await codecServer?.close();
  codecServer = undefined;
  await harness?.close();
  harness = undefined;
});

/** Every Payload anywhere in a protobuf-shaped object (history events, nested failures, maps). */
function payloadsIn(value: unknown, found: Array<Payload & { path: string }> = [], path = ''): Array<Payload & { path: string }> {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return found;
  const record = value as Record<string, unknown>;
  if (record.metadata && typeof record.metadata === 'object' && 'data' in record) {
    const encoding = (record.metadata as Record<string, unknown>)[METADATA_ENCODING_KEY];
    if (ArrayBuffer.isView(encoding)) found.push(Object.assign(record as Payload, { path }));
  }
  for (const [name, child] of Object.entries(record)) payloadsIn(child, found, /^[0-9]+$/.test(name) ? path : `${path}.${name}`);
  return found;
}

describe('encrypted history', () => {
  it('a conversation run by the worker process and the CLI with the key leaves only ciphertext in history', async () => {
    const marker = randomUUID().slice(0, 8);
    const prompt = `PROMPT-${marker} summarise secret.txt into summary.txt`;
    const fileContent = `FILE-CONTENT-${marker}: the merger closes on Friday`;
    const written = `WRITTEN-${marker}: merger summary`;
    const answer = `ANSWER-${marker}: done`;
    const key = randomBytes(32).toString('base64');
    const ring = parseKeyRing(`test-key-1:${key}`, 'test');
    harness = await createHarness(
      {
        script: [
          { content: [{ type: 'tool_use', name: 'Read', input: { file_path: 'secret.txt' } }] },
          { content: [{ type: 'tool_use', name: 'Write', input: { file_path: 'summary.txt', content: written } }] },
          { content: [{ type: 'text', text: answer }] },
        ],
      },
      { dataConverter: encryptionDataConverter(ring) },
    );
    await writeFile(path.join(harness.workspace, 'secret.txt'), `${fileContent}\n`);

    // The real entry points: worker/main.ts in its own process and the CLI, both configured by the variable.
    process.env.DURABLE_AGENT_ENCRYPTION_KEY = `test-key-1:${key}`;
    await harness.spawnWorkerProcess();
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    const started = await cli('start', '--cwd', harness.workspace, '--permission-mode', 'acceptEdits', '--follow', prompt);
    expect(started.err).toBe('');
    expect(started.code).toBe(0);
    expect(started.out).toContain(answer);
    const conversationId = started.out.split('\n')[0];
    expect(conversationId).toMatch(/^conversation-[0-9a-f]{8}$/); // the id does not spell the prompt
    expect(await readFile(path.join(harness.workspace, 'summary.txt'), 'utf8')).toBe(written);
    // The model saw the file: the worker decrypted what it needed.
    expect(JSON.stringify(harness.model.requests.at(-1)!.body.messages)).toContain(fileContent);

    // A client without the key: the raw history bytes hold none of the conversation.
    const plain = new Client({ connection: harness.client.connection, namespace: 'default' });
    const history = await plain.workflow.getHandle(conversationId).fetchHistory();
    const bytes = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
    expect(bytes.length).toBeGreaterThan(1000);
    for (const secret of [`PROMPT-${marker}`, `FILE-CONTENT-${marker}`, `WRITTEN-${marker}`, `ANSWER-${marker}`, 'merger', 'secret.txt', 'summary.txt']) {
      expect(bytes.includes(secret), `"${secret}" is in the raw history`).toBe(false);
    }
    const payloads = payloadsIn(history);
    expect(payloads.length).toBeGreaterThan(10);
    // Plain text by design: search attributes (the server indexes them) and the SDK's own marker
    // bookkeeping (patch ids; a local activity's type, attempt and times — its result is encrypted).
    const plainByDesign = /^\.events\.(\w+\.searchAttributes\.indexedFields\.\w+|markerRecordedEventAttributes\.details\.(patch-data|data)\.payloads)$/;
    const encrypted = payloads.filter((payload) => Buffer.from(payload.metadata![METADATA_ENCODING_KEY]).toString() === ENCRYPTED_ENCODING);
    const plainPaths = new Set(payloads.filter((payload) => !encrypted.includes(payload)).map((payload) => payload.path));
    expect([...plainPaths].filter((where) => !plainByDesign.test(where))).toEqual([]);
    expect(encrypted.length).toBeGreaterThan(10);
    // Its queries come back encrypted too: it cannot read them.
    await expect(plain.workflow.getHandle(conversationId).query(statusQuery)).rejects.toThrow(/binary\/encrypted/);
    // The CLI without the key says why it cannot read the conversation.
    delete process.env.DURABLE_AGENT_ENCRYPTION_KEY;
    const keyless = await cli('status', conversationId);
    expect(keyless.code).toBe(1);
    expect(keyless.err).toContain("This conversation's data is encrypted, and this process has no key to read it. Set DURABLE_AGENT_ENCRYPTION_KEY");
    process.env.DURABLE_AGENT_ENCRYPTION_KEY = `test-key-1:${key}`;
    expect((await cli('status', conversationId)).code).toBe(0);

    // With the codec, the same history reads as the conversation.
    const codec = new EncryptionCodec(ring);
    const startedEvent = history.events!.find((event) => event.workflowExecutionStartedEventAttributes)!;
    const startInput = startedEvent.workflowExecutionStartedEventAttributes!.input!.payloads! as Payload[];
    const [input] = (await codec.decode(startInput)).map((payload) => defaultPayloadConverter.fromPayload<any>(payload));
    expect(input.initialPrompt).toBe(prompt);
    const decodedEverything = (await codec.decode(encrypted)).map((payload) => JSON.stringify(defaultPayloadConverter.fromPayload(payload)));
    expect(decodedEverything.some((text) => text.includes(fileContent))).toBe(true);
    expect(decodedEverything.some((text) => text.includes(answer))).toBe(true);
    expect((await harness.api.status(conversationId)).phase).toBeDefined(); // the harness client has the codec

    // The codec server decodes the same payloads over HTTP, for the UI (token in the path) and the CLI.
    const token = `tok-${randomBytes(16).toString('hex')}`;
    codecServer = await startCodecServer({ host: '127.0.0.1', port: 0, origins: ['http://localhost:8233'], token, codec });
    const decode = (url: string, headers: Record<string, string> = {}) =>
      fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', ...headers },
        body: JSON.stringify({ payloads: startInput.map(toJson) }),
      });
    const viaHeader = await decode(`${codecServer.url}/decode`, { Authorization: `Bearer ${token}`, Origin: 'http://localhost:8233' });
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    const body = (await viaHeader.json()) as { payloads: Array<{ metadata: Record<string, string>; data: string }> };
    expect(Buffer.from(body.payloads[0].metadata.encoding, 'base64').toString()).toBe('json/plain');
    expect(Buffer.from(body.payloads[0].data, 'base64').toString()).toContain(prompt);
    expect((await decode(`${codecServer.url}/${token}/decode`)).status).toBe(200);
    expect((await decode(`${codecServer.url}/decode`)).status).toBe(401);
    expect((await decode(`${codecServer.url}/decode`, { Authorization: 'Bearer wrong-token-0123456789' })).status).toBe(401);
    expect((await decode(`${codecServer.url}/wrong-token-0123456789/decode`)).status).toBe(401);

    // The stock temporal CLI shows ciphertext without the endpoint and the prompt with it.
    const temporalCli = (await ensureTemporalCli({ log: () => undefined })).path;
    // Asynchronously: the codec server answering it runs in this process.
    const show = (...extra: string[]) =>
      execFileAsync(temporalCli, ['workflow', 'show', '--address', harness!.address, '--workflow-id', conversationId, '--output', 'json', ...extra], {
        encoding: 'utf8',
        timeout: 60_000,
        maxBuffer: 64 * 1024 * 1024,
      });
    const withoutCodec = await show();
    expect(withoutCodec.stdout).not.toContain(`PROMPT-${marker}`);
    expect(withoutCodec.stdout).toContain(Buffer.from(ENCRYPTED_ENCODING).toString('base64'));
    const withCodec = await show('--codec-endpoint', codecServer.url, '--codec-auth', `Bearer ${token}`);
    // JSON output shows payload data in base64: decode every "data" field.
    const shownData = (output: string) =>
      [...output.matchAll(/"data": "([A-Za-z0-9+/=]*)"/g)].map((match) => Buffer.from(match[1], 'base64').toString()).join('\n');
    expect(shownData(withoutCodec.stdout)).not.toContain(`PROMPT-${marker}`);
    expect(shownData(withCodec.stdout)).toContain(`PROMPT-${marker}`);
    expect(shownData(withCodec.stdout)).toContain(`FILE-CONTENT-${marker}`);
  }, 180_000);

  it('the codec server answers a CORS preflight for the UI origin only, and refuses other origins', async () => {
    const codec = new EncryptionCodec(parseKeyRing(randomBytes(32).toString('base64'), 'test'));
    codecServer = await startCodecServer({ host: '127.0.0.1', port: 0, origins: ['http://localhost:8233'], token: 'secret-token-0123456789', codec });
    const preflight = (origin: string) =>
      fetch(`${codecServer!.url}/decode`, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'content-type,x-namespace,authorization',
          'Access-Control-Request-Private-Network': 'true',
        },
      });
    const allowed = await preflight('http://localhost:8233');
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    expect(allowed.headers.get('access-control-allow-methods')).toContain('POST');
    expect(allowed.headers.get('access-control-allow-headers')?.toLowerCase().split(', ')).toEqual(
      expect.arrayContaining(['content-type', 'x-namespace', 'authorization']),
    );
    expect(allowed.headers.get('access-control-allow-private-network')).toBe('true');

    const other = await preflight('https://evil.example');
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    // A request from another origin is refused even with the token (a page there must not use the server).
    const [encrypted] = await codec.encode([defaultPayloadConverter.toPayload('x')]);
    const fromOther = await fetch(`${codecServer.url}/decode`, {
      method: 'POST',
      headers: { Origin: 'https://evil.example', Authorization: 'Bearer secret-token-0123456789', 'Content-Type': 'application/json' },
      body: JSON.stringify({ payloads: [toJson(encrypted)] }),
    });
    expect(fromOther.status).toBe(403);
    expect(fromOther.headers.get('access-control-allow-origin')).toBeNull();
  });
});
