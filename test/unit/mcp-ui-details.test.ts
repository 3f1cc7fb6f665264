/** The Temporal UI's current details show the MCP servers (issue 22): name, state, tools. */
import { describe, expect, it } from 'vitest';
import { MCP_SERVERS_SHOWN, formatCurrentDetails } from '../../workflows/ui/details';

const base = { phase: 'awaiting_input', tools: [], turn: 1, queryCount: 1, model: 'claude-sonnet-4-6', costUsd: 0 };

describe('current details: MCP servers', () => {
  it('names each server with its state and, when connected, its tools', () => {
    const details = formatCurrentDetails({
      ...base,
      mcpServers: [
        { name: 'everything', state: 'connected', tools: 14 },
        { name: 'one_tool', state: 'connected', tools: 1 },
        { name: 'other', state: 'needs-approval', tools: 0 },
        { name: 'broken', state: 'failed', tools: 0 },
      ],
    });
    expect(details.split('\n\n').at(-1)).toBe(
      '**MCP servers:** everything: connected (14 tools) · one\\_tool: connected (1 tool) · other: needs approval · broken: failed',
    );
  });
  it('counts the servers beyond the first few, and says nothing without servers', () => {
    const many = Array.from({ length: MCP_SERVERS_SHOWN + 2 }, (_, index) => ({ name: `s${index}`, state: 'connected', tools: 2 }));
    expect(formatCurrentDetails({ ...base, mcpServers: many })).toContain(`s${MCP_SERVERS_SHOWN - 1}: connected (2 tools) · and 2 more`);
    expect(formatCurrentDetails({ ...base })).not.toContain('MCP');
    expect(formatCurrentDetails({ ...base, mcpServers: [] })).not.toContain('MCP');
  });
});
