/**
 * MCP servers in the conversation (issue 22 items 1–3), the pure part: what the session carries
 * (the unexpanded config and the recorded listing), which tools are offered, what a call's result
 * becomes, what the feed and `/mcp` say. No Temporal import: unit-tested directly (style §3).
 */
import { MCP_APPROVAL_DECISIONS, type McpApprovalDecision, type McpServerStatus, type McpToolListing } from '../../common/activity-types';
import type { McpServerEntry } from '../../common/mcp-config';
import { type McpToolDefinition, mcpStatusLines, mcpToolDefinitions } from '../../common/mcp-context';
import { MAX_MCP_RESULT_CHARS, type ToolResultContentBlock, mcpToolFullName } from '../../common/mcp-tools';
import type { ToolFacts } from '../../common/permissions';

/** The MCP state a conversation carries across continue-as-new. */
export interface McpCarried {
  /** From loadMcpConfig: unexpanded (`${VAR}` stays; the worker expands it when it connects). */
  servers: McpServerEntry[];
  /** From the last listMcpServers (empty when no server is configured). */
  listing: McpServerStatus[];
  /** The connections' scope when not this conversation's own: a subagent uses its parent's (no second server process). */
  scope?: string;
}

/**
 * What a subagent inherits of its parent's MCP state (Claude Code: the general-purpose agent gets
 * the parent's MCP tools; an agent with a `tools` list only the `mcp__…` names it lists): the
 * servers that have one of `toolNames`, their recorded listing, and the parent's connection scope.
 * Undefined when none of the names is an MCP tool of the listing.
 */
export function inheritedMcpState(state: McpCarried | undefined, scope: string, toolNames: readonly string[]): McpCarried | undefined {
  if (!state) return undefined;
  const granted = new Set(toolNames);
  const listing = state.listing.filter((server) => server.state === 'connected' && server.tools.some((tool) => granted.has(tool.name)));
  if (listing.length === 0) return undefined;
  const names = new Set(listing.map((server) => server.name));
  return { servers: state.servers.filter((server) => names.has(server.name)), listing, scope };
}

/** Where a project server is approved, as Claude Code reads it. */
export const MCP_APPROVAL_HINT =
  'approve it with "enableAllProjectMcpServers": true or "enabledMcpjsonServers": ["<name>"] in .claude/settings.local.json (or ~/.claude/settings.json), then /mcp; or answer chat\'s question, or run durable-agent mcp approve <id> <name>';

/** A listed tool by its API name (`mcp__server__tool`), among the connected servers. */
export function findMcpTool(listing: readonly McpServerStatus[], name: string): McpToolListing | undefined {
  for (const server of listing) {
    if (server.state !== 'connected') continue;
    const tool = server.tools.find((candidate) => candidate.name === name);
    if (tool) return tool;
  }
  return undefined;
}

/**
 * The MCP tools the model is offered: every connected server's, or — for a conversation whose
 * tools are a fixed list (an Explore agent, `config.tools`) — only those the list names.
 */
export function offeredMcpTools(listing: readonly McpServerStatus[], offered: readonly string[] | undefined): McpToolDefinition[] {
  const all = mcpToolDefinitions(listing);
  return offered ? all.filter((tool) => offered.includes(tool.name)) : all;
}

/** The permission engine's facts of an MCP call of the listing (never a built-in tool). */
export function mcpCallFacts(listing: readonly McpServerStatus[], name: string): ToolFacts | undefined {
  const tool = findMcpTool(listing, name);
  if (!tool) return undefined;
  return { readOnly: tool.annotations?.readOnlyHint === true, validInput: true, mcpServer: tool.server };
}

/**
 * A call's mapped content as the tool_result text: text blocks joined; an image (the transcript
 * holds text results only) a note naming it; the whole cut to `budget` characters with a note
 * (seed §2.7 layer 1: the result's share of the message's budget).
 */
export function mcpResultText(content: readonly ToolResultContentBlock[], budget: number = MAX_MCP_RESULT_CHARS): string {
  const parts = content.map((block) =>
    block.type === 'text'
      ? block.text
      : `[image ${block.source.media_type}, ${block.source.data.length} base64 characters: images from MCP tools are not passed to the model yet]`,
  );
  const text = parts.join('\n');
  if (text.length <= budget) return text;
  const note = `\n[MCP tool output truncated: ${text.length} characters, over this result's budget of ${budget}.]`;
  return `${text.slice(0, Math.max(0, budget - note.length))}${note}`;
}

/** What the feed says about a listing: servers that failed, wait for approval, or changed state since `before`. */
export function mcpListingWarnings(listing: readonly McpServerStatus[], before: readonly McpServerStatus[] = []): string[] {
  const warnings: string[] = [];
  for (const server of listing) {
    const previous = before.find((candidate) => candidate.name === server.name);
    if (previous && previous.state === server.state && previous.error === server.error) continue;
    if (server.state === 'failed')
      warnings.push(
        `MCP server "${server.name}" failed: ${server.error ?? 'unknown error'}. Its tools are not available; the conversation goes on without them.`,
      );
    if (server.state === 'needs-approval')
      warnings.push(`MCP server "${server.name}" (${server.scope}) needs approval: ${MCP_APPROVAL_HINT.replace('<name>', server.name)}.`);
  }
  return warnings;
}

