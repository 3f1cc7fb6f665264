/**
 * Issue 21 §1 across a Temporal server restart: the server is SIGKILLed while a background command
 * runs under its supervising activity, and started again on the same port and SQLite file. The
 * command is not the server's (nor the worker's) to lose: the supervisor, or its retry, reports it
 * once it ends, and it ran once. Its own file-backed dev server (the shared one is in-memory).
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, getFreePorts, startDevServer } from '../../infra/dev-server';
import { ensureTemporalCli } from '../../infra/temporal-cli';
import { type Harness, createHarness, eventually } from '../helpers/harness';
import { liveSleepers } from '../helpers/processes';
import { backgroundCommandWorkflow } from './background-bash-workflows';

let directory: string;
let dbFilename: string;
let port: number;
let cliPath: string;
let server: DevServer | undefined;
let harness: Harness | undefined;
let workflowWorker: { worker: Worker; running: Promise<void> } | undefined;

const quiet = (): void => {};
const startServer = () => startDevServer({ dbFilename, port, headless: true, cliPath, log: quiet });

beforeAll(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-background-restart-'));
  dbFilename = path.join(directory, 'temporal.db');
  [port] = await getFreePorts(1);
  cliPath = (await ensureTemporalCli({ log: quiet })).path;
  server = await startServer();
}, 60_000);

afterAll(async () => {
  workflowWorker?.worker.shutdown();
  await workflowWorker?.running;
  await harness?.close();
  await server?.stop();
  await rm(directory, { recursive: true, force: true });
});

describe('background Bash across a Temporal server restart', () => {
  it('reports the command once after the server was SIGKILLed and restarted mid-command; it ran once', async () => {
    harness = await createHarness({}, { address: server!.address });
    await harness.startWorker();
    const workflowQueue = `${harness.taskQueue}-workflows`;
    const worker = await Worker.create({
      connection: await NativeConnection.connect({ address: server!.address }),
      namespace: 'default',
      taskQueue: workflowQueue,
      workflowsPath: path.join(__dirname, 'background-bash-workflows.ts'),
    });
    workflowWorker = { worker, running: worker.run() };

    const ref = { conversationId: `conv-${randomUUID().slice(0, 8)}`, taskId: 'b-restart', cwd: harness.workspace };
    const workflowId = `background-${randomUUID()}`;
    await harness.client.workflow.start(backgroundCommandWorkflow, {
      workflowId,
      taskQueue: workflowQueue,
      args: [{ ref, command: 'echo started >> runs.txt; sleep 9.25; echo done', activityQueue: harness.taskQueue }],
    });
    await eventually(async () => liveSleepers('9.25').length, (count) => count === 1, 30_000);

    const old = server!;
    const exited = new Promise((resolve) => old.process.once('exit', resolve));
    old.process.kill('SIGKILL');
    await exited;
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // down for longer than the heartbeat timeout's share
    server = await startServer();
    expect(liveSleepers('9.25').length).toBe(1);

    const { started, outcome } = await harness.client.workflow.getHandle(workflowId).result();
    expect(started.alreadyStarted).toBe(false);
    expect(outcome).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(outcome.tail).toBe('done\n');
    expect(await readFile(path.join(harness.workspace, 'runs.txt'), 'utf8')).toBe('started\n');
  }, 180_000);
});
