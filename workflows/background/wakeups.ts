/**
 * ScheduleWakeup (issue 21 §4): a durable timer in the conversation whose prompt becomes the next
 * input (`session.notify`, once per wakeup). The timer lives in a scope of its own, a child of the
 * workflow's root scope, so an `abort` (which cancels the query's scope) leaves it running, as
 * Claude Code's abort leaves its loop scheduled. Pending wakeups are carried across
 * continue-as-new and the new run starts their timers again for the time that remains; the
 * server keeps the timer, so a worker that dies meanwhile changes nothing. Shown in `status`
 * and, by its summary, as a labelled timer in the UI.
 */
import { CancellationScope, isCancellation, log, sleep, uuid4 } from '@temporalio/workflow';
import { type WakeupRecord, planWakeup } from '../../common/background';
import { oneLine } from '../../common/cut-text';
import type { ToolUseBlock } from '../../common/messages';
import type { ScheduleWakeupInput } from '../../common/tools/schedule-wakeup';
import type { ToolOutcome, ToolRoute, ToolRouteCall } from '../deps/query-host';
import { parseRouteInput } from './route-input';

/** What a wakeup needs from the session. */
export interface WakeupHost {
  readonly minimumSeconds: number;
  readonly isSubagent: boolean;
  notify(key: string, prompt: string): void;
  onChange(): void;
}

/** The UI's label of a wakeup's timer. */
export function wakeupTimerSummary(reason: string): string {
  return `wakeup: ${oneLine(reason, 80)}`;
}

export class Wakeups implements ToolRoute {
  readonly name = 'wakeups';
  private records: WakeupRecord[];
  /** Not the query's scope: an abort does not cancel a wakeup; the end of the conversation does. */
  private readonly scope = new CancellationScope({ cancellable: true });

  constructor(
    carried: WakeupRecord[] | undefined,
    private readonly host: WakeupHost,
  ) {
    this.records = [...(carried ?? [])];
    // A new run (continue-as-new): the timers again, for what remains of each.
    for (const record of this.records) this.startTimer(record);
  }

  takes(block: ToolUseBlock): boolean {
    return block.name === 'ScheduleWakeup';
  }

  async run({ block }: ToolRouteCall): Promise<ToolOutcome> {
    const parsed = parseRouteInput<ScheduleWakeupInput>(block);
    if (!parsed.ok) return parsed.outcome;
    // A subagent ends with its answer: a wakeup would never reach anyone.
    if (this.host.isSubagent) return { isError: true, content: 'ScheduleWakeup is not available to a subagent; return your result instead.' };
    const { wakeup, content } = planWakeup({ id: uuid4().slice(0, 8), ...parsed.input, nowMs: Date.now(), minimumSeconds: this.host.minimumSeconds });
    this.records.push(wakeup);
    this.startTimer(wakeup);
    this.host.onChange();
    return { content, isError: false };
  }

  private startTimer(record: WakeupRecord): void {
    // At least 1 ms: a wakeup already due after continue-as-new still fires through a timer (same commands on replay).
    const remaining = Math.max(1, record.dueAtMs - Date.now());
    this.scope
      .run(() => sleep(remaining, { summary: wakeupTimerSummary(record.reason) }))
      .then(
        () => this.fire(record.id),
        (error) => {
          if (!isCancellation(error)) log.warn('Wakeup timer failed', { id: record.id, error: String(error) });
        },
      );
  }

  private fire(id: string): void {
    const record = this.records.find((candidate) => candidate.id === id);
    if (!record) return;
    // Removed and notified in one step: a continue-as-new carries either the record or the queued prompt.
    this.records = this.records.filter((candidate) => candidate.id !== id);
    this.host.notify(`wakeup:${id}`, record.prompt);
    this.host.onChange();
  }

  /** A wakeup is due: the conversation is not idle-timed out. */
  pending(): boolean {
    return this.records.length > 0;
  }

  /** The conversation ends: its wakeups go with it (no command when there are none). */
  async onEnd(): Promise<void> {
    if (this.records.length === 0) return;
    this.records = [];
    this.scope.cancel();
  }

  /** For `status` (soonest first). */
  list(): Array<{ id: string; reason: string; prompt: string; dueAt: string }> {
    return [...this.records]
      .sort((a, b) => a.dueAtMs - b.dueAtMs)
      .map((record) => ({ id: record.id, reason: record.reason, prompt: record.prompt, dueAt: new Date(record.dueAtMs).toISOString() }));
  }

  carried(): WakeupRecord[] | undefined {
    return this.records.length > 0 ? this.records : undefined;
  }
}
