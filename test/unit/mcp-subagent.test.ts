/** What a subagent inherits of its parent's MCP servers (issue 22), and chat's approval answers. */
import { describe, expect, it } from 'vitest';
import { agentTools, findAgent } from '../../common/agents';
import type { McpServerStatus } from '../../common/activity-types';
import { mcpApprovalAnswer, mcpApprovalQuestion } from '../../client/chat-mcp-approval';
import { type McpCarried, inheritedMcpState } from '../../workflows/extensions/mcp-state';

const server = (name: string, tools: string[], state: McpServerStatus['state'] = 'connected'): McpServerStatus => ({
  name,
  scope: 'project',
  transport: 'stdio',
  state,
  tools: tools.map((tool) => ({
    name: `mcp__${name}__${tool}`,
    server: name,
    originalName: tool,
    description: tool,
    inputSchema: { type: 'object' },
    concurrencySafe: false,
  })),
  listChangedCount: 0,
});
const entry = (name: string) => ({ name, scope: 'project' as const, file: '/w/.mcp.json', config: { command: 'x' }, approval: 'approved' as const });
const parent: McpCarried = {
  servers: [entry('a'), entry('b'), entry('c')],
  listing: [server('a', ['one', 'two']), server('b', ['three']), server('c', [], 'failed')],
};

describe('inheritedMcpState', () => {
  it('keeps the servers of the granted tools, with the parent’s scope', () => {
    const inherited = inheritedMcpState(parent, 'conversation-1', ['Read', 'mcp__b__three']);
    expect(inherited?.scope).toBe('conversation-1');
    expect(inherited?.servers.map((item) => item.name)).toEqual(['b']);
    expect(inherited?.listing.map((item) => item.name)).toEqual(['b']);
    expect(inheritedMcpState(parent, 'conversation-1', ['mcp__a__one', 'mcp__b__three'])?.servers.map((item) => item.name)).toEqual(['a', 'b']);
  });
  it('is undefined when no MCP tool is granted, or the parent has none', () => {
    expect(inheritedMcpState(parent, 'conversation-1', ['Read', 'Grep'])).toBeUndefined();
    expect(inheritedMcpState(undefined, 'conversation-1', ['mcp__a__one'])).toBeUndefined();
  });
  it('agentTools: general-purpose keeps every offered mcp__ name, Explore none', () => {
    const offered = ['Read', 'Grep', 'Bash', 'mcp__a__one', 'mcp__b__three'];
    expect(agentTools(findAgent('general-purpose', [])!, offered)).toEqual(expect.arrayContaining(['mcp__a__one', 'mcp__b__three']));
    expect(agentTools(findAgent('Explore', [])!, offered).some((name) => name.startsWith('mcp__'))).toBe(false);
  });
});

describe("chat's approval question", () => {
  it('asks Claude Code’s three choices; y approves, a approves all, anything else rejects', () => {
    expect(mcpApprovalQuestion('everything')).toBe('Use the MCP server "everything" from .mcp.json? [y]es / [a]ll project servers / [N]o: ');
    expect(mcpApprovalAnswer('y')).toBe('approve');
    expect(mcpApprovalAnswer(' Yes ')).toBe('approve');
    expect(mcpApprovalAnswer('a')).toBe('approve-all');
    expect(mcpApprovalAnswer('')).toBe('reject');
    expect(mcpApprovalAnswer('n')).toBe('reject');
  });
});
