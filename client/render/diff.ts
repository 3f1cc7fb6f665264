/**
 * What a file-changing tool call would change (its descriptor's `changePreview`: Edit, Write,
 * NotebookEdit), as a colour diff (issue 32, item 2) on jsdiff: a
 * removed line red behind `-`, an added one green behind `+`, context plain, with line numbers
 * when the file's text is known (Claude Code's look). The one preview of a file change: the
 * permission questions (client/tool-line.ts approvalView) and the chat's tool lines use it.
 *
 * The input is the model's, untrusted: anything malformed gives undefined, never a throw, and
 * control characters are removed (client/render/terminal-text.ts).
 */
import { structuredPatch } from 'diff';
import { getToolSpec } from '../../common/tool-specs';
import { colorWanted, sanitizeForTerminal, wrapStyledLine } from './terminal-text';

export interface DiffOptions {
  /** Colours (default: unless NO_COLOR is set). Without them the `-`/`+` markers say it all. */
  readonly color?: boolean;
  /** Diff lines shown at most, then `… N more lines` (default: all). */
  readonly maxLines?: number;
  /** Lines of unchanged text around each change when the whole file is known (default 3). */
  readonly context?: number;
}

/** Lines added and removed by a change. */
export interface LineChanges {
  readonly added: number;
  readonly removed: number;
}

const RED = '\u001b[48;5;52m';
const GREEN = '\u001b[48;5;22m';
const DIM = '\u001b[2m';
const RESET = '\u001b[0m';

type Row = { kind: '+' | '-' | ' ' | '…'; text: string; line?: number };

/**
 * The diff of the call `toolName(input)` as terminal lines joined by `\n`, `width` columns wide
 * (long lines wrap under their text), or undefined for another tool or an input that does not
 * parse. `previous`: the file's text before, when the caller knows it cheaply (Write's overwrite
 * then shows what changes; Edit gets real line numbers).
 */
export function renderToolDiff(toolName: string, input: unknown, width: number, previous?: string, options: DiffOptions = {}): string | undefined {
  try {
    const rows = diffRows(toolName, input, previous, options.context ?? 3);
    if (rows === undefined) return undefined;
    return formatRows(rows, width, options).join('\n');
  } catch {
    return undefined;
  }
}

/** How many lines the call adds and removes (for `Updated x.ts with 1 addition and 1 removal`), or undefined as for {@link renderToolDiff}. */
export function toolLineChanges(toolName: string, input: unknown, previous?: string): LineChanges | undefined {
  try {
    const rows = diffRows(toolName, input, previous, 0);
    if (rows === undefined) return undefined;
    return { added: rows.filter((row) => row.kind === '+').length, removed: rows.filter((row) => row.kind === '-').length };
  } catch {
    return undefined;
  }
}

function diffRows(toolName: string, input: unknown, previous: string | undefined, context: number): Row[] | undefined {
  const spec = getToolSpec(toolName);
  const parsed = spec?.inputSchema.safeParse(input);
  const change = spec?.changePreview && parsed?.success ? spec.changePreview(parsed.data) : undefined;
  if (!change) return undefined;
  const before = previous === undefined ? undefined : clean(previous);
  switch (change.kind) {
    case 'edit': {
      const oldText = clean(change.oldText);
      const newText = clean(change.newText);
      if (before !== undefined && (oldText === '' ? before === '' : before.includes(oldText))) {
        const after = oldText === '' ? newText : change.replaceAll ? before.split(oldText).join(newText) : before.replace(oldText, () => newText);
        return patchRows(before, after, context, true);
      }
      return patchRows(oldText, newText, Number.MAX_SAFE_INTEGER, false);
    }
    case 'write': {
      const content = clean(change.content);
      if (before !== undefined && before !== '') return patchRows(before, content, context, true);
      if (content === '') return [{ kind: '…', text: '(an empty file)' }];
      // A new file (or one whose text we do not know): its lines, numbered; added when known to be new.
      return splitLines(content).map((text, index) => ({ kind: before === '' ? '+' : ' ', text, line: index + 1 }));
    }
    case 'lines':
      return [
        ...(change.removed === undefined ? [] : splitLines(clean(change.removed)).map((text) => ({ kind: '-' as const, text }))),
        ...(change.added === undefined ? [] : splitLines(clean(change.added)).map((text) => ({ kind: '+' as const, text }))),
      ];
  }
}

/** `text` without control characters and with tabs as spaces (a tab's width is the terminal's guess). */
function clean(text: string): string {
  return sanitizeForTerminal(text).replace(/\t/g, '    ');
}

function splitLines(text: string): string[] {
  return text.replace(/\n$/, '').split('\n');
}

/** The hunks of `before` → `after` as rows; `numbered`: they are the file's lines (else a snippet's, shown without numbers). */
function patchRows(before: string, after: string, context: number, numbered: boolean): Row[] {
  const withNewline = (text: string) => (text === '' || text.endsWith('\n') ? text : `${text}\n`);
  const patch = structuredPatch('a', 'b', withNewline(before), withNewline(after), undefined, undefined, { context });
  const rows: Row[] = [];
  patch.hunks.forEach((hunk, index) => {
    if (index > 0) rows.push({ kind: '…', text: '…' });
    let oldLine = hunk.oldStart;
    let newLine = hunk.newStart;
    for (const line of hunk.lines) {
      const kind = line[0];
      const text = line.slice(1);
      if (kind === '\\') continue; // "\ No newline at end of file"
      if (kind === '-') rows.push({ kind: '-', text, line: numbered ? oldLine++ : undefined });
      else if (kind === '+') rows.push({ kind: '+', text, line: numbered ? newLine++ : undefined });
      else {
        rows.push({ kind: ' ', text, line: numbered ? newLine : undefined });
        oldLine++;
        newLine++;
      }
    }
  });
  return rows;
}

function formatRows(rows: Row[], width: number, options: DiffOptions): string[] {
  const color = options.color ?? colorWanted();
  const max = options.maxLines ?? Number.POSITIVE_INFINITY;
  const shown = rows.length > max ? rows.slice(0, Math.max(0, max)) : rows;
  const numberWidth = Math.max(0, ...shown.map((row) => (row.line === undefined ? 0 : String(row.line).length)));
  const room = Number.isFinite(width) && width > 0 ? Math.floor(width) : Number.POSITIVE_INFINITY;
  const lines = shown.flatMap((row) => {
    if (row.kind === '…') return [color ? `${DIM}${row.text}${RESET}` : row.text];
    const number = numberWidth === 0 ? '' : `${row.line === undefined ? ''.padStart(numberWidth) : String(row.line).padStart(numberWidth)} `;
    const gutter = `${number}${row.kind} `;
    const pieces = wrapStyledLine(row.text, room - gutter.length);
    return pieces.map((piece, index) => {
      const line = `${index === 0 ? gutter : ' '.repeat(gutter.length)}${piece}`;
      if (!color || row.kind === ' ') return line;
      const pad = Number.isFinite(room) ? ' '.repeat(Math.max(0, room - [...line].length)) : '';
      return `${row.kind === '-' ? RED : GREEN}${line}${pad}${RESET}`;
    });
  });
  if (rows.length > shown.length) lines.push(`… ${rows.length - shown.length} more lines`);
  return lines;
}
