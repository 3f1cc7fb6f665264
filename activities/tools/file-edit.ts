/**
 * The activity side of every tool whose spec edits one file by a pure function of its text
 * (`ToolSpec.editFile`, e.g. NotebookEdit): the path judged where the tool acts (AccessGuard),
 * the file read through the checked descriptor, the journal told before the write (issue 24, so a
 * retry finishes or skips it), the new text written without following a swapped-in link.
 */
import { randomUUID } from 'node:crypto';
import type { ToolSpec } from '../../common/tool-spec';
import { AccessRefusal, readToolFile, resolveToolFile } from './access';
import { EDIT_MAX_FILE_BYTES } from './edit';
import { type FileVersion, looksBinary, nonRegularFileKind, statIfExists, textVersion } from './files';
import type { ToolExecutionContext, ToolExecutionResult } from './types';
import { writeJournaled } from './write';

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
  // With access: read and write the real path checked just now (issue 17 §4), never through the link.
  const file = await resolveToolFile(input[field], context, 'write');
  if (file instanceof AccessRefusal) return { isError: true, content: file.message };
  const { filePath, target } = file;
  const existing = await statIfExists(target);
  let before: FileVersion = { exists: false };
  let text: string | undefined;
  if (existing !== undefined) {
    const kind = nonRegularFileKind(existing);
    if (kind !== undefined) return { isError: true, content: `Cannot edit ${filePath}: it is ${kind}, not a regular file.` };
    if (existing.size > EDIT_MAX_FILE_BYTES) {
      return { isError: true, content: `Cannot edit ${filePath}: it is ${existing.size} bytes, over ${spec.name}'s limit of ${EDIT_MAX_FILE_BYTES} bytes.` };
    }
    if (await looksBinary(target)) return { isError: true, content: `Cannot edit ${filePath}: it appears to be a binary file.` };
    const bytes = await readToolFile(file);
    if (bytes instanceof AccessRefusal) return { isError: true, content: bytes.message };
    text = bytes.toString('utf8');
    // The journal compares bytes, which the decoded text may not give back (invalid UTF-8).
    before = textVersion(bytes);
  }
  const outcome = edit.call(spec, input, text, { filePath, newId });
  if ('error' in outcome) return { isError: true, content: outcome.error };
  context.signal.throwIfAborted();
  return writeJournaled(file, context, outcome.text, { isError: false, content: outcome.result }, () => before);
}
