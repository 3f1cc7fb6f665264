/**
 * WebFetch (issue 33) through a real conversation workflow, a real worker and real local HTTP
 * servers, with the strict scripted model server answering both the conversation and WebFetch's
 * small-model read of the page: a page read with its prompt (HTML to Markdown, the model's answer
 * as the result), a redirect to another host reported and not followed, a domain a deny rule
 * names refused before anything is fetched, and the worker's own addresses (loopback, cloud
 * metadata) refused unless the user's settings open the host.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clearWebFetchCache } from '../../activities/tools/web-fetch';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness } from '../helpers/harness';

isolateEnvironment();
let harness: Harness | undefined;
let server: http.Server | undefined;
const hits: string[] = [];

const PAGE = `<!doctype html><html><head><title>Durable pages</title><style>body{}</style></head>
<body><h1>Durable pages</h1><script>window.secret = "not for the model";</script>
<p>Workflows <b>survive</b> crashes.</p><ul><li>one</li><li>two</li></ul></body></html>`;

async function startPages(): Promise<number> {
  server = http.createServer((request, response) => {
    hits.push(request.url ?? '');
    const port = (server!.address() as AddressInfo).port;
    if (request.url === '/page') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(PAGE);
    } else if (request.url === '/same-host') {
      response.writeHead(301, { location: '/page' });
      response.end();
    } else if (request.url === '/elsewhere') {
      response.writeHead(302, { location: `http://localhost:${port}/page` });
      response.end();
    } else {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not here');
    }
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A home whose ~/.claude/settings.json holds `settings` (the worker reads the user's WebFetch settings there). */
async function homeWith(settings?: object): Promise<void> {
  process.env.HOME = await mkdtemp(path.join(os.tmpdir(), 'web-fetch-home-'));
  if (settings) {
    await mkdir(path.join(process.env.HOME, '.claude'));
    await writeFile(path.join(process.env.HOME, '.claude', 'settings.json'), JSON.stringify(settings));
  }
}

function toolResults(request: RecordedRequest): Array<{ tool_use_id: string; content: unknown; is_error?: boolean }> {
  const last = request.body.messages[request.body.messages.length - 1] as { content: unknown };
  return Array.isArray(last.content) ? ((last.content as Array<{ type: string }>).filter((block) => block.type === 'tool_result') as never) : [];
}
const text = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content));

