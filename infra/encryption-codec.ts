/**
 * Encrypted history: a PayloadCodec that compresses, then encrypts with AES-256-GCM, every payload
 * the worker and the clients send to Temporal (workflow inputs and results, signal/update/query
 * arguments, activity inputs/results, heartbeat details, memo, user metadata, encoded failure
 * attributes). The Temporal server and anyone reading history without the key see ciphertext.
 *
 * Node only (node:crypto, node:zlib): never imported by workflow code. Workers and clients pick it up
 * through `encryptionFromEnvironment()` (infra/connection.ts); the codec server uses the same keys.
 *
 * Keys: `DURABLE_AGENT_ENCRYPTION_KEY` (or a file named by `DURABLE_AGENT_ENCRYPTION_KEY_FILE`) holds
 * one or more keys separated by commas or newlines; each is `id:base64` or bare `base64`
 * (base64 of exactly 32 random bytes; a bare key's id is `k` + 8 hex digits of its SHA-256, which
 * does not reveal the key). The first key encrypts; every listed key decrypts. Rotation: put the new
 * key first, keep the old ones after it as long as histories written with them are read.
 *
 * Wire format (compatible in shape with Temporal's encryption samples): metadata
 * `encoding: binary/encrypted` and `encryption-key-id: <id>`; data = 12-byte IV ‖ ciphertext ‖
 * 16-byte GCM tag, with the key id as additional authenticated data. The plaintext is one flag byte
 * (0 = as is, 1 = raw DEFLATE) followed by the original Payload, protobuf-encoded (metadata and data).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { deflateRaw, inflateRaw } from 'node:zlib';
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const METADATA_ENCRYPTION_KEY_ID = 'encryption-key-id';
export const ENCRYPTION_KEY_VARIABLE = 'DURABLE_AGENT_ENCRYPTION_KEY';
export const ENCRYPTION_KEY_FILE_VARIABLE = 'DURABLE_AGENT_ENCRYPTION_KEY_FILE';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const FLAG_PLAIN = 0;
const FLAG_DEFLATE = 1;
/** Payloads shorter than this are not worth a compression attempt. */
const MIN_COMPRESS_BYTES = 64;
/** A decompressed payload may not exceed this (a forged or corrupt stream cannot exhaust memory). */
const MAX_INFLATED_BYTES = 512 * 1024 * 1024;
const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

const deflateRawAsync = promisify(deflateRaw);
const inflateRawAsync = promisify(inflateRaw);

/** A key setting that cannot be used; the message says what is wrong and how to fix it. */
export class EncryptionKeyError extends Error {
  override readonly name = 'EncryptionKeyError';
}

/** A payload this codec cannot decrypt (unknown key id, tampered or corrupt data). */
export class PayloadDecryptionError extends Error {
  override readonly name = 'PayloadDecryptionError';
}

export interface EncryptionKey {
  id: string;
  key: Buffer;
}

/** The keys: `keys[0]` encrypts, all decrypt. */
export interface KeyRing {
  primary: EncryptionKey;
  keys: ReadonlyMap<string, Buffer>;
}

/** The id a key without an explicit one gets: derived from the key, reveals nothing about it. */
export function derivedKeyId(key: Buffer): string {
  return `k${createHash('sha256').update('durable-agent key id\0').update(key).digest('hex').slice(0, 8)}`;
}

/**
 * Parses a key list (`[id:]base64` entries separated by commas or newlines; `#` starts a
 * comment in a key file). `source` names the setting in error messages. Never echoes key material.
 */
export function parseKeyRing(text: string, source: string): KeyRing {
  const entries = text
    .split('\n')
    .map((line) => line.replace(/#.*$/, ''))
    .join('\n')
    .split(/[,\n]/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new EncryptionKeyError(`${source} is set but holds no key. ${HOW_TO_MAKE_A_KEY}`);
  const keys = new Map<string, Buffer>();
  const ordered: EncryptionKey[] = [];
  entries.forEach((entry, index) => {
    const where = `${source}: key ${index + 1} of ${entries.length}`;
    const colon = entry.indexOf(':');
    const explicitId = colon >= 0 ? entry.slice(0, colon) : undefined;
    const encoded = colon >= 0 ? entry.slice(colon + 1) : entry;
    if (explicitId !== undefined && !KEY_ID_PATTERN.test(explicitId)) {
      throw new EncryptionKeyError(`${where}: the key id "${explicitId.slice(0, 80)}" must be 1–64 letters, digits, ".", "_" or "-".`);
    }
    const key = decodeKey(encoded, where);
    const id = explicitId ?? derivedKeyId(key);
    const existing = keys.get(id);
    if (existing && !existing.equals(key)) throw new EncryptionKeyError(`${where}: the key id "${id}" is used for two different keys.`);
    if (!existing) {
      keys.set(id, key);
      ordered.push({ id, key });
    }
  });
  return { primary: ordered[0], keys };
}

const HOW_TO_MAKE_A_KEY = 'Make one with `openssl rand -base64 32` (or `node -e "console.log(crypto.randomBytes(32).toString(\'base64\'))"`).';

function decodeKey(encoded: string, where: string): Buffer {
  // Standard or URL-safe alphabet, optional padding; Buffer.from would silently skip anything else.
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) {
    throw new EncryptionKeyError(`${where} is not base64 (it must be base64 of ${KEY_BYTES} random bytes). ${HOW_TO_MAKE_A_KEY}`);
  }
  const key = Buffer.from(encoded, 'base64');
  if (key.length !== KEY_BYTES) {
    throw new EncryptionKeyError(`${where} decodes to ${key.length} bytes; AES-256 needs exactly ${KEY_BYTES} (44 base64 characters). ${HOW_TO_MAKE_A_KEY}`);
  }
  return key;
}

/**
 * The key ring the environment configures, or undefined when encryption is off. Throws
 * EncryptionKeyError for a malformed setting, an unreadable key file, or both variables set.
 */
export function keyRingFromEnvironment(env: NodeJS.ProcessEnv = process.env): KeyRing | undefined {
  const inline = env[ENCRYPTION_KEY_VARIABLE];
  const file = env[ENCRYPTION_KEY_FILE_VARIABLE];
  if (inline && file) {
    throw new EncryptionKeyError(`Both ${ENCRYPTION_KEY_VARIABLE} and ${ENCRYPTION_KEY_FILE_VARIABLE} are set; set only one.`);
  }
  if (inline) return parseKeyRing(inline, ENCRYPTION_KEY_VARIABLE);
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new EncryptionKeyError(
        `${ENCRYPTION_KEY_FILE_VARIABLE}=${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`,
      );
    }
    return parseKeyRing(text, `${ENCRYPTION_KEY_FILE_VARIABLE} (${file})`);
  }
  return undefined;
}

