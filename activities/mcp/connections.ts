/**
 * MCP connections on the workspace's worker (issue 22 §2; architecture.md "MCP servers live on the
 * workspace's worker"): a stdio server is a process on this host, so its connection lives here,
 * keyed by (scope, server name, configuration) where the scope is a conversation or a
 * workspace. A connection is kept across calls, restarted on the next use after it failed or
 * closed, and closed after it has been idle or when the worker shuts down.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ListRootsRequestSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { pathToFileURL } from 'node:url';
import { type McpScope, type McpServerConfig, expandServerConfig } from '../../common/mcp-config';
import { sha256Hex } from '../../common/digest';
import { decideSandbox, findOnPath, sandboxedArgv } from '../sandbox';
import { toolProcessEnvironment } from '../shell';

/** Our client's name and version in the MCP handshake. */
export const MCP_CLIENT_INFO = { name: 'durable-agent', version: '0.1.0' } as const;
/** How long connecting (spawn + initialize) may take (Claude Code's MCP_TIMEOUT default is 30 s). */
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 30_000;
/** A connection unused this long is closed (its stdio process ends); the next use reconnects. */
export const DEFAULT_MCP_IDLE_MS = 10 * 60 * 1000;
/** Characters of a stdio server's stderr kept to explain a failure. */
const STDERR_TAIL_CHARS = 4_000;

/**
 * Environment variables a stdio server inherits from the worker: the basics a program needs to
 * run (the MCP SDK's default list plus locale and temp dir). Nothing else of the worker's
 * environment reaches the server (its API key, Temporal credentials, encryption keys); the
 * server's own `env` is added on top.
 */
export const MCP_INHERITED_ENVIRONMENT = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TMPDIR', 'TZ'] as const;

/** The environment a stdio server starts with. */
export function mcpServerEnvironment(serverEnv: Record<string, string> | undefined, workerEnv: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of MCP_INHERITED_ENVIRONMENT) {
    const value = workerEnv[name];
    // Exported shell functions (`() {`) are code, not configuration (the SDK skips them too).
    if (value !== undefined && !value.startsWith('()')) env[name] = value;
  }
  return { ...env, ...(serverEnv ?? {}) };
}

export type McpConnectionState = 'connected' | 'failed' | 'closed';

/** One live (or failed) connection. */
export interface McpConnection {
  key: string;
  serverName: string;
  client?: Client;
  state: McpConnectionState;
  error?: string;
  /** Bumped by each `notifications/tools/list_changed` (and prompts/resources) the server sends. */
  listChangedCount: number;
  lastUsed: number;
  /** Calls running on it now: an idle sweep never closes a connection in use. */
  inUse: number;
  stderrTail: string;
  /** Ends what the server's sandbox holds (its proxy, its placeholders): called once it has closed. */
  release?: () => Promise<void>;
}

export interface McpConnectionManagerOptions {
  connectTimeoutMs?: number;
  idleMs?: number;
  /** The worker's environment (default process.env): read for `${VAR}` expansion, minus credentials. */
  env?: NodeJS.ProcessEnv;
  /** The worker's state directory, hidden from a project's sandboxed servers (default: DURABLE_AGENT_STATE_DIR or ~/.durable-agent). */
  stateDir?: string;
}

/** Connections of one worker process. */
export class McpConnectionManager {
  private readonly connections = new Map<string, McpConnection>();
  private readonly pending = new Map<string, Promise<McpConnection>>();
  private readonly connectTimeoutMs: number;
  private readonly idleMs: number;
  private readonly env: NodeJS.ProcessEnv;
  private readonly stateDir: string | undefined;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(options: McpConnectionManagerOptions = {}) {
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_MCP_CONNECT_TIMEOUT_MS;
    this.idleMs = options.idleMs ?? DEFAULT_MCP_IDLE_MS;
    this.env = options.env ?? process.env;
    this.stateDir = options.stateDir;
  }

  /** The connection key: the scope, the server's name and a digest of its configuration (a changed config is a new server). */
  static key(scope: string, serverName: string, config: McpServerConfig): string {
    return `${scope}\u0000${serverName}\u0000${sha256Hex(JSON.stringify(config)).slice(0, 16)}`;
  }

  /**
   * The connection for this server, connecting (or reconnecting after a failure or close) when
   * there is none. A server that cannot start gives a connection in state `failed` with the error;
   * it is tried again on the next call. `serverScope`: where the server was configured; a
   * project's (`.mcp.json`, workspace content) stdio server starts in the Bash sandbox, the user's
   * and flag-given ones as the user.
   */
  async get(scope: string, serverName: string, config: McpServerConfig, cwd: string, serverScope?: McpScope): Promise<McpConnection> {
    const key = McpConnectionManager.key(scope, serverName, config);
    const existing = this.connections.get(key);
    if (existing && existing.state === 'connected') {
      existing.lastUsed = Date.now();
      return existing;
    }
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const connecting = this.connect(key, serverName, config, cwd, serverScope).finally(() => this.pending.delete(key));
    this.pending.set(key, connecting);
    return connecting;
  }

  /** Runs `use` with the connection marked busy (the idle sweep leaves it alone). */
  async using<T>(connection: McpConnection, use: () => Promise<T>): Promise<T> {
    connection.inUse++;
    connection.lastUsed = Date.now();
    try {
      return await use();
    } finally {
      connection.inUse--;
      connection.lastUsed = Date.now();
    }
  }

  /** Marks a connection failed so the next use reconnects (a call saw the transport break). */
  async invalidate(connection: McpConnection, error: string): Promise<void> {
    if (connection.state !== 'connected') return;
    connection.state = 'failed';
    connection.error = error;
    await connection.client?.close().catch(() => undefined);
  }

