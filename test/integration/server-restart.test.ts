/**
 * Server restart (issue 12, "Scale and faults"): the Temporal server is killed with SIGKILL —
 * during a model call, and during a Bash command — and started again on the same port and SQLite
 * file. The worker and the client reconnect by themselves; the conversation completes, the
 * answer is in the transcript once, and the command ran once (a counter file proves it).
 *
 * This file runs its own file-backed dev server (the shared test server is in-memory).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type DevServer, getFreePorts, startDevServer } from '../../infra/dev-server';
import { ensureTemporalCli } from '../../infra/temporal-cli';
import { historyQuery } from '../../workflows/definitions';
import { type Harness, createHarness, eventually, expectValidApiOrder } from '../helpers/harness';

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

async function transcriptText(conversationId: string): Promise<string> {
  return JSON.stringify(await harness!.client.workflow.getHandle(conversationId).query(historyQuery));
}

describe('Temporal server killed with SIGKILL and restarted', () => {
  it('during a model call: the conversation completes with the answer once', async () => {
    const answer = 'An answer that streams for a few seconds. '.repeat(4).trim();
    harness = await createHarness(
      { script: [{ content: [{ type: 'text', text: answer }], chunkSize: 4, deltaDelayMs: 80 }, { content: [{ type: 'text', text: answer }] }] },
      { address: server!.address },
    );
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'Hi', config: harness.config(), taskQueue: harness.taskQueue });
    await eventually(async () => harness!.model.requests.length, (count) => count >= 1);

    await killAndRestartServer();

    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', is_error: false, result: answer, terminal_reason: 'completed' });
    // The streaming attempt either completed after the restart or timed out and was retried once.
    expect(harness.model.requests.length).toBeGreaterThanOrEqual(1);
    expect(harness.model.requests.length).toBeLessThanOrEqual(2);
    expect((await transcriptText(started.conversationId)).split(answer).length - 1).toBe(1);
  });

  it('during a Bash command: the command runs once and the conversation completes', async () => {
    harness = await createHarness(
      {
        script: [
          { content: [{ type: 'tool_use', id: 'toolu_counter', name: 'Bash', input: { command: 'echo start >> counter.txt; sleep 4; echo done >> counter.txt' } }] },
          { content: [{ type: 'text', text: 'Counted.' }] },
        ],
      },
      { address: server!.address },
    );
    await harness.startWorker();
    const counter = path.join(harness.workspace, 'counter.txt');
    // A heartbeat timeout longer than the outage: the command's attempt outlives the restart.
    const config = harness.config({ toolHeartbeatTimeoutMs: 20_000 });
    const started = await harness.api.start({ prompt: 'Count', config, taskQueue: harness.taskQueue });
    await eventually(() => readFile(counter, 'utf8').catch(() => ''), (text) => text === 'start\n');

    await killAndRestartServer();

    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', is_error: false, result: 'Counted.', transitions: ['tool_use'] });
    expect(await readFile(counter, 'utf8')).toBe('start\ndone\n');
    expect(harness.model.requests).toHaveLength(2);
    expectValidApiOrder(harness.model.requests[1]);
    const toolResult = harness.model.requests[1].body.messages[2].content[0];
    expect(toolResult).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_counter' });
    expect(toolResult.is_error ?? false).toBe(false);
    expect((await transcriptText(started.conversationId)).split('Counted.').length - 1).toBe(1);
  });
});
