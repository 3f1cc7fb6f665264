/** Write tool spec (pure; the workflow bundle imports it). */
import { z } from 'zod';
import { defineTool } from '../tool-spec';

export const writeInputSchema = z.strictObject({
  file_path: z.string().describe('The path to the file to write (absolute, or relative to the working directory)'),
  content: z.string().describe('The content to write to the file'),
});

export type WriteInput = z.infer<typeof writeInputSchema>;

export const writeToolSpec = defineTool({
  name: 'Write',
  description: `Writes a file to the local filesystem.

Usage:
- This tool will overwrite the existing file if there is one at the provided path
- If this is an existing file, you MUST use the Read tool first to read the file's contents
- Parent directories are created as needed
- ALWAYS prefer editing existing files in the codebase. NEVER write new files unless explicitly required
- NEVER proactively create documentation files (*.md) or README files. Only create documentation files if explicitly requested by the User`,
  inputSchema: writeInputSchema,
  isReadOnly: () => false,
  isConcurrencySafe: () => false,
  maxResultSizeChars: 10_000,
  fileAccess: { access: 'write', pathField: 'file_path', target: 'file' },
  microCompactable: true,
  changePreview: (input) => ({ kind: 'write', content: input.content }),
  summarize: (input) => `Write ${input.file_path}`,
});
