/**
 * How chat shows a `<task-notification>` (issue 21): the prompt a background task's end queued is
 * XML for the model; a person reads its summary line (`Background command "Build" completed (exit
 * code 0)`) and where the output is.
 */

/** The one-line view of a task notification, or undefined when `prompt` is not one. */
export function describeTaskNotification(prompt: string): string | undefined {
  if (!prompt.trimStart().startsWith('<task-notification>')) return undefined;
  const field = (name: string) => new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(prompt)?.[1]?.trim();
  const summary = field('summary') ?? `Task ${field('task-id') ?? '?'} ${field('status') ?? 'ended'}`;
  const output = field('output-file');
  return `● ${summary}${output ? ` · output: ${output}` : ''}`;
}
