/**
 * callModel activity (seed §2.3 deps.callModel): streams one model response with the real
 * Anthropic SDK, heartbeating as events arrive so a dead worker is noticed quickly and a
 * cancellation stops the HTTP stream. Temporal owns retries (`maxRetries: 0` on the client):
 * transient API errors are thrown as retryable failures, invalid requests as non-retryable ones,
 * and the conditions the loop can recover from (prompt too long) come back as data.
 *
 * callModelLocal is the same call started as a local activity: it answers at once when the model
 * does, or hands the stream over (activities/model-call-runs.ts) to a `callModel` with `attach`
 * on this process's handoff queue.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallModelInput, CallModelLocalInput, CallModelLocalResult, CallModelResult, RequestContext } from '../common/activity-types';
import {
  type AssistantApiMessage,
  type AssistantContentBlock,
  type ServerToolUseBlock,
  type StopReason,
  type TranscriptMessage,
  type WebSearchCitation,
  type WebSearchToolResultBlock,
  buildApiMessages,
} from '../common/messages';
import { type ModelInfo, thinkingOwner } from '../common/models';
import type { NormalizeOptions } from '../common/messages';
import { metadataUserId } from './installation-id';
import { type ModelResolver, createModelResolver } from './model-resolver';
import type { RequestOptions } from './request-params';
import type { TranscriptCache, TranscriptSource } from './transcript-cache';
import type { Client } from '@temporalio/client';
import {
  FIRST_HEARTBEAT_AFTER_MS,
  type MaterializedRequest,
  type ModelCallRun,
  type RunBinding,
  type RunOutcome,
  type ToolUseReporter,
  detachedBinding,
  handOverModelCallRun,
  handoffQueueFor,
  handoffQueueRegistered,
  heartbeatingWhileBound,
  startModelCallRun,
  takeModelCallRun,
} from './model-call-runs';
import { type RunToolToResult, prefetchTools } from './prefetch-reads';

export { FIRST_HEARTBEAT_AFTER_MS, STREAMED_TOOL_REPORT_DELAY_MS, type MaterializedRequest, type ToolUseReporter } from './model-call-runs';

/**
 * Awaits `work`, heartbeating every second (or half the heartbeat timeout) while it is pending —
 * none when it is quick. For waits on the workflow (a transcript query, the live channel's last
 * batch), which can outlast the heartbeat timeout when the workflow's task is held up elsewhere.
 */
export async function heartbeatingWhile<T>(context: Context, work: Promise<T>, details: () => unknown): Promise<T> {
  const timeoutMs = context.info.heartbeatTimeoutMs;
  if (!timeoutMs) return work;
  return heartbeatingWhileBound(() => ({ heartbeatTimeoutMs: timeoutMs, heartbeat: (value) => context.heartbeat(value) }), work, details);
}

/** seed §2.8: Claude Code falls back after three consecutive overloaded (529) answers. */
export const OVERLOADED_ATTEMPTS_BEFORE_FALLBACK = 3;

const PROMPT_TOO_LONG = /prompt is too long:\s*(\d+)\s*tokens\s*>\s*(\d+)\s*maximum/i;
const NON_RETRYABLE_STATUSES = new Set([400, 401, 403, 404, 413, 422]);

/** How long a handed-over call waits for its attach activity before it is dropped, by default (the config's modelHandoffStartTimeoutMs). */
export const DEFAULT_HANDOFF_START_TIMEOUT_MS = 10_000;
/** A handed-over call nobody attached to is dropped this long after the attach activity's schedule-to-start timeout. */
export const ORPHAN_GRACE_MS = 5_000;

export interface CallModelDeps {
  /** Undefined when neither ANTHROPIC_API_KEY nor ANTHROPIC_BASE_URL is configured. */
  anthropic: Anthropic | undefined;
  /** Reports streamed tool_use blocks to the workflow (signal); absent when no client is wired. */
  reportToolUse?: ToolUseReporter;
  /** Where the request's transcript and context are materialised (model calls by reference). */
  transcriptCache: TranscriptCache;
  /** Fills cache misses (the workflow's queries); absent when no client is wired. */
  transcriptSource?: TranscriptSource;
  /** Publishes deltas to the conversation's live channel (issue 10); absent when no client is wired. */
  temporalClient?: Client;
  /** Runs the reads a local call's answer asks for (`CallModelLocalInput.prefetch`); absent: none are. */
  runToolToResult?: RunToolToResult;
  /** The Models API, cached per worker (activities/model-resolver.ts); absent: one is made from `anthropic`. */
  models?: ModelResolver;
  /** The hashed installation id for `metadata.user_id`; absent: no metadata is sent. */
  installationId?: () => Promise<string>;
}

