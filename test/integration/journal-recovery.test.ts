/**
 * Issue 24 on the dev server: a worker SIGKILLed in the middle of a tool call, at the point the
 * measured failures came from. A call whose effect never began runs on the retry (an append that
 * "was not run again" was lost work); a file edit whose start was recorded but whose write never
 * happened is made by the retry, once. test/helpers/hold-tool.cjs parks the first worker there.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, REPO_ROOT, createHarness, eventually } from '../helpers/harness';

const HOLD_TOOL = pathToFileURL(path.join(REPO_ROOT, 'test', 'helpers', 'hold-tool.cjs')).href;

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Starts the conversation on a worker parked at `hold`, SIGKILLs it there, and lets a fresh worker finish. */
async function killWorkerAt(hold: string, prompt: string) {
  const marker = path.join(harness!.stateDir, 'worker-held');
  const first = await harness!.spawnWorkerProcess({
    imports: [HOLD_TOOL],
    env: { DURABLE_AGENT_TEST_HOLD: hold, DURABLE_AGENT_TEST_HOLD_MARKER: marker },
  });
  const started = await harness!.api.start({ prompt, config: harness!.config(), taskQueue: harness!.taskQueue });
  await eventually(
    () => readFile(marker, 'utf8').catch(() => ''),
    (text) => text !== '',
  );
  first.kill('SIGKILL');
  await new Promise((resolve) => first.once('exit', resolve));
  await harness!.spawnWorkerProcess();
  return harness!.api.waitForResult(started.conversationId, started.inputUuid!);
}

function lastToolResult(): { type: string; is_error?: boolean; content: string } {
  return harness!.model.requests[1].body.messages.at(-1).content[0];
}

describe('worker SIGKILL mid tool call (issue 24)', () => {
  it('a Bash append whose worker died after journaling it, before the command started, runs once on the new worker', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo appended >> log.txt' } }] },
        { content: [{ type: 'text', text: 'Appended.' }] },
      ],
    });
    const result = await killWorkerAt('after-record:Bash', 'append a line');

    expect(result).toMatchObject({ subtype: 'success', result: 'Appended.' });
    expect(lastToolResult()).toMatchObject({ type: 'tool_result' });
    expect(lastToolResult().is_error).toBeFalsy();
    expect(await readFile(path.join(harness.workspace, 'log.txt'), 'utf8')).toBe('appended\n');
    expect(harness.model.requests).toHaveLength(2);
  });

  it('an Edit whose start was recorded but whose write never happened is made once by the new worker', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', name: 'Edit', input: { file_path: 'greeting.txt', old_string: 'hello', new_string: 'hello, world' } }] },
        { content: [{ type: 'text', text: 'Edited.' }] },
      ],
    });
    await writeFile(path.join(harness.workspace, 'greeting.txt'), 'hello\n');
    const result = await killWorkerAt('after-start:Edit', 'fix the greeting');

    expect(result).toMatchObject({ subtype: 'success', result: 'Edited.' });
    expect(lastToolResult().is_error).toBeFalsy();
    expect(JSON.stringify(lastToolResult().content)).toContain('has been updated');
    expect(await readFile(path.join(harness.workspace, 'greeting.txt'), 'utf8')).toBe('hello, world\n');
    expect(harness.model.requests).toHaveLength(2);
  });
});
