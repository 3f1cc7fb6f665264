/** Finding a test's processes on the host. */
import { constants, openSync, readFileSync, readdirSync } from 'node:fs';
import { eventually } from './harness';

/**
 * Host pids of live processes whose command line is exactly `sleep <seconds>` (a unique duration
 * names the test's command). Not `$$`: Bash runs in a sandbox with its own PID namespace.
 */
export function liveSleepers(seconds: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8') === `sleep\0${seconds}\0` && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z')
        found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * The write end of a FIFO once a process has it open for reading (the tool's command runs), polled
 * without blocking: a blocking open would stop this process's event loop — and with it the test's
 * own worker, which is what starts the reader — so a reader that is not there yet hung the run.
 */
export async function openFifoWriter(fifo: string, timeoutMs = 60_000): Promise<number> {
  const fd = await eventually(
    async () => {
      try {
        return openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENXIO') return undefined; // no reader yet
        throw error;
      }
    },
    (value) => value !== undefined,
    timeoutMs,
  );
  return fd!;
}
