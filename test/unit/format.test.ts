/** What people read in the terminal: the status' context line and warning (seed §2.6), compaction events (seed §2.7). */
import { describe, expect, it } from 'vitest';
import { formatCompactionOutcome, formatContextWarning, formatEvent, formatStatus, formatTokens } from '../../client/format';
import type { ContextStatus, ConversationStatus } from '../../workflows/definitions';

/** A 200k-window model: effective window 180k, autocompact at 167k, warning and error at 160k, blocking at 177k. */
function context(overrides: Partial<ContextStatus> = {}): ContextStatus {
  const tokens = overrides.tokens ?? 152_340;
  return {
    tokens,
    contextWindow: 200_000,
    effectiveWindow: 180_000,
    percentUsed: (tokens / 180_000) * 100,
    autoCompactThreshold: 167_000,
    warningThreshold: 160_000,
    errorThreshold: 160_000,
    blockingLimit: 177_000,
    level: 'ok',
    autoCompactEnabled: true,
    compactions: 2,
    breaker: { consecutiveFailures: 0, open: false },
    ...overrides,
  };
}

function status(contextOverrides: Partial<ContextStatus> = {}): ConversationStatus {
  return {
    conversationId: 'conversation-demo-1234',
    phase: 'awaiting_input',
    model: 'claude-sonnet-4-6',
    currentModel: 'claude-sonnet-4-6',
    turnCount: 1,
    queryCount: 3,
    transitions: [],
    lastQueryTransitions: [],
    toolsInFlight: [],
    queuedInputs: 0,
    usage: { input_tokens: 152_000, output_tokens: 340, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    totalCostUsd: 0.5,
    contextTokens: 152_340,
    context: context(contextOverrides),
    messageCount: 40,
    ended: false,
    continuedAsNewCount: 0,
    nextEventSeq: 17,
  };
}

const WARNING_LINE = /^Context (low|limit)/;

describe('formatStatus: context', () => {
  it('shows tokens against the effective window, the autocompact threshold, compactions and the breaker', () => {
    const lines = formatStatus(status()).split('\n');
    expect(lines).toContain('context       152,340 / 180,000 tokens (85%) · autocompact at 167,000 · 2 compactions');
    expect(lines.some((line) => WARNING_LINE.test(line))).toBe(false);
  });

  it('says when autocompact is off, counts one compaction in the singular, and shows failures short of the breaker', () => {
    expect(formatStatus(status({ autoCompactEnabled: false, compactions: 1, breaker: { consecutiveFailures: 1, open: false } }))).toContain(
      '(85%) · autocompact off · 1 compaction · 1 failed compaction',
    );
  });

  it('shows an open breaker with its failure count', () => {
    expect(formatStatus(status({ breaker: { consecutiveFailures: 3, open: true } }))).toContain('· autocompact stopped after 3 failed compactions');
  });

  it('adds the Claude Code warning line at warning, error and autocompact levels, remaining counted to the autocompact threshold', () => {
    const action = 'Run durable-agent compact conversation-demo-1234 to compact & continue';
    // (167,000 − 150,300) / 167,000 = 10%
    expect(
      formatStatus(status({ tokens: 150_300, level: 'warning' }))
        .split('\n')
        .at(-1),
    ).toBe(`Context low (10% remaining) · ${action}`);
    // (167,000 − 162,000) / 167,000 = 3%
    expect(
      formatStatus(status({ tokens: 162_000, level: 'error' }))
        .split('\n')
        .at(-1),
    ).toBe(`Context low (3% remaining) · ${action}`);
    // past the threshold: nothing remains until autocompact runs
    expect(
      formatStatus(status({ tokens: 170_000, level: 'autocompact' }))
        .split('\n')
        .at(-1),
    ).toBe(`Context low (0% remaining) · ${action}`);
  });

  it('counts remaining against the effective window when autocompact will not run (off, or the breaker is open)', () => {
    const action = 'Run durable-agent compact conversation-demo-1234 to compact & continue';
    // 100 − 162,000 / 180,000 = 10%
    expect(formatContextWarning(status({ tokens: 162_000, level: 'error', autoCompactEnabled: false }))).toBe(`Context low (10% remaining) · ${action}`);
    expect(formatContextWarning(status({ tokens: 170_000, level: 'autocompact', breaker: { consecutiveFailures: 3, open: true } }))).toBe(
      `Context low (6% remaining) · ${action}`,
    );
  });

  it('says the limit is reached at the blocking level', () => {
    expect(
      formatStatus(status({ tokens: 178_000, level: 'blocking', autoCompactEnabled: false }))
        .split('\n')
        .at(-1),
    ).toBe('Context limit reached · Run durable-agent compact conversation-demo-1234 to compact & continue');
  });

  it('leaves the context line out for a worker that reports no context', () => {
    const old = { ...status(), context: undefined } as unknown as ConversationStatus;
    expect(formatStatus(old)).not.toContain('context       ');
    expect(formatContextWarning(old)).toBeUndefined();
  });
});

describe('formatEvent: compaction', () => {
  it('renders a compact boundary as a rule with the trigger and the token counts', () => {
    const boundary = {
      type: 'compact_boundary',
      uuid: 'b-1',
      trigger: 'auto',
      preTokens: 152_340,
      postTokens: 9_000,
      messagesSummarized: 312,
      timestamp: 0,
    } as const;
    expect(formatEvent({ seq: 5, message: boundary })).toBe('── conversation compacted (auto): 152k → 9k tokens ──');
    expect(formatEvent({ seq: 6, message: { ...boundary, trigger: 'manual', preTokens: 48_000, postTokens: 2_450 } })).toBe(
      '── conversation compacted (manual): 48k → 2.5k tokens ──',
    );
  });

  it('keeps compaction notices as system lines', () => {
    const notice = { type: 'system', uuid: 's-1', level: 'warning', content: 'Autocompact failed 3 times in a row; it stays off.' } as const;
    expect(formatEvent({ seq: 7, message: notice })).toBe('[warning] Autocompact failed 3 times in a row; it stays off.');
  });
});

describe('formatCompactionOutcome', () => {
  it('prints what the compact command did, or why it did not', () => {
    expect(formatCompactionOutcome({ trigger: 'manual', compacted: true, preTokens: 152_340, postTokens: 9_100, messagesSummarized: 312, at: 0 })).toBe(
      'Compacted: 152k → 9.1k tokens (312 messages summarized)',
    );
    expect(formatCompactionOutcome({ trigger: 'manual', compacted: false, preTokens: 800, error: 'Not enough messages to compact.', at: 0 })).toBe(
      'Not compacted: Not enough messages to compact.',
    );
  });

  it('shortens token counts like Claude Code', () => {
    expect([850, 1_000, 9_449, 10_400, 152_340, 1_000_000, 1_250_000].map(formatTokens)).toEqual(['850', '1k', '9.4k', '10k', '152k', '1M', '1.3M']);
  });
});