  /** Closes every connection of `scope` (a conversation that ended), or all of them. */
  async close(scope?: string): Promise<void> {
    const closing: Array<Promise<unknown>> = [];
    for (const [key, connection] of this.connections) {
      if (scope !== undefined && !key.startsWith(`${scope}\u0000`)) continue;
      this.connections.delete(key);
      connection.state = 'closed';
      if (connection.client) closing.push(connection.client.close().catch(() => undefined));
    }
    await Promise.all(closing);
    if (this.connections.size === 0 && this.idleTimer) {
      clearInterval(this.idleTimer);
      this.idleTimer = undefined;
    }
  }

  /** Number of live connections (for status and tests). */
  get size(): number {
    return [...this.connections.values()].filter((connection) => connection.state === 'connected').length;
  }

  private async connect(key: string, serverName: string, config: McpServerConfig, cwd: string, serverScope: McpScope | undefined): Promise<McpConnection> {
    const previous = this.connections.get(key);
    const connection: McpConnection = {
      key,
      serverName,
      state: 'failed',
      listChangedCount: previous?.listChangedCount ?? 0,
      lastUsed: Date.now(),
      inUse: 0,
      stderrTail: '',
    };
    this.connections.set(key, connection);
    this.startIdleTimer();
    // `${VAR}` reads the worker's environment without its credentials (issue 22 §1).
    const expanded = expandServerConfig(config, toolProcessEnvironment(this.env));
    if (expanded.missing.length > 0) {
      connection.error = `missing environment variable${expanded.missing.length > 1 ? 's' : ''}: ${expanded.missing.join(', ')} (set ${expanded.missing.length > 1 ? 'them' : 'it'} on the worker, or give a default with \${VAR:-default})`;
      return connection;
    }
    let transport: Transport;
    try {
      transport = await this.transport(expanded.config, cwd, connection, serverScope === 'project');
    } catch (error) {
      connection.error = (error as Error).message;
      await releaseOnce(connection);
      return connection;
    }
    const client = new Client(MCP_CLIENT_INFO, { capabilities: { roots: { listChanged: false } } });
    // The workspace is the server's root (Claude Code offers the project directory).
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: pathToFileURL(cwd).href, name: 'workspace' }] }));
    const changed = () => {
      connection.listChangedCount++;
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => changed());
    client.setNotificationHandler(PromptListChangedNotificationSchema, async () => undefined);
    client.setNotificationHandler(ResourceListChangedNotificationSchema, async () => undefined);
    client.onclose = () => {
      void releaseOnce(connection);
      if (connection.state === 'connected') {
        connection.state = 'failed';
        connection.error = `the server closed the connection${connection.stderrTail ? `; its stderr ended with: ${connection.stderrTail.trim().slice(-1_000)}` : ''}`;
      }
    };
    try {
      await client.connect(transport, { timeout: this.connectTimeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      await releaseOnce(connection);
      const stderr = connection.stderrTail.trim();
      connection.error = `could not connect: ${(error as Error).message}${stderr ? `; stderr: ${stderr.slice(-1_000)}` : ''}`;
      return connection;
    }
    connection.client = client;
    connection.state = 'connected';
    connection.error = undefined;
    return connection;
  }

  private async transport(config: McpServerConfig, cwd: string, connection: McpConnection, sandboxed: boolean): Promise<Transport> {
    if (config.type === 'http' || config.type === 'sse') {
      const url = new URL(config.url);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`url ${JSON.stringify(config.url)} is not http(s)`);
      const requestInit = config.headers ? { headers: config.headers } : undefined;
      return config.type === 'http' ? new StreamableHTTPClientTransport(url, { requestInit }) : new SSEClientTransport(url, { requestInit });
    }
    let [command, args, env] = [config.command, config.args ?? [], mcpServerEnvironment(config.env, this.env)];
    if (sandboxed) {
      // A project's server is workspace content, as its Bash commands and hooks are (issue 29).
      const decision = await decideSandbox({ cwd, stateDir: this.stateDir, env: this.env });
      if (decision.refusal) throw new Error(decision.refusal);
      if (decision.launch) {
        connection.release = decision.launch.release;
        // As spawn would say, rather than bwrap's own words from inside (the caller releases the sandbox).
        if (!(await findOnPath(command, env.PATH ?? '', cwd))) throw new Error(`spawn ${command} ENOENT: not found`);
        [command, args] = sandboxedArgv(decision.launch, command, args);
        env = { ...env, ...decision.launch.env };
      }
    }
    const transport = new StdioClientTransport({ command, args, env, cwd, stderr: 'pipe' });
    transport.stderr?.on('data', (chunk: Buffer) => {
      connection.stderrTail = (connection.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    return transport;
  }

  private startIdleTimer(): void {
    if (this.idleTimer) return;
    this.idleTimer = setInterval(() => void this.closeIdle(), Math.max(1_000, Math.min(this.idleMs, 60_000)));
    // The timer alone does not keep the worker process alive.
    this.idleTimer.unref();
  }

  private async closeIdle(): Promise<void> {
    const now = Date.now();
    for (const [key, connection] of this.connections) {
      if (connection.inUse > 0 || now - connection.lastUsed < this.idleMs) continue;
      this.connections.delete(key);
      connection.state = 'closed';
      await connection.client?.close().catch(() => undefined);
    }
    if (this.connections.size === 0 && this.idleTimer) {
      clearInterval(this.idleTimer);
      this.idleTimer = undefined;
    }
  }
}

/** Calls the connection's release once (its sandbox's proxy and placeholders). */
async function releaseOnce(connection: McpConnection): Promise<void> {
  const release = connection.release;
  connection.release = undefined;
  await release?.().catch(() => undefined);
}
