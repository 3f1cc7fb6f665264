/** MCP configuration and tool decisions (issue 22 §1, §3): pure functions in common/. */
import { describe, expect, it } from 'vitest';
import type { McpServerStatus } from '../../common/activity-types';
import { mcpInstructionsSection, mcpListingIsStale, mcpStatusLines, mcpToolDefinitions } from '../../common/mcp-context';
import { expandServerConfig, expandVariables, mergeMcpServers, parseMcpConfigText, projectServerApproval } from '../../common/mcp-config';
import {
  MAX_MCP_RESULT_CHARS,
  TOOL_NAME_RULE,
  assignMcpToolNames,
  decideMcpCallAttempt,
  isMcpToolConcurrencySafe,
  mapMcpCallResult,
  mcpRuleCovers,
  normalizeNameForMcp,
} from '../../common/mcp-tools';

describe('parseMcpConfigText (Claude Code formats)', () => {
  it('reads stdio, http and sse servers', () => {
    const { servers, problems } = parseMcpConfigText(
      JSON.stringify({
        mcpServers: {
          files: { command: 'npx', args: ['-y', 'server'], env: { TOKEN: '${TOKEN}' } },
          typed: { type: 'stdio', command: 'node' },
          remote: { type: 'http', url: 'https://example.test/mcp', headers: { Authorization: 'Bearer ${API_TOKEN}' } },
          legacy: { type: 'sse', url: 'https://example.test/sse' },
        },
      }),
      '/w/.mcp.json',
    );
    expect(problems).toEqual([]);
    expect(Object.keys(servers)).toEqual(['files', 'typed', 'remote', 'legacy']);
    expect(servers.remote).toEqual({ type: 'http', url: 'https://example.test/mcp', headers: { Authorization: 'Bearer ${API_TOKEN}' } });
  });

  it('names the file, the server and the field of each problem, and keeps the good servers', () => {
    const { servers, problems } = parseMcpConfigText(
      JSON.stringify({
        mcpServers: {
          good: { command: 'x' },
          noCommand: { args: [] },
          noUrl: { type: 'http' },
          badType: { type: 'websocket', url: 'ws://x' },
          extra: { command: 'x', cwd: '/tmp' },
          badArgs: { command: 'x', args: 'not-an-array' },
          'bad name': { command: 'x' },
        },
      }),
      '/w/.mcp.json',
    );
    expect(Object.keys(servers)).toEqual(['good']);
    const byServer = Object.fromEntries(problems.map((problem) => [problem.server, problem.message]));
    expect(problems.every((problem) => problem.file === '/w/.mcp.json')).toBe(true);
    expect(byServer.noCommand).toBe('command: required');
    expect(byServer.noUrl).toBe('url: required');
    expect(byServer.badType).toContain('type "websocket" is not one of "stdio", "http", "sse"');
    expect(byServer.extra).toBe('unknown field "cwd"');
    expect(byServer.badArgs).toMatch(/^args: /);
    expect(byServer['bad name']).toContain('may only contain');
  });

  it('a file that is not JSON, or not an object, is one problem', () => {
    expect(parseMcpConfigText('{ "mcpServers": ', '/w/.mcp.json').problems[0]).toMatchObject({
      file: '/w/.mcp.json',
      message: expect.stringContaining('not valid JSON'),
    });
    expect(parseMcpConfigText('[]', '/w/.mcp.json').problems[0].message).toContain('JSON object');
    expect(parseMcpConfigText('{"mcpServers": []}', '/w/.mcp.json').problems[0].message).toContain('"mcpServers" must be an object');
  });
});

