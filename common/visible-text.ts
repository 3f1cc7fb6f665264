/**
 * Text a person approves, with nothing hidden (issue 29, item 5; class 8). A command shown for
 * approval must read as it runs: a bidi control (U+202E) can reverse what the eye sees, a
 * zero-width or other invisible character can hide a difference, a carriage return or an ANSI
 * escape can repaint the prompt. Each such character is shown as `⟨U+202E⟩` — one spelling,
 * everywhere a call is shown for approval (chat, ask, `status`, `approve` / `deny`, the UI).
 * Pure: the workflow bundle imports it for the UI's texts.
 */

/**
 * Characters a terminal or a browser would act on or draw as nothing: controls (C0, DEL, C1 — ESC
 * included, so an escape sequence shows as `⟨U+001B⟩[2J`), format characters (bidi controls
 * U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C; zero-width U+200B–U+200D, U+2060, U+FEFF;
 * soft hyphen, tag characters …), lone surrogates, the line and paragraph separators, the
 * Hangul fillers and the braille blank that draw as blanks, spaces other than the space itself
 * (a no-break space draws as one, yet bash does not split words on it: `rm -rf build\u00A0/` is one
 * word that reads as two), and the variation selectors and combining grapheme joiner that draw as
 * nothing while making two names differ.
 */
const INVISIBLE =
  /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u115F\u1160\u3164\uFFA0\u2800\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000\u034F\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/gu;

/** How one invisible character is shown: `⟨U+202E⟩`. */
export function characterMarker(character: string): string {
  return `⟨U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}⟩`;
}

/**
 * `text` with every invisible or control character shown as {@link characterMarker}; newlines and
 * tabs are kept as they are (`lineBreaks: 'keep'`, for a terminal) or shown too (`'show'`, for a
 * one-line label).
 */
export function showInvisibleCharacters(text: string, lineBreaks: 'keep' | 'show' = 'keep'): string {
  return text.replace(INVISIBLE, (character) => (lineBreaks === 'keep' && (character === '\n' || character === '\t') ? character : characterMarker(character)));
}

/**
 * `line` in pieces of at most `width` columns (a tab counted as 8), never cutting a `⟨U+202E⟩`
 * marker in two: joined, the pieces are the line again.
 */
export function wrapLine(line: string, width: number): string[] {
  if (!Number.isFinite(width)) return [line];
  const pieces: string[] = [];
  let piece = '';
  let columns = 0;
  for (const token of line.match(/⟨U\+[0-9A-F]{4,6}⟩|[\s\S]/gu) ?? []) {
    const size = token === '\t' ? 8 : [...token].length;
    if (piece !== '' && columns + size > width) {
      pieces.push(piece);
      piece = '';
      columns = 0;
    }
    piece += token;
    columns += size;
  }
  pieces.push(piece);
  return pieces;
}
