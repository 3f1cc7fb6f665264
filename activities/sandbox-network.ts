/**
 * `sandbox.network.allowedDomains` (issue 17 §10), as Claude Code does it: the sandbox has no network
 * of its own (`--unshare-net`); an HTTP proxy outside it, reached through a unix socket bound into
 * it, lets through only CONNECT tunnels and plain HTTP requests to the allowed domains. Inside, a
 * small forwarder listens on 127.0.0.1:PROXY_PORT and the usual proxy variables point at it, so
 * curl, git, npm and pip go through the proxy; anything that ignores them has no route out.
 *
 * A domain not on the list asks, as Claude Code's "Network request outside of sandbox" prompt
 * does, when the conversation has someone to answer (`askDomain`: the Bash activity asks its
 * workflow, which asks the person; denied when nobody answers): the proxy holds the request until
 * the answer, once per host and command. This host's own addresses and the worker's Temporal
 * server are refused before anyone is asked.
 */
import { lookup } from 'node:dns/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { type Forwarder, findOnPath } from './shell';
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
 * A host as the URL standard reads it (what curl, Node and browsers connect to): lower case, no
 * trailing dot, IPv4 in any spelling (`2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`) as dotted
 * decimal, IPv6 without brackets and compressed (`::ffff:127.0.0.1` → `::ffff:7f00:1`). Undefined
 * when it is not a host at all.
 */
