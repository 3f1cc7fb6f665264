/**
 * One tool-line format for every view (issue 19, item 7), Claude Code's: `● Tool(argument)` for
 * the call and `  ⎿  result` under it — in chat, `--follow`, `npm start`, transcripts and the
 * permission questions of `ask` and `chat` (which also show the diff a Write or Edit would make),
 * and under a call what it did, in Claude Code's words (`Read 11 lines`).
 */
import { getToolSpec } from '../common/tool-specs';
import { countOf } from '../common/tool-spec';
import { inputFields } from '../common/tool-ui';
import { oneLine, shorten } from '../common/cut-text';
import { showInvisibleCharacters, wrapLine } from '../common/visible-text';
import { renderToolDiff, toolLineChanges } from './render/diff';

const ARGUMENT_LENGTH = 100;
/** Diff lines a permission question shows before `… N more lines`. */
const APPROVAL_PREVIEW_LINES = 20;

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

/** A call whose result is shown: its tool's name and input (the model's, untrusted). */
export interface ToolCall {
  readonly name: string;
  readonly input: unknown;
}

/**
 * `  ⎿  Read 11 lines`: the result under its call. With `call`, what the tool did in Claude
 * Code's words ({@link toolResultSummary}); without, or for a tool that has no such words, the
 * result's first line (`(+N lines)`); `  ⎿  Error: …` for a failed call.
 */
export function toolResultLine(text: string, isError: boolean, max = 120, call?: ToolCall): string {
  const summary = call && !isError ? toolResultSummary(call.name, call.input, text, max) : undefined;
  if (summary !== undefined) {
    const [first, ...rest] = summary.split('\n');
    return [`  ⎿  ${first}`, ...rest.map((line) => `     ${line}`)].join('\n');
  }
  const lines = text.replace(/\s+$/, '').split('\n');
  const first = lines.find((line) => line.trim() !== '') ?? '';
  const shown = shorten(first, max);
  return `  ⎿  ${isError ? 'Error: ' : ''}${shown}${lines.length > 1 ? ` (+${lines.length - 1} lines)` : ''}`;
}

/**
 * What a call that succeeded did, from its tool's descriptor: its `describeResult` of the result
 * the model got (`Read 11 lines`, `Found 4 files`, a command's first output lines), else for a
 * file change its diff's count (`Updated x.ts with 1 addition and 1 removal`, `Wrote 3 lines to
 * x.ts`); undefined for a tool without either (its first line is shown). Each line at most `max`.
 */
export function toolResultSummary(name: string, input: unknown, content: string, max = 120): string | undefined {
  const spec = getToolSpec(name);
  const parsed = spec?.inputSchema.safeParse(input);
  if (!spec || !parsed?.success) return undefined;
  const body = content.replace(/\n*<system-reminder>[\s\S]*?<\/system-reminder>\s*/g, '\n').replace(/\s+$/, '');
  try {
    const described = spec.describeResult?.(parsed.data, body);
    if (described !== undefined)
      return described
        .split('\n')
        .map((line) => shorten(line, max))
        .join('\n');
    const change = spec.changePreview?.(parsed.data);
    const pathValue = spec.fileAccess ? (parsed.data as Record<string, unknown>)[spec.fileAccess.pathField] : undefined;
    if (!change || typeof pathValue !== 'string') return undefined;
    const path = oneLine(pathValue, max);
    if (change.kind === 'write') {
      return `Wrote ${countOf(change.content === '' ? 0 : change.content.replace(/\n$/, '').split('\n').length, 'line')} to ${path}`;
    }
    if (change.kind !== 'edit') return undefined;
    const changes = toolLineChanges(name, input);
    return changes && `Updated ${path} with ${changesInWords(changes.added, changes.removed)}`;
  } catch {
    return undefined;
  }
}

/** `1 addition and 1 removal`, `3 additions`, `2 removals`, `no changes`. */
function changesInWords(added: number, removed: number): string {
  const parts = [...(added > 0 ? [countOf(added, 'addition')] : []), ...(removed > 0 ? [countOf(removed, 'removal')] : [])];
  return parts.length === 0 ? 'no changes' : parts.join(' and ');
}

/**
 * What a call would do, a few lines a person can judge before allowing it: the diff of an Edit,
 * Write or NotebookEdit (client/render/diff.ts), each line behind `    `; none for other tools
 * (a command: {@link approvalView}). `options.previous`: the file's text, when known.
 */
export function toolPreview(
  name: string,
  input: unknown,
  maxLines = 6,
  options: { width?: number; color?: boolean; previous?: string; indent?: string } = {},
): string[] {
  const indent = options.indent ?? '    ';
  const width = options.width === undefined ? Number.POSITIVE_INFINITY : options.width - indent.length;
  const diff = renderToolDiff(name, input, width, options.previous, { color: options.color ?? false, maxLines });
  return diff === undefined ? [] : diff.split('\n').map((line) => `${indent}${line}`);
}

/**
 * A call as a person approves it (issue 29, item 5): `Tool(argument)` and the lines under it, with
 * every invisible or control character shown (common/visible-text.ts). A Bash command is never
 * cut: inline when it is one short line, else `Bash` and the command whole below, each of its
 * lines `│ ` and wrapped to `width` (the rest of a wrapped line `↳ `), so a newline in the command
 * and a wrap on the screen look different. Other calls: their summary, uncut, and the preview of
 * what they would write.
 */
export function approvalView(name: string, input: unknown, width: number, indent = '    ', color = false): { call: string; lines: string[] } {
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
    APPROVAL_PREVIEW_LINES,
    { width, color, indent },
  );
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
