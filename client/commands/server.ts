/**
 * `durable-agent server [--postgres]`: a local Temporal server for people.
 *  - default: the CLI's dev server (SQLite in `.durable-agent/temporal.db`, Web UI on :8233) — infra/dev-server.ts;
 *  - `--postgres`: the production-shape stack — the Temporal server on PostgreSQL with SQL visibility, state in
 *    `.durable-agent/postgres-stack/` — infra/postgres-stack.ts (docs/deployment.md).
 * Both serve gRPC on 127.0.0.1:7233 until Ctrl+C.
 */
import { parseArgs } from 'node:util';
import { UsageError } from '../usage-error';

export async function serverCommand(args: string[]): Promise<number> {
  let values: { postgres?: boolean };
  try {
    ({ values } = parseArgs({ args, options: { postgres: { type: 'boolean' } }, allowPositionals: false, strict: true }));
  } catch (error) {
    throw new UsageError(`server: ${(error as Error).message.replace(/\. To specify a positional.*$/, '')}`);
  }
  if (values.postgres) {
    const { runPostgresStackForPeople } = await import('../../infra/postgres-stack');
    await runPostgresStackForPeople();
  } else {
    const { runServerForPeople } = await import('../../infra/dev-server');
    await runServerForPeople();
  }
  return 0;
}
