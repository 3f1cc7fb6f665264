/**
 * At most once (issue 22 §2): a worker SIGKILLed in the middle of an MCP call. The call is an
 * activity on a real dev server; the server is a real stdio MCP server (an SDK McpServer) whose
 * tools append a line to a file before they wait. After the kill, Temporal retries the activity on
 * another worker: a tool that is not read-only is reported "may have run" and NOT called again (one
 * line); a read-only one is called again (two lines) and returns its result.
 */
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CallMcpToolInput, CallMcpToolResult } from '../../common/activity-types';
import type { McpServerEntry } from '../../common/mcp-config';

const REPO_ROOT = path.resolve(__dirname, '../..');
const SDK = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/cjs');

/** A stdio MCP server: `record-write` (not read-only) and `record-read` (read-only) append to `file`, then wait `seconds`. */
const SERVER_SCRIPT = `
const { McpServer } = require(${JSON.stringify(`${SDK}/server/mcp.js`)});
const { StdioServerTransport } = require(${JSON.stringify(`${SDK}/server/stdio.js`)});
const { appendFileSync } = require('node:fs');
const server = new McpServer({ name: 'recorder', version: '1.0.0' });
for (const [name, readOnlyHint] of [['record-write', false], ['record-read', true]]) {
  server.registerTool(name, { description: 'appends a line, then waits', annotations: { readOnlyHint } }, async () => {
    appendFileSync(process.env.RECORD_FILE, name + '\\n');
    // unref: when the client goes away (stdin closes) the process ends instead of waiting.
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.WAIT_SECONDS) * 1000).unref());
    return { content: [{ type: 'text', text: name + ' finished' }] };
  });
}
server.connect(new StdioServerTransport());
`;

/** A worker process hosting only callMcpTool, from the project's own activity factory. */
const WORKER_SCRIPT = `
const { NativeConnection, Worker } = require('@temporalio/worker');
const { createMcpActivities, McpConnectionManager } = require(${JSON.stringify(path.join(REPO_ROOT, 'activities/mcp/activities.ts'))});
(async () => {
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const { callMcpTool } = createMcpActivities({ connections: new McpConnectionManager() });
  const worker = await Worker.create({
    connection, taskQueue: process.env.TASK_QUEUE, workflowBundle: { codePath: process.env.BUNDLE },
    activities: { callMcpTool }, maxHeartbeatThrottleInterval: '1 second',
    // The killed worker's sticky queue holds the workflow's next task this long (SDK: 10 s).
    stickyQueueScheduleToStartTimeout: '2 seconds',
  });
  console.log('worker polling');
  await worker.run();
})().catch((error) => { console.error(error); process.exit(1); });
`;

let root: string;
let bundlePath: string;
let client: Client;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'mcp-kill-'));
  const { code } = await bundleWorkflowCode({ workflowsPath: path.join(__dirname, 'fixtures', 'mcp-call-workflow.ts'), logger: new DefaultLogger('WARN') });
  bundlePath = path.join(root, 'bundle.js');
  await writeFile(bundlePath, code);
  client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }) });
}, 120_000);

afterAll(async () => {
  for (const worker of workers) worker.kill('SIGKILL');
  await client?.connection.close();
  await rm(root, { recursive: true, force: true });
});

async function startWorker(taskQueue: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', WORKER_SCRIPT], {
    cwd: REPO_ROOT,
    env: { ...process.env, TEMPORAL_ADDRESS: inject('temporalAddress'), TASK_QUEUE: taskQueue, BUNDLE: bundlePath },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  workers.push(child);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('worker polling')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker exited ${code}: ${output}`)));
  });
  return child;
}

async function lines(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '');
}

async function killMidCall(tool: 'record-write' | 'record-read', readOnlyHint: boolean) {
  const taskQueue = `mcp-kill-${randomUUID()}`;
  const file = path.join(root, `${tool}.log`);
  const server: McpServerEntry = {
    name: 'recorder',
    scope: 'project',
    file: path.join(root, '.mcp.json'),
    approval: 'approved',
    config: { command: process.execPath, args: ['-e', SERVER_SCRIPT], env: { RECORD_FILE: file, WAIT_SECONDS: '4' } },
  };
  const first = await startWorker(taskQueue);
  const input: CallMcpToolInput = {
    scope: 'conversation-kill',
    cwd: root,
    server,
    toolName: `mcp__recorder__${tool}`,
    originalName: tool,
    arguments: {},
    annotations: { readOnlyHint },
  };
  const handle = await client.workflow.start('mcpCallWorkflow', { taskQueue, workflowId: `mcp-kill-${randomUUID()}`, args: [input] });
  // Killed once the tool has had its effect and is waiting.
  const deadline = Date.now() + 30_000;
  while ((await lines(file)).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await lines(file)).toEqual([tool]);
  first.kill('SIGKILL');
  await startWorker(taskQueue);
  const result: CallMcpToolResult = await handle.result();
  const history = await handle.fetchHistory();
  const attempts = history
    .events!.filter((event) => event.activityTaskStartedEventAttributes)
    .map((event) => event.activityTaskStartedEventAttributes!.attempt);
  return { result, lines: await lines(file), attempts };
}

describe('an MCP call whose worker is SIGKILLed mid-call', () => {
  it('a tool that is not read-only is reported "may have run" once and not repeated', async () => {
    const { result, lines: recorded, attempts } = await killMidCall('record-write', false);
    expect(result).toMatchObject({ isError: true, mayHaveRun: true });
    expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('may or may not have run') });
    expect(recorded).toEqual(['record-write']);
    expect(attempts).toEqual([2]); // the started event records the last attempt
  });

  it('a read-only tool is called again and returns its result', async () => {
    const { result, lines: recorded } = await killMidCall('record-read', true);
    expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'record-read finished' }] });
    expect(recorded).toEqual(['record-read', 'record-read']);
  });
});
