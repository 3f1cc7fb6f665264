/**
 * Issue 21 §4: a wakeup survives a Temporal server restart — the server is killed with SIGKILL
 * while the wakeup waits and started again on the same SQLite file; the timer is in its
 * database, so it still fires once and re-invokes the model. Its own file-backed dev server (the
 * shared test server is in-memory), as server-restart.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DevServer, getFreePorts, startDevServer } from '../../infra/dev-server';
import { ensureTemporalCli } from '../../infra/temporal-cli';
import { lastUserMessage, promptResponder } from '../../testing/prompt-responder';
import { type Harness, createHarness, eventually, runToResult } from '../helpers/harness';

let directory: string;
let dbFilename: string;
let port: number;
let cliPath: string;
let server: DevServer | undefined;
let harness: Harness | undefined;
const quiet = (): void => {};
const startServer = () => startDevServer({ dbFilename, port, headless: true, cliPath, log: quiet });

beforeAll(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-wakeup-restart-'));
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

describe('ScheduleWakeup across a Temporal server restart', () => {
  it('fires once after the server was killed (SIGKILL) and started again on the same database', async () => {
    harness = await createHarness(
      { respond: promptResponder([['WAKE', 'Woke after the restart.'], ['PACE', [{ name: 'ScheduleWakeup', input: { delaySeconds: 12, reason: 'after restart', prompt: 'WAKE again' } }]]]) },
      { address: server!.address },
    );
    await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'PACE yourself', { wakeupMinimumSeconds: 2 });
    const [pending] = (await harness.api.status(conversationId)).wakeups!;

    const old = server!;
    const exited = new Promise((resolve) => old.process.once('exit', resolve));
    old.process.kill('SIGKILL');
    await exited;
    server = await startServer();
    // The server was down and is back before the wakeup was due: the fire comes from its database.
    expect(Date.now()).toBeLessThan(Date.parse(pending.dueAt));

    const status = await eventually(
      () => harness!.api.status(conversationId).catch(() => undefined),
      (value) => value?.lastResult?.result === 'Woke after the restart.',
      120_000,
    );
    expect(status!.wakeups ?? []).toEqual([]);
    expect(harness.model.requests.filter((request) => lastUserMessage(request).text.includes('WAKE again'))).toHaveLength(1);
    await harness.api.end(conversationId);
  }, 180_000);
});
