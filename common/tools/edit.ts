/** Edit tool spec (pure; the workflow bundle imports it). */
import { z } from 'zod';
import { defineTool } from '../tool-spec';

export const editInputSchema = z.strictObject({
  file_path: z.string().describe('The path to the file to modify (absolute, or relative to the working directory)'),
  old_string: z.string().describe('The text to replace'),
  new_string: z.string().describe('The text to replace it with (must be different from old_string)'),
  replace_all: z.boolean().optional().describe('Replace all occurrences of old_string (default false)'),
});

export type EditInput = z.infer<typeof editInputSchema>;

export const editToolSpec = defineTool({
  name: 'Edit',
  description: `Performs exact string replacements in files.

Usage:
- You must use your Read tool at least once in the conversation before editing. 
- When editing text from Read tool output, ensure you preserve the exact indentation (tabs/spaces) as it appears AFTER the line number prefix. The line number prefix format is: spaces + line number + tab. Everything after that tab is the actual file content to match. Never include any part of the line number prefix in the old_string or new_string.
- ALWAYS prefer editing existing files in the codebase. NEVER write new files unless explicitly required.
- The edit will FAIL if old_string is not found in the file.
- The edit will FAIL if old_string is not unique in the file. Either provide a larger string with more surrounding context to make it unique or use replace_all to change every instance of old_string.
- The edit will FAIL if old_string and new_string are identical.
- Use replace_all for replacing and renaming strings across the file. This parameter is useful if you want to rename a variable for instance.
- An empty old_string on a file that does not exist creates the file with new_string as its content.`,
  inputSchema: editInputSchema,
  isReadOnly: () => false,
  isConcurrencySafe: () => false,
  maxResultSizeChars: 10_000,
  fileAccess: { access: 'write', pathField: 'file_path', target: 'file' },
  microCompactable: true,
  changePreview: (input) => ({ kind: 'edit', oldText: input.old_string, newText: input.new_string, replaceAll: input.replace_all === true }),
  summarize: (input) => `Edit ${input.file_path}`,
});
