/** Glob tool spec (pure; the workflow bundle imports it). */
import { z } from 'zod';
import { countOf, defineTool } from '../tool-spec';

/** Glob returns at most this many paths. */
export const GLOB_MAX_RESULTS = 100;

export const globInputSchema = z.strictObject({
  pattern: z.string().describe('The glob pattern to match files against'),
  path: z
    .string()
    .optional()
    .describe(
      'The directory to search in. If not specified, the current working directory will be used. IMPORTANT: Omit this field to use the default directory. DO NOT enter "undefined" or "null" - simply omit it for the default behavior. Must be a valid directory path if provided.',
    ),
});

export type GlobInput = z.infer<typeof globInputSchema>;

export const globToolSpec = defineTool({
  name: 'Glob',
  description: `- Fast file pattern matching tool that works with any codebase size
- Supports glob patterns like "**/*.js" or "src/**/*.ts"
- Returns matching file paths (absolute) sorted by modification time, newest first, at most ${GLOB_MAX_RESULTS}
- Globs are ripgrep's (gitignore syntax): \`*\` and \`?\` stay within one directory, \`**\` crosses directories, \`{a,b}\` and \`[a-z]\` work; the pattern is matched from the search directory, so "*.ts" means its top level
- Hidden files and files .gitignore ignores are listed; version-control directories (.git, …) and node_modules are skipped unless the pattern names them
- Use this tool when you need to find files by name patterns
- You can call multiple tools in a single response. It is always better to speculatively perform multiple searches in parallel if they are potentially useful.`,
  inputSchema: globInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  maxResultSizeChars: 20_000,
  fileAccess: { access: 'read', pathField: 'path', target: 'directory', patternField: 'pattern' },
  microCompactable: true,
  localActivity: true,
  summarize: (input) => `Glob ${input.pattern}${input.path === undefined ? '' : ` in ${input.path}`}`,
  describeResult: (_input, content) => {
    if (/^No files found/.test(content)) return 'Found 0 files';
    const truncated = /showing \d+ of (\d+) files/.exec(content);
    const files = content.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('(Results are truncated'));
    return `Found ${countOf(truncated ? Number(truncated[1]) : files.length, 'file')}`;
  },
});
