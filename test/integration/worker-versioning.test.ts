/**
 * Upgrades with Worker Versioning (issue 24 item 5, issue 30), versions side by side on the tests'
 * dev server (Temporal CLI 1.9.1, server 1.32: Worker Deployments and Upgrade on Continue-as-New
 * need no dynamic config). A conversation stays on the version it runs on within a run (a deploy
 * never replays its history against new code) and moves to the current version when it continues
 * as new: at the end of a query, and when input wakes it on an older version. The same process
 * restarted on new code keeps serving the old version's runs: upgrade-single-machine.test.ts.
 * docs/deployment.md, "Upgrades with Worker Versioning".
 */
import { temporal } from '@temporalio/proto';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { versionedDeployment } from '../../worker/versioning';
import { type Harness, createHarness, eventually, localActivityType, runToResult } from '../helpers/harness';

const PINNED = temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED;
const { WORKFLOW_EXECUTION_STATUS_COMPLETED: COMPLETED, WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW: CONTINUED_AS_NEW } = temporal.api.enums.v1.WorkflowExecutionStatus;

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** A harness with helpers for one test deployment of its own. */
async function versionedHarness(script: Parameters<typeof createHarness>[0]) {
  harness = await createHarness(script);
  const h = harness;
  const deploymentName = `durable-agent-test-${randomUUID().slice(0, 8)}`;
  const setCurrent = (buildId: string) =>
    // The version exists once its worker has polled: retried until then.
    eventually(
      () =>
        h.client.workflowService
          .setWorkerDeploymentCurrentVersion({ namespace: 'default', deploymentName, buildId, identity: 'worker-versioning.test' })
          .then(
            () => true,
            () => false,
          ),
      (done) => done,
    );
  const runOf = async (conversationId: string, runId?: string) => {
    const description = await h.client.workflow.getHandle(conversationId, runId).describe();
    const info = description.raw.workflowExecutionInfo?.versioningInfo;
    return { runId: description.runId, buildId: info?.deploymentVersion?.buildId, behavior: info?.behavior, status: description.raw.workflowExecutionInfo?.status };
  };
  /** Model calls (local or regular activities) in one run's history. */
  const modelCalls = async (conversationId: string, runId: string) => {
    const { events } = await h.client.workflow.getHandle(conversationId, runId).fetchHistory();
    return (events ?? []).filter(
      (event) => /^callModel/.test(localActivityType(event) ?? '') || /^callModel/.test(event.activityTaskScheduledEventAttributes?.activityType?.name ?? ''),
    ).length;
  };
  const startVersion = (buildId: string) => h.startWorker({ deployment: versionedDeployment(deploymentName, buildId) });
  return { h, deploymentName, setCurrent, runOf, modelCalls, startVersion };
}

