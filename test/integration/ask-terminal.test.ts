/**
 * `durable-agent ask` in a real terminal (tmux), through the installed binary: the permission
 * question shows the call as every view does with a preview of the content (issue 19, item 7),
 * and Ctrl-C stops the query as with `claude -p` (item 4).
 */
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killTerminals, screen, startTerminal, tmux } from '../helpers/tmux';
import { type Harness, REPO_ROOT, createHarness, eventually } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  killTerminals();
  await harness?.close();
  harness = undefined;
});

function startAsk(h: Harness, name: string, ...args: string[]): string {
  return startCli(h, name, 'ask', ...args);
}

function startCli(h: Harness, name: string, ...args: string[]): string {
  const quoted = args.map((arg) => `'${arg.replace(/'/g, "'\\''")}'`);
  const command = [
    `cd ${h.workspace} &&`,
    `TEMPORAL_ADDRESS=${h.address}`,
    `DURABLE_AGENT_TASK_QUEUE=${h.taskQueue}`,
    process.execPath,
    path.join(REPO_ROOT, 'bin', 'durable-agent.js'),
    ...quoted,
    `; echo "[${args[0]} exited $?]"; sleep 600`,
  ].join(' ');
  return startTerminal(name, command);
}

describe('ask in a terminal', () => {
  it('asks about a Write showing the call and the content it would write', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_ask_w1', name: 'Write', input: { file_path: 'hello.txt', content: 'first line\nsecond line\n' } }] },
        { content: [{ type: 'text', text: 'Written.' }] },
      ],
    });
    await harness.startWorker();
    const session = startAsk(harness, 'ask-perm', '--permission-mode', 'default', 'write hello.txt');
    const asked = await eventually(
      async () => screen(session),
      (text) => /Allow\? [^\n]*: *$/.test(text.trimEnd() + ' '),
      90_000,
    );
    expect(asked).toMatch(/⚠ Write\(hello\.txt\) needs permission: [^\n]+\n {4}1 {3}first line\n {4}2 {3}second line\n[^\n]*Allow\?/);
    expect(asked).not.toContain('{"file_path"');
    tmux('send-keys', '-t', session, 'y', 'Enter');
    await eventually(
      async () => screen(session),
      (text) => text.includes('[ask exited 0]'),
      60_000,
    );
    expect(screen(session)).toContain('Written.');
    expect(await readFile(path.join(harness.workspace, 'hello.txt'), 'utf8')).toBe('first line\nsecond line\n');
  });

  it('stops the query on Ctrl-C, as claude -p does', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'text', text: 'Running it.' },
            { type: 'tool_use', id: 'toolu_ask_b1', name: 'Bash', input: { command: 'sleep 30 && touch finished.txt', description: 'wait' } },
          ],
        },
        { content: [{ type: 'text', text: 'never asked' }] },
      ],
    });
    await harness.startWorker();
    const session = startAsk(harness, 'ask-int', '--dangerously-skip-permissions', 'run the long job');
    const conversationId = await eventually(
      async () => {
        for await (const execution of harness!.client.workflow.list({ query: `TaskQueue = '${harness!.taskQueue}'` })) return execution.workflowId;
        return undefined;
      },
      Boolean,
      90_000,
    );
    await eventually(
      async () => (await harness!.api.status(conversationId!)).toolsInFlight.length,
      (count) => count > 0,
      60_000,
    );
    const pressed = Date.now();
    tmux('send-keys', '-t', session, 'C-c');
    await eventually(
      async () => screen(session),
      (text) => /\[ask exited 130\]/.test(text),
      30_000,
    );
    expect(Date.now() - pressed).toBeLessThan(15_000);
    const result = (await harness.api.status(conversationId!)).lastResult;
    expect(result?.terminal_reason).toBe('aborted_tools');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await expect(access(path.join(harness.workspace, 'finished.txt'))).rejects.toThrow(/ENOENT/);
  });

  it('start --follow streams the answer as it is written on a terminal (issue 19, item 6)', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'text', text: 'Reading first.' },
            { type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } },
          ],
        },
        {
          content: [
            { type: 'text', text: 'Half of the answer' },
            { type: 'text', text: 'and the rest.' },
          ],
          hold: { afterBlocks: 1, until: held },
        },
      ],
    });
    await harness.startWorker();
    const session = startCli(harness, 'follow-tty', 'start', '--follow', 'read the notes');
    // The first block shows while the model is still held on the second.
    const during = await eventually(
      async () => screen(session),
      (text) => text.includes('Half of the answer'),
      60_000,
    );
    expect(during).toMatch(/● Read\(notes\.txt\)/);
    expect(during).not.toContain('✓ done');
    release();
    const after = await eventually(
      async () => screen(session),
      (text) => text.includes('[start exited 0]'),
      60_000,
    );
    expect(after.split('Half of the answer').length).toBe(2); // once
    expect(after).toContain('and the rest.');
  });
});
