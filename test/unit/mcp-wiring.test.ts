/**
 * The pure decisions of MCP in the conversation (issue 22): which MCP tools are offered, their
 * permission facts and rules (`mcp__server`, `mcp__server__*`, `mcp__server__tool`; ask when no
 * rule; fail closed), concurrency of read-only annotated tools, the result text and its budget,
 * the feed's warnings and `/mcp`, and where the instructions go in the system prompt.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { McpServerStatus } from '../../common/activity-types';
import type { ConversationConfig } from '../../common/config';
import type { ConversationStatus } from '../../workflows/definitions';
import { parseConversationConfig } from '../../common/config';
import { type PermissionContext, decidePermission, parsePermissionRule, permissionRuleProblem } from '../../common/permissions';
import {
  findMcpTool,
  mcpCallFacts,
  mcpCommandText,
  mcpListingWarnings,
  mcpResultText,
  mcpToolsChangedLine,
  mightBeListedLater,
  offeredMcpTools,
  unknownMcpToolText,
} from '../../workflows/extensions/mcp-state';
import { partitionToolCalls } from '../../workflows/query/tool-orchestration';

function server(name: string, tools: Array<{ tool: string; readOnly?: boolean }>, overrides: Partial<McpServerStatus> = {}): McpServerStatus {
  return {
    name,
    scope: 'project',
    transport: 'stdio',
    state: 'connected',
    listChangedCount: 0,
    instructions: `Use ${name} well.`,
    tools: tools.map(({ tool, readOnly }) => ({
      name: `mcp__${name}__${tool}`,
      server: name,
      originalName: tool,
      description: `${tool} of ${name}`,
      inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { x: { type: 'string' } } },
      ...(readOnly !== undefined && { annotations: { readOnlyHint: readOnly } }),
      concurrencySafe: readOnly === true,
    })),
    ...overrides,
  };
}

const LISTING: McpServerStatus[] = [
  server('github', [
    { tool: 'search', readOnly: true },
    { tool: 'create_issue', readOnly: false },
  ]),
  server('db', [{ tool: 'query' }]),
  server('down', [], { state: 'failed', error: 'spawn no-such-program ENOENT' }),
  server('waiting', [], { state: 'needs-approval', error: 'not approved' }),
];

const context = (overrides: Partial<PermissionContext['rules']> = {}, mode: PermissionContext['mode'] = 'default'): PermissionContext => ({
  mode,
  rules: { allow: [], deny: [], ask: [], ...overrides },
  workingDirectories: ['/work/project'],
});
const cli = (...rules: string[]) => rules.map((rule) => ({ rule, source: 'cliArg' as const }));

function decide(name: string, permissionContext: PermissionContext) {
  const facts = mcpCallFacts(LISTING, name);
  expect(facts, name).toBeDefined();
  return decidePermission({ toolName: name, input: {} }, facts!, permissionContext);
}

describe('MCP tools offered', () => {
  it('offers connected servers’ tools with object schemas (no $schema), none of failed or unapproved servers', () => {
    const offered = offeredMcpTools(LISTING, undefined);
    expect(offered.map((tool) => tool.name)).toEqual(['mcp__github__search', 'mcp__github__create_issue', 'mcp__db__query']);
    expect(offered[0].input_schema).toEqual({ type: 'object', properties: { x: { type: 'string' } } });
  });

  it('a conversation with a fixed tool list (an Explore agent) gets only the MCP tools it names', () => {
    expect(offeredMcpTools(LISTING, ['Read', 'Grep'])).toEqual([]);
    expect(offeredMcpTools(LISTING, ['Read', 'mcp__db__query']).map((tool) => tool.name)).toEqual(['mcp__db__query']);
  });

  it('finds a tool by its API name; a name of a connected server may be listed later, others not', () => {
    expect(findMcpTool(LISTING, 'mcp__db__query')?.originalName).toBe('query');
    expect(findMcpTool(LISTING, 'mcp__db__drop')).toBeUndefined();
    expect(mightBeListedLater(LISTING, 'mcp__db__drop')).toBe(true);
    expect(mightBeListedLater(LISTING, 'mcp__down__anything')).toBe(false);
    expect(mightBeListedLater(LISTING, 'mcp__nowhere__x')).toBe(false);
    expect(unknownMcpToolText('mcp__db__drop', LISTING)).toMatch(/^No such tool available: mcp__db__drop\. MCP tools available: mcp__github__search/);
  });
});

describe('permission rules on MCP tools', () => {
  it('parses mcp__server, mcp__server__* and mcp__server__tool; `__*` only for MCP rules', () => {
    expect(parsePermissionRule('mcp__github')).toEqual({ toolName: 'mcp__github' });
    expect(parsePermissionRule('mcp__github__*')).toEqual({ toolName: 'mcp__github__*' });
    expect(parsePermissionRule('mcp__github__search')).toEqual({ toolName: 'mcp__github__search' });
    expect(permissionRuleProblem('Bash__*')).toMatch(/Invalid permission rule/);
    expect(permissionRuleProblem('mcp__github__*(x)')).toMatch(/Invalid permission rule/);
    expect(parseConversationConfig({ cwd: '/w', permissions: { allow: ['mcp__github__*'] } }).permissions?.allow).toEqual(['mcp__github__*']);
  });

  it('asks for an MCP tool no rule covers (default and acceptEdits), runs it in bypassPermissions, denies it in dontAsk', () => {
    expect(decide('mcp__github__create_issue', context()).behavior).toBe('ask');
    expect(decide('mcp__github__create_issue', context({}, 'acceptEdits')).behavior).toBe('ask');
    expect(decide('mcp__github__create_issue', context({}, 'bypassPermissions')).behavior).toBe('allow');
    expect(decide('mcp__github__create_issue', context({}, 'dontAsk')).behavior).toBe('deny');
    // Plan mode: only tools the server marks read-only may go on (and then still ask).
    expect(decide('mcp__github__create_issue', context({}, 'plan')).behavior).toBe('deny');
    expect(decide('mcp__github__search', context({}, 'plan')).behavior).toBe('ask');
  });

  it('allows by server and by tool; a deny rule on one tool wins over the server’s allow', () => {
    for (const rule of ['mcp__github', 'mcp__github__*', 'mcp__github__create_issue']) {
      expect(decide('mcp__github__create_issue', context({ allow: cli(rule) })).behavior, rule).toBe('allow');
    }
    expect(decide('mcp__db__query', context({ allow: cli('mcp__github') })).behavior).toBe('ask');
    const both = context({ allow: cli('mcp__github'), deny: cli('mcp__github__create_issue') });
    expect(decide('mcp__github__search', both).behavior).toBe('allow');
    const denied = decide('mcp__github__create_issue', both);
    expect(denied).toMatchObject({ behavior: 'deny' });
    expect((denied as { message: string }).message).toContain('denied by the cliArg rule mcp__github__create_issue');
    expect(decide('mcp__db__query', context({ ask: cli('mcp__db'), allow: cli('mcp__db') })).behavior).toBe('ask');
  });

  it('fails closed: a rule with a specifier, another server’s prefix or a prefix of the name never allows', () => {
    expect(decide('mcp__github__search', context({ allow: cli('mcp__github__search(anything)') })).behavior).toBe('ask');
    expect(decide('mcp__github__search', context({ allow: cli('mcp__git') })).behavior).toBe('ask');
    expect(decide('mcp__github__search', context({ allow: cli('mcp__github__sea') })).behavior).toBe('ask');
    expect(decide('mcp__github__search', context({ allow: cli('Bash', 'Read') })).behavior).toBe('ask');
  });
});

describe('concurrency of MCP calls', () => {
  it('read-only annotated MCP calls share a batch; others run alone', () => {
    const call = (name: string, id: string) => ({ type: 'tool_use' as const, id, name, input: {} });
    const safe = (block: { name: string }) => findMcpTool(LISTING, block.name)?.concurrencySafe === true;
    const batches = partitionToolCalls(
      [call('mcp__github__search', 'a'), call('mcp__github__search', 'b'), call('mcp__github__create_issue', 'c'), call('mcp__db__query', 'd')],
      safe,
    );
    expect(batches.map((batch) => [batch.isConcurrencySafe, batch.blocks.map((block) => block.id)])).toEqual([
      [true, ['a', 'b']],
      [false, ['c']],
      [false, ['d']],
    ]);
  });
});

describe('results, feed and /mcp', () => {
  it('joins text, names images, and keeps within the budget with a note', () => {
    expect(
      mcpResultText([
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two' },
      ]),
    ).toBe('one\ntwo');
    expect(mcpResultText([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }])).toMatch(
      /^\[image image\/png, 4 base64 characters/,
    );
    const cut = mcpResultText([{ type: 'text', text: 'x'.repeat(10_000) }], 2_000);
    expect(cut.length).toBeLessThanOrEqual(2_000);
    expect(cut).toContain('MCP tool output truncated: 10000 characters');
  });

  it('warns about failed and unapproved servers once, and names tools added and removed', () => {
    const warnings = mcpListingWarnings(LISTING);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain('MCP server "down" failed: spawn no-such-program ENOENT');
    expect(warnings[1]).toContain('"enabledMcpjsonServers": ["waiting"]');
    expect(mcpListingWarnings(LISTING, LISTING)).toEqual([]);
    const after = [server('github', [{ tool: 'search', readOnly: true }, { tool: 'close_issue' }]), LISTING[1]];
    expect(mcpToolsChangedLine(LISTING, after)).toBe('MCP tools changed: added mcp__github__close_issue; removed mcp__github__create_issue.');
    expect(mcpToolsChangedLine(LISTING, LISTING)).toBeUndefined();
  });

  it('/mcp lists servers with state and tool counts, and how to approve', () => {
    const text = mcpCommandText({ servers: [], listing: [] });
    expect(text).toMatch(/^No MCP servers configured/);
    const listed = mcpCommandText({
      servers: [{ name: 'github', scope: 'project', file: '/w/.mcp.json', config: { command: 'x' }, approval: 'approved' }],
      listing: LISTING,
    });
    expect(listed).toContain('github (project, stdio): ✔ connected · 2 tools');
    expect(listed).toContain('down (project, stdio): ✘ failed · spawn no-such-program ENOENT');
    expect(listed).toContain('waiting (project, stdio): △ needs approval');
    expect(listed).toContain('enableAllProjectMcpServers');
  });
});

describe('the request', () => {
  it('puts the MCP instructions last in the system prompt, uncached, and the tools in the request context only when there are some', async () => {
    // request-contexts.ts imports the workflow sinks; the pure builders are what is checked here.
    const { buildEffectiveSystemPrompt, getSystemPrompt } = await import('../../workflows/system-prompt');
    const { mcpInstructionsSection } = await import('../../common/mcp-context');
    const section = mcpInstructionsSection(LISTING)!;
    expect(section).toMatch(/^# MCP Server Instructions/);
    expect(section).toContain('## github\nUse github well.');
    expect(section).not.toContain('## down');
    const base = buildEffectiveSystemPrompt({ defaultPrompt: getSystemPrompt(undefined, 'claude-sonnet-4-6') });
    expect(base.some((block) => block.cache_control)).toBe(true);
    const config = parseConversationConfig({ cwd: '/w' }) as ConversationConfig;
    expect(config.mcpConfig).toBeUndefined();
  });
});

describe('the chat line of an MCP call', () => {
  it('shows the tool name and its arguments like any tool', async () => {
    const { toolArgument, toolCallLine } = await import('../../client/tool-line');
    expect(toolCallLine('mcp__everything__get-sum', toolArgument('mcp__everything__get-sum', { a: 2, b: 40 }))).toBe('● mcp__everything__get-sum(a: 2, b: 40)');
  });
});

describe('--mcp-config and --strict-mcp-config', () => {
  it('keep inline JSON, resolve a file against the directory the command ran in, and refuse --strict-mcp-config alone', async () => {
    const { configFrom } = await import('../../client/command-line');
    const { UsageError } = await import('../../client/usage-error');
    const inline = '{"mcpServers":{"web":{"type":"http","url":"http://127.0.0.1:1/mcp"}}}';
    const config = configFrom({ 'mcp-config': [inline, 'servers.json'], 'strict-mcp-config': true }, true);
    expect(config.mcpConfig).toEqual([inline, path.resolve('servers.json')]);
    expect(config.strictMcpConfig).toBe(true);
    expect(configFrom({}, true)).not.toHaveProperty('mcpConfig');
    expect(() => configFrom({ 'strict-mcp-config': true }, true)).toThrow(UsageError);
    expect(() => configFrom({ 'mcp-config': [' '] }, true)).toThrow(/--mcp-config needs/);
  });
});

describe('status shows the MCP servers', () => {
  it('one line per server under "mcp servers"', async () => {
    const { formatStatus } = await import('../../client/format');
    const lines = formatStatus({
      conversationId: 'conversation-1',
      phase: 'awaiting_input',
      model: 'claude-sonnet-4-6',
      currentModel: 'claude-sonnet-4-6',
      turnCount: 0,
      queryCount: 1,
      transitions: [],
      lastQueryTransitions: [],
      toolsInFlight: [],
      queuedInputs: 0,
      usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      totalCostUsd: 0,
      contextTokens: 0,
      messageCount: 2,
      ended: false,
      continuedAsNewCount: 0,
      nextEventSeq: 3,
      mcpServers: ['github (project, stdio): ✔ connected · 2 tools', 'down (project, stdio): ✘ failed · spawn ENOENT'],
    } as unknown as ConversationStatus).split('\n');
    const first = lines.findIndex((line) => line.startsWith('mcp servers'));
    expect(lines[first]).toBe('mcp servers   github (project, stdio): ✔ connected · 2 tools');
    expect(lines[first + 1]).toBe('              down (project, stdio): ✘ failed · spawn ENOENT');
  });
});
