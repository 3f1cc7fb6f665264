/**
 * A pure validator of Messages API request bodies (`POST /v1/messages` and
 * `/v1/messages/count_tokens`), used by the scripted model server so that the engine's requests
 * are checked the way the real API checks them.
 *
 * The contract is "at least as strict as the real API": every request the real API rejects with a
 * 400 invalid_request_error must be rejected here too, and when it is unclear whether the API
 * accepts something, it is rejected. The returned string is what the API puts in
 * `error.message`, with its `messages.N.content.M…` path prefixes, using the API's own wording
 * wherever it could be found (each rule cites where); the few messages marked "own wording" are
 * rules whose exact text was not found.
 *
 * Sources (cited per rule below by their short name):
 *  - [sdk]    @anthropic-ai/sdk 1.14.0 type docs, resources/messages/messages.d.ts
 *             (MessageCreateParams, TextBlockParam, Tool, ThinkingConfigEnabled, CacheControlEphemeral)
 *  - [cc-N]   anthropics/claude-code issue #N (error bodies pasted by users of the real API)
 *  - [other]  the GitHub issue or PR named in the rule's comment
 */
import { jsonSchemaProblem } from '../common/json-schema-check';
import { catalogModel } from './model-catalog';

/** Which endpoint the body was sent to. */
export type MessagesEndpoint = 'messages' | 'count_tokens';

type Obj = Record<string, unknown>;

/** One content block with where it sits in the request. */
interface Located {
  block: Obj;
  /** Index of its message in `messages`. */
  message: number;
  /** Index of the block in that message's content (0 for string content). */
  index: number;
}

/** Consecutive messages of one role, which the API merges into one turn. */
interface Turn {
  role: 'user' | 'assistant';
  /** Message indexes, in order. */
  messages: number[];
  blocks: Located[];
}

/** A checked request: what the relational rules need once the shapes are known to be right. */
interface Request {
  body: Obj;
  kind: MessagesEndpoint;
  /** The model's window as the caller knows it (a beta header may open 1M); default scriptedContextWindow. */
  contextWindow?: number;
  messages: Array<{ role: 'user' | 'assistant'; content: string | Obj[] }>;
}

const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,128}$/;
const TOOL_USE_ID_PATTERN = /^[a-zA-Z0-9_-]+$/;
const MAX_CACHE_CONTROL_BLOCKS = 4;
const MIN_THINKING_BUDGET = 1024;

/** Top-level fields of MessageCreateParams [sdk], plus sampling fields older models still take. */
const MESSAGES_FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'stream',
  'metadata',
  'stop_sequences',
  'temperature',
  'top_p',
  'top_k',
  'service_tier',
  'cache_control',
  'container',
  'context_management',
  'mcp_servers',
  'output_config',
  'inference_geo',
  'speed',
  'diagnostics',
  'user_profile_id',
  'workspace_id',
]);
/** Top-level fields of MessageCountTokensParams [sdk]: no max_tokens, stream or metadata. */
const COUNT_TOKENS_FIELDS = new Set([
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'cache_control',
  'context_management',
  'mcp_servers',
  'output_config',
  'speed',
]);

/** Block types and their allowed fields; image/document are accepted without a deeper look. */
const BLOCK_FIELDS: Record<string, Set<string> | undefined> = {
  text: new Set(['type', 'text', 'cache_control', 'citations']),
  tool_use: new Set(['type', 'id', 'name', 'input', 'cache_control', 'caller']),
  tool_result: new Set(['type', 'tool_use_id', 'content', 'is_error', 'cache_control']),
  thinking: new Set(['type', 'thinking', 'signature']),
  redacted_thinking: new Set(['type', 'data']),
  server_tool_use: new Set(['type', 'id', 'name', 'input', 'cache_control', 'caller']),
  web_search_tool_result: new Set(['type', 'tool_use_id', 'content', 'cache_control', 'caller']),
  image: undefined,
  document: undefined,
};
const USER_BLOCKS = new Set(['text', 'image', 'document', 'tool_result']);
const ASSISTANT_BLOCKS = new Set(['text', 'tool_use', 'thinking', 'redacted_thinking', 'server_tool_use', 'web_search_tool_result']);
const TOOL_RESULT_CONTENT_BLOCKS = new Set(['text', 'image', 'document']);
/** The web search server tool's fields [sdk: WebSearchTool20250305]. */
const WEB_SEARCH_TOOL_FIELDS = new Set([
  'type',
  'name',
  'max_uses',
  'allowed_domains',
  'blocked_domains',
  'user_location',
  'cache_control',
  'allowed_callers',
  'defer_loading',
  'strict',
]);
const SERVER_TOOL_USE_ID_PATTERN = /^srvtoolu_[a-zA-Z0-9_]+$/;
const CITATION_FIELDS = new Set(['type', 'url', 'title', 'cited_text', 'encrypted_index']);
const WEB_SEARCH_RESULT_FIELDS = new Set(['type', 'url', 'title', 'encrypted_content', 'page_age']);
const TOOL_FIELDS = new Set([
  'type',
  'name',
  'description',
  'input_schema',
  'cache_control',
  'strict',
  'defer_loading',
  'allowed_callers',
  'eager_input_streaming',
  'input_examples',
]);

/**
 * Returns the real API's `error.message` for a body the API would answer with 400
 * invalid_request_error, or undefined when the body is acceptable.
 */
