import { describe, expect, it } from 'vitest';
import {
  CONTINUE_AS_NEW_AFTER_COMPACTION_EVENTS,
  SUGGESTION_FOLLOWED_AFTER_BYTES,
  SUGGESTION_FOLLOWED_AFTER_EVENTS,
  continueAsNewDecision,
  followsSuggestion,
} from '../../workflows/continue-as-new';

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
