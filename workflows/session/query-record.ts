/**
 * The queries' durable record (what `SessionQueries` carries across continue-as-new: the count,
 * the last result and transitions, completed turns, the compaction record, a suspended query),
 * read from the carried state in one place, and its pure updates.
 */
import type { ResultMessage, TransitionType } from '../../common/result';
import type { CompactOutcome } from '../compaction/summary';
import type { CarriedState, CompactionOutcome, CompactionState, QueryInProgress } from '../definitions';

/** The queries' durable record: CarriedState's fields of the same names. */
export interface QueryRecord {
  queryCount: number;
  lastResult?: ResultMessage;
  lastQueryTransitions: TransitionType[];
  /** Turns of the queries before the running one (the UI numbers turns over the whole conversation). */
  completedTurns: number;
  /** Compactions and the autocompact failure streak (seed §2.7 circuit breaker, per conversation). */
  compaction: CompactionState;
  /** A query suspended by the previous run (or this one, when it could not continue as new), resumed before anything else. */
  queryInProgress?: QueryInProgress;
}

/** The record as a carried state holds it (the one place it is read in). */
export function queryRecordFrom(carried: CarriedState | undefined): QueryRecord {
  return {
    queryCount: carried?.queryCount ?? 0,
    lastResult: carried?.lastResult,
    lastQueryTransitions: carried?.lastQueryTransitions ?? [],
    completedTurns: carried?.completedTurns ?? 0,
    compaction: carried?.compaction ?? { compactions: 0, consecutiveFailures: 0 },
    queryInProgress: carried?.queryInProgress,
  };
}

/** The compaction record after a compaction (the feed and `status` show the last one). */
export function recordCompaction(before: CompactionState, outcome: CompactOutcome, consecutiveFailures: number, at: number): CompactionState {
  const recorded: CompactionOutcome = { ...outcome, at };
  delete (recorded as { nothingToCompact?: boolean }).nothingToCompact;
  return { compactions: before.compactions + (outcome.compacted ? 1 : 0), consecutiveFailures, lastCompaction: recorded };
}
