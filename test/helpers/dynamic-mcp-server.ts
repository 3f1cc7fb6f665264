/**
 * A streamable HTTP MCP server built on the SDK's McpServer (as the SDK's examples are): one tool,
 * `add-tool`, that registers another tool while the client is connected (the SDK then sends
 * `notifications/tools/list_changed` on the client's GET stream). It notes the `x-test` and
 * `x-key` request headers it sees (a config's headers reach the server). Used by the MCP
 * activity tests and the conversation test.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { z } from 'zod';

export interface DynamicMcpServer {
  /** http://127.0.0.1:<port>/mcp */
  readonly url: string;
  /** `x-test` values and `x-key: <value>` lines seen on requests. */
  readonly seenHeaders: Set<string>;
  close(): Promise<void>;
}

export async function startDynamicMcpServer(options: { instructions?: string } = {}): Promise<DynamicMcpServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const seenHeaders = new Set<string>();
  const http = createHttpServer(async (request, response) => {
    if (typeof request.headers['x-test'] === 'string') seenHeaders.add(request.headers['x-test']);
    if (typeof request.headers['x-key'] === 'string') seenHeaders.add(`x-key: ${request.headers['x-key']}`);
    const sessionId = request.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (!transport) {
      const server = new McpServer(
        { name: 'dynamic-tools', version: '1.0.0' },
        { capabilities: { tools: { listChanged: true } }, ...(options.instructions !== undefined && { instructions: options.instructions }) },
      );
      server.registerTool('add-tool', { description: 'Adds a tool', inputSchema: { name: z.string() } }, async ({ name }) => {
        server.registerTool(name, { description: 'Added at run time' }, async () => ({ content: [{ type: 'text', text: `${name} ran` }] }));
        return { content: [{ type: 'text', text: `added ${name}` }] };
      });
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void transports.set(id, created),
      });
      await server.connect(created);
      transport = created;
    }
    await transport.handleRequest(request, response);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seenHeaders,
    close: async () => {
      await Promise.all([...transports.values()].map((transport) => transport.close()));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
