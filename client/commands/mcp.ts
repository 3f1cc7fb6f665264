/**
 * `durable-agent mcp list <id>`, `mcp approve [--all] <id> <server…>`, `mcp reject <id> <server…>`:
 * a conversation's MCP servers, and the answer to Claude Code's "New MCP server found in .mcp.json"
 * prompt for servers waiting for approval (issue 22). The choice goes into the workspace's
 * `.claude/settings.local.json` through the `approveMcpServers` update; the servers are listed again.
 */
import type { McpApprovalDecision } from '../../common/activity-types';
import type { McpApprovalOutcome } from '../../workflows/extensions/mcp-state';
import type { CommandInput, Io } from '../command-line';
import { withConnection } from '../connect';
import { sanitizeForTerminal } from '../format';
import { resolveConversationId } from './list';

/** The update's answer as `mcp approve` / chat print it. */
export function formatMcpApprovalOutcome(outcome: McpApprovalOutcome): string {
  const verb = outcome.decision === 'reject' ? 'Rejected' : 'Approved';
  return [
    `${verb} ${outcome.servers.join(', ')}${outcome.decision === 'approve-all' ? ' (and all future .mcp.json servers)' : ''} in ${outcome.file}.`,
    ...outcome.lines.map((line) => `  ${line}`),
  ].join('\n');
}

/** The validator's words (the client's WorkflowUpdateFailedError carries them as its cause). */
export function updateRefusal(error: unknown): string {
  const cause = (error as { cause?: { message?: string } })?.cause?.message;
  return cause ?? (error instanceof Error ? error.message : String(error));
}

export async function mcpCommand(sub: 'list' | 'approve' | 'reject', { values, positionals }: CommandInput, io: Io): Promise<number> {
  const [shortId, ...servers] = positionals;
  return withConnection(async (api) => {
    const conversationId = await resolveConversationId(api, shortId);
    if (sub === 'list') {
      const status = await api.status(conversationId);
      if (values.json) io.out(JSON.stringify({ servers: status.mcpServers ?? [], needsApproval: status.mcpNeedsApproval ?? [] }));
      else io.out(sanitizeForTerminal(status.mcpServers?.length ? status.mcpServers.join('\n') : 'No MCP servers in this conversation.'));
      return 0;
    }
    const decision: McpApprovalDecision = sub === 'reject' ? 'reject' : values.all ? 'approve-all' : 'approve';
    try {
      const outcome = await api.approveMcpServers(conversationId, { servers, decision });
      io.out(values.json ? JSON.stringify(outcome) : sanitizeForTerminal(formatMcpApprovalOutcome(outcome)));
      return 0;
    } catch (error) {
      io.err(sanitizeForTerminal(`mcp ${sub}: ${updateRefusal(error)}`));
      return 1;
    }
  });
}
