/** File helpers shared by the Read, Edit and Grep tools. */
import { open } from 'node:fs/promises';

/** Bytes inspected for NUL when deciding whether a file is binary. */
export const BINARY_SNIFF_BYTES = 8192;

/** Format one line as `cat -n` does: the number right-aligned in 6 columns, then a tab. */
export function formatNumberedLine(lineNumber: number, text: string): string {
  return `${String(lineNumber).padStart(6, ' ')}\t${text}`;
}

/** True when the first bytes of the file contain a NUL byte (what grep and git call binary). */
export async function looksBinary(filePath: string): Promise<boolean> {
  const handle = await open(filePath, 'r');
  try {
    const buffer = Buffer.alloc(BINARY_SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, BINARY_SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead).includes(0);
  } finally {
    await handle.close();
  }
}