/** One info line for the feed when the tools changed (list_changed): the tools added and removed. */
export function mcpToolsChangedLine(before: readonly McpServerStatus[], after: readonly McpServerStatus[]): string | undefined {
  const names = (listing: readonly McpServerStatus[]) => new Set(mcpToolDefinitions(listing).map((tool) => tool.name));
  const was = names(before);
  const now = names(after);
  const added = [...now].filter((name) => !was.has(name));
  const removed = [...was].filter((name) => !now.has(name));
  if (added.length === 0 && removed.length === 0) return undefined;
  return `MCP tools changed:${added.length ? ` added ${added.join(', ')}` : ''}${added.length && removed.length ? ';' : ''}${removed.length ? ` removed ${removed.join(', ')}` : ''}.`;
}

/** `/mcp`'s answer: one line per server, and how to approve the ones waiting. */
export function mcpCommandText(state: McpCarried | undefined): string {
  if (!state || state.servers.length === 0) {
    return 'No MCP servers configured. Add them to .mcp.json in the project (approved in .claude/settings.local.json), to ~/.claude.json, or pass --mcp-config.';
  }
  const lines = ['MCP servers:', ...mcpStatusLines(state.listing).map((line) => `  ${line}`)];
  if (state.listing.some((server) => server.state === 'needs-approval')) lines.push('', `A server that needs approval: ${MCP_APPROVAL_HINT}.`);
  return lines.join('\n');
}

/** Whether `name` is `mcp__<server>__…` of a connected server (a tool it may have added since the listing). */
export function mightBeListedLater(listing: readonly McpServerStatus[], name: string): boolean {
  return listing.some((server) => server.state === 'connected' && name.startsWith(`${mcpToolFullName(server.name, '')}`));
}

/** `No such tool available` for an MCP name the listing does not hold (style §9: a result the model can act on). */
export function unknownMcpToolText(name: string, listing: readonly McpServerStatus[]): string {
  const available = mcpToolDefinitions(listing).map((tool) => tool.name);
  return `No such tool available: ${name}. ${available.length > 0 ? `MCP tools available: ${available.join(', ')}` : 'No MCP server offers tools in this conversation.'}`;
}

/** `approveMcpServers`: the servers a person answered for, and the answer. */
export interface McpApprovalRequest {
  servers: string[];
  decision: McpApprovalDecision;
}

/** What `approveMcpServers` answers: the file written and each configured server's state after listing again. */
export interface McpApprovalOutcome {
  decision: McpApprovalDecision;
  servers: string[];
  /** The settings file the choice went into. */
  file: string;
  states: Array<{ name: string; state: McpServerStatus['state']; tools: number; error?: string }>;
  /** `/mcp`'s lines after the change. */
  lines: string[];
}

/** Project servers waiting for a person's approval (Claude Code asks about each). */
export function mcpServersNeedingApproval(state: McpCarried | undefined): string[] {
  return state ? state.servers.filter((server) => server.scope === 'project' && server.approval === 'pending').map((server) => server.name) : [];
}

/**
 * The update's validator (style §6: rejects synchronously with a reason a person can act on):
 * a known decision, at least one server, each a project server waiting for approval.
 * Returns the problem, or undefined when the request may run.
 */
export function mcpApprovalProblem(request: unknown, state: McpCarried | undefined): string | undefined {
  if (request === null || typeof request !== 'object')
    return 'approveMcpServers takes {"servers": ["<name>", …], "decision": "approve" | "approve-all" | "reject"}';
  const { servers, decision } = request as Partial<McpApprovalRequest>;
  if (!MCP_APPROVAL_DECISIONS.includes(decision as McpApprovalDecision))
    return `approveMcpServers: decision must be one of ${MCP_APPROVAL_DECISIONS.join(', ')} (got ${JSON.stringify(decision)})`;
  if (!Array.isArray(servers) || servers.length === 0 || servers.some((name) => typeof name !== 'string'))
    return 'approveMcpServers: servers must be a non-empty list of server names';
  if (!state || state.servers.length === 0) return 'This conversation has no MCP servers to approve.';
  const pending = mcpServersNeedingApproval(state);
  for (const name of servers) {
    const server = state.servers.find((entry) => entry.name === name);
    if (!server) return `No MCP server "${name}" in this conversation (configured: ${state.servers.map((entry) => entry.name).join(', ')}).`;
    if (!pending.includes(name)) {
      return `MCP server "${name}" is not waiting for approval (${server.scope === 'project' ? (server.approval === 'rejected' ? 'rejected in disabledMcpjsonServers' : 'already approved') : `a ${server.scope} server, not from .mcp.json`}). Edit .claude/settings.local.json to change it.`;
    }
  }
  return undefined;
}

/** The update's answer from the listing after the change. */
export function mcpApprovalOutcome(request: McpApprovalRequest, file: string, state: McpCarried): McpApprovalOutcome {
  return {
    decision: request.decision,
    servers: [...request.servers],
    file,
    states: state.listing.map((server) => ({
      name: server.name,
      state: server.state,
      tools: server.tools.length,
      ...(server.error && { error: server.error }),
    })),
    lines: mcpStatusLines(state.listing),
  };
}
