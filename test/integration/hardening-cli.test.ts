/**
 * Issue 12 regression tests for the CLI: `send` without a worker keeps the message (7); clear
 * errors for bad --max-turns, --cwd and --id; control characters never reach the terminal (10).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cli, isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness } from '../helpers/harness';

isolateEnvironment();
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('defect 7: send without a worker', () => {
  it('signals at once and the input is in the workflow history', async () => {
    harness = await createHarness({ script: [] });
    process.env.TEMPORAL_ADDRESS = harness.address;
    // No worker polls this queue.
    const { conversationId } = await harness.api.start({ config: harness.config(), taskQueue: harness.taskQueue });
    const sent = await cli('send', conversationId, 'are', 'you', 'there?');
    expect(sent).toMatchObject({ code: 0, err: '' });
    expect(sent.out).toContain(`sent to ${conversationId}`);
    const history = await harness.client.workflow.getHandle(conversationId).fetchHistory();
    const signals = (history.events ?? []).filter((event) => event.workflowExecutionSignaledEventAttributes);
    expect(signals.map((event) => event.workflowExecutionSignaledEventAttributes!.signalName)).toEqual(['userInput']);
    await harness.client.workflow.getHandle(conversationId).terminate('test done');
  }, 20_000);
});

describe('item 10: CLI input errors', () => {
  it('rejects --max-turns that is not plain decimal digits', async () => {
    process.env.TEMPORAL_ADDRESS = '127.0.0.1:1';
    for (const value of ['0x10', '1e3', ' 5', '0', '2.5', '99999999999999999999']) {
      const result = await cli('ask', '--max-turns', value, 'hi');
      expect(result.code).toBe(2);
      expect(result.err).toContain(`--max-turns must be a positive whole number in decimal digits, got "${value}"`);
    }
  });

  it('rejects a --cwd that does not exist, before connecting', async () => {
    process.env.TEMPORAL_ADDRESS = '127.0.0.1:1'; // would be "Cannot reach" if it connected first
    const result = await cli('start', '--cwd', '/no/such/workspace', 'hi');
    expect(result.code).toBe(2);
    expect(result.err).toContain('--cwd /no/such/workspace does not exist');
  });

  it('rejects an empty or over-long --id clearly', async () => {
    process.env.TEMPORAL_ADDRESS = '127.0.0.1:1';
    const empty = await cli('start', '--id', '', 'hi');
    expect(empty).toMatchObject({ code: 2, err: expect.stringContaining('--id: the conversation id is empty') });
    const long = await cli('start', '--id', 'x'.repeat(1001), 'hi');
    expect(long).toMatchObject({ code: 2, err: expect.stringContaining('--id: the conversation id is 1001 bytes long; the limit is 1000') });
  });

  it('says a duplicate --id is already running', async () => {
    harness = await createHarness({ script: [] });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue; // no worker: the first stays running
    const first = await cli('start', '--cwd', harness.workspace, '--id', 'hardening-duplicate', 'one');
    expect(first.code).toBe(0);
    const second = await cli('start', '--cwd', harness.workspace, '--id', 'hardening-duplicate', 'two');
    expect(second.code).toBe(1);
    expect(second.err).toContain('A conversation with id "hardening-duplicate" is already running');
    await harness.client.workflow.getHandle('hardening-duplicate').terminate('test done');
  }, 20_000);
});

describe('item 10: --follow output is safe for the terminal', () => {
  it('strips escape sequences and control characters from model text, keeping newlines and tabs', async () => {
    const hostile = 'Hi\u001b]0;pwned\u0007 \u001b[31mred\u001b[0m\rover\u0008written\nnext\tline\u009b2J';
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: hostile }] }] });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();
    const started = await cli('start', '--cwd', harness.workspace, '--id', 'hardening-escapes', '--follow', 'say', 'hi');
    expect(started.code).toBe(0);
    expect(started.out).toContain('Hi redoverwritten\nnext\tline2J');
    expect(started.out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  }, 60_000);
});
