/** Write tool implementation: create or overwrite a file, creating parent directories. */
import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WriteInput } from '../../common/tools/write';
import { AccessGuard, AccessRefusal, writeThroughHandle } from './access';
import { nonRegularFileKind } from './files';
import type { ToolExecutionContext, ToolExecutionResult } from './types';

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
  if (guard) {
    const opened = await guard.openForWrite(target);
    if (opened instanceof AccessRefusal) return { isError: true, content: opened.message };
    await writeThroughHandle(opened.handle, input.content);
  } else {
    await mkdir(path.dirname(filePath), { recursive: true });
    await writeFile(filePath, input.content, 'utf8');
  }
  return existing === undefined
    ? { isError: false, content: `File created successfully at: ${filePath}` }
    : { isError: false, content: `The file ${filePath} has been updated successfully.` };
}
