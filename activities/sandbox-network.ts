/**
 * `sandbox.network.allowedDomains` (issue 17 §10), as Claude Code does it: the sandbox has no network
 * of its own (`--unshare-net`); an HTTP proxy outside it, reached through a unix socket bound into
 * it, lets through only CONNECT tunnels and plain HTTP requests to the allowed domains. Inside, a
 * small forwarder listens on 127.0.0.1:PROXY_PORT and the usual proxy variables point at it, so
 * curl, git, npm and pip go through the proxy; anything that ignores them has no route out.
 */
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

/** `example.com` matches itself; `*.example.com` matches its subdomains (not itself). Case-insensitive. */
export function domainAllowed(host: string, allowedDomains: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  return allowedDomains.some((entry) => {
    const pattern = entry.toLowerCase().replace(/\.$/, '');
    if (pattern.startsWith('*.')) return name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1;
    return name === pattern;
  });
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
  const server = http.createServer((request, response) => {
    // Plain HTTP through a proxy: an absolute URL.
    let target: URL;
    try {
      target = new URL(request.url ?? '');
    } catch {
      response.writeHead(400).end('Bad request: the sandbox proxy takes absolute URLs\n');
      return;
    }
    if (target.protocol !== 'http:' || !domainAllowed(target.hostname, allowedDomains)) {
      refused.push(`${target.hostname}:${target.port || 80}`);
      response.writeHead(403, { 'content-type': 'text/plain' }).end(`Blocked by the sandbox: ${target.hostname} is not in sandbox.network.allowedDomains\n`);
      return;
    }
    const upstream = http.request(target, { method: request.method, headers: request.headers }, (reply) => {
      response.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(response);
    });
    upstream.on('error', (error) => response.headersSent ? response.destroy() : response.writeHead(502).end(`${error.message}\n`));
    request.pipe(upstream);
  });
  server.on('connect', (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(request.url ?? '');
    const host = match?.[1].replace(/^\[|\]$/g, '');
    if (!match || !host || !domainAllowed(host, allowedDomains)) {
      refused.push(request.url ?? '?');
      client.end('HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nBlocked by the sandbox: not in sandbox.network.allowedDomains\n');
      return;
    }
    const upstream = net.connect(Number(match[2]), host, () => {
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