export function normalizeHost(host: string): string | undefined {
  const bare = host.trim().replace(/^\[|\]$/g, '');
  if (bare === '' || /[\s/?#@\\]/.test(bare)) return undefined;
  try {
    const name = new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname;
    return name.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  } catch {
    return undefined;
  }
}

/**
 * `example.com` matches itself; `*.example.com` its subdomains (not itself); `*` any host.
 * Case-insensitive, compared after normalizing (`normalizeHost`). Whatever matched, the proxy then
 * refuses addresses on this host (`isHostLocalAddress`).
 */
export function domainAllowed(host: string, allowedDomains: readonly string[]): boolean {
  const name = normalizeHost(host);
  if (name === undefined) return false;
  return allowedDomains.some((entry) => {
    const pattern = entry.trim().toLowerCase().replace(/\.$/, '');
    if (pattern === '*') return true;
    if (pattern.startsWith('*.')) return name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1;
    return name === (normalizeHost(pattern) ?? pattern);
  });
}

/**
 * Addresses of this host and its link: loopback (127/8, ::1), unspecified (0/8, ::), IPv4-compatible
 * IPv6 (::/96), link-local (169.254/16 serves cloud credentials, fe80::/10), site-local (fec0::/10).
 * IPv4-mapped IPv6 (`::ffff:7f00:1`) is checked as the IPv4 address it maps (net.BlockList does).
 */
const HOST_LOCAL_ADDRESSES = new net.BlockList();
HOST_LOCAL_ADDRESSES.addSubnet('127.0.0.0', 8, 'ipv4');
HOST_LOCAL_ADDRESSES.addSubnet('0.0.0.0', 8, 'ipv4');
HOST_LOCAL_ADDRESSES.addSubnet('169.254.0.0', 16, 'ipv4');
HOST_LOCAL_ADDRESSES.addSubnet('::', 96, 'ipv6');
HOST_LOCAL_ADDRESSES.addSubnet('fe80::', 10, 'ipv6');
HOST_LOCAL_ADDRESSES.addSubnet('fec0::', 10, 'ipv6');

/** Whether `address` (an IP literal in any spelling) is this host's own or its link's: never proxied, whatever the allow-list says. */
export function isHostLocalAddress(address: string): boolean {
  const normalized = normalizeHost(address);
  if (normalized === undefined) return true;
  const family = net.isIP(normalized);
  if (family === 0) return true;
  return HOST_LOCAL_ADDRESSES.check(normalized, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * This host's own interface addresses (its LAN, container-bridge and VPN addresses): a service
 * bound to every address (`0.0.0.0`, a published container port such as docker-compose's Temporal
 * on 7233) answers on each of them as on loopback.
 */
export function hostInterfaceAddresses(): Set<string> {
  const addresses = Object.values(os.networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .map((entry) => normalizeHost(entry.address));
  return new Set(addresses.filter((address) => address !== undefined));
}

/** Whether `address` is one of `addresses`, in any spelling (an IPv4-mapped IPv6 address as the IPv4 it maps). */
export function containsAddress(addresses: ReadonlySet<string>, address: string): boolean {
  const normalized = normalizeHost(address);
  const family = normalized === undefined ? 0 : net.isIP(normalized);
  if (family === 0) return false;
  const list = new net.BlockList();
  for (const entry of addresses) {
    const entryFamily = net.isIP(entry);
    if (entryFamily !== 0) list.addAddress(entry, entryFamily === 4 ? 'ipv4' : 'ipv6');
  }
  return list.check(normalized!, family === 4 ? 'ipv4' : 'ipv6');
}

/** The addresses a normalized host stands for: itself when it is an IP literal, else what it resolves to ([] when it does not). */
export async function addressesOf(name: string): Promise<string[]> {
  if (net.isIP(name)) return [name];
  return (await lookup(name, { all: true }).catch(() => [])).map((entry) => entry.address);
}

/** The refusal's reason for the tool result, or the address to connect to. */
export type ProxyTarget = { address: string } | { refused: string };

/** Asks whether a sandboxed command may reach `host` (not on the allow-list): true to let it through. */
export type AskDomain = (host: string, port: number) => Promise<boolean>;

/**
 * Where to connect for `host`, or why not. The allow-list is matched on the normalized name; the
 * name is then resolved once and every address checked (the connection goes to a checked address,
 * so a second lookup cannot answer differently): this host's addresses (loopback and the like, and
 * `ownAddresses`, its interfaces' on every port, unless the list names the host exactly) and the worker's Temporal server's host
 * (`forbidden`, "address:port": every port of it) are refused even under `"*"`.
 */
export async function resolveTarget(
  host: string,
  port: number,
  allowedDomains: readonly string[],
  forbidden: ReadonlySet<string> = new Set(),
  ownAddresses: ReadonlySet<string> = hostInterfaceAddresses(),
  askDomain?: AskDomain,
): Promise<ProxyTarget> {
  const name = normalizeHost(host);
  if (name === undefined) return { refused: `${host} is not a valid host name` };
  const listed = domainAllowed(name, allowedDomains);
  if (!listed && !askDomain) return { refused: `${name} is not in sandbox.network.allowedDomains` };
  const addresses = await addressesOf(name);
  if (addresses.length === 0) return { refused: `${name} does not resolve` };
  // An interface's address is reached only when the user named it (or a name for it) exactly, never
  // through `*` or `*.domain`: on the list, or approved by name when asked.
  const named = !listed || allowedDomains.some((entry) => !entry.trim().startsWith('*') && domainAllowed(name, [entry]));
  const own = (address: string) => !named && containsAddress(ownAddresses, address);
  if (addresses.some((address) => isHostLocalAddress(address) || own(address)))
    return { refused: `${name} is an address of this host (loopback, one of its interfaces', link-local or unspecified), which the sandbox never reaches` };
  // The Temporal server's host on every port: its gRPC port, its Web UI, its HTTP API (on a port nobody knows).
  const temporal = new Set([...forbidden].map((entry) => entry.slice(0, entry.lastIndexOf(':'))));
  if (addresses.some((address) => containsAddress(temporal, address)))
    return { refused: `${name} is the host of the worker's Temporal server, which the sandbox never reaches (on any port)` };
  if (!listed && !(await askDomain!(name, port).catch(() => false))) {
    return { refused: `${name} is not in sandbox.network.allowedDomains, and the request to reach it was denied` };
  }
  return { address: addresses[0] };
}

/** The address the worker connected to (its envconfig profile's or TEMPORAL_ADDRESS), set when it starts. */
let workerTemporalAddress: string | undefined;
export function setWorkerTemporalAddress(address: string | undefined): void {
  workerTemporalAddress = address;
}

/**
 * "address:port" of the worker's Temporal server — the address the worker connected to, and
 * TEMPORAL_ADDRESS (default localhost:7233) — resolved, for `resolveTarget` and WebFetch.
 */
export async function temporalServerEndpoints(env: NodeJS.ProcessEnv = process.env): Promise<Set<string>> {
  const endpoints = new Set<string>();
  for (const address of new Set([env.TEMPORAL_ADDRESS || 'localhost:7233', ...(workerTemporalAddress ? [workerTemporalAddress] : [])])) {
    const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(address.trim());
    if (!match) continue;
    const name = normalizeHost(match[1]);
    if (name === undefined) continue;
    const port = match[2] ?? '7233';
    for (const entry of await addressesOf(name)) endpoints.add(`${normalizeHost(entry)}:${port}`);
  }
  return endpoints;
}

/**
 * The forwarder started inside the sandbox, 127.0.0.1:PROXY_PORT → the proxy's unix socket: socat
 * when the host has it (as Claude Code's sandbox; it starts in a few milliseconds), else Node
 * running FORWARDER_SCRIPT (about 100 ms more per command).
 */
export async function proxyForwarder(): Promise<Forwarder> {
  // In a system directory the sandbox shows read-only (a binary under the workspace could be swapped by a command).
  socat ??= findOnPath('socat', '/usr/bin:/bin:/usr/local/bin');
  const found = await socat;
  if (found) return { program: found, args: [`TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr`, `UNIX-CONNECT:${path.join(PROXY_MOUNT, SOCKET_NAME)}`] };
  return { program: process.execPath, args: ['-e', FORWARDER_SCRIPT] };
}
let socat: Promise<string | undefined> | undefined;

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
  /** Requests refused so far, for the tool result. */
  refused: RefusedRequest[];
  close(): Promise<void>;
}

/** A request the proxy refused: "host:port" and why. */
export interface RefusedRequest {
  target: string;
  reason: string;
}

/**
 * Starts a proxy for one command: allowed domains only (and those `askDomain` approves, asked once
 * per host for this command), closed when the command ends.
 */
export async function startDomainProxy(allowedDomains: readonly string[], env: NodeJS.ProcessEnv = process.env, askDomain?: AskDomain): Promise<DomainProxy> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-proxy-'));
  const refused: RefusedRequest[] = [];
  const forbidden = await temporalServerEndpoints(env);
  const ownAddresses = hostInterfaceAddresses();
  const answers = new Map<string, Promise<boolean>>();
  const ask: AskDomain | undefined = askDomain
    ? (host, port) => {
        const answer = answers.get(host) ?? askDomain(host, port).catch(() => false);
        answers.set(host, answer);
        return answer;
      }
    : undefined;
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
    const port = Number(target.port || 80);
    const resolved: ProxyTarget =
      target.protocol === 'http:'
        ? await resolveTarget(target.hostname, port, allowedDomains, forbidden, ownAddresses, ask)
        : { refused: `${target.protocol} is not proxied` };
    if ('refused' in resolved) {
      refused.push({ target: `${target.hostname}:${port}`, reason: resolved.refused });
      response.writeHead(403, { 'content-type': 'text/plain' }).end(`Blocked by the sandbox: ${resolved.refused}\n`);
      return;
    }
    // To the vetted address (a second lookup could answer differently), with the original Host header.
    const upstream = http.request(
      { host: resolved.address, port, path: `${target.pathname}${target.search}`, method: request.method, headers: request.headers },
      (reply) => {
        response.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(response);
      },
    );
    upstream.on('error', (error) => (response.headersSent ? response.destroy() : response.writeHead(502).end(`${error.message}\n`)));
    request.pipe(upstream);
  });
  server.on('connect', async (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    client.on('error', () => undefined);
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(request.url ?? '');
    const resolved: ProxyTarget = match
      ? await resolveTarget(match[1], Number(match[2]), allowedDomains, forbidden, ownAddresses, ask)
      : { refused: 'CONNECT takes host:port' };
    if (!match || 'refused' in resolved) {
      refused.push({ target: request.url ?? '?', reason: 'refused' in resolved ? resolved.refused : '' });
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
