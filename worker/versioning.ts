/**
 * Worker Versioning (Worker Deployments, issue 24 item 5). A worker started with a build id joins
 * the Worker Deployment `DURABLE_AGENT_DEPLOYMENT_NAME` (default `durable-agent`) as version
 * `<deployment>.<build id>`, and its conversations are PINNED: a run stays on the version it
 * started on, so a deploy never replays an old history against new code. A conversation moves to
 * the deployment's current version when it continues as new (workflows/conversation.ts asks for
 * `initialVersioningBehavior: 'AUTO_UPGRADE'` then), and old versions drain as their runs end or
 * continue. Without a build id the worker is unversioned, as before (every conversation runs on
 * whatever code polls, and `patched()` carries every change). docs/deployment.md, "Upgrades with
 * Worker Versioning", has the procedure.
 */
import type { WorkerOptions } from '@temporalio/worker';

export const DEFAULT_DEPLOYMENT_NAME = 'durable-agent';

/** Environment variables that version a worker. */
export const WORKER_VERSIONING_VARIABLES = {
  buildId: 'DURABLE_AGENT_BUILD_ID',
  deploymentName: 'DURABLE_AGENT_DEPLOYMENT_NAME',
} as const;

export type WorkerDeployment = NonNullable<WorkerOptions['workerDeploymentOptions']>;

/** A versioning variable with a value the server would refuse. */
export class WorkerVersioningError extends Error {
  override readonly name = 'WorkerVersioningError';
}

/** Names the server accepts in a version's canonical form `<deployment>.<build id>`: no `.` in the deployment name, no spaces. */
const NAME = /^[A-Za-z0-9_:/@+-][A-Za-z0-9_:/@+.-]{0,254}$/;

/** The worker's deployment version, PINNED by default; undefined when no build id is set (unversioned). */
export function workerDeploymentFromEnvironment(env: NodeJS.ProcessEnv = process.env): WorkerDeployment | undefined {
  const buildId = env[WORKER_VERSIONING_VARIABLES.buildId]?.trim();
  const deploymentName = env[WORKER_VERSIONING_VARIABLES.deploymentName]?.trim() || DEFAULT_DEPLOYMENT_NAME;
  if (buildId === undefined || buildId === '') {
    if (env[WORKER_VERSIONING_VARIABLES.deploymentName]?.trim()) {
      throw new WorkerVersioningError(
        `${WORKER_VERSIONING_VARIABLES.deploymentName} is set but ${WORKER_VERSIONING_VARIABLES.buildId} is not: a versioned worker needs both (or leave both unset for an unversioned worker).`,
      );
    }
    return undefined;
  }
  if (!NAME.test(buildId)) {
    throw new WorkerVersioningError(`${WORKER_VERSIONING_VARIABLES.buildId} must be 1–255 letters, digits or _:/@+.- (e.g. a git commit), got "${buildId}".`);
  }
  if (!NAME.test(deploymentName) || deploymentName.includes('.')) {
    throw new WorkerVersioningError(
      `${WORKER_VERSIONING_VARIABLES.deploymentName} must be 1–255 letters, digits or _:/@+- (no "."), got "${deploymentName}".`,
    );
  }
  return versionedDeployment(deploymentName, buildId);
}

/** A pinned worker deployment version (what a versioned worker runs with). */
export function versionedDeployment(deploymentName: string, buildId: string): WorkerDeployment {
  return { version: { deploymentName, buildId }, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' };
}