export function validateMessagesRequest(body: unknown, kind: MessagesEndpoint, options: { contextWindow?: number } = {}): string | undefined {
  const shape = checkBodyIsObject(body) ?? checkTopLevelFields(body as Obj, kind);
  if (shape) return shape;
  const obj = body as Obj;
  const fieldError =
    checkModel(obj) ??
    checkMaxTokens(obj, kind) ??
    checkStream(obj) ??
    checkMessagesArray(obj) ??
    checkSystem(obj.system) ??
    checkTools(obj.tools) ??
    checkToolChoice(obj) ??
    checkThinkingConfig(obj, kind) ??
    checkTopLevelCacheControl(obj);
  if (fieldError) return fieldError;

  const request: Request = { body: obj, kind, messages: obj.messages as Request['messages'], contextWindow: options.contextWindow };
  const rules: Array<(request: Request) => string | undefined> = [
    checkMessageBlocks,
    checkNonEmptyContent,
    checkTextBlocks,
    checkFirstMessageIsUser,
    checkToolBlocksNeedTools,
    checkToolUseIds,
    checkToolPairing,
    checkServerToolPairing,
    checkThinkingFirstWhenEnabled,
    checkFinalAssistantWhitespace,
    checkCacheControlCount,
    checkCacheTtlOrder,
    checkContextLimit,
  ];
  for (const rule of rules) {
    const error = rule(request);
    if (error) return error;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

/** Context window the scripted server assumes for a model: the catalog's `max_input_tokens`, else 200k. */
export function scriptedContextWindow(model: string): number {
  return catalogModel(model)?.max_input_tokens ?? 200_000;
}

/**
 * Input (estimated as the scripted server does: chars/4 of system, messages and tools) plus
 * `max_tokens` must fit the model's window. The real API's wording, as reported in public
 * issues: "input length and `max_tokens` exceed context limit: X + Y > Z, decrease input length
 * or `max_tokens` and try again".
 */
function checkContextLimit(request: Request): string | undefined {
  if (request.kind !== 'messages' || typeof request.body.max_tokens !== 'number') return undefined;
  let chars = 0;
  for (const part of [request.body.system, request.body.messages, request.body.tools]) if (part !== undefined) chars += JSON.stringify(part).length;
  const input = Math.ceil(chars / 4);
  const limit = request.contextWindow ?? scriptedContextWindow(String(request.body.model));
  if (input + request.body.max_tokens <= limit) return undefined;
  return `input length and \`max_tokens\` exceed context limit: ${input} + ${request.body.max_tokens} > ${limit}, decrease input length or \`max_tokens\` and try again`;
}

function isObject(value: unknown): value is Obj {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function extraField(value: Obj, allowed: Set<string>): string | undefined {
  return Object.keys(value).find((key) => !allowed.has(key));
}

function isWhitespaceOnly(text: string): boolean {
  return text.trim() === '';
}

/** Every content block of every message (string content counts as one text block). */
function allBlocks(request: Request): Located[] {
  const out: Located[] = [];
  request.messages.forEach((message, messageIndex) => {
    if (typeof message.content === 'string') {
      out.push({ block: { type: 'text', text: message.content }, message: messageIndex, index: 0 });
    } else {
      message.content.forEach((block, index) => out.push({ block, message: messageIndex, index }));
    }
  });
  return out;
}

/** Consecutive same-role messages as one turn, as the API combines them [sdk: MessageCreateParams.messages]. */
function turnsOf(request: Request): Turn[] {
  const turns: Turn[] = [];
  const blocks = allBlocks(request);
  request.messages.forEach((message, index) => {
    const last = turns[turns.length - 1];
    const own = blocks.filter((located) => located.message === index);
    if (last && last.role === message.role) {
      last.messages.push(index);
      last.blocks.push(...own);
    } else {
      turns.push({ role: message.role, messages: [index], blocks: own });
    }
  });
  return turns;
}

// ---------------------------------------------------------------------------------------------
// Top-level fields
// ---------------------------------------------------------------------------------------------

// The body must be a JSON object (own wording: the API's parse error text was not found).
function checkBodyIsObject(body: unknown): string | undefined {
  return isObject(body) ? undefined : 'Request body must be a JSON object';
}

// Unknown fields are refused: "<field>: Extra inputs are not permitted" [other: amrit110/oli#7
// "response_format: Extra inputs are not permitted"; Aider-AI/aider#3367 "extra_body: …"].
function checkTopLevelFields(body: Obj, kind: MessagesEndpoint): string | undefined {
  const extra = extraField(body, kind === 'messages' ? MESSAGES_FIELDS : COUNT_TOKENS_FIELDS);
  return extra === undefined ? undefined : `${extra}: Extra inputs are not permitted`;
}

// `model` is required [sdk]; "model: Field required" follows the API's pydantic wording, as
// "max_tokens: Field required" below (the empty-string message is own wording).
function checkModel(body: Obj): string | undefined {
  if (body.model === undefined) return 'model: Field required';
  if (typeof body.model !== 'string') return 'model: Input should be a valid string';
  if (body.model === '') return 'model: String should have at least 1 character';
  return undefined;
}

// max_tokens is required for /v1/messages ("max_tokens: Field required" [other:
// tickernelz/opencode-mem#50]); an integer ≥ 1 here, stricter than [sdk], which documents 0 for
// cache pre-warming (the engine never sends 0). count_tokens refuses it (extra field, above).
function checkMaxTokens(body: Obj, kind: MessagesEndpoint): string | undefined {
  if (kind !== 'messages') return undefined;
  if (body.max_tokens === undefined) return 'max_tokens: Field required';
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens)) return 'max_tokens: Input should be a valid integer';
  if (body.max_tokens < 1) return 'max_tokens: Input should be greater than or equal to 1';
  return undefined;
}

// `stream` is a boolean [sdk] (pydantic wording, not seen verbatim).
function checkStream(body: Obj): string | undefined {
  return body.stream === undefined || typeof body.stream === 'boolean' ? undefined : 'stream: Input should be a valid boolean';
}

// messages: required list, at least one message ("messages: at least one message is required"
// [other: devoxx/DevoxxGenieIDEAPlugin#567]); each {role, content} with role user/assistant.
// role "system" exists on newer models only ("role 'system' is not supported on this model"
// [cc-61412]) with placement rules ([cc-73821]); the server cannot know the model, so it refuses.
function checkMessagesArray(body: Obj): string | undefined {
  if (body.messages === undefined) return 'messages: Field required';
  if (!Array.isArray(body.messages)) return 'messages: Input should be a valid list';
  if (body.messages.length === 0) return 'messages: at least one message is required';
  for (const [index, message] of body.messages.entries()) {
    const path = `messages.${index}`;
    if (!isObject(message)) return `${path}: Input should be a valid dictionary`;
    if (message.role === undefined) return `${path}.role: Field required`;
    if (message.role === 'system') return "role 'system' is not supported on this model";
    if (message.role !== 'user' && message.role !== 'assistant') return `${path}.role: Input should be 'user' or 'assistant'`;
    if (message.content === undefined) return `${path}.content: Field required`;
    if (typeof message.content !== 'string' && !Array.isArray(message.content)) return `${path}.content: Input should be a valid string or list`;
    const extra = extraField(message, new Set(['role', 'content']));
    if (extra !== undefined) return `${path}.${extra}: Extra inputs are not permitted`;
  }
  return undefined;
}

// system: a string or a list of text blocks [sdk: system?: string | Array<TextBlockParam>].
// Empty text with cache_control: "system.1: cache_control cannot be set for empty text blocks"
// [other: vellum-ai/vellum-assistant#30712]; other empty or blank text follows the messages
// wording ("text content blocks must be non-empty" / "…must contain non-whitespace text",
// [cc-53473], [cc-23352]) with a `system:` prefix (not seen verbatim for system).
function checkSystem(system: unknown): string | undefined {
  if (system === undefined) return undefined;
  if (typeof system === 'string') {
    if (system === '') return 'system: text content blocks must be non-empty';
    return isWhitespaceOnly(system) ? 'system: text content blocks must contain non-whitespace text' : undefined;
  }
  if (!Array.isArray(system)) return 'system: Input should be a valid string or list';
  for (const [index, block] of system.entries()) {
    const path = `system.${index}`;
    if (!isObject(block)) return `${path}: Input should be a valid dictionary`;
    if (block.type !== 'text') return `${path}.type: Input should be 'text'`;
    const extra = extraField(block, BLOCK_FIELDS.text!);
    if (extra !== undefined) return `${path}.${extra}: Extra inputs are not permitted`;
    if (block.text === undefined) return `${path}.text: Field required`;
    if (typeof block.text !== 'string') return `${path}.text: Input should be a valid string`;
    const cacheError = checkCacheControlShape(block.cache_control, path);
    if (cacheError) return cacheError;
    if (hasCacheControl(block) && block.text === '') return `${path}: cache_control cannot be set for empty text blocks`;
    if (block.text === '') return 'system: text content blocks must be non-empty';
    if (isWhitespaceOnly(block.text)) return 'system: text content blocks must contain non-whitespace text';
  }
  return undefined;
}

// tools: custom tools and the web search server tool (any other `type` is refused).
// Name pattern: "tools.16.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
// [other: modelcontextprotocol/modelcontextprotocol#1345]; unique names: "tools: Tool names must
// be unique." [cc-10687]; input_schema is a JSON schema object whose type is "object" [sdk:
// Tool.InputSchema] (its message is pydantic wording, not seen verbatim).
function checkTools(tools: unknown): string | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return 'tools: Input should be a valid list';
  const names = new Set<string>();
  for (const [index, tool] of tools.entries()) {
    if (!isObject(tool)) return `tools.${index}: Input should be a valid dictionary`;
    if (tool.type === 'web_search_20250305') {
      const error = checkWebSearchTool(tool, `tools.${index}.web_search_20250305`);
      if (error) return error;
      if (names.has('web_search')) return 'tools: Tool names must be unique.';
      names.add('web_search');
      continue;
    }
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
      return `tools.${index}: Input tag '${String(tool.type)}' found using 'type' does not match any of the expected tags: 'custom', 'web_search_20250305'`;
    }
    const path = `tools.${index}.custom`;
    const extra = extraField(tool, TOOL_FIELDS);
    if (extra !== undefined) return `${path}.${extra}: Extra inputs are not permitted`;
    if (tool.name === undefined) return `${path}.name: Field required`;
    if (typeof tool.name !== 'string' || !TOOL_NAME_PATTERN.test(tool.name)) {
      return `${path}.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
    }
    if (tool.description !== undefined && typeof tool.description !== 'string') return `${path}.description: Input should be a valid string`;
    if (tool.input_schema === undefined) return `${path}.input_schema: Field required`;
    if (!isObject(tool.input_schema)) return `${path}.input_schema: Input should be a valid dictionary`;
    if (tool.input_schema.type !== 'object') return `${path}.input_schema.type: Input should be 'object'`;
    // The schema itself must be draft 2020-12 JSON Schema (the API's message, as reported in
    // acomagu/vscode-as-mcp-server#6); a user's --json-schema becomes an input_schema.
    if (jsonSchemaProblem(tool.input_schema)) {
      return `${path}.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use at https://docs.claude.com/en/docs/tool-use.`;
    }
    const cacheError = checkCacheControlShape(tool.cache_control, path);
    if (cacheError) return cacheError;
    if (names.has(tool.name)) return 'tools: Tool names must be unique.';
    names.add(tool.name);
  }
  return undefined;
}

