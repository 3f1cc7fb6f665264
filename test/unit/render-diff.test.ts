/** Colour diffs of file edits (client/render/diff.ts), on jsdiff. */
import { describe, expect, it } from 'vitest';
import { renderToolDiff, toolLineChanges } from '../../client/render/diff';
import { stripStyles, visibleWidth } from '../../client/render/terminal-text';

const RED = '\u001b[48;5;52m';
const GREEN = '\u001b[48;5;22m';
const plain = { color: false };

describe('renderToolDiff', () => {
  it("Edit without the file: old_string's lines red behind -, new_string's green behind +", () => {
    const out = renderToolDiff('Edit', { file_path: 'x.ts', old_string: 'let a = 1;\nlet b = 2;', new_string: 'let a = 1;\nlet b = 3;' }, 40, undefined, {
      color: true,
    })!;
    const lines = out.split('\n');
    expect(lines.map(stripStyles).map((line) => line.trimEnd())).toEqual(['  let a = 1;', '- let b = 2;', '+ let b = 3;']);
    expect(lines[1].startsWith(RED)).toBe(true);
    expect(lines[2].startsWith(GREEN)).toBe(true);
    expect(lines[0]).not.toContain('\u001b');
    // Coloured lines fill the width, as Claude Code's do.
    expect(visibleWidth(lines[1])).toBe(40);
  });

  it('Edit with the file known: real line numbers and three lines of context', () => {
    const file = Array.from({ length: 12 }, (_, index) => `line ${index + 1}`).join('\n') + '\n';
    const out = renderToolDiff('Edit', { file_path: 'x.ts', old_string: 'line 6', new_string: 'line six' }, 80, file, plain)!;
    expect(out.split('\n')).toEqual(['3   line 3', '4   line 4', '5   line 5', '6 - line 6', '6 + line six', '7   line 7', '8   line 8', '9   line 9']);
    // replace_all changes every occurrence; two hunks apart are separated by …
    const twice = 'a\nx\nb\nc\nd\ne\nf\ng\nh\nx\n';
    const all = renderToolDiff('Edit', { file_path: 'x', old_string: 'x', new_string: 'y', replace_all: true }, 80, twice, { ...plain, context: 1 })!;
    expect(all.split('\n')).toEqual([' 1   a', ' 2 - x', ' 2 + y', ' 3   b', '…', ' 9   h', '10 - x', '10 + y']);
  });

  it('Write: a new file numbered, an overwrite as a diff, an empty file said so', () => {
    expect(renderToolDiff('Write', { file_path: 'n.txt', content: 'one\ntwo\n' }, 80, undefined, plain)).toBe('1   one\n2   two');
    expect(renderToolDiff('Write', { file_path: 'n.txt', content: 'one\ntwo\n' }, 80, '', plain)).toBe('1 + one\n2 + two');
    expect(renderToolDiff('Write', { file_path: 'n.txt', content: 'one\ntwo\n' }, 80, 'one\nthree\n', plain)).toBe('1   one\n2 - three\n2 + two');
    expect(renderToolDiff('Write', { file_path: 'n.txt', content: '' }, 80, undefined, plain)).toBe('(an empty file)');
  });

  it('NotebookEdit: the new source added, a deleted cell removed', () => {
    expect(renderToolDiff('NotebookEdit', { notebook_path: 'a.ipynb', cell_id: 'c1', new_source: 'x = 1\nprint(x)' }, 80, undefined, plain)).toBe(
      '+ x = 1\n+ print(x)',
    );
    expect(renderToolDiff('NotebookEdit', { notebook_path: 'a.ipynb', cell_id: 'c1', new_source: '', edit_mode: 'delete' }, 80, undefined, plain)).toBe(
      '- cell c1',
    );
  });

  it('wraps long lines under their text, caps the lines shown', () => {
    const long = 'word '.repeat(30).trim();
    const out = renderToolDiff('Edit', { file_path: 'x', old_string: 'a', new_string: long }, 40, undefined, plain)!;
    const lines = out.split('\n');
    expect(lines[0]).toBe('- a');
    expect(lines[1].startsWith('+ word')).toBe(true);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(40);
    expect(lines.slice(2).every((line) => line.startsWith('  word'))).toBe(true);
    const many = Array.from({ length: 30 }, (_, index) => `l${index}`).join('\n');
    const capped = renderToolDiff('Write', { file_path: 'x', content: many }, 80, undefined, { ...plain, maxLines: 5 })!.split('\n');
    expect(capped).toHaveLength(6);
    expect(capped[5]).toBe('… 25 more lines');
  });

  it('model input is untrusted: other tools and bad input give undefined, control characters are removed', () => {
    expect(renderToolDiff('Bash', { command: 'ls' }, 80)).toBeUndefined();
    expect(renderToolDiff('Edit', { file_path: 'x', old_string: 'a' }, 80)).toBeUndefined();
    expect(renderToolDiff('Edit', null, 80)).toBeUndefined();
    expect(renderToolDiff('Write', 'nonsense', 80)).toBeUndefined();
    const out = renderToolDiff('Write', { file_path: 'x', content: 'a\u001b]0;title\u0007b\u001b[2Jc\r\n' }, 80, undefined, plain)!;
    expect(out).toBe('1   abc');
  });

  it('NO_COLOR: no colours unless asked for', () => {
    process.env.NO_COLOR = '1';
    try {
      expect(renderToolDiff('Edit', { file_path: 'x', old_string: 'a', new_string: 'b' }, 40)).toBe('- a\n+ b');
    } finally {
      delete process.env.NO_COLOR;
    }
  });

  it('counts the lines an edit adds and removes', () => {
    expect(toolLineChanges('Edit', { file_path: 'x', old_string: 'a\nb', new_string: 'a\nc\nd' })).toEqual({ added: 2, removed: 1 });
    expect(toolLineChanges('Write', { file_path: 'x', content: 'a\nb\n' }, 'a\n')).toEqual({ added: 1, removed: 0 });
    expect(toolLineChanges('Read', { file_path: 'x' })).toBeUndefined();
  });
});
