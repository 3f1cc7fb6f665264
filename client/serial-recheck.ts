/**
 * One check at a time, none lost: chat's prompters (permission requests, MCP approvals) look at
 * the conversation whenever the live channel says something changed; a call while a check runs
 * makes it run once more after, instead of a second check beside it asking the same question.
 */
export class SerialRecheck {
  private running: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly check: () => Promise<void>,
    /** A check that failed (printed by the caller; the next call checks again). */
    private readonly onError: (error: unknown) => void,
    /** Chat is leaving: no more re-runs. */
    private readonly leaving: AbortSignal,
  ) {}

  /** Runs the check now, or once more after the one running. */
  request(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.check().catch(this.onError);
      } while (this.again && !this.leaving.aborted);
    })().finally(() => (this.running = undefined));
  }
}