// The web search server tool [sdk: WebSearchTool20250305; API docs "Web search tool"]: its name is
// `web_search`; `max_uses` a positive integer; `allowed_domains` and `blocked_domains` lists of
// domains, never both in one request (pydantic wording for the shapes, own wording for the pair).
function checkWebSearchTool(tool: Obj, path: string): string | undefined {
  const extra = extraField(tool, WEB_SEARCH_TOOL_FIELDS);
  if (extra !== undefined) return `${path}.${extra}: Extra inputs are not permitted`;
  if (tool.name === undefined) return `${path}.name: Field required`;
  if (tool.name !== 'web_search') return `${path}.name: Input should be 'web_search'`;
  if (tool.max_uses !== undefined && tool.max_uses !== null) {
    if (typeof tool.max_uses !== 'number' || !Number.isInteger(tool.max_uses)) return `${path}.max_uses: Input should be a valid integer`;
    if (tool.max_uses < 1) return `${path}.max_uses: Input should be greater than or equal to 1`;
  }
  for (const field of ['allowed_domains', 'blocked_domains']) {
    const list = tool[field];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) return `${path}.${field}: Input should be a valid list`;
    for (const [index, domain] of list.entries()) if (typeof domain !== 'string') return `${path}.${field}.${index}: Input should be a valid string`;
  }
  if (Array.isArray(tool.allowed_domains) && Array.isArray(tool.blocked_domains)) {
    return `${path}: allowed_domains and blocked_domains cannot be used together; use one or the other`;
  }
  return checkCacheControlShape(tool.cache_control, path);
}

