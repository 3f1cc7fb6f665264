/**
 * Where the Temporal Web UI of a server is, for links people can click: `TEMPORAL_UI_URL` when
 * set, else — for a server on this machine — the port `temporal server start-dev` gives its UI by
 * default (the frontend port + 1000: 7233 → 8233), if something answers HTTP there.
 */
import { DEFAULT_PORT, DEFAULT_UI_PORT } from './dev-server';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** The UI's base URL, or undefined when none is known. */
export async function findTemporalUi(address: string, timeoutMs = 1_500): Promise<string | undefined> {
  const configured = process.env.TEMPORAL_UI_URL?.trim();
  if (configured) return configured.replace(/\/+$/, '');
  const match = /^(.*):(\d+)$/.exec(address);
  if (!match || !LOCAL_HOSTS.has(match[1])) return undefined;
  const port = Number(match[2]);
  const uiPort = port === DEFAULT_PORT ? DEFAULT_UI_PORT : port + 1000;
  const url = `http://localhost:${uiPort}`;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    return response.ok ? url : undefined;
  } catch {
    return undefined;
  }
}

/** The UI page of one conversation. */
export function conversationUiUrl(uiUrl: string, namespace: string, conversationId: string): string {
  return `${uiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(conversationId)}`;
}
