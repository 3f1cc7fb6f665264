/**
 * The Temporal SDK's log for people (issue 19, items 8 and 14): warnings and errors only (no
 * bundler output), without the warning every activity-only worker prints (the handoff worker
 * has no workflows on purpose), and without colours when stderr is not a terminal.
 */
import { inspect } from 'node:util';
import { DefaultLogger, type LogEntry, type LogLevel, Runtime } from '@temporalio/worker';

/** Messages that say nothing a person can act on. */
const EXPECTED = [/^No workflows registered, not polling for workflow tasks/];

/** ANSI escape sequences (colours the core's messages may carry). */
const ANSI = /\u001b\[[0-9;]*m/g;

/** One log line: time, level, message and metadata; colours only on a terminal. */
export function formatLogEntry(entry: Pick<LogEntry, 'level' | 'message' | 'meta' | 'timestampNanos'>, colors: boolean): string {
  const date = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
  const message = colors ? entry.message : entry.message.replace(ANSI, '');
  const meta = entry.meta === undefined || Object.keys(entry.meta).length === 0 ? '' : ` ${inspect(entry.meta, { colors, breakLength: Infinity, depth: 4 })}`;
  return `${date} [${entry.level}] ${message}${meta}`;
}

export function peopleLogger(level: LogLevel = 'WARN', stream: NodeJS.WriteStream = process.stderr): DefaultLogger {
  return new DefaultLogger(level, (entry) => {
    if (EXPECTED.some((pattern) => pattern.test(entry.message))) return;
    stream.write(`${formatLogEntry(entry, Boolean(stream.isTTY))}\n`);
  });
}

/** Installs {@link peopleLogger} as the SDK runtime's logger, unless a runtime exists already (tests). */
export function installPeopleLogger(level: LogLevel = 'WARN'): void {
  try {
    Runtime.install({ logger: peopleLogger(level) });
  } catch {
    /* a runtime is installed already: its logger stays */
  }
}
