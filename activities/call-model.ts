/**
 * callModel activity (seed §2.3 deps.callModel): streams one model response with the real
 * Anthropic SDK, heartbeating as events arrive so a dead worker is noticed quickly and a
 * cancellation stops the HTTP stream. Temporal owns retries (`maxRetries: 0` on the client):
 * transient API errors are thrown as retryable failures, invalid requests as non-retryable ones,
 * and the conditions the loop can recover from (prompt too long) come back as data.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { CallModelInput, CallModelResult } from '../common/activity-types';
import { type ApiMessage, type AssistantApiMessage, type AssistantContentBlock, type StopReason, buildApiMessages } from '../common/messages';
import type { SystemPromptBlock } from '../common/activity-types';
import type { TranscriptCache, TranscriptSource } from './transcript-cache';
import { isToolUseStartableEarly } from '../common/tool-specs';
import { modelToolDefinitions } from './tool-definitions';
import type { Client } from '@temporalio/client';
import { type LivePublisher, livePublisher } from './live-publisher';

/**
 * A streamed tool_use is reported (a signal: a workflow task and four history events) only when
 * the stream is still going this long after the block completed. A tool the model names at the
 * end of its answer starts as soon as the call returns anyway; early start pays off only while
 * the model keeps streaming (seed §2.4), so quick answers cost no signals at all.
 */
export const STREAMED_TOOL_REPORT_DELAY_MS = 50;

/**
 * No heartbeat before a call has run this long (or half its heartbeat timeout, if shorter). The
 * SDK sends the first heartbeat at once — an RPC and a mutable-state write on the server per
 * model call — and the worker holds the call's completion until that RPC has returned: 2–4 ms of
 * every loop iteration (bench/results/iteration-overhead.md). Quick calls need none; a long
 * stream heartbeats from here on (throttled by the worker), so a dead worker and a cancellation
 * are still noticed within about a second more than before.
 */
export const FIRST_HEARTBEAT_AFTER_MS = 1_000;

/**
 * Awaits `work`, heartbeating every second (or half the heartbeat timeout) while it is pending —
 * none when it is quick. For waits on the workflow (a transcript query, the live channel's last
 * batch), which can outlast the heartbeat timeout when the workflow's task is held up elsewhere.
 */
export async function heartbeatingWhile<T>(context: Context, work: Promise<T>, details: () => unknown): Promise<T> {
  const timeoutMs = context.info.heartbeatTimeoutMs;
  if (!timeoutMs) return work;
  const timer = setInterval(() => context.heartbeat(details()), Math.max(100, Math.min(FIRST_HEARTBEAT_AFTER_MS, timeoutMs / 2)));
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

/** seed §2.8: Claude Code falls back after three consecutive overloaded (529) answers. */
export const OVERLOADED_ATTEMPTS_BEFORE_FALLBACK = 3;

const PROMPT_TOO_LONG = /prompt is too long:\s*(\d+)\s*tokens\s*>\s*(\d+)\s*maximum/i;
const NON_RETRYABLE_STATUSES = new Set([400, 401, 403, 404, 413, 422]);

export interface ToolUseReporter {
  (target: NonNullable<CallModelInput['streamToolUses']>, report: { attempt: number; index: number; block: { type: 'tool_use'; id: string; name: string; input: unknown } }): Promise<void>;
}

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
}

/** The request a CallModelInput refers to, as the API takes it. */
export interface MaterializedRequest {
  system: SystemPromptBlock[];
  messages: ApiMessage[];
  toolNames: string[];
  structuredOutputSchema?: Record<string, unknown>;
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
): Promise<MaterializedRequest> {
  if (!input.transcript || !input.context) {
    return { system: repairLegacySystem(input.system ?? []), messages: input.messages ?? [], toolNames: input.toolNames ?? [] };
  }
  const [messages, context] = await Promise.all([
    cache.materialize(input.conversationId, input.transcript, source),
    cache.context(input.conversationId, input.context.digest, source),
  ]);
  return {
    system: context.system,
    messages: buildApiMessages(messages.slice(input.transcript.from ?? 0), context.userContext),
    toolNames: context.toolNames,
    structuredOutputSchema: context.structuredOutputSchema,
  };
}

