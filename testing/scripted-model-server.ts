/**
 * The scripted model server: the project's ONE test double.
 *
 * A small HTTP server (node:http, bound to 127.0.0.1) that speaks the Anthropic Messages API wire
 * protocol closely enough that the REAL `@anthropic-ai/sdk` can be pointed at it (`baseURL` /
 * `ANTHROPIC_BASE_URL`). Integration tests and the key-less demo use it so that everything above
 * the HTTP socket — SDK, streaming accumulation, error classes, our activities — is the real code.
 *
 * What it serves:
 *  - `POST /v1/messages`              non-streaming JSON Message, or (with `stream: true`) the SSE
 *                                     event sequence the API sends: message_start, ping,
 *                                     content_block_start / *_delta… / content_block_stop per block,
 *                                     message_delta, message_stop.
 *  - `POST /v1/messages/count_tokens` `{input_tokens}`: a chars/4 estimate unless overridden.
 *  - `GET /v1/models`, `GET /v1/models/{id}`  the catalog (testing/model-catalog.ts) in the Models
 *                                     API's shape; an id it does not serve is the API's 404.
 *  - anything else                    404 not_found_error.
 *
 * Prompt caching is billed as the API bills it (testing/prompt-cache.ts): each answer's usage
 * reports `cache_read_input_tokens` and `cache_creation_input_tokens` from the request's breakpoints.
 *
 * Web search (issue 33): a scripted `web_search` block is run as the API runs its server tool
 * `web_search_20250305` (the request must offer it; its domain filters and `max_uses` apply): the
 * answer carries `server_tool_use` and `web_search_tool_result` blocks with opaque
 * `encrypted_content`, text blocks cite results with `encrypted_index` (streamed as
 * `citations_delta`), and `usage.server_tool_use.web_search_requests` bills each search that ran.
 * Later requests must send those blocks and citations back exactly as produced, or get a 400.
 *
 * Like the API, both message endpoints answer a model outside the catalog with 404
 * `not_found_error` ("model: <id>"), and a `max_tokens` above the model's maximum with a 400.
 *
 * Every request is first validated by {@link validateMessagesRequest} (testing/messages-api-validator.ts),
 * at least as strictly as the real API: a body the API would refuse gets the API's 400
 * invalid_request_error with the API's message — e.g. "messages: text content blocks must be non-empty",
 * "system.1: cache_control cannot be set for empty text blocks", a tool_use without its
 * tool_result — and is listed in `rejections`, so the test harness fails on any 400 a test did
 * not ask for.
 *
 * What each valid `/v1/messages` request gets is decided by a script: a responder function (if it
 * returns a turn) or else the next queued {@link ScriptedTurn}. An empty queue is a loud HTTP 500
 * so a test that under-scripts fails visibly instead of hanging.
 *
 * Failure modes a test can inject: an HTTP error (`error`, with headers such as `retry-after`), an
 * SSE `error` event in the middle of a stream (`streamErrorAfterBlocks`), a transport fault in the
 * middle of a stream (`fault`: connection reset, malformed SSE, a stall that holds the connection
 * open), latency before the first byte (`delayMs`) and between SSE frames (`deltaDelayMs`, long
 * enough for a test to kill a worker mid-stream). {@link errorBurst} scripts a run of errors.
 *
 * Standalone: `tsx testing/scripted-model-server.ts --port 0` answers every request with a fixed
 * text reply and prints `listening on URL`.
 */
import * as http from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import type { StopReason } from '../common/messages';
import { validateMessagesRequest } from './messages-api-validator';
import { type CatalogModel, MODEL_CATALOG, catalogModel, unknownModelMessage } from './model-catalog';
import { PromptCache } from './prompt-cache';

// ---------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------

/** One content block the scripted model will produce. */
export type ScriptedBlock =
  | { type: 'text'; text: string; citations?: ScriptedCitation[] }
  | ScriptedWebSearch
  | { type: 'tool_use'; id?: string; name: string; input: unknown }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string };

/**
 * A web search the API runs inside the turn (the server tool `web_search_20250305`): it becomes a
 * `server_tool_use` block and its `web_search_tool_result`, with opaque `encrypted_content` the
 * server remembers; the request must offer the tool. Results outside the tool's
 * `allowed_domains` (or inside its `blocked_domains`) are left out; a search past `max_uses` gets
 * the `max_uses_exceeded` error; `error_code` scripts another error. Only searches that ran are billed.
 */
export interface ScriptedWebSearch {
  type: 'web_search';
  query: string;
  results?: Array<{ url: string; title: string; page_age?: string | null }>;
  error_code?: 'invalid_tool_input' | 'unavailable' | 'max_uses_exceeded' | 'too_many_requests' | 'query_too_long';
}

/** A citation of a result of an earlier web search of the same answer (by URL). */
export interface ScriptedCitation {
  url: string;
  cited_text: string;
}

/** Stop reasons the Messages API can report. */
export type ScriptedStopReason = StopReason;

/**
 * A transport fault in a streamed answer, after `afterBlocks` complete content blocks (default 0:
 * right after message_start and ping), i.e. with part of the answer already on the wire.
 *  - `connection_reset`: the socket is reset (TCP RST), as when a proxy or the network drops it.
 *  - `malformed_sse`: a frame whose `data:` is not JSON (a corrupted or truncated event), then the
 *    response ends.
 *  - `stall`: nothing more is written, and the connection stays open until the client hangs up
 *    (or the server closes): a stream that stops making progress without failing.
 */