describe('Worker Versioning', () => {
  it('runs two versions side by side: a conversation stays pinned to v1 within its run, a new one starts on v2', async () => {
    const { h, setCurrent, runOf, startVersion } = await versionedHarness({
      script: [
        { content: [{ type: 'text', text: 'First answer.' }] },
        { content: [{ type: 'text', text: 'Answer for the new conversation.' }] },
        { content: [{ type: 'text', text: 'Second answer.' }] },
      ],
    });
    const v1 = await startVersion('v1');
    await setCurrent('v1');
    const first = await runToResult(h, 'Hello', { continueAsNewAfterEvents: 100_000 });
    const firstRun = await runOf(first.conversationId);
    expect(firstRun).toMatchObject({ buildId: 'v1', behavior: PINNED });

    await startVersion('v2');
    await setCurrent('v2');
    const other = await runToResult(h, 'Hi there', { continueAsNewAfterEvents: 100_000 });
    expect(other.result.result).toBe('Answer for the new conversation.');
    expect(await runOf(other.conversationId)).toMatchObject({ buildId: 'v2', behavior: PINNED });

    // Pinned within its run: with v1's worker gone, v2 does not take the conversation's next input.
    await h.stopWorker(v1);
    const second = await h.api.send(first.conversationId, 'And again?');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(h.model.requests).toHaveLength(2);
    expect(await runOf(first.conversationId)).toEqual(firstRun);

    // v1 back: its worker takes the input's task, and the run moves to v2, which answers.
    await startVersion('v1');
    expect((await h.api.waitForResult(first.conversationId, second)).result).toBe('Second answer.');
  }, 120_000);

  it('(a) a conversation on N gets input after N+1 became current: it continues on N+1, which answers, with nothing lost', async () => {
    const { h, setCurrent, runOf, modelCalls, startVersion } = await versionedHarness({
      script: [
        { content: [{ type: 'text', text: 'First answer.' }] },
        { content: [{ type: 'text', text: 'Second answer.' }] },
        { content: [{ type: 'text', text: 'Third answer.' }] },
      ],
    });
    const n = await startVersion('n');
    await setCurrent('n');
    const first = await runToResult(h, 'Remember the word "heron".', { continueAsNewAfterEvents: 100_000 });
    expect(first.result.result).toBe('First answer.');
    const onN = await runOf(first.conversationId);
    expect(onN).toMatchObject({ buildId: 'n', behavior: PINNED });

    await startVersion('n1');
    await setCurrent('n1');
    // N's worker restarted (as a deploy does): its cache is empty, so the next task comes through
    // the task queue, where matching tells the run that N+1 is current (a task on a worker's sticky
    // queue does not carry that: see docs/deployment.md).
    await h.stopWorker(n);
    await startVersion('n');
    // Idle on N until this input wakes it: it moves first, so N+1's code answers.
    const second = await h.api.send(first.conversationId, 'Which word?');
    expect((await h.api.waitForResult(first.conversationId, second)).result).toBe('Second answer.');
    const onN1 = await runOf(first.conversationId);
    expect(onN1).toMatchObject({ buildId: 'n1', behavior: PINNED });
    expect(onN1.runId).not.toBe(onN.runId);
    expect(await runOf(first.conversationId, onN.runId)).toMatchObject({ status: CONTINUED_AS_NEW });
    expect(await modelCalls(first.conversationId, onN.runId)).toBe(1);
    expect(await modelCalls(first.conversationId, onN1.runId)).toBe(1);

    // Nothing lost: the model saw the whole conversation, the transcript and the counters went along.
    const lastRequest = h.model.requests[1].body.messages as Array<{ role: string; content: unknown }>;
    expect(lastRequest.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(lastRequest[0].content)).toContain('heron');
    const status = await h.api.status(first.conversationId);
    expect(status.queryCount).toBe(2);
    const third = await h.api.send(first.conversationId, 'And now?');
    expect((await h.api.waitForResult(first.conversationId, third)).result).toBe('Third answer.');
    expect(h.model.requests[2].body.messages.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
  }, 120_000);

  it('(b) a run pinned to N finishes on N after N+1 became current', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { h, setCurrent, runOf, startVersion } = await versionedHarness({
      script: [{ content: [{ type: 'text', text: 'Answered on N.' }], hold: { afterBlocks: 0, until: held } }],
    });
    await startVersion('n');
    await setCurrent('n');
    const started = await h.api.start({ prompt: 'One question', config: h.config({ oneShot: true }), taskQueue: h.taskQueue });
    await eventually(async () => h.model.requests.length, (count) => count === 1);

    // N+1 deployed and made current while N's run is in its query.
    await startVersion('n1');
    await setCurrent('n1');
    release();
    expect((await h.api.waitForResult(started.conversationId, started.inputUuid!)).result).toBe('Answered on N.');
    const finished = await eventually(() => runOf(started.conversationId), (run) => run.status === COMPLETED);
    expect(finished).toMatchObject({ buildId: 'n', behavior: PINNED });
  }, 120_000);
});
