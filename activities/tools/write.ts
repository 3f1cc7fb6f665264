/** Write tool implementation: create or overwrite a file, creating parent directories. */
import { realpath, stat } from 'node:fs/promises';
import type { WriteInput } from '../../common/tools/write';
import { AccessRefusal, type ToolFile, resolveToolFile, writeToolFile } from './access';
import { type FileVersion, fileVersion, nonRegularFileKind, textVersion } from './files';
import { JOURNALED_TEXT_MAX_CHARS, type ToolExecutionContext, type ToolExecutionResult } from './types';

/** Write: "File created successfully at: PATH" or "The file PATH has been updated successfully." */
export async function executeWrite(input: WriteInput, context: ToolExecutionContext): Promise<ToolExecutionResult> {
  context.signal.throwIfAborted();
  const file = await resolveToolFile(input.file_path, context, 'write');
  if (file instanceof AccessRefusal) return { isError: true, content: file.message };
  const { filePath } = file;
  const existing = await stat(file.target).catch(() => undefined);
  if (existing?.isDirectory()) {
    return { isError: true, content: `EISDIR: ${filePath} is a directory; give the path of a file to write.` };
  }
  // Opening a FIFO for writing blocks in the OS until a reader appears, beyond abort's reach.
  const kind = existing === undefined ? undefined : nonRegularFileKind(existing);
  if (kind !== undefined) {
    return { isError: true, content: `Cannot write ${filePath}: it is ${kind}, not a regular file.` };
  }
  const result: ToolExecutionResult =
    existing === undefined
      ? { isError: false, content: `File created successfully at: ${filePath}` }
      : { isError: false, content: `The file ${filePath} has been updated successfully.` };
  return writeJournaled(file, context, input.content, result, (written) => (existing === undefined ? { exists: false } : fileVersion(written)));
}

/**
 * Writes `text` as a file tool does (writeToolFile) and answers `result`, or the refusal. The
 * journal hears of it first (issue 24): what the file held (`before`, of the path written) and
 * what it is about to hold.
 */
export async function writeJournaled(
  file: ToolFile,
  context: ToolExecutionContext,
  text: string,
  result: ToolExecutionResult,
  before: (written: string) => FileVersion | Promise<FileVersion>,
): Promise<ToolExecutionResult> {
  if (context.beginEffect) {
    const written = file.guard ? file.target : await realpath(file.filePath).catch(() => file.filePath);
    await context.beginEffect({
      kind: 'file',
      path: written,
      before: await before(written),
      after: textVersion(text),
      ...(text.length <= JOURNALED_TEXT_MAX_CHARS && { afterText: text }),
      result,
    });
  }
  const refused = await writeToolFile(file, text);
  return refused ? { isError: true, content: refused.message } : result;
}

/**
 * Writes `text` to `filePath` as the file tools do: with `context.access`, through a descriptor
 * opened on the checked real path without following a swapped-in link; an error result when refused.
 */
export async function writeFileChecked(filePath: string, text: string, context: ToolExecutionContext): Promise<ToolExecutionResult | undefined> {
  const file = await resolveToolFile(filePath, context, 'write');
  const refused = file instanceof AccessRefusal ? file : await writeToolFile(file, text);
  return refused && { isError: true, content: refused.message };
}
