/**
 * Issue 21 "Must show": a conversation's background command finishes once across a Temporal server
 * restart. The server is SIGKILLed while the command runs (the conversation idle, waiting on it)
 * and started again on the same port and SQLite file: the supervisor, or its retry, reports the end,
 * the model gets exactly one <task-notification>, and the command ran once. Its own file-backed
 * dev server (the shared one is in-memory).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { type Harness, createHarness, eventually } from '../helpers/harness';
import { liveSleepers } from '../helpers/processes';
import { type RestartableServer, startRestartableServer } from '../helpers/restartable-server';

let server: RestartableServer | undefined;
let harness: Harness | undefined;

const lastUserText = (request: RecordedRequest) => JSON.stringify(request.body.messages[request.body.messages.length - 1]);

beforeAll(async () => {
  server = await startRestartableServer('background-conversation-restart');
}, 60_000);

afterAll(async () => {
  await harness?.close();
  await server?.stop();
});

describe('a background command in a conversation across a Temporal server restart', () => {
  it('notifies once after the server was SIGKILLed and restarted mid-command; the command ran once', async () => {
    let step = 0;
    harness = await createHarness(
      {
        respond: (request) => {
          if (lastUserText(request).includes('<task-notification>')) return { content: [{ type: 'text', text: 'Noted.' }] };
          if (step++ === 0) {
            return {
              content: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo started >> runs.txt; sleep 9.75; echo done', run_in_background: true } }],
            };
          }
          return { content: [{ type: 'text', text: 'Started.' }] };
        },
      },
      { address: server!.address },
    );
    await harness.startWorker();
    const { conversationId, inputUuid } = await harness.api.start({
      prompt: 'Run it in the background.',
      config: harness.config(),
      taskQueue: harness.taskQueue,
    });
    await harness.api.waitForResult(conversationId, inputUuid!);
    await eventually(
      async () => liveSleepers('9.75').length,
      (count) => count === 1,
      30_000,
    );

    await server!.killAndRestart({ downMs: 2_000 });
    expect(liveSleepers('9.75')).toHaveLength(1);

    const idle = await eventually(
      () => harness!.api.status(conversationId),
      (status) => status.queryCount >= 2 && status.phase === 'awaiting_input' && status.queuedInputs === 0,
      120_000,
    );
    expect(idle.backgroundTasks?.[0]).toMatchObject({ status: 'completed', exitCode: 0 });
    const notified = harness.model.requests.filter((request) => lastUserText(request).includes('<task-notification>'));
    expect(notified).toHaveLength(1);
    expect(lastUserText(notified[0])).toContain('<status>completed</status>');
    expect(await readFile(path.join(harness.workspace, 'runs.txt'), 'utf8')).toBe('started\n');
  }, 180_000);
});
