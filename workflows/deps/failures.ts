/**
 * Activity failures mapped onto what the loop and the model see as data (style §7, §9): the
 * message of a failure, a handed-over model call's failure, a tool's is_error result, overload.
 */
import { ActivityFailure, ApplicationFailure, CancelledFailure, TimeoutFailure } from '@temporalio/workflow';
import { msOptionalToNumber } from '@temporalio/common/lib/time';
import { TOOL_ERROR_FAILURE_TYPE, type ToolErrorDetails } from '../../common/tool-ui';
import type { AttachFailure } from '../query/local-model-calls';

/** Failures of the model activity that mean "overloaded": the fallback model may take over. */
const OVERLOADED_FAILURE_TYPES = new Set(['overloaded_error', 'FallbackTriggered']);

/** The message of an activity failure (its cause), or of any error. */
export function failureMessage(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** Whether a model activity's failure means "overloaded" (the fallback model may take over). */
export function isOverloadedFailure(error: unknown): boolean {
  const failureType = error instanceof ActivityFailure && error.cause instanceof ApplicationFailure ? error.cause.type : undefined;
  return failureType !== undefined && failureType !== null && OVERLOADED_FAILURE_TYPES.has(failureType);
}

/** The API's retry-after a model failure carries in its details (a decoded failure has no nextRetryDelay). */
function retryAfterOf(failure: ApplicationFailure): number | undefined {
  const details = failure.details?.[0] as { retryAfterMs?: unknown } | undefined;
  if (typeof details?.retryAfterMs === 'number') return details.retryAfterMs;
  return msOptionalToNumber(failure.nextRetryDelay ?? undefined);
}

/** What continueAfterAttachFailure needs of a handed-over call's failure. */
export function attachFailure(error: unknown, aborted: boolean): AttachFailure {
  if (!(error instanceof ActivityFailure)) return { aborted, nonRetryable: true };
  const cause = error.cause;
  if (cause instanceof ApplicationFailure) {
    return { aborted, nonRetryable: cause.nonRetryable === true, type: cause.type ?? undefined, nextRetryDelayMs: retryAfterOf(cause) };
  }
  // A timeout (never picked up, or its worker died mid-stream) or a cancellation the workflow did not ask for (a shutdown).
  return { aborted, nonRetryable: !(cause instanceof TimeoutFailure || cause instanceof CancelledFailure) };
}

/** A ToolError failure of the runTool activity: the is_error result it carries (undefined for any other failure). */
export function toolErrorResult(error: unknown): ToolErrorDetails | undefined {
  if (!(error instanceof ActivityFailure) || !(error.cause instanceof ApplicationFailure) || error.cause.type !== TOOL_ERROR_FAILURE_TYPE) return undefined;
  const details = error.cause.details?.[0] as Partial<ToolErrorDetails> | undefined;
  return { content: typeof details?.content === 'string' ? details.content : error.cause.message };
}