// tool_choice: auto | any | tool (with name) | none [sdk: ToolChoice]. Forcing a tool needs
// tools, a named tool must exist, and forced tool use excludes thinking (own wording for these).
function checkToolChoice(body: Obj): string | undefined {
  const choice = body.tool_choice;
  if (choice === undefined) return undefined;
  if (!isObject(choice)) return 'tool_choice: Input should be a valid dictionary';
  const type = choice.type;
  if (type !== 'auto' && type !== 'any' && type !== 'tool' && type !== 'none') {
    return `tool_choice: Input tag '${String(type)}' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'`;
  }
  const allowed = new Set(type === 'none' ? ['type'] : type === 'tool' ? ['type', 'name', 'disable_parallel_tool_use'] : ['type', 'disable_parallel_tool_use']);
  const extra = extraField(choice, allowed);
  if (extra !== undefined) return `tool_choice.${type}.${extra}: Extra inputs are not permitted`;
  if (choice.disable_parallel_tool_use !== undefined && typeof choice.disable_parallel_tool_use !== 'boolean') {
    return `tool_choice.${type}.disable_parallel_tool_use: Input should be a valid boolean`;
  }
  const tools = Array.isArray(body.tools) ? (body.tools as Obj[]) : [];
  if (type === 'tool') {
    if (choice.name === undefined) return 'tool_choice.tool.name: Field required';
    if (typeof choice.name !== 'string') return 'tool_choice.tool.name: Input should be a valid string';
    if (!tools.some((tool) => tool.name === choice.name)) return `tool_choice: tool '${choice.name}' was not found in tools`;
  }
  if ((type === 'any' || type === 'tool') && tools.length === 0) return 'tool_choice may only be specified while providing tools.';
  if ((type === 'any' || type === 'tool') && isObject(body.thinking) && body.thinking.type === 'enabled') {
    return 'Thinking may not be enabled when tool_choice forces tool use.';
  }
  return undefined;
}