export interface StreamFault {
  type: 'connection_reset' | 'malformed_sse' | 'stall';
  afterBlocks?: number;
}

/** One scripted answer to one `POST /v1/messages` request. */
export interface ScriptedTurn {
  /** Blocks of the reply; default `[{type:'text', text:'OK'}]`. */
  content?: ScriptedBlock[];
  /** Default: `'tool_use'` if any tool_use block, else `'end_turn'`. */
  stop_reason?: ScriptedStopReason;
  /**
   * Overrides of the reported usage; defaults: output = chars/4, input = the count_tokens estimate
   * split into cache reads, cache writes and the rest as the API bills prompt caching
   * (testing/prompt-cache.ts). Any input figure given here turns the split off for this turn.
   */
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
  };
  /** Answer with this HTTP error instead of a message. `type` defaults from the status; `headers` are added (e.g. `retry-after`). */
  error?: { status: number; type?: string; message?: string; headers?: Record<string, string> };
  /** Streaming only: a transport fault part-way through the answer (see {@link StreamFault}). */
  fault?: StreamFault;
  /** Streaming only: emit an SSE `error` event (overloaded_error) after this many complete blocks. */
  streamErrorAfterBlocks?: number;
  /** Wait this long before the first byte of the response. */
  delayMs?: number;
  /** Wait this long between SSE frames. */
  deltaDelayMs?: number;
  /** Characters per text / thinking / partial_json delta (default 16). */
  chunkSize?: number;
  /** Model name reported in the message (default: the requested model). */
  model?: string;
  /**
   * Streaming only: after `afterBlocks` complete blocks (0 = before the first), wait for `until`
   * before going on — a test watches the deltas sent so far while the call has not ended.
   */
  hold?: { afterBlocks: number; until: Promise<unknown> };
  /** Streaming only: called as each text delta leaves the server (benchmarks time its arrival). */
  onTextDelta?: (text: string, sentAt: number) => void;
}

/** A request the server received, as recorded before it was answered. */
export interface RecordedRequest {
  /** Position in `requests` (or `countTokenRequests`), 0-based. */
  index: number;
  /** URL path without the query string. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body (the raw text if it was not valid JSON). */
  body: any;
  /** Whether the body asked for `stream: true`. */
  stream: boolean;
  /** `Date.now()` when the body had been fully read. */
  receivedAt: number;
}

/** Decides the answer to a request; returning `undefined` falls through to the queued script. */
export type Responder = (request: RecordedRequest) => ScriptedTurn | undefined;

/** Options of {@link startScriptedModelServer}. */
export interface ScriptedModelServerOptions {
  /** Turns answered in order, one per `/v1/messages` request. */
  script?: ScriptedTurn[];
  /** Consulted first for every `/v1/messages` request. */
  respond?: Responder;
  /** Port to listen on (default 0 = any free port). */
  port?: number;
  /** Override of the token count (count_tokens answers and default `usage.input_tokens`). */
  countTokens?: (body: any) => number;
  /** Receives one line per request handled. */
  log?: (line: string) => void;
  /** The served models (default: testing/model-catalog.ts). */
  models?: readonly CatalogModel[];
}

/** A request the validator refused with a 400 (not a scripted `error` turn). */
export interface Rejection {
  /** `index` of the request in `requests` (or `countTokenRequests`, per `path`). */
  index: number;
  /** URL path: `/v1/messages` or `/v1/messages/count_tokens`. */
  path: string;
  /** The API's error message the server answered with. */
  message: string;
}

/** A running scripted model server. */
export interface ScriptedModelServer {
  /** Base URL, e.g. `http://127.0.0.1:PORT` (what `ANTHROPIC_BASE_URL` should be). */
  url: string;
  /** Every `/v1/messages` request, in arrival order. */
  requests: RecordedRequest[];
  /** Every `/v1/messages/count_tokens` request, in arrival order. */
  countTokenRequests: RecordedRequest[];
  /** Every request the validator refused with a 400, in arrival order (both endpoints). */
  rejections: Rejection[];
  /** Appends turns to the script queue. */
  enqueue(...turns: ScriptedTurn[]): void;
  /** Replaces (or removes) the responder. */
  setResponder(respond: Responder | undefined): void;
  /** Number of queued turns not yet consumed. */
  remaining(): number;
  /** false: `/v1/models…` answers 503 (the Models API cannot be asked; messages still work). */
  setModelsApiAvailable(available: boolean): void;
  /** Every `GET /v1/models…` request, in arrival order. */
  modelRequests: RecordedRequest[];
  /** Closes the server and destroys open sockets (including streams in progress). */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Helpers (exported where tests or the demo may want the same numbers / shapes)
// ---------------------------------------------------------------------------------------------

/** API error `type` for an HTTP status, as the Messages API reports it. */
export function errorTypeForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 529:
      return 'overloaded_error';
    default:
      return 'api_error';
  }
}