describe('${VAR} expansion (Claude Code rules)', () => {
  it('expands ${VAR} and ${VAR:-default}, leaves $VAR alone and reports missing variables', () => {
    const missing = new Set<string>();
    expect(expandVariables('${A}-${B:-fallback}-${C:-}-$A-${MISSING}', { A: 'a' }, missing)).toBe('a-fallback--$A-${MISSING}');
    expect([...missing]).toEqual(['MISSING']);
  });

  it('expands every string of a server; a set variable wins over its default', () => {
    const env = { HOME: '/home/u', TOKEN: 't0k', HOST: 'api.test' };
    expect(expandServerConfig({ command: '${HOME}/bin/server', args: ['--token', '${TOKEN}'], env: { X: '${UNSET:-d}' } }, env)).toEqual({
      config: { command: '/home/u/bin/server', args: ['--token', 't0k'], env: { X: 'd' } },
      missing: [],
    });
    expect(expandServerConfig({ type: 'http', url: 'https://${HOST}/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } }, env).config).toEqual({
      type: 'http',
      url: 'https://api.test/mcp',
      headers: { Authorization: 'Bearer t0k' },
    });
    expect(expandServerConfig({ type: 'sse', url: 'https://${NOPE}/${ALSO_NOPE}' }, env).missing).toEqual(['ALSO_NOPE', 'NOPE']);
  });
});

describe('project server approval', () => {
  it('disabled wins, then enable-all, then the enabled list; anything else waits', () => {
    expect(projectServerApproval('a', {})).toBe('pending');
    expect(projectServerApproval('a', { enabledMcpjsonServers: ['a'] })).toBe('approved');
    expect(projectServerApproval('b', { enabledMcpjsonServers: ['a'] })).toBe('pending');
    expect(projectServerApproval('a', { enableAllProjectMcpServers: true })).toBe('approved');
    expect(projectServerApproval('a', { enableAllProjectMcpServers: true, disabledMcpjsonServers: ['a'] })).toBe('rejected');
    expect(projectServerApproval('a', { enableAllProjectMcpServers: false, enabledMcpjsonServers: ['a'] })).toBe('approved');
  });

  it('merges scopes: local over project over user, --mcp-config over all; only project servers need approval', () => {
    const merged = mergeMcpServers(
      {
        user: { file: 'u', servers: { same: { command: 'user' }, u: { command: 'u' } } },
        project: { file: 'p', servers: { same: { command: 'project' }, p: { command: 'p' } } },
        local: { file: 'l', servers: { same: { command: 'local' } } },
        dynamic: [{ file: 'd', servers: { d: { command: 'd' } } }],
      },
      {},
    );
    expect(merged.map((entry) => [entry.name, entry.scope, entry.approval])).toEqual([
      ['d', 'dynamic', 'approved'],
      ['p', 'project', 'pending'],
      ['same', 'local', 'approved'],
      ['u', 'user', 'approved'],
    ]);
    expect(
      mergeMcpServers({ user: { file: 'u', servers: { u: { command: 'u' } } }, dynamic: [{ file: 'd', servers: { d: { command: 'd' } } }] }, {}, true).map(
        (entry) => entry.name,
      ),
    ).toEqual(['d']);
  });
});

describe('MCP tool names within the API rule', () => {
  it('mcp__server__tool with every character outside [a-zA-Z0-9_-] replaced by _', () => {
    expect(normalizeNameForMcp('my.server name')).toBe('my_server_name');
    expect(
      assignMcpToolNames([
        { server: 'github', tool: 'create_issue' },
        { server: 'my.files', tool: 'read file' },
      ]),
    ).toEqual(['mcp__github__create_issue', 'mcp__my_files__read_file']);
  });

  it('a name over 64 characters is cut with a hash of the original, deterministically', () => {
    const long = { server: 'a-server-with-a-rather-long-name', tool: 'and_a_tool_whose_name_is_also_quite_long_indeed' };
    const [name] = assignMcpToolNames([long]);
    expect(name).toMatch(TOOL_NAME_RULE);
    expect(name).toHaveLength(64);
    expect(name.startsWith('mcp__a-server-with-a-rather-long-name__and_a_tool')).toBe(true);
    expect(assignMcpToolNames([{ server: 'x', tool: 'y' }, long])[1]).toBe(name);
    const [other] = assignMcpToolNames([{ ...long, tool: `${long.tool}_2` }]);
    expect(other).not.toBe(name);
  });

  it('tools that normalise to the same name get distinct names, whatever their order', () => {
    const a = { server: 's', tool: 'read.file' };
    const b = { server: 's', tool: 'read_file' };
    const forward = assignMcpToolNames([a, b]);
    const backward = assignMcpToolNames([b, a]);
    expect(new Set(forward).size).toBe(2);
    expect(forward.every((name) => TOOL_NAME_RULE.test(name))).toBe(true);
    expect(backward).toEqual([forward[1], forward[0]]);
  });
});

describe('permission rules on MCP tools', () => {
  const tool = { name: 'mcp__github__create_issue', server: 'github' };
  it('mcp__server and mcp__server__* cover every tool of the server; mcp__server__tool covers that tool', () => {
    expect(mcpRuleCovers('mcp__github', tool)).toBe(true);
    expect(mcpRuleCovers('mcp__github__*', tool)).toBe(true);
    expect(mcpRuleCovers('mcp__github__create_issue', tool)).toBe(true);
    expect(mcpRuleCovers('mcp__github__delete_repo', tool)).toBe(false);
    expect(mcpRuleCovers('mcp__git', tool)).toBe(false);
    expect(mcpRuleCovers('mcp__gitlab', tool)).toBe(false);
    expect(mcpRuleCovers('Bash', tool)).toBe(false);
  });
  it('a server name with dots is matched by its normalised form', () => {
    expect(mcpRuleCovers('mcp__my_files', { name: 'mcp__my_files__read', server: 'my.files' })).toBe(true);
  });
});

describe('concurrency and retries', () => {
  it('concurrency-safe only when annotated readOnlyHint', () => {
    expect(isMcpToolConcurrencySafe({ readOnlyHint: true })).toBe(true);
    expect(isMcpToolConcurrencySafe({ idempotentHint: true })).toBe(false);
    expect(isMcpToolConcurrencySafe(undefined)).toBe(false);
  });
  it('a first attempt calls; a retried one calls again only for read-only or idempotent tools', () => {
    expect(decideMcpCallAttempt(undefined, 1)).toEqual({ action: 'call' });
    expect(decideMcpCallAttempt(undefined, 2)).toEqual({ action: 'report-may-have-run' });
    expect(decideMcpCallAttempt({ readOnlyHint: false, destructiveHint: true }, 3)).toEqual({ action: 'report-may-have-run' });
    expect(decideMcpCallAttempt({ readOnlyHint: true }, 2)).toEqual({ action: 'call' });
    expect(decideMcpCallAttempt({ idempotentHint: true }, 2)).toEqual({ action: 'call' });
  });
});

describe('mapMcpCallResult', () => {
  it('maps text, images, resource links, embedded resources and isError', () => {
    const mapped = mapMcpCallResult({
      isError: true,
      content: [
        { type: 'text', text: 'hello' },
        { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
        { type: 'image', mimeType: 'image/svg+xml', data: 'PHN2Zz4=' },
        { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt', mimeType: 'text/plain' },
        { type: 'resource', resource: { uri: 'demo://doc', mimeType: 'text/markdown', text: '# Doc' } },
        { type: 'resource', resource: { uri: 'demo://bin', mimeType: 'application/zip', blob: 'UEsDBA==' } },
        { type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' },
      ],
    });
    expect(mapped.isError).toBe(true);
    expect(mapped.content).toEqual([
      { type: 'text', text: 'hello' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'text', text: expect.stringContaining('image/svg+xml') },
      { type: 'text', text: '[Resource link: a.txt] file:///a.txt (text/plain)' },
      { type: 'text', text: '[Resource demo://doc (text/markdown)]\n# Doc' },
      { type: 'text', text: expect.stringContaining('binary') },
      { type: 'text', text: expect.stringContaining('audio/wav') },
    ]);
  });
  it('structured content alone is its JSON; nothing is "(no content)"', () => {
    expect(mapMcpCallResult({ content: [], structuredContent: { a: 1 } }).content).toEqual([{ type: 'text', text: '{"a":1}' }]);
    expect(mapMcpCallResult({}).content).toEqual([{ type: 'text', text: '(no content)' }]);
  });
  it('bounds the text, saying how much there was', () => {
    const mapped = mapMcpCallResult({ content: [{ type: 'text', text: 'x'.repeat(MAX_MCP_RESULT_CHARS + 10) }] });
    expect(mapped.content).toHaveLength(2);
    expect((mapped.content[0] as { text: string }).text).toHaveLength(MAX_MCP_RESULT_CHARS);
    expect((mapped.content[1] as { text: string }).text).toContain(`${MAX_MCP_RESULT_CHARS + 10} characters`);
  });
});

describe('what the model and the user see of a listing', () => {
  const listing: McpServerStatus[] = [
    {
      name: 'github',
      scope: 'user',
      transport: 'http',
      state: 'connected',
      instructions: 'Prefer search before create.',
      tools: [
        {
          name: 'mcp__github__search',
          server: 'github',
          originalName: 'search',
          description: 'Search',
          inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { q: { type: 'string' } } },
          concurrencySafe: true,
        },
        { name: 'mcp__github__odd', server: 'github', originalName: 'odd', description: '', inputSchema: {}, concurrencySafe: false },
      ],
      listChangedCount: 1,
    },
    { name: 'files', scope: 'project', transport: 'stdio', state: 'failed', error: 'could not connect: spawn x ENOENT', tools: [], listChangedCount: 0 },
    { name: 'new', scope: 'project', transport: 'stdio', state: 'needs-approval', error: 'not approved', tools: [], listChangedCount: 0 },
  ];

  it('tool definitions for connected servers, with object schemas and no $schema', () => {
    expect(mcpToolDefinitions(listing)).toEqual([
      { name: 'mcp__github__search', description: 'Search', input_schema: { type: 'object', properties: { q: { type: 'string' } } } },
      { name: 'mcp__github__odd', description: '', input_schema: { type: 'object', properties: {} } },
    ]);
  });

  it('the instructions section names each server that gave instructions', () => {
    expect(mcpInstructionsSection(listing)).toBe(
      '# MCP Server Instructions\n\nThe following MCP servers have provided instructions for how to use their tools and resources:\n\n## github\nPrefer search before create.',
    );
    expect(mcpInstructionsSection(listing.slice(1))).toBeUndefined();
  });

  it('status lines and staleness', () => {
    expect(mcpStatusLines(listing)).toEqual([
      'github (user, http): ✔ connected · 2 tools',
      'files (project, stdio): ✘ failed · could not connect: spawn x ENOENT',
      'new (project, stdio): △ needs approval · not approved',
    ]);
    expect(mcpListingIsStale(listing, 'github', 1)).toBe(false);
    expect(mcpListingIsStale(listing, 'github', 2)).toBe(true);
  });
});
