/**
 * The background commands' records (issue 21) as carried state and `status` hold them: types only,
 * so workflows/definitions.ts can name them without importing the route (workflows/background/commands.ts).
 */
import type { BackgroundStatus } from '../../common/background';

/** One background task as the conversation keeps it (carried across continue-as-new). */
export interface BackgroundTask {
  kind: 'bash';
  /** The model's description, else the command cut to one line. */
  description: string;
  command: string;
  status: BackgroundStatus;
  outputPath: string;
  /** Workflow time (ms since epoch). */
  startedAt: number;
  endedAt?: number;
  exitCode?: number;
  /** Why it was interrupted or failed without an exit code. */
  detail?: string;
  /** The model stopped it with TaskStop: it knows, so no notification re-invokes it. */
  stoppedByModel?: boolean;
}

/** The module's durable state: tasks by id. */
export type BackgroundTasks = Record<string, BackgroundTask>;

/** A task as `status` lists it. */
export interface BackgroundTaskStatus extends BackgroundTask {
  id: string;
}
