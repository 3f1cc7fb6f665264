/**
 * MCP servers as tools in the conversation (issue 22 items 1–3), end to end: a real dev server, a
 * real worker, the scripted model, and real MCP servers — @modelcontextprotocol/server-everything
 * over stdio (from `.mcp.json`, approved in `.claude/settings.local.json`) and over streamable
 * HTTP, and an SDK McpServer that adds a tool while connected (list_changed). The model is offered
 * `mcp__server__tool` with the server's schema and the servers' instructions; calls and their
 * results (and errors) reach the next request; permission rules on MCP tools; a server that fails
 * to start is a warning in the feed and the conversation answers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationEvent } from '../../workflows/definitions';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { isolateEnvironment } from '../helpers/cli';
import { startDynamicMcpServer } from '../helpers/dynamic-mcp-server';
import { type Harness, createHarness, eventually, expectValidApiOrder } from '../helpers/harness';

const EVERYTHING = path.resolve(__dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');

isolateEnvironment();
let harness: Harness | undefined;
const cleanups: Array<() => Promise<unknown> | void> = [];
beforeEach(async () => {
  // The worker reads ~/.claude.json and ~/.claude/settings.json: an empty home of the test's own.
  process.env.HOME = await mkdtemp(path.join(os.tmpdir(), 'mcp-conversation-home-'));
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The tool_result blocks of a request's last user message. */
function toolResults(request: RecordedRequest): Array<{ tool_use_id: string; content: string; is_error?: boolean }> {
  const last = request.body.messages[request.body.messages.length - 1] as { content: unknown };
  return Array.isArray(last.content) ? ((last.content as Array<{ type: string }>).filter((block) => block.type === 'tool_result') as never) : [];
}
const resultText = (result: { content: unknown }) => (typeof result.content === 'string' ? result.content : JSON.stringify(result.content));
const toolNames = (request: RecordedRequest) => (request.body.tools as Array<{ name: string }>).map((tool) => tool.name);

async function events(h: Harness, conversationId: string): Promise<ConversationEvent[]> {
  return (await h.api.events(conversationId, 0)).events;
}
const warnings = (list: ConversationEvent[]) =>
  list.flatMap((event) =>
    (event.message as { type: string; level?: string; content?: string }).type === 'system' && (event.message as { level?: string }).level === 'warning'
      ? [String((event.message as { content?: string }).content)]
      : [],
  );

async function writeProject(workspace: string, mcpServers: Record<string, unknown>): Promise<void> {
  await writeFile(path.join(workspace, '.mcp.json'), JSON.stringify({ mcpServers }, null, 2));
  await mkdir(path.join(workspace, '.claude'), { recursive: true });
  await writeFile(path.join(workspace, '.claude', 'settings.local.json'), JSON.stringify({ enableAllProjectMcpServers: true }));
}

const stdioEverything = { command: process.execPath, args: [EVERYTHING, 'stdio'] };

