import { describe, expect, it } from 'vitest';
import {
  EMPTY_EDITOR,
  PromptHistory,
  backslashNewline,
  backspace,
  editorWith,
  insert,
  killWordBefore,
  paste,
  pastePlaceholder,
  submittedText,
} from '../../client/chat/input-editor';

describe('chat prompt editor', () => {
  it('keeps a multi-line paste whole behind a placeholder and sends it expanded', () => {
    const state = insert(paste(insert(EMPTY_EDITOR, 'see: '), 'a\nb\r\nc'), ' please');
    expect(state.text).toBe('see: [Pasted text +2 lines] please');
    expect(submittedText(state)).toBe('see: a\nb\nc please');
    const two = paste(state, 'x\ny\n');
    expect(two.text).toContain('[Pasted text #2 +1 line]');
    expect(submittedText(two)).toBe('see: a\nb\nc pleasex\ny\n');
    expect(paste(EMPTY_EDITOR, 'one line').text).toBe('one line');
  });

  it('Backspace takes a placeholder as a whole; Ctrl-W a word', () => {
    const state = paste(EMPTY_EDITOR, 'a\nb');
    expect(backspace(state).text).toBe('');
    expect(killWordBefore(editorWith('fix the bug')).text).toBe('fix the ');
    expect(pastePlaceholder(1, 'a\nb\nc\n')).toBe('[Pasted text +2 lines]');
  });

  it('a trailing backslash and Enter make a newline', () => {
    expect(backslashNewline(editorWith('one \\'))?.text).toBe('one \n');
    expect(backslashNewline(editorWith('one'))).toBeUndefined();
  });

  it('history: up walks back, down returns to the draft', () => {
    const history = new PromptHistory();
    history.add('first');
    history.add('second');
    expect(history.previous('draft')).toBe('second');
    expect(history.previous('second')).toBe('first');
    expect(history.previous('first')).toBeUndefined();
    expect(history.next()).toBe('second');
    expect(history.next()).toBe('draft');
    expect(history.next()).toBeUndefined();
  });
});
