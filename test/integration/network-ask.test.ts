/**
 * A new domain asks (issue 29, Build 1): a sandboxed command that reaches for a domain
 * `sandbox.network.allowedDomains` does not list waits while the conversation asks the person,
 * as Claude Code's "Network request outside of sandbox" prompt — real worker, real bubblewrap, a
 * real HTTP server on this host's external address, curl through the sandbox's proxy. Approved
 * with "don't ask again", the next command reaches it without asking; with nobody to answer
 * (`canApprove: false`, as `-p`) the command has no network, and the model is told why.
 */
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NETWORK_REQUEST_TOOL, networkRequestId } from '../../common/network-request';
import { type Harness, createHarness, eventually } from '../helpers/harness';
import { resultsById } from '../helpers/tool-results';

/** A non-loopback IPv4 address of this host (the sandbox never reaches loopback), if it has one. */
const externalAddress = Object.values(os.networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;

let server: http.Server;
let port = 0;
let harness: Harness | undefined;
const served: string[] = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    served.push(request.url ?? '');
    response.end(`hello from ${request.url}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const curl = (pathname: string) => `curl -sS --max-time 30 http://${externalAddress}:${port}${pathname}`;

describe.skipIf(!externalAddress)('a domain not on the allow-list asks', () => {
  it('waits for the person; "always" lets the next command through without asking', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_net_1', name: 'Bash', input: { command: curl('/first') } }] },
        { content: [{ type: 'text', text: 'Fetched.' }] },
        { content: [{ type: 'tool_use', id: 'toolu_net_2', name: 'Bash', input: { command: curl('/second') } }] },
        { content: [{ type: 'text', text: 'Fetched again.' }] },
      ],
    });
    const h = harness;
    await h.startWorker();
    const started = await h.api.start({ prompt: 'fetch it', config: h.config({ permissions: { allow: ['Bash(curl:*)'] } }), taskQueue: h.taskQueue });
    const id = started.conversationId;
    const requestId = networkRequestId({ toolUseId: 'toolu_net_1', host: externalAddress! });

    const waiting = await eventually(
      () => h.api.status(id),
      (status) => status.phase === 'awaiting_permission' && (status.pendingPermissions ?? []).some((pending) => pending.toolUseId === requestId),
    );
    expect(waiting.pendingPermissions).toEqual([
      {
        toolUseId: requestId,
        toolName: NETWORK_REQUEST_TOOL,
        input: { host: externalAddress, port },
        since: expect.any(Number),
        reason: `Network request outside of sandbox: ${externalAddress}:${port} is not in sandbox.network.allowedDomains`,
      },
    ]);
    // The command is held at the proxy meanwhile: nothing reached the server.
    expect(served).toEqual([]);

    const decided = await h.api.decidePermission(id, { toolUseId: requestId, behavior: 'allow', remember: true });
    expect(decided).toMatchObject({ behavior: 'allow', decidedBy: 'user', addedRule: `${NETWORK_REQUEST_TOOL}(domain:${externalAddress})` });
    const first = await h.api.waitForResult(id, started.inputUuid!);
    expect(first.result).toBe('Fetched.');
    expect(resultsById(h.model.requests).get('toolu_net_1')).toEqual({ content: 'hello from /first' });

    // Remembered for the session: no request this time.
    const second = await h.api.send(id, 'again');
    expect((await h.api.waitForResult(id, second)).result).toBe('Fetched again.');
    expect(resultsById(h.model.requests).get('toolu_net_2')).toEqual({ content: 'hello from /second' });
    expect(served).toEqual(['/first', '/second']);
  }, 120_000);

  it('a person who says no: the command is refused the connection, and the model is told', async () => {
    served.length = 0;
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_net_4', name: 'Bash', input: { command: curl('/no') } }] },
        { content: [{ type: 'text', text: 'Refused.' }] },
      ],
    });
    const h = harness;
    await h.startWorker();
    const started = await h.api.start({ prompt: 'fetch it', config: h.config({ permissions: { allow: ['Bash(curl:*)'] } }), taskQueue: h.taskQueue });
    const requestId = networkRequestId({ toolUseId: 'toolu_net_4', host: externalAddress! });
    await eventually(
      () => h.api.status(started.conversationId),
      (status) => (status.pendingPermissions ?? []).some((pending) => pending.toolUseId === requestId),
    );
    await h.api.decidePermission(started.conversationId, { toolUseId: requestId, behavior: 'deny' });
    const result = await h.api.waitForResult(started.conversationId, started.inputUuid!);
    expect(result.result).toBe('Refused.');
    expect(result.permission_denials).toEqual([{ tool_name: NETWORK_REQUEST_TOOL, tool_use_id: requestId, tool_input: { host: externalAddress, port } }]);
    const text = resultsById(h.model.requests).get('toolu_net_4')!.content;
    expect(text).toContain(
      `network requests blocked: ${externalAddress}:${port} (${externalAddress} is not in sandbox.network.allowedDomains, and the request to reach it was denied)`,
    );
    expect(served).toEqual([]);
  }, 120_000);

  it('with nobody to answer (as -p), the request is denied and the model is told why', async () => {
    served.length = 0;
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_net_3', name: 'Bash', input: { command: curl('/denied') } }] },
        { content: [{ type: 'text', text: 'Could not fetch.' }] },
      ],
    });
    const h = harness;
    await h.startWorker();
    const started = await h.api.start({
      prompt: 'fetch it',
      config: h.config({ permissions: { allow: ['Bash(curl:*)'], canApprove: false } }),
      taskQueue: h.taskQueue,
    });
    expect((await h.api.waitForResult(started.conversationId, started.inputUuid!)).result).toBe('Could not fetch.');
    const result = resultsById(h.model.requests).get('toolu_net_3')!;
    expect(result.is_error).toBe(true);
    // Nobody to ask: no proxy at all, the command has no network.
    expect(result.content).toContain('[sandbox: commands run with no network');
    expect(served).toEqual([]);
  }, 120_000);
});
