/**
 * Cutting long texts, one way each (issue 20, item 5). Pure: both sides import it.
 *
 * - {@link cutText}: the head and how long the whole was, `head… (3000 characters)`: the event
 *   feed, the stream and the status cut tool results and inputs this way, and live views match a
 *   cut block on its head and length ({@link parseCutText}).
 * - {@link shorten}: one display line, at most `max` characters, the last one `…`.
 */

/** `text` within `max` characters as it is; longer, its first `max` characters then `… (N characters)`. */
export function cutText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}

/**
 * {@link cutText} on a text that may have been cut already (the stream cuts the feed's events
 * shorter): N stays the length of the original, not of the cut text.
 */
export function cutTextAgain(text: string, max: number): string {
  if (text.length <= max) return text;
  const length = parseCutText(text)?.length ?? text.length;
  return `${text.slice(0, max)}… (${length} characters)`;
}

/** The head and original length of a text {@link cutText} cut; undefined for a text it did not. */
export function parseCutText(text: string): { head: string; length: number } | undefined {
  const cut = /^([\s\S]*)… \((\d+) characters\)$/.exec(text);
  return cut ? { head: cut[1], length: Number(cut[2]) } : undefined;
}

/** `text` within `max` characters as it is; longer, its first `max - 1` characters and `…` (`max` in all). */
export function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `text` on one line (runs of whitespace as one space, trimmed), {@link shorten}ed to `max`. */
export function oneLine(text: string, max: number): string {
  return shorten(text.replace(/\s+/g, ' ').trim(), max);
}
