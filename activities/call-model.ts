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
import type { AssistantApiMessage, AssistantContentBlock, StopReason } from '../common/messages';
import { isToolUseConcurrencySafe } from '../common/tool-specs';
import { modelToolDefinitions } from './tool-definitions';

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
    // Reports go out one at a time, in stream order: the workflow starts a safe tool early only
    // when no unsafe call precedes it, so it must never see a later block before an earlier one.
    // After a failed report nothing more is reported (the workflow runs those tools after the call).
    let reports: Promise<boolean> = Promise.resolve(true);
    try {
      const stream = deps.anthropic.messages.stream(
        {
          model: input.model,
          max_tokens: input.maxTokens,
          system: input.system,
          messages: input.messages as Anthropic.MessageParam[],
          tools: modelToolDefinitions(input.toolNames),
        },
        { signal: context.cancellationSignal },
      );
      let blocks = 0;
      let outputChars = 0;
      stream.on('streamEvent', (event) => {
        if (event.type === 'content_block_delta') {
          const delta = event.delta;
          outputChars += delta.type === 'text_delta' ? delta.text.length : delta.type === 'input_json_delta' ? delta.partial_json.length : 0;
        }
        // Heartbeats are throttled by the SDK; each carries progress for the Temporal UI.
        context.heartbeat({ blocks, outputChars, overloaded: overloadedBefore });
      });
      // Only calls the workflow may start early are reported: concurrency-safe ones before the
      // first unsafe one (seed §2.4). Anything else would only add signals to the history.
      let sawUnsafe = false;
      stream.on('contentBlock', (block) => {
        blocks++;
        if (block.type !== 'tool_use' || sawUnsafe) return;
        if (!isToolUseConcurrencySafe(block)) {
          sawUnsafe = true;
          return;
        }
        if (input.streamToolUses && deps.reportToolUse) {
          const target = input.streamToolUses;
          const reportToolUse = deps.reportToolUse;
          const report = { attempt, index: blocks - 1, block: { type: 'tool_use' as const, id: block.id, name: block.name, input: block.input } };
          reports = reports.then(async (reporting) => {
            if (!reporting) return false;
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
      await reports;
      return { type: 'message', message: toAssistantMessage(final), durationMs: Date.now() - startedAt, attempt };
    } catch (error) {
      await reports;
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

function asPromptTooLong(error: unknown): Omit<Extract<CallModelResult, { type: 'prompt_too_long' }>, 'durationMs' | 'attempt'> | undefined {
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

function toAssistantMessage(message: Anthropic.Message): AssistantApiMessage {
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
