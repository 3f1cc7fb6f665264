/**
 * Issue 21 §1 with a real worker process: a background command supervised by a heartbeating
 * activity survives a SIGKILL of that worker — the command keeps running (own session and process
 * group), the retried activity on the next worker re-attaches through the record, and the command
 * ran exactly once.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, createHarness, eventually } from '../helpers/harness';
import { liveSleepers } from '../helpers/processes';
import { backgroundCommandWorkflow } from './background-bash-workflows';

let harness: Harness | undefined;
let workflowWorker: { worker: Worker; running: Promise<void> } | undefined;

afterEach(async () => {
  workflowWorker?.worker.shutdown();
  await workflowWorker?.running;
  workflowWorker = undefined;
  await harness?.close();
  harness = undefined;
});

describe('background Bash on a real worker', () => {
  it('finishes once across a SIGKILL of the supervising worker (re-attach)', async () => {
    harness = await createHarness();
    const workflowQueue = `${harness.taskQueue}-workflows`;
    const worker = await Worker.create({
      connection: await NativeConnection.connect({ address: harness.address }),
      namespace: 'default',
      taskQueue: workflowQueue,
      workflowsPath: path.join(__dirname, 'background-bash-workflows.ts'),
    });
    workflowWorker = { worker, running: worker.run() };

    const first = await harness.spawnWorkerProcess();
    const ref = { conversationId: `conv-${randomUUID().slice(0, 8)}`, taskId: 'b1', cwd: harness.workspace };
    const handle = await harness.client.workflow.start(backgroundCommandWorkflow, {
      workflowId: `background-${randomUUID()}`,
      taskQueue: workflowQueue,
      args: [{ ref, command: 'echo started >> runs.txt; sleep 7.25; echo done', activityQueue: harness.taskQueue }],
    });
    // The command is running (its sleep is on the host, inside the sandbox's PID namespace or not).
    await eventually(
      async () => liveSleepers('7.25').length,
      (count) => count === 1,
      30_000,
    );
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    expect(liveSleepers('7.25').length).toBe(1); // the worker's death did not take the command with it

    await harness.spawnWorkerProcess();
    const { started, outcome } = await handle.result();
    expect(started.alreadyStarted).toBe(false);
    expect(outcome).toMatchObject({ status: 'completed', exitCode: 0, outputPath: started.outputPath });
    expect(outcome.tail).toBe('done\n');
    expect(await readFile(path.join(harness.workspace, 'runs.txt'), 'utf8')).toBe('started\n');

    // The supervising activity ran more than once: the second attempt re-attached.
    const history = await handle.fetchHistory();
    const attempts = (history.events ?? [])
      .filter((event) => event.activityTaskStartedEventAttributes)
      .map((event) => event.activityTaskStartedEventAttributes!.attempt);
    expect(Math.max(...attempts.map(Number))).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
