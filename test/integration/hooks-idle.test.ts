/**
 * Notification hooks with matcher `idle_prompt` (issue 22 §4): after Claude Code's idle threshold
 * (`messageIdleNotifThresholdMs`, a minute by default) without input, the conversation runs them once; the conversation still answers after.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, createHarness, eventually } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** The threshold this test sets (`messageIdleNotifThresholdMs`; Claude Code's default is a minute). */
const IDLE_AFTER_MS = 4_000;

describe('idle notification', () => {
  it('runs Notification(idle_prompt) hooks once the idle threshold passed without input, and the conversation goes on', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'First.' }] }, { content: [{ type: 'text', text: 'Second.' }] }] });
    await mkdir(path.join(harness.workspace, '.claude'), { recursive: true });
    const hooks = { Notification: [{ matcher: 'idle_prompt', hooks: [{ type: 'command', command: '{ cat; echo; } >> idle.jsonl' }] }] };
    await writeFile(path.join(harness.workspace, '.claude', 'settings.json'), JSON.stringify({ hooks }));
    await harness.startWorker();
    const started = await harness.api.start({
      prompt: 'hello',
      config: harness.config({ messageIdleNotifThresholdMs: IDLE_AFTER_MS }),
      taskQueue: harness.taskQueue,
    });
    await harness.api.waitForResult(started.conversationId, started.inputUuid!);
    const answeredAt = Date.now();

    const read = async () =>
      (await readFile(path.join(harness!.workspace, 'idle.jsonl'), 'utf8').catch(() => ''))
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
    const notified = await eventually(read, (lines) => lines.length > 0, IDLE_AFTER_MS + 30_000);
    expect(Date.now() - answeredAt).toBeGreaterThanOrEqual(IDLE_AFTER_MS - 1_000);
    expect(notified).toMatchObject([{ hook_event_name: 'Notification', notification_type: 'idle_prompt', session_id: started.conversationId }]);

    const second = await harness.api.send(started.conversationId, 'still there?');
    expect(await harness.api.waitForResult(started.conversationId, second)).toMatchObject({ result: 'Second.' });
    expect(await read()).toHaveLength(1);
  }, 180_000);
});