/** The model of a call as the Models API describes it, and its request options (thinking, effort, metadata). */
export async function requestSetup(
  deps: CallModelDeps,
  input: Pick<CallModelInput, 'model' | 'conversationId' | 'thinking' | 'effort'>,
): Promise<RequestSetup> {
  deps.models ??= createModelResolver(deps.anthropic);
  const [model, hashedId] = await Promise.all([deps.models.resolve(input.model), deps.installationId?.().catch(() => undefined)]);
  return {
    model,
    options: {
      thinking: input.thinking,
      effort: input.effort,
      userId: hashedId ? metadataUserId(hashedId, input.conversationId) : undefined,
    },
  };
}

/** Keeps thinking blocks only on messages of the model that signed them (seed §2.8: a fallback strips them). */
export function thinkingOf(model: ModelInfo): NormalizeOptions {
  const owner = thinkingOwner(model.id);
  return { keepThinkingOf: (written) => thinkingOwner(written) === owner };
}

/**
 * Builds the request from its references: the transcript window from the worker's cache (or the
 * workflow, on a miss), verified by digest; inputs of calls scheduled before model calls went by
 * reference carry it inline.
 */
export async function materializeRequest(
  input: CallModelInput,
  cache: TranscriptCache,
  source: TranscriptSource | undefined,
  setup: RequestSetup,
): Promise<MaterializedRequest> {
  if (!input.transcript || !input.context) return assembleRequest(input, setup);
  const [messages, context] = await Promise.all([
    cache.materialize(input.conversationId, input.transcript, source),
    cache.context(input.conversationId, input.context.digest, source),
  ]);
  return assembleRequest(input, setup, messages, context);
}

/** The request from the worker's cache alone (or inline), or undefined when the cache does not hold it. */
export function materializeCachedRequest(input: CallModelInput, cache: TranscriptCache, setup: RequestSetup): MaterializedRequest | undefined {
  if (!input.transcript || !input.context) return assembleRequest(input, setup);
  const messages = cache.cached(input.conversationId, input.transcript);
  const context = messages && cache.cachedContext(input.context.digest);
  return messages && context ? assembleRequest(input, setup, messages, context) : undefined;
}

/** The request from the transcript and context materialised for it, or from the input's inline parts. */
function assembleRequest(input: CallModelInput, setup: RequestSetup, messages?: TranscriptMessage[], context?: RequestContext): MaterializedRequest {
  if (!messages || !context) return { system: input.system ?? [], messages: input.messages ?? [], toolNames: input.toolNames ?? [], ...setup };
  return {
    system: context.system,
    messages: buildApiMessages(messages.slice(input.transcript?.from ?? 0), context.userContext, thinkingOf(setup.model)),
    toolNames: context.toolNames,
    structuredOutputSchema: context.structuredOutputSchema,
    ...(context.mcpTools && { mcpTools: context.mcpTools }),
    ...(context.webSearch && { webSearch: context.webSearch }),
    ...setup,
  };
}

/** A model call's model and request options (requestSetup). */
export interface RequestSetup {
  model: ModelInfo;
  options: RequestOptions;
}

function missingApiKey(): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    'No Anthropic API key: set ANTHROPIC_API_KEY in the worker environment (or ANTHROPIC_BASE_URL for a compatible local server) and restart the worker.',
    'MissingApiKeyError',
  );
}

/** A run's binding to the activity running in `context`: heartbeats (none for a local activity), cancellation, log. */
export function contextBinding(context: Context, binding: { attempt: number; overloadedBefore: number; since: number }): RunBinding {
  const local = context.info.isLocal;
  const heartbeatTimeoutMs = local ? undefined : context.info.heartbeatTimeoutMs;
  return {
    attempt: binding.attempt,
    overloadedBefore: binding.overloadedBefore,
    heartbeatTimeoutMs,
    firstHeartbeatAt: local ? Infinity : binding.since + Math.min(FIRST_HEARTBEAT_AFTER_MS, (heartbeatTimeoutMs ?? Infinity) / 2),
    heartbeat: local ? () => undefined : (details) => context.heartbeat(details),
    cancellationSignal: context.cancellationSignal,
    holdSignals: local,
    log: context.log,
  };
}

