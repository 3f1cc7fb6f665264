/**
 * Whether a worker polls the conversation's task queue (issue 32): chat says so at start, while
 * a prompt waits, and stops counting a running tool's seconds once the worker is gone. Asked with
 * `describeTaskQueue` (its pollers), every POLL_MS; a server that cannot say counts as present.
 * The server lists a worker that died for minutes after, so while a tool runs its activity tells
 * too: one whose last attempt timed out (no heartbeat: the worker stopped) and that waits for
 * another attempt has no worker running it.
 */
import { cliCommand } from './invocation';
import type { ConversationClient } from './api';

export const WORKER_POLL_MS = 2_000;

/** `stalled`: pollers are listed, but the running tool's worker is gone (its attempt timed out, the retry waits). */
export type WorkerPresence = 'present' | 'absent' | 'stalled';

/** PENDING_ACTIVITY_STATE_SCHEDULED: waiting for a worker to take it. */
const ACTIVITY_SCHEDULED = 1;

export class WorkerPresenceWatch {
  private state: WorkerPresence = 'present';
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly api: ConversationClient,
    private readonly taskQueue: string,
    private readonly onChange: (state: WorkerPresence) => void,
    /** The conversation and whether one of its tools runs now (then its activity is looked at too). */
    private readonly tools?: { workflowId(): string | undefined; running(): boolean },
  ) {}

  get presence(): WorkerPresence {
    return this.state;
  }

  /** Asks once now (the answer is also the starting state) and then every WORKER_POLL_MS. */
  async start(): Promise<WorkerPresence> {
    await this.check();
    this.schedule();
    return this.state;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.check().finally(() => this.schedule()), WORKER_POLL_MS);
    this.timer.unref();
  }

  private async check(): Promise<void> {
    const polled = await this.api.hasPollers(this.taskQueue).catch(() => undefined);
    let next: WorkerPresence = polled === false ? 'absent' : 'present';
    const workflowId = this.tools?.workflowId();
    if (next === 'present' && workflowId !== undefined && this.tools?.running() && (await this.toolStalled(workflowId))) next = 'stalled';
    if (next === this.state || this.stopped) return;
    this.state = next;
    this.onChange(next);
  }

  private async toolStalled(workflowId: string): Promise<boolean> {
    const description = await this.api.describe(workflowId).catch(() => undefined);
    return (description?.raw.pendingActivities ?? []).some(
      (activity) => Number(activity.state) === ACTIVITY_SCHEDULED && (activity.attempt ?? 1) > 1 && activity.lastFailure?.timeoutFailureInfo != null,
    );
  }
}

export function noWorkerLine(taskQueue: string): string {
  return `No worker is polling task queue "${taskQueue}": prompts wait until one starts (\`${cliCommand('worker')}\`).`;
}

export function stalledToolLine(taskQueue: string): string {
  return `The worker running this tool is gone (its attempt timed out): it runs again once a worker polls task queue "${taskQueue}".`;
}
