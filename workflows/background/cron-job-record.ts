/** The cron jobs' carried record (its own file: definitions.ts names it without importing the workflow code). */

/** A job this conversation made, as it keeps it (carried across continue-as-new). */
export interface CronJobRecord {
  id: string;
  cron: string;
  prompt: string;
  recurring: boolean;
  durable: boolean;
  timeZone: string;
  createdAtMs: number;
  expiresAtMs?: number;
  /** The Schedule's next action times when it was made (ISO 8601). */
  nextFireTimes: string[];
}
