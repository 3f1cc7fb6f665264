/**
 * Issue 21 §1 across a Temporal server restart: the server is SIGKILLed while a background command
 * runs under its supervising activity, and started again on the same port and SQLite file. The
 * command is not the server's (nor the worker's) to lose: the supervisor, or its retry, reports it
 * once it ends, and it ran once. Its own file-backed dev server (the shared one is in-memory).
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, createHarness, eventually } from '../helpers/harness';
import { liveSleepers } from '../helpers/processes';
import { type RestartableServer, startRestartableServer } from '../helpers/restartable-server';
import { backgroundCommandWorkflow } from './background-bash-workflows';

let server: RestartableServer | undefined;
let harness: Harness | undefined;
let workflowWorker: { worker: Worker; running: Promise<void> } | undefined;

beforeAll(async () => {
  server = await startRestartableServer('background-restart');
}, 60_000);

afterAll(async () => {
  workflowWorker?.worker.shutdown();
  await workflowWorker?.running;
  await harness?.close();
  await server?.stop();
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
    await eventually(
      async () => liveSleepers('9.25').length,
      (count) => count === 1,
      30_000,
    );

    await server!.killAndRestart({ downMs: 2_000 }); // down for longer than the heartbeat timeout's share
    expect(liveSleepers('9.25').length).toBe(1);

    const { started, outcome } = await harness.client.workflow.getHandle(workflowId).result();
    expect(started.alreadyStarted).toBe(false);
    expect(outcome).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(outcome.tail).toBe('done\n');
    expect(await readFile(path.join(harness.workspace, 'runs.txt'), 'utf8')).toBe('started\n');
  }, 180_000);
});
