/**
 * What the chat screen shows, outside React: the session (client/commands/chat.ts) changes it,
 * the Ink app (client/chat/app.tsx) renders it. Printed lines go to `log` (Ink's <Static>: written
 * once, above the live part); the live part is the streaming answer, the spinner, and the prompt
 * or an open menu.
 */
import type { ChatChoice } from '../chat-permissions';

export interface LogItem {
  id: number;
  text: string;
}

export interface MenuDialog {
  title: string;
  choices: ChatChoice[];
  resolve(picked: { value: string; text?: string } | undefined): void;
}

export interface ChatState {
  log: LogItem[];
  /** The answer streaming now (markdown, rendered as it grows). */
  streaming: string;
  /** Since when the running query has run (the spinner's clock); undefined: idle. */
  busySince?: number;
  /** A running tool's line (`Bash(npm test) · 12s · <last output line>`), without its clock. */
  tool?: { call: string; startedAt: number; tail: string };
  /** No worker polls the task queue: said under the spinner, and a tool's clock stops. */
  noWorker?: { since: number; line: string };
  dialog?: MenuDialog;
  /** A text to put on the prompt line (a rewound prompt); `serial` tells one offer from the next. */
  offer?: { text: string; serial: number };
  /** The prompt line is hidden until the chat is connected. */
  ready: boolean;
}

export class ChatStore {
  private current: ChatState = { log: [], streaming: '', ready: false };
  private readonly listeners = new Set<() => void>();
  private nextId = 0;

  get state(): ChatState {
    return this.current;
  }

  set(patch: Partial<ChatState>): void {
    this.current = { ...this.current, ...patch };
    for (const listener of this.listeners) listener();
  }

  /** Prints `text` (one or more lines) above the live part, for good. */
  print(text: string): void {
    this.set({ log: [...this.current.log, { id: this.nextId++, text: text.replace(/\n+$/, '') }] });
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): ChatState => this.current;
}