describe('MCP tools in a conversation (stdio, .mcp.json)', () => {
  it('offers the tools with their schemas and instructions, runs calls, errors and rules, and goes on past a failed server', async () => {
    harness = await createHarness();
    const h = harness;
    await writeProject(h.workspace, {
      everything: stdioEverything,
      second: stdioEverything,
      broken: { command: 'no-such-mcp-program-xyz' },
    });
    h.model.enqueue(
      {
        content: [
          { type: 'tool_use', id: 'toolu_sum', name: 'mcp__everything__get-sum', input: { a: 2, b: 40 } },
          { type: 'tool_use', id: 'toolu_bad', name: 'mcp__everything__get-sum', input: { a: 'two', b: 40 } },
          { type: 'tool_use', id: 'toolu_denied', name: 'mcp__everything__toggle-simulated-logging', input: {} },
          { type: 'tool_use', id: 'toolu_none', name: 'mcp__everything__no-such-tool', input: {} },
        ],
      },
      { content: [{ type: 'text', text: 'The sum is 42.' }] },
      // Second query: a tool of a server no rule mentions asks.
      { content: [{ type: 'tool_use', id: 'toolu_ask', name: 'mcp__second__echo', input: { message: 'asked first' } }] },
      { content: [{ type: 'text', text: 'Echoed.' }] },
    );
    await h.startWorker();
    const { conversationId, inputUuid } = await h.api.start({
      prompt: 'Add 2 and 40 with the MCP server',
      config: h.config({
        permissions: { mode: 'default', allow: ['mcp__everything'], deny: ['mcp__everything__toggle-simulated-logging'] },
      }),
      taskQueue: h.taskQueue,
    });
    const first = await h.api.waitForResult(conversationId, inputUuid!);
    expect(first.is_error).toBe(false);
    expect(first.result).toBe('The sum is 42.');

    // The request offered the servers' tools with their schemas, after the built-in ones; none of the failed server.
    const request = h.model.requests[0];
    const tools = request.body.tools as Array<{ name: string; input_schema: Record<string, unknown> }>;
    const sum = tools.find((tool) => tool.name === 'mcp__everything__get-sum');
    expect(sum?.input_schema).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] });
    expect(sum?.input_schema).not.toHaveProperty('$schema');
    expect(toolNames(request)).toContain('mcp__second__echo');
    expect(toolNames(request).some((name) => name.startsWith('mcp__broken'))).toBe(false);
    expect(toolNames(request).indexOf('Read')).toBeLessThan(toolNames(request).indexOf('mcp__everything__get-sum'));
    // The instructions: the last system block, after every cache breakpoint (uncached).
    const system = request.body.system as Array<{ text: string; cache_control?: unknown }>;
    const last = system[system.length - 1];
    expect(last.text).toContain('# MCP Server Instructions');
    expect(last.text).toContain('## everything');
    expect(last.cache_control).toBeUndefined();
    expect(system.slice(0, -1).some((block) => block.cache_control)).toBe(true);

    // The results in the next request.
    const results = toolResults(h.model.requests[1]);
    expectValidApiOrder(h.model.requests[1]);
    const byId = new Map(results.map((result) => [result.tool_use_id, result]));
    expect(resultText(byId.get('toolu_sum')!)).toContain('42');
    expect(byId.get('toolu_sum')!.is_error).toBeFalsy();
    expect(byId.get('toolu_bad')!.is_error).toBe(true);
    expect(byId.get('toolu_denied')!.is_error).toBe(true);
    expect(resultText(byId.get('toolu_denied')!)).toContain('denied by the cliArg rule mcp__everything__toggle-simulated-logging');
    expect(byId.get('toolu_none')!.is_error).toBe(true);
    expect(resultText(byId.get('toolu_none')!)).toContain('No such tool available: mcp__everything__no-such-tool');

    // The failed server is a warning in the feed; the status lists every server.
    expect(warnings(await events(h, conversationId)).join('\n')).toMatch(/MCP server "broken" failed/);
    const status = await h.api.status(conversationId);
    expect(status.mcpServers?.join('\n')).toMatch(/everything \(project, stdio\): ✔ connected · \d+ tools/);
    expect(status.mcpServers?.join('\n')).toMatch(/broken \(project, stdio\): ✘ failed/);

    // No rule for `second`: the call waits for a person (default mode), then runs.
    const askUuid = await h.api.send(conversationId, 'Echo with the second server');
    const waiting = await eventually(
      () => h.api.status(conversationId),
      (current) => current.phase === 'awaiting_permission' && (current.pendingPermissions ?? []).some((pending) => pending.toolUseId === 'toolu_ask'),
    );
    expect(waiting.pendingPermissions?.[0]).toMatchObject({ toolName: 'mcp__second__echo' });
    expect(waiting.pendingPermissions?.[0].reason).toContain('MCP server "second"');
    await h.api.decidePermission(conversationId, { toolUseId: 'toolu_ask', behavior: 'allow' });
    const second = await h.api.waitForResult(conversationId, askUuid);
    expect(second.result).toBe('Echoed.');
    expect(resultText(toolResults(h.model.requests[3])[0])).toBe('Echo: asked first');

    // `/mcp` lists the servers again and answers locally (no model call).
    const before = h.model.requests.length;
    const mcpUuid = await h.api.send(conversationId, '/mcp');
    const listed = await h.api.waitForResult(conversationId, mcpUuid);
    expect(listed.result).toMatch(/^MCP servers:/);
    expect(listed.result).toMatch(/second \(project, stdio\): ✔ connected/);
    expect(h.model.requests.length).toBe(before);
  }, 180_000);
});

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => resolve(port));
    });
  });
}

