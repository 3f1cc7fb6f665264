/** The loop's pure recovery decisions (workflows/query/recovery.ts): which State comes next. */
import { describe, expect, it } from 'vitest';
import { ESCALATED_MAX_OUTPUT_TOKENS } from '../../common/config';
import { MAX_OUTPUT_TOKENS_RECOVERY_LIMIT, decideMaxOutputTokens, nextTurnState } from '../../workflows/query/recovery';
import { type State, initialState } from '../../workflows/query/state';

const first: State = initialState(1);

describe('decideMaxOutputTokens (seed §2.8 ②)', () => {
  it('escalates the cap once when the configured one is below it', () => {
    const decision = decideMaxOutputTokens(first, 8_000);
    expect(decision).toEqual({
      type: 'escalate',
      state: { ...first, maxOutputTokensOverride: ESCALATED_MAX_OUTPUT_TOKENS, transition: { type: 'max_output_tokens_escalate' } },
    });
  });

  it('nudges instead when the cap is already escalated, or the configured cap is not below it', () => {
    const escalated = { ...first, maxOutputTokensOverride: ESCALATED_MAX_OUTPUT_TOKENS };
    expect(decideMaxOutputTokens(escalated, 8_000)).toEqual({
      type: 'recover',
      state: { ...escalated, maxOutputTokensRecoveryCount: 1, transition: { type: 'max_output_tokens_recovery' } },
    });
    expect(decideMaxOutputTokens(first, ESCALATED_MAX_OUTPUT_TOKENS).type).toBe('recover');
  });

  it('gives up after the last nudge', () => {
    const nudged = { ...first, maxOutputTokensOverride: ESCALATED_MAX_OUTPUT_TOKENS, maxOutputTokensRecoveryCount: MAX_OUTPUT_TOKENS_RECOVERY_LIMIT - 1 };
    expect(decideMaxOutputTokens(nudged, 8_000).type).toBe('recover');
    expect(decideMaxOutputTokens({ ...nudged, maxOutputTokensRecoveryCount: MAX_OUTPUT_TOKENS_RECOVERY_LIMIT }, 8_000)).toEqual({ type: 'exhausted' });
  });
});

describe('nextTurnState (⑧)', () => {
  it('counts the turn and resets what is per request, keeping the Stop-hook state', () => {
    const before: State = {
      ...first,
      turnCount: 3,
      maxOutputTokensRecoveryCount: 2,
      hasAttemptedReactiveCompact: true,
      maxOutputTokensOverride: ESCALATED_MAX_OUTPUT_TOKENS,
      stopHookActive: true,
      stopHookBlockCount: 1,
      transition: { type: 'stop_hook_retry' },
    };
    expect(nextTurnState(before)).toEqual({
      ...before,
      turnCount: 4,
      maxOutputTokensRecoveryCount: 0,
      hasAttemptedReactiveCompact: false,
      maxOutputTokensOverride: undefined,
      transition: { type: 'tool_use' },
    });
  });
});
