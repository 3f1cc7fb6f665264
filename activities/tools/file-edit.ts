/**
 * The activity side of every tool whose spec edits one file by a pure function of its text
 * (`ToolSpec.editFile`, e.g. NotebookEdit): the path judged where the tool acts (AccessGuard),
 * the file read through the checked descriptor, the journal told before the write (issue 24, so a
 * retry finishes or skips it), the new text written without following a swapped-in link.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ToolSpec } from '../../common/tool-spec';
import { AccessGuard, AccessRefusal, writeThroughHandle } from './access';
import { EDIT_MAX_FILE_BYTES } from './edit';
import { type FileVersion, looksBinary, nonRegularFileKind, textVersion } from './files';
import type { ToolExecutionContext, ToolExecutionResult } from './types';
import { fileEffect } from './write';

/** A fresh id for what an edit creates (a notebook cell): 12 letters and digits. */
function newId(): string {
  return randomUUID().replace(/-/g, '').slice(0, 12);
}

/** Runs `spec.editFile` on the file its `fileAccess` field names; failures are error results the model can act on. */
export async function executeFileEdit(spec: ToolSpec, input: Record<string, unknown>, context: ToolExecutionContext): Promise<ToolExecutionResult> {
  context.signal.throwIfAborted();
  const edit = spec.editFile;
  const field = spec.fileAccess?.pathField;
  if (edit === undefined || field === undefined || typeof input[field] !== 'string') {
    return { isError: true, content: `${spec.name} cannot run: its spec names no file to edit.` };
  }
  const literal = input[field];
  const guard = context.access === undefined ? undefined : await AccessGuard.create(context.access, context.cwd);
  const filePath = guard ? guard.absolutePath(literal, context.cwd) : path.resolve(context.cwd, literal);
  // With access: read and write the real path checked just now (issue 17 §4), never through the link.
  const checked = guard ? await guard.checkFile(filePath, 'write') : { real: filePath };
  if (checked instanceof AccessRefusal) return { isError: true, content: checked.message };
  const target = checked.real;
  const existing = await stat(target).catch((error: NodeJS.ErrnoException) => error);
  let before: FileVersion = { exists: false };
  let text: string | undefined;
  if (existing instanceof Error) {
    if (existing.code !== 'ENOENT' && existing.code !== 'ENOTDIR') throw existing;
  } else {
    const kind = nonRegularFileKind(existing);
    if (kind !== undefined) return { isError: true, content: `Cannot edit ${filePath}: it is ${kind}, not a regular file.` };
    if (existing.size > EDIT_MAX_FILE_BYTES) {
      return { isError: true, content: `Cannot edit ${filePath}: it is ${existing.size} bytes, over ${spec.name}'s limit of ${EDIT_MAX_FILE_BYTES} bytes.` };
    }
    if (await looksBinary(target)) return { isError: true, content: `Cannot edit ${filePath}: it appears to be a binary file.` };
    let bytes: Buffer;
    if (guard) {
      const opened = await guard.openForRead(target);
      if (opened instanceof AccessRefusal) return { isError: true, content: opened.message };
      try {
        bytes = await opened.readFile();
      } finally {
        await opened.close();
      }
    } else {
      bytes = await readFile(target);
    }
    text = bytes.toString('utf8');
    // The journal compares bytes, which the decoded text may not give back (invalid UTF-8).
    before = textVersion(bytes);
  }
  const outcome = edit.call(spec, input, text, { filePath, newId });
  if ('error' in outcome) return { isError: true, content: outcome.error };
  context.signal.throwIfAborted();
  const result: ToolExecutionResult = { isError: false, content: outcome.result };
  if (context.beginEffect) {
    const written = guard ? target : await realpath(filePath).catch(() => filePath);
    await context.beginEffect(fileEffect(written, before, outcome.text, result));
  }
  if (!guard) {
    await mkdir(path.dirname(filePath), { recursive: true });
    await writeFile(filePath, outcome.text, 'utf8');
    return result;
  }
  const opened = await guard.openForWrite(target);
  if (opened instanceof AccessRefusal) return { isError: true, content: opened.message };
  await writeThroughHandle(opened.handle, outcome.text);
  return result;
}