/** server-everything's streamable HTTP transport on a free port; resolves once it listens. */
async function startEverythingHttp(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/listening|running on port/i.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server-everything exited ${code}: ${output}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

describe('MCP tools over streamable HTTP (--mcp-config, --strict-mcp-config)', () => {
  it('calls server-everything over HTTP, and a tool added while connected is offered after list_changed', async () => {
    const everything = await startEverythingHttp();
    cleanups.push(() => void everything.child.kill());
    const dynamic = await startDynamicMcpServer({ instructions: 'Call add-tool to get more tools.' });
    cleanups.push(() => dynamic.close());
    harness = await createHarness();
    const h = harness;
    // A .mcp.json the strict flag leaves out.
    await writeProject(h.workspace, { ignored: stdioEverything });
    h.model.enqueue(
      {
        content: [
          { type: 'tool_use', id: 'toolu_echo', name: 'mcp__web__echo', input: { message: 'over http' } },
          { type: 'tool_use', id: 'toolu_add', name: 'mcp__dynamic__add-tool', input: { name: 'late-tool' } },
          { type: 'tool_use', id: 'toolu_add_forbidden', name: 'mcp__dynamic__add-tool', input: { name: 'forbidden-tool' } },
        ],
      },
      {
        content: [
          { type: 'tool_use', id: 'toolu_late', name: 'mcp__dynamic__late-tool', input: {} },
          { type: 'tool_use', id: 'toolu_forbidden', name: 'mcp__dynamic__forbidden-tool', input: {} },
        ],
      },
      { content: [{ type: 'text', text: 'Done.' }] },
    );
    await h.startWorker();
    const inline = JSON.stringify({ mcpServers: { web: { type: 'http', url: everything.url }, dynamic: { type: 'http', url: dynamic.url } } });
    const { conversationId, inputUuid } = await h.api.start({
      prompt: 'Use the web servers',
      config: h.config({
        mcpConfig: [inline],
        strictMcpConfig: true,
        permissions: { mode: 'default', allow: ['mcp__web', 'mcp__dynamic'], deny: ['mcp__dynamic__forbidden-tool'], canApprove: false },
      }),
      taskQueue: h.taskQueue,
    });
    const result = await h.api.waitForResult(conversationId, inputUuid!);
    expect(result.result).toBe('Done.');

    const [first, second, third] = h.model.requests;
    expect(h.model.requests).toHaveLength(3);
    expect(toolNames(first)).toEqual(expect.arrayContaining(['mcp__web__echo', 'mcp__dynamic__add-tool']));
    expect(toolNames(first).some((name) => name.startsWith('mcp__ignored'))).toBe(false);
    expect(toolNames(first)).not.toContain('mcp__dynamic__late-tool');
    const system = first.body.system as Array<{ text: string }>;
    expect(system[system.length - 1].text).toContain('Call add-tool to get more tools.');
    const results = new Map(toolResults(second).map((entry) => [entry.tool_use_id, entry]));
    expect(resultText(results.get('toolu_echo')!)).toBe('Echo: over http');
    expect(resultText(results.get('toolu_add')!)).toBe('added late-tool');
    // The new tool: called by name (the servers are listed again: list_changed reached the worker by
    // then, whether or not the add-tool call's own answer counted it), and offered from then on.
    const late = new Map(toolResults(third).map((entry) => [entry.tool_use_id, entry]));
    expect(resultText(late.get('toolu_late')!)).toBe('late-tool ran');
    expect(late.get('toolu_late')!.is_error).toBeFalsy();
    // A tool listed only after its call was checked is checked again, with its server's rules: denied, not run.
    expect(late.get('toolu_forbidden')!.is_error).toBe(true);
    expect(resultText(late.get('toolu_forbidden')!)).toContain('denied by the cliArg rule mcp__dynamic__forbidden-tool');
    expect(toolNames(third)).toContain('mcp__dynamic__late-tool');
    const feed = (await events(h, conversationId)).map((event) => String((event.message as { content?: unknown }).content ?? ''));
    expect(feed.join('\n')).toContain('MCP tools changed: added mcp__dynamic__late-tool');
  }, 180_000);
});

describe('approving a project server', () => {
  it('lists it "needs approval" with how to approve; approved in settings.local.json, /mcp connects it and the next request offers its tools', async () => {
    harness = await createHarness();
    const h = harness;
    await writeFile(path.join(h.workspace, '.mcp.json'), JSON.stringify({ mcpServers: { everything: stdioEverything } }));
    h.model.enqueue({ content: [{ type: 'text', text: 'No MCP tools yet.' }] }, { content: [{ type: 'text', text: 'Now I have them.' }] });
    await h.startWorker();
    const { conversationId, inputUuid } = await h.api.start({ prompt: 'What tools do you have?', config: h.config(), taskQueue: h.taskQueue });
    await h.api.waitForResult(conversationId, inputUuid!);
    expect(toolNames(h.model.requests[0]).some((name) => name.startsWith('mcp__'))).toBe(false);
    expect(warnings(await events(h, conversationId)).join('\n')).toContain(
      'MCP server "everything" (project) needs approval: approve it with "enableAllProjectMcpServers": true or "enabledMcpjsonServers": ["everything"] in .claude/settings.local.json',
    );
    const before = await h.api.waitForResult(conversationId, await h.api.send(conversationId, '/mcp'));
    expect(before.result).toContain('everything (project, stdio): △ needs approval');

    await mkdir(path.join(h.workspace, '.claude'), { recursive: true });
    await writeFile(path.join(h.workspace, '.claude', 'settings.local.json'), JSON.stringify({ enabledMcpjsonServers: ['everything'] }));
    const after = await h.api.waitForResult(conversationId, await h.api.send(conversationId, '/mcp'));
    expect(after.result).toMatch(/everything \(project, stdio\): ✔ connected · \d+ tools/);
    const next = await h.api.waitForResult(conversationId, await h.api.send(conversationId, 'And now?'));
    expect(next.result).toBe('Now I have them.');
    expect(toolNames(h.model.requests[1])).toContain('mcp__everything__echo');
  }, 120_000);
});