// thinking: enabled (budget_tokens ≥ 1024 and < max_tokens) | disabled | adaptive | between_tools
// [sdk: ThinkingConfigParam]. "thinking.enabled.budget_tokens: Input should be greater than or
// equal to 1024" [other: themaximalist/llm.js#30]; the max_tokens message verbatim from
// [other: liuw1535/antigravity2api-nodejs#149].
function checkThinkingConfig(body: Obj, kind: MessagesEndpoint): string | undefined {
  const thinking = body.thinking;
  if (thinking === undefined) return undefined;
  if (!isObject(thinking)) return 'thinking: Input should be a valid dictionary';
  const fields: Record<string, string[]> = {
    enabled: ['type', 'budget_tokens', 'display'],
    disabled: ['type'],
    adaptive: ['type', 'display'],
    between_tools: ['type'],
  };
  const type = String(thinking.type);
  if (!(type in fields)) {
    return `thinking: Input tag '${type}' found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive', 'between_tools'`;
  }
  const extra = extraField(thinking, new Set(fields[type]));
  if (extra !== undefined) return `thinking.${type}.${extra}: Extra inputs are not permitted`;
  if (thinking.display !== undefined && thinking.display !== null && thinking.display !== 'summarized' && thinking.display !== 'omitted') {
    return `thinking.${type}.display: Input should be 'summarized' or 'omitted'`;
  }
  if (type !== 'enabled') return undefined;
  const budget = thinking.budget_tokens;
  if (budget === undefined) return 'thinking.enabled.budget_tokens: Field required';
  if (typeof budget !== 'number' || !Number.isInteger(budget)) return 'thinking.enabled.budget_tokens: Input should be a valid integer';
  if (budget < MIN_THINKING_BUDGET) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  if (kind === 'messages' && typeof body.max_tokens === 'number' && body.max_tokens <= budget) {
    return '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
  }
  return undefined;
}

// Top-level cache_control (automatic caching) has the CacheControlEphemeral shape [sdk].
function checkTopLevelCacheControl(body: Obj): string | undefined {
  return checkCacheControlShape(body.cache_control, '');
}

// cache_control is {type: "ephemeral", ttl?: "5m" | "1h"} [sdk: CacheControlEphemeral]; unknown
// keys: "system.1.cache_control.ephemeral.scope: Extra inputs are not permitted" [other:
// caozhiyuan/copilot-api#145].
function checkCacheControlShape(cacheControl: unknown, path: string): string | undefined {
  if (cacheControl === undefined || cacheControl === null) return undefined;
  const at = path === '' ? 'cache_control' : `${path}.cache_control`;
  if (!isObject(cacheControl)) return `${at}: Input should be a valid dictionary`;
  if (cacheControl.type !== 'ephemeral') {
    return `${at}: Input tag '${String(cacheControl.type)}' found using 'type' does not match any of the expected tags: 'ephemeral'`;
  }
  const extra = extraField(cacheControl, new Set(['type', 'ttl']));
  if (extra !== undefined) return `${at}.ephemeral.${extra}: Extra inputs are not permitted`;
  if (cacheControl.ttl !== undefined && cacheControl.ttl !== '5m' && cacheControl.ttl !== '1h') {
    return `${at}.ephemeral.ttl: Input should be '5m' or '1h'`;
  }
  return undefined;
}

function hasCacheControl(block: Obj): boolean {
  return block.cache_control !== undefined && block.cache_control !== null;
}

// ---------------------------------------------------------------------------------------------
// Content blocks
// ---------------------------------------------------------------------------------------------

// Block schemas. Unknown fields: "messages.65.content.1.tool_use.text: Extra inputs are not
// permitted" [cc-4378]; cache_control on thinking: "messages.1.content.0.thinking.cache_control:
// Extra inputs are not permitted" [other: router-for-me/CLIProxyAPI#512]; thinking needs its
// signature: "messages.1.content.0.thinking.signature: Field required" [cc-26542], and an empty
// one is "messages.1.content.0: Invalid `signature` in `thinking` block" [other:
// lbjlaq/Antigravity-Manager#498]; redacted_thinking needs data: "messages.0.content.0.
// redacted_thinking.data: Field required" [other: diegosouzapw/OmniRoute#2191]; tool_use.id
// pattern "messages.1.content.1.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
// [other: CommandCodeAI/command-code#323]. Unknown block types and blocks of the wrong role are
// refused (own wording).
function checkMessageBlocks(request: Request): string | undefined {
  for (const [messageIndex, message] of request.messages.entries()) {
    if (typeof message.content === 'string') continue;
    const allowedTypes = message.role === 'user' ? USER_BLOCKS : ASSISTANT_BLOCKS;
    for (const [index, block] of message.content.entries()) {
      const path = `messages.${messageIndex}.content.${index}`;
      if (!isObject(block)) return `${path}: Input should be a valid dictionary`;
      const type = block.type;
      if (typeof type !== 'string' || !(type in BLOCK_FIELDS)) {
        return `${path}: Input tag '${String(type)}' found using 'type' does not match any of the expected tags: ${Object.keys(BLOCK_FIELDS)
          .map((name) => `'${name}'`)
          .join(', ')}`;
      }
      if (!allowedTypes.has(type)) return `${path}: \`${type}\` blocks are not allowed in \`${message.role}\` messages`;
      const error = checkBlockShape(block, type, path);
      if (error) return error;
    }
  }
  return undefined;
}

