/**
 * Issue 21 §4: a wakeup survives a Temporal server restart — the server is killed with SIGKILL
 * while the wakeup waits and started again on the same SQLite file; the timer is in its
 * database, so it still fires once and re-invokes the model. Its own file-backed dev server (the
 * shared test server is in-memory), as server-restart.test.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { lastUserMessage, promptResponder } from '../../testing/prompt-responder';
import { type Harness, createHarness, eventually, runToResult } from '../helpers/harness';
import { type RestartableServer, startRestartableServer } from '../helpers/restartable-server';

let server: RestartableServer | undefined;
let harness: Harness | undefined;

beforeAll(async () => {
  server = await startRestartableServer('wakeup-restart');
}, 60_000);

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

afterAll(async () => {
  await server?.stop();
});

describe('ScheduleWakeup across a Temporal server restart', () => {
  it('fires once after the server was killed (SIGKILL) and started again on the same database', async () => {
    harness = await createHarness(
      {
        respond: promptResponder([
          ['WAKE', 'Woke after the restart.'],
          ['PACE', [{ name: 'ScheduleWakeup', input: { delaySeconds: 12, reason: 'after restart', prompt: 'WAKE again' } }]],
        ]),
      },
      { address: server!.address },
    );
    await harness.startWorker();
    const { conversationId } = await runToResult(harness, 'PACE yourself', { wakeupMinimumSeconds: 2 });
    const [pending] = (await harness.api.status(conversationId)).wakeups!;

    await server!.killAndRestart();
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
