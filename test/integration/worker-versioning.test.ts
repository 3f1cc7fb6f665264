/**
 * Upgrades with Worker Versioning (issue 24, item 5), two worker versions side by side: a
 * conversation stays on the version it runs on within a run (a deploy never replays its history
 * against new code), moves to the current version when it continues as new, and the old version
 * drains. docs/deployment.md, "Upgrades with Worker Versioning".
 *
 * Pinning runs on the tests' dev server (CLI 1.5.1, server 1.29.1: Worker Deployments need no
 * dynamic config). Moving on continue-as-new and draining run on a dev server of their own from a
 * CLI whose server has Upgrade-on-Continue-as-New (CLI 1.9.1, server 1.32;
 * TEMPORAL_VERSIONING_CLI_PATH, or the cache's temporal-1.9.1), skipped when it is absent: server
 * 1.29.1 ignores `initialVersioningBehavior`, and the next run stayed on the old version (measured).
 */
import { temporal } from '@temporalio/proto';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type DevServer, startDevServer } from '../../infra/dev-server';
import { temporalCacheRoot } from '../../infra/temporal-cli';
import { versionedDeployment } from '../../worker/versioning';
import { type Harness, createHarness, eventually, runToResult } from '../helpers/harness';

const VERSIONING_CLI = process.env.TEMPORAL_VERSIONING_CLI_PATH ?? path.join(temporalCacheRoot(), 'temporal-1.9.1', 'temporal');
const PINNED = temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED;
const DRAINED = temporal.api.enums.v1.VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED;

let server: DevServer | undefined;
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const SCRIPT = [
  { content: [{ type: 'text' as const, text: 'First answer.' }] },
  { content: [{ type: 'text' as const, text: 'Answer for the new conversation.' }] },
  { content: [{ type: 'text' as const, text: 'Second answer.' }] },
  { content: [{ type: 'text' as const, text: 'Third answer.' }] },
];

/**
 * v1 and v2 side by side on `address`: a conversation started on v1 stays pinned to it (with v1's
 * worker stopped, v2 does not take its next input) and v1 answers it once back; a conversation
 * started after v2 became current runs on v2.
 */
async function sideBySide(address: string) {
  harness = await createHarness({ script: SCRIPT }, { address });
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
  const runOf = async (conversationId: string) => {
    const description = await h.client.workflow.getHandle(conversationId).describe();
    const info = description.raw.workflowExecutionInfo?.versioningInfo;
    return { runId: description.runId, buildId: info?.deploymentVersion?.buildId, behavior: info?.behavior };
  };

  const v1 = await h.startWorker({ deployment: versionedDeployment(deploymentName, 'v1') });
  await setCurrent('v1');
  const first = await runToResult(h, 'Hello', { continueAsNewAfterEvents: 100_000 });
  expect(first.result.result).toBe('First answer.');
  const conversationId = first.conversationId;
  const firstRun = await runOf(conversationId);
  expect(firstRun).toMatchObject({ buildId: 'v1', behavior: PINNED });

  // v2 deployed next to v1 and made current: new conversations start on it.
  await h.startWorker({ deployment: versionedDeployment(deploymentName, 'v2') });
  await setCurrent('v2');
  const other = await runToResult(h, 'Hi there', { continueAsNewAfterEvents: 100_000 });
  expect(other.result.result).toBe('Answer for the new conversation.');
  expect(await runOf(other.conversationId)).toMatchObject({ buildId: 'v2', behavior: PINNED });

  // Pinned within its run: with v1's worker gone, v2 does not take the conversation's next input.
  await h.stopWorker(v1);
  const second = await h.api.send(conversationId, 'And again?');
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  expect(h.model.requests).toHaveLength(2);
  expect(await runOf(conversationId)).toEqual(firstRun);

  // v1 back: it answers on the run's own version.
  const v1Again = await h.startWorker({ deployment: versionedDeployment(deploymentName, 'v1') });
  expect((await h.api.waitForResult(conversationId, second)).result).toBe('Second answer.');
  return { h, deploymentName, conversationId, firstRun, runOf, v1Again };
}

describe('Worker Versioning on the dev server', () => {
  it('runs two versions side by side: a conversation stays pinned to v1 within its run, a new one starts on v2', async () => {
    await sideBySide(inject('temporalAddress'));
  }, 120_000);
});

describe.skipIf(!existsSync(VERSIONING_CLI))(`Upgrade on continue-as-new (dev server from ${VERSIONING_CLI})`, () => {
  beforeAll(async () => {
    server = await startDevServer({
      ephemeral: true,
      headless: true,
      cliPath: VERSIONING_CLI,
      log: () => undefined,
      // How soon a version no longer current counts its open pinned workflows (default 3 min each).
      dynamicConfig: { 'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '1s', 'matching.wv.VersionDrainageStatusRefreshInterval': '1s' },
    });
  }, 120_000);
  afterAll(async () => server?.stop());

  it('moves a v1 conversation to v2 when it continues as new after its query, and v1 drains', async () => {
    const { h, deploymentName, conversationId, firstRun, runOf, v1Again } = await sideBySide(server!.address);
    // The query over, the run continued as new onto the current version.
    const moved = await eventually(() => runOf(conversationId), (run) => run.runId !== firstRun.runId && run.buildId === 'v2');
    expect(moved.behavior).toBe(PINNED);
    expect((await h.api.status(conversationId)).queryCount).toBe(2);

    // v1 has nothing left to run: stopped for good, the conversation goes on on v2 alone.
    await h.stopWorker(v1Again);
    const third = await h.api.send(conversationId, 'One more?');
    expect((await h.api.waitForResult(conversationId, third)).result).toBe('Third answer.');
    // The carried transcript reached v2's run: the model saw the whole conversation.
    const roles = h.model.requests[3].body.messages.map((message: { role: string }) => message.role);
    expect(roles).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);

    // And v1 drains: no open conversation is pinned to it.
    await eventually(
      () => h.client.workflowService.describeWorkerDeploymentVersion({ namespace: 'default', deploymentVersion: { deploymentName, buildId: 'v1' } }),
      (response) => response.workerDeploymentVersionInfo?.drainageInfo?.status === DRAINED,
      60_000,
    );
  }, 240_000);
});
