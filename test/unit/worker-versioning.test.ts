/** worker/versioning.ts: versioned by default, the build id from the bundle's content; bad names are refused up front. */
import { describe, expect, it } from 'vitest';
import { WorkerVersioningError, bundleBuildId, versionedDeployment, versioningFromEnvironment } from '../../worker/versioning';

describe('versioningFromEnvironment', () => {
  it('is versioned by default, in deployment durable-agent, with the build id left to the bundle', () => {
    expect(versioningFromEnvironment({})).toEqual({ deploymentName: 'durable-agent', becomeCurrent: true });
    expect(versioningFromEnvironment({ DURABLE_AGENT_BUILD_ID: '  ' })).toEqual({ deploymentName: 'durable-agent', becomeCurrent: true });
  });

  it('takes a build id override, another deployment, and DURABLE_AGENT_BECOME_CURRENT=0', () => {
    expect(
      versioningFromEnvironment({ DURABLE_AGENT_BUILD_ID: 'v1.2.3', DURABLE_AGENT_DEPLOYMENT_NAME: 'agents-eu', DURABLE_AGENT_BECOME_CURRENT: '0' }),
    ).toEqual({
      deploymentName: 'agents-eu',
      buildIdOverride: 'v1.2.3',
      becomeCurrent: false,
    });
  });

  it('is unversioned only when asked, and then refuses a build id or deployment name', () => {
    expect(versioningFromEnvironment({ DURABLE_AGENT_UNVERSIONED: '1' })).toBeUndefined();
    expect(versioningFromEnvironment({ DURABLE_AGENT_UNVERSIONED: '0' })).toBeDefined();
    expect(() => versioningFromEnvironment({ DURABLE_AGENT_UNVERSIONED: 'true', DURABLE_AGENT_BUILD_ID: 'v1' })).toThrow(/DURABLE_AGENT_UNVERSIONED/);
  });

  it('refuses names the server would refuse, naming the variable', () => {
    expect(() => versioningFromEnvironment({ DURABLE_AGENT_BUILD_ID: 'has space' })).toThrow(/DURABLE_AGENT_BUILD_ID/);
    expect(() => versioningFromEnvironment({ DURABLE_AGENT_DEPLOYMENT_NAME: 'a.b' })).toThrow(WorkerVersioningError);
    expect(() => versioningFromEnvironment({ DURABLE_AGENT_DEPLOYMENT_NAME: 'a:b' })).toThrow(/DURABLE_AGENT_DEPLOYMENT_NAME/);
  });
});

describe('bundleBuildId', () => {
  it('is a short hash of the code: the same bundle keeps its id, any change makes a new one', () => {
    const code = 'export function conversationWorkflow() {}';
    expect(bundleBuildId(code)).toMatch(/^b[0-9a-f]{12}$/);
    expect(bundleBuildId(code)).toBe(bundleBuildId(`${code}`));
    expect(bundleBuildId(`// banner\n${code}`)).not.toBe(bundleBuildId(code));
  });

  it('makes a pinned deployment version', () => {
    expect(versionedDeployment('durable-agent', 'b123')).toEqual({
      version: { deploymentName: 'durable-agent', buildId: 'b123' },
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    });
  });
});
