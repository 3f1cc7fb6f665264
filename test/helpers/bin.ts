/**
 * Runs the installed binary (`bin/durable-agent.js`) as a person would: a separate process, from another directory. It runs
 * the compiled CLI in dist/, which the tests' global setup compiled when it was missing or stale (test/build-setup.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const BIN = path.resolve(__dirname, '..', '..', 'bin', 'durable-agent.js');
const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-bin-'));

/** `durable-agent <args>` in a fresh process, against a Temporal address where nothing answers. */
export function runBin(args: string[], env: Record<string, string> = {}) {
  const { TEMPORAL_ADDRESS: _a, DURABLE_AGENT_ENCRYPTION_KEY: _k, DURABLE_AGENT_ENCRYPTION_KEY_FILE: _f, ...rest } = process.env;
  const run = spawnSync(process.execPath, [BIN, ...args], {
    cwd: elsewhere,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...rest, TEMPORAL_ADDRESS: '127.0.0.1:1', TEMPORAL_CLI_PATH: path.join(elsewhere, 'no-temporal'), ...env },
  });
  return { code: run.status, out: run.stdout, err: run.stderr };
}
