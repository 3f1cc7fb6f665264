/** File helpers shared by the Read, Write, Edit and Grep tools. */
import { createHash } from 'node:crypto';
import { constants, createReadStream, type Stats } from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';

/** Bytes inspected for NUL when deciding whether a file is binary. */
export const BINARY_SNIFF_BYTES = 8192;

/** Format one line as `cat -n` does: the number right-aligned in 6 columns, then a tab. */
export function formatNumberedLine(lineNumber: number, text: string): string {
  return `${String(lineNumber).padStart(6, ' ')}\t${text}`;
}

/** True when the first bytes of the file contain a NUL byte (what grep and git call binary). An open handle stays open. */
export async function looksBinary(file: string | FileHandle): Promise<boolean> {
  const handle = typeof file === 'string' ? await open(file, 'r') : file;
  try {
    const buffer = Buffer.alloc(BINARY_SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, BINARY_SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead).includes(0);
  } finally {
    if (typeof file === 'string') await handle.close();
  }
}

/**
 * Why a path that exists is not a regular file, or undefined when it is one. Opening a FIFO
 * blocks in the OS until a writer or reader appears, where neither abort nor a timeout can reach
 * it; a device or socket is never what a file tool means, so the tools refuse them up front.
 */
export function nonRegularFileKind(fileStat: Stats): string | undefined {
  if (fileStat.isFile()) return undefined;
  if (fileStat.isDirectory()) return 'a directory';
  if (fileStat.isFIFO()) return 'a named pipe (FIFO)';
  if (fileStat.isSocket()) return 'a socket';
  if (fileStat.isCharacterDevice()) return 'a character device';
  if (fileStat.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/** The path's stat, or undefined when nothing is there (ENOENT, or ENOTDIR: a file where a directory was expected); other errors throw. */
export async function statIfExists(file: string): Promise<Stats | undefined> {
  return stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
    throw error;
  });
}

/** One line from readBoundedLines; `text` is cut when the line was longer than the cap. */
export interface BoundedLine {
  text: string;
  /** Set when the line was cut: its full length in bytes (its characters were never all held in memory). */
  cutAtBytes?: number;
}

/**
 * The file's lines (split on `\n`, a trailing `\r` dropped), reading it in chunks and keeping at
 * most `maxLineBytes` of any one line in memory: a 1 GB file with no newline is a 1 GB line, and
 * building it as one string threw an uncaught `RangeError: Invalid string length` that killed the
 * worker (issue 12, defect 1).
 */
export async function* readBoundedLines(file: string | FileHandle, maxLineBytes: number, signal?: AbortSignal): AsyncGenerator<BoundedLine> {
  // An open handle (a checked descriptor, issue 17 §4) is read from the start and left open for its owner.
  const stream =
    typeof file === 'string'
      ? createReadStream(file, { highWaterMark: 1024 * 1024 })
      : createReadStream('', { fd: file, start: 0, autoClose: false, highWaterMark: 1024 * 1024 });
  let held: Buffer[] = [];
  let heldBytes = 0;
  let lineBytes = 0;
  const take = (chunk: Buffer) => {
    lineBytes += chunk.length;
    if (heldBytes >= maxLineBytes) return;
    const part = chunk.subarray(0, maxLineBytes - heldBytes);
    held.push(part);
    heldBytes += part.length;
  };
  const finish = (): BoundedLine => {
    const text = Buffer.concat(held).toString('utf8');
    const line: BoundedLine = lineBytes > heldBytes ? { text, cutAtBytes: lineBytes } : { text: text.endsWith('\r') ? text.slice(0, -1) : text };
    held = [];
    heldBytes = 0;
    lineBytes = 0;
    return line;
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      signal?.throwIfAborted();
      let start = 0;
      for (let newline = chunk.indexOf(10, start); newline !== -1; newline = chunk.indexOf(10, start)) {
        take(chunk.subarray(start, newline));
        yield finish();
        start = newline + 1;
      }
      if (start < chunk.length) take(chunk.subarray(start));
    }
    if (lineBytes > 0) yield finish();
  } finally {
    stream.destroy();
  }
}

/**
 * What a file held, by content: what the tool journal records before a write and compares after
 * a crash (issue 24). `other`: something that is not a regular file (a link, a FIFO, a directory).
 */
export type FileVersion = { exists: false } | { exists: true; sha256: string; bytes: number } | { exists: true; other: true };

/** The version of `text` once written as UTF-8. */
export function textVersion(text: string | Buffer): FileVersion {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  return { exists: true, sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length };
}

/** The file's current version, opened without following a link (a link is `other`) or blocking on a FIFO. */
export async function fileVersion(file: string): Promise<FileVersion> {
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { exists: false };
    if (code === 'ELOOP') return { exists: true, other: true };
    throw error;
  }
  try {
    if (!(await handle.stat()).isFile()) return { exists: true, other: true };
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of createReadStream('', { fd: handle, start: 0, autoClose: false }) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      bytes += chunk.length;
    }
    return { exists: true, sha256: hash.digest('hex'), bytes };
  } finally {
    await handle.close();
  }
}

/** Whether two versions are the same content (or both absent); `other` matches nothing. */
export function sameVersion(a: FileVersion, b: FileVersion): boolean {
  if (!a.exists || !b.exists) return a.exists === b.exists;
  if ('other' in a || 'other' in b) return false;
  return a.sha256 === b.sha256 && a.bytes === b.bytes;
}
