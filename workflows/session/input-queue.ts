/**
 * Inputs waiting for a query (the `userInput` signal, the workflow's initial prompt): in order,
 * validated on arrival (signals cannot reply: bad input is logged and dropped, style §6). The
 * array is the session state's `pendingInputs` (carried across continue-as-new); this is its one writer.
 */
import { log, uuid4 } from '@temporalio/workflow';
import type { InputOrigin, PendingInput, UserInput } from '../definitions';
import { isSlashCommand } from '../input/slash-commands';

export class InputQueue {
  constructor(private readonly pending: PendingInput[]) {}

  get length(): number {
    return this.pending.length;
  }

  /** A `userInput` signal's payload; one without a prompt is dropped. */
  push(raw: UserInput | string): void {
    const prompt = typeof raw === 'string' ? raw : typeof raw === 'object' && raw !== null ? raw.prompt : undefined;
    if (typeof prompt !== 'string' || prompt.trim() === '') {
      // The API rejects empty text anyway.
      log.warn('Dropped userInput signal without a prompt', { received: raw });
      return;
    }
    const uuid = (typeof raw === 'object' && raw !== null && typeof raw.uuid === 'string' && raw.uuid) || uuid4();
    this.pending.push({ prompt, uuid });
  }

  /** An input no person typed (issue 21: a task notification, a wakeup, a cron fire). */
  pushFrom(origin: InputOrigin, prompt: string): void {
    this.pending.push({ prompt, uuid: uuid4(), origin });
  }

  /** Before anything queued (the workflow's initial prompt). */
  pushFirst(input: PendingInput): void {
    this.pending.unshift(input);
  }

  /** The next input, for its own query. */
  next(): PendingInput | undefined {
    return this.pending.shift();
  }

  /**
   * The inputs a running query takes between turns (seed §2.2 ⑦). A slash command waits for its
   * own turn (seed §2.10: it is processed, not sent as text); so does a cron job's prompt (Claude
   * Code fires a job only while the session is idle: it runs as its own query after this one).
   * Inputs after one that waits keep their order behind it.
   */
  takeForRunningQuery(): PendingInput[] {
    const count = takenByRunningQuery(this.pending, (input) => isSlashCommand(input.prompt) || input.origin === 'cron');
    return this.pending.splice(0, count);
  }
}

/** How many queued inputs a running query takes: those before the first that waits for a query of its own. */
export function takenByRunningQuery(pending: readonly PendingInput[], waitsForOwnQuery: (input: PendingInput) => boolean): number {
  const first = pending.findIndex(waitsForOwnQuery);
  return first >= 0 ? first : pending.length;
}
