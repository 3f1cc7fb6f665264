/** Issue 31: the rewind request checks and the listing format (pure; the rewind itself is test/integration/rewind.test.ts). */
import { describe, expect, it } from 'vitest';
import { type RewindPoint, formatRewindPoints } from '../../common/checkpoints';
import { rewindRequestProblem, rewindSummary } from '../../workflows/session/rewinds';

const point = (n: number, extra: Partial<RewindPoint> = {}): RewindPoint => ({
  n,
  inputUuid: `u${n}`,
  at: Date.UTC(2026, 11, 6, 12, 0, n),
  text: `prompt ${n}\nsecond line`,
  runId: 'run',
  checkpointId: 'a'.repeat(40),
  ...extra,
});

describe('rewindRequestProblem', () => {
  const points = [point(1), point(2, { checkpointId: undefined, checkpointError: 'git is not installed' }), point(3)];
  it('takes a prompt number in range and a known mode', () => {
    expect(rewindRequestProblem({ to: 1 }, points)).toBeUndefined();
    expect(rewindRequestProblem({ to: 3, mode: 'code' }, points)).toBeUndefined();
    expect(rewindRequestProblem({ to: 2, mode: 'conversation' }, points)).toBeUndefined();
  });
  it('refuses what it cannot do, saying why', () => {
    expect(rewindRequestProblem({ to: 0 }, points)).toMatch(/from 1 to 3, got 0/);
    expect(rewindRequestProblem({ to: 4 }, points)).toMatch(/from 1 to 3, got 4/);
    expect(rewindRequestProblem({ to: 1.5 }, points)).toMatch(/from 1 to 3/);
    expect(rewindRequestProblem({ to: '1' }, points)).toMatch(/from 1 to 3, got "1"/);
    expect(rewindRequestProblem({ to: 1, mode: 'files' }, points)).toMatch(/mode must be one of both, code, conversation/);
    expect(rewindRequestProblem(undefined, points)).toMatch(/rewind takes/);
    expect(rewindRequestProblem({ to: 1 }, [])).toMatch(/no prompt to rewind to/);
    // No checkpoint before prompt 2: its files cannot come back, the conversation can.
    expect(rewindRequestProblem({ to: 2 }, points)).toMatch(/No checkpoint of the workspace was taken before prompt 2 \(git is not installed\)/);
    expect(rewindRequestProblem({ to: 2, mode: 'code' }, points)).toMatch(/--conversation/);
  });
});

describe('formatRewindPoints', () => {
  it('lists number, time, first line and the files changed since', () => {
    const text = formatRewindPoints([
      { ...point(1), filesChangedSince: 3, changedPaths: ['a.txt', 'b.txt', 'c.txt'] },
      { ...point(2), filesChangedSince: 0 },
      { ...point(3, { checkpointId: undefined }) },
    ]);
    expect(text.split('\n')).toEqual([
      '  1  2026-12-06 12:00:01  prompt 1  — 3 files changed since (a.txt, b.txt, c.txt)',
      '  2  2026-12-06 12:00:02  prompt 2  — no files changed since',
      '  3  2026-12-06 12:00:03  prompt 3  — no checkpoint: conversation only',
    ]);
    expect(formatRewindPoints([])).toBe('No prompts yet.');
  });
});

describe('rewindSummary', () => {
  it('says what came back', () => {
    expect(
      rewindSummary({
        to: 2,
        mode: 'both',
        prompt: 'fix it\nplease',
        filesRestored: 2,
        filesRemoved: 1,
        gitState: true,
        undoCheckpointId: 'abc',
        messagesRemoved: 6,
        warnings: [],
      }),
    ).toBe(
      'Rewound to before prompt 2 "fix it": files restored (2 written, 1 removed, git state put back; undo: checkpoint abc); conversation cut before it (6 messages).',
    );
    expect(rewindSummary({ to: 1, mode: 'conversation', prompt: 'x', messagesRemoved: 4, uncompacted: true, warnings: [] })).toBe(
      'Rewound to before prompt 1 "x": conversation cut before it (4 messages, un-compacted).',
    );
  });
});
