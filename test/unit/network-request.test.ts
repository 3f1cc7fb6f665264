/**
 * A sandboxed command's request for a domain not on `sandbox.network.allowedDomains` (issue 29):
 * the proxy asks (once per host and command) only for targets it would otherwise reach — this
 * host's addresses and the Temporal server are refused before anyone is asked — and the
 * conversation's answer is decided by a pure function: allowed after "don't ask again", asked
 * when someone can answer, denied otherwise.
 */
import { describe, expect, it } from 'vitest';
import { canAskForDomains, decideNetworkRequest, networkAllowRule, networkRequestId, networkRequestProblem } from '../../common/network-request';
import { resolveTarget } from '../../activities/sandbox-network';

describe('decideNetworkRequest', () => {
  it('asks when someone can answer, denies when nobody can, allows what the session allowed for good', () => {
    const request = { host: 'registry.npmjs.org' };
    expect(decideNetworkRequest(request, { mode: 'default', canApprove: true, sessionAllow: [] })).toBe('ask');
    expect(decideNetworkRequest(request, { mode: 'acceptEdits', canApprove: true, sessionAllow: [] })).toBe('ask');
    expect(decideNetworkRequest(request, { mode: 'plan', canApprove: true, sessionAllow: [] })).toBe('ask');
    // -p (nobody to answer), dontAsk and bypassPermissions: nobody is asked, and an unlisted domain stays out.
    expect(decideNetworkRequest(request, { mode: 'default', canApprove: false, sessionAllow: [] })).toBe('deny');
    expect(decideNetworkRequest(request, { mode: 'dontAsk', canApprove: true, sessionAllow: [] })).toBe('deny');
    expect(decideNetworkRequest(request, { mode: 'bypassPermissions', canApprove: true, sessionAllow: [] })).toBe('deny');
    // "Yes, and don't ask again for registry.npmjs.org": that host only.
    const sessionAllow = [networkAllowRule('registry.npmjs.org')];
    expect(decideNetworkRequest(request, { mode: 'default', canApprove: true, sessionAllow })).toBe('allow');
    expect(decideNetworkRequest({ host: 'evil.npmjs.org' }, { mode: 'default', canApprove: true, sessionAllow })).toBe('ask');
    expect(decideNetworkRequest({ host: 'evil.npmjs.org' }, { mode: 'default', canApprove: false, sessionAllow })).toBe('deny');
    expect(canAskForDomains('default', true)).toBe(true);
    expect(canAskForDomains('dontAsk', true)).toBe(false);
  });

  it('names each request by call and host, and refuses malformed requests', () => {
    expect(networkRequestId({ toolUseId: 'toolu_1', host: 'example.com' })).toBe('toolu_1:network:example.com');
    expect(networkRequestProblem({ toolUseId: 'toolu_1', host: 'example.com', port: 443 })).toBeUndefined();
    expect(networkRequestProblem('example.com')).toMatch(/takes/);
    expect(networkRequestProblem({ toolUseId: '', host: 'example.com', port: 443 })).toMatch(/toolUseId/);
    expect(networkRequestProblem({ toolUseId: 'toolu_1', host: 'a b', port: 443 })).toMatch(/host/);
    expect(networkRequestProblem({ toolUseId: 'toolu_1', host: 'x)', port: 443 })).toMatch(/host/);
    expect(networkRequestProblem({ toolUseId: 'toolu_1', host: 'example.com', port: 0 })).toMatch(/port/);
  });
});

describe('resolveTarget with a person to ask', () => {
  const asked: string[] = [];
  const answer = (allowed: boolean) => async (host: string, port: number) => {
    asked.push(`${host}:${port}`);
    return allowed;
  };

  it('asks for an unlisted domain, and connects only when allowed', async () => {
    asked.length = 0;
    expect(await resolveTarget('93.184.216.34', 443, [], new Set(), new Set(), answer(true))).toEqual({ address: '93.184.216.34' });
    expect(await resolveTarget('93.184.216.34', 443, [], new Set(), new Set(), answer(false))).toEqual({
      refused: '93.184.216.34 is not in sandbox.network.allowedDomains, and the request to reach it was denied',
    });
    // An ask that fails (the conversation is gone) is a denial.
    const failing = async () => Promise.reject(new Error('workflow closed'));
    expect(await resolveTarget('93.184.216.34', 443, [], new Set(), new Set(), failing)).toMatchObject({ refused: expect.stringMatching(/denied/) });
    expect(asked).toEqual(['93.184.216.34:443', '93.184.216.34:443']);
  });

  it('never asks for a listed domain, this host or the Temporal server', async () => {
    asked.length = 0;
    expect(await resolveTarget('93.184.216.34', 443, ['93.184.216.34'], new Set(), new Set(), answer(false))).toEqual({ address: '93.184.216.34' });
    for (const host of ['127.0.0.1', '[::ffff:7f00:1]', '2130706433', 'localhost', '169.254.169.254']) {
      expect(await resolveTarget(host, 80, [], new Set(), new Set(), answer(true)), host).toMatchObject({
        refused: expect.stringMatching(/an address of this host/),
      });
    }
    expect(await resolveTarget('93.184.216.34', 7233, [], new Set(['93.184.216.34:7233']), new Set(), answer(true))).toMatchObject({
      refused: expect.stringMatching(/Temporal server/),
    });
    // Every port of the Temporal server's host: its Web UI, its HTTP API (listed or not).
    for (const port of [8233, 7243, 443])
      expect(await resolveTarget('93.184.216.34', port, ['*'], new Set(['93.184.216.34:7233']), new Set(), answer(true))).toMatchObject({
        refused: expect.stringMatching(/host of the worker's Temporal server.*any port/),
      });
    // This host's interface address, asked for by name, is the host the person approves exactly.
    expect(await resolveTarget('192.0.2.7', 8080, [], new Set(), new Set(['192.0.2.7']), answer(true))).toEqual({ address: '192.0.2.7' });
    // ... but `*` never reaches it, and a listed wildcard does not ask.
    expect(await resolveTarget('192.0.2.7', 8080, ['*'], new Set(), new Set(['192.0.2.7']), answer(true))).toMatchObject({
      refused: expect.stringMatching(/an address of this host/),
    });
    expect(asked).toEqual(['192.0.2.7:8080']);
  });
});

describe("the worker's Temporal server, wherever its address came from", () => {
  it('is TEMPORAL_ADDRESS (default localhost:7233) and the address the worker connected to (an envconfig profile)', async () => {
    const { setWorkerTemporalAddress, temporalServerEndpoints } = await import('../../activities/sandbox-network');
    expect(await temporalServerEndpoints({})).toEqual(expect.objectContaining({ size: expect.any(Number) }));
    expect([...(await temporalServerEndpoints({ TEMPORAL_ADDRESS: '192.0.2.10:7300' }))]).toEqual(['192.0.2.10:7300']);
    setWorkerTemporalAddress('198.51.100.4:7233');
    try {
      expect([...(await temporalServerEndpoints({ TEMPORAL_ADDRESS: '192.0.2.10:7300' }))].sort()).toEqual(['192.0.2.10:7300', '198.51.100.4:7233']);
    } finally {
      setWorkerTemporalAddress(undefined);
    }
  });
});
