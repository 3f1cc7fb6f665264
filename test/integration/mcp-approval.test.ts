/**
 * Approving `.mcp.json` servers from the conversation (issue 22: "or a prompt in chat"): the
 * `approveMcpServers` update saves the choice in the workspace's `.claude/settings.local.json`
 * (merged with what is there), lists the servers again and answers with their states; the next
 * model call offers an approved server's tools and a call works. A rejection lands in
 * `disabledMcpjsonServers`; unknown names and servers not waiting are refused by the validator.
 * Real dev server, real worker, @modelcontextprotocol/server-everything over stdio.
 */
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import type { McpApprovalOutcome } from '../../workflows/extensions/mcp-state';
import { cli, isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness } from '../helpers/harness';

const EVERYTHING = path.resolve(__dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const stdioEverything = { command: process.execPath, args: [EVERYTHING, 'stdio'] };

isolateEnvironment();
let harness: Harness | undefined;
beforeEach(async () => {
  process.env.HOME = await mkdtemp(path.join(os.tmpdir(), 'mcp-approval-home-'));
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** The validator's words: the client's WorkflowUpdateFailedError carries them as its cause. */
const refusal = (update: Promise<unknown>) =>
  update.then(
    () => 'accepted',
    (error: Error & { cause?: Error }) => error.cause?.message ?? error.message,
  );
const toolNames = (request: RecordedRequest) => (request.body.tools as Array<{ name: string }>).map((tool) => tool.name);
function toolResults(request: RecordedRequest): Array<{ tool_use_id: string; content: unknown; is_error?: boolean }> {
  const last = request.body.messages[request.body.messages.length - 1] as { content: unknown };
  return Array.isArray(last.content) ? ((last.content as Array<{ type: string }>).filter((block) => block.type === 'tool_result') as never) : [];
}

describe('approving .mcp.json servers with the approveMcpServers update', () => {
  it('approve: saved in settings.local.json (merged), tools offered and called; reject: disabled; bad names refused', async () => {
    harness = await createHarness();
    const h = harness;
    await writeFile(
      path.join(h.workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { everything: stdioEverything, other: stdioEverything, third: stdioEverything } }),
    );
    // What the local settings already hold is kept.
    await mkdir(path.join(h.workspace, '.claude'), { recursive: true });
    await writeFile(
      path.join(h.workspace, '.claude', 'settings.local.json'),
      JSON.stringify({ permissions: { allow: ['mcp__everything'] }, disabledMcpjsonServers: ['third'] }),
    );
    h.model.enqueue(
      { content: [{ type: 'text', text: 'No MCP tools yet.' }] },
      { content: [{ type: 'tool_use', id: 'toolu_sum', name: 'mcp__everything__get-sum', input: { a: 2, b: 40 } }] },
      { content: [{ type: 'text', text: 'The sum is 42.' }] },
    );
    await h.startWorker();
    const { conversationId, inputUuid } = await h.api.start({
      prompt: 'What tools do you have?',
      config: h.config({ permissions: { mode: 'default' } }),
      taskQueue: h.taskQueue,
    });
    await h.api.waitForResult(conversationId, inputUuid!);
    expect(toolNames(h.model.requests[0]).some((name) => name.startsWith('mcp__'))).toBe(false);
    const pending = await h.api.status(conversationId);
    expect(pending.mcpNeedsApproval).toEqual(['everything', 'other']);

    // The validator: unknown names, a server not waiting (rejected in settings), a bad decision.
    expect(await refusal(h.api.approveMcpServers(conversationId, { servers: ['nope'], decision: 'approve' }))).toMatch(
      /No MCP server "nope" in this conversation/,
    );
    expect(await refusal(h.api.approveMcpServers(conversationId, { servers: ['third'], decision: 'approve' }))).toMatch(
      /"third" is not waiting for approval \(rejected in disabledMcpjsonServers\)/,
    );
    expect(await refusal(h.api.approveMcpServers(conversationId, { servers: ['everything'], decision: 'maybe' as never }))).toMatch(
      /decision must be one of approve, approve-all, reject/,
    );
    expect(await refusal(h.api.approveMcpServers(conversationId, { servers: [], decision: 'approve' }))).toMatch(/non-empty list/);

    const approved = await h.api.approveMcpServers(conversationId, { servers: ['everything'], decision: 'approve' });
    expect(approved.file).toBe(path.join(h.workspace, '.claude', 'settings.local.json'));
    expect(approved.states.find((server) => server.name === 'everything')).toMatchObject({ state: 'connected' });
    expect(approved.states.find((server) => server.name === 'everything')!.tools).toBeGreaterThan(0);
    expect(approved.states.find((server) => server.name === 'other')).toMatchObject({ state: 'needs-approval' });
    expect(approved.lines.join('\n')).toMatch(/everything \(project, stdio\): ✔ connected/);
    expect(JSON.parse(await readFile(approved.file, 'utf8'))).toEqual({
      permissions: { allow: ['mcp__everything'] },
      disabledMcpjsonServers: ['third'],
      enabledMcpjsonServers: ['everything'],
    });
    // The Temporal UI's current details show the servers (drawn again after the listing).
    const metadata = (await h.client.workflow.getHandle(conversationId).query('__temporal_workflow_metadata')) as { currentDetails?: string };
    expect(metadata.currentDetails).toMatch(/\*\*MCP servers:\*\* everything: connected \(\d+ tools\) · other: needs approval · third: disabled/);
    // Approving it again is refused: it no longer waits.
    expect(await refusal(h.api.approveMcpServers(conversationId, { servers: ['everything'], decision: 'approve' }))).toMatch(
      /"everything" is not waiting for approval \(already approved\)/,
    );

    // The next model call offers the tools, and a call runs on the server (allowed by the local settings' rule).
    const ask = await h.api.send(conversationId, 'Add 2 and 40');
    const result = await h.api.waitForResult(conversationId, ask);
    expect(result.result).toBe('The sum is 42.');
    expect(toolNames(h.model.requests[1])).toContain('mcp__everything__get-sum');
    expect(toolNames(h.model.requests[1]).some((name) => name.startsWith('mcp__other__'))).toBe(false);
    expect(JSON.stringify(toolResults(h.model.requests[2])[0].content)).toContain('42');

    // Reject: saved in disabledMcpjsonServers; the server is disabled and nothing waits any more.
    // From the command line this time: `durable-agent mcp reject <id> other`.
    process.env.TEMPORAL_ADDRESS = h.address;
    const refused = await cli('mcp', 'approve', conversationId, 'nope');
    expect(refused).toMatchObject({ code: 1, err: expect.stringContaining('mcp approve: No MCP server "nope" in this conversation') });
    const cliReject = await cli('mcp', 'reject', '--json', conversationId, 'other');
    expect(cliReject.code).toBe(0);
    const rejected = JSON.parse(cliReject.out) as McpApprovalOutcome;
    expect(rejected.states.find((server) => server.name === 'other')).toMatchObject({ state: 'disabled', tools: 0 });
    expect(JSON.parse(await readFile(rejected.file, 'utf8'))).toMatchObject({
      enabledMcpjsonServers: ['everything'],
      disabledMcpjsonServers: ['third', 'other'],
    });
    expect((await h.api.status(conversationId)).mcpNeedsApproval).toBeUndefined();
    expect((await cli('mcp', 'list', conversationId)).out).toMatch(/other \(project, stdio\): .*disabled/);
    // The shared settings.json was never written.
    await expect(readFile(path.join(h.workspace, '.claude', 'settings.json'), 'utf8')).rejects.toThrow(/ENOENT/);
  }, 180_000);
});
