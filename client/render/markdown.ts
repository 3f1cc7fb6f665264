/**
 * PLACEHOLDER (helper "chat"'s branch only): helper "render" writes the real module with this
 * signature; on merge, take theirs. A minimal renderer so chat can be tested meanwhile.
 */
const BOLD = '\u001b[1m';
const RESET = '\u001b[0m';

export function renderMarkdown(markdown: string, width: number): string {
  const out: string[] = [];
  let fence = false;
  for (const line of markdown.split('\n')) {
    if (/^```/.test(line)) {
      fence = !fence;
      continue;
    }
    if (fence) {
      out.push(`\u001b[33m  ${line}${RESET}`);
      continue;
    }
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    const text = (heading ? `${BOLD}${heading[1]}${RESET}` : line)
      .replace(/\*\*([^*]+)\*\*/g, `${BOLD}$1${RESET}`)
      .replace(/`([^`]+)`/g, `\u001b[36m$1${RESET}`);
    out.push(text);
  }
  void width;
  return out.join('\n');
}

/** Render's module loads marked here (ESM-only); the placeholder has nothing to load. */
export function loadMarkdownRenderer(): Promise<(markdown: string, width: number) => string> {
  return Promise.resolve(renderMarkdown);
}
