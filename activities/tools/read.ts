/** Read tool implementation: `cat -n` style numbered lines, streamed so large files stay cheap. */
import { type FileHandle, readFile } from 'node:fs/promises';
import { fileFormatFor } from '../../common/tool-specs';
import { READ_DEFAULT_LIMIT, READ_MAX_LINE_LENGTH, type ReadInput } from '../../common/tools/read';
import { AccessRefusal, resolveToolFile } from './access';
import { type BoundedLine, formatNumberedLine, looksBinary, nonRegularFileKind, readBoundedLines, statIfExists } from './files';
import type { ToolExecutionContext, ToolExecutionResult } from './types';

/**
 * Bytes of one line held in memory (4 per character covers any UTF-8); the rest of a longer
 * line is skipped, so no file can make Read build a string V8 cannot hold.
 */
export const READ_MAX_LINE_BYTES = READ_MAX_LINE_LENGTH * 4;

/** Larger files of a format a tool declares (a notebook) are shown as lines: the format's view holds the whole file. */
export const READ_FORMAT_MAX_BYTES = 32 * 1024 * 1024;

function truncateLine(line: BoundedLine): string {
  if (line.cutAtBytes !== undefined) {
    return `${line.text.slice(0, READ_MAX_LINE_LENGTH)}… [line truncated: ${line.cutAtBytes} bytes]`;
  }
  if (line.text.length <= READ_MAX_LINE_LENGTH) return line.text;
  return `${line.text.slice(0, READ_MAX_LINE_LENGTH)}… [line truncated: ${line.text.length} characters]`;
}

/** Read: numbered lines from `offset` (1-based), at most `limit` (default 2000). */
export async function executeRead(input: ReadInput, context: ToolExecutionContext): Promise<ToolExecutionResult> {
  const { signal } = context;
  signal.throwIfAborted();
  // With access: the real path is checked again here, and read through a descriptor checked to be it (issue 17 §4).
  const file = await resolveToolFile(input.file_path, context, 'read');
  if (file instanceof AccessRefusal) return { isError: true, content: file.message };
  const { guard, filePath } = file;
  const fileStat = await statIfExists(file.target);
  if (fileStat === undefined) {
    return { isError: true, content: `File does not exist: ${filePath}. Current working directory: ${context.cwd}` };
  }
  if (fileStat.isDirectory()) {
    return { isError: true, content: `EISDIR: ${filePath} is a directory, use Bash ls or Glob to list its contents.` };
  }
  const kind = nonRegularFileKind(fileStat);
  if (kind !== undefined) {
    return { isError: true, content: `Cannot read ${filePath}: it is ${kind}, not a regular file.` };
  }
  if (fileStat.size === 0) {
    return { isError: false, content: '<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>' };
  }
  let source: string | FileHandle = filePath;
  if (guard) {
    const opened = await guard.openForRead(file.target);
    if (opened instanceof AccessRefusal) return { isError: true, content: opened.message };
    source = opened;
  }
  try {
    return await readLines(filePath, source, input, signal, fileStat.size);
  } finally {
    if (typeof source !== 'string') await source.close();
  }
}

async function readLines(filePath: string, source: string | FileHandle, input: ReadInput, signal: AbortSignal, size: number): Promise<ToolExecutionResult> {
  if (await looksBinary(source)) {
    return {
      isError: true,
      content: `Cannot read ${filePath}: it appears to be a binary file. Use Bash (e.g. file, xxd, or a format-specific tool) to inspect it.`,
    };
  }
  // A format a tool's spec declares (a notebook: its cells) is shown as the format says, unless the model asked for lines.
  const format = input.offset === undefined && input.limit === undefined && size <= READ_FORMAT_MAX_BYTES ? fileFormatFor(filePath) : undefined;
  if (format) {
    const text = typeof source === 'string' ? await readFile(source, 'utf8') : await source.readFile({ encoding: 'utf8' });
    signal.throwIfAborted();
    const shown = format.show(text);
    if (shown !== undefined) return { isError: false, content: shown };
  }

  const firstLine = Math.max(input.offset ?? 1, 1);
  const limit = input.limit ?? READ_DEFAULT_LIMIT;
  const lastLine = firstLine + limit - 1;
  const output: string[] = [];
  let lineNumber = 0;
  let moreLines = false;
  for await (const line of readBoundedLines(source, READ_MAX_LINE_BYTES, signal)) {
    lineNumber += 1;
    if (lineNumber > lastLine) {
      moreLines = true;
      break;
    }
    if (lineNumber >= firstLine) output.push(formatNumberedLine(lineNumber, truncateLine(line)));
    if (lineNumber % 10_000 === 0) signal.throwIfAborted();
  }
  signal.throwIfAborted();

  if (output.length === 0) {
    return {
      isError: false,
      content: `<system-reminder>Warning: the file exists but is shorter than the provided offset (${firstLine}). The file has ${lineNumber} lines.</system-reminder>`,
    };
  }
  let content = output.join('\n');
  if (moreLines) {
    content += `\n\n<system-reminder>Showing lines ${firstLine}-${lastLine}. The file has more lines; use offset=${lastLine + 1} to continue reading.</system-reminder>`;
  }
  return { isError: false, content };
}
