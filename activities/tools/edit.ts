/** Edit tool implementation: exact string replacement, unique unless replace_all. */
import type { EditInput } from '../../common/tools/edit';
import type { ToolExecutionContext, ToolExecutionResult } from './types';
import { AccessRefusal, readToolFile, resolveToolFile } from './access';
import { type FileVersion, formatNumberedLine, looksBinary, nonRegularFileKind, statIfExists, textVersion } from './files';
import { writeJournaled } from './write';

/** Larger files are refused: Edit holds the file and its edited copy in memory as strings. */
export const EDIT_MAX_FILE_BYTES = 64 * 1024 * 1024;

/** Lines of context shown on each side of the edit in the confirmation snippet. */
const SNIPPET_CONTEXT_LINES = 4;

function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let index = haystack.indexOf(needle); index !== -1; index = haystack.indexOf(needle, index + needle.length)) {
    count += 1;
  }
  return count;
}

function snippet(content: string, changeStart: number, changeLength: number): string {
  const lines = content.split('\n');
  const firstChangedLine = content.slice(0, changeStart).split('\n').length; // 1-based
  const lastChangedLine = firstChangedLine + content.slice(changeStart, changeStart + changeLength).split('\n').length - 1;
  const from = Math.max(1, firstChangedLine - SNIPPET_CONTEXT_LINES);
  const to = Math.min(lines.length, lastChangedLine + SNIPPET_CONTEXT_LINES);
  const shown: string[] = [];
  for (let line = from; line <= to; line += 1) shown.push(formatNumberedLine(line, lines[line - 1]));
  return shown.join('\n');
}

/** Edit: replace old_string with new_string; failures come back as actionable is_error results. */
export async function executeEdit(input: EditInput, context: ToolExecutionContext): Promise<ToolExecutionResult> {
  context.signal.throwIfAborted();
  if (input.old_string === input.new_string) {
    return { isError: true, content: 'No changes to make: old_string and new_string are exactly the same.' };
  }
  // With access: read and write the real path checked just now (issue 17 §4), never through the link.
  const file = await resolveToolFile(input.file_path, context, 'write');
  if (file instanceof AccessRefusal) return { isError: true, content: file.message };
  const { filePath, target } = file;
  const write = (before: FileVersion, text: string, result: ToolExecutionResult) => writeJournaled(file, context, text, result, () => before);
  const existing = await statIfExists(target);
  if (existing === undefined) {
    if (input.old_string !== '') {
      return {
        isError: true,
        content: `File does not exist: ${filePath}. Current working directory: ${context.cwd}. To create a new file, use Write (or Edit with an empty old_string).`,
      };
    }
    // Claude Code behaviour: an empty old_string on a missing file creates it.
    return write({ exists: false }, input.new_string, { isError: false, content: `File created successfully at: ${filePath}` });
  }
  if (existing.isDirectory()) {
    return { isError: true, content: `EISDIR: ${filePath} is a directory, not a file.` };
  }
  const kind = nonRegularFileKind(existing);
  if (kind !== undefined) {
    return { isError: true, content: `Cannot edit ${filePath}: it is ${kind}, not a regular file.` };
  }
  if (existing.size > EDIT_MAX_FILE_BYTES) {
    return {
      isError: true,
      content: `Cannot edit ${filePath}: it is ${existing.size} bytes, over Edit's limit of ${EDIT_MAX_FILE_BYTES} bytes. Use Bash (e.g. sed) to change a file this large.`,
    };
  }

  if (await looksBinary(target)) {
    return { isError: true, content: `Cannot edit ${filePath}: it appears to be a binary file.` };
  }
  // The text an edit starts from comes from the checked file too, not through a link swapped in since.
  const originalBytes = await readToolFile(file);
  if (originalBytes instanceof AccessRefusal) return { isError: true, content: originalBytes.message };
  const original = originalBytes.toString('utf8');
  // The journal compares bytes, which the decoded text may not give back (invalid UTF-8).
  const before = context.beginEffect ? textVersion(originalBytes) : { exists: false as const };
  if (input.old_string === '') {
    if (original.trim() !== '') {
      return {
        isError: true,
        content: `Cannot create new file - file already exists: ${filePath}. Use a non-empty old_string to edit it, or Write to replace it.`,
      };
    }
    return write(before, input.new_string, { isError: false, content: `The file ${filePath} has been updated successfully.` });
  }

  let oldString = input.old_string;
  let newString = input.new_string;
  let occurrences = countOccurrences(original, oldString);
  if (occurrences === 0 && original.includes('\r\n') && oldString.includes('\n') && !oldString.includes('\r\n')) {
    // The model saw LF lines through Read; the file uses CRLF.
    oldString = oldString.replace(/\n/g, '\r\n');
    newString = newString.replace(/\r?\n/g, '\r\n');
    occurrences = countOccurrences(original, oldString);
  }
  if (occurrences === 0) {
    return {
      isError: true,
      content: `String to replace not found in ${filePath}. old_string must match the file exactly, including whitespace and indentation; Read the file again and copy the text without the line-number prefix.\nString: ${input.old_string}`,
    };
  }
  if (occurrences > 1 && input.replace_all !== true) {
    return {
      isError: true,
      content: `Found ${occurrences} matches of the string to replace in ${filePath}, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: ${input.old_string}`,
    };
  }

  // split/join and slicing, not String.replace: `$&` and friends in new_string must stay literal.
  const firstIndex = original.indexOf(oldString);
  const updated =
    input.replace_all === true
      ? original.split(oldString).join(newString)
      : original.slice(0, firstIndex) + newString + original.slice(firstIndex + oldString.length);
  context.signal.throwIfAborted();
  const result: ToolExecutionResult =
    input.replace_all === true && occurrences > 1
      ? {
          isError: false,
          content: `The file ${filePath} has been updated. All ${occurrences} occurrences of old_string were successfully replaced with new_string.`,
        }
      : {
          isError: false,
          content: `The file ${filePath} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${snippet(updated.replace(/\r\n/g, '\n'), firstIndexInLf(original, firstIndex), newString.replace(/\r\n/g, '\n').length)}`,
        };
  return write(before, updated, result);
}

/** Offset of `index` in `text` once CRLF pairs are collapsed to LF (the snippet is shown in LF). */
function firstIndexInLf(text: string, index: number): number {
  return index - countOccurrences(text.slice(0, index), '\r\n');
}
