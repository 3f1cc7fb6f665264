import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../../common/search-attributes';
import { getFreePorts, isTemporalReachable, runServerForPeople, startDevServer } from '../../infra/dev-server';
import { cachedCliPath, ensureTemporalCli } from '../../infra/temporal-cli';

/** temporal.api.enums.v1.IndexedValueType, by the SDK's SearchAttributeType name. */
const INDEXED_VALUE_TYPES: Record<string, number> = { TEXT: 1, KEYWORD: 2, INT: 3, DOUBLE: 4, BOOL: 5, DATETIME: 6, KEYWORD_LIST: 7 };

describe('the shared Temporal dev server (test/global-setup.ts)', () => {
  const address = inject('temporalAddress');
  let connection: Connection;
  let client: Client;

  beforeAll(async () => {
    connection = await Connection.connect({ address });
    client = new Client({ connection, namespace: 'default' });
  });
  afterAll(async () => {
    await connection?.close();
  });

  it('answers GetSystemInfo and describes the default namespace', async () => {
    expect(address).toMatch(/^[\w.-]+:\d+$/);
    expect(await isTemporalReachable(address)).toBe(true);
    const info = await client.workflowService.getSystemInfo({});
    expect(info.serverVersion).toBeTruthy();
    const ns = await client.workflowService.describeNamespace({ namespace: client.options.namespace });
    expect(ns.namespaceInfo?.name).toBe('default');
  });

  it('has the project search attributes registered with their types', async () => {
    const res = await client.connection.operatorService.listSearchAttributes({ namespace: 'default' });
    const custom = res.customAttributes ?? {};
    for (const { name, type } of SEARCH_ATTRIBUTES) {
      expect(custom, `search attribute ${name}`).toHaveProperty(name);
      expect(custom[name], `type of ${name}`).toBe(INDEXED_VALUE_TYPES[type]);
    }
  });
});

describe('isTemporalReachable', () => {
  it('is false, quickly, where nothing listens', async () => {
    const started = Date.now();
    expect(await isTemporalReachable('127.0.0.1:1', 1_000)).toBe(false);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('ensureTemporalCli', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('uses TEMPORAL_CLI_PATH when it is set, and says so', async () => {
    const found = await ensureTemporalCli({ log: () => {} });
    const lines: string[] = [];
    vi.stubEnv('TEMPORAL_CLI_PATH', found.path.includes('/') ? found.path : cachedCliPath());
    const again = await ensureTemporalCli({ log: (l) => lines.push(l) });
    expect(again.source).toBe('TEMPORAL_CLI_PATH');
    expect(again.path).toBe(process.env.TEMPORAL_CLI_PATH);
    expect(lines.join('\n')).toContain('TEMPORAL_CLI_PATH');
  });

  it('finds the cached build when TEMPORAL_CLI_PATH is unset and `temporal` is not on PATH', async () => {
    // A cache of our own, holding the binary this machine found (wherever it came from).
    const found = await ensureTemporalCli({ log: () => {} });
    const cacheRoot = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-cache-'));
    try {
      vi.stubEnv('DURABLE_AGENT_CACHE_DIR', cacheRoot);
      await mkdir(path.dirname(cachedCliPath()), { recursive: true });
      await symlink(found.path, cachedCliPath());
      vi.stubEnv('TEMPORAL_CLI_PATH', '');
      vi.stubEnv('PATH', '/nonexistent');
      const again = await ensureTemporalCli({ log: () => {} });
      expect(again).toEqual({ path: cachedCliPath(), source: 'cache' });
      expect(again.path.startsWith(cacheRoot)).toBe(true);
    } finally {
      await rm(cacheRoot, { recursive: true, force: true });
    }
  });

  it('fails loudly when TEMPORAL_CLI_PATH points at nothing', async () => {
    vi.stubEnv('TEMPORAL_CLI_PATH', '/nonexistent/temporal');
    await expect(ensureTemporalCli({ log: () => {} })).rejects.toThrow(/TEMPORAL_CLI_PATH/);
  });
});

describe('startDevServer', () => {
  it('starts a second ephemeral server on free ports with a custom namespace, and stop() ends it', async () => {
    const started = Date.now();
    const server = await startDevServer({ headless: true, namespace: 'durable-agent-test', log: () => {} });
    try {
      expect(server.uiUrl).toBeUndefined();
      expect(server.address).not.toBe(inject('temporalAddress'));
      const connection = await Connection.connect({ address: server.address });
      try {
        const ns = await connection.workflowService.describeNamespace({ namespace: 'durable-agent-test' });
        expect(ns.namespaceInfo?.name).toBe('durable-agent-test');
      } finally {
        await connection.close();
      }
    } finally {
      await server.stop();
    }
    expect(server.process.exitCode !== null || server.process.signalCode !== null).toBe(true);
    expect(await isTemporalReachable(server.address, 500)).toBe(false);
    expect(Date.now() - started).toBeLessThan(60_000);
  });
});

describe('runServerForPeople on a port where a server already answers', () => {
  it('adds our search attributes to a stock dev server that lacks them (issue 32: `list --status` failed there)', async () => {
    const cli = await ensureTemporalCli({ log: () => undefined });
    const [port] = await getFreePorts(1);
    // A stock `temporal server start-dev`: none of our search attributes.
    const stock = spawn(cli.path, ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'never'], {
      stdio: 'ignore',
    });
    try {
      await vi.waitFor(async () => expect(await isTemporalReachable(`127.0.0.1:${port}`, 1_000)).toBe(true), { timeout: 60_000, interval: 500 });
      const lines: string[] = [];
      await runServerForPeople({ port, log: (line) => lines.push(line) });
      expect(lines[0]).toContain(`A Temporal server is already answering at 127.0.0.1:${port}; nothing to start`);
      expect(lines.join('\n')).toMatch(/It lacked durable-agent's search attributes: registered search attributes DurableAgentStatus \(KEYWORD\)/);
      const connection = await Connection.connect({ address: `127.0.0.1:${port}` });
      try {
        const custom = (await connection.operatorService.listSearchAttributes({ namespace: 'default' })).customAttributes ?? {};
        for (const { name, type } of SEARCH_ATTRIBUTES) expect(custom[name], name).toBe(INDEXED_VALUE_TYPES[type]);
      } finally {
        await connection.close();
      }
      // Run again: nothing missing, nothing registered.
      const again: string[] = [];
      await runServerForPeople({ port, log: (line) => again.push(line) });
      expect(again.join('\n')).not.toContain('It lacked');
      expect(again.at(-1)).toMatch(/^Search attributes: DurableAgent/);
    } finally {
      stock.kill('SIGTERM');
    }
  }, 120_000);
});
