/**
 * The two server-kill scenarios every Temporal server we run must survive (issue 12 on the dev
 * server, issue 24 on the PostgreSQL stack): the server is killed with SIGKILL during a model call
 * and during a Bash command, then started again on the same database. The worker and the client
 * reconnect by themselves; the answer is in the transcript once and the command ran once (a
 * counter file proves it).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { historyQuery } from '../../workflows/definitions';
import { type Harness, createHarness, eventually, expectValidApiOrder } from './harness';

export interface ServerKillContext {
  /** The server's address. */
  address: string;
  /** kill -9 the server, wait until it is gone, start it again on the same database. */
  killAndRestart(): Promise<void>;
  /** Keeps the harness so the test file's afterEach closes it even when the scenario fails. */
  track(harness: Harness): void;
}

async function transcriptText(harness: Harness, conversationId: string): Promise<string> {
  return JSON.stringify(await harness.client.workflow.getHandle(conversationId).query(historyQuery));
}

/** The server killed while a model answer streams: the conversation completes with the answer once. */
export async function modelCallAcrossServerKill(context: ServerKillContext): Promise<void> {
  const answer = 'An answer that streams for a few seconds. '.repeat(4).trim();
  const harness = await createHarness(
    { script: [{ content: [{ type: 'text', text: answer }], chunkSize: 4, deltaDelayMs: 80 }, { content: [{ type: 'text', text: answer }] }] },
    { address: context.address },
  );
  context.track(harness);
  await harness.startWorker();
  const started = await harness.api.start({ prompt: 'Hi', config: harness.config(), taskQueue: harness.taskQueue });
  await eventually(
    async () => harness.model.requests.length,
    (count) => count >= 1,
  );

  await context.killAndRestart();

  const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
  expect(result).toMatchObject({ subtype: 'success', is_error: false, result: answer, terminal_reason: 'completed' });
  // The streaming attempt either completed after the restart or timed out and was retried once.
  expect(harness.model.requests.length).toBeGreaterThanOrEqual(1);
  expect(harness.model.requests.length).toBeLessThanOrEqual(2);
  expect((await transcriptText(harness, started.conversationId)).split(answer).length - 1).toBe(1);
}

/**
 * The server killed while a Bash command runs: the command runs once and the conversation
 * completes. `heartbeatTimeoutMs` must outlast the outage, so the command's attempt outlives it.
 */
export async function bashCommandAcrossServerKill(context: ServerKillContext, heartbeatTimeoutMs: number): Promise<void> {
  const harness = await createHarness(
    {
      script: [
        {
          content: [
            { type: 'tool_use', id: 'toolu_counter', name: 'Bash', input: { command: 'echo start >> counter.txt; sleep 4; echo done >> counter.txt' } },
          ],
        },
        { content: [{ type: 'text', text: 'Counted.' }] },
      ],
    },
    { address: context.address },
  );
  context.track(harness);
  await harness.startWorker();
  const counter = path.join(harness.workspace, 'counter.txt');
  const config = harness.config({ toolHeartbeatTimeoutMs: heartbeatTimeoutMs });
  const started = await harness.api.start({ prompt: 'Count', config, taskQueue: harness.taskQueue });
  await eventually(
    () => readFile(counter, 'utf8').catch(() => ''),
    (text) => text === 'start\n',
  );

  await context.killAndRestart();

  const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
  expect(result).toMatchObject({ subtype: 'success', is_error: false, result: 'Counted.', transitions: ['tool_use'] });
  expect(await readFile(counter, 'utf8')).toBe('start\ndone\n');
  expect(harness.model.requests).toHaveLength(2);
  expectValidApiOrder(harness.model.requests[1]);
  const toolResult = harness.model.requests[1].body.messages[2].content[0];
  expect(toolResult).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_counter' });
  expect(toolResult.is_error ?? false).toBe(false);
  expect((await transcriptText(harness, started.conversationId)).split('Counted.').length - 1).toBe(1);
}
