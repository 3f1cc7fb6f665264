/**
 * Upgrades with Worker Versioning (issue 24 item 5, issue 30), versions side by side. A conversation
 * stays on the version it runs on within a run (a deploy never replays its history against new code)
 * and moves to the current version when it continues as new: at the end of a query, when input wakes
 * it on an older version, and when `durable-agent upgrade` wakes it. The same process restarted on
 * new code keeps serving the old version's runs: upgrade-single-machine.test.ts.
 * docs/deployment.md, "Upgrades with Worker Versioning".
 *
 * Pinning runs on the tests' shared dev server (Temporal CLI 1.5.1, server 1.29.1: Worker
 * Deployments, but it never tells a pinned run that a newer version is current, and ignores
 * `initialVersioningBehavior`). Moving runs on a PostgreSQL stack of this file's own (server 1.31.0,
 * infra/postgres-stack.ts), skipped only where that cannot be built (no PostgreSQL, or no Go and no
 * cached server build), as test/integration/postgres-stack.test.ts.
 */
import { temporal } from '@temporalio/proto';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { versionedDeployment } from '../../worker/versioning';
import { cli, isolateEnvironment } from '../helpers/cli';
import { postgresStackForSuite, postgresStackUnavailable } from '../helpers/postgres-suite';
import { type Harness, type HarnessOptions, createHarness, eventually, localActivityType, runToResult } from '../helpers/harness';

const PINNED = temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED;
const { WORKFLOW_EXECUTION_STATUS_COMPLETED: COMPLETED, WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW: CONTINUED_AS_NEW } =
  temporal.api.enums.v1.WorkflowExecutionStatus;

let harness: Harness | undefined;
const unavailable = postgresStackUnavailable;

isolateEnvironment();

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** A harness with helpers for one test deployment of its own. */
async function versionedHarness(script: Parameters<typeof createHarness>[0], options: HarnessOptions = {}) {
  harness = await createHarness(script, options);
  const h = harness;
  const deploymentName = `durable-agent-test-${randomUUID().slice(0, 8)}`;
  const setCurrent = (buildId: string) =>
    // The version exists once its worker has polled: retried until then.
    eventually(
      () =>
        h.client.workflowService.setWorkerDeploymentCurrentVersion({ namespace: 'default', deploymentName, buildId, identity: 'worker-versioning.test' }).then(
          () => true,
          () => false,
        ),
      (done) => done,
    );
  const runOf = async (conversationId: string, runId?: string) => {
    const description = await h.client.workflow.getHandle(conversationId, runId).describe();
    const info = description.raw.workflowExecutionInfo?.versioningInfo;
    return {
      runId: description.runId,
      buildId: info?.deploymentVersion?.buildId,
      behavior: info?.behavior,
      status: description.raw.workflowExecutionInfo?.status,
    };
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

describe('Worker Versioning on the dev server (server 1.29.1: runs stay pinned)', () => {
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

    // v1 back: its worker takes the input's task and answers. The run stays on v1: server 1.29.1
    // does not tell it that v2 is current (moving is tested on the PostgreSQL stack below).
    await startVersion('v1');
    expect((await h.api.waitForResult(first.conversationId, second)).result).toBe('Second answer.');
    expect(await runOf(first.conversationId)).toEqual(firstRun);

    // `durable-agent upgrade` says why it cannot move it here.
    process.env.TEMPORAL_ADDRESS = h.address;
    process.env.TEMPORAL_NAMESPACE = 'default';
    const upgraded = await cli('upgrade', first.conversationId);
    expect(upgraded.code).toBe(1);
    expect(upgraded.out).toContain(`${first.conversationId}: stays on v1: the Temporal server (1.29.1) does not tell a run`);
    expect(await runOf(first.conversationId)).toEqual(firstRun);
  }, 120_000);

  it('(b) a run pinned to N finishes on N after N+1 became current', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { h, setCurrent, runOf, startVersion } = await versionedHarness({
      script: [{ content: [{ type: 'text', text: 'Answered on N.' }], hold: { afterBlocks: 0, until: held } }],
    });
    await startVersion('n');
    await setCurrent('n');
    // A generous heartbeat timeout: the held model call must outlast N+1's start on a loaded machine.
    const started = await h.api.start({ prompt: 'One question', config: h.config({ oneShot: true, modelHeartbeatTimeoutMs: 30_000 }), taskQueue: h.taskQueue });
    await eventually(
      async () => h.model.requests.length,
      (count) => count === 1,
    );

    // N+1 deployed and made current while N's run is in its query.
    await startVersion('n1');
    await setCurrent('n1');
    release();
    expect((await h.api.waitForResult(started.conversationId, started.inputUuid!)).result).toBe('Answered on N.');
    const finished = await eventually(
      () => runOf(started.conversationId),
      (run) => run.status === COMPLETED,
    );
    expect(finished).toMatchObject({ buildId: 'n', behavior: PINNED });
  }, 120_000);
});

