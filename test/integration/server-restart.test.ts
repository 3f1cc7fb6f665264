/**
 * Server restart (issue 12, "Scale and faults"): the Temporal server is killed with SIGKILL —
 * during a model call, and during a Bash command — and started again on the same port and SQLite
 * file. The worker and the client reconnect by themselves; the conversation completes, the
 * answer is in the transcript once, and the command ran once (a counter file proves it).
 *
 * This file runs its own file-backed dev server (the shared test server is in-memory).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type DevServer, getFreePorts, startDevServer } from '../../infra/dev-server';
import { ensureTemporalCli } from '../../infra/temporal-cli';
import type { Harness } from '../helpers/harness';
import { bashCommandAcrossServerKill, modelCallAcrossServerKill } from '../helpers/server-kill';

let directory: string;
let dbFilename: string;
let port: number;
let cliPath: string;
let server: DevServer | undefined;
let harness: Harness | undefined;

const quiet = (): void => {};

async function startServer(): Promise<DevServer> {
  return startDevServer({ dbFilename, port, headless: true, cliPath, log: quiet });
}

/** kill -9 the server, wait for it to be gone, start it again on the same port and file. */
async function killAndRestartServer(): Promise<void> {
  const old = server!;
  const exited = new Promise((resolve) => old.process.once('exit', resolve));
  old.process.kill('SIGKILL');
  await exited;
  server = await startServer();
  expect(server.process.pid).not.toBe(old.process.pid);
}

beforeAll(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-restart-'));
  dbFilename = path.join(directory, 'temporal.db');
  [port] = await getFreePorts(1);
  cliPath = (await ensureTemporalCli({ log: quiet })).path;
  server = await startServer();
}, 60_000);

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

afterAll(async () => {
  await server?.stop();
  await rm(directory, { recursive: true, force: true });
});

/** This file's server for the shared scenarios (test/helpers/server-kill.ts). */
function context() {
  return { address: server!.address, killAndRestart: killAndRestartServer, track: (created: Harness) => (harness = created) };
}

describe('Temporal server killed with SIGKILL and restarted', () => {
  it('during a model call: the conversation completes with the answer once', () => modelCallAcrossServerKill(context()));

  it('during a Bash command: the command runs once and the conversation completes', () => bashCommandAcrossServerKill(context(), 20_000));
});
