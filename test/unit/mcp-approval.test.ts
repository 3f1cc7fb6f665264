/**
 * Approving `.mcp.json` servers (issue 22): the settings merge, the activity on real files (a
 * malformed file is left as it is), and the update's validator.
 */
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mergeMcpApproval, saveMcpApprovals } from '../../activities/mcp/approvals';
import type { McpServerEntry } from '../../common/mcp-config';
import { type McpCarried, mcpApprovalProblem, mcpServersNeedingApproval } from '../../workflows/extensions/mcp-state';

describe('mergeMcpApproval', () => {
  it('approve adds to enabledMcpjsonServers and drops from disabled; other keys stay', () => {
    expect(mergeMcpApproval({ model: 'x', disabledMcpjsonServers: ['a', 'b'] }, ['a'], 'approve')).toEqual({
      model: 'x',
      enabledMcpjsonServers: ['a'],
      disabledMcpjsonServers: ['b'],
    });
    expect(mergeMcpApproval({ enabledMcpjsonServers: ['a'] }, ['a', 'c'], 'approve')).toEqual({ enabledMcpjsonServers: ['a', 'c'] });
  });
  it('approve-all also sets enableAllProjectMcpServers', () => {
    expect(mergeMcpApproval({}, ['a'], 'approve-all')).toEqual({ enabledMcpjsonServers: ['a'], enableAllProjectMcpServers: true });
  });
  it('reject adds to disabledMcpjsonServers and drops from enabled', () => {
    expect(mergeMcpApproval({ enabledMcpjsonServers: ['a', 'b'] }, ['a'], 'reject')).toEqual({ enabledMcpjsonServers: ['b'], disabledMcpjsonServers: ['a'] });
  });
});

describe('saveMcpApprovals', () => {
  it('creates .claude/settings.local.json, merges into an existing one, and leaves a malformed one untouched', async () => {
    const cwd = await mkdtemp(path.join(os.tmpdir(), 'mcp-approval-'));
    const { file } = await saveMcpApprovals({ cwd, servers: ['a'], decision: 'approve' });
    expect(file).toBe(path.join(cwd, '.claude', 'settings.local.json'));
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ enabledMcpjsonServers: ['a'] });
    await saveMcpApprovals({ cwd, servers: ['b'], decision: 'reject' });
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ enabledMcpjsonServers: ['a'], disabledMcpjsonServers: ['b'] });

    const broken = await mkdtemp(path.join(os.tmpdir(), 'mcp-approval-broken-'));
    await mkdir(path.join(broken, '.claude'));
    await writeFile(path.join(broken, '.claude', 'settings.local.json'), '{"permissions": ');
    await expect(saveMcpApprovals({ cwd: broken, servers: ['a'], decision: 'approve' })).rejects.toThrow(/is not valid JSON .*the MCP approval was not saved/);
    expect(await readFile(path.join(broken, '.claude', 'settings.local.json'), 'utf8')).toBe('{"permissions": ');
  });
});

describe('the approveMcpServers validator', () => {
  const entry = (name: string, scope: McpServerEntry['scope'], approval: McpServerEntry['approval']): McpServerEntry => ({
    name,
    scope,
    file: '/w/.mcp.json',
    config: { command: 'x' },
    approval,
  });
  const state: McpCarried = {
    servers: [entry('p', 'project', 'pending'), entry('ok', 'project', 'approved'), entry('no', 'project', 'rejected'), entry('u', 'user', 'approved')],
    listing: [],
  };

  it('accepts pending project servers only', () => {
    expect(mcpServersNeedingApproval(state)).toEqual(['p']);
    expect(mcpApprovalProblem({ servers: ['p'], decision: 'approve' }, state)).toBeUndefined();
    expect(mcpApprovalProblem({ servers: ['p'], decision: 'reject' }, state)).toBeUndefined();
    expect(mcpApprovalProblem({ servers: ['x'], decision: 'approve' }, state)).toMatch(/No MCP server "x"/);
    expect(mcpApprovalProblem({ servers: ['ok'], decision: 'approve' }, state)).toMatch(/already approved/);
    expect(mcpApprovalProblem({ servers: ['no'], decision: 'approve' }, state)).toMatch(/rejected in disabledMcpjsonServers/);
    expect(mcpApprovalProblem({ servers: ['u'], decision: 'approve' }, state)).toMatch(/a user server, not from .mcp.json/);
  });
  it('rejects bad shapes and a conversation without servers', () => {
    expect(mcpApprovalProblem(null, state)).toMatch(/takes \{"servers"/);
    expect(mcpApprovalProblem({ servers: 'p', decision: 'approve' }, state)).toMatch(/non-empty list/);
    expect(mcpApprovalProblem({ servers: ['p'], decision: 'yes' }, state)).toMatch(/decision must be one of/);
    expect(mcpApprovalProblem({ servers: ['p'], decision: 'approve' }, undefined)).toMatch(/no MCP servers/);
  });
});
