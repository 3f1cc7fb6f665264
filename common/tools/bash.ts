/** Bash tool spec (pure; the workflow bundle imports it). */
import { z } from 'zod';
import { isReadOnlyBash } from '../permission-facts';
import { oneLine } from '../cut-text';
import { defineTool } from '../tool-spec';

/** Timeout when the model gives none. */
export const BASH_DEFAULT_TIMEOUT_MS = 120_000;
/** Largest timeout the model may ask for. */
export const BASH_MAX_TIMEOUT_MS = 600_000;
/** Length of the command shown by `summarize`. */
const SUMMARY_COMMAND_LENGTH = 60;

export const bashInputSchema = z.strictObject({
  command: z.string().describe('The command to execute'),
  timeout: z.number().positive().max(BASH_MAX_TIMEOUT_MS).optional().describe(`Optional timeout in milliseconds (max ${BASH_MAX_TIMEOUT_MS})`),
  description: z
    .string()
    .optional()
    .describe(
      'Clear, concise description of what this command does in 5-10 words. Examples:\nInput: ls\nOutput: Lists files in current directory\n\nInput: git status\nOutput: Shows working tree status\n\nInput: npm install\nOutput: Installs package dependencies',
    ),
  /**
   * Claude Code's field: run outside the OS sandbox. Honoured only when the settings'
   * `sandbox.allowUnsandboxedCommands` is not false; the permission engine asks for such a call.
   */
  dangerouslyDisableSandbox: z.boolean().optional().describe('Set this to true to dangerously override sandbox mode and run commands without sandboxing.'),
  /**
   * Claude Code's field (issue 21): the call returns at once with a task id; the command runs
   * detached, supervised by the workflow, and its end comes back as a <task-notification>.
   */
  run_in_background: z.boolean().optional().describe('Set to true to run this command in the background. Use TaskOutput to read the output later.'),
});

export type BashInput = z.infer<typeof bashInputSchema>;

/** Output lines a Bash result shows under its call before `… +N lines`. */
const BASH_LINES_SHOWN = 3;

export const bashToolSpec = defineTool({
  name: 'Bash',
  description: `Executes a given bash command with an optional timeout, in the conversation's working directory.

Before executing the command, please follow these steps:
1. Directory Verification: if the command will create new directories or files, first use \`ls\` to verify the parent directory exists and is the correct location
2. Command Execution: always quote file paths that contain spaces with double quotes (e.g., cd "path with spaces/file.txt")

Usage notes:
- The command argument is required.
- You can specify an optional timeout in milliseconds (up to ${BASH_MAX_TIMEOUT_MS}ms / ${BASH_MAX_TIMEOUT_MS / 60_000} minutes). If not specified, commands will timeout after ${BASH_DEFAULT_TIMEOUT_MS}ms (${BASH_DEFAULT_TIMEOUT_MS / 60_000} minutes).
- It is very helpful if you write a clear, concise description of what this command does in 5-10 words.
- Each command runs in a fresh shell: \`cd\` and exported variables do not carry over to the next call. Use absolute paths or chain with \`&&\`.
- The command has no stdin; interactive commands (e.g. \`git rebase -i\`, editors, prompts) will not work.
- Output is stdout followed by stderr; a non-zero exit status is reported as an error with its exit code. If the output is very long it will be truncated before being returned to you.
- When the command times out, it and every process it started are killed.
- With \`run_in_background: true\` the command runs in the background (no timeout) and the call returns at once with a task id and the file its output goes to. You are notified when it finishes: do not poll or sleep waiting for it. Read its output with TaskOutput or Read, stop it with TaskStop. Use it for long-running work (servers, watchers, long builds) you do not need to wait on.
- Avoid using search commands like \`find\` and \`grep\`: use the Glob and Grep tools instead. Avoid \`cat\`, \`head\`, \`tail\` to read files: use the Read tool. Avoid \`sed\`/\`awk\` to edit files: use the Edit tool.
- When issuing multiple commands, use the ';' or '&&' operator to separate them. DO NOT use newlines (newlines are ok in quoted strings).`,
  inputSchema: bashInputSchema,
  // Read-only only when the parsed command's facts prove it (issue 29: one Bash analysis, the
  // tree-sitter facts gathered where it runs); without facts — none gathered, or the parser failed — it is not.
  isReadOnly: (_input, facts) => isReadOnlyBash(facts?.bash),
  // A background command is never started while the model still streams (a retried call may not ask for it again).
  isConcurrencySafe: (input, facts) => input.run_in_background !== true && isReadOnlyBash(facts?.bash),
  maxResultSizeChars: 30_000,
  shellCommandField: 'command',
  microCompactable: true,
  summarize: (input) => `Bash${input.run_in_background === true ? ' (background)' : ''}: ${oneLine(input.command, SUMMARY_COMMAND_LENGTH)}`,
  // The first output lines, then `… +N lines` (Claude Code's look).
  describeResult: (_input, content) => {
    const output = (content === '' ? [] : content.split('\n')).filter((line, index) => index > 0 || line.trim() !== '');
    if (output.length === 0) return '(No content)';
    const shown = output.slice(0, BASH_LINES_SHOWN);
    return [...shown, ...(output.length > shown.length ? [`… +${output.length - shown.length} lines`] : [])].join('\n');
  },
});

/** Programs whose exit code 1 is an answer, not a failure (Claude Code's command semantics). */
const EXIT_ONE_MEANINGS: Record<string, string> = {
  grep: 'no matches found',
  egrep: 'no matches found',
  fgrep: 'no matches found',
  rg: 'no matches found',
  diff: 'files differ',
  cmp: 'files differ',
  test: 'condition is false',
  '[': 'condition is false',
};

/**
 * Whether a non-zero exit is an error. `grep` finding nothing, `diff` finding differences and
 * `test` being false exit with 1 without anything having gone wrong; treating them as errors
 * would also cancel the rest of the message (the Bash cascade). Only a single pipeline is judged
 * this way: in `a && grep x`, an exit code of 1 may come from `a`. `finalProgram`: the program the
 * line's one pipeline ends with, from the parsed command (activities/permission-facts/bash-facts.ts
 * `finalProgram`; issue 29: no hand tokenizer), or undefined when it is not one pipeline.
 */
export function interpretExitCode(finalProgram: string | undefined, exitCode: number): { isError: boolean; meaning?: string } {
  if (exitCode === 0) return { isError: false };
  if (exitCode !== 1 || finalProgram === undefined) return { isError: true };
  const meaning = Object.hasOwn(EXIT_ONE_MEANINGS, finalProgram) ? EXIT_ONE_MEANINGS[finalProgram] : undefined;
  return meaning ? { isError: false, meaning } : { isError: true };
}
