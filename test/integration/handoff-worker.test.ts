/**
 * The worker-specific handoff task queue (worker/worker.ts): every createWorker also runs an
 * activities-only worker on its own queue in the same process, offered to callModelLocal while
 * the worker runs. Its lifetime follows the main worker's through run(), runUntil(), shutdown()
 * and getState(); a handed-over stream nobody attached to is stopped when the worker stops.
 */
import Anthropic from '@anthropic-ai/sdk';
import { temporal } from '@temporalio/proto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger, NativeConnection } from '@temporalio/worker';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createActivities } from '../../activities';
import type { CallModelLocalInput } from '../../common/activity-types';
import { handoffQueueFor, modelCallRunStats } from '../../activities/model-call-runs';
import { AgentWorker, createWorker } from '../../worker/worker';
import { type Harness, createHarness, workflowBundle } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Identities of the workers polling `taskQueue` for activities, as the server reports them. */
async function activityPollers(h: Harness, taskQueue: string): Promise<string[]> {
  const response = await h.client.workflowService.describeTaskQueue({
    namespace: 'default',
    taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  });
  return (response.pollers ?? []).map((poller) => poller.identity ?? '');
}

describe('the handoff worker', () => {
  it('runs with the main worker: its queue is polled and offered while it runs, withdrawn when it stops', async () => {
    harness = await createHarness();
    const h = harness;
    const worker = await h.startWorker();
    expect(worker).toBeInstanceOf(AgentWorker);
    const handoffQueue = (worker as AgentWorker).handoffTaskQueue!;
    expect(handoffQueue).toMatch(new RegExp(`^${h.taskQueue}-handoff-`));
    expect(handoffQueueFor(h.taskQueue)).toBe(handoffQueue);
    expect(worker.getState()).toBe('RUNNING');
    await vi.waitFor(async () => expect((await activityPollers(h, handoffQueue)).length).toBeGreaterThan(0), { timeout: 20_000, interval: 200 });

    // A second worker on the same queue (a second process, as far as the server knows) gets its own.
    const second = (await h.startWorker()) as AgentWorker;
    expect(second.handoffTaskQueue).not.toBe(handoffQueue);
    expect(handoffQueueFor(h.taskQueue)).toBe(second.handoffTaskQueue);
    await h.stopWorker(second);
    expect(second.getState()).toBe('STOPPED');
    expect(handoffQueueFor(h.taskQueue)).toBe(handoffQueue);

    await h.stopWorker(worker);
    expect(worker.getState()).toBe('STOPPED');
    expect(handoffQueueFor(h.taskQueue)).toBeUndefined();
  });

  it('runUntil runs and stops both; a handed-over stream nobody attached to is aborted when the worker stops', async () => {
    harness = await createHarness();
    const h = harness;
    const connection = await NativeConnection.connect({ address: h.address });
    const anthropic = new Anthropic({ apiKey: 'test-key', baseURL: h.model.url, maxRetries: 0 });
    const activities = createActivities({ anthropic, stateDir: h.stateDir, temporalClient: h.client });
    const worker = await createWorker({
      connection,
      namespace: 'default',
      taskQueue: h.taskQueue,
      activities,
      workflowBundle: workflowBundle(),
      overrides: { shutdownGraceTime: '1 second' },
    });
    expect(handoffQueueFor(h.taskQueue)).toBeUndefined(); // offered only once it runs
    let release: () => void = () => undefined;
    h.model.enqueue({
      content: [{ type: 'text', text: 'never attached' }],
      hold: { afterBlocks: 0, until: new Promise<void>((resolve) => (release = resolve)) },
    });
    const before = modelCallRunStats();
    try {
      const handoff = await worker.runUntil(async () => {
        expect(handoffQueueFor(h.taskQueue)).toBe(worker.handoffTaskQueue);
        // The local phase, run as the worker's local activity would be (same process, same queue).
        const local = new MockActivityEnvironment({ taskQueue: h.taskQueue, isLocal: true }, { logger: new DefaultLogger('ERROR') });
        const input: CallModelLocalInput = {
          conversationId: 'conversation-handoff',
          model: 'claude-sonnet-4-6',
          maxTokens: 1024,
          system: [{ type: 'text', text: 'You are a test.' }],
          messages: [{ role: 'user', content: 'hi' }],
          toolNames: [],
          handoffAfterMs: 50,
        };
        return local.run(activities.callModelLocal, input);
      });
      expect(handoff).toMatchObject({ type: 'handoff', reason: 'slow', attach: { taskQueue: worker.handoffTaskQueue } });
      expect(worker.getState()).toBe('STOPPED');
      expect(handoffQueueFor(h.taskQueue)).toBeUndefined();
      expect(modelCallRunStats().abandoned).toBe(before.abandoned + 1);
      expect(modelCallRunStats().waiting).toBe(before.waiting);
      await vi.waitFor(() => expect(modelCallRunStats().streaming).toBe(0));
      expect(h.model.requests).toHaveLength(1);
    } finally {
      release();
      await connection.close();
    }
  });
});
