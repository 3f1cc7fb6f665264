/**
 * `durable-agent server [--port n] [--ui-port n] [--postgres]`: a local Temporal server for people, until stopped.
 *  - default: the CLI's dev server (SQLite in `.durable-agent/temporal.db`, Web UI on :8233) — infra/dev-server.ts;
 *  - `--postgres`: the production-shape stack — the Temporal server on PostgreSQL with SQL visibility, Web UI on
 *    :8080, state in `.durable-agent/postgres-stack/` — infra/postgres-stack.ts (docs/deployment.md).
 * Both serve gRPC on 127.0.0.1:7233 (the dev server: on --port).
 */
import type { CommandInput } from '../command-line';
import { UsageError } from '../usage-error';

/** A --port / --ui-port value: a TCP port number, else a UsageError. */
function portFrom(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const port = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`${flag} must be a port number (1–65535), got "${text}".`);
  return port;
}

export async function serverCommand({ values }: CommandInput): Promise<number> {
  const port = portFrom('--port', values.port as string | undefined);
  const uiPort = portFrom('--ui-port', values['ui-port'] as string | undefined);
  if (port !== undefined && port === uiPort) throw new UsageError('--port and --ui-port must differ.');
  if (values.postgres) {
    if (port !== undefined || uiPort !== undefined)
      throw new UsageError('--port and --ui-port are for the dev server; the --postgres stack serves 7233 and :8080.');
    const { runPostgresStackForPeople } = await import('../../infra/postgres-stack');
    await runPostgresStackForPeople();
  } else {
    const { runServerForPeople } = await import('../../infra/dev-server');
    await runServerForPeople({ ...(port !== undefined && { port }), ...(uiPort !== undefined && { uiPort }) });
  }
  return 0;
}
