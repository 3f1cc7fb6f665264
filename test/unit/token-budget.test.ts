/** seed §2.6: token budget continuation and context-window thresholds. */
import { describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../../common/messages';
import { calculateThresholds, contextWindowForModel, tokenCountWithEstimation } from '../../workflows/compaction/auto';
import { checkTokenBudget, createBudgetTracker, parseTokenBudget } from '../../workflows/query/token-budget';

describe('checkTokenBudget', () => {
  it('continues below 90% and stops at it', () => {
    const first = checkTokenBudget(createBudgetTracker(), undefined, 10_000, 2_000);
    expect(first).toMatchObject({ action: 'continue', pct: 20 });
    expect(first.action === 'continue' && first.nudgeMessage).toBe('Stopped at 20% of token target (2,000 / 10,000). Keep working — do not summarize.');
    const done = checkTokenBudget(first.tracker, undefined, 10_000, 9_000);
    expect(done).toMatchObject({ action: 'stop', completionEvent: { pct: 90, continuationCount: 1, diminishingReturns: false } });
  });

  it('stops on diminishing returns: after three continuations, two small deltas in a row', () => {
    let tracker = createBudgetTracker();
    for (const tokens of [1_000, 2_000, 3_000]) {
      const decision = checkTokenBudget(tracker, undefined, 100_000, tokens);
      expect(decision.action).toBe('continue');
      tracker = decision.tracker;
    }
    // One small delta (after a big one) is not enough...
    const small = checkTokenBudget(tracker, undefined, 100_000, 3_100);
    expect(small.action).toBe('continue');
    // ...two in a row are.
    const smallAgain = checkTokenBudget(small.tracker, undefined, 100_000, 3_200);
    expect(smallAgain).toMatchObject({ action: 'stop', completionEvent: { diminishingReturns: true, continuationCount: 4 } });
  });

  it('never continues for subagents or without a budget', () => {
    expect(checkTokenBudget(createBudgetTracker(), 'agent-1', 10_000, 0)).toMatchObject({ action: 'stop', completionEvent: null });
    expect(checkTokenBudget(createBudgetTracker(), undefined, null, 0)).toMatchObject({ action: 'stop', completionEvent: null });
    expect(checkTokenBudget(createBudgetTracker(), undefined, 0, 0)).toMatchObject({ action: 'stop', completionEvent: null });
  });

  it('reports no completion event when the first check is already over the threshold', () => {
    expect(checkTokenBudget(createBudgetTracker(), undefined, 1_000, 950)).toMatchObject({ action: 'stop', completionEvent: null });
  });
});

describe('parseTokenBudget', () => {
  it.each([
    ['+500k refactor the parser', 500_000],
    ['refactor the parser +2m', 2_000_000],
    ['use 50k tokens to document this', 50_000],
    ['spend 1.5M tokens on it', 1_500_000],
    ['add 500 to the counter', null],
    ['x+500k', null],
  ])('%s → %s', (prompt, expected) => {
    expect(parseTokenBudget(prompt)).toBe(expected);
  });
});

describe('context-window thresholds', () => {
  it('derives every threshold from the effective window (seed §2.6)', () => {
    expect(calculateThresholds(200_000, 8_192)).toEqual({
      contextWindow: 200_000,
      effectiveContextWindow: 191_808,
      autoCompactThreshold: 178_808,
      warningThreshold: 171_808,
      errorThreshold: 171_808,
      blockingLimit: 188_808,
    });
    expect(calculateThresholds(200_000, 64_000).effectiveContextWindow).toBe(180_000);
  });

  it('knows 1M-context variants and honours a configured window', () => {
    expect(contextWindowForModel('claude-sonnet-4-6')).toBe(200_000);
    expect(contextWindowForModel('claude-sonnet-5')).toBe(1_000_000);
    expect(contextWindowForModel('anything', 50_000)).toBe(50_000);
  });

  it('counts from the last reported usage plus an estimate of what came after', () => {
    const messages: TranscriptMessage[] = [
      { type: 'user', uuid: '1', message: { role: 'user', content: 'x'.repeat(4_000) } },
      {
        type: 'assistant',
        uuid: '2',
        message: {
          id: 'm',
          role: 'assistant',
          model: 'm',
          content: [],
          stop_reason: 'end_turn',
          usage: { input_tokens: 1_000, output_tokens: 50, cache_creation_input_tokens: 200, cache_read_input_tokens: 300 },
        },
      },
      { type: 'user', uuid: '3', message: { role: 'user', content: 'y'.repeat(398) } },
    ];
    expect(tokenCountWithEstimation(messages)).toBe(1_550 + 100);
    expect(tokenCountWithEstimation(messages.slice(0, 1))).toBe(1_001);
  });
});
