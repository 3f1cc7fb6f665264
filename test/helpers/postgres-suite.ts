/**
 * A PostgreSQL stack (infra/postgres-stack.ts: Temporal server 1.31.0 on PostgreSQL) for one describe
 * block: started in its beforeAll (the first run on a machine builds the server, hence the long
 * timeout), stopped and its directory removed in its afterAll. `unavailable` says why it cannot be
 * built here (no PostgreSQL, or no Go and no cached server build), for `describe.skipIf`.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type PostgresStack, postgresUnavailable, startPostgresStack } from '../../infra/postgres-stack';
import { serverBinariesUnavailable } from '../../infra/temporal-server';

export const postgresStackUnavailable = postgresUnavailable() ?? serverBinariesUnavailable();

/** Registers the stack's start and stop in the enclosing describe; `address()` once it runs. */
export function postgresStackForSuite(prefix: string): { address(): string } {
  let stateDir: string | undefined;
  let stack: PostgresStack | undefined;
  beforeAll(async () => {
    stateDir = await mkdtemp(path.join(os.tmpdir(), `durable-agent-pg-${prefix}-`));
    // PostgreSQL runs as the postgres user when we are root: it must reach its data directory.
    await chmod(stateDir, 0o755);
    stack = await startPostgresStack({ stateDir, noFsync: true, log: process.env.DURABLE_AGENT_STACK_LOG ? undefined : () => undefined });
  }, 45 * 60_000);
  afterAll(async () => {
    await stack?.stop();
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  }, 60_000);
  return {
    address() {
      if (!stack) throw new Error('the PostgreSQL stack has not started');
      return stack.address;
    },
  };
}
