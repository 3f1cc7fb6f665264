/**
 * The Temporal SDK's log for people (issue 19, items 8 and 14; issue 32, item 4): warnings and
 * errors only (no bundler output), without the warning every activity-only worker prints (the
 * handoff worker has no workflows on purpose), one line each, without colours when stderr is not a
 * terminal. The Rust core's own log (poll errors, shutdown notes) is forwarded to the same logger
 * (`telemetryOptions.logging.forward`) instead of being printed raw by the core, so it has the same
 * one-line shape and the same filter.
 */
import { inspect } from 'node:util';
import { DefaultLogger, type LogEntry, type LogLevel, LogTimestamp, Runtime, type RuntimeOptions } from '@temporalio/worker';

/** Messages that say nothing a person can act on. */
const EXPECTED = [/^No workflows registered, not polling for workflow tasks/];

/** ANSI escape sequences (colours the core's messages may carry). */
const ANSI = /\u001b\[[0-9;]*m/g;

/** Metadata the core attaches to every forwarded line that says nothing to a person. */
const NOISE = new Set<string | symbol>([LogTimestamp, 'spanContexts']);

/** One log line: time, level, message and metadata; colours only on a terminal. */
export function formatLogEntry(entry: Pick<LogEntry, 'level' | 'message' | 'meta' | 'timestampNanos'>, colors: boolean): string {
  const date = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
  const message = (colors ? entry.message : entry.message.replace(ANSI, '')).replace(/\s*\n\s*/g, ' ');
  const meta = Object.fromEntries(Object.entries(entry.meta ?? {}).filter(([key, value]) => !NOISE.has(key) && value !== undefined));
  const details = Object.keys(meta).length === 0 ? '' : ` ${inspect(meta, { colors, breakLength: Infinity, depth: 4 })}`;
  return `${date} [${entry.level}] ${message}${details}`;
}

export function peopleLogger(level: LogLevel = 'WARN', stream: NodeJS.WriteStream = process.stderr): DefaultLogger {
  return new DefaultLogger(level, (entry) => {
    if (EXPECTED.some((pattern) => pattern.test(entry.message))) return;
    stream.write(`${formatLogEntry(entry, Boolean(stream.isTTY))}\n`);
  });
}

/** The runtime options of {@link installPeopleLogger}: the core's log forwarded to the people logger, at `level`. */
export function peopleRuntimeOptions(level: LogLevel = 'WARN', stream: NodeJS.WriteStream = process.stderr): RuntimeOptions {
  return {
    logger: peopleLogger(level, stream),
    telemetryOptions: { logging: { filter: { core: level, other: 'ERROR' }, forward: {} } },
  };
}

/** Installs {@link peopleRuntimeOptions} as the SDK runtime's, unless a runtime exists already (tests). */
export function installPeopleLogger(level: LogLevel = 'WARN'): void {
  try {
    Runtime.install(peopleRuntimeOptions(level));
  } catch {
    /* a runtime is installed already: its logger stays */
  }
}
