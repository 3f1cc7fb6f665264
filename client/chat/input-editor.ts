/**
 * The chat's prompt editor as pure functions (unit-tested): the text and the cursor, pastes kept
 * whole behind a `[Pasted text +N lines]` placeholder (expanded when the prompt is sent), and the
 * history of sent prompts for up / down.
 */
export interface EditorState {
  text: string;
  cursor: number;
  /** Multi-line pastes, by number: `[Pasted text #n +N lines]` in `text` stands for `pastes[n - 1]`. */
  pastes: string[];
}

export const EMPTY_EDITOR: EditorState = { text: '', cursor: 0, pastes: [] };

export function editorWith(text: string): EditorState {
  return { text, cursor: text.length, pastes: [] };
}

export function insert(state: EditorState, text: string): EditorState {
  return { ...state, text: state.text.slice(0, state.cursor) + text + state.text.slice(state.cursor), cursor: state.cursor + text.length };
}

/** The placeholder a multi-line paste shows (Claude Code's): its first one has no number. */
export function pastePlaceholder(index: number, text: string): string {
  const lines = text.replace(/\n$/, '').split('\n').length - 1;
  return `[Pasted text ${index > 1 ? `#${index} ` : ''}+${lines} line${lines === 1 ? '' : 's'}]`;
}

/** A bracketed paste: one line is typed in; several stand behind a placeholder. */
export function paste(state: EditorState, pasted: string): EditorState {
  const text = pasted.replace(/\r\n?/g, '\n');
  if (!text.includes('\n')) return insert(state, text);
  const pastes = [...state.pastes, text];
  return insert({ ...state, pastes }, pastePlaceholder(pastes.length, text));
}

/** The prompt to send: placeholders replaced by what was pasted. */
export function submittedText(state: EditorState): string {
  let text = state.text;
  state.pastes.forEach((pasted, index) => {
    text = text.replace(pastePlaceholder(index + 1, pasted), () => pasted);
  });
  return text;
}

export function backspace(state: EditorState): EditorState {
  if (state.cursor === 0) return state;
  // A placeholder goes as a whole.
  const before = state.text.slice(0, state.cursor);
  const placeholder = /\[Pasted text (?:#\d+ )?\+\d+ lines?\]$/.exec(before);
  const cut = placeholder ? placeholder[0].length : 1;
  return { ...state, text: before.slice(0, -cut) + state.text.slice(state.cursor), cursor: state.cursor - cut };
}

export function deleteForward(state: EditorState): EditorState {
  if (state.cursor >= state.text.length) return state;
  return { ...state, text: state.text.slice(0, state.cursor) + state.text.slice(state.cursor + 1) };
}

export function moveCursor(state: EditorState, by: number): EditorState {
  return { ...state, cursor: Math.max(0, Math.min(state.text.length, state.cursor + by)) };
}

/** Home / End (and Ctrl-A / Ctrl-E): the start or end of the cursor's line. */
export function lineEdge(state: EditorState, end: boolean): EditorState {
  if (end) {
    const next = state.text.indexOf('\n', state.cursor);
    return { ...state, cursor: next === -1 ? state.text.length : next };
  }
  return { ...state, cursor: state.text.lastIndexOf('\n', state.cursor - 1) + 1 };
}

/** Ctrl-U: the line before the cursor goes. */
export function killLineBefore(state: EditorState): EditorState {
  const start = state.text.lastIndexOf('\n', state.cursor - 1) + 1;
  return { ...state, text: state.text.slice(0, start) + state.text.slice(state.cursor), cursor: start };
}

/** Ctrl-K: the line after the cursor goes. */
export function killLineAfter(state: EditorState): EditorState {
  const next = state.text.indexOf('\n', state.cursor);
  const end = next === -1 ? state.text.length : next;
  return { ...state, text: state.text.slice(0, state.cursor) + state.text.slice(end) };
}

/** Ctrl-W: the word before the cursor goes. */
export function killWordBefore(state: EditorState): EditorState {
  const before = state.text.slice(0, state.cursor);
  const start = before.replace(/\S+\s*$/, '').length;
  return { ...state, text: state.text.slice(0, start) + state.text.slice(state.cursor), cursor: start };
}

/** Enter: a `\` just before the cursor makes it a newline instead of sending (Claude Code's). */
export function backslashNewline(state: EditorState): EditorState | undefined {
  if (state.cursor === 0 || state.text[state.cursor - 1] !== '\\') return undefined;
  return insert({ ...state, text: state.text.slice(0, state.cursor - 1) + state.text.slice(state.cursor), cursor: state.cursor - 1 }, '\n');
}

/** Sent prompts, newest last; `at` is where up / down stand (history.length: the draft). */
export class PromptHistory {
  private readonly entries: string[] = [];
  private at = 0;
  private draft = '';

  add(prompt: string): void {
    if (prompt.trim() !== '' && this.entries.at(-1) !== prompt) this.entries.push(prompt);
    this.at = this.entries.length;
  }

  /** Up: the previous prompt (undefined: none), the draft kept. */
  previous(current: string): string | undefined {
    if (this.at === 0) return undefined;
    if (this.at === this.entries.length) this.draft = current;
    this.at--;
    return this.entries[this.at];
  }

  /** Down: the next prompt, or the draft after the newest. */
  next(): string | undefined {
    if (this.at >= this.entries.length) return undefined;
    this.at++;
    return this.at === this.entries.length ? this.draft : this.entries[this.at];
  }
}