beforeEach(() => {
  hits.length = 0;
  clearWebFetchCache();
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

describe('WebFetch', () => {
  it('reads a page with its prompt (Markdown to the small model), follows a same-host redirect, reports one to another host, and a deny rule refuses a domain', async () => {
    const port = await startPages();
    // By port: the test's Temporal server is on 127.0.0.1 too, and its host's other ports stay closed.
    await homeWith({ webFetch: { allowedPrivateHosts: [`127.0.0.1:${port}`] } });
    harness = await createHarness();
    const h = harness;
    const base = `http://127.0.0.1:${port}`;
    h.model.enqueue(
      {
        content: [
          { type: 'tool_use', id: 'toolu_page', name: 'WebFetch', input: { url: `${base}/same-host`, prompt: 'What survives?' } },
          { type: 'tool_use', id: 'toolu_away', name: 'WebFetch', input: { url: `${base}/elsewhere`, prompt: 'What survives?' } },
          { type: 'tool_use', id: 'toolu_denied', name: 'WebFetch', input: { url: 'https://denied.example/x', prompt: 'Anything?' } },
        ],
      },
      // The small model's read of the page (the one call without tools).
      { content: [{ type: 'text', text: 'Workflows survive crashes.' }] },
      { content: [{ type: 'text', text: 'Done.' }] },
    );
    await h.startWorker();
    const { conversationId, inputUuid } = await h.api.start({
      prompt: 'Read the page',
      config: h.config({ permissions: { mode: 'default', allow: [`WebFetch(domain:127.0.0.1)`], deny: ['WebFetch(domain:denied.example)'] } }),
      taskQueue: h.taskQueue,
    });
    const result = await h.api.waitForResult(conversationId, inputUuid!);
    expect(result.subtype).toBe('success');

    const read = h.model.requests.find((request) => !request.body.tools)!;
    expect(read.body.model).toMatch(/^claude-haiku-4-5/);
    const asked = text(read.body.messages[0].content);
    expect(asked).toContain('# Durable pages');
    expect(asked).toContain('Workflows **survive** crashes.');
    expect(asked).toContain('What survives?');
    expect(asked).not.toContain('not for the model');

    const results = Object.fromEntries(toolResults(h.model.requests.at(-1)!).map((block) => [block.tool_use_id, block]));
    expect(results.toolu_page.is_error).toBeFalsy();
    expect(text(results.toolu_page.content)).toMatch(/^Received \d+ bytes \(200 OK\) from http:\/\/127\.0\.0\.1:\d+\/page\n\nWorkflows survive crashes\./);
    expect(results.toolu_away.is_error).toBeFalsy();
    expect(text(results.toolu_away.content)).toContain(`REDIRECT DETECTED: ${base}/elsewhere redirects to a different host (302).`);
    expect(text(results.toolu_away.content)).toContain(`Redirect URL: http://localhost:${port}/page`);
    expect(results.toolu_denied.is_error).toBe(true);
    expect(text(results.toolu_denied.content)).toContain('denied by the cliArg rule WebFetch(domain:denied.example)');
    // The redirect to another host was not followed: /page was fetched once, through /same-host.
    expect(hits.sort()).toEqual(['/elsewhere', '/page', '/same-host']);
  });

  it("refuses the worker's own addresses (loopback, cloud metadata) unless the user's settings open the host", async () => {
    const port = await startPages();
    await homeWith(); // no WebFetch settings
    harness = await createHarness();
    const h = harness;
    h.model.enqueue(
      {
        content: [
          { type: 'tool_use', id: 'toolu_loop', name: 'WebFetch', input: { url: `http://127.0.0.1:${port}/page`, prompt: 'Title?' } },
          { type: 'tool_use', id: 'toolu_meta', name: 'WebFetch', input: { url: 'http://169.254.169.254/latest/meta-data/', prompt: 'Keys?' } },
          { type: 'tool_use', id: 'toolu_mapped', name: 'WebFetch', input: { url: `http://[::ffff:127.0.0.1]:${port}/page`, prompt: 'Title?' } },
        ],
      },
      { content: [{ type: 'text', text: 'Refused, as expected.' }] },
    );
    await h.startWorker();
    const { conversationId, inputUuid } = await h.api.start({
      prompt: 'Fetch the local pages',
      config: h.config({ permissions: { mode: 'default', allow: ['WebFetch'] } }),
      taskQueue: h.taskQueue,
    });
    await h.api.waitForResult(conversationId, inputUuid!);
    const results = toolResults(h.model.requests.at(-1)!);
    expect(results).toHaveLength(3);
    for (const block of results) {
      expect(block.is_error, block.tool_use_id).toBe(true);
      expect(text(block.content)).toMatch(/an address of the worker's own network/);
    }
    expect(text(results[1].content)).toContain('169.254.169.254');
    expect(hits).toEqual([]);
    expect(h.model.requests).toHaveLength(2); // no small-model read of a page never fetched
  });

  it("keeps the Temporal server's host closed when the user opens it whole: its gRPC port and its other ports (Web UI, HTTP API)", async () => {
    const port = await startPages();
    await homeWith({ webFetch: { allowedPrivateHosts: ['127.0.0.1'] } });
    harness = await createHarness();
    const h = harness;
    const grpcPort = h.address.split(':').at(-1);
    h.model.enqueue(
      {
        content: [
          { type: 'tool_use', id: 'toolu_grpc', name: 'WebFetch', input: { url: `http://127.0.0.1:${grpcPort}/`, prompt: 'Anything?' } },
          { type: 'tool_use', id: 'toolu_other', name: 'WebFetch', input: { url: `http://127.0.0.1:${port}/page`, prompt: 'Title?' } },
        ],
      },
      { content: [{ type: 'text', text: 'Both refused.' }] },
    );
    await h.startWorker();
    const { conversationId, inputUuid } = await h.api.start({
      prompt: 'Fetch the server',
      config: h.config({ permissions: { mode: 'default', allow: ['WebFetch'] } }),
      taskQueue: h.taskQueue,
    });
    await h.api.waitForResult(conversationId, inputUuid!);
    const results = toolResults(h.model.requests.at(-1)!);
    expect(text(results[0].content)).toContain(`127.0.0.1:${grpcPort} is the worker's Temporal server`);
    expect(text(results[1].content)).toContain(`"127.0.0.1:${port}"`); // the exact host:port that would open it
    expect(hits).toEqual([]);
  });
});
