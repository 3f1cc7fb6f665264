/**
 * A single machine strands nothing (issue 30): ONE worker process (`durable-agent worker`'s
 * runWorker) starts on bundle N, becomes current, a conversation runs on N; the process is
 * restarted on bundle N+1 (the same source with a banner prepended: another content hash, so
 * another build id). N+1 becomes current; the conversation, pinned to N and idle, is still served
 * — by the extra Worker the process runs from N's bundle kept in its state directory. Once nothing
 * is pinned to N, the process drops N's Worker and deletes its bundle. Replaces the patching-world
 * upgrade.test.ts.
 *
 * - On the tests' shared dev server (server 1.29.1, which pins runs but never moves them): N's kept
 *   Worker answers the next input on N, and N is dropped when the pinned run ENDS.
 * - On a PostgreSQL stack of this file's own (server 1.31.0: Upgrade on Continue-as-New): the next
 *   input moves the conversation to N+1, which answers with the whole transcript, and N is dropped.
 *   Skipped only where the stack cannot be built (no PostgreSQL, or no Go and no cached server build).
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { afterEach, describe, expect, it } from 'vitest';
import { bundleBuildId } from '../../worker/versioning';
import { postgresStackForSuite, postgresStackUnavailable } from '../helpers/postgres-suite';
import { type Harness, REPO_ROOT, createHarness, eventually, runToResult } from '../helpers/harness';

const VERSIONED_WORKER = path.join(REPO_ROOT, 'test', 'helpers', 'versioned-worker.ts');
const { WORKFLOW_EXECUTION_STATUS_COMPLETED: COMPLETED } = temporal.api.enums.v1.WorkflowExecutionStatus;
const unavailable = postgresStackUnavailable;

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * The common start: one process on N with a conversation on N, restarted on N+1, which is current;
 * N's bundle kept, the conversation still pinned to N. Then its next input, answered by `answer`.
 */
async function restartedOnNewVersion(address?: string) {
  harness = await createHarness(
    {
      script: [{ content: [{ type: 'text', text: 'First answer, on N.' }] }, { content: [{ type: 'text', text: 'Second answer.' }] }],
    },
    { address },
  );
  const h = harness;
  const deploymentName = `durable-agent-test-${randomUUID().slice(0, 8)}`;
  const env = { DURABLE_AGENT_UNVERSIONED: '', DURABLE_AGENT_DEPLOYMENT_NAME: deploymentName };
  const bundles = path.join(h.stateDir, 'workflow-bundles', deploymentName);
  const current = async () =>
    (await h.client.workflowService.describeWorkerDeployment({ namespace: 'default', deploymentName })).workerDeploymentInfo?.routingConfig
      ?.currentDeploymentVersion?.buildId;
  const runOf = async (conversationId: string) => {
    const description = await h.client.workflow.getHandle(conversationId).describe();
    return {
      runId: description.runId,
      buildId: description.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId,
      status: description.raw.workflowExecutionInfo?.status,
    };
  };

  // Version N: the worker made itself current, its build id the hash of the bundle it kept.
  const onN = await h.spawnWorkerProcess({ script: VERSIONED_WORKER, env });
  const n = await current();
  expect(readdirSync(bundles)).toEqual([`${n}.js`]);
  expect(bundleBuildId(readFileSync(path.join(bundles, `${n}.js`), 'utf8'))).toBe(n);
  const first = await runToResult(h, 'Remember the word "heron".');
  expect(first.result.result).toBe('First answer, on N.');
  const pinnedRun = await runOf(first.conversationId);
  expect(pinnedRun.buildId).toBe(n);

  // The machine pulls new code: the same process restarted on N+1.
  onN.kill('SIGTERM');
  await exited(onN);
  await h.spawnWorkerProcess({ script: VERSIONED_WORKER, env: { ...env, TEST_BUNDLE_BANNER: '// version N+1' } });
  const n1 = await current();
  expect(n1).toMatch(/^b[0-9a-f]{12}$/);
  expect(n1).not.toBe(n);
  // N's bundle is kept while the idle conversation is pinned to it.
  expect(readdirSync(bundles).sort()).toEqual([`${n}.js`, `${n1}.js`].sort());
  expect(await runOf(first.conversationId)).toEqual(pinnedRun);

  // Its next input: N's task is taken by the Worker the process runs from N's kept bundle (no
  // other poller of N exists).
  const second = await h.api.send(first.conversationId, 'Which word?');
  const answered = await Promise.race([
    h.api.waitForResult(first.conversationId, second),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no worker of N took the pinned run's task within 90 s")), 90_000).unref()),
  ]);
  expect(answered.result).toBe('Second answer.');
  expect(h.model.requests[1].body.messages.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant', 'user']);
  expect(JSON.stringify(h.model.requests[1].body.messages[0].content)).toContain('heron');
  return { h, n, n1, bundles, runOf, conversationId: first.conversationId, pinnedRun };
}

describe('one machine upgraded in place, on the dev server (server 1.29.1: runs stay pinned)', () => {
  it('keeps serving the run pinned to N from the kept bundle after restarting on N+1, then drops N when that run ends', async () => {
    const { h, n, n1, bundles, runOf, conversationId, pinnedRun } = await restartedOnNewVersion();
    // Answered on N: this server never tells a pinned run that N+1 is current.
    expect(await runOf(conversationId)).toEqual(pinnedRun);
    expect(readdirSync(bundles).sort()).toEqual([`${n}.js`, `${n1}.js`].sort());

    // The pinned run ends: nothing is pinned to N any more, and the process drops N.
    await h.api.end(conversationId);
    await eventually(
      () => runOf(conversationId),
      (run) => run.status === COMPLETED,
    );
    await eventually(
      async () => existsSync(path.join(bundles, `${n}.js`)),
      (exists) => !exists,
      30_000,
    );
    expect(readdirSync(bundles)).toEqual([`${n1}.js`]);
  }, 240_000);
});

describe.skipIf(unavailable)(
  `one machine upgraded in place, on the PostgreSQL stack (server 1.31.0: Upgrade on Continue-as-New)${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    const stack = postgresStackForSuite('single-machine');

    it('the run pinned to N, served from the kept bundle, moves to N+1 on its next input; then the process drops N', async () => {
      const { n, n1, bundles, runOf, conversationId, pinnedRun } = await restartedOnNewVersion(stack.address());
      // The input woke it on N, where the task said N+1 is current: it moved, and N+1 answered.
      const moved = await runOf(conversationId);
      expect(moved.buildId).toBe(n1);
      expect(moved.runId).not.toBe(pinnedRun.runId);

      // Nothing is pinned to N any more: the process drops N's Worker and deletes its bundle.
      await eventually(
        async () => existsSync(path.join(bundles, `${n}.js`)),
        (exists) => !exists,
        30_000,
      );
      expect(readdirSync(bundles)).toEqual([`${n1}.js`]);
    }, 240_000);
  },
);