/**
 * The activity's answer for a run that ended: the message, or prompt too long as data; a
 * cancellation or an API failure thrown, classified (the overloaded count goes into the heartbeat
 * details first, so the next attempt continues it).
 */
export function runResult(outcome: RunOutcome, run: ModelCallRun, binding: RunBinding, input: CallModelInput): CallModelResult {
  const attempt = binding.attempt;
  if (outcome.type === 'message') return { type: 'message', message: toAssistantMessage(outcome.message), durationMs: Date.now() - run.startedAt, attempt };
  const error = outcome.error;
  if (outcome.cancelled) throw new CancelledFailure('Model call cancelled');
  const recoverable = asPromptTooLong(error);
  if (recoverable) return { ...recoverable, durationMs: Date.now() - run.startedAt, attempt };
  const overloaded = isOverloaded(error) ? binding.overloadedBefore + 1 : 0;
  binding.heartbeat({ overloaded });
  throw classifyModelError(error, overloaded, input.fallbackAvailable ?? false);
}

export function createCallModel(deps: CallModelDeps) {
  return async function callModel(input: CallModelInput): Promise<CallModelResult> {
    const context = Context.current();
    const attempt = context.info.attempt + (input.attemptOffset ?? 0);
    // Consecutive overloaded answers before this attempt, carried across retries in heartbeat
    // details: only an unbroken run of 529s triggers the fallback, as in Claude Code.
    const overloadedBefore = Number((context.info.heartbeatDetails as { overloaded?: number } | undefined)?.overloaded ?? input.overloadedBefore ?? 0);
    if (!deps.anthropic) throw missingApiKey();
    // A call callModelLocal handed over: its first attempt continues the stream this process holds
    // (no new request); later attempts, and a process that does not hold it, start afresh.
    const handedOver = input.attach && context.info.attempt === 1 ? takeModelCallRun(input.attach.key) : undefined;
    if (handedOver) {
      const binding = contextBinding(context, { attempt, overloadedBefore, since: Date.now() });
      handedOver.bind(binding);
      return runResult(await handedOver.outcome, handedOver, binding, input);
    }
    const startedAt = Date.now();
    const heartbeatDetails = () => ({ overloaded: overloadedBefore });
    // A cache miss asks the workflow (a query): behind a workflow task held up on a dead worker's
    // sticky queue it can wait longer than the heartbeat timeout, so keep heartbeating meanwhile.
    const setup = await requestSetup(deps, input);
    const request = await heartbeatingWhile(context, materializeRequest(input, deps.transcriptCache, deps.transcriptSource, setup), heartbeatDetails);
    const binding = contextBinding(context, { attempt, overloadedBefore, since: startedAt });
    const run = startModelCallRun({ ...deps, anthropic: deps.anthropic, input, request, binding, startedAt });
    return runResult(await run.outcome, run, binding, input);
  };
}

/** How long after its first text delta a local model call's stream is handed over unless it has ended. */
export const FIRST_DELTA_GRACE_MS = 50;

/**
 * The local phase of a model call (CallModelLocalInput): materialises the request from this
 * worker's cache only (never a query: it would wait for the workflow task this local activity
 * holds open), streams for up to `handoffAfterMs`, and answers with the outcome — or hands the
 * stream over to this process's handoff queue, where `callModel` with `attach` picks it up.
 */
