/** The part of marked-terminal 7.3 (no types of its own) that client/render/markdown.ts uses. */
declare module 'marked-terminal' {
  import type { MarkedExtension } from 'marked';
  export function markedTerminal(options?: Record<string, unknown>, highlightOptions?: Record<string, unknown>): MarkedExtension;
}
