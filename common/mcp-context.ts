/**
 * What the model and the user see of the MCP servers (issue 22 §3), pure, from a recorded
 * listing (listMcpServers): the tool definitions, the "# MCP Server Instructions" section (uncached,
 * rebuilt when the listing changes) and the `/mcp` / status lines.
 */
import type { McpServerStatus } from './activity-types';

/** A Messages API tool definition. */
export interface McpToolDefinition {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** The definitions of every connected server's tools (name order as listed). */
export function mcpToolDefinitions(servers: readonly McpServerStatus[]): McpToolDefinition[] {
  return servers
    .filter((server) => server.state === 'connected')
    .flatMap((server) =>
      server.tools.map((tool) => {
        // The API requires an object schema; a server that sends none gets the empty object schema.
        const schema = tool.inputSchema && tool.inputSchema.type === 'object' ? { ...tool.inputSchema } : { type: 'object', properties: {} };
        delete (schema as { $schema?: unknown }).$schema;
        return { name: tool.name, description: tool.description, input_schema: schema };
      }),
    );
}

/**
 * Claude Code's system section for server instructions, or undefined when no connected server
 * gave any (seed §2.5: a dynamic, uncached section).
 */
export function mcpInstructionsSection(servers: readonly McpServerStatus[]): string | undefined {
  const withInstructions = servers.filter((server) => server.state === 'connected' && server.instructions && server.instructions.trim() !== '');
  if (withInstructions.length === 0) return undefined;
  const blocks = withInstructions.map((server) => `## ${server.name}\n${server.instructions!.trim()}`);
  return `# MCP Server Instructions\n\nThe following MCP servers have provided instructions for how to use their tools and resources:\n\n${blocks.join('\n\n')}`;
}

const STATE_WORDS: Record<McpServerStatus['state'], string> = {
  connected: '✔ connected',
  failed: '✘ failed',
  'needs-approval': '△ needs approval',
  disabled: '○ disabled',
};

/** One line per server for `/mcp` and `status`: name, scope, transport, state, tool count or error. */
export function mcpStatusLines(servers: readonly McpServerStatus[]): string[] {
  return servers.map((server) => {
    const detail = server.state === 'connected' ? `${server.tools.length} tool${server.tools.length === 1 ? '' : 's'}` : (server.error ?? '');
    return `${server.name} (${server.scope}, ${server.transport}): ${STATE_WORDS[server.state]}${detail ? ` · ${detail}` : ''}`;
  });
}

/**
 * Whether the listing must be refreshed: a server's connection saw `tools/list_changed` since the
 * recorded listing (a call result carries the connection's count).
 */
export function mcpListingIsStale(listing: readonly McpServerStatus[], server: string, listChangedCount: number): boolean {
  const recorded = listing.find((status) => status.name === server);
  return recorded !== undefined && listChangedCount > recorded.listChangedCount;
}
