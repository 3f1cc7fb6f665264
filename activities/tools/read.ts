/** Read tool implementation: `cat -n` style numbered lines, streamed so large files stay cheap. */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { READ_DEFAULT_LIMIT, READ_MAX_LINE_LENGTH, type ReadInput } from '../../common/tools/read';
import { formatNumberedLine, looksBinary } from './files';
import type { ToolExecutionContext, ToolExecutionResult } from './types';

function truncateLine(line: string): string {
  if (line.length <= READ_MAX_LINE_LENGTH) return line;
  return `${line.slice(0, READ_MAX_LINE_LENGTH)}… [line truncated: ${line.length} characters]`;
}

/** Read: numbered lines from `offset` (1-based), at most `limit` (default 2000). */
export async function executeRead(input: ReadInput, context: ToolExecutionContext): Promise<ToolExecutionResult> {
  const { signal } = context;
  signal.throwIfAborted();
  const filePath = path.resolve(context.cwd, input.file_path);
  const fileStat = await stat(filePath).catch((error: NodeJS.ErrnoException) => error);
  if (fileStat instanceof Error) {
    if (fileStat.code === 'ENOENT' || fileStat.code === 'ENOTDIR') {
      return { isError: true, content: `File does not exist: ${filePath}. Current working directory: ${context.cwd}` };
    }
    throw fileStat;
  }
  if (fileStat.isDirectory()) {
    return {
      isError: true,
      content: `EISDIR: ${filePath} is a directory, use Bash ls or Glob to list its contents.`,
    };
  }
  if (fileStat.size === 0) {
    return {
      isError: false,
      content: '<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>',
    };
  }
  if (await looksBinary(filePath)) {
    return {
      isError: true,
      content: `Cannot read ${filePath}: it appears to be a binary file. Use Bash (e.g. file, xxd, or a format-specific tool) to inspect it.`,
    };
  }

  const firstLine = Math.max(input.offset ?? 1, 1);
  const limit = input.limit ?? READ_DEFAULT_LIMIT;
  const lastLine = firstLine + limit - 1;
  const output: string[] = [];
  let lineNumber = 0;
  let moreLines = false;
  const stream = createReadStream(filePath, { encoding: 'utf8' });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      lineNumber += 1;
      if (lineNumber > lastLine) {
        moreLines = true;
        break;
      }
      if (lineNumber >= firstLine) output.push(formatNumberedLine(lineNumber, truncateLine(line)));
      if (lineNumber % 10_000 === 0) signal.throwIfAborted();
    }
  } finally {
    lines.close();
    stream.destroy();
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
