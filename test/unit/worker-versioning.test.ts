/** worker/versioning.ts: the environment's build id makes a pinned, versioned worker; bad names are refused up front. */
import { describe, expect, it } from 'vitest';
import { WorkerVersioningError, workerDeploymentFromEnvironment } from '../../worker/versioning';

describe('workerDeploymentFromEnvironment', () => {
  it('is unversioned without a build id', () => {
    expect(workerDeploymentFromEnvironment({})).toBeUndefined();
    expect(workerDeploymentFromEnvironment({ DURABLE_AGENT_BUILD_ID: '  ' })).toBeUndefined();
  });

  it('pins conversations to <deployment>.<build id>, deployment durable-agent by default', () => {
    expect(workerDeploymentFromEnvironment({ DURABLE_AGENT_BUILD_ID: '3c7c029' })).toEqual({
      version: { deploymentName: 'durable-agent', buildId: '3c7c029' },
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    });
    expect(workerDeploymentFromEnvironment({ DURABLE_AGENT_BUILD_ID: 'v1.2.3', DURABLE_AGENT_DEPLOYMENT_NAME: 'agents-eu' })?.version).toEqual({
      deploymentName: 'agents-eu',
      buildId: 'v1.2.3',
    });
  });

  it('refuses names the server would refuse, naming the variable', () => {
    expect(() => workerDeploymentFromEnvironment({ DURABLE_AGENT_BUILD_ID: 'has space' })).toThrow(/DURABLE_AGENT_BUILD_ID/);
    expect(() => workerDeploymentFromEnvironment({ DURABLE_AGENT_BUILD_ID: 'v1', DURABLE_AGENT_DEPLOYMENT_NAME: 'a.b' })).toThrow(
      WorkerVersioningError,
    );
    // A deployment name alone would silently leave the worker unversioned.
    expect(() => workerDeploymentFromEnvironment({ DURABLE_AGENT_DEPLOYMENT_NAME: 'agents' })).toThrow(/DURABLE_AGENT_BUILD_ID is not/);
  });
});
