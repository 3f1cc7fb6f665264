/**
 * `durable-agent chat` in a real terminal (tmux) asks about a `.mcp.json` server waiting for
 * approval (issue 22, Claude Code's "New MCP server found in .mcp.json"): "y" approves it (saved in
 * `.claude/settings.local.json`), the next model call offers its tools, and chat shows the MCP call.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isolateEnvironment } from '../helpers/cli';
import { killTerminals, screen, startTerminal, tmux } from '../helpers/tmux';
import { type Harness, REPO_ROOT, createHarness, eventually } from '../helpers/harness';

const EVERYTHING = path.resolve(__dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');

isolateEnvironment();
let harness: Harness | undefined;
afterEach(async () => {
  killTerminals();
  await harness?.close();
  harness = undefined;
});

describe('chat asks about .mcp.json servers', () => {
  it('"Use this MCP server" (Enter on the menu) approves the server in settings.local.json, its tools reach the next request, and chat shows the MCP call', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'mcp-approval-chat-home-'));
    process.env.HOME = home; // the worker reads ~/.claude.json and ~/.claude/settings.json
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_chat_echo', name: 'mcp__everything__echo', input: { message: 'hi from chat' } }] },
        { content: [{ type: 'text', text: 'I can use the server now.' }] },
      ],
    });
    const h = harness;
    await writeFile(
      path.join(h.workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }),
    );
    await h.startWorker();

    const command = [
      `HOME=${home}`,
      `TEMPORAL_ADDRESS=${h.address}`,
      `DURABLE_AGENT_TASK_QUEUE=${h.taskQueue}`,
      process.execPath,
      path.join(REPO_ROOT, 'bin', 'durable-agent.js'),
      'chat',
      '--trust', // issue 29: the workspace's .mcp.json is considered once it is trusted
      '--cwd',
      h.workspace,
      '--permission-mode',
      'bypassPermissions',
      '; echo "[chat exited $?]"; sleep 600',
    ].join(' ');
    const terminal = startTerminal('mcp-approval-chat', command);
    await eventually(
      async () => screen(terminal),
      (text) => /New MCP server found in \.mcp\.json: everything[^\n]*\n[^\n]*❯ 1\. Use this MCP server/.test(text),
      90_000,
    );
    tmux('send-keys', '-t', terminal, 'Enter'); // the first choice: use it
    const approved = await eventually(
      async () => screen(terminal),
      (text) => /everything \(project, stdio\): ✔ connected/.test(text),
      60_000,
    );
    expect(approved).toContain(`Approved everything in ${path.join(h.workspace, '.claude', 'settings.local.json')}`);
    expect(JSON.parse(await readFile(path.join(h.workspace, '.claude', 'settings.local.json'), 'utf8'))).toEqual({ enabledMcpjsonServers: ['everything'] });

    tmux('send-keys', '-t', terminal, 'what can you do?', 'Enter');
    const answered = await eventually(
      async () => screen(terminal),
      (text) => text.includes('I can use the server now.'),
      60_000,
    );
    expect((h.model.requests[0].body.tools as Array<{ name: string }>).map((tool) => tool.name)).toContain('mcp__everything__echo');
    // The MCP call shows like any tool call, with its input and its result under it; the result went to the model.
    expect(answered).toContain('● mcp__everything__echo(message: hi from chat)');
    expect(answered).toContain('⎿  Echo: hi from chat');
    expect(JSON.stringify(h.model.requests[1].body.messages.at(-1))).toContain('Echo: hi from chat');
  }, 180_000);
});