function checkBlockShape(block: Obj, type: string, path: string): string | undefined {
  const fields = BLOCK_FIELDS[type];
  if (!fields) return undefined; // image / document: not sent by the engine, not looked into
  const extra = extraField(block, fields);
  if (extra !== undefined) return `${path}.${type}.${extra}: Extra inputs are not permitted`;
  const string = (field: string): string | undefined => {
    if (block[field] === undefined) return `${path}.${type}.${field}: Field required`;
    return typeof block[field] === 'string' ? undefined : `${path}.${type}.${field}: Input should be a valid string`;
  };
  switch (type) {
    case 'text':
      return string('text') ?? checkCitations(block.citations, `${path}.text.citations`) ?? checkCacheControlShape(block.cache_control, path);
    case 'server_tool_use': {
      const error = string('id') ?? string('name');
      if (error) return error;
      if (!SERVER_TOOL_USE_ID_PATTERN.test(block.id as string)) return `${path}.server_tool_use.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'`;
      if (block.name !== 'web_search') return `${path}.server_tool_use.name: Input should be 'web_search'`;
      if (!isObject(block.input)) return `${path}.server_tool_use.input: Input should be a valid dictionary`;
      return checkCacheControlShape(block.cache_control, path);
    }
    case 'web_search_tool_result':
      return (
        string('tool_use_id') ??
        checkWebSearchResultContent(block.content, `${path}.web_search_tool_result.content`) ??
        checkCacheControlShape(block.cache_control, path)
      );
    case 'tool_use': {
      const error = string('id') ?? string('name');
      if (error) return error;
      if (!TOOL_USE_ID_PATTERN.test(block.id as string)) return `${path}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
      if (block.name === '') return `${path}.tool_use.name: String should have at least 1 character`;
      if (block.input === undefined) return `${path}.tool_use.input: Field required`;
      if (!isObject(block.input)) return `${path}.tool_use.input: Input should be a valid dictionary`;
      return checkCacheControlShape(block.cache_control, path);
    }
    case 'tool_result':
      return string('tool_use_id') ?? checkToolResultShape(block, path) ?? checkCacheControlShape(block.cache_control, path);
    case 'thinking':
      return string('thinking') ?? string('signature') ?? (block.signature === '' ? `${path}: Invalid \`signature\` in \`thinking\` block` : undefined);
    case 'redacted_thinking':
      if (string('data')) return string('data');
      return block.data === '' ? `${path}.redacted_thinking.data: String should have at least 1 character` : undefined;
    default:
      return undefined;
  }
}

// A text block's citations [sdk: TextCitationParam]: the engine sends back only web search ones.
function checkCitations(citations: unknown, path: string): string | undefined {
  if (citations === undefined || citations === null) return undefined;
  if (!Array.isArray(citations)) return `${path}: Input should be a valid list`;
  for (const [index, citation] of citations.entries()) {
    const at = `${path}.${index}`;
    if (!isObject(citation)) return `${at}: Input should be a valid dictionary`;
    if (citation.type !== 'web_search_result_location') {
      return `${at}: Input tag '${String(citation.type)}' found using 'type' does not match any of the expected tags: 'char_location', 'page_location', 'content_block_location', 'web_search_result_location', 'search_result_location'`;
    }
    const extra = extraField(citation, CITATION_FIELDS);
    if (extra !== undefined) return `${at}.web_search_result_location.${extra}: Extra inputs are not permitted`;
    for (const field of ['url', 'cited_text', 'encrypted_index']) {
      if (typeof citation[field] !== 'string') return `${at}.web_search_result_location.${field}: Field required`;
    }
  }
  return undefined;
}

// A web_search_tool_result's content: a list of web_search_result blocks, or the error object
// [sdk: WebSearchToolResultBlockParamContent].
function checkWebSearchResultContent(content: unknown, path: string): string | undefined {
  if (isObject(content)) {
    if (content.type !== 'web_search_tool_result_error' || typeof content.error_code !== 'string') return `${path}: Input should be a valid list`;
    return undefined;
  }
  if (!Array.isArray(content)) return `${path}: Input should be a valid list`;
  for (const [index, result] of content.entries()) {
    const at = `${path}.${index}`;
    if (!isObject(result) || result.type !== 'web_search_result') return `${at}.type: Input should be 'web_search_result'`;
    const extra = extraField(result, WEB_SEARCH_RESULT_FIELDS);
    if (extra !== undefined) return `${at}.${extra}: Extra inputs are not permitted`;
    for (const field of ['url', 'title', 'encrypted_content']) if (typeof result[field] !== 'string') return `${at}.${field}: Field required`;
  }
  return undefined;
}

// A tool_result's content is a string or a list of text/image/document blocks [sdk:
// ToolResultBlockParam]; is_error is a boolean.
function checkToolResultShape(block: Obj, path: string): string | undefined {
  if (block.is_error !== undefined && typeof block.is_error !== 'boolean') return `${path}.tool_result.is_error: Input should be a valid boolean`;
  const content = block.content;
  if (content === undefined || typeof content === 'string') return undefined;
  if (!Array.isArray(content)) return `${path}.tool_result.content: Input should be a valid string or list`;
  for (const [index, inner] of content.entries()) {
    const innerPath = `${path}.tool_result.content.${index}`;
    if (!isObject(inner)) return `${innerPath}: Input should be a valid dictionary`;
    const type = inner.type;
    if (typeof type !== 'string' || !TOOL_RESULT_CONTENT_BLOCKS.has(type)) {
      return `${innerPath}: Input tag '${String(type)}' found using 'type' does not match any of the expected tags: 'text', 'image', 'document'`;
    }
    const error = checkBlockShape(inner, type, innerPath);
    if (error) return error;
  }
  return undefined;
}

// "messages.0: all messages must have non-empty content except for the optional final assistant
// message" [cc-6774, cc-3196]: an empty string or an empty list, except a final assistant message.
function checkNonEmptyContent(request: Request): string | undefined {
  const last = request.messages.length - 1;
  for (const [index, message] of request.messages.entries()) {
    if (index === last && message.role === 'assistant') continue;
    if (message.content.length === 0) {
      return `messages.${index}: all messages must have non-empty content except for the optional final assistant message`;
    }
  }
  return undefined;
}

