/**
 * Server restart (issue 12, "Scale and faults"): the Temporal server is killed with SIGKILL —
 * during a model call, and during a Bash command — and started again on the same port and SQLite
 * file. The worker and the client reconnect by themselves; the conversation completes, the
 * answer is in the transcript once, and the command ran once (a counter file proves it).
 *
 * This file runs its own file-backed dev server (the shared test server is in-memory).
 */
import { afterAll, afterEach, beforeAll, describe, it } from 'vitest';
import type { Harness } from '../helpers/harness';
import { type RestartableServer, startRestartableServer } from '../helpers/restartable-server';
import { bashCommandAcrossServerKill, modelCallAcrossServerKill } from '../helpers/server-kill';

let server: RestartableServer | undefined;
let harness: Harness | undefined;

beforeAll(async () => {
  server = await startRestartableServer('restart');
}, 60_000);

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

afterAll(async () => {
  await server?.stop();
});

/** This file's server for the shared scenarios (test/helpers/server-kill.ts). */
function context() {
  return { address: server!.address, killAndRestart: () => server!.killAndRestart(), track: (created: Harness) => (harness = created) };
}

describe('Temporal server killed with SIGKILL and restarted', () => {
  it('during a model call: the conversation completes with the answer once', () => modelCallAcrossServerKill(context()));

  it('during a Bash command: the command runs once and the conversation completes', () => bashCommandAcrossServerKill(context(), 20_000));
});
