/**
 * The one query (or manual compaction) in progress: the session's `ActiveQuery` has its one owner
 * here (issue 30). A query and a manual compaction never overlap (`exclusively`, `busy`); an
 * `abort` cancels the running one's scope, or — when a suspended query is about to resume in a new
 * run — is remembered until it starts.
 */
import { CancellationScope } from '@temporalio/workflow';
import { ActiveQuery } from '../query/active-query';

export class QuerySlot {
  private query: ActiveQuery | undefined;
  /** A query or a manual compaction is running: the other waits. */
  private busyWith = false;
  /** An abort that arrived before the resumed query was running again. */
  private abortBeforeResume = false;

  /** The running query or compaction, if any. */
  get current(): ActiveQuery | undefined {
    return this.query;
  }

  get busy(): boolean {
    return this.busyWith;
  }

  /** Runs `work` as the one query or compaction in progress (`busy` meanwhile). */
  async exclusively<T>(work: () => Promise<T>): Promise<T> {
    this.busyWith = true;
    try {
      return await work();
    } finally {
      this.busyWith = false;
    }
  }

  /** A query starts in its own cancellable scope; a resumed one an abort already reached starts aborted. */
  startQuery(resumed: boolean): ActiveQuery {
    const query = new ActiveQuery(new CancellationScope({ cancellable: true }));
    this.query = query;
    if (resumed && this.abortBeforeResume) {
      this.abortBeforeResume = false;
      query.abort();
    }
    return query;
  }

  /** A manual compaction starts: it runs as the query (an abort cancels it). */
  startCompaction(): ActiveQuery {
    this.query = new ActiveQuery(new CancellationScope({ cancellable: true }));
    this.busyWith = true;
    return this.query;
  }

  /** The query ended (returned or threw). */
  endQuery(): void {
    this.query = undefined;
  }

  endCompaction(): void {
    this.query = undefined;
    this.busyWith = false;
  }

  /** `abort`: cancels the running query's scope; with none running, a suspended query about to resume starts aborted. */
  abort(suspendedQueryWaiting: boolean): void {
    if (!this.query) {
      // The new run receives buffered signals before its main body runs.
      if (suspendedQueryWaiting) this.abortBeforeResume = true;
      return;
    }
    this.query.abort();
  }
}
