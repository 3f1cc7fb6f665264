/**
 * Claude Code's "New MCP server found in .mcp.json" question inline in `durable-agent chat`
 * (issue 22): for each project server waiting for approval (`status.mcpNeedsApproval`), chat asks
 * once, in an arrow-key menu: use it, use it and all future project servers, or not (Claude Code's three choices; "not"
 * is remembered in `disabledMcpjsonServers` as Claude Code does). The answer goes out as the
 * `approveMcpServers` update; the servers' new states are printed.
 */
import type { McpApprovalDecision } from '../common/activity-types';
import type { ConversationClient } from './api';
import type { ChatChoice, ChatPermissionIo } from './chat-permissions';
import { formatMcpApprovalOutcome, updateRefusal } from './commands/mcp';
import { sanitizeForTerminal } from './format';
import { SerialRecheck } from './serial-recheck';

/** The question for one server. */
export function mcpApprovalQuestion(server: string): string {
  return `Use the MCP server "${server}" from .mcp.json? [y]es / [a]ll project servers / [N]o: `;
}

/** An answer typed to it: y/yes → approve, a/all → approve-all, anything else (Enter) → reject. */
export function mcpApprovalAnswer(line: string): McpApprovalDecision {
  const answer = line.trim().toLowerCase();
  if (answer === 'y' || answer === 'yes') return 'approve';
  if (answer === 'a' || answer === 'all') return 'approve-all';
  return 'reject';
}

/** Claude Code's menu for a new project server (its three choices, in its order). */
export const MCP_APPROVAL_CHOICES: ChatChoice[] = [
  { label: 'Use this MCP server', value: 'approve' },
  { label: 'Use this and all future MCP servers in this project', value: 'approve-all' },
  { label: 'Continue without using this MCP server', value: 'reject' },
];

export class ChatMcpApprovalPrompter {
  private readonly asked = new Set<string>();
  private readonly recheck: SerialRecheck;

  constructor(
    private readonly api: ConversationClient,
    private readonly conversationId: string,
    private readonly io: ChatPermissionIo,
    private readonly leaving: AbortSignal,
  ) {
    this.recheck = new SerialRecheck(
      () => this.askWaiting(),
      (error) => this.io.print(sanitizeForTerminal(`MCP approval: ${updateRefusal(error)}`)),
      leaving,
    );
  }

  /** Looks for servers waiting for approval and asks about each one not asked yet. */
  check(): void {
    this.recheck.request();
  }

  private async askWaiting(): Promise<void> {
    for (;;) {
      if (this.leaving.aborted) return;
      // Asked again each time: an "all" answer approves the others too.
      const waiting = (await this.api.status(this.conversationId)).mcpNeedsApproval ?? [];
      const server = waiting.find((name) => !this.asked.has(name));
      if (server === undefined) return;
      this.asked.add(server);
      let picked: { value: string } | undefined;
      try {
        picked = await this.io.choose(sanitizeForTerminal(`New MCP server found in .mcp.json: ${server}`), MCP_APPROVAL_CHOICES, this.leaving);
      } catch {
        return; // leaving: nothing is decided
      }
      const decision = (picked?.value ?? 'reject') as McpApprovalDecision; // Esc: not used, as Claude Code's Esc
      const outcome = await this.api.approveMcpServers(this.conversationId, { servers: [server], decision });
      this.io.print(sanitizeForTerminal(formatMcpApprovalOutcome(outcome)));
    }
  }
}
