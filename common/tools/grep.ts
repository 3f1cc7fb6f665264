/** Grep tool spec (pure; the workflow bundle imports it). */
import { z } from 'zod';
import { defineTool } from '../tool-spec';

/** Output modes, as Claude Code names them. */
export const GREP_OUTPUT_MODES = ['content', 'files_with_matches', 'count'] as const;
export type GrepOutputMode = (typeof GREP_OUTPUT_MODES)[number];

export const grepInputSchema = z.strictObject({
  pattern: z.string().describe('The regular expression pattern to search for in file contents'),
  path: z
    .string()
    .optional()
    .describe('File or directory to search in. Defaults to the current working directory.'),
  glob: z
    .string()
    .optional()
    .describe('Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}", "src/**/*.ts")'),
  output_mode: z
    .enum(GREP_OUTPUT_MODES)
    .optional()
    .describe(
      'Output mode: "content" shows matching lines, "files_with_matches" shows file paths (default), "count" shows match counts per file',
    ),
  '-i': z.boolean().optional().describe('Case insensitive search'),
  '-n': z.boolean().optional().describe('Show line numbers in output. Requires output_mode: "content"'),
  head_limit: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Limit output to the first N lines / entries, like "| head -N"'),
});

export type GrepInput = z.infer<typeof grepInputSchema>;

export const grepToolSpec = defineTool({
  name: 'Grep',
  description: `A powerful search tool for file contents.

Usage:
- ALWAYS use Grep for search tasks. NEVER invoke \`grep\` or \`rg\` as a Bash command.
- Supports regular expression syntax (JavaScript flavour, e.g. "log.*Error", "function\\s+\\w+")
- Filter files with the glob parameter (e.g. "*.js", "**/*.tsx")
- Output modes: "content" shows matching lines (path:line:text with -n), "files_with_matches" shows only file paths (default), "count" shows match counts
- Binary files, .git and node_modules are skipped
- Patterns match within a single line; literal braces need escaping (use \`interface\\{\\}\` to find \`interface{}\` in Go code)`,
  inputSchema: grepInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  maxResultSizeChars: 20_000,
  summarize: (input) => `Grep ${input.pattern}${input.path === undefined ? '' : ` in ${input.path}`}`,
});
