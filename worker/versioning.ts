/**
 * Worker Versioning (Worker Deployments, issue 24 item 5; versioned by default since issue 30). A
 * worker joins the Worker Deployment `DURABLE_AGENT_DEPLOYMENT_NAME` (default `durable-agent`) as
 * version `<deployment>:<build id>`, the build id derived from its workflow bundle's content
 * (worker/workflow-bundles.ts), and its conversations are PINNED: a run stays on the version it
 * started on, so a deploy never replays an old history against new code. A conversation moves to
 * the deployment's current version when it continues as new (workflows/conversation.ts asks for
 * `initialVersioningBehavior: 'AUTO_UPGRADE'` then). Old versions drain as their runs end or move;
 * the worker keeps serving the ones whose bundles it kept (worker/retained-versions.ts).
 * docs/deployment.md, "Upgrades with Worker Versioning", has the design and the procedure.
 */
import type { WorkflowService } from '@temporalio/client';
import { createHash } from 'node:crypto';
import type { WorkerOptions } from '@temporalio/worker';

export const DEFAULT_DEPLOYMENT_NAME = 'durable-agent';

/** Environment variables that version a worker. */
export const WORKER_VERSIONING_VARIABLES = {
  /** Overrides the build id derived from the bundle (e.g. a git commit). */
  buildId: 'DURABLE_AGENT_BUILD_ID',
  deploymentName: 'DURABLE_AGENT_DEPLOYMENT_NAME',
  /** `1`: an unversioned worker (every conversation runs on whatever code polls). */
  unversioned: 'DURABLE_AGENT_UNVERSIONED',
  /** `0`: the worker does not make its version the deployment's current one (an operator does). */
  becomeCurrent: 'DURABLE_AGENT_BECOME_CURRENT',
} as const;

export type WorkerDeployment = NonNullable<WorkerOptions['workerDeploymentOptions']>;

/** How a worker is versioned, read from its environment before anything is bundled or connected. */
export interface VersioningSettings {
  deploymentName: string;
  /** The build id to use instead of the bundle's content hash. */
  buildIdOverride?: string;
  /** Make this version current once it polls (unless a newer version exists). */
  becomeCurrent: boolean;
}

/** A versioning variable with a value the server would refuse. */
export class WorkerVersioningError extends Error {
  override readonly name = 'WorkerVersioningError';
}

/** Names the server accepts in a version `<deployment>:<build id>`: no `.` in the deployment name, no spaces. */
const NAME = /^[A-Za-z0-9_:/@+-][A-Za-z0-9_:/@+.-]{0,254}$/;

const isOn = (value: string | undefined) => ['1', 'true', 'yes'].includes(value?.trim().toLowerCase() ?? '');
const isOff = (value: string | undefined) => ['0', 'false', 'no'].includes(value?.trim().toLowerCase() ?? '');

/** The worker's versioning; undefined when `DURABLE_AGENT_UNVERSIONED=1` (unversioned). */
export function versioningFromEnvironment(env: NodeJS.ProcessEnv = process.env): VersioningSettings | undefined {
  const v = WORKER_VERSIONING_VARIABLES;
  const buildId = env[v.buildId]?.trim() || undefined;
  const deploymentName = env[v.deploymentName]?.trim() || DEFAULT_DEPLOYMENT_NAME;
  if (isOn(env[v.unversioned])) {
    if (buildId !== undefined || env[v.deploymentName]?.trim()) {
      throw new WorkerVersioningError(`${v.unversioned}=1 runs an unversioned worker: unset ${v.buildId} and ${v.deploymentName}, or ${v.unversioned}.`);
    }
    return undefined;
  }
  if (buildId !== undefined && !NAME.test(buildId)) {
    throw new WorkerVersioningError(`${v.buildId} must be 1–255 letters, digits or _:/@+.- (e.g. a git commit), got "${buildId}".`);
  }
  if (!NAME.test(deploymentName) || deploymentName.includes('.') || deploymentName.includes(':')) {
    throw new WorkerVersioningError(`${v.deploymentName} must be 1–255 letters, digits or _/@+- (no "." or ":"), got "${deploymentName}".`);
  }
  return { deploymentName, ...(buildId !== undefined ? { buildIdOverride: buildId } : {}), becomeCurrent: !isOff(env[v.becomeCurrent]) };
}

/** The build id of a workflow bundle: a short SHA-256 of its code, so an unchanged bundle keeps its version. */
export function bundleBuildId(code: string): string {
  return `b${createHash('sha256').update(code).digest('hex').slice(0, 12)}`;
}

/** A pinned worker deployment version (what a versioned worker runs with). */
export function versionedDeployment(deploymentName: string, buildId: string): WorkerDeployment {
  return { version: { deploymentName, buildId }, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' };
}

export interface VersionRef {
  namespace: string;
  deploymentName: string;
  buildId: string;
}

/** What {@link becomeCurrentVersion} did. */
export type BecomeCurrentOutcome = 'made current' | 'already current' | { notCurrent: string };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Makes the version the deployment's current one once its worker polls (the version exists only
 * then: retried until `timeoutMs`). It does not take over from a NEWER version (created after this
 * one): a machine restarted on old code must not roll back the others. A rollback is an operator's
 * `temporal worker deployment set-current-version`.
 */
export async function becomeCurrentVersion(
  service: WorkflowService,
  ref: VersionRef,
  options: { identity: string; timeoutMs?: number } = { identity: 'durable-agent worker' },
): Promise<BecomeCurrentOutcome> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  let lastError = '';
  while (Date.now() < deadline) {
    try {
      const { workerDeploymentInfo: info } = await service.describeWorkerDeployment({ namespace: ref.namespace, deploymentName: ref.deploymentName });
      const summaries = info?.versionSummaries ?? [];
      const mine = summaries.find((summary) => summary.deploymentVersion?.buildId === ref.buildId);
      if (mine) {
        if (info?.routingConfig?.currentDeploymentVersion?.buildId === ref.buildId) return 'already current';
        const created = (summary: (typeof summaries)[number]) => Number(summary.createTime?.seconds ?? 0) * 1e9 + (summary.createTime?.nanos ?? 0);
        const newer = summaries.find((summary) => summary !== mine && created(summary) > created(mine));
        if (newer) return { notCurrent: `a newer version (${newer.deploymentVersion?.buildId}) exists` };
        await service.setWorkerDeploymentCurrentVersion({
          namespace: ref.namespace,
          deploymentName: ref.deploymentName,
          buildId: ref.buildId,
          identity: options.identity,
        });
        return 'made current';
      }
      lastError = 'the version has no poller yet';
    } catch (error) {
      // NotFound (no deployment yet), FailedPrecondition (no pollers yet; task queues the current version has and this one lacks).
      lastError = error instanceof Error ? error.message : String(error);
    }
    await sleep(500);
  }
  return { notCurrent: lastError };
}

/**
 * How many open runs are pinned to the version (Visibility: the search attributes the server's own
 * drainage check queries; servers 1.29 spell a version `<deployment>.<build id>`, later ones `:`).
 */
export async function pinnedOpenRuns(service: WorkflowService, ref: VersionRef): Promise<number> {
  const versions = [`${ref.deploymentName}:${ref.buildId}`, `${ref.deploymentName}.${ref.buildId}`].map((value) => `'${value}'`).join(', ');
  const { count } = await service.countWorkflowExecutions({
    namespace: ref.namespace,
    query: `TemporalWorkerDeploymentVersion IN (${versions}) AND TemporalWorkflowVersioningBehavior = 'Pinned' AND ExecutionStatus = 'Running'`,
  });
  return Number(count ?? 0);
}
