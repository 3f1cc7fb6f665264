/**
 * MCP tools as the model sees them (issue 22 §3), pure so the workflow can decide on them:
 * `mcp__<server>__<tool>` names within the Messages API's tool-name rule, permission rules on
 * them, concurrency safety, what a retried call may do, and the mapping of a `tools/call` result
 * to tool_result content.
 */
import { sha256Hex } from './digest';

/** The Messages API's rule for tool names. */
export const TOOL_NAME_RULE = /^[a-zA-Z0-9_-]{1,64}$/;
export const MAX_TOOL_NAME_LENGTH = 64;
/** Claude Code's prefix for MCP tools. */
export const MCP_TOOL_PREFIX = 'mcp__';

/** Claude Code's normalisation: every character the API does not allow becomes `_`. */
export function normalizeNameForMcp(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/** `mcp__<server>__<tool>` before the length rule (Claude Code's name). */
export function mcpToolFullName(server: string, tool: string): string {
  return `${MCP_TOOL_PREFIX}${normalizeNameForMcp(server)}__${normalizeNameForMcp(tool)}`;
}

/** `name` cut to 55 characters plus `_` and 8 hex of the SHA-256 of `identity`: deterministic and 64 at most. */
function shortened(name: string, identity: string): string {
  return `${name.slice(0, MAX_TOOL_NAME_LENGTH - 9)}_${sha256Hex(identity).slice(0, 8)}`;
}

export interface McpToolIdentity {
  server: string;
  tool: string;
}

/**
 * The API name of each (server, tool), in input order. Claude Code's `mcp__server__tool` when it
 * fits 64 characters and is unique; otherwise (too long, or two originals that normalise to the
 * same name, `a.b` and `a_b`) a name cut to 55 characters with a hash of the ORIGINAL pair, so the
 * same tool always gets the same name whatever else the servers offer.
 */
export function assignMcpToolNames(tools: readonly McpToolIdentity[]): string[] {
  const full = tools.map((tool) => mcpToolFullName(tool.server, tool.tool));
  const counts = new Map<string, number>();
  for (const name of full) counts.set(name, (counts.get(name) ?? 0) + 1);
  const names = full.map((name, index) =>
    name.length <= MAX_TOOL_NAME_LENGTH && counts.get(name) === 1 ? name : shortened(name, `${tools[index].server}\u0000${tools[index].tool}`),
  );
  // A shortened name could still meet a plain one (astronomically unlikely); never hand the API two equal names.
  const seen = new Set<string>();
  return names.map((name, index) => {
    let unique = name;
    for (let salt = 1; seen.has(unique); salt++) unique = shortened(name, `${tools[index].server}\u0000${tools[index].tool}\u0000${salt}`);
    seen.add(unique);
    return unique;
  });
}

export function isMcpToolName(name: string): boolean {
  return name.startsWith(MCP_TOOL_PREFIX);
}

/**
 * Whether a permission rule's tool part covers an MCP tool (Claude Code's rules): `mcp__server`
 * and `mcp__server__*` cover every tool of the server; `mcp__server__tool` covers that tool.
 * `toolName` is the tool's API name; `server` is the server's configured name.
 */
export function mcpRuleCovers(ruleToolName: string, tool: { name: string; server: string }): boolean {
  if (!isMcpToolName(ruleToolName)) return false;
  const serverPrefix = `${MCP_TOOL_PREFIX}${normalizeNameForMcp(tool.server)}`;
  if (ruleToolName === serverPrefix || ruleToolName === `${serverPrefix}__*`) return true;
  return ruleToolName === tool.name;
}

/** MCP's tool annotations (hints from the server; absent fields are unknown). */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** Claude Code runs an MCP tool beside others only when the server says it only reads. */
export function isMcpToolConcurrencySafe(annotations: McpToolAnnotations | undefined): boolean {
  return annotations?.readOnlyHint === true;
}

/**
 * What a call does when its activity runs again (at most once, as Bash): a new attempt after one
 * that started means the first may have run on a worker that died. Only a tool the server marks
 * read-only or idempotent is called again; any other is reported "may have run" and not repeated.
 */
export function decideMcpCallAttempt(annotations: McpToolAnnotations | undefined, attempt: number): { action: 'call' } | { action: 'report-may-have-run' } {
  if (attempt <= 1) return { action: 'call' };
  if (annotations?.readOnlyHint === true || annotations?.idempotentHint === true) return { action: 'call' };
  return { action: 'report-may-have-run' };
}

/** The tool_result text for a call that may have run (the model decides whether to check or retry). */
export function mcpMayHaveRunMessage(toolName: string): string {
  return (
    `The ${toolName} call was interrupted: the worker running it stopped before it reported a result, so the call may or may not have run. ` +
    'It was not repeated because the server does not mark this tool read-only or idempotent. Check its effect before calling it again.'
  );
}

// ---- results ----

/** tool_result content blocks (the Messages API's). */
export type ToolResultContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { type: 'base64'; media_type: 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp'; data: string } };

const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;

/**
 * Characters of text an MCP result keeps (Claude Code's default MAX_MCP_OUTPUT_TOKENS is 25,000
 * tokens, about 100,000 characters); the conversation's tool-result budget applies after this.
 */
export const MAX_MCP_RESULT_CHARS = 100_000;
/** Base64 characters of images kept per result (about 3.75 MB decoded, under the API's 5 MB per image). */
export const MAX_MCP_IMAGE_BASE64_CHARS = 5_000_000;

/**
 * A `tools/call` result as tool_result content: text as text; images the API takes as images;
 * resource links and embedded resources as text; anything else as a note naming it. `isError`
 * becomes `is_error`. Text beyond MAX_MCP_RESULT_CHARS is cut with a note.
 */
export function mapMcpCallResult(result: { content?: unknown[]; structuredContent?: unknown; isError?: boolean; toolResult?: unknown }): {
  content: ToolResultContentBlock[];
  isError: boolean;
} {
  const blocks: ToolResultContentBlock[] = [];
  let imageChars = 0;
  const items = Array.isArray(result.content) ? result.content : [];
  for (const raw of items) {
    const item = (raw ?? {}) as Record<string, any>;
    switch (item.type) {
      case 'text':
        blocks.push({ type: 'text', text: String(item.text ?? '') });
        break;
      case 'image': {
        const mediaType = String(item.mimeType ?? '');
        const data = String(item.data ?? '');
        if ((IMAGE_TYPES as readonly string[]).includes(mediaType) && imageChars + data.length <= MAX_MCP_IMAGE_BASE64_CHARS) {
          imageChars += data.length;
          blocks.push({ type: 'image', source: { type: 'base64', media_type: mediaType as (typeof IMAGE_TYPES)[number], data } });
        } else {
          blocks.push({
            type: 'text',
            text: `[image ${mediaType || 'of unknown type'}, ${data.length} base64 characters, not shown: ${(IMAGE_TYPES as readonly string[]).includes(mediaType) ? 'too large' : 'a type the model cannot read'}]`,
          });
        }
        break;
      }
      case 'audio':
        blocks.push({ type: 'text', text: `[audio ${String(item.mimeType ?? '')}, not shown: the model cannot hear]` });
        break;
      case 'resource_link':
        blocks.push({ type: 'text', text: resourceLinkText(item) });
        break;
      case 'resource': {
        const resource = (item.resource ?? {}) as Record<string, any>;
        if (typeof resource.text === 'string') {
          blocks.push({
            type: 'text',
            text: `[Resource ${String(resource.uri ?? '')}${resource.mimeType ? ` (${resource.mimeType})` : ''}]\n${resource.text}`,
          });
        } else if (
          typeof resource.blob === 'string' &&
          (IMAGE_TYPES as readonly string[]).includes(String(resource.mimeType)) &&
          imageChars + resource.blob.length <= MAX_MCP_IMAGE_BASE64_CHARS
        ) {
          imageChars += resource.blob.length;
          blocks.push({ type: 'image', source: { type: 'base64', media_type: resource.mimeType, data: resource.blob } });
        } else {
          blocks.push({
            type: 'text',
            text: `[Resource ${String(resource.uri ?? '')}${resource.mimeType ? ` (${resource.mimeType})` : ''}: binary, ${String(resource.blob ?? '').length} base64 characters, not shown]`,
          });
        }
        break;
      }
      default:
        blocks.push({ type: 'text', text: `[content of type ${JSON.stringify(item.type)} not shown]` });
    }
  }
  // A result with only structured content (or the protocol's older `toolResult`) is its JSON.
  if (blocks.length === 0 && result.structuredContent !== undefined) blocks.push({ type: 'text', text: JSON.stringify(result.structuredContent) });
  if (blocks.length === 0 && result.toolResult !== undefined) blocks.push({ type: 'text', text: JSON.stringify(result.toolResult) });
  if (blocks.length === 0) blocks.push({ type: 'text', text: '(no content)' });
  return { content: boundTextBlocks(blocks, MAX_MCP_RESULT_CHARS), isError: result.isError === true };
}

function resourceLinkText(item: Record<string, any>): string {
  const name = String(item.title ?? item.name ?? item.uri ?? '');
  const details = [item.mimeType, item.description].filter((part) => typeof part === 'string' && part !== '').join(', ');
  return `[Resource link: ${name}] ${String(item.uri ?? '')}${details ? ` (${details})` : ''}`;
}

/** Keeps text blocks within `limit` characters in total, cutting the first one that crosses it. */
export function boundTextBlocks(blocks: ToolResultContentBlock[], limit: number): ToolResultContentBlock[] {
  const total = blocks.reduce((sum, block) => sum + (block.type === 'text' ? block.text.length : 0), 0);
  if (total <= limit) return blocks;
  let remaining = limit;
  const kept: ToolResultContentBlock[] = [];
  for (const block of blocks) {
    if (block.type !== 'text') {
      kept.push(block);
      continue;
    }
    if (remaining <= 0) continue;
    kept.push(block.text.length <= remaining ? block : { type: 'text', text: block.text.slice(0, remaining) });
    remaining -= block.text.length;
  }
  kept.push({ type: 'text', text: `\n[MCP tool output truncated: it had ${total} characters of text, over the ${limit}-character limit for MCP results.]` });
  return kept;
}
