/**
 * The chat on Ink (issue 32), in a real terminal (tmux) against a real server, worker and the
 * scripted model: with no worker it says so within 5 s (and a prompt waits visibly, then is
 * answered once one starts); a permission menu left open 30 s prints no MaxListeners warning;
 * markdown arrives styled (bold, a heading, a fenced code block: `capture-pane -e` shows the
 * escapes, not the `**` and fences); Esc interrupts the running answer.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chatAnswered, chatReady, killTerminals, screen, startChat, tmux } from '../helpers/tmux';
import { type Harness, REPO_ROOT, createHarness, eventually } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  killTerminals();
  await harness?.close();
  harness = undefined;
});

/** The screen with its colours and attributes as escapes. */
const styledScreen = (session: string): string => execFileSync('tmux', ['capture-pane', '-e', '-p', '-t', session, '-S', '-200'], { encoding: 'utf8' });

describe('chat on Ink', () => {
  it('says within 5 s that no worker polls the task queue, shows a waiting prompt as such, and goes on once a worker starts', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'A worker came.' }] }] });
    // What starting the CLI at all costs on this machine now (the tests share two cores; the compiled
    // build of issue 32 item 1 cuts it): the 5 s are counted after it.
    const before = Date.now();
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'durable-agent.js'), '--version']);
    const cliStartMs = Date.now() - before;
    const started = Date.now();
    const session = startChat(harness, 'chat-noworker', '--cwd', harness.workspace);
    await eventually(
      async () => screen(session),
      (text) => text.includes(`No worker is polling task queue "${harness!.taskQueue}"`),
      10_000,
    );
    const saidAfterMs = Date.now() - started;
    expect(saidAfterMs - cliStartMs).toBeLessThan(5_000);
    await eventually(async () => screen(session), chatReady, 10_000);

    tmux('send-keys', '-t', session, 'anyone there?', 'Enter');
    const waiting = await eventually(
      async () => screen(session),
      (text) => /Waiting for a worker… \(\d+s · esc to interrupt\)\nNo worker is polling/.test(text),
      10_000,
    );
    expect(waiting).not.toContain('A worker came.');

    await harness.startWorker();
    const after = await eventually(
      async () => screen(session),
      // The presence check polls every 2 s: a quick answer may come before its line does.
      (text) => /✓ done/.test(text) && text.includes('A worker came.') && text.includes('A worker polls task queue'),
      90_000,
    );
    expect(after).toContain('A worker polls task queue');
    console.log(`[chat-ink] no worker said ${saidAfterMs} ms after chat started (the CLI's --version took ${cliStartMs} ms)`);
  });

  it('a permission menu left open 30 s prints no warning, and is answered after', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_wait30', name: 'Write', input: { file_path: 'waited.txt', content: 'waited\n' } }] },
        { content: [{ type: 'text', text: 'It waited fine.' }] },
      ],
    });
    await harness.startWorker();
    const session = startChat(harness, 'chat-wait30', '--cwd', harness.workspace, '--permission-mode', 'default');
    await eventually(async () => screen(session), chatReady, 90_000);
    tmux('send-keys', '-t', session, 'write it', 'Enter');
    await eventually(
      async () => screen(session),
      (text) => /Do you want to proceed\?[\s\S]*╰─+╯ *$/.test(`${text.trimEnd()} `),
      60_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 30_000));
    const open = screen(session);
    expect(open).not.toMatch(/MaxListeners|memory leak|Warning/i);
    expect(open).toMatch(/Do you want to proceed\?[\s\S]*3\. No, and tell Claude what to do differently/);
    tmux('send-keys', '-t', session, '1');
    const done = await eventually(
      async () => screen(session),
      (text) => chatAnswered(text, 'It waited fine.'),
      60_000,
    );
    expect(done).not.toMatch(/MaxListeners|memory leak|Warning/i);
    expect(done).toContain('Write toolu_wait30 allowed');
  }, 150_000);

  it('renders markdown: no ** or fences on screen, bold and code styled', async () => {
    const answer = ['# The Plan', '', 'This is **very bold** and `inline`.', '', '```ts', 'const answer = 42;', '```', '', 'Done.'].join('\n');
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: answer }], chunkSize: 8, deltaDelayMs: 20 }] });
    await harness.startWorker();
    const session = startChat(harness, 'chat-markdown', '--cwd', harness.workspace);
    await eventually(async () => screen(session), chatReady, 90_000);
    tmux('send-keys', '-t', session, 'plan it', 'Enter');
    const plain = await eventually(
      async () => screen(session),
      (text) => chatAnswered(text, 'Done.'),
      60_000,
    );
    expect(plain).toContain('The Plan');
    expect(plain).toContain('very bold');
    expect(plain).toContain('const answer = 42;');
    expect(plain).not.toContain('**very bold**');
    expect(plain).not.toContain('```');
    expect(plain).not.toContain('# The Plan');
    const styled = styledScreen(session);
    // Bold (SGR 1) right before the bold words, and the code line coloured (an SGR with a colour).
    expect(styled).toMatch(/\u001b\[[0-9;]*\b1m(?:\u001b\[[0-9;]*m)*very bold/);
    expect(styled).toMatch(/\u001b\[[0-9;]*(?:3[0-7]|38;[0-9;]+|9[0-7])m[^\n]*answer/);
    expect(styled.split('very bold').length).toBe(2); // once: the streamed text became the rendered answer
  });

  it('Esc interrupts the running answer', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'text', text: 'Starting a long answer' },
            { type: 'text', text: 'never shown' },
          ],
          hold: { afterBlocks: 1, until: held },
        },
        { content: [{ type: 'text', text: 'Next one.' }] },
      ],
    });
    await harness.startWorker();
    const session = startChat(harness, 'chat-esc', '--cwd', harness.workspace);
    await eventually(async () => screen(session), chatReady, 90_000);
    tmux('send-keys', '-t', session, 'go long', 'Enter');
    await eventually(
      async () => screen(session),
      (text) => text.includes('Starting a long answer'),
      60_000,
    );
    tmux('send-keys', '-t', session, 'Escape');
    const interrupted = await eventually(
      async () => screen(session),
      (text) =>
        /Starting a long answer[\s\S]*\[interrupting…\][\s\S]*✗ interrupted while the model was answering[\s\S]*\$\d+\.\d{4}\]\s*\n> *$/.test(
          `${text.trimEnd()} `,
        ),
      60_000,
    );
    expect(interrupted).not.toContain('never shown');
    release();
    tmux('send-keys', '-t', session, 'next', 'Enter');
    await eventually(
      async () => screen(session),
      (text) => chatAnswered(text, 'Next one.'),
      60_000,
    );
  });

  it('stops counting a running tool once its worker is killed, and says why', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'for i in $(seq 1 120); do echo "tick $i"; sleep 1; done', description: 'ticks' } }] },
        { content: [{ type: 'text', text: 'Ticked.' }] },
      ],
    });
    const worker = await harness.spawnWorkerProcess();
    const session = startChat(harness, 'chat-killed', '--cwd', harness.workspace, '--dangerously-skip-permissions');
    await eventually(async () => screen(session), chatReady, 90_000);
    tmux('send-keys', '-t', session, 'tick', 'Enter');
    await eventually(
      async () => screen(session),
      (text) => /● Bash\(for i in [^\n]*· running \d+s · tick [2-9]/.test(text),
      60_000,
    );
    worker.kill('SIGKILL');
    const killedAt = Date.now();
    // The tool's attempt times out without heartbeats (30 s by default), then the retry waits for a worker.
    const stopped = await eventually(
      async () => screen(session),
      (text) => /stopped at \d+s: the worker is gone/.test(text),
      90_000,
    );
    expect(stopped).toContain('The worker running this tool is gone');
    const first = /stopped at (\d+)s/.exec(stopped)![1];
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(/stopped at (\d+)s/.exec(screen(session))?.[1]).toBe(first); // the clock does not count on
    console.log(`[chat-ink] the progress line stopped ${Date.now() - killedAt - 3_000} ms after the worker was killed`);
  }, 180_000);
});
