/**
 * The chat screen on Ink (issue 32): what was printed (<Static>, written once), the answer
 * streaming as rendered markdown, a spinner with the query's elapsed time (and a running tool's
 * line), and at the bottom the prompt editor or an open arrow-key menu. Keys: Enter sends; `\` +
 * Enter, Shift+Enter and Alt+Enter insert a newline; a bracketed paste is kept whole
 * (`[Pasted text +N lines]`); up / down walk the history; Tab completes; Esc interrupts (or
 * answers "no" in a menu); Ctrl-C interrupts, twice leaves; Ctrl-D leaves.
 */
import React, { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { renderMarkdown } from '../render/markdown';
import type { ChatChoice } from '../chat-permissions';
import {
  EMPTY_EDITOR,
  type EditorState,
  PromptHistory,
  backslashNewline,
  backspace,
  deleteForward,
  editorWith,
  insert,
  killLineAfter,
  killLineBefore,
  killWordBefore,
  lineEdge,
  moveCursor,
  paste,
  submittedText,
} from './input-editor';
import { type InkKey, ink } from './ink';
import type { ChatStore, MenuDialog } from './store';

export interface ChatKeys {
  /** Enter on a prompt (pastes expanded). */
  submit(prompt: string): void;
  /** Esc, or the first Ctrl-C. */
  interrupt(how: 'esc' | 'ctrl-c'): void;
  /** Ctrl-D, or a second Ctrl-C. */
  leave(): void;
  /** Tab: what may replace `line[from, to)`. */
  complete(line: string, cursor: number): Promise<{ from: number; to: number; candidates: { value: string; description?: string }[] }>;
}

const SPINNER = ['·', '✢', '✳', '✶', '✻', '✽', '✻', '✶', '✳', '✢'];
const PASTE_START = '[200~';
const PASTE_END = '[201~';

export function ChatApp({ store, keys }: { store: ChatStore; keys: ChatKeys }): React.ReactElement {
  const { Box, Text, Static, useInput, useStdout } = ink();
  const state = useSyncExternalStore(store.subscribe, store.getSnapshot);
  const { stdout } = useStdout();
  const width = Math.max(20, (stdout.columns ?? 100) - 1);
  // Mirrored in refs: one chunk of input may hold several keys (`abc⏎` typed fast), each seeing the last one's edit.
  const [editor, setEditorState] = useState<EditorState>(EMPTY_EDITOR);
  const editorRef = useRef(editor);
  const setEditor = (next: EditorState | ((current: EditorState) => EditorState)) => {
    editorRef.current = typeof next === 'function' ? next(editorRef.current) : next;
    setEditorState(editorRef.current);
  };
  const [candidates, setCandidates] = useState<{ value: string; description?: string }[]>([]);
  const [menuIndex, setMenuIndex] = useState(0);
  const [menuText, setMenuTextState] = useState<{ choice: ChatChoice; editor: EditorState } | undefined>(undefined);
  const menuTextRef = useRef(menuText);
  const setMenuText = (next: { choice: ChatChoice; editor: EditorState } | undefined) => {
    menuTextRef.current = next;
    setMenuTextState(next);
  };
  const menuIndexRef = useRef(0);
  menuIndexRef.current = menuIndex;
  const [now, setNow] = useState(Date.now());
  const history = useRef(new PromptHistory());
  const pasting = useRef<string | undefined>(undefined);
  const dialog = state.dialog;

  // The spinner's frame and clock.
  const ticking = state.busySince !== undefined || state.tool !== undefined;
  useEffect(() => {
    if (!ticking) return;
    const timer = setInterval(() => setNow(Date.now()), 120);
    return () => clearInterval(timer);
  }, [ticking]);
  // A new menu starts on its first choice.
  useEffect(() => {
    setMenuIndex(0);
    menuIndexRef.current = 0;
    setMenuText(undefined);
  }, [dialog]);
  // A prompt offered back (a /rewind) replaces what is on the prompt line.
  useEffect(() => {
    if (state.offer) setEditor(editorWith(state.offer.text));
  }, [state.offer]);

  const pick = (menu: MenuDialog, index: number) => {
    const choice = menu.choices[index];
    if (!choice) return;
    if (choice.asksText !== undefined) setMenuText({ choice, editor: EMPTY_EDITOR });
    else menu.resolve({ value: choice.value });
  };

  const onKey = (input: string, key: InkKey) => {
    const editor = editorRef.current;
    const menuText = menuTextRef.current;
    const menuIndex = menuIndexRef.current;
    const dialog = store.state.dialog;
    // A bracketed paste arrives as its start mark, the text (in one or more chunks), its end mark.
    if (pasting.current !== undefined || input.startsWith(PASTE_START)) {
      let chunk = pasting.current === undefined ? input.slice(PASTE_START.length) : input;
      if (key.return && chunk === '') chunk = '\r';
      const end = chunk.indexOf(PASTE_END);
      if (end === -1) {
        pasting.current = (pasting.current ?? '') + chunk;
        return;
      }
      const pasted = (pasting.current ?? '') + chunk.slice(0, end);
      pasting.current = undefined;
      if (menuText) setMenuText({ ...menuText, editor: insert(menuText.editor, pasted.replace(/\r\n?|\n/g, ' ')) });
      else if (!dialog) setEditor((current) => paste(current, pasted));
      return;
    }
    if (key.ctrl && input === 'c') {
      if (dialog) dialog.resolve(undefined);
      keys.interrupt('ctrl-c');
      return;
    }
    if (dialog) {
      if (menuText) {
        if (key.escape) setMenuText(undefined);
        else if (key.return) dialog.resolve({ value: menuText.choice.value, text: menuText.editor.text });
        else setMenuText({ ...menuText, editor: edit(menuText.editor, input, key) ?? menuText.editor });
        return;
      }
      if (key.escape) dialog.resolve(undefined);
      else if (key.upArrow || key.downArrow || key.tab) {
        const next = (menuIndex + (key.upArrow ? dialog.choices.length - 1 : 1)) % dialog.choices.length;
        menuIndexRef.current = next;
        setMenuIndex(next);
      } else if (key.return) pick(dialog, menuIndex);
      else if (/^[1-9]$/.test(input)) pick(dialog, Number(input) - 1);
      return;
    }
    if (key.ctrl && input === 'd') {
      if (editor.text === '') keys.leave();
      else setEditor(deleteForward(editor));
      return;
    }
    if (key.escape) {
      setCandidates([]);
      keys.interrupt('esc');
      return;
    }
    if (key.return) {
      const newline = key.shift || key.meta ? insert(editor, '\n') : backslashNewline(editor);
      if (newline) {
        setEditor(newline);
        return;
      }
      const prompt = submittedText(editor);
      history.current.add(prompt);
      setEditor(EMPTY_EDITOR);
      setCandidates([]);
      keys.submit(prompt);
      return;
    }
    if (key.tab) {
      void keys.complete(editor.text, editor.cursor).then(
        (found) => {
          if (found.candidates.length === 0) return;
          const common = commonPrefix(found.candidates.map((candidate) => candidate.value));
          const replacement = found.candidates.length === 1 ? `${found.candidates[0].value} ` : common;
          if (replacement.length > found.to - found.from || found.candidates.length === 1) {
            const text = editor.text.slice(0, found.from) + replacement + editor.text.slice(found.to);
            setEditor({ ...editor, text, cursor: found.from + replacement.length });
          }
          setCandidates(found.candidates.length > 1 ? found.candidates : []);
        },
        () => undefined,
      );
      return;
    }
    if ((key.upArrow || key.downArrow) && !editor.text.includes('\n')) {
      const next = key.upArrow ? history.current.previous(editor.text) : history.current.next();
      if (next !== undefined) setEditor(editorWith(next));
      return;
    }
    const edited = edit(editor, input, key);
    if (edited) {
      setEditor(edited);
      if (candidates.length > 0) setCandidates([]);
    }
  };

  useInput((input, key) => {
    // Keys typed faster than they are read arrive as one chunk: `abc\r` is a, b, c and Enter (a
    // paste is bracketed, handled whole above).
    if (pasting.current === undefined && !input.startsWith(PASTE_START) && input.length > 1 && /[\r\n]/.test(input)) {
      const parts = input.split(/\r\n?|\n/);
      parts.forEach((part, index) => {
        if (part !== '') onKey(part, key);
        if (index < parts.length - 1) onKey('', { ...key, return: true });
      });
      return;
    }
    onKey(input, key);
  });

  const elapsed = (since: number) => `${Math.max(0, Math.floor((now - since) / 1000))}s`;
  const frame = SPINNER[Math.floor(now / 120) % SPINNER.length];
  let activity: React.ReactNode = null;
  // An open menu takes the progress line's place (the request it asks about is that tool).
  if (dialog) activity = null;
  else if (state.tool) {
    const stopped = state.noWorker ? Math.min(now, state.noWorker.since) : now;
    const seconds = `${Math.max(0, Math.floor((stopped - state.tool.startedAt) / 1000))}s`;
    activity = (
      <Text color="yellow" wrap="truncate-end">
        {state.noWorker ? '■' : frame} {state.tool.call} · {state.noWorker ? `stopped at ${seconds}: the worker is gone` : `running ${seconds}`}
        {state.tool.tail ? ` · ${state.tool.tail}` : ''}
      </Text>
    );
  } else if (state.busySince !== undefined && state.streaming === '') {
    activity = (
      <Text color="magenta">
        {frame} {state.noWorker ? 'Waiting for a worker…' : 'Thinking…'} <Text dimColor>({elapsed(state.busySince)} · esc to interrupt)</Text>
      </Text>
    );
  }

  return (
    <Box flexDirection="column">
      <Static items={state.log}>{(item: { id: number; text: string }) => <Text key={item.id}>{item.text}</Text>}</Static>
      {state.streaming !== '' && <Text>{renderMarkdown(state.streaming, width)}</Text>}
      {activity}
      {state.noWorker && !dialog && (state.busySince !== undefined || state.tool) && <Text color="red">{state.noWorker.line}</Text>}
      {dialog ? (
        <Menu dialog={dialog} index={menuIndex} text={menuText} />
      ) : state.ready ? (
        <>
          <PromptLine editor={editor} />
          {candidates.slice(0, 10).map((candidate) => (
            <Text key={candidate.value}>
              {'  '}
              <Text color="cyan">{candidate.value}</Text>
              {candidate.description ? <Text dimColor>{`  ${candidate.description}`}</Text> : null}
            </Text>
          ))}
        </>
      ) : null}
    </Box>
  );
}

function Menu({ dialog, index, text }: { dialog: MenuDialog; index: number; text: { choice: ChatChoice; editor: EditorState } | undefined }) {
  const { Box, Text } = ink();
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="cyan" paddingX={1}>
      <Text bold>{dialog.title}</Text>
      {dialog.choices.map((choice, at) => (
        <Text key={choice.value} color={at === index ? 'cyan' : undefined}>
          {at === index ? '❯ ' : '  '}
          {at + 1}. {choice.label}
        </Text>
      ))}
      {text && (
        <Text>
          <Text dimColor>{text.choice.asksText}: </Text>
          <EditorText editor={text.editor} />
        </Text>
      )}
    </Box>
  );
}

