/**
 * API tool definitions built from the pure specs. Done on the activity side so the workflow
 * sends only tool names (small payloads) and never runs JSON-schema generation.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import type { McpToolDefinition } from '../common/mcp-context';
import { STRUCTURED_OUTPUT_TOOL_DESCRIPTION, STRUCTURED_OUTPUT_TOOL_NAME } from '../common/structured-output';
import { getToolSpec } from '../common/tool-specs';
import type { WebSearchToolDefinition } from '../common/web-search';

const cache = new Map<string, Anthropic.Tool>();

/**
 * Definitions of the named tools, plus StructuredOutput with the user's schema when one is given,
 * plus the MCP servers' tools (issue 22: definitions from the recorded listing, after the built-in ones).
 */
export function modelToolDefinitions(
  names: readonly string[],
  structuredOutputSchema?: Record<string, unknown>,
  mcpTools: readonly McpToolDefinition[] = [],
): Anthropic.Tool[] {
  const tools: Anthropic.Tool[] = [];
  for (const name of names) {
    let tool = cache.get(name);
    if (!tool) {
      const spec = getToolSpec(name);
      if (!spec) continue;
      const schema = z.toJSONSchema(spec.inputSchema, { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
      delete schema.$schema;
      tool = { name: spec.name, description: spec.description, input_schema: schema as Anthropic.Tool.InputSchema };
      cache.set(name, tool);
    }
    tools.push(tool);
  }
  if (structuredOutputSchema) {
    tools.push({
      name: STRUCTURED_OUTPUT_TOOL_NAME,
      description: STRUCTURED_OUTPUT_TOOL_DESCRIPTION,
      input_schema: structuredOutputSchema as Anthropic.Tool.InputSchema,
    });
  }
  for (const tool of mcpTools) tools.push({ name: tool.name, description: tool.description, input_schema: tool.input_schema as Anthropic.Tool.InputSchema });
  return tools;
}

/** A request's `tools`: the client tools' definitions, then the server-side web search tool when offered (issue 33). */
export function requestTools(request: {
  toolNames: readonly string[];
  structuredOutputSchema?: Record<string, unknown>;
  mcpTools?: readonly McpToolDefinition[];
  webSearch?: WebSearchToolDefinition;
}): Anthropic.ToolUnion[] {
  const tools: Anthropic.ToolUnion[] = modelToolDefinitions(request.toolNames, request.structuredOutputSchema, request.mcpTools);
  if (request.webSearch) tools.push({ ...request.webSearch });
  return tools;
}
