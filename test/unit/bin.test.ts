/**
 * The installed binary (`bin/durable-agent.js`, the package's `bin`), run as a person runs it: a
 * separate Node process from another directory. Every command it names in its hints must load —
 * `chat`, `worker`, `server` and `codec-server` are imported lazily (issue 19, item 1).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

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

describe('the durable-agent binary', () => {
  it('loads every command: chat, worker, server and codec-server reach their own checks', () => {
    const outcomes = {
      chat: runBin(['chat']),
      worker: runBin(['worker']),
      server: runBin(['server']),
      'codec-server': runBin(['codec-server']),
    };
    for (const [command, { err }] of Object.entries(outcomes)) {
      expect(err, command).not.toMatch(/Cannot find module|ERR_MODULE_NOT_FOUND/);
    }
    expect(outcomes.chat.err).toMatch(/Cannot reach the Temporal server at 127\.0\.0\.1:1/);
    expect(outcomes.chat.code).toBe(1);
    expect(outcomes.worker.err).toMatch(/Cannot reach the Temporal server at 127\.0\.0\.1:1/);
    // server: either a server answers on 7233 already, or the (missing) Temporal CLI is named.
    expect(outcomes.server.out + outcomes.server.err).toMatch(/already answering|TEMPORAL_CLI_PATH is set to/);
    expect(outcomes['codec-server'].err).toMatch(/codec-server needs the encryption keys/);
  });
});