// Every text block (string content too, and the text blocks of a tool_result, whose string
// content counts as one) must be non-empty and not blank: "messages: text content blocks must be
// non-empty" [cc-53473, cc-59812; for tool_result content "": other: livekit/agents#1789],
// "messages: text content blocks must contain non-whitespace text" [cc-23352, cc-23440]. With
// cache_control on an empty one: "messages.87.content.1.text: cache_control cannot be set for
// empty text blocks" [cc-55302, cc-50082]. The optional final assistant message may be "".
function checkTextBlocks(request: Request): string | undefined {
  const last = request.messages.length - 1;
  for (const { block, message, index } of allBlocks(request)) {
    const content = request.messages[message].content;
    if (typeof content === 'string' && content === '' && message === last) continue; // prefill ""
    const path = `messages.${message}.content.${index}`;
    const texts: Array<{ text: Obj; path: string }> = [];
    if (block.type === 'text') texts.push({ text: block, path });
    if (block.type === 'tool_result') {
      if (typeof block.content === 'string') texts.push({ text: { type: 'text', text: block.content }, path: `${path}.content` });
      if (Array.isArray(block.content)) {
        (block.content as Obj[]).forEach((inner, innerIndex) => {
          if (inner.type === 'text') texts.push({ text: inner, path: `${path}.content.${innerIndex}` });
        });
      }
    }
    for (const { text, path: textPath } of texts) {
      const value = text.text as string;
      if (value === '' && hasCacheControl(text)) return `${textPath}.text: cache_control cannot be set for empty text blocks`;
      if (value === '') return 'messages: text content blocks must be non-empty';
      if (isWhitespaceOnly(value)) return 'messages: text content blocks must contain non-whitespace text';
    }
  }
  return undefined;
}

// 'messages: first message must use the "user" role' [other: lobehub/lobehub#1601,
// tonyljx/TextWordExplain#2]. Seen in 2024; [sdk] no longer states it, so unsure: refused.
function checkFirstMessageIsUser(request: Request): string | undefined {
  return request.messages[0].role === 'user' ? undefined : 'messages: first message must use the "user" role';
}

// "Requests which include tool_use or tool_result blocks must define tools." [other:
// anthropics/anthropic-sdk-python#494] (2024; unsure whether still enforced: refused).
function checkToolBlocksNeedTools(request: Request): string | undefined {
  const tools = request.body.tools;
  if (Array.isArray(tools) && tools.length > 0) return undefined;
  const uses = allBlocks(request).some(({ block }) => block.type === 'tool_use' || block.type === 'tool_result');
  return uses ? 'Requests which include tool_use or tool_result blocks must define tools.' : undefined;
}

// "messages.1.content.1: `tool_use` ids must be unique" [cc-21317, cc-20901].
function checkToolUseIds(request: Request): string | undefined {
  const seen = new Set<string>();
  for (const { block, message, index } of allBlocks(request)) {
    if (block.type !== 'tool_use' && block.type !== 'server_tool_use') continue;
    const id = block.id as string;
    if (seen.has(id)) return `messages.${message}.content.${index}: \`tool_use\` ids must be unique`;
    seen.add(id);
  }
  return undefined;
}

