import { describe, expect, it } from 'vitest';
import {
  CONTINUE_AS_NEW_AFTER_COMPACTION_EVENTS,
  SUGGESTION_FOLLOWED_AFTER_BYTES,
  SUGGESTION_FOLLOWED_AFTER_EVENTS,
  MAX_PAYLOAD_BYTES,
  continueAsNewDecision,
  fitContinueAsNewInput,
  followsSuggestion,
} from '../../workflows/continue-as-new';
import type { CarriedState } from '../../workflows/definitions';

const base = { fits: true, historyLength: 100, historySizeBytes: 50_000, suggested: false, maxEvents: 20_000, compactedThisRun: false };

describe('continueAsNewDecision', () => {
  it('never when the carried state does not fit, whatever else speaks for it', () => {
    expect(continueAsNewDecision({ ...base, fits: false, historyLength: 30_000, suggested: true, compactedThisRun: true })).toBe(false);
  });
  it('past the configured ceiling, and after a compaction once the run has some history', () => {
    expect(continueAsNewDecision({ ...base, historyLength: 20_001 })).toBe(true);
    expect(continueAsNewDecision({ ...base, compactedThisRun: true, historyLength: CONTINUE_AS_NEW_AFTER_COMPACTION_EVENTS + 1 })).toBe(true);
    expect(continueAsNewDecision({ ...base, compactedThisRun: true, historyLength: CONTINUE_AS_NEW_AFTER_COMPACTION_EVENTS })).toBe(false);
  });
  it('leaves a bare server suggestion to the caller, and is false without one', () => {
    expect(continueAsNewDecision({ ...base, suggested: true })).toBe('suggested');
    expect(continueAsNewDecision(base)).toBe(false);
  });
});

describe('followsSuggestion', () => {
  it('not on event count alone at the server default (4,096): a new run would carry the transcript again', () => {
    expect(followsSuggestion({ historyLength: 4_096, historySizeBytes: 3_000_000 })).toBe(false);
  });
  it('once history is long or large enough for replay cost to matter', () => {
    expect(followsSuggestion({ historyLength: SUGGESTION_FOLLOWED_AFTER_EVENTS, historySizeBytes: 1_000 })).toBe(true);
    expect(followsSuggestion({ historyLength: 4_096, historySizeBytes: SUGGESTION_FOLLOWED_AFTER_BYTES })).toBe(true);
  });
});

describe('fitContinueAsNewInput', () => {
  const text = (chars: number) => 'x'.repeat(chars);
  const carried = (transcriptChars: number, feedChars: number): CarriedState => ({
    messages: [{ type: 'user', uuid: 'u1', message: { role: 'user', content: text(transcriptChars) } }],
    usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    totalCostUsd: 0,
    queryCount: 1,
    pendingInputs: [],
    lastQueryTransitions: [],
    continuedAsNewCount: 0,
    nextEventSeq: 1,
    recentEvents: [{ seq: 0, message: { type: 'system', uuid: 's1', level: 'info', content: text(feedChars) } }],
  });
  it('keeps a state that fits as it is', () => {
    const state = carried(1_000, 1_000);
    expect(fitContinueAsNewInput({}, state)).toBe(state);
  });
  it('drops the feed tail before giving up: the transcript is what must travel', () => {
    const fitted = fitContinueAsNewInput({}, carried(MAX_PAYLOAD_BYTES / 2, MAX_PAYLOAD_BYTES / 2 + 10_000));
    expect(fitted?.recentEvents).toEqual([]);
    expect(fitted?.messages).toHaveLength(1);
  });
  it('is undefined when the transcript alone does not fit (the run goes on)', () => {
    expect(fitContinueAsNewInput({}, carried(MAX_PAYLOAD_BYTES + 1, 0))).toBeUndefined();
  });
});
