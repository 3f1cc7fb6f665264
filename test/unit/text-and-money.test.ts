/** The shared cut-text helpers (common/cut-text.ts) and the money formatter (common/money.ts). */
import { describe, expect, it } from 'vitest';
import { cutText, cutTextAgain, parseCutText, shorten } from '../../common/cut-text';
import { formatUsd } from '../../common/money';

describe('cutText', () => {
  it('keeps a text within the limit and cuts a longer one to its head and length', () => {
    expect(cutText('abc', 3)).toBe('abc');
    expect(cutText('abcd', 3)).toBe('abc… (4 characters)');
    expect(cutText('x'.repeat(3000), 10)).toBe(`${'x'.repeat(10)}… (3000 characters)`);
  });

  it('cutting a cut text again keeps the original length', () => {
    const once = cutText('y'.repeat(4096), 2000);
    expect(cutTextAgain(once, 300)).toBe(`${'y'.repeat(300)}… (4096 characters)`);
    expect(cutTextAgain('z'.repeat(500), 300)).toBe(`${'z'.repeat(300)}… (500 characters)`);
    expect(cutTextAgain(once, 5000)).toBe(once);
  });

  it('parses what it cut, and nothing else', () => {
    expect(parseCutText(cutText('hello world', 5))).toEqual({ head: 'hello', length: 11 });
    expect(parseCutText('hello world')).toBeUndefined();
    expect(parseCutText('a… (x characters)')).toBeUndefined();
  });
});

describe('shorten', () => {
  it('keeps a text within the limit and ends a longer one with … at exactly the limit', () => {
    expect(shorten('abc', 3)).toBe('abc');
    expect(shorten('abcd', 3)).toBe('ab…');
    expect(shorten('abcd', 3)).toHaveLength(3);
  });
});

describe('formatUsd', () => {
  it('four decimals by default, or the decimals asked for', () => {
    expect(formatUsd(0.01234)).toBe('$0.0123');
    expect(formatUsd(0)).toBe('$0.0000');
    expect(formatUsd(12.345, 2)).toBe('$12.35');
    expect(formatUsd(1.5, 2)).toBe('$1.50');
  });

  it('two significant digits under a dollar, two decimals from one', () => {
    expect(formatUsd(0.0032, 'significant')).toBe('$0.0032');
    expect(formatUsd(0.5, 'significant')).toBe('$0.5');
    expect(formatUsd(0.123456, 'significant')).toBe('$0.12');
    expect(formatUsd(12.345, 'significant')).toBe('$12.35');
    expect(formatUsd(0, 'significant')).toBe('$0');
  });
});
