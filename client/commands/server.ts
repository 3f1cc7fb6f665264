/**
 * `durable-agent server [--postgres]`: a local Temporal server for people, until stopped.
 *  - default: the CLI's dev server (SQLite in `.durable-agent/temporal.db`, Web UI on :8233) — infra/dev-server.ts;
 *  - `--postgres`: the production-shape stack — the Temporal server on PostgreSQL with SQL visibility, Web UI on
 *    :8080, state in `.durable-agent/postgres-stack/` — infra/postgres-stack.ts (docs/deployment.md).
 * Both serve gRPC on 127.0.0.1:7233.
 */
import { parse } from '../command-line';

export async function serverCommand(args: string[]): Promise<number> {
  const { values } = parse(args, { postgres: { type: 'boolean' } }, 0, 'server');
  if (values.postgres) {
    const { runPostgresStackForPeople } = await import('../../infra/postgres-stack');
    await runPostgresStackForPeople();
  } else {
    const { runServerForPeople } = await import('../../infra/dev-server');
    await runServerForPeople();
  }
  return 0;
}
