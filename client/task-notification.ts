/**
 * How chat shows a `<task-notification>` (issue 21): the prompt a background task's end queued is
 * XML for the model; a person reads its summary line (`Background command "Build" completed (exit
 * code 0)`) and where the output is (common/task-notification.ts reads it).
 */
import { readTaskNotification } from '../common/task-notification';

/** The one-line view of a task notification, or undefined when `prompt` is not one. */
export function describeTaskNotification(prompt: string): string | undefined {
  const notification = readTaskNotification(prompt);
  if (!notification) return undefined;
  return `● ${notification.summary}${notification.outputFile ? ` · output: ${notification.outputFile}` : ''}`;
}
