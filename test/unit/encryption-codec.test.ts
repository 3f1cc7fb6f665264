import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure, type Payload, defaultPayloadConverter } from '@temporalio/common';
import { decodeFromPayloadsAtIndex, encodeErrorToFailure, encodeToPayloads } from '@temporalio/common/lib/internal-non-workflow';
import { loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import { describe, expect, it } from 'vitest';
import {
  ENCRYPTED_ENCODING,
  EncryptionCodec,
  EncryptionKeyError,
  METADATA_ENCRYPTION_KEY_ID,
  PayloadDecryptionError,
  derivedKeyId,
  encryptionDataConverter,
  keyRingFromEnvironment,
  parseKeyRing,
} from '../../infra/encryption-codec';

const newKey = () => randomBytes(32).toString('base64');
const text = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString();
const payloadOf = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);

describe('EncryptionCodec', () => {
  it('round-trips payloads and leaves no plaintext in the encoded form', async () => {
    const codec = new EncryptionCodec(parseKeyRing(`main:${newKey()}`, 'test'));
    const value = { prompt: 'the secret launch code is 4242', nested: [1, 2, { file: 'contents of secret.txt' }] };
    const [encoded] = await codec.encode([payloadOf(value)]);
    expect(text(encoded.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(encoded.metadata![METADATA_ENCRYPTION_KEY_ID])).toBe('main');
    expect(Object.keys(encoded.metadata!).sort()).toEqual(['encoding', METADATA_ENCRYPTION_KEY_ID]);
    expect(Buffer.from(encoded.data!).includes('secret')).toBe(false);
    expect(Buffer.from(encoded.data!).includes('json/plain')).toBe(false); // the original metadata is inside
    const [decoded] = await codec.decode([encoded]);
    expect(text(decoded.metadata!.encoding)).toBe('json/plain');
    expect(defaultPayloadConverter.fromPayload(decoded)).toEqual(value);
  });

  it('round-trips empty data, binary data, many payloads, and passes unencrypted payloads through', async () => {
    const codec = new EncryptionCodec(parseKeyRing(newKey(), 'test'));
    const inputs: Payload[] = [
      defaultPayloadConverter.toPayload(undefined),
      defaultPayloadConverter.toPayload(new Uint8Array([0, 1, 2, 255])),
      ...Array.from({ length: 20 }, (_, index) => payloadOf(`value ${index}`)),
    ];
    const decoded = await codec.decode(await codec.encode(inputs));
    expect(decoded.map((payload) => defaultPayloadConverter.fromPayload(payload))).toEqual(
      inputs.map((payload) => defaultPayloadConverter.fromPayload(payload)),
    );
    const plain = payloadOf('written before encryption was turned on');
    expect(await codec.decode([plain])).toEqual([plain]);
  });

  it('uses a fresh IV: the same value encrypts differently each time', async () => {
    const codec = new EncryptionCodec(parseKeyRing(newKey(), 'test'));
    const [a, b] = await codec.encode([payloadOf('same'), payloadOf('same')]);
    expect(Buffer.from(a.data!).equals(Buffer.from(b.data!))).toBe(false);
  });

  it('compresses before encrypting when that helps, and not when it does not', async () => {
    const codec = new EncryptionCodec(parseKeyRing(newKey(), 'test'));
    const repetitive = payloadOf('const answer = 42;\n'.repeat(5_000)); // ~95 kB of source-like text
    const random = payloadOf(randomBytes(50_000).toString('base64')); // incompressible-ish
    const [small, large] = await codec.encode([repetitive, random]);
    expect(small.data!.length).toBeLessThan(repetitive.data!.length / 20);
    // No compression: the payload plus fixed overhead (IV, tag, flag byte, protobuf framing).
    expect(large.data!.length).toBeLessThan(random.data!.length + 200);
    const [back] = await codec.decode([small]);
    expect(defaultPayloadConverter.fromPayload(back)).toBe('const answer = 42;\n'.repeat(5_000));
  });

  it('rotates: encrypts with the first key, decrypts with any listed key', async () => {
    const oldKey = newKey();
    const newer = newKey();
    const before = new EncryptionCodec(parseKeyRing(`old:${oldKey}`, 'test'));
    const after = new EncryptionCodec(parseKeyRing(`new:${newer},old:${oldKey}`, 'test'));
    const [writtenBefore] = await before.encode([payloadOf('old conversation')]);
    const [writtenAfter] = await after.encode([payloadOf('new conversation')]);
    expect(text(writtenAfter.metadata![METADATA_ENCRYPTION_KEY_ID])).toBe('new');
    const decoded = await after.decode([writtenBefore, writtenAfter]);
    expect(decoded.map((payload) => defaultPayloadConverter.fromPayload(payload))).toEqual(['old conversation', 'new conversation']);
  });

  it('names the unknown key id and the known ones when a payload was written with a key it lacks', async () => {
    const writer = new EncryptionCodec(parseKeyRing(`retired-2025:${newKey()}`, 'test'));
    const reader = new EncryptionCodec(parseKeyRing(`current:${newKey()}`, 'test'));
    const [encoded] = await writer.encode([payloadOf('x')]);
    await expect(reader.decode([encoded])).rejects.toThrow(PayloadDecryptionError);
    await expect(reader.decode([encoded])).rejects.toThrow(/key id "retired-2025", which is not among the configured keys \(current\)/);
  });

  it('detects tampering: a flipped bit, a swapped key id, a truncated payload', async () => {
    const key = newKey();
    const codec = new EncryptionCodec(parseKeyRing(`a:${key},b:${key}`, 'test')); // same key under two ids
    const [encoded] = await codec.encode([payloadOf('pay 10 EUR to Alice')]);
    for (const index of [0, 12, 20, encoded.data!.length - 1]) {
      const data = Buffer.from(encoded.data!);
      data[index] ^= 0x01;
      await expect(codec.decode([{ ...encoded, data }])).rejects.toThrow(/failed authentication/);
    }
    // The key id is authenticated data: relabelling the payload fails even with the right key bytes.
    const relabelled = { ...encoded, metadata: { ...encoded.metadata, [METADATA_ENCRYPTION_KEY_ID]: Buffer.from('b') } };
    await expect(codec.decode([relabelled])).rejects.toThrow(/failed authentication/);
    await expect(codec.decode([{ ...encoded, data: encoded.data!.subarray(0, 20) }])).rejects.toThrow(/truncated/);
    const noId = { ...encoded, metadata: { encoding: encoded.metadata!.encoding } };
    await expect(codec.decode([noId])).rejects.toThrow(/no "encryption-key-id"/);
  });

  it('puts failure messages and stack traces into the encrypted attributes (encryptionDataConverter)', async () => {
    const converter = loadDataConverter(encryptionDataConverter(parseKeyRing(newKey(), 'test')));
    const failure = await encodeErrorToFailure(converter, ApplicationFailure.create({ message: 'cannot read /home/alice/secret-plan.md' }));
    expect(failure.message).toBe('Encoded failure');
    expect(failure.stackTrace).toBe('');
    expect(JSON.stringify(failure)).not.toContain('secret-plan');
    expect(Buffer.from(failure.encodedAttributes!.data!).includes('secret-plan')).toBe(false);
    // And a client with the keys reads it back.
    const payloads = await encodeToPayloads(converter, 'x');
    expect(await decodeFromPayloadsAtIndex(converter, 0, payloads)).toBe('x');
  });
});

describe('key settings', () => {
  it('accepts a bare key (derived id), id:key pairs, commas, newlines and comments', () => {
    const a = newKey();
    const b = newKey();
    const ring = parseKeyRing(`# rotated 2026-11\n${a}\n  second:${b} , `, 'test');
    expect(ring.primary.id).toBe(derivedKeyId(Buffer.from(a, 'base64')));
    expect(ring.primary.id).toMatch(/^k[0-9a-f]{8}$/);
    expect([...ring.keys.keys()]).toEqual([ring.primary.id, 'second']);
    // The derived id does not reveal the key.
    expect(a).not.toContain(ring.primary.id.slice(1));
    // URL-safe base64 is accepted too.
    const urlSafe = Buffer.from(a, 'base64').toString('base64url');
    expect(parseKeyRing(urlSafe, 'test').primary.key.equals(Buffer.from(a, 'base64'))).toBe(true);
  });

  it.each([
    ['not base64', 'not-a-key!', /key 1 of 1 is not base64 .*openssl rand -base64 32/],
    ['too short', Buffer.alloc(16).toString('base64'), /decodes to 16 bytes; AES-256 needs exactly 32/],
    ['too long', Buffer.alloc(48).toString('base64'), /decodes to 48 bytes/],
    ['bad id', `bad!id:${Buffer.alloc(32).toString('base64')}`, /the key id "bad!id" must be 1–64 letters/],
    ['empty', ' , ', /holds no key/],
    ['id reused', `x:${Buffer.alloc(32, 1).toString('base64')},x:${Buffer.alloc(32, 2).toString('base64')}`, /"x" is used for two different keys/],
  ])('refuses a bad key (%s) with a clear message that does not echo it', (_name, value, message) => {
    expect(() => keyRingFromEnvironment({ DURABLE_AGENT_ENCRYPTION_KEY: value })).toThrow(EncryptionKeyError);
    expect(() => keyRingFromEnvironment({ DURABLE_AGENT_ENCRYPTION_KEY: value })).toThrow(message);
    try {
      keyRingFromEnvironment({ DURABLE_AGENT_ENCRYPTION_KEY: value });
    } catch (error) {
      expect((error as Error).message).toContain('DURABLE_AGENT_ENCRYPTION_KEY');
      if (value.length > 20) expect((error as Error).message).not.toContain(value.split(':').at(-1));
    }
  });

  it('reads a key file, refuses a missing one and both variables at once; no variable: encryption off', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-keys-'));
    try {
      const file = path.join(directory, 'keys');
      const key = newKey();
      await writeFile(file, `# primary\nprod-2:${key}\n`);
      expect(keyRingFromEnvironment({ DURABLE_AGENT_ENCRYPTION_KEY_FILE: file })?.primary.id).toBe('prod-2');
      expect(() => keyRingFromEnvironment({ DURABLE_AGENT_ENCRYPTION_KEY_FILE: path.join(directory, 'nope') })).toThrow(/cannot be read: ENOENT/);
      expect(() => keyRingFromEnvironment({ DURABLE_AGENT_ENCRYPTION_KEY_FILE: file, DURABLE_AGENT_ENCRYPTION_KEY: key })).toThrow(/set only one/);
      expect(keyRingFromEnvironment({})).toBeUndefined();
      expect(keyRingFromEnvironment({ DURABLE_AGENT_ENCRYPTION_KEY: '' })).toBeUndefined();
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
