/**
 * A `<task-notification>` prompt (issue 21) read back for people: the XML is for the model; chat,
 * `send --follow` and the Temporal UI's current details show its summary line (`Background command
 * "Build" completed (exit code 0)`) and where the output is. Pure: the workflow bundle imports it.
 */

/** The summary and output file of a task notification, or undefined when `prompt` is not one. */
export function readTaskNotification(prompt: string): { summary: string; outputFile?: string } | undefined {
  if (!prompt.trimStart().startsWith('<task-notification>')) return undefined;
  const field = (name: string) => new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(prompt)?.[1]?.trim();
  const summary = field('summary') ?? `Task ${field('task-id') ?? '?'} ${field('status') ?? 'ended'}`;
  const outputFile = field('output-file');
  return outputFile ? { summary, outputFile } : { summary };
}
