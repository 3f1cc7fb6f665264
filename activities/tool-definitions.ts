/**
 * API tool definitions built from the pure specs. Done on the activity side so the workflow
 * sends only tool names (small payloads) and never runs JSON-schema generation.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { getToolSpec } from '../common/tool-specs';

const cache = new Map<string, Anthropic.Tool>();

export function modelToolDefinitions(names: readonly string[]): Anthropic.Tool[] {
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
  return tools;
}
