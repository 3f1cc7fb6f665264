/**
 * When a conversation's run continues as new (pure). Continuing is not free here: the next run
 * starts with the transcript (the window after the last compact boundary) in its input, so every
 * switch writes the transcript into history once more. The server's `continueAsNewSuggested` comes
 * early on event count alone (4,096 events on a default server), long before any limit that
 * matters (warning at 10,240 events, termination at 51,200 events or 50 MB); a live-channel reader's
 * long-polls add events but few bytes. So a suggestion is followed once history is large enough for
 * replay cost to matter, and our own thresholds (configurable events; after a compaction) stay.
 */
import { log } from '@temporalio/workflow';
import type { CarriedState } from './definitions';

/**
 * Budget for one payload: below Temporal's default 2 MB limit, with room for the payload's
 * metadata and the rest of the command. Model calls go by reference, so only continue-as-new
 * carries the transcript in one payload; a larger one stays in its run (its history still grows
 * linearly).
 */
export const MAX_PAYLOAD_BYTES = 1_800_000;
/** A suggestion is followed from this many events (under the server's 10,240-event warning). */
export const SUGGESTION_FOLLOWED_AFTER_EVENTS = 10_000;
/** … or from this many bytes of history (the server's default size suggestion). */
export const SUGGESTION_FOLLOWED_AFTER_BYTES = 4 * 1024 * 1024;
/** After a compaction the run continues as new once its history has this many events. */
export const CONTINUE_AS_NEW_AFTER_COMPACTION_EVENTS = 500;

export interface ContinueAsNewInput {
  /** The carried state fits in a start input (the session's own check). */
  fits: boolean;
  historyLength: number;
  historySizeBytes: number;
  suggested: boolean;
  /** Configured ceiling (`continueAsNewAfterEvents`). */
  maxEvents: number;
  compactedThisRun: boolean;
}

/**
 * `true`/`false`, or `'suggested'` when only the server's suggestion speaks for it: the caller
 * decides that case with {@link followsSuggestion}.
 */
export function continueAsNewDecision(input: ContinueAsNewInput): boolean | 'suggested' {
  if (!input.fits) return false;
  if (input.historyLength > input.maxEvents) return true;
  if (input.compactedThisRun && input.historyLength > CONTINUE_AS_NEW_AFTER_COMPACTION_EVENTS) return true;
  return input.suggested ? 'suggested' : false;
}

/** Whether a server suggestion is worth the transcript it costs to follow now. */
export function followsSuggestion(input: Pick<ContinueAsNewInput, 'historyLength' | 'historySizeBytes'>): boolean {
  return input.historyLength >= SUGGESTION_FOLLOWED_AFTER_EVENTS || input.historySizeBytes >= SUGGESTION_FOLLOWED_AFTER_BYTES;
}

/**
 * The continue-as-new input within MAX_PAYLOAD_BYTES: the feed's tail and the live channel's
 * log are a convenience and go first; the transcript is not, so a state that still does not fit
 * gives undefined (the run goes on, its history just grows).
 */
export function fitContinueAsNewInput(config: unknown, carried: CarriedState): CarriedState | undefined {
  if (jsonBytes({ config, carried }) <= MAX_PAYLOAD_BYTES) return carried;
  const trimmed: CarriedState = { ...carried, recentEvents: [] };
  if (trimmed.streamState)
    trimmed.streamState = { ...trimmed.streamState, base_offset: trimmed.streamState.base_offset + trimmed.streamState.log.length, log: [] };
  return jsonBytes({ config, carried: trimmed }) > MAX_PAYLOAD_BYTES ? undefined : trimmed;
}

/** UTF-8 size of a value as JSON — what Temporal's payload limit counts. */
function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}

/** The owners' slices of a session collected into the next run's input (continue-as-new), and whether they still fit one payload. */
export class CarriedAssembly {
  /** False once the state proved too large for a continue-as-new payload (this run then goes on). */
  fits = true;

  assemble(config: unknown, slices: ReadonlyArray<() => Partial<CarriedState>>): CarriedState | undefined {
    const next = Object.assign({}, ...slices.map((slice) => slice())) as CarriedState;
    const fitted = fitContinueAsNewInput(config, next);
    if (!fitted) {
      log.warn('Conversation state too large to continue as new; staying in this run');
      this.fits = false;
    }
    return fitted;
  }
}
