/**
 * A person's answer to Claude Code's "New MCP server found in .mcp.json" prompt, written where
 * Claude Code writes it: the workspace's `.claude/settings.local.json` (`enabledMcpjsonServers`,
 * `disabledMcpjsonServers`, `enableAllProjectMcpServers`), merged with what the file holds. Never
 * the shared `.claude/settings.json`: a project cannot approve its own servers for everyone.
 * A file that is not a JSON object is left as it is and the activity fails (nothing is lost).
 */
import { ApplicationFailure } from '@temporalio/common';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { McpApprovalDecision, SaveMcpApprovalsInput, SaveMcpApprovalsResult } from '../../common/activity-types';
import { writeJsonFile } from '../settings';

/**
 * The settings after a decision (pure): `approve` adds the servers to `enabledMcpjsonServers`,
 * `approve-all` also sets `enableAllProjectMcpServers`, `reject` adds them to
 * `disabledMcpjsonServers`; each removes them from the other list. Other keys are kept.
 */
export function mergeMcpApproval(settings: Record<string, unknown>, servers: readonly string[], decision: McpApprovalDecision): Record<string, unknown> {
  const list = (key: string) => (Array.isArray(settings[key]) ? (settings[key] as unknown[]).filter((name): name is string => typeof name === 'string') : []);
  const add = (names: string[]) => [...names, ...servers.filter((name) => !names.includes(name))];
  const drop = (names: string[]) => names.filter((name) => !servers.includes(name));
  const next: Record<string, unknown> = { ...settings };
  const enabled = decision === 'reject' ? drop(list('enabledMcpjsonServers')) : add(list('enabledMcpjsonServers'));
  const disabled = decision === 'reject' ? add(list('disabledMcpjsonServers')) : drop(list('disabledMcpjsonServers'));
  if (enabled.length > 0 || 'enabledMcpjsonServers' in settings) next.enabledMcpjsonServers = enabled;
  if (disabled.length > 0 || 'disabledMcpjsonServers' in settings) next.disabledMcpjsonServers = disabled;
  if (decision === 'approve-all') next.enableAllProjectMcpServers = true;
  return next;
}

/** Merges the decision into `<cwd>/.claude/settings.local.json` (written whole through a temporary file). */
export async function saveMcpApprovals(input: SaveMcpApprovalsInput): Promise<SaveMcpApprovalsResult> {
  const file = path.join(input.cwd, '.claude', 'settings.local.json');
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  let settings: Record<string, unknown> = {};
  if (text !== undefined && text.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw ApplicationFailure.nonRetryable(
        `${file} is not valid JSON (${(error as Error).message}); the MCP approval was not saved. Fix the file and approve again.`,
        'InvalidSettingsFile',
      );
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw ApplicationFailure.nonRetryable(
        `${file} is not a JSON object; the MCP approval was not saved. Fix the file and approve again.`,
        'InvalidSettingsFile',
      );
    }
    settings = parsed as Record<string, unknown>;
  }
  await writeJsonFile(file, mergeMcpApproval(settings, input.servers, input.decision));
  return { file };
}