// tool_use / tool_result pairing, over merged turns:
//  - a tool_result must answer a tool_use of the turn just before: "messages.12.content.0:
//    unexpected `tool_use_id` found in `tool_result` blocks: ID. Each `tool_result` block must
//    have a corresponding `tool_use` block in the previous message." [other:
//    router-for-me/CLIProxyAPI#497, cc-10834]; answering one twice is refused (own wording);
//  - every tool_use must be answered in the next turn: "messages.22: `tool_use` ids were found
//    without `tool_result` blocks immediately after: ID, ID. Each `tool_use` block must have a
//    corresponding `tool_result` block in the next message." [cc-5989, cc-1237];
//  - and those results must lead that turn: "messages.27: Did not find 1 `tool_result` block(s)
//    at the beginning of this message. Messages following `tool_use` blocks must begin with a
//    matching number of `tool_result` blocks." [cc-37, other: anthropics/anthropic-sdk-typescript#653].
function checkToolPairing(request: Request): string | undefined {
  const turns = turnsOf(request);
  for (const [turnIndex, turn] of turns.entries()) {
    if (turn.role === 'user') {
      const previous = turns[turnIndex - 1];
      const expected = new Set(previous ? previous.blocks.filter(({ block }) => block.type === 'tool_use').map(({ block }) => block.id as string) : []);
      const answered = new Set<string>();
      for (const { block, message, index } of turn.blocks) {
        if (block.type !== 'tool_result') continue;
        const id = block.tool_use_id as string;
        const path = `messages.${message}.content.${index}`;
        if (!expected.has(id)) {
          return `${path}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
        if (answered.has(id)) return `${path}: each tool_use must have a single result. Found multiple \`tool_result\` blocks with id: ${id}`;
        answered.add(id);
      }
      continue;
    }
    const uses = turn.blocks.filter(({ block }) => block.type === 'tool_use');
    if (uses.length === 0) continue;
    const next = turns[turnIndex + 1];
    const results = new Set(next ? next.blocks.filter(({ block }) => block.type === 'tool_result').map(({ block }) => block.tool_use_id as string) : []);
    const missing = uses.filter(({ block }) => !results.has(block.id as string));
    if (missing.length > 0) {
      return (
        `messages.${missing[0].message}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ` +
        `${missing.map(({ block }) => block.id as string).join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`
      );
    }
    const leading = next!.blocks.slice(0, uses.length);
    if (!leading.every(({ block }) => block.type === 'tool_result')) {
      return (
        `messages.${next!.messages[0]}: Did not find ${uses.length} \`tool_result\` block(s) at the beginning of this message. ` +
        'Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.'
      );
    }
  }
  return undefined;
}

// A server_tool_use is answered by its result in the same assistant turn: "messages.1: `web_search`
// tool use with id `srvtoolu_…` was found without a corresponding `web_search_tool_result` block"
// [other: anthropics/anthropic-sdk-python#1339]; a result must answer a server_tool_use before it
// (own wording).
function checkServerToolPairing(request: Request): string | undefined {
  for (const turn of turnsOf(request)) {
    if (turn.role !== 'assistant') continue;
    const open = new Map<string, number>();
    for (const { block, message, index } of turn.blocks) {
      if (block.type === 'server_tool_use') open.set(block.id as string, message);
      if (block.type !== 'web_search_tool_result') continue;
      const id = block.tool_use_id as string;
      if (!open.has(id))
        return `messages.${message}.content.${index}: \`web_search_tool_result\` block with tool_use_id \`${id}\` has no corresponding \`server_tool_use\` block before it`;
      open.delete(id);
    }
    const [id, message] = [...open.entries()][0] ?? [];
    if (id !== undefined)
      return `messages.${message}: \`web_search\` tool use with id \`${id}\` was found without a corresponding \`web_search_tool_result\` block`;
  }
  return undefined;
}

// With thinking enabled, the assistant turn before the final tool_result turn must start with a
// thinking block: "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but
// found `tool_use`. When `thinking` is enabled, …" [other: Kilo-Org/kilocode#5219, sigoden/aichat#1233].
function checkThinkingFirstWhenEnabled(request: Request): string | undefined {
  const thinking = request.body.thinking;
  if (!isObject(thinking) || thinking.type !== 'enabled') return undefined;
  const turns = turnsOf(request);
  const last = turns[turns.length - 1];
  const assistant = turns[turns.length - 2];
  if (!last || last.role !== 'user' || !assistant || !last.blocks.some(({ block }) => block.type === 'tool_result')) return undefined;
  const first = assistant.blocks[0];
  if (!first || first.block.type === 'thinking' || first.block.type === 'redacted_thinking') return undefined;
  return (
    `messages.${first.message}.content.${first.index}.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first.block.type)}\`. ` +
    'When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). ' +
    'We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. ' +
    'Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking'
  );
}

// "messages: final assistant content cannot end with trailing whitespace" [other:
// tailcallhq/forgecode#1872, anomalyco/opencode#1295]: a final (prefill) assistant message.
function checkFinalAssistantWhitespace(request: Request): string | undefined {
  const final = request.messages[request.messages.length - 1];
  if (final.role !== 'assistant') return undefined;
  const content = final.content;
  const lastBlock = typeof content === 'string' ? { type: 'text', text: content } : content[content.length - 1];
  if (!lastBlock || lastBlock.type !== 'text' || typeof lastBlock.text !== 'string' || lastBlock.text === '') return undefined;
  return /\s$/.test(lastBlock.text) ? 'messages: final assistant content cannot end with trailing whitespace' : undefined;
}

/** Every place a cache_control can sit, in the order the API reads the prompt: tools, system, messages. */
function cacheControlled(request: Request): Array<{ cacheControl: Obj }> {
  const out: Array<{ cacheControl: Obj }> = [];
  const push = (holder: unknown): void => {
    if (isObject(holder) && isObject(holder.cache_control)) out.push({ cacheControl: holder.cache_control });
  };
  if (Array.isArray(request.body.tools)) request.body.tools.forEach(push);
  if (Array.isArray(request.body.system)) request.body.system.forEach(push);
  for (const { block } of allBlocks(request)) {
    push(block);
    if (block.type === 'tool_result' && Array.isArray(block.content)) block.content.forEach(push);
  }
  return out;
}

// "A maximum of 4 blocks with cache_control may be provided. Found 5." [other:
// tghamm/Anthropic.SDK#50, Wei-Shaw/sub2api#176]; top-level automatic caching places one more.
function checkCacheControlCount(request: Request): string | undefined {
  const found = cacheControlled(request).length + (isObject(request.body.cache_control) ? 1 : 0);
  return found > MAX_CACHE_CONTROL_BLOCKS ? `A maximum of ${MAX_CACHE_CONTROL_BLOCKS} blocks with cache_control may be provided. Found ${found}.` : undefined;
}

// Prompt caching: a 1h entry must not come after a 5m one (tools, system, messages order); the
// prompt-caching docs state the rule (own wording: the API's text was not found).
function checkCacheTtlOrder(request: Request): string | undefined {
  let sawShort = false;
  for (const { cacheControl } of cacheControlled(request)) {
    if (cacheControl.ttl === '1h' && sawShort) {
      return "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block";
    }
    if (cacheControl.ttl !== '1h') sawShort = true;
  }
  return undefined;
}
