/**
 * Subagents get MCP tools (issue 22; Claude Code: the general-purpose agent inherits the parent's
 * MCP tools, an agent with a `tools` list gets only the `mcp__…` names it lists). The child is
 * offered them from the parent's recorded listing (no listing of its own) and calls them through
 * its own route on the parent's connections. Real dev server, worker and server-everything (stdio).
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedTurn } from '../../testing/scripted-model-server';
import { subagentWorkflowId } from '../../workflows/subagents';
import { isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness, runToResult } from '../helpers/harness';

const EVERYTHING = path.resolve(__dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');

isolateEnvironment();
let harness: Harness | undefined;
beforeEach(async () => {
  process.env.HOME = await mkdtemp(path.join(os.tmpdir(), 'mcp-subagent-home-'));
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const agentCall = (id: string, prompt: string, type: string) => ({
  type: 'tool_use' as const,
  id,
  name: 'Agent',
  input: { description: `${type} task`, prompt, subagent_type: type },
});
const toolNames = (request: RecordedRequest): string[] => request.body.tools.map((tool: { name: string }) => tool.name);
const firstUserText = (request: RecordedRequest) => JSON.stringify(request.body.messages[0]?.content ?? '');
const lastUserText = (request: RecordedRequest) => JSON.stringify(request.body.messages.at(-1)?.content ?? '');
const text = (value: string): ScriptedTurn => ({ content: [{ type: 'text', text: value }] });
const isChild = (request: RecordedRequest) => !toolNames(request).includes('Agent');

describe('subagents and MCP tools', () => {
  it('general-purpose gets and calls the parent’s MCP tools; Explore gets none; a tools list gets only the mcp__ names it lists', async () => {
    harness = await createHarness({
      respond: (request) => {
        if (isChild(request)) {
          const prompt = firstUserText(request);
          if (prompt.includes('Add with MCP')) {
            if (lastUserText(request).includes('tool_result')) return text(`Child got: ${lastUserText(request).includes('42') ? '42' : 'nothing'}`);
            return { content: [{ type: 'tool_use', id: 'toolu_child_sum', name: 'mcp__everything__get-sum', input: { a: 2, b: 40 } }] };
          }
          return text('Child done.');
        }
        if (lastUserText(request).includes('tool_result')) return text('Parent done.');
        return {
          content: [
            agentCall('toolu_gp', 'Add with MCP', 'general-purpose'),
            agentCall('toolu_explore', 'Explore the workspace', 'Explore'),
            agentCall('toolu_summer', 'Sum things', 'summer'),
          ],
        };
      },
    });
    const h = harness;
    await writeFile(
      path.join(h.workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }),
    );
    await mkdir(path.join(h.workspace, '.claude', 'agents'), { recursive: true });
    await writeFile(path.join(h.workspace, '.claude', 'settings.local.json'), JSON.stringify({ enableAllProjectMcpServers: true }));
    await writeFile(
      path.join(h.workspace, '.claude', 'agents', 'summer.md'),
      '---\nname: summer\ndescription: Adds numbers\ntools: Read, mcp__everything__get-sum\n---\nYou add numbers.\n',
    );
    await h.startWorker();
    const { conversationId, result } = await runToResult(h, 'Use your agents');
    expect(result).toMatchObject({ subtype: 'success', result: 'Parent done.' });

    const childRequests = (prompt: string) => h.model.requests.filter((request) => isChild(request) && firstUserText(request).includes(prompt));
    const general = childRequests('Add with MCP');
    expect(toolNames(general[0])).toContain('mcp__everything__get-sum');
    expect(toolNames(general[0])).toContain('mcp__everything__echo');
    expect(JSON.stringify(general[0].body.system)).toContain('# MCP Server Instructions');
    expect(toolNames(childRequests('Explore the workspace')[0]).some((name) => name.startsWith('mcp__'))).toBe(false);
    expect(toolNames(childRequests('Sum things')[0])).toEqual(['Read', 'mcp__everything__get-sum']);

    // The child's call ran on the server: its result reached the child's next request and the parent.
    expect(lastUserText(general[1])).toContain('42');
    const parentLast = h.model.requests.filter((request) => !isChild(request)).at(-1)!;
    expect(lastUserText(parentLast)).toContain('Child got: 42');

    // The child loaded no config and listed nothing before its call: its tools came from the parent's listing.
    const childHistory = await h.client.workflow.getHandle(subagentWorkflowId(conversationId, 'toolu_gp')).fetchHistory();
    const activityTypes = (childHistory.events ?? []).flatMap((event) =>
      event.activityTaskScheduledEventAttributes?.activityType?.name ? [event.activityTaskScheduledEventAttributes.activityType.name] : [],
    );
    // (server-everything sends tools/list_changed after it starts: the call reports it, and only then the child lists.)
    expect(activityTypes[0]).toBe('callMcpTool');
    expect(activityTypes).not.toContain('loadMcpConfig');
  }, 180_000);
});
