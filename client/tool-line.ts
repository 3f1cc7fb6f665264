/**
 * One tool-line format for every view (issue 19, item 7), Claude Code's: `● Tool(argument)` for
 * the call and `  ⎿  result` under it — in chat, `--follow`, `npm start`, transcripts and the
 * permission questions of `ask` and `chat` (which also preview what a Write or Edit would change).
 */
import { getToolSpec } from '../common/tool-specs';
import { inputFields } from '../common/tool-ui';
import { oneLine, shorten } from '../common/cut-text';

const ARGUMENT_LENGTH = 100;

/**
 * The argument from a tool's own summary (`Write notes.txt`, `Bash: ls`, `Agent (Explore): find
 * tests`): the summary without the tool's name in front — what the live channel's items carry.
 */
export function argumentFromSummary(name: string, summary: string): string {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return oneLine(summary.replace(new RegExp(`^${escaped}(?: \\([^)]*\\))?:? ?`), ''), ARGUMENT_LENGTH);
}

/** The argument shown for a call: the tool's summary of a valid input, else its fields in a few words. */
export function toolArgument(name: string, input: unknown): string {
  const spec = getToolSpec(name);
  const parsed = spec?.inputSchema.safeParse(input);
  if (spec && parsed?.success) {
    try {
      return argumentFromSummary(name, spec.summarize(parsed.data));
    } catch {
      /* the fields below */
    }
  }
  return inputFields(input, ARGUMENT_LENGTH);
}

/** `● Read(notes.txt)`. */
export function toolCallLine(name: string, argument: string): string {
  return `● ${name}(${argument})`;
}

/** `  ⎿  first line (+N lines)`, `  ⎿  Error: …` for a failed call. */
export function toolResultLine(text: string, isError: boolean, max = 120): string {
  const lines = text.replace(/\s+$/, '').split('\n');
  const first = lines.find((line) => line.trim() !== '') ?? '';
  const shown = shorten(first, max);
  return `  ⎿  ${isError ? 'Error: ' : ''}${shown}${lines.length > 1 ? ` (+${lines.length - 1} lines)` : ''}`;
}

/** What a call would do, a few lines a person can judge before allowing it (Write's content, Edit's change, a long command). */
export function toolPreview(name: string, input: unknown, maxLines = 6): string[] {
  const record = (input ?? {}) as Record<string, unknown>;
  const clip = (text: string, prefix: string) => {
    const lines = text.replace(/\n$/, '').split('\n');
    const shown = lines.slice(0, maxLines).map((line) => `    ${prefix}${shorten(line, 150)}`);
    if (lines.length > maxLines) shown.push(`    … ${lines.length - maxLines} more lines`);
    return shown;
  };
  if (name === 'Write' && typeof record.content === 'string') return record.content === '' ? ['    (an empty file)'] : clip(record.content, '│ ');
  if (name === 'Edit' && typeof record.old_string === 'string' && typeof record.new_string === 'string') {
    return [...clip(record.old_string, '- '), ...clip(record.new_string, '+ ')];
  }
  if (name === 'Bash' && typeof record.command === 'string' && (record.command.includes('\n') || record.command.length > ARGUMENT_LENGTH)) {
    return clip(record.command, '│ ');
  }
  return [];
}