/** Default human message per error type (roughly what the API says). */
const DEFAULT_ERROR_MESSAGES: Record<string, string> = {
  invalid_request_error: 'Invalid request',
  authentication_error: 'invalid x-api-key',
  permission_error: 'Your API key does not have permission to use the specified resource.',
  not_found_error: 'Not found',
  request_too_large: 'Request exceeds the maximum allowed number of bytes.',
  rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit',
  api_error: 'Internal server error',
  overloaded_error: 'Overloaded',
};

/** A turn answering 400 `prompt is too long: N tokens > M maximum`, exactly as the API words it. */
export function promptTooLongTurn(tokens: number, maximum = 200000): ScriptedTurn {
  return {
    error: {
      status: 400,
      type: 'invalid_request_error',
      message: `prompt is too long: ${tokens} tokens > ${maximum} maximum`,
    },
  };
}

/** `count` turns answering the same HTTP error (a burst of 500s or 529s), for a script. */
export function errorBurst(count: number, status: number, headers?: Record<string, string>): ScriptedTurn[] {
  return Array.from({ length: count }, () => ({ error: { status, ...(headers ? { headers } : {}) } }));
}

/** The default token estimate: ceil(chars of JSON.stringify of system + messages + tools / 4). */
export function estimateInputTokens(body: any): number {
  if (body === null || typeof body !== 'object') return 0;
  let chars = 0;
  for (const part of [body.system, body.messages, body.tools]) {
    if (part !== undefined) chars += JSON.stringify(part).length;
  }
  return Math.ceil(chars / 4);
}

/** Largest request body accepted; beyond it the answer is 413 like the real API. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const DEFAULT_CHUNK_SIZE = 16;
const DEFAULT_CONTENT: ScriptedBlock[] = [{ type: 'text', text: 'OK' }];

/** A content block as it appears in a Message (the API's wire shape). */
type WireBlock =
  | { type: 'text'; text: string; citations?: WireCitation[] }
  | { type: 'server_tool_use'; id: string; name: 'web_search'; input: { query: string } }
  | { type: 'web_search_tool_result'; tool_use_id: string; content: WireSearchResult[] | { type: 'web_search_tool_result_error'; error_code: string } }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

type WireCitation = { type: 'web_search_result_location'; url: string; title: string | null; cited_text: string; encrypted_index: string };
type WireSearchResult = { type: 'web_search_result'; url: string; title: string; encrypted_content: string; page_age: string | null };