/** AES-256-GCM with compression; see the module comment for the format. */
export class EncryptionCodec implements PayloadCodec {
  constructor(readonly keyRing: KeyRing) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((payload) => this.encodeOne(payload)));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((payload) => this.decodeOne(payload)));
  }

  private async encodeOne(payload: Payload): Promise<Payload> {
    const serialized = temporal.api.common.v1.Payload.encode(payload).finish();
    let flag = FLAG_PLAIN;
    let body: Uint8Array = serialized;
    if (serialized.length >= MIN_COMPRESS_BYTES) {
      const compressed = await deflateRawAsync(serialized);
      if (compressed.length < serialized.length) {
        flag = FLAG_DEFLATE;
        body = compressed;
      }
    }
    const { id, key } = this.keyRing.primary;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(id));
    const ciphertext = Buffer.concat([cipher.update(Buffer.of(flag)), cipher.update(body), cipher.final()]);
    return {
      metadata: {
        [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING),
        [METADATA_ENCRYPTION_KEY_ID]: Buffer.from(id),
      },
      data: Buffer.concat([iv, ciphertext, cipher.getAuthTag()]),
    };
  }

  private async decodeOne(payload: Payload): Promise<Payload> {
    const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
    // Not ours (written before encryption was turned on, or by a client without it): pass through.
    if (!encoding || Buffer.from(encoding).toString() !== ENCRYPTED_ENCODING) return payload;
    const idBytes = payload.metadata?.[METADATA_ENCRYPTION_KEY_ID];
    if (!idBytes) throw new PayloadDecryptionError(`An encrypted payload has no "${METADATA_ENCRYPTION_KEY_ID}" metadata; it cannot be decrypted.`);
    const id = Buffer.from(idBytes).toString();
    const key = this.keyRing.keys.get(id);
    if (!key) {
      throw new PayloadDecryptionError(
        `A payload is encrypted with key id "${id}", which is not among the configured keys ` +
          `(${[...this.keyRing.keys.keys()].join(', ')}). Add that key to ${ENCRYPTION_KEY_VARIABLE} ` +
          `(after the current one, as "${id}:<base64>" if it had an explicit id).`,
      );
    }
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_BYTES + TAG_BYTES + 1) throw new PayloadDecryptionError(`An encrypted payload (key id "${id}") is truncated.`);
    const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(id));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plaintext: Buffer;
    try {
      plaintext = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadDecryptionError(
        `An encrypted payload (key id "${id}") failed authentication: it was modified, or key "${id}" is not the key it was written with.`,
      );
    }
    const flag = plaintext[0];
    let serialized: Buffer = plaintext.subarray(1);
    if (flag === FLAG_DEFLATE) {
      serialized = await inflateRawAsync(serialized, { maxOutputLength: MAX_INFLATED_BYTES });
    } else if (flag !== FLAG_PLAIN) {
      throw new PayloadDecryptionError(`An encrypted payload (key id "${id}") has an unknown format flag ${flag}.`);
    }
    const { metadata, data: original, externalPayloads } = temporal.api.common.v1.Payload.decode(serialized);
    return {
      metadata: metadata ?? {},
      data: original ?? new Uint8Array(),
      ...(externalPayloads?.length ? { externalPayloads } : {}),
    } as Payload;
  }
}

/**
 * A clear message for an error a process WITHOUT the keys gets on an encrypted payload (the SDK's
 * "Unknown encoding: binary/encrypted"), or undefined for any other error.
 */
export function missingKeyMessage(error: unknown): string | undefined {
  const text = error instanceof Error ? `${error.message} ${error.cause instanceof Error ? error.cause.message : ''}` : String(error);
  if (error instanceof PayloadDecryptionError || !text.includes(ENCRYPTED_ENCODING)) return undefined;
  return (
    `This conversation's data is encrypted, and this process has no key to read it. ` +
    `Set ${ENCRYPTION_KEY_VARIABLE} (or ${ENCRYPTION_KEY_FILE_VARIABLE}) to the keys its workers use.`
  );
}

/**
 * Where the worker's failure converter lives: with encryption on, failure messages and stack traces
 * move into an encoded (so encrypted) attribute instead of staying plain text in history.
 */
export const ENCRYPTED_FAILURE_CONVERTER_PATH = path.join(__dirname, 'encrypted-failure-converter.js');

/** The data converter for Client and Worker options, or undefined when encryption is off. */
export function encryptionDataConverter(keyRing: KeyRing | undefined) {
  if (!keyRing) return undefined;
  return { payloadCodecs: [new EncryptionCodec(keyRing)], failureConverterPath: ENCRYPTED_FAILURE_CONVERTER_PATH };
}
