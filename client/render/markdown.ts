/**
 * The model's markdown as terminal text (issue 32, item 2), on marked + marked-terminal, with
 * fenced code highlighted by cli-highlight (marked-terminal's own highlighter): headings bold,
 * lists, links, tables, quotes, and paragraphs and list items word-wrapped at the width.
 *
 * Both libraries are ESM-only (marked 18 and marked-terminal's chalk), so they are loaded with a
 * dynamic `import()`: call {@link loadMarkdownRenderer} once (the chat does at start); after that
 * {@link renderMarkdown} is synchronous. Before, it returns the text plain, wrapped.
 *
 * Safe on partial markdown (it is re-rendered as it streams): an unclosed fence shows the rest as
 * code, an unclosed `**` as itself, and a renderer failure falls back to the plain text.
 * NO_COLOR (any non-empty value) drops every colour; the layout stays.
 */
import { colorWanted, sanitizeForTerminal, stripStyles, wrapStyledLine } from './terminal-text';

type Render = (markdown: string, width: number) => string;

let loaded: Promise<Render> | undefined;
let ready: Render | undefined;

/** Loads marked and marked-terminal (once) and gives the renderer; {@link renderMarkdown} uses it from then on. */
export function loadMarkdownRenderer(): Promise<Render> {
  loaded ??= (async () => {
    const [{ Marked }, { markedTerminal }] = await Promise.all([import('marked'), import('marked-terminal')]);
    /** One Marked per width: marked-terminal takes the width when it is set up. */
    const byWidth = new Map<number, InstanceType<typeof Marked<string, string>>>();
    const markedFor = (width: number) => {
      let marked = byWidth.get(width);
      if (!marked) {
        marked = new Marked<string, string>({ gfm: true, async: false });
        marked.use(
          markedTerminal(
            {
              width,
              reflowText: true,
              showSectionPrefix: false,
              tab: 2,
              emoji: false,
              tableOptions: { style: { head: ['bold'] } },
              ...headingStyles(),
            },
            { ignoreIllegals: true },
          ),
        );
        // marked-terminal renders a list item's text raw (`**6**`, `` `code` `` stayed as typed): its
        // inline tokens are rendered here; anything else falls back to marked-terminal's own renderer.
        marked.use({
          renderer: {
            text(token) {
              return typeof token === 'object' && 'tokens' in token && token.tokens ? this.parser.parseInline(token.tokens) : false;
            },
          },
        });
        if (byWidth.size > 8) byWidth.clear();
        byWidth.set(width, marked);
      }
      return marked;
    };
    ready = (markdown, width) => {
      const room = roomFor(width);
      const text = sanitizeForTerminal(markdown);
      let rendered: string;
      try {
        rendered = markedFor(room).parse(text, { async: false });
      } catch {
        return plain(text, room);
      }
      const out = wrapRendered(rendered.replace(/\n+$/, ''), room);
      return colorWanted() ? out : stripStyles(out);
    };
    return ready;
  })();
  return loaded;
}

/** `markdown` rendered for a terminal `width` columns wide (plain and wrapped until {@link loadMarkdownRenderer} has loaded). */
export function renderMarkdown(markdown: string, width: number): string {
  if (ready) return ready(markdown, width);
  return plain(sanitizeForTerminal(markdown), roomFor(width));
}

function roomFor(width: number): number {
  return Number.isFinite(width) && width > 0 ? Math.max(20, Math.floor(width)) : 80;
}

/** Headings as Claude Code shows them: bold, no `#`s; the first one underlined too. */
function headingStyles(): Record<string, (text: string) => string> {
  const bold = (text: string) => `\u001b[1m${text}\u001b[22m`;
  return { heading: bold, firstHeading: (text) => `\u001b[1m\u001b[4m${text}\u001b[24m\u001b[22m` };
}

/** Text without markdown rendering, each line wrapped between words. */
function plain(text: string, width: number): string {
  return wrapRendered(text.replace(/\n+$/, ''), width);
}

/**
 * marked-terminal reflows paragraphs but not list items or table-free long lines: every line still
 * wider than `width` is wrapped between words, a list item's rest under its text (`  * ` hangs).
 */
function wrapRendered(text: string, width: number): string {
  return text
    .split('\n')
    .flatMap((line) => {
      const visible = stripStyles(line);
      // A table's rows are drawn to their own width: cut, they would no longer line up.
      if (/^\s*[┌│├└]/.test(visible)) return [line];
      const marker = /^(\s*)(?:[*-] |\d+\. )?/.exec(visible)?.[0] ?? '';
      return wrapStyledLine(line, width, ' '.repeat(marker.length));
    })
    .join('\n');
}
