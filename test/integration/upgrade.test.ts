/**
 * A conversation started on older workflow code finishes on today's: the workflow bundle of the
 * last commit before model calls went by reference (built from git at test time) runs the first
 * query and starts the second; that worker stops while its model call is in flight; a worker with
 * today's code replays the old history, retries the old-style model call (inline messages), and
 * the conversation goes on with calls by reference.
 */
import { type WorkflowBundleWithSourceMap, DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { defaultPayloadConverter } from '@temporalio/common';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CallModelInput } from '../../common/activity-types';
import { type Harness, REPO_ROOT, createHarness, eventually, expectValidApiOrder, localActivityType } from '../helpers/harness';

/** The last commit whose model calls carried the transcript inline. */
const UPGRADE_FROM_COMMIT = 'a4f6bc5';

let oldBundle: WorkflowBundleWithSourceMap;
let oldTree: string;
let harness: Harness | undefined;

beforeAll(async () => {
  oldTree = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-old-workflows-'));
  const tar = path.join(oldTree, 'old.tar');
  try {
    execFileSync('git', ['archive', '--format=tar', '-o', tar, UPGRADE_FROM_COMMIT, 'workflows', 'common'], { cwd: REPO_ROOT });
  } catch (error) {
    throw new Error(`This test builds the workflow code of commit ${UPGRADE_FROM_COMMIT} from git history, which this checkout lacks: ${String(error)}`);
  }
  execFileSync('tar', ['-xf', tar, '-C', oldTree]);
  await symlink(path.join(REPO_ROOT, 'node_modules'), path.join(oldTree, 'node_modules'));
  oldBundle = await bundleWorkflowCode({ workflowsPath: path.join(oldTree, 'workflows'), logger: new DefaultLogger('WARN') });
});
afterAll(async () => {
  await rm(oldTree, { recursive: true, force: true });
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** The text of the last user turn of a request. */
function lastUserText(body: { messages: Array<{ role: string; content: unknown }> }): string {
  return JSON.stringify(body.messages[body.messages.length - 1]?.content ?? '');
}

describe('upgrade', () => {
  it(`finishes on today's code a conversation that commit ${UPGRADE_FROM_COMMIT} started and left mid-query`, async () => {
    let secondAsked = 0;
    harness = await createHarness({
      respond: (request) => {
        const last = lastUserText(request.body);
        if (last.includes('First question')) return { content: [{ type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } }] };
        if (last.includes('the notes')) return { content: [{ type: 'text', text: 'First answer.' }] };
        if (last.includes('Second question')) {
          secondAsked++;
          // The first attempt hangs until its worker goes away; the retry answers.
          return secondAsked === 1
            ? { content: [{ type: 'text', text: 'never finished' }], delayMs: 30_000 }
            : { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo upgraded' } }] };
        }
        if (last.includes('upgraded')) return { content: [{ type: 'text', text: 'Second answer.' }] };
        if (last.includes('Third question')) return { content: [{ type: 'text', text: 'Third answer.' }] };
        return undefined;
      },
    });
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'the notes\n');

    const old = await harness.startWorker({ workflowBundle: { code: oldBundle.code } });
    const started = await harness.api.start({ prompt: 'First question', config: harness.config(), taskQueue: harness.taskQueue });
    expect(await harness.api.waitForResult(started.conversationId, started.inputUuid!)).toMatchObject({ result: 'First answer.' });
    const second = await harness.api.send(started.conversationId, 'Second question');
    await eventually(async () => secondAsked, (count) => count === 1);

    // The old worker stops mid-call; today's worker takes the conversation over.
    await harness.stopWorker(old);
    await harness.startWorker();
    expect(await harness.api.waitForResult(started.conversationId, second)).toMatchObject({ subtype: 'success', result: 'Second answer.' });
    const third = await harness.api.send(started.conversationId, 'Third question');
    expect(await harness.api.waitForResult(started.conversationId, third)).toMatchObject({ subtype: 'success', result: 'Third answer.' });

    // Old-style calls carried the messages; today's code started its calls as local activities
    // (by reference, their inputs not recorded: one marker each).
    const history = await harness.client.workflow.getHandle(started.conversationId).fetchHistory();
    const inputs = (history.events ?? [])
      .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
      .map((event) => defaultPayloadConverter.fromPayload(event.activityTaskScheduledEventAttributes!.input!.payloads![0]) as CallModelInput);
    expect(inputs.map((input) => (input.messages ? 'inline' : 'reference'))).toEqual(['inline', 'inline', 'inline']);
    const localCalls = (history.events ?? []).filter((event) => localActivityType(event) === 'callModelLocal');
    expect(localCalls).toHaveLength(2);
    // The retried old-style call was answered by today's worker; every request was valid.
    const lastRequest = harness.model.requests.at(-1)!;
    expect(JSON.stringify(lastRequest.body.messages)).toContain('the notes');
    expect(JSON.stringify(lastRequest.body.messages)).toContain('upgraded');
    for (const request of harness.model.requests) expectValidApiOrder(request);
  });
});
