/**
 * At most once in the conversation (issue 22 §2): the worker running an MCP call is SIGKILLed
 * mid-call. The conversation runs on real worker processes (`worker/main.ts`) against the dev
 * server; the MCP server is a real stdio server (an SDK McpServer from `.mcp.json`) whose tool
 * appends a line to a file, then waits. The next worker retries the activity, which reports the
 * call "may have run" instead of calling again: the model is told once, and the file has one line.
 */
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { isolateEnvironment } from '../helpers/cli';
import { type Harness, REPO_ROOT, createHarness, eventually } from '../helpers/harness';

const SDK = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/cjs');

/** A stdio MCP server whose `record-write` (not read-only) appends a line to RECORD_FILE, then waits WAIT_SECONDS. */
const SERVER_SCRIPT = `
const { McpServer } = require(${JSON.stringify(`${SDK}/server/mcp.js`)});
const { StdioServerTransport } = require(${JSON.stringify(`${SDK}/server/stdio.js`)});
const { appendFileSync } = require('node:fs');
const server = new McpServer({ name: 'recorder', version: '1.0.0' });
server.registerTool('record-write', { description: 'appends a line, then waits', annotations: { readOnlyHint: false } }, async () => {
  appendFileSync(process.env.RECORD_FILE, 'record-write\\n');
  // unref: when the client goes away (stdin closes) the process ends instead of waiting.
  await new Promise((resolve) => setTimeout(resolve, Number(process.env.WAIT_SECONDS) * 1000).unref());
  return { content: [{ type: 'text', text: 'record-write finished' }] };
});
server.connect(new StdioServerTransport());
`;

isolateEnvironment();
let harness: Harness | undefined;
beforeEach(async () => {
  process.env.HOME = await mkdtemp(path.join(os.tmpdir(), 'mcp-kill-home-'));
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function toolResults(request: RecordedRequest): Array<{ tool_use_id: string; content: string; is_error?: boolean }> {
  const last = request.body.messages[request.body.messages.length - 1] as { content: unknown };
  return Array.isArray(last.content) ? ((last.content as Array<{ type: string }>).filter((block) => block.type === 'tool_result') as never) : [];
}

describe('an MCP call whose worker is SIGKILLed', () => {
  it('is reported "may have run" once and not called again', async () => {
    harness = await createHarness();
    const h = harness;
    // A project's stdio server runs in the Bash sandbox: the state directory is hidden and /tmp is private there, so the
    // script and the record live in the workspace (writable inside).
    const script = path.join(h.workspace, 'recorder.cjs');
    const record = path.join(h.workspace, 'calls.txt');
    await writeFile(script, SERVER_SCRIPT);
    await writeFile(record, '');
    await writeFile(
      path.join(h.workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { recorder: { command: process.execPath, args: [script], env: { RECORD_FILE: record, WAIT_SECONDS: '60' } } } }),
    );
    await mkdir(path.join(h.workspace, '.claude'), { recursive: true });
    await writeFile(path.join(h.workspace, '.claude', 'settings.local.json'), JSON.stringify({ enabledMcpjsonServers: ['recorder'] }));
    h.model.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_record', name: 'mcp__recorder__record-write', input: {} }] },
      { content: [{ type: 'text', text: 'It may have run; I will check.' }] },
    );

    const first = await h.spawnWorkerProcess();
    const { conversationId, inputUuid } = await h.api.start({ prompt: 'Record a write', config: h.config(), taskQueue: h.taskQueue });
    // The tool is running on the server (its line is written) when the worker dies.
    await eventually(
      () => readFile(record, 'utf8'),
      (text) => text.includes('record-write'),
      60_000,
    );
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    await h.spawnWorkerProcess();

    const result = await h.api.waitForResult(conversationId, inputUuid!);
    expect(result.result).toBe('It may have run; I will check.');
    const results = toolResults(h.model.requests[1]);
    expect(results).toHaveLength(1);
    expect(results[0].is_error).toBe(true);
    expect(String(results[0].content)).toContain('may or may not have run');
    expect(h.model.requests).toHaveLength(2);
    // Called once: the retried activity did not call the tool again.
    expect((await readFile(record, 'utf8')).trim().split('\n')).toEqual(['record-write']);
    // The activity did run again (attempt 2) and answered without calling.
    const history = await h.client.workflow.getHandle(conversationId).fetchHistory();
    const attempts = (history.events ?? [])
      .filter((event) => event.activityTaskStartedEventAttributes)
      .map((event) => Number(event.activityTaskStartedEventAttributes!.attempt));
    expect(Math.max(...attempts)).toBeGreaterThanOrEqual(2);
  }, 180_000);
});
