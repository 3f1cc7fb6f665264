/**
 * Benchmark: what an MCP server costs on the workspace's worker (issue 22 §2).
 *
 *   npx tsx bench/mcp-calls.ts [calls]          (default 200 calls per transport)
 *
 * Against @modelcontextprotocol/server-everything (stdio, and streamable HTTP on a local port), through the
 * project's own activities in @temporalio/testing's activity environment: a cold `listMcpServers` (spawn or
 * HTTP session + initialize + tools/list), a warm one (the kept connection), and `callMcpTool` of `echo`
 * `calls` times in sequence on the kept connection. No Temporal server: this is the activity's own cost,
 * what a conversation adds per call on top of one activity dispatch (bench/dispatch-latency.ts).
 * Results are appended to bench/results/mcp-calls.md.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { spawn } from 'node:child_process';
import { appendFile, mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { callMcpTool, listMcpServers } from '../activities/mcp/activities';
import { McpConnectionManager } from '../activities/mcp/connections';
import type { CallMcpToolResult, ListMcpServersResult } from '../common/activity-types';
import type { McpServerEntry } from '../common/mcp-config';

const EVERYTHING = path.resolve(__dirname, '../node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const calls = Number(process.argv[2] ?? 200);

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => resolve(port));
    });
  });
}

async function measure(name: string, server: McpServerEntry, cwd: string): Promise<string> {
  const manager = new McpConnectionManager();
  const environment = new MockActivityEnvironment();
  const listStart = performance.now();
  const cold: ListMcpServersResult = await environment.run(listMcpServers, manager, { scope: 'bench', cwd, servers: [server] });
  const coldMs = performance.now() - listStart;
  if (cold.servers[0].state !== 'connected') throw new Error(`${name}: ${cold.servers[0].error}`);
  const warmStart = performance.now();
  await environment.run(listMcpServers, manager, { scope: 'bench', cwd, servers: [server] });
  const warmMs = performance.now() - warmStart;
  const durations: number[] = [];
  for (let index = 0; index < calls; index++) {
    const start = performance.now();
    // One environment per call, as each activity has its own context and cancellation signal.
    const result: CallMcpToolResult = await new MockActivityEnvironment().run(callMcpTool, manager, {
      scope: 'bench',
      cwd,
      server,
      toolName: 'mcp__everything__echo',
      originalName: 'echo',
      arguments: { message: `call ${index}` },
    });
    durations.push(performance.now() - start);
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  }
  await manager.close();
  const row = `| ${name} | ${coldMs.toFixed(0)} | ${warmMs.toFixed(1)} | ${cold.servers[0].tools.length} | ${quantile(durations, 0.5).toFixed(2)} | ${quantile(durations, 0.95).toFixed(2)} | ${calls} |`;
  console.log(row);
  return row;
}

async function main(): Promise<void> {
  const cwd = await mkdtemp(path.join(os.tmpdir(), 'bench-mcp-'));
  const rows: string[] = [];
  rows.push(
    await measure(
      'stdio',
      { name: 'everything', scope: 'project', file: 'bench', approval: 'approved', config: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      cwd,
    ),
  );
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => chunk.toString().includes('listening') && resolve();
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
  });
  try {
    rows.push(
      await measure(
        'streamable HTTP',
        { name: 'everything', scope: 'project', file: 'bench', approval: 'approved', config: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } },
        cwd,
      ),
    );
  } finally {
    child.kill('SIGKILL');
  }
  const header = [
    `\n## ${new Date().toISOString()} — ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, load ${os.loadavg()[0].toFixed(2)}, node ${process.version}`,
    '',
    `Command: \`npx tsx bench/mcp-calls.ts ${calls}\``,
    '',
    '| transport | cold list (ms) | warm list (ms) | tools | echo call p50 (ms) | p95 (ms) | calls |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  await appendFile(path.join(__dirname, 'results', 'mcp-calls.md'), `${header.join('\n')}\n${rows.join('\n')}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