/** The host of `url`, or undefined when it is not a URL. */
function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Whether `host` is `domain` or one of its subdomains (the API's domain filters). */
function inDomain(host: string, domain: string): boolean {
  const bare = domain
    .toLowerCase()
    .replace(/^https?:\/\//, '')
    .split('/')[0];
  return host === bare || host.endsWith(`.${bare}`);
}

/** A block as the API reads it back: cache_control is the sender's, not part of what was produced. */
function producedForm(block: any): string {
  const { cache_control: _cacheControl, ...rest } = block ?? {};
  return JSON.stringify(rest);
}

/** Splits a string into chunks of `size` code points (never halving a surrogate pair). */
function chunkString(text: string, size: number): string[] {
  const codePoints = Array.from(text);
  if (codePoints.length === 0) return [''];
  const chunks: string[] = [];
  for (let i = 0; i < codePoints.length; i += size) {
    chunks.push(codePoints.slice(i, i + size).join(''));
  }
  return chunks;
}

/** Number of characters the model "wrote" in a block, for the default output_tokens. */
function blockChars(block: WireBlock): number {
  switch (block.type) {
    case 'text':
      return block.text.length;
    case 'thinking':
      return block.thinking.length;
    case 'tool_use':
      return JSON.stringify(block.input).length;
    case 'redacted_thinking':
      return block.data.length;
    case 'server_tool_use':
      return JSON.stringify(block.input).length;
    case 'web_search_tool_result':
      return 0;
  }
}

/** Thrown (internally) when the client went away or the server is closing. */
class ConnectionGone extends Error {}

// ---------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------

/** Starts a scripted Anthropic Messages API server on 127.0.0.1. */
export async function startScriptedModelServer(options: ScriptedModelServerOptions = {}): Promise<ScriptedModelServer> {
  const queue: ScriptedTurn[] = [...(options.script ?? [])];
  let responder: Responder | undefined = options.respond;
  const requests: RecordedRequest[] = [];
  const countTokenRequests: RecordedRequest[] = [];
  const modelRequests: RecordedRequest[] = [];
  const rejections: Rejection[] = [];
  const served = options.models ?? MODEL_CATALOG;
  const findModel = (id: string): CatalogModel | undefined => (options.models ? served.find((entry) => entry.id === id) : catalogModel(id));
  let modelsApiAvailable = true;
  const promptCache = new PromptCache();
  /** Every thinking signature the server sent: for which model (catalog id) and which thinking text. */
  const issuedSignatures = new Map<string, { model: string; thinking: string }>();
  /** tool_use ids of answers that also had a thinking block: the signature that must come back with them. */
  const thinkingOfToolUse = new Map<string, string>();
  /** Every server_tool_use and web_search_tool_result block the server sent (by id), and every citation (by encrypted_index), as produced. */
  const issuedServerBlocks = new Map<string, string>();
  const issuedCitations = new Map<string, string>();
  let searchCounter = 0;
  const log = options.log ?? (() => {});
  const countTokens = (body: any): number => (options.countTokens ? options.countTokens(body) : estimateInputTokens(body));

  // Counters for generated ids: message ids, tool_use ids, request-id headers.
  let messageCounter = 0;
  let toolUseCounter = 0;
  let requestIdCounter = 0;

  // Everything close() must tear down: sockets (keep-alive ones too) and pending sleeps.
  const sockets = new Set<Socket>();
  const pendingSleeps = new Set<() => void>();
  let closing = false;

  /** Resolves after `ms`, or immediately when the server closes. */
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (ms <= 0 || closing) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        pendingSleeps.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      pendingSleeps.add(done);
    });

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // Client disconnects are normal (aborted streams, killed workers): stop quietly.
      if (err instanceof ConnectionGone) {
        if (!closing) log(`${req.method} ${req.url}: client disconnected, stopped writing`);
        return;
      }
      log(`scripted model server: internal error: ${(err as Error)?.stack ?? String(err)}`);
      if (!res.headersSent && !res.destroyed) {
        sendError(res, 500, 'api_error', `scripted model server: ${(err as Error)?.message ?? String(err)}`);
      } else {
        res.destroy();
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  // -- response writers ------------------------------------------------------------------------

  const nextRequestId = (): string => `req_scripted_${String(++requestIdCounter).padStart(6, '0')}`;

  /** True once nothing more can be written to `res`. */
  const gone = (res: http.ServerResponse): boolean => closing || res.destroyed || res.writableEnded;

  /** Sends an error in the API's shape: `{type:'error', error:{type, message}}` + `request-id`. */
  function sendError(res: http.ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
    if (gone(res)) return;
    const requestId = nextRequestId();
    const body = JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId });
    res.writeHead(status, {
      ...headers,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'request-id': requestId,
    });
    res.end(body);
  }

  /** Sends a 200 JSON body. */
  function sendJson(res: http.ServerResponse, value: unknown): void {
    if (gone(res)) return;
    const body = JSON.stringify(value);
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'request-id': nextRequestId(),
    });
    res.end(body);
  }

  /** Writes one SSE frame (`event: NAME\ndata: JSON\n\n`), honouring backpressure and disconnects. */
  async function writeFrame(res: http.ServerResponse, event: string, data: unknown): Promise<void> {
    if (gone(res)) throw new ConnectionGone();
    const ok = res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    if (!ok) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    }
    if (gone(res)) throw new ConnectionGone();
  }

  // -- request handling ------------------------------------------------------------------------

  /** Reads the whole body; `undefined` means it was too large (and 413 was already sent). */
  async function readBody(req: http.IncomingMessage, res: http.ServerResponse): Promise<string | undefined> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) {
        sendError(res, 413, 'request_too_large', DEFAULT_ERROR_MESSAGES.request_too_large);
        return undefined;
      }
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // A reset socket must never surface as an unhandled 'error' event.
    req.on('error', () => {});
    res.on('error', () => {});

    const path = (req.url ?? '/').split('?')[0];
    const method = req.method ?? 'GET';
    const isMessages = path === '/v1/messages';
    const isCount = path === '/v1/messages/count_tokens';
    if (method === 'GET' && (path === '/v1/models' || path.startsWith('/v1/models/'))) {
      req.resume();
      answerModels(req, path, res);
      return;
    }
    if (method !== 'POST' || (!isMessages && !isCount)) {
      req.resume();
      log(`${method} ${path} -> 404`);
      sendError(res, 404, 'not_found_error', `Not found: ${method} ${path}`);
      return;
    }

    let raw: string | undefined;
    try {
      raw = await readBody(req, res);
    } catch {
      throw new ConnectionGone(); // the client hung up while sending
    }
    if (raw === undefined) return;

    let body: any = raw;
    let parseError: string | undefined;
    try {
      body = JSON.parse(raw);
    } catch (err) {
      parseError = `Request body is not valid JSON: ${(err as Error).message}`;
    }

    // Record BEFORE answering, so a test can inspect even requests that failed.
    const list = isMessages ? requests : countTokenRequests;
    const recorded: RecordedRequest = {
      index: list.length,
      path,
      headers: { ...req.headers },
      body,
      stream: isMessages && body !== null && typeof body === 'object' && body.stream === true,
      receivedAt: Date.now(),
    };
    list.push(recorded);

    // The 1M-window beta opens a 1M window on a model whose own is smaller (claude-sonnet-4-6 `[1m]`).
    const betas = String(req.headers['anthropic-beta'] ?? '')
      .split(',')
      .map((beta) => beta.trim());
    const contextWindow = betas.includes('context-1m-2025-08-07') ? 1_000_000 : undefined;
    const invalid = parseError ?? validateMessagesRequest(body, isMessages ? 'messages' : 'count_tokens', { contextWindow });
    if (invalid) {
      rejections.push({ index: recorded.index, path, message: invalid });
      log(`POST ${path} #${recorded.index} -> 400 ${invalid}`);
      sendError(res, 400, 'invalid_request_error', invalid);
      return;
    }

    const model = findModel(String(body.model));
    if (!model) {
      log(`POST ${path} #${recorded.index} -> 404 unknown model ${String(body.model)}`);
      sendError(res, 404, 'not_found_error', unknownModelMessage(String(body.model)));
      return;
    }
    // The API's wording: "max_tokens: 128000 > 64000, which is the maximum allowed number of output tokens for claude-…".
    if (isMessages && body.max_tokens > model.max_tokens) {
      const message = `max_tokens: ${body.max_tokens} > ${model.max_tokens}, which is the maximum allowed number of output tokens for ${model.id}`;
      rejections.push({ index: recorded.index, path, message });
      log(`POST ${path} #${recorded.index} -> 400 ${message}`);
      sendError(res, 400, 'invalid_request_error', message);
      return;
    }

    const brokenThinking = checkModelCapabilities(body, model) ?? checkThinkingRoundTrip(body, model.id) ?? checkWebSearchRoundTrip(body);
    if (brokenThinking) {
      rejections.push({ index: recorded.index, path, message: brokenThinking });
      log(`POST ${path} #${recorded.index} -> 400 ${brokenThinking}`);
      sendError(res, 400, 'invalid_request_error', brokenThinking);
      return;
    }

    if (isCount) {
      const inputTokens = countTokens(body);
      log(`POST ${path} #${recorded.index} -> 200 input_tokens=${inputTokens}`);
      sendJson(res, { input_tokens: inputTokens });
      return;
    }

    await answerMessages(recorded, res);
  }

  /**
   * Thinking blocks go back as they came (the API's rules): each signature must be one this server
   * issued, for this model and this very text ("Invalid `signature` in `thinking` block"); with
   * thinking on, the last assistant turn of the tool loop must keep the thinking block its tool
   * calls came with (the API's "Expected `thinking` or `redacted_thinking`…").
   */
  function checkThinkingRoundTrip(body: any, servedModel: string): string | undefined {
    const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
    for (const [m, message] of messages.entries()) {
      if (message?.role !== 'assistant' || !Array.isArray(message.content)) continue;
      for (const [b, block] of (message.content as any[]).entries()) {
        if (block?.type !== 'thinking') continue;
        const issued = issuedSignatures.get(String(block.signature));
        if (!issued || issued.model !== servedModel || issued.thinking !== block.thinking)
          return `messages.${m}.content.${b}: Invalid \`signature\` in \`thinking\` block`;
      }
    }
    const thinkingOn = body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive';
    const last = messages.length - 1;
    const endsWithResults =
      last >= 1 &&
      messages[last]?.role === 'user' &&
      Array.isArray(messages[last].content) &&
      messages[last].content.some((block: any) => block?.type === 'tool_result');
    if (!thinkingOn || !endsWithResults) return undefined;
    let a = last - 1;
    while (a >= 0 && messages[a]?.role !== 'assistant') a--;
    const turn = messages[a];
    if (!turn || !Array.isArray(turn.content)) return undefined;
    const expected = (turn.content as any[])
      .filter((block) => block?.type === 'tool_use')
      .map((block) => thinkingOfToolUse.get(String(block.id)))
      .find(Boolean);
    if (!expected) return undefined;
    const first = turn.content[0];
    if (first?.type === 'thinking' && first.signature === expected) return undefined;
    return (
      `messages.${a}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. ` +
      'When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). ' +
      'We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. ' +
      'Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking'
    );
  }

  /**
   * Web search blocks go back exactly as the server produced them (issue 33): a server_tool_use or
   * web_search_tool_result it never sent, or one altered (its `encrypted_content` above all), and a
   * citation whose `encrypted_index` or text is not the one it gave, get the API's 400.
   */
  function checkWebSearchRoundTrip(body: any): string | undefined {
    const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
    for (const [m, message] of messages.entries()) {
      if (message?.role !== 'assistant' || !Array.isArray(message.content)) continue;
      for (const [b, block] of (message.content as any[]).entries()) {
        if (block?.type === 'server_tool_use' || block?.type === 'web_search_tool_result') {
          const id = String(block.type === 'server_tool_use' ? block.id : block.tool_use_id);
          const issued = issuedServerBlocks.get(`${block.type}:${id}`);
          if (issued !== producedForm(block)) {
            return block.type === 'server_tool_use'
              ? `messages.${m}.content.${b}: Invalid \`server_tool_use\` block: it does not match the one the API produced (id ${id})`
              : `messages.${m}.content.${b}: Invalid \`encrypted_content\` in \`web_search_tool_result\` block (tool_use_id ${id})`;
          }
        }
        if (block?.type === 'text' && Array.isArray(block.citations)) {
          for (const [c, citation] of (block.citations as any[]).entries()) {
            if (issuedCitations.get(String(citation?.encrypted_index)) !== JSON.stringify(citation)) {
              return `messages.${m}.content.${b}.citations.${c}: Invalid \`encrypted_index\` in \`web_search_result_location\` citation`;
            }
          }
        }
      }
    }
    return undefined;
  }

  /** The scripted web search's blocks, as the API runs it under the request's tool definition. */
  function runWebSearch(block: ScriptedWebSearch, body: any, searchesSoFar: number): { blocks: WireBlock[]; billed: boolean } {
    const tool = (Array.isArray(body.tools) ? body.tools : []).find((candidate: any) => candidate?.type === 'web_search_20250305');
    if (!tool) throw new Error('scripted web_search, but the request offers no web_search tool');
    const id = `srvtoolu_scripted_${String(++searchCounter).padStart(6, '0')}`;
    const use: WireBlock = { type: 'server_tool_use', id, name: 'web_search', input: { query: block.query } };
    const errorCode = block.error_code ?? (tool.max_uses != null && searchesSoFar >= tool.max_uses ? 'max_uses_exceeded' : undefined);
    let content: Extract<WireBlock, { type: 'web_search_tool_result' }>['content'];
    if (errorCode) content = { type: 'web_search_tool_result_error', error_code: errorCode };
    else {
      const allowed: string[] | undefined = tool.allowed_domains ?? undefined;
      const blocked: string[] = tool.blocked_domains ?? [];
      content = (block.results ?? [])
        .filter((result) => {
          const host = hostOf(result.url);
          if (!host) return false;
          if (allowed && !allowed.some((domain) => inDomain(host, domain))) return false;
          return !blocked.some((domain) => inDomain(host, domain));
        })
        .map((result) => ({
          type: 'web_search_result' as const,
          url: result.url,
          title: result.title,
          // Opaque to the client, as the API's is: the server knows it again when it comes back.
          encrypted_content: createHash('sha256').update(`${id}\n${result.url}\n${result.title}`).digest('base64'),
          page_age: result.page_age ?? null,
        }));
    }
    const answer: WireBlock = { type: 'web_search_tool_result', tool_use_id: id, content };
    issuedServerBlocks.set(`server_tool_use:${id}`, producedForm(use));
    issuedServerBlocks.set(`web_search_tool_result:${id}`, producedForm(answer));
    return { blocks: [use, answer], billed: !errorCode };
  }

  /**
   * What the model's capabilities allow (the catalog's, as the Models API reports them): its
   * thinking types, effort levels and context-management edits (own wording; the API answers 400).
   */
  function checkModelCapabilities(body: any, model: CatalogModel): string | undefined {
    const capabilities = model.capabilities;
    const type = body.thinking?.type as string | undefined;
    if (type === 'adaptive' || type === 'enabled' || type === 'disabled') {
      if (!capabilities.thinking.types[type].supported) return `thinking.type: '${type}' is not supported on ${model.id}`;
    }
    const effort = body.output_config?.effort as string | undefined;
    if (effort !== undefined) {
      const level = (capabilities.effort as unknown as Record<string, { supported: boolean } | null>)[effort];
      if (!capabilities.effort.supported) return `output_config.effort: ${model.id} does not support the effort parameter`;
      if (!level?.supported) return `output_config.effort: '${effort}' is not supported on ${model.id}`;
    }
    const edits: any[] = Array.isArray(body.context_management?.edits) ? body.context_management.edits : [];
    for (const edit of edits) {
      if (edit?.type !== 'clear_thinking_20251015') continue;
      if (!capabilities.context_management.clear_thinking_20251015?.supported)
        return `context_management.edits: clear_thinking_20251015 is not supported on ${model.id}`;
      if (type !== 'enabled' && type !== 'adaptive') return 'context_management.edits: the clear_thinking_20251015 strategy requires thinking to be enabled';
    }
    return undefined;
  }

  /** `GET /v1/models` (one page, the whole catalog) and `GET /v1/models/{id}`. */
  function answerModels(req: http.IncomingMessage, path: string, res: http.ServerResponse): void {
    modelRequests.push({ index: modelRequests.length, path, headers: { ...req.headers }, body: undefined, stream: false, receivedAt: Date.now() });
    if (!modelsApiAvailable) {
      log(`GET ${path} -> 503 (models API unavailable)`);
      sendError(res, 503, 'api_error', 'Service unavailable');
      return;
    }
    if (path === '/v1/models') {
      log(`GET ${path} -> 200 (${served.length} models)`);
      sendJson(res, { data: served, has_more: false, first_id: served[0]?.id ?? null, last_id: served[served.length - 1]?.id ?? null });
      return;
    }
    const id = decodeURIComponent(path.slice('/v1/models/'.length));
    const model = findModel(id);
    log(`GET ${path} -> ${model ? 200 : 404}`);
    if (model) sendJson(res, model);
    else sendError(res, 404, 'not_found_error', unknownModelMessage(id));
  }

  /** Picks the turn for a `/v1/messages` request and writes it out (JSON, SSE, or an error). */
  async function answerMessages(request: RecordedRequest, res: http.ServerResponse): Promise<void> {
    const label = `POST /v1/messages #${request.index}${request.stream ? ' (stream)' : ''}`;

    let turn: ScriptedTurn | undefined;
    try {
      turn = responder?.(request);
    } catch (err) {
      log(`${label} -> 500 responder threw`);
      sendError(res, 500, 'api_error', `scripted model server: responder threw: ${(err as Error)?.message ?? err}`);
      return;
    }
    if (!turn) turn = queue.shift();
    if (!turn) {
      log(`${label} -> 500 script exhausted`);
      sendError(res, 500, 'api_error', `scripted model server: script exhausted (request #${request.index})`);
      return;
    }

    await sleep(turn.delayMs ?? 0);
    if (gone(res)) throw new ConnectionGone();

    if (turn.error) {
      const status = turn.error.status;
      const type = turn.error.type ?? errorTypeForStatus(status);
      const message = turn.error.message ?? DEFAULT_ERROR_MESSAGES[type] ?? 'Error';
      log(`${label} -> ${status} ${type}: ${message}`);
      sendError(res, status, type, message, turn.error.headers);
      return;
    }

    const message = buildMessage(turn, request.body);
    if (!request.stream) {
      log(`${label} -> 200 ${message.stop_reason} (${message.content.length} blocks)`);
      sendJson(res, message);
      return;
    }
    log(`${label} -> 200 SSE ${message.stop_reason} (${message.content.length} blocks)`);
    await streamMessage(res, message, turn);
  }

  /** Builds the complete Message object a turn describes. */
  function buildMessage(turn: ScriptedTurn, body: any) {
    const servedModel = findModel(String(body.model))?.id ?? String(body.model);
    let searches = 0;
    const found = new Map<string, WireSearchResult>();
    const content: WireBlock[] = (turn.content ?? DEFAULT_CONTENT).flatMap((block): WireBlock[] => {
      switch (block.type) {
        case 'web_search': {
          const ran = runWebSearch(block, body, searches);
          if (ran.billed) searches++;
          for (const wire of ran.blocks)
            if (wire.type === 'web_search_tool_result' && Array.isArray(wire.content)) for (const result of wire.content) found.set(result.url, result);
          return ran.blocks;
        }
        case 'text': {
          if (!block.citations?.length) return [{ type: 'text', text: block.text }];
          const citations = block.citations.map((citation): WireCitation => {
            const result = found.get(citation.url);
            if (!result) throw new Error(`scripted citation of ${citation.url}, which no earlier web search of this answer found`);
            const wire: WireCitation = {
              type: 'web_search_result_location',
              url: result.url,
              title: result.title,
              cited_text: citation.cited_text,
              encrypted_index: createHash('sha256').update(`${result.encrypted_content}\n${citation.cited_text}`).digest('base64'),
            };
            issuedCitations.set(wire.encrypted_index, JSON.stringify(wire));
            return wire;
          });
          return [{ type: 'text', text: block.text, citations }];
        }
        case 'tool_use':
          return [
            {
              type: 'tool_use',
              id: block.id ?? `toolu_${++toolUseCounter}`,
              name: block.name,
              input: block.input ?? {},
            },
          ];
        case 'thinking':
          return [
            {
              type: 'thinking',
              thinking: block.thinking,
              // Deterministic stand-in for the API's opaque signature, bound to the model that wrote it.
              signature: block.signature ?? createHash('sha256').update(`${servedModel}\n${block.thinking}`).digest('base64'),
            },
          ];
        case 'redacted_thinking':
          return [{ type: 'redacted_thinking', data: block.data }];
        default:
          throw new Error(`unknown scripted block type: ${JSON.stringify(block)}`);
      }
    });
    // Remember what was signed, and which tool calls came with thinking (checkThinkingRoundTrip).
    const signature = content.find((block) => block.type === 'thinking')?.signature;
    for (const block of content) {
      if (block.type === 'thinking') issuedSignatures.set(block.signature, { model: servedModel, thinking: block.thinking });
      if (block.type === 'tool_use' && signature) thinkingOfToolUse.set(block.id, signature);
    }
    const stopReason: ScriptedStopReason = turn.stop_reason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
    const outputChars = content.reduce((sum, block) => sum + blockChars(block), 0);
    const pinned =
      turn.usage?.input_tokens !== undefined || turn.usage?.cache_read_input_tokens !== undefined || turn.usage?.cache_creation_input_tokens !== undefined;
    const billed = pinned ? undefined : promptCache.bill(body, countTokens(body));
    return {
      id: `msg_scripted_${String(++messageCounter).padStart(6, '0')}`,
      type: 'message' as const,
      role: 'assistant' as const,
      // The API reports the id it served (an alias such as claude-haiku-4-5 answers as its dated id).
      model: turn.model ?? findModel(String(body.model))?.id ?? String(body.model),
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: {
        input_tokens: billed?.input_tokens ?? turn.usage?.input_tokens ?? countTokens(body),
        output_tokens: turn.usage?.output_tokens ?? Math.ceil(outputChars / 4),
        cache_creation_input_tokens: billed?.cache_creation_input_tokens ?? turn.usage?.cache_creation_input_tokens ?? 0,
        cache_read_input_tokens: billed?.cache_read_input_tokens ?? turn.usage?.cache_read_input_tokens ?? 0,
        // The API bills each search that ran ($10 per 1,000); absent when none did.
        ...(searches > 0 ? { server_tool_use: { web_search_requests: searches } } : {}),
      },
    };
  }

  /** Streams a Message as the API's SSE event sequence. */
  async function streamMessage(res: http.ServerResponse, message: ReturnType<typeof buildMessage>, turn: ScriptedTurn): Promise<void> {
    const chunkSize = Math.max(1, turn.chunkSize ?? DEFAULT_CHUNK_SIZE);
    const deltaDelay = turn.deltaDelayMs ?? 0;
    let first = true;
    const frame = async (event: string, data: unknown): Promise<void> => {
      if (!first) await sleep(deltaDelay);
      first = false;
      await writeFrame(res, event, data);
    };

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'request-id': nextRequestId(),
    });
    res.flushHeaders();

    // message_start carries the message with empty content and a placeholder output count.
    await frame('message_start', {
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...message.usage, output_tokens: 1 } },
    });
    await frame('ping', { type: 'ping' });

    const errorAfter = turn.streamErrorAfterBlocks;
    const faultAfter = turn.fault ? (turn.fault.afterBlocks ?? 0) : undefined;
    for (let index = 0; index < message.content.length; index++) {
      if (turn.hold && turn.hold.afterBlocks === index) await turn.hold.until;
      if (errorAfter !== undefined && index >= errorAfter) return endWithStreamError(res, frame);
      if (faultAfter !== undefined && index >= faultAfter) return injectFault(res, turn.fault!);
      const block = message.content[index];
      switch (block.type) {
        case 'text':
          await frame('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
          // The API streams a cited text's citations as citations_delta events.
          for (const citation of block.citations ?? []) {
            await frame('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'citations_delta', citation } });
          }
          for (const text of chunkString(block.text, chunkSize)) {
            await frame('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
            turn.onTextDelta?.(text, Date.now());
          }
          break;
        case 'tool_use':
          await frame('content_block_start', {
            type: 'content_block_start',
            index,
            content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
          });
          for (const partial_json of chunkString(JSON.stringify(block.input), chunkSize)) {
            await frame('content_block_delta', {
              type: 'content_block_delta',
              index,
              delta: { type: 'input_json_delta', partial_json },
            });
          }
          break;
        case 'thinking':
          await frame('content_block_start', {
            type: 'content_block_start',
            index,
            content_block: { type: 'thinking', thinking: '', signature: '' },
          });
          for (const thinking of chunkString(block.thinking, chunkSize)) {
            await frame('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } });
          }
          await frame('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'signature_delta', signature: block.signature },
          });
          break;
        case 'server_tool_use':
          await frame('content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } });
          for (const partial_json of chunkString(JSON.stringify(block.input), chunkSize)) {
            await frame('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
          }
          break;
        case 'web_search_tool_result':
          // The API sends the search's result whole in content_block_start.
          await frame('content_block_start', { type: 'content_block_start', index, content_block: block });
          break;
        case 'redacted_thinking':
          // The API sends redacted thinking whole in content_block_start, with no deltas.
          await frame('content_block_start', { type: 'content_block_start', index, content_block: block });
          break;
      }
      await frame('content_block_stop', { type: 'content_block_stop', index });
    }
    if (turn.hold && turn.hold.afterBlocks >= message.content.length) await turn.hold.until;
    if (errorAfter !== undefined) return endWithStreamError(res, frame);
    if (faultAfter !== undefined) return injectFault(res, turn.fault!);

    await frame('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
    });
    await frame('message_stop', { type: 'message_stop' });
    res.end();
  }

  /** Sends the mid-stream `error` event (what the API does when it overloads mid-answer) and ends. */
  async function endWithStreamError(res: http.ServerResponse, frame: (event: string, data: unknown) => Promise<void>): Promise<void> {
    await frame('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    res.end();
  }

  /** Breaks a stream in progress the way `fault` says (see {@link StreamFault}). */
  async function injectFault(res: http.ServerResponse, fault: StreamFault): Promise<void> {
    switch (fault.type) {
      case 'connection_reset':
        log('  fault: connection reset');
        res.socket?.resetAndDestroy();
        return;
      case 'malformed_sse':
        log('  fault: malformed SSE frame');
        if (gone(res)) throw new ConnectionGone();
        res.write('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_del\n\n');
        res.end();
        return;
      case 'stall':
        log('  fault: stalled (holding the connection open)');
        await new Promise<void>((resolve) => {
          if (gone(res)) return resolve();
          const wake = (): void => {
            pendingSleeps.delete(wake);
            res.off('close', wake);
            resolve();
          };
          pendingSleeps.add(wake);
          res.on('close', wake);
        });
        if (!res.destroyed) res.destroy();
        return;
    }
  }

  // -- lifecycle -------------------------------------------------------------------------------

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    countTokenRequests,
    rejections,
    enqueue: (...turns) => {
      queue.push(...turns);
    },
    setResponder: (respond) => {
      responder = respond;
    },
    remaining: () => queue.length,
    modelRequests,
    setModelsApiAvailable: (available) => {
      modelsApiAvailable = available;
    },
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        for (const wake of [...pendingSleeps]) wake();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closed;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Standalone: `tsx testing/scripted-model-server.ts --port 0`
// ---------------------------------------------------------------------------------------------

if (require.main === module) {
  const portFlag = process.argv.indexOf('--port');
  const port = portFlag >= 0 ? Number(process.argv[portFlag + 1]) : 0;
  if (!Number.isInteger(port) || port < 0) {
    console.error(`invalid --port: ${process.argv[portFlag + 1]}`);
    process.exit(2);
  }
  startScriptedModelServer({
    port,
    respond: () => ({ content: [{ type: 'text', text: 'Hello from the scripted model server.' }] }),
    log: (line) => console.error(line),
  }).then(
    (server) => {
      console.log(`listening on ${server.url}`);
      const stop = (): void => {
        void server.close().then(() => process.exit(0));
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
