/** Grep tool spec (pure; the workflow bundle imports it). Parameters as Claude Code's Grep takes them. */
import { z } from 'zod';
import { countOf, defineTool } from '../tool-spec';

/** Output modes, as Claude Code names them. */
export const GREP_OUTPUT_MODES = ['content', 'files_with_matches', 'count'] as const;
export type GrepOutputMode = (typeof GREP_OUTPUT_MODES)[number];

/** Entries (lines, files, counts) shown when head_limit is not given; `head_limit: 0` shows all. */
export const GREP_DEFAULT_HEAD_LIMIT = 250;

const contextLines = (what: string) =>
  z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe(
      `Number of lines to show ${what} each match (rg ${what === 'before' ? '-B' : what === 'after' ? '-A' : '-C'}). Requires output_mode: "content", ignored otherwise.`,
    );

export const grepInputSchema = z.strictObject({
  pattern: z.string().describe('The regular expression pattern to search for in file contents'),
  path: z.string().optional().describe('File or directory to search in (rg PATH). Defaults to the current working directory.'),
  glob: z.string().optional().describe('Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}") - maps to rg --glob'),
  type: z
    .string()
    .optional()
    .describe('File type to search (rg --type). Common types: js, py, rust, go, java, etc. More efficient than glob for standard file types.'),
  output_mode: z
    .enum(GREP_OUTPUT_MODES)
    .optional()
    .describe(
      'Output mode: "content" shows matching lines (supports -A/-B/-C context, -n line numbers, head_limit), "files_with_matches" shows file paths (supports head_limit), "count" shows match counts (supports head_limit). Defaults to "files_with_matches".',
    ),
  '-B': contextLines('before'),
  '-A': contextLines('after'),
  '-C': contextLines('before and after'),
  '-n': z.boolean().optional().describe('Show line numbers in output (rg -n). Requires output_mode: "content", ignored otherwise. Defaults to true.'),
  '-i': z.boolean().optional().describe('Case insensitive search (rg -i)'),
  head_limit: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe(
      `Limit output to first N lines/entries, equivalent to "| head -N". Works across all output modes. Defaults to ${GREP_DEFAULT_HEAD_LIMIT}; 0 means no limit.`,
    ),
  offset: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('Skip first N lines/entries before applying head_limit, equivalent to "| tail -n +N | head -N". Works across all output modes. Defaults to 0.'),
  multiline: z
    .boolean()
    .optional()
    .describe('Enable multiline mode where . matches newlines and patterns can span lines (rg -U --multiline-dotall). Default: false.'),
});

export type GrepInput = z.infer<typeof grepInputSchema>;

export const grepToolSpec = defineTool({
  name: 'Grep',
  description: `A powerful search tool built on ripgrep

Usage:
- ALWAYS use Grep for search tasks. NEVER invoke \`grep\` or \`rg\` as a Bash command. The Grep tool has been optimized for correct permissions and access.
- Supports full regex syntax (e.g., "log.*Error", "function\\s+\\w+"): Rust's regex flavour (linear time; no look-around or backreferences). A pattern that needs look-around or backreferences runs on PCRE2 instead, with a 5-second time limit.
- Filter files with glob parameter (e.g., "*.js", "**/*.tsx") or type parameter (e.g., "js", "py", "rust")
- Output modes: "content" shows matching lines, "files_with_matches" shows only file paths (default, newest first), "count" shows match counts
- Searches hidden files; skips files ignored by .gitignore, binary files, version-control directories (.git, …) and node_modules unless the path or glob names it
- Use Agent tool for open-ended searches requiring multiple rounds
- Pattern syntax: Uses ripgrep (not grep) - literal braces need escaping (use \`interface\\{\\}\` to find \`interface{}\` in Go code)
- Multiline matching: By default patterns match within single lines only. For cross-line patterns like \`struct \\{[\\s\\S]*?field\`, use \`multiline: true\``,
  inputSchema: grepInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  maxResultSizeChars: 20_000,
  fileAccess: { access: 'read', pathField: 'path', target: 'directory' },
  microCompactable: true,
  localActivity: true,
  summarize: (input) => `Grep ${input.pattern}${input.path === undefined ? '' : ` in ${input.path}`}`,
  describeResult: (input, content) => {
    if (/^No (matches|files) found/.test(content)) return input.output_mode === 'content' ? 'Found 0 lines' : 'Found 0 files';
    const files = /^Found (\d+) files?/.exec(content);
    if (files) return `Found ${countOf(Number(files[1]), 'file')}`;
    const occurrences = /Found (\d+) total occurrences? across (\d+) files?/.exec(content);
    if (occurrences) return `Found ${countOf(Number(occurrences[1]), 'match', 'matches')} in ${countOf(Number(occurrences[2]), 'file')}`;
    const lines = content === '' ? [] : content.split('\n');
    return `Found ${countOf(lines.filter((line) => line !== '--' && !/^\[(more lines follow|results truncated)/.test(line)).length, 'line')}`;
  },
});