export function createCallModelLocal(deps: CallModelDeps) {
  return async function callModelLocal(input: CallModelLocalInput): Promise<CallModelLocalResult> {
    const context = Context.current();
    const startedAt = Date.now();
    const elapsedMs = () => Date.now() - startedAt;
    const attempt = 1 + (input.attemptOffset ?? 0);
    if (!deps.anthropic) throw missingApiKey();
    const handoffQueue = handoffQueueFor(context.info.taskQueue);
    if (!handoffQueue) return { type: 'handoff', reason: 'no_handoff_queue', elapsedMs: elapsedMs() };
    const request = materializeCachedRequest(input, deps.transcriptCache, await requestSetup(deps, input));
    if (!request) return { type: 'handoff', reason: 'cache_miss', elapsedMs: elapsedMs() };
    const binding = contextBinding(context, { attempt, overloadedBefore: 0, since: startedAt });
    const run = startModelCallRun({ ...deps, anthropic: deps.anthropic, input, request, binding, startedAt });
    const timers = new AbortController();
    const elapsed = (ms: number) => sleep(ms, undefined, { signal: timers.signal }).catch(() => undefined);
    // A stream that has begun is not an instant answer (issue 19, item 16): FIRST_DELTA_GRACE_MS
    // after its first words it is handed over, so they reach readers at the live channel's pace
    // instead of when the local phase ends. An answer whose whole stream fits the grace stays local.
    const begun = run.firstDelta.then(() => elapsed(FIRST_DELTA_GRACE_MS));
    const outcome = await Promise.race([run.outcome, elapsed(Math.max(0, input.handoffAfterMs)), begun]);
    timers.abort();
    let reason: 'slow' | 'failed' = 'slow';
    if (outcome) {
      if (outcome.type === 'message' || outcome.cancelled || asPromptTooLong(outcome.error)) {
        const result = runResult(outcome, run, binding, input);
        if (result.type !== 'message' || !input.prefetch || !deps.runToolToResult) return { ...result, finishedAt: Date.now(), elapsedMs: elapsedMs() };
        // An answer that asks for reads gets them run here, in this local activity (activities/prefetch-reads.ts).
        const prefetched = await prefetchTools(result.message, input.prefetch, input.conversationId, deps.runToolToResult);
        return { ...result, ...(prefetched ? { prefetched } : {}), finishedAt: Date.now(), elapsedMs: elapsedMs() };
      }
      // The attached activity's first attempt throws it, classified there: Temporal's retry policy applies as ever.
      reason = 'failed';
    } else if (context.cancellationSignal.aborted) {
      run.abort(context.cancellationSignal.reason);
      throw new CancelledFailure('Model call cancelled');
    }
    // The worker may have begun to shut down meanwhile: a queue nobody polls any more would leave
    // the call waiting out its schedule-to-start timeout. Send it afresh on the workflow's queue.
    if (!handoffQueueRegistered(context.info.taskQueue, handoffQueue)) {
      run.abort(new Error(`The handoff queue ${handoffQueue} stopped before model call could be handed over`));
      return { type: 'handoff', reason: 'no_handoff_queue', elapsedMs: elapsedMs() };
    }
    run.bind(detachedBinding(attempt, context.log));
    const key = handOverModelCallRun(run, handoffQueue, (input.handoffStartTimeoutMs ?? DEFAULT_HANDOFF_START_TIMEOUT_MS) + ORPHAN_GRACE_MS);
    return { type: 'handoff', reason, attach: { key, taskQueue: handoffQueue }, elapsedMs: elapsedMs() };
  };
}

export function asPromptTooLong(error: unknown): Omit<Extract<CallModelResult, { type: 'prompt_too_long' }>, 'durationMs' | 'attempt'> | undefined {
  if (!(error instanceof Anthropic.APIError) || error.status !== 400) return undefined;
  const message = apiErrorMessage(error);
  const match = PROMPT_TOO_LONG.exec(message);
  if (!match) return undefined;
  return { type: 'prompt_too_long', errorMessage: message, actualTokens: Number(match[1]), limitTokens: Number(match[2]) };
}

function isOverloaded(error: unknown): boolean {
  return error instanceof Anthropic.APIError && (error.status === 529 || apiErrorType(error) === 'overloaded_error');
}

/**
 * Maps an SDK error onto a Temporal failure: retryable unless retrying cannot help.
 * `consecutiveOverloaded` counts this answer too when it is an overload.
 */
