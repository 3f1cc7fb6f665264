/**
 * Prints a conversation's answer as it streams, on a terminal (issue 10): text appears as the
 * model writes it, and the partial text of an attempt that was retried or fell back is erased
 * (cursor saved where the attempt began, restored and cleared) before the next attempt's text.
 */
import type { ResultMessage } from '../common/result';
import { type LiveEntry, LiveView } from './live-view';
import { sanitizeForTerminal } from './format';

/** ANSI: save the cursor (DECSC), restore it (DECRC), clear to the end of the screen. */
export const SAVE_CURSOR = '\u001b7';
export const RESTORE_AND_CLEAR = '\u001b8\u001b[J';

export class LiveTextPrinter {
  private readonly view = new LiveView();
  /** Text of the attempt on screen since the cursor was saved. */
  private shown = '';
  /** Text of the last model call that completed on screen. */
  private lastCompleted: string | undefined;
  private atLineStart = true;

  constructor(private readonly write: (text: string) => void) {}

  onLive(entry: LiveEntry): void {
    for (const op of this.view.apply(entry)) {
      if (op.op === 'text') {
        if (this.shown === '') {
          if (!this.atLineStart) this.put('\n');
          this.write(SAVE_CURSOR);
        }
        this.shown += op.text;
        this.put(sanitizeForTerminal(op.text));
      } else if (op.op === 'retract') {
        this.write(RESTORE_AND_CLEAR);
        this.shown = '';
        this.atLineStart = true;
      } else if (op.op === 'text_end') {
        this.lastCompleted = this.shown;
        this.shown = '';
      }
    }
  }

  /** Ends the output: the result's text unless it is what streamed last. */
  finish(result: ResultMessage): void {
    if (this.shown !== '') {
      this.write(RESTORE_AND_CLEAR); // an attempt that never completed
      this.shown = '';
      this.atLineStart = true;
    }
    if (this.lastCompleted === undefined || this.lastCompleted.trim() !== result.result.trim()) {
      if (!this.atLineStart) this.put('\n');
      this.put(sanitizeForTerminal(result.result));
    }
    if (!this.atLineStart) this.put('\n');
  }

  private put(text: string): void {
    if (text === '') return;
    this.write(text);
    this.atLineStart = text.endsWith('\n');
  }
}