function PromptLine({ editor }: { editor: EditorState }) {
  const { Text } = ink();
  return (
    <Text>
      {'> '}
      <EditorText editor={editor} indent="  " />
    </Text>
  );
}

/** The editor's text with its cursor (an inverse cell); continuation lines indented under the first. */
function EditorText({ editor, indent = '' }: { editor: EditorState; indent?: string }) {
  const { Text } = ink();
  const before = editor.text.slice(0, editor.cursor);
  const at = editor.text[editor.cursor];
  const after = editor.text.slice(editor.cursor + 1);
  const show = (text: string) => text.replace(/\n/g, `\n${indent}`);
  return (
    <Text>
      {show(before)}
      <Text inverse>{at === undefined || at === '\n' ? ' ' : at}</Text>
      {at === '\n' ? '\n' + indent : ''}
      {show(after)}
    </Text>
  );
}

/** One key on a line editor; undefined: not an editing key. */
function edit(state: EditorState, input: string, key: InkKey): EditorState | undefined {
  if (key.backspace || (key.ctrl && input === 'h')) return backspace(state);
  if (key.delete) return backspace(state); // most terminals send DEL (0x7f) for Backspace, which Ink names delete
  if (key.leftArrow) return moveCursor(state, -1);
  if (key.rightArrow) return moveCursor(state, 1);
  if (key.home || (key.ctrl && input === 'a')) return lineEdge(state, false);
  if (key.end || (key.ctrl && input === 'e')) return lineEdge(state, true);
  if (key.ctrl && input === 'u') return killLineBefore(state);
  if (key.ctrl && input === 'k') return killLineAfter(state);
  if (key.ctrl && input === 'w') return killWordBefore(state);
  if (key.ctrl || key.meta || key.upArrow || key.downArrow || key.tab || key.escape || key.pageUp || key.pageDown) return undefined;
  const text = input.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0009\u000b-\u001f\u007f]/g, '');
  return text === '' ? undefined : insert(state, text);
}

function commonPrefix(values: string[]): string {
  let prefix = values[0] ?? '';
  for (const value of values) while (!value.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}
