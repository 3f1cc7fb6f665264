/**
 * Claude Code's `mcp_tool` hook kind (issue 33 item 5), end to end: a real dev server, a real worker,
 * the scripted model and @modelcontextprotocol/server-everything over stdio from the workspace's
 * `.mcp.json`. A UserPromptSubmit hook of the workspace calls the server's `echo` tool with
 * `${prompt}` filled in; the tool's text is the hook's stdout, so (as a command hook's plain stdout on
 * UserPromptSubmit) it reaches the model as context. A hook naming a server the conversation does not
 * have is a non-blocking error: the conversation answers.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness } from '../helpers/harness';

const EVERYTHING = path.resolve(__dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');

isolateEnvironment();
let harness: Harness | undefined;
beforeEach(async () => {
  process.env.HOME = await mkdtemp(path.join(os.tmpdir(), 'hooks-mcp-tool-home-'));
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('mcp_tool hooks', () => {
  it("call a connected server's tool with the event's values; its text is the hook's output (context for UserPromptSubmit); an unknown server does not stop the prompt", async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'Heard.' }] }] });
    const workspace = harness.workspace;
    await writeFile(
      path.join(workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }),
    );
    await mkdir(path.join(workspace, '.claude'), { recursive: true });
    await writeFile(path.join(workspace, '.claude', 'settings.local.json'), JSON.stringify({ enableAllProjectMcpServers: true }));
    await writeFile(
      path.join(workspace, '.claude', 'settings.json'),
      JSON.stringify({
        hooks: {
          UserPromptSubmit: [
            {
              hooks: [
                { type: 'mcp_tool', server: 'everything', tool: 'echo', input: { message: 'audited "${prompt}" in ${cwd}' } },
                { type: 'mcp_tool', server: 'nowhere', tool: 'echo', input: { message: 'never' } },
              ],
            },
          ],
        },
      }),
    );
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'ship it', config: harness.config(), taskQueue: harness.taskQueue });
    expect(await harness.api.waitForResult(started.conversationId, started.inputUuid!)).toMatchObject({ subtype: 'success', result: 'Heard.' });
    const sent = JSON.stringify(harness.model.requests[0].body.messages);
    expect(sent).toContain(`UserPromptSubmit hook success: Echo: audited \\"ship it\\" in ${workspace}`);
    expect(sent).not.toContain('never');
    const feed = JSON.stringify((await harness.api.events(started.conversationId, 0)).events);
    expect(feed).toContain('MCP server \\"nowhere\\" is not one of this conversation');
    await harness.api.end(started.conversationId);
  }, 120_000);
});
