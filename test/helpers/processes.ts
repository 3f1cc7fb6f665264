/** Finding a test's processes on the host. */
import { readFileSync, readdirSync } from 'node:fs';

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
