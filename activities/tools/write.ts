/** Write tool implementation: create or overwrite a file, creating parent directories. */
import { mkdir, realpath, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WriteInput } from '../../common/tools/write';
import { AccessGuard, AccessRefusal, writeThroughHandle } from './access';
import { type FileVersion, fileVersion, nonRegularFileKind, textVersion } from './files';
import { JOURNALED_TEXT_MAX_CHARS, type ToolEffect, type ToolExecutionContext, type ToolExecutionResult } from './types';

/** Write: "File created successfully at: PATH" or "The file PATH has been updated successfully." */
export async function executeWrite(input: WriteInput, context: ToolExecutionContext): Promise<ToolExecutionResult> {
  context.signal.throwIfAborted();
  const guard = context.access === undefined ? undefined : await AccessGuard.create(context.access, context.cwd);
  const filePath = guard ? guard.absolutePath(input.file_path, context.cwd) : path.resolve(context.cwd, input.file_path);
  // With access: act on the real path checked just now (issue 17 §4), never on the link.
  const checked = guard ? await guard.checkFile(filePath, 'write') : { real: filePath };
  if (checked instanceof AccessRefusal) return { isError: true, content: checked.message };
  const target = checked.real;
  const existing = await stat(target).catch(() => undefined);
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
  if (context.beginEffect) {
    const written = guard ? target : await realpath(filePath).catch(() => filePath);
    await context.beginEffect(fileEffect(written, existing === undefined ? { exists: false } : await fileVersion(written), input.content, result));
  }
  if (guard) {
    const opened = await guard.openForWrite(target);
    if (opened instanceof AccessRefusal) return { isError: true, content: opened.message };
    await writeThroughHandle(opened.handle, input.content);
  } else {
    await mkdir(path.dirname(filePath), { recursive: true });
    await writeFile(filePath, input.content, 'utf8');
  }
  return result;
}

/** The journal's record of a write about to replace `before` with `text` (issue 24). */
export function fileEffect(written: string, before: FileVersion, text: string, result: ToolExecutionResult): ToolEffect {
  return {
    kind: 'file',
    path: written,
    before,
    after: textVersion(text),
    ...(text.length <= JOURNALED_TEXT_MAX_CHARS && { afterText: text }),
    result,
  };
}

/**
 * Writes `text` to `filePath` as the file tools do: with `context.access`, through a descriptor
 * opened on the checked real path without following a swapped-in link; an error result when refused.
 */
export async function writeFileChecked(filePath: string, text: string, context: ToolExecutionContext): Promise<ToolExecutionResult | undefined> {
  const guard = context.access === undefined ? undefined : await AccessGuard.create(context.access, context.cwd);
  if (!guard) {
    await mkdir(path.dirname(filePath), { recursive: true });
    await writeFile(filePath, text, 'utf8');
    return undefined;
  }
  const checked = await guard.checkFile(filePath, 'write');
  if (checked instanceof AccessRefusal) return { isError: true, content: checked.message };
  const opened = await guard.openForWrite(checked.real);
  if (opened instanceof AccessRefusal) return { isError: true, content: opened.message };
  await writeThroughHandle(opened.handle, text);
  return undefined;
}
