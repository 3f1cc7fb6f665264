/**
 * Runs the CLI in-process (its `main` with captured output) for CLI tests, and keeps each test's
 * process.env changes to itself.
 */
import { afterEach, beforeEach } from 'vitest';
import { main } from '../../client/cli';

export interface Captured {
  code: number;
  out: string;
  err: string;
}

/** `durable-agent <argv...>`: exit code and everything printed. */
export async function cli(...argv: string[]): Promise<Captured> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (text) => (out += `${text}\n`), err: (text) => (err += `${text}\n`) });
  return { code, out, err };
}

/** `durable-agent <argv...>` against a test's server and task queue (with isolateEnvironment() in the file). */
export function cliAgainst(target: { address: string; taskQueue: string }, ...argv: string[]): Promise<Captured> {
  process.env.TEMPORAL_ADDRESS = target.address;
  process.env.DURABLE_AGENT_TASK_QUEUE = target.taskQueue;
  return cli(...argv);
}

/** Restores process.env after every test of the file (the CLI reads TEMPORAL_ADDRESS and friends). */
export function isolateEnvironment(): void {
  const saved = { ...process.env };
  // Restored in place: a replaced `process.env` is a plain object whose changes no longer reach the
  // process's real environment (os.homedir() would still read the old HOME in later test files).
  const restore = () => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  };
  beforeEach(restore);
  afterEach(restore);
}
