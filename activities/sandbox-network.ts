/**
 * `sandbox.network.allowedDomains` (issue 17 §10), as Claude Code does it: the sandbox has no network
 * of its own (`--unshare-net`); an HTTP proxy outside it, reached through a unix socket bound into
 * it, lets through only CONNECT tunnels and plain HTTP requests to the allowed domains. Inside, a
 * small forwarder listens on 127.0.0.1:PROXY_PORT and the usual proxy variables point at it, so
 * curl, git, npm and pip go through the proxy; anything that ignores them has no route out.
 */
import { lookup } from 'node:dns/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** The forwarder's port inside the sandbox (its own network namespace: nothing else listens there). */
export const PROXY_PORT = 3128;
/** Where the proxy's socket directory is mounted inside the sandbox (under its private /tmp). */
export const PROXY_MOUNT = '/tmp/.durable-agent-proxy';
const SOCKET_NAME = 'proxy.sock';

/**
 * `example.com` matches itself; `*.example.com` its subdomains (not itself); `*` any host.
 * Case-insensitive. 'wildcard' when only a pattern matched: the proxy then refuses addresses on
 * this host (loopback, link-local such as a cloud's metadata service), whatever the name says.
 */
export function domainMatch(host: string, allowedDomains: readonly string[]): 'exact' | 'wildcard' | undefined {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  let found: 'wildcard' | undefined;
  for (const entry of allowedDomains) {
    const pattern = entry.toLowerCase().replace(/\.$/, '');
    if (name === pattern) return 'exact';
    if (pattern === '*' || (pattern.startsWith('*.') && name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1)) found = 'wildcard';
  }
  return found;
}

export function domainAllowed(host: string, allowedDomains: readonly string[]): boolean {
  return domainMatch(host, allowedDomains) !== undefined;
}

/** Loopback, link-local (169.254.169.254 serves cloud credentials), unspecified. */
export function isHostLocalAddress(address: string): boolean {
  const v4 = address.replace(/^::ffff:/i, '');
  if (net.isIPv4(v4)) return /^(127\.|169\.254\.|0\.)/.test(v4);
  const lower = address.toLowerCase();
  return lower === '::1' || lower === '::' || /^fe[89ab]/.test(lower);
}

/** Where to connect for `host`, or why not: a wildcard match must not resolve to this host's own services. */
async function resolveTarget(host: string, allowedDomains: readonly string[]): Promise<{ address: string } | { refused: string }> {
  const match = domainMatch(host, allowedDomains);
  if (match === undefined) return { refused: `${host} is not in sandbox.network.allowedDomains` };
  const bare = host.replace(/^\[|\]$/g, '');
  if (match === 'exact') return { address: bare };
  const addresses = net.isIP(bare) ? [{ address: bare }] : await lookup(bare, { all: true }).catch(() => []);
  if (addresses.length === 0) return { refused: `${host} does not resolve` };
  if (addresses.some((entry) => isHostLocalAddress(entry.address))) return { refused: `${host} resolves to a local or link-local address` };
  return { address: addresses[0].address };
}

/** Runs inside the sandbox (`node -e`): 127.0.0.1:PORT → the proxy's unix socket. */
export const FORWARDER_SCRIPT =
  "const net=require('net');const socket=process.env.DURABLE_AGENT_PROXY_SOCKET;" +
  "net.createServer((c)=>{const u=net.connect(socket);c.pipe(u);u.pipe(c);c.on('error',()=>u.destroy());u.on('error',()=>c.destroy());})" +
  ".listen(Number(process.env.DURABLE_AGENT_PROXY_PORT),'127.0.0.1');";

export interface DomainProxy {
  /** Host directory holding the socket (mounted read-only at PROXY_MOUNT). */
  directory: string;
  /** Environment for the sandboxed command. */
  env: Record<string, string>;
  /** Requests refused so far ("host:port"), for the tool result. */
  refused: string[];
  close(): Promise<void>;
}

/** Starts a proxy for one command: allowed domains only, closed when the command ends. */
export async function startDomainProxy(allowedDomains: readonly string[]): Promise<DomainProxy> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-proxy-'));
  const refused: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer(async (request, response) => {
    // Plain HTTP through a proxy: an absolute URL.
    let target: URL;
    try {
      target = new URL(request.url ?? '');
    } catch {
      response.writeHead(400).end('Bad request: the sandbox proxy takes absolute URLs\n');
      return;
    }
    const resolved = target.protocol === 'http:' ? await resolveTarget(target.hostname, allowedDomains) : { refused: `${target.protocol} is not proxied` };
    if ('refused' in resolved) {
      refused.push(`${target.hostname}:${target.port || 80}`);
      response.writeHead(403, { 'content-type': 'text/plain' }).end(`Blocked by the sandbox: ${resolved.refused}\n`);
      return;
    }
    // To the vetted address (a second lookup could answer differently), with the original Host header.
    const upstream = http.request({ host: resolved.address, port: target.port || 80, path: `${target.pathname}${target.search}`, method: request.method, headers: request.headers }, (reply) => {
      response.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(response);
    });
    upstream.on('error', (error) => response.headersSent ? response.destroy() : response.writeHead(502).end(`${error.message}\n`));
    request.pipe(upstream);
  });
  server.on('connect', async (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    client.on('error', () => undefined);
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(request.url ?? '');
    const resolved = match ? await resolveTarget(match[1], allowedDomains) : { refused: 'not host:port' };
    if (!match || 'refused' in resolved) {
      refused.push(request.url ?? '?');
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nBlocked by the sandbox: ${'refused' in resolved ? resolved.refused : ''}\n`);
      return;
    }
    const upstream = net.connect(Number(match[2]), resolved.address, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path.join(directory, SOCKET_NAME), resolve);
  });
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  return {
    directory,
    refused,
    env: {
      DURABLE_AGENT_PROXY_SOCKET: path.join(PROXY_MOUNT, SOCKET_NAME),
      DURABLE_AGENT_PROXY_PORT: String(PROXY_PORT),
      HTTP_PROXY: url,
      HTTPS_PROXY: url,
      http_proxy: url,
      https_proxy: url,
      ALL_PROXY: url,
      all_proxy: url,
      NO_PROXY: 'localhost,127.0.0.1,::1',
      no_proxy: 'localhost,127.0.0.1,::1',
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(directory, { recursive: true, force: true });
    },
  };
}
