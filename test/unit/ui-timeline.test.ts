/** The timeline's later summaries (issue 19, item 15): permission waits and prefetched reads. */
import { describe, expect, it } from 'vitest';
import { modelCallSummary, modelCallSummaryWithReads, permissionWaitSummary } from '../../workflows/ui/details';

describe('permissionWaitSummary', () => {
  it('names the call, what ends the wait and what happens without a decision', () => {
    expect(permissionWaitSummary('Bash: node test.js', 24 * 3_600_000)).toBe(
      'Permission asked: Bash: node test.js — until decidePermission; denied if none in 1d',
    );
  });

  it('cuts a long call to one short line, within the UI label limit', () => {
    const summary = permissionWaitSummary(`Bash: ${'x'.repeat(500)}\nsecond line`, 600_000);
    expect(summary).toContain('…');
    expect(summary).not.toContain('\n');
    expect(summary.length).toBeLessThanOrEqual(120);
    expect(summary.endsWith('denied if none in 10m')).toBe(true);
  });
});

describe('modelCallSummaryWithReads', () => {
  it('is the plain label when no read was prefetched', () => {
    expect(modelCallSummaryWithReads('claude-sonnet-4-6', 7, 2, [])).toBe(modelCallSummary('claude-sonnet-4-6', 7, 2));
  });

  it('names the prefetched reads whose results it sends', () => {
    expect(modelCallSummaryWithReads('claude-sonnet-4-6', 7, 2, ['Read src/a.ts', 'Read b.ts'])).toBe(
      'claude-sonnet-4-6: turn 7 (query 2) · with Read src/a.ts, Read b.ts',
    );
  });

  it('names three and counts the rest', () => {
    expect(modelCallSummaryWithReads('m', 1, 1, ['Read a', 'Read b', 'Grep x', 'Glob *.ts', 'Read c'])).toBe(
      'm: turn 1 (query 1) · with Read a, Read b, Grep x and 2 more',
    );
  });
});
