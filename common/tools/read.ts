/** Read tool spec (pure; the workflow bundle imports it). */
import { z } from 'zod';
import { countOf, defineTool } from '../tool-spec';

/** Lines returned when the model gives no `limit`. */
export const READ_DEFAULT_LIMIT = 2000;
/** Longer lines are cut so one minified line cannot flood the context. */
export const READ_MAX_LINE_LENGTH = 2000;

export const readInputSchema = z.strictObject({
  file_path: z.string().describe('The path to the file to read (absolute, or relative to the working directory)'),
  offset: z.number().int().min(0).optional().describe('The line number to start reading from (1-based). Only provide if the file is too large to read at once'),
  limit: z.number().int().positive().optional().describe('The number of lines to read. Only provide if the file is too large to read at once'),
});

export type ReadInput = z.infer<typeof readInputSchema>;

export const readToolSpec = defineTool({
  name: 'Read',
  description: `Reads a file from the local filesystem. You can access any file directly by using this tool.
Assume this tool is able to read all files on the machine. If the user provides a path to a file assume that path is valid. It is okay to read a file that does not exist; an error will be returned.

Usage:
- The file_path parameter should be an absolute path; a relative path is resolved against the working directory
- By default, it reads up to ${READ_DEFAULT_LIMIT} lines starting from the beginning of the file
- You can optionally specify a line offset and limit (especially handy for long files), but it's recommended to read the whole file by not providing these parameters
- Any lines longer than ${READ_MAX_LINE_LENGTH} characters will be truncated
- Results are returned using cat -n format, with line numbers starting at 1
- This tool can only read files, not directories. To list a directory, use the Bash tool with ls, or the Glob tool
- Binary files cannot be read with this tool
- You can call multiple tools in a single response. It is always better to speculatively read multiple potentially useful files in parallel
- If you read a file that exists but has empty contents you will receive a system reminder warning in place of file contents`,
  inputSchema: readInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  maxResultSizeChars: 100_000,
  fileAccess: { access: 'read', pathField: 'file_path', target: 'file' },
  microCompactable: true,
  localActivity: true,
  summarize: (input) => `Read ${input.file_path}`,
  describeResult: (_input, content) => {
    const lines = content === '' ? [] : content.split('\n');
    if (lines.length === 0) return 'Read 0 lines (the file is empty or the range is past its end)';
    const cells = lines.filter((line) => /^<cell id="/.test(line)).length;
    if (cells > 0) return `Read ${countOf(cells, 'cell')}`;
    return `Read ${countOf(lines.filter((line) => /^\s*\d+\t/.test(line)).length || lines.length, 'line')}`;
  },
});