export function createCallModel(deps: CallModelDeps) {
  return async function callModel(input: CallModelInput): Promise<CallModelResult> {
    const context = Context.current();
    const attempt = context.info.attempt;
    // Consecutive overloaded answers before this attempt, carried across retries in heartbeat
    // details: only an unbroken run of 529s triggers the fallback, as in Claude Code.
    const overloadedBefore = Number((context.info.heartbeatDetails as { overloaded?: number } | undefined)?.overloaded ?? 0);
    if (!deps.anthropic) {
      throw ApplicationFailure.nonRetryable(
        'No Anthropic API key: set ANTHROPIC_API_KEY in the worker environment (or ANTHROPIC_BASE_URL for a compatible local server) and restart the worker.',
        'MissingApiKeyError',
      );
    }
    const startedAt = Date.now();
    const heartbeatDetails = () => ({ overloaded: overloadedBefore });
    // A cache miss asks the workflow (a query): behind a workflow task held up on a dead worker's
    // sticky queue it can wait longer than the heartbeat timeout, so keep heartbeating meanwhile.
    const request = await heartbeatingWhile(context, materializeRequest(input, deps.transcriptCache, deps.transcriptSource), heartbeatDetails);
    // Reports go out one at a time, in stream order: the workflow starts a safe tool early only
    // when no unsafe call precedes it, so it must never see a later block before an earlier one.
    // After a failed report nothing more is reported (the workflow runs those tools after the call).
    let reports: Promise<boolean> = Promise.resolve(true);
    let endStream: () => void = () => {};
    const streamEnded = new Promise<void>((resolve) => (endStream = resolve));
    let ended = false;
    /** Waits until `at` (ms since epoch) unless the stream ends first; true if it is still going. */
    const stillStreamingAt = async (at: number): Promise<boolean> => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([streamEnded, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, at - Date.now()))))]);
      clearTimeout(timer);
      return !ended;
    };
    let live: LivePublisher | undefined;
    try {
      live = livePublisher(deps.temporalClient, input.stream);
      const call = { requestId: input.stream?.requestId ?? '', attempt, fallback: input.stream?.fallback ?? 0 };
      const stream = deps.anthropic.messages.stream(
        {
          model: input.model,
          max_tokens: input.maxTokens,
          system: request.system,
          messages: request.messages as Anthropic.MessageParam[],
          tools: modelToolDefinitions(request.toolNames, request.structuredOutputSchema),
        },
        { signal: context.cancellationSignal },
      );
      let blocks = 0;
      let outputChars = 0;
      const firstHeartbeatAt = startedAt + Math.min(FIRST_HEARTBEAT_AFTER_MS, (context.info.heartbeatTimeoutMs ?? Infinity) / 2);
      stream.on('streamEvent', (event) => {
        if (event.type === 'content_block_delta') {
          const delta = event.delta;
          outputChars += delta.type === 'text_delta' ? delta.text.length : delta.type === 'input_json_delta' ? delta.partial_json.length : 0;
          if (delta.type === 'text_delta') live?.model({ type: 'text_delta', call, index: event.index, text: delta.text });
          else if (delta.type === 'thinking_delta') live?.model({ type: 'thinking_delta', call, index: event.index, thinking: delta.thinking });
        } else if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
          live?.model({ type: 'tool_use_start', call, index: event.index, id: event.content_block.id, name: event.content_block.name });
        }
        // Heartbeats are throttled by the SDK; each carries progress for the Temporal UI.
        if (Date.now() >= firstHeartbeatAt) context.heartbeat({ blocks, outputChars, overloaded: overloadedBefore });
      });
      // Only calls the workflow may start early are reported: concurrency-safe ones before the
      // first unsafe one (seed §2.4). Anything else would only add signals to the history.
      let sawUnsafe = false;
      stream.on('contentBlock', (block) => {
        blocks++;
        if (block.type !== 'tool_use' || sawUnsafe) return;
        if (!isToolUseStartableEarly(block)) {
          sawUnsafe = true;
          return;
        }
        if (input.streamToolUses && deps.reportToolUse) {
          const target = input.streamToolUses;
          const reportToolUse = deps.reportToolUse;
          const report = { attempt, index: blocks - 1, block: { type: 'tool_use' as const, id: block.id, name: block.name, input: block.input } };
          const reportAt = Date.now() + STREAMED_TOOL_REPORT_DELAY_MS;
          reports = reports.then(async (reporting) => {
            if (!reporting || !(await stillStreamingAt(reportAt))) return false;
            try {
              await reportToolUse(target, report);
              return true;
            } catch (error) {
              context.log.warn('Could not report a streamed tool_use; later ones are not reported either', { error: String(error) });
              return false;
            }
          });
        }
      });
      const final = await stream.finalMessage();
      ended = true;
      endStream();
      await reports;
      // The deltas reach the workflow before the message does: readers never see them after it.
      if (live) {
        await heartbeatingWhile(context, live.close(), heartbeatDetails).catch((error: unknown) => context.log.warn('Could not publish the last deltas', { error: String(error) }));
      }
      return { type: 'message', message: toAssistantMessage(final), durationMs: Date.now() - startedAt, attempt };
    } catch (error) {
      ended = true;
      endStream();
      await reports;
      live?.abandon();
      if (context.cancellationSignal.aborted || error instanceof Anthropic.APIUserAbortError) {
        throw new CancelledFailure('Model call cancelled');
      }
      const recoverable = asPromptTooLong(error);
      if (recoverable) return { ...recoverable, durationMs: Date.now() - startedAt, attempt };
      const overloaded = isOverloaded(error) ? overloadedBefore + 1 : 0;
      context.heartbeat({ overloaded });
      throw classifyModelError(error, overloaded, input.fallbackAvailable ?? false);
    }
  };
}

