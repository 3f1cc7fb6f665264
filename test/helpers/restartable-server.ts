/**
 * A file-backed Temporal dev server of a test file's own, which the test can SIGKILL and start
 * again on the same port and SQLite file (the shared test server is in-memory and must not die).
 * Used by the server-restart tests: the model call and Bash command (issue 12), a wakeup, a
 * background command and a conversation's background command (issue 21).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type DevServer, getFreePorts, startDevServer } from '../../infra/dev-server';
import { ensureTemporalCli } from '../../infra/temporal-cli';

export interface RestartableServer {
  /** host:port, the same before and after a restart. */
  readonly address: string;
  /**
   * kill -9 the server, wait for it to be gone, stay down `downMs` (e.g. longer than a heartbeat
   * timeout's share), and start it again on the same port and file.
   */
  killAndRestart(options?: { downMs?: number }): Promise<void>;
  /** Stop it and remove its database. */
  stop(): Promise<void>;
}

const quiet = (): void => {};

/** Starts the server in a fresh temporary directory named after `prefix`. */
export async function startRestartableServer(prefix: string): Promise<RestartableServer> {
  const directory = await mkdtemp(path.join(os.tmpdir(), `durable-agent-${prefix}-`));
  const dbFilename = path.join(directory, 'temporal.db');
  const [port] = await getFreePorts(1);
  const cliPath = (await ensureTemporalCli({ log: quiet })).path;
  const start = () => startDevServer({ dbFilename, port: port!, headless: true, cliPath, log: quiet });
  let server: DevServer | undefined = await start();
  const address = server.address;
  return {
    address,
    async killAndRestart({ downMs = 0 } = {}) {
      const old = server!;
      const exited = new Promise((resolve) => old.process.once('exit', resolve));
      old.process.kill('SIGKILL');
      await exited;
      server = undefined;
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      server = await start();
      if (server.process.pid === old.process.pid) throw new Error('the restarted server has the killed one’s pid');
    },
    async stop() {
      await server?.stop();
      server = undefined;
      await rm(directory, { recursive: true, force: true });
    },
  };
}
