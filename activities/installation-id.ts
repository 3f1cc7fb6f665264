/**
 * `metadata.user_id` (issue 18, as Claude Code sends it): a stable per-installation id — random,
 * kept in the state directory, sent only as a SHA-256 hash — and the conversation id, as one JSON
 * string. The API uses it to tell users apart for abuse detection; it carries nothing identifying.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

const FILE_NAME = 'installation-id';

/** The installation's hashed id, created on first use under `stateDir` (a read-only directory: a per-process id). */
export async function hashedInstallationId(stateDir: string): Promise<string> {
  const file = path.join(stateDir, FILE_NAME);
  let id = await readFile(file, 'utf8').then(
    (text) => text.trim(),
    () => '',
  );
  if (!id) {
    id = randomUUID();
    try {
      await mkdir(stateDir, { recursive: true });
      // wx: two workers starting together keep the first one's id.
      await writeFile(file, `${id}\n`, { flag: 'wx', mode: 0o600 });
    } catch {
      id =
        (await readFile(file, 'utf8').then(
          (text) => text.trim(),
          () => '',
        )) || id;
    }
  }
  return createHash('sha256').update(`durable-agent:${id}`).digest('hex');
}

/** The `metadata.user_id` of a conversation's requests. */
export function metadataUserId(hashedId: string, conversationId: string): string {
  return JSON.stringify({ device_id: hashedId, session_id: conversationId });
}

/** One lookup per process and state directory. */
export function installationIdLoader(stateDir: string): () => Promise<string> {
  let loading: Promise<string> | undefined;
  return () => (loading ??= hashedInstallationId(stateDir));
}