/**
 * Calls scheduled by older code put the seed's dynamic boundary on the wire as an empty text
 * block with cache_control, which the API rejects: drop empty blocks, moving a dropped block's
 * cache breakpoint to the block before it.
 */
export function repairLegacySystem(system: SystemPromptBlock[]): SystemPromptBlock[] {
  const repaired: SystemPromptBlock[] = [];
  for (const block of system) {
    if (block.text.trim() !== '') {
      repaired.push(block);
      continue;
    }
    const previous = repaired[repaired.length - 1];
    if (block.cache_control && previous && !previous.cache_control) repaired[repaired.length - 1] = { ...previous, cache_control: block.cache_control };
  }
  return repaired;
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
  return ApplicationFailure.create({ message, type, nonRetryable: false, nextRetryDelay: nextRetryDelayMs });
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
  return body?.error?.type ?? (body?.type !== 'error' ? body?.type : undefined) ?? error.type ?? statusName(error.status);
}

function apiErrorMessage(error: InstanceType<typeof Anthropic.APIError>): string {
  const body = error.error as { error?: { message?: string } } | undefined;
  return body?.error?.message ?? error.message;
}

function statusName(status: number | undefined): string {
  if (status === 429) return 'rate_limit_error';
  if (status !== undefined && status >= 500) return 'api_error';
  return 'api_error';
}

export function toAssistantMessage(message: Anthropic.Message): AssistantApiMessage {
  const content: AssistantContentBlock[] = [];
  for (const block of message.content) {
    if (block.type === 'text') content.push({ type: 'text', text: block.text });
    else if (block.type === 'tool_use') content.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
    else if (block.type === 'thinking') content.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
    else if (block.type === 'redacted_thinking') content.push({ type: 'redacted_thinking', data: block.data });
  }
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
    },
  };
}