export function classifyModelError(error: unknown, consecutiveOverloaded: number, fallbackAvailable: boolean): ApplicationFailure {
  if (error instanceof Anthropic.APIConnectionError) {
    return ApplicationFailure.retryable(`Could not reach the Anthropic API: ${error.message}`, 'connection_error');
  }
  if (error instanceof Anthropic.APIError) {
    const type = apiErrorType(error);
    const message = `Anthropic API ${error.status ?? 'stream'} ${type}: ${apiErrorMessage(error)}`;
    if (type === 'overloaded_error' || error.status === 529) {
      if (fallbackAvailable && consecutiveOverloaded >= OVERLOADED_ATTEMPTS_BEFORE_FALLBACK) {
        return ApplicationFailure.nonRetryable(message, 'FallbackTriggered');
      }
      return retryable(message, 'overloaded_error', retryAfterMs(error));
    }
    if (error.status !== undefined && NON_RETRYABLE_STATUSES.has(error.status)) {
      return ApplicationFailure.nonRetryable(message, type);
    }
    return retryable(message, type, retryAfterMs(error));
  }
  const message = error instanceof Error ? error.message : String(error);
  return ApplicationFailure.retryable(`Model call failed: ${message}`, 'model_call_error');
}

/** A retryable failure; the API's retry-after (when it sent one) overrides Temporal's backoff. */
function retryable(message: string, type: string, nextRetryDelayMs: number | undefined): ApplicationFailure {
  // The delay also rides in the details: a failure decoded in the workflow has no nextRetryDelay,
  // and a handed-over call's retry is the workflow's to time (workflows/query/local-model-calls.ts).
  return ApplicationFailure.create({
    message,
    type,
    nonRetryable: false,
    nextRetryDelay: nextRetryDelayMs,
    details: nextRetryDelayMs === undefined ? undefined : [{ retryAfterMs: nextRetryDelayMs }],
  });
}

/** The retry-after header (seconds or an HTTP date), or retry-after-ms, in milliseconds. */
export function retryAfterMs(error: InstanceType<typeof Anthropic.APIError>): number | undefined {
  const headers = error.headers;
  const ms = Number(headers?.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds > 0 ? seconds * 1000 : undefined;
  const at = Date.parse(value);
  return Number.isFinite(at) && at > Date.now() ? at - Date.now() : undefined;
}

function apiErrorType(error: InstanceType<typeof Anthropic.APIError>): string {
  const body = error.error as { error?: { type?: string }; type?: string } | undefined;
  return body?.error?.type ?? (body?.type !== 'error' ? body?.type : undefined) ?? error.type ?? (error.status === 429 ? 'rate_limit_error' : 'api_error');
}

function apiErrorMessage(error: InstanceType<typeof Anthropic.APIError>): string {
  const body = error.error as { error?: { message?: string } } | undefined;
  return body?.error?.message ?? error.message;
}

export function toAssistantMessage(message: Anthropic.Message): AssistantApiMessage {
  const content: AssistantContentBlock[] = [];
  for (const block of message.content) {
    if (block.type === 'text') {
      // Citations go back exactly as they came (issue 33: the API checks their encrypted_index).
      const citations = (block.citations ?? []).filter((citation) => citation.type === 'web_search_result_location');
      content.push(citations.length > 0 ? { type: 'text', text: block.text, citations: citations as WebSearchCitation[] } : { type: 'text', text: block.text });
    } else if (block.type === 'tool_use') content.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
    else if (block.type === 'thinking') content.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
    else if (block.type === 'redacted_thinking') content.push({ type: 'redacted_thinking', data: block.data });
    // Server tool blocks are kept whole: the next request sends them back verbatim (encrypted_content unchanged).
    else if (block.type === 'server_tool_use' && block.name === 'web_search') content.push({ ...block } as ServerToolUseBlock);
    else if (block.type === 'web_search_tool_result') content.push({ ...block } as WebSearchToolResultBlock);
  }
  const searches = message.usage.server_tool_use?.web_search_requests ?? 0;
  return {
    id: message.id,
    role: 'assistant',
    model: message.model,
    content,
    stop_reason: (message.stop_reason ?? null) as StopReason | null,
    usage: {
      input_tokens: message.usage.input_tokens ?? 0,
      output_tokens: message.usage.output_tokens ?? 0,
      cache_creation_input_tokens: message.usage.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: message.usage.cache_read_input_tokens ?? 0,
      ...(searches > 0 ? { server_tool_use: { web_search_requests: searches } } : {}),
    },
  };
}
