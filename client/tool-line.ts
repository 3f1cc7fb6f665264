/**
 * One tool-line format for every view (issue 19, item 7), Claude Code's: `● Tool(argument)` for
 * the call and `  ⎿  result` under it — in chat, `--follow`, `npm start`, transcripts and the
 * permission questions of `ask` and `chat` (which also preview what a Write or Edit would change).
 */
import { getToolSpec } from '../common/tool-specs';
import { inputFields } from '../common/tool-ui';
import { oneLine, shorten } from '../common/cut-text';
import { showInvisibleCharacters, wrapLine } from '../common/visible-text';

const ARGUMENT_LENGTH = 100;

/**
 * The argument from a tool's own summary (`Write notes.txt`, `Bash: ls`, `Agent (Explore): find
 * tests`): the summary without the tool's name in front — what the live channel's items carry.
 */
export function argumentFromSummary(name: string, summary: string, max = ARGUMENT_LENGTH): string {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return oneLine(summary.replace(new RegExp(`^${escaped}(?: \\([^)]*\\))?:? ?`), ''), max);
}

/** The argument shown for a call: the tool's summary of a valid input, else its fields in a few words (`max`: Infinity for all of them). */
export function toolArgument(name: string, input: unknown, max = ARGUMENT_LENGTH): string {
  const spec = getToolSpec(name);
  const parsed = spec?.inputSchema.safeParse(input);
  if (spec && parsed?.success) {
    try {
      return argumentFromSummary(name, spec.summarize(parsed.data), max);
    } catch {
      /* the fields below */
    }
  }
  return inputFields(input, max);
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

/** What a call would do, a few lines a person can judge before allowing it (Write's content, Edit's change; a command: {@link approvalView}). */
export function toolPreview(name: string, input: unknown, maxLines = 6): string[] {
  const record = (input ?? {}) as Record<string, unknown>;
  const clip = (text: string, prefix: string) => {
    const lines = text.replace(/\n$/, '').split('\n');
    const shown = lines.slice(0, maxLines).map((line) => `    ${prefix}${shorten(line, 150)}`);
    if (lines.length > maxLines) shown.push(`    … ${lines.length - maxLines} more lines`);
    return shown;
  };
  const fields = getToolSpec(name)?.approvalPreview ?? [];
  if (!fields.every(({ field }) => typeof record[field] === 'string')) return [];
  return fields.flatMap(({ field, mark, empty }) => {
    const text = record[field] as string;
    return text === '' && empty !== undefined ? [`    ${empty}`] : clip(text, mark);
  });
}

/**
 * A call as a person approves it (issue 29, item 5): `Tool(argument)` and the lines under it, with
 * every invisible or control character shown (common/visible-text.ts). A Bash command is never
 * cut: inline when it is one short line, else `Bash` and the command whole below, each of its
 * lines `│ ` and wrapped to `width` (the rest of a wrapped line `↳ `), so a newline in the command
 * and a wrap on the screen look different. Other calls: their summary, uncut, and the preview of
 * what they would write.
 */
export function approvalView(name: string, input: unknown, width: number, indent = '    '): { call: string; lines: string[] } {
  const commandField = getToolSpec(name)?.shellCommandField;
  const command = commandField === undefined ? undefined : ((input ?? {}) as Record<string, unknown>)[commandField];
  if (typeof command === 'string') {
    if (!command.includes('\n') && command.length <= ARGUMENT_LENGTH) return { call: `${name}(${showInvisibleCharacters(command, 'show')})`, lines: [] };
    return { call: name, lines: wholeTextLines(command, width, indent) };
  }
  const argument = toolArgument(
    name,
    mapStrings(input, (text) => showInvisibleCharacters(text, 'show')),
    Number.POSITIVE_INFINITY,
  );
  const preview = toolPreview(
    name,
    mapStrings(input, (text) => showInvisibleCharacters(text)),
  ).map((line) => line.replace(/^ {4}/, indent));
  return { call: `${name}(${argument})`, lines: preview };
}

/** `text` whole under a call: each line `│ `, wrapped to `width` (a wrapped line's rest `↳ `), invisible characters shown. */
function wholeTextLines(text: string, width: number, indent = '    '): string[] {
  const first = `${indent}│ `;
  const rest = `${indent}↳ `;
  const room = Math.max(20, width - first.length);
  return showInvisibleCharacters(text)
    .split('\n')
    .flatMap((line) => wrapLine(line, room).map((piece, index) => `${index === 0 ? first : rest}${piece}`));
}

/** `value` with `change` applied to every string in it (an input's fields, nested ones too). */
function mapStrings(value: unknown, change: (text: string) => string): unknown {
  if (typeof value === 'string') return change(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, change));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapStrings(item, change)]));
  return value;
}