describe.skipIf(unavailable)(
  `Worker Versioning on the PostgreSQL stack (server 1.31.0: Upgrade on Continue-as-New)${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    const stack = postgresStackForSuite('versioning');

    it('(a) a conversation on N gets input after N+1 became current: it continues on N+1, which answers, with nothing lost', async () => {
      const { h, setCurrent, runOf, modelCalls, startVersion } = await versionedHarness(
        {
          script: [
            { content: [{ type: 'text', text: 'First answer.' }] },
            { content: [{ type: 'text', text: 'Second answer.' }] },
            { content: [{ type: 'text', text: 'Third answer.' }] },
          ],
        },
        { address: stack.address() },
      );
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
      // The second answer came from a run on N+1 (1 run in about 10 tries continued as new once more after
      // answering — an extra, empty run on N+1, cause not yet found; nothing is lost either way).
      const laterRuns: string[] = [];
      for await (const execution of h.client.workflow.list({ query: `WorkflowId = '${first.conversationId}'` })) {
        if (execution.runId !== onN.runId) laterRuns.push(execution.runId);
      }
      const answeredOn = [];
      for (const runId of laterRuns) if ((await modelCalls(first.conversationId, runId)) > 0) answeredOn.push(await runOf(first.conversationId, runId));
      expect(answeredOn).toHaveLength(1);
      expect(answeredOn[0]).toMatchObject({ buildId: 'n1', behavior: PINNED });
      expect(await modelCalls(first.conversationId, answeredOn[0].runId)).toBe(1);

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

    it('`durable-agent upgrade`: idle conversations on N move to N+1 before any new input, transcripts intact', async () => {
      const { h, setCurrent, runOf, modelCalls, startVersion } = await versionedHarness(
        {
          script: [
            { content: [{ type: 'text', text: 'First answer (A).' }] },
            { content: [{ type: 'text', text: 'First answer (B).' }] },
            { content: [{ type: 'text', text: 'Second answer (A).' }] },
          ],
        },
        { address: stack.address() },
      );
      process.env.TEMPORAL_ADDRESS = stack.address();
      process.env.TEMPORAL_NAMESPACE = 'default';
      const n = await startVersion('n');
      await setCurrent('n');
      const a = await runToResult(h, 'Remember the word "heron".', { continueAsNewAfterEvents: 100_000 });
      const b = await runToResult(h, 'Remember the word "ibis".', { continueAsNewAfterEvents: 100_000 });
      const aOnN = await runOf(a.conversationId);
      const bOnN = await runOf(b.conversationId);
      expect(aOnN).toMatchObject({ buildId: 'n', behavior: PINNED });
      expect(bOnN).toMatchObject({ buildId: 'n', behavior: PINNED });

      await startVersion('n1');
      await setCurrent('n1');
      // Idle, both stay on N: no task tells them N+1 is current.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(await runOf(a.conversationId)).toEqual(aOnN);

      // A, while N's worker still holds it in its cache: `upgrade` resets its sticky queue, so the
      // update's task comes through the task queue and says N+1 is current; the idle run moves.
      const upgradedA = await cli('upgrade', a.conversationId);
      expect(upgradedA).toMatchObject({ code: 0, err: '' });
      const aOnN1 = await runOf(a.conversationId);
      expect(upgradedA.out).toBe(`moved ${a.conversationId}: n → n1 (run ${aOnN1.runId})\n`);
      expect(aOnN1).toMatchObject({ buildId: 'n1', behavior: PINNED });
      expect(aOnN1.runId).not.toBe(aOnN.runId);
      expect(await runOf(a.conversationId, aOnN.runId)).toMatchObject({ status: CONTINUED_AS_NEW });
      // Before any new input: no model call, and the transcript and counters went along.
      expect(h.model.requests).toHaveLength(2);
      expect(await modelCalls(a.conversationId, aOnN1.runId)).toBe(0);
      const transcript = JSON.stringify(await h.api.transcript(a.conversationId));
      expect(transcript).toContain('heron');
      expect(transcript).toContain('First answer (A).');
      expect((await h.api.status(a.conversationId)).queryCount).toBe(1);
      expect(await runOf(b.conversationId)).toEqual(bOnN);

      // N's worker restarted (as a deploy does); `upgrade --all` moves B, and A is already current.
      await h.stopWorker(n);
      await startVersion('n');
      const all = await cli('upgrade', '--all');
      expect(all.code).toBe(0);
      const bOnN1 = await runOf(b.conversationId);
      expect(bOnN1).toMatchObject({ buildId: 'n1', behavior: PINNED });
      expect(all.out).toContain(`moved ${b.conversationId}: n → n1 (run ${bOnN1.runId})\n`);
      expect(all.out).not.toContain(a.conversationId);
      expect(all.out).toMatch(/^1 moved, [1-9]\d* already on the current version, 0 moving after their query, 0 unversioned, 0 not moved\.$/m);
      expect(JSON.stringify(await h.api.transcript(b.conversationId))).toContain('ibis');
      expect(h.model.requests).toHaveLength(2);

      // A again: already there. A's next input is answered on N+1 with the whole conversation.
      expect(await cli('upgrade', a.conversationId)).toMatchObject({ code: 0, out: `${a.conversationId}: already on the current version n1\n` });
      const second = await h.api.send(a.conversationId, 'Which word?');
      expect((await h.api.waitForResult(a.conversationId, second)).result).toBe('Second answer (A).');
      expect(h.model.requests[2].body.messages.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant', 'user']);
      expect(JSON.stringify(h.model.requests[2].body.messages[0].content)).toContain('heron');
      expect(await runOf(a.conversationId)).toEqual(aOnN1);

      // Clear errors: an unknown id, an ended conversation, no arguments, no server.
      const unknown = await cli('upgrade', 'conversation-no-such-one-0000');
      expect(unknown.code).toBe(1);
      expect(unknown.err).toContain('No conversation with id "conversation-no-such-one-0000"');
      await h.api.end(b.conversationId);
      await eventually(
        () => runOf(b.conversationId),
        (run) => run.status === COMPLETED,
      );
      const ended = await cli('upgrade', b.conversationId);
      expect(ended.code).toBe(1);
      expect(ended.err).toContain(`Conversation "${b.conversationId}" has ended (completed)`);
      const usage = await cli('upgrade');
      expect(usage.code).toBe(2);
      expect(usage.err).toContain('upgrade: name one conversation <id>, or --all.');
      process.env.TEMPORAL_ADDRESS = '127.0.0.1:1';
      const noServer = await cli('upgrade', '--all');
      expect(noServer.code).toBe(1);
      expect(noServer.err).toContain('Cannot reach the Temporal server at 127.0.0.1:1');
    }, 180_000);

    it('`durable-agent upgrade` during a query: the query finishes on N, then the conversation moves to N+1', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const { h, setCurrent, runOf, modelCalls, startVersion } = await versionedHarness(
        { script: [{ content: [{ type: 'text', text: 'Answered on N.' }], hold: { afterBlocks: 0, until: held } }] },
        { address: stack.address() },
      );
      process.env.TEMPORAL_ADDRESS = stack.address();
      process.env.TEMPORAL_NAMESPACE = 'default';
      await startVersion('n');
      await setCurrent('n');
      // A generous heartbeat timeout: the held model call must outlast N+1's start on a loaded machine.
      const config = h.config({ modelHeartbeatTimeoutMs: 30_000, continueAsNewAfterEvents: 100_000 });
      const started = await h.api.start({ prompt: 'One question', config, taskQueue: h.taskQueue });
      await eventually(
        async () => h.model.requests.length,
        (count) => count === 1,
      );
      const onN = await runOf(started.conversationId);
      expect(onN).toMatchObject({ buildId: 'n', behavior: PINNED });

      await startVersion('n1');
      await setCurrent('n1');
      const upgraded = await cli('upgrade', started.conversationId);
      expect(upgraded).toMatchObject({ code: 0, out: `${started.conversationId}: a query runs on n; the conversation moves to n1 when it ends\n` });
      expect(await runOf(started.conversationId)).toEqual(onN);

      release();
      expect((await h.api.waitForResult(started.conversationId, started.inputUuid!)).result).toBe('Answered on N.');
      const moved = await eventually(
        () => runOf(started.conversationId),
        (run) => run.runId !== onN.runId && run.buildId === 'n1' && run.behavior === PINNED,
      );
      expect(await runOf(started.conversationId, onN.runId)).toMatchObject({ status: CONTINUED_AS_NEW });
      // One model request, answered in N's run (local first, maybe handed over to a regular activity: 1 or 2 calls).
      expect(h.model.requests).toHaveLength(1);
      expect(await modelCalls(started.conversationId, onN.runId)).toBeGreaterThanOrEqual(1);
      expect(await modelCalls(started.conversationId, moved.runId)).toBe(0);
    }, 120_000);
  },
);
