/**
 * Whether a worker polls the conversation's task queue (issue 32): chat says so at start, while
 * a prompt waits, and stops counting a running tool's seconds once the worker is gone. Asked with
 * `describeTaskQueue` (its pollers), every POLL_MS; a server that cannot say counts as present.
 */
import type { ConversationClient } from './api';

export const WORKER_POLL_MS = 2_000;

export type WorkerPresence = 'present' | 'absent';

export class WorkerPresenceWatch {
  private state: WorkerPresence = 'present';
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly api: ConversationClient,
    private readonly taskQueue: string,
    private readonly onChange: (state: WorkerPresence) => void,
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
    const next: WorkerPresence = polled === false ? 'absent' : 'present';
    if (next === this.state || this.stopped) return;
    this.state = next;
    this.onChange(next);
  }
}

export function noWorkerLine(taskQueue: string): string {
  return `No worker is polling task queue "${taskQueue}": prompts wait until one starts (\`durable-agent worker\`).`;
}
