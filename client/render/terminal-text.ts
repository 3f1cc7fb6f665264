/**
 * Text made safe for a terminal, and ANSI-aware measuring and wrapping of what we render
 * (markdown, diffs). Pure: no terminal library is loaded here.
 */

/**
 * Text from the model, files or tools made safe for a terminal: escape sequences (colours, cursor
 * moves, OSC window titles and hyperlinks) and other control characters are removed, newlines and
 * tabs kept. Raw, they could rewrite the screen or the terminal's title (issue 12, item 10).
 */
export function sanitizeForTerminal(text: string): string {
  return (
    text
      // CSI (ESC [ … final byte), OSC (ESC ] … BEL or ESC \), then other two-character escapes.
      .replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, '')
      .replace(/\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/g, '')
      .replace(/\u001b[@-_]?/g, '')
      .replace(/\r\n/g, '\n')
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '')
  );
}

/** True when colours go to the terminal: NO_COLOR unset or empty (https://no-color.org). */
export function colorWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return !env.NO_COLOR;
}

/** SGR colour sequences and OSC 8 hyperlinks: what our own renderers put into text. */
const OUR_ESCAPES = /\u001b\[[0-9;]*m|\u001b\]8;[^\u0007\u001b]*(?:\u0007|\u001b\\)/g;

/** `text` without the colours and hyperlinks a renderer added (for NO_COLOR and for measuring). */
export function stripStyles(text: string): string {
  return text.replace(OUR_ESCAPES, '');
}

/** Columns `text` takes on screen (styles not counted; a wide CJK or emoji character counts 2). */
export function visibleWidth(text: string): number {
  let width = 0;
  for (const character of stripStyles(text)) width += characterWidth(character);
  return width;
}

function characterWidth(character: string): number {
  const code = character.codePointAt(0) ?? 0;
  if (code === 0x09) return 8;
  if (code < 0x20 || (code >= 0x300 && code < 0x370) || code === 0x200d || (code >= 0xfe00 && code <= 0xfe0f)) return 0;
  const wide =
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd);
  return wide ? 2 : 1;
}

/**
 * One line wrapped at `width` columns between words, styles kept: each continuation starts with
 * `hang` (the indent it lines up under). A word is what lies between spaces, styles inside it
 * included (`(` + colour + `https://…` stays whole); one longer than the room is cut, as a
 * terminal would.
 */
export function wrapStyledLine(line: string, width: number, hang = ''): string[] {
  if (!Number.isFinite(width) || visibleWidth(line) <= width) return [line];
  const room = Math.max(10, width);
  const hangWidth = visibleWidth(hang);
  const lines: string[] = [];
  let current = '';
  let columns = 0;
  /** Spaces seen since the last word: written only when a word follows on the same line. */
  let spaces = '';
  const breakLine = () => {
    lines.push(current);
    current = hang;
    columns = hangWidth;
  };
  for (const token of line.match(/ +|[^ ]+/g) ?? []) {
    if (token.startsWith(' ')) {
      spaces += token;
      continue;
    }
    const size = visibleWidth(token);
    if (columns > hangWidth && columns + spaces.length + size > room) breakLine();
    else {
      current += spaces;
      columns += spaces.length;
    }
    spaces = '';
    if (columns + size <= room) {
      current += token;
      columns += size;
      continue;
    }
    // A word wider than the room: cut where each line ends (styles are never cut).
    for (const piece of token.match(/\u001b\[[0-9;]*m|\u001b\]8;[^\u0007\u001b]*(?:\u0007|\u001b\\)|[\s\S]/gu) ?? []) {
      const pieceWidth = piece.startsWith('\u001b') ? 0 : characterWidth(piece);
      if (pieceWidth > 0 && columns + pieceWidth > room && columns > hangWidth) breakLine();
      current += piece;
      columns += pieceWidth;
    }
  }
  lines.push(current);
  return lines;
}
