/** Markdown for the terminal (client/render/markdown.ts): marked + marked-terminal, word-wrapped, safe on partial input. */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadMarkdownRenderer, renderMarkdown } from '../../client/render/markdown';
import { stripStyles, visibleWidth, wrapStyledLine } from '../../client/render/terminal-text';

// Colours on (supports-color reads this when the libraries load, below), whatever runs the tests.
process.env.FORCE_COLOR = '1';
delete process.env.NO_COLOR;

const SAMPLE = [
  '# Plan',
  '',
  'We change **two** files and run `npm test`, see [the docs](https://example.com/docs) for why this matters to everyone.',
  '',
  '- a list item long enough that it has to wrap at the width of a narrow terminal window',
  '- second',
  '',
  '1. first',
  '2. second',
  '',
  '```ts',
  'const answer: number = 42; // the answer',
  '```',
  '',
  '| file | change |',
  '|------|--------|',
  '| a.ts | edit   |',
].join('\n');

describe('renderMarkdown', () => {
  beforeAll(async () => {
    await loadMarkdownRenderer();
  });

  it('renders headings without #, bold, code spans, links, lists and tables, with colours', () => {
    const out = renderMarkdown(SAMPLE, 60);
    const plain = stripStyles(out);
    expect(plain).toMatch(/^Plan\n/);
    expect(plain).not.toContain('**');
    expect(plain).not.toContain('# Plan');
    expect(stripStyles(renderMarkdown(SAMPLE, 120))).toContain('see the docs (https://example.com/docs) for why');
    expect(plain).toMatch(/^ {2}\* a list item/m);
    expect(plain).toMatch(/^ {2}1\. first/m);
    expect(plain).toContain('│ a.ts │ edit   │');
    expect(out).toContain('\u001b[1mtwo\u001b[22m'); // bold
    expect(out).toContain('\u001b[1m\u001b[4mPlan'); // the first heading: bold, underlined
  });

  it('renders bold and code inside list items too (marked-terminal alone printed them as typed)', () => {
    const out = renderMarkdown('- `sum([1, 2, 3])` is now **6**\n1. first *em*', 60);
    const plain = stripStyles(out);
    expect(plain).toContain('* sum([1, 2, 3]) is now 6');
    expect(plain).toContain('1. first em');
    expect(out).toContain('\u001b[1m6\u001b[22m');
  });

  it('highlights fenced code (cli-highlight): the keyword and the number in colours of their own', () => {
    const out = renderMarkdown('```ts\nconst answer = 42;\n```', 60);
    expect(stripStyles(out)).toBe('  const answer = 42;');
    expect(out).toMatch(/\u001b\[\d+mconst\u001b\[39m/);
    expect(out).toMatch(/\u001b\[\d+m42\u001b\[39m/);
  });

  it('wraps paragraphs and list items at the width between words, a list item under its text', () => {
    for (const width of [30, 44, 60]) {
      const plain = stripStyles(renderMarkdown(SAMPLE.split('```')[0], width));
      for (const line of plain.split('\n')) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
      const words = SAMPLE.split('```')[0].match(/[A-Za-z]{4,}/g)!;
      for (const word of words) expect(plain).toContain(word); // no word cut in two
    }
    expect(stripStyles(renderMarkdown('- a list item long enough that it has to wrap at the width', 30))).toBe(
      '  * a list item long enough\n    that it has to wrap at the\n    width',
    );
  });

  it('is robust on markdown cut anywhere while it streams: never throws, earlier text unchanged', () => {
    const whole = `${SAMPLE}\n\nAfter **bold and more`;
    const firstParagraph = stripStyles(renderMarkdown('We change **two** files', 80));
    for (let end = 0; end <= whole.length; end += 7) {
      const out = renderMarkdown(whole.slice(0, end), 50);
      expect(typeof out).toBe('string');
    }
    // An unclosed fence: what came before renders as before, the rest shows as code.
    const open = stripStyles(renderMarkdown('We change **two** files\n\n```py\nx = 1\n', 80));
    expect(open.startsWith(firstParagraph)).toBe(true);
    expect(open).toContain('  x = 1');
    // An unclosed ** stays as typed.
    expect(stripStyles(renderMarkdown('some **bold', 80))).toBe('some **bold');
  });

  it("strips the model's own escape sequences and control characters", () => {
    const out = renderMarkdown('title \u001b]0;evil\u0007 and \u001b[2J clear \u0007bell', 80);
    expect(out).not.toContain('\u001b]');
    expect(out).not.toContain('\u001b[2J');
    expect(out).not.toContain('\u0007');
    expect(stripStyles(out)).toBe('title and clear bell');
  });

  it('NO_COLOR: the same layout, no colour at all', () => {
    const coloured = renderMarkdown(SAMPLE, 60);
    process.env.NO_COLOR = '1';
    try {
      const plain = renderMarkdown(SAMPLE, 60);
      expect(plain).not.toMatch(/\u001b/);
      expect(plain).toBe(stripStyles(coloured));
    } finally {
      delete process.env.NO_COLOR;
    }
  });
});

describe('wrapStyledLine', () => {
  it('breaks between words only, a styled word kept whole, continuations under the hang', () => {
    const line = `see the docs (\u001b[34mhttps://example.com/docs\u001b[39m) for more`;
    expect(wrapStyledLine(line, 30).map(stripStyles)).toEqual(['see the docs', '(https://example.com/docs) for', 'more']);
    expect(wrapStyledLine('  * one two three four five', 14, '    ')).toEqual(['  * one two', '    three four', '    five']);
    expect(wrapStyledLine('short', 40)).toEqual(['short']);
    // A word longer than the room is cut where the line ends.
    expect(wrapStyledLine('x'.repeat(25), 10)).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
  });
});
