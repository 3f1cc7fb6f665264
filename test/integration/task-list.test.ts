/**
 * Issue 21 §6: the task list on the real dev server — TaskCreate / TaskUpdate / TaskList /
 * TaskGet answered in the workflow (no activity, no permission prompt in default mode), carried
 * across continue-as-new, shown in `status` and the UI's current details.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ResultMessage } from '../../common/result';
import { cli, isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness, eventually, runToResult } from '../helpers/harness';
import { promptResponder } from '../../testing/prompt-responder';

isolateEnvironment();
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function say(conversationId: string, prompt: string): Promise<ResultMessage> {
  const uuid = await harness!.api.send(conversationId, prompt);
  return harness!.api.waitForResult(conversationId, uuid);
}

describe('the task list', () => {
  it('is kept in the workflow across continue-as-new and shown in status, without a permission prompt', async () => {
    harness = await createHarness({
      respond: promptResponder([
        [
          'PLAN',
          [
            { name: 'TaskCreate', input: { subject: 'Run the tests', description: 'npm test passes', activeForm: 'Running the tests' } },
            { name: 'TaskCreate', input: { subject: 'Fix the build', description: 'tsc is clean' } },
          ],
        ],
        ['START', [{ name: 'TaskUpdate', input: { taskId: '#1', status: 'in_progress', addBlocks: ['2'] } }]],
        [
          'LIST',
          [
            { name: 'TaskList', input: {} },
            { name: 'TaskGet', input: { taskId: '2' } },
          ],
        ],
        [
          'MISSING',
          [
            { name: 'TaskUpdate', input: { taskId: '9', status: 'completed' } },
            { name: 'TaskCreate', input: { subject: '' } },
          ],
        ],
      ]),
    });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();
    // Default mode: a tool that asks would wait for a person (none answers here).
    const { conversationId, result } = await runToResult(harness, 'PLAN the work', { continueAsNewAfterEvents: 10, permissions: { mode: 'default' } });
    expect(result.result).toContain('Task #1 created successfully: Run the tests');
    expect(result.result).toContain('Task #2 created successfully: Fix the build');

    expect((await say(conversationId, 'START task one')).result).toContain('Updated task #1 status, blocks');
    const status = await eventually(
      () => harness!.api.status(conversationId),
      (value) => value.continuedAsNewCount >= 1 && value.phase === 'awaiting_input',
    );
    expect(status.tasks).toEqual([
      expect.objectContaining({ id: '1', subject: 'Run the tests', status: 'in_progress', blocks: ['2'] }),
      expect.objectContaining({ id: '2', subject: 'Fix the build', status: 'pending', blockedBy: ['1'] }),
    ]);

    // After continue-as-new the new run answers from the carried list.
    const listed = await say(conversationId, 'LIST them');
    expect(listed.result).toContain('#1 [in_progress] Run the tests');
    expect(listed.result).toContain('#2 [pending] Fix the build [blocked by #1]');
    expect(listed.result).toContain('Task #2: Fix the build\nStatus: pending');

    // `durable-agent status` prints them.
    const printed = await cli('status', conversationId);
    expect(printed.out).toMatch(/tasks +#1 \[in_progress\] Run the tests\n +#2 \[pending\] Fix the build/);

    // /tasks answers from the list without a model call (the chat, send and ask print it).
    const requestsBefore = harness.model.requests.length;
    expect((await say(conversationId, '/tasks')).result).toBe('Tasks:\n  #1 [in_progress] Run the tests\n  #2 [pending] Fix the build [blocked by #1]');
    expect(harness.model.requests).toHaveLength(requestsBefore);

    // Failures are data: an unknown id and invalid input are error results the model reads.
    const missing = await say(conversationId, 'MISSING task');
    expect(missing.result).toContain('[error] Task #9 not found');
    expect(missing.result).toContain('[error] Invalid TaskCreate input');

    // The UI's current details show the list; no tool asked for permission, no runTool ran them.
    const handle = harness.client.workflow.getHandle(conversationId);
    const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    expect(metadata.currentDetails).toMatch(/\*\*Tasks:\*\* .*1 \\\[in\\_progress\\\] Run the tests · .*2 \\\[pending\\\] Fix the build/);
    const after = await harness.api.status(conversationId);
    expect(after.pendingPermissions ?? []).toEqual([]);
    expect(after.continuedAsNewCount).toBeGreaterThanOrEqual(1);
    const history = await handle.fetchHistory();
    const scheduled = (history.events ?? []).filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool');
    expect(scheduled).toEqual([]);
  }, 120_000);
});
