/**
 * `durable-agent chat` in a real terminal (tmux): type a prompt and watch the answer stream, see a
 * tool call's line, interrupt a running answer with Ctrl-C, leave with Ctrl-D (the conversation
 * stays), and rejoin it from another terminal; answer a permission request in its menu (a digit,
 * then no with a reason), a long command's shown whole; a bracketed paste is one prompt.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { showInvisibleCharacters } from '../../common/visible-text';
import { type DevServer, startDevServer } from '../../infra/dev-server';
import { chatReady, killTerminals, screen, startChat, tmux } from '../helpers/tmux';
import { type Harness, createHarness, eventually } from '../helpers/harness';

let harness: Harness | undefined;
let server: DevServer | undefined;
afterEach(async () => {
  await server?.stop().catch(() => undefined);
  server = undefined;
  killTerminals();
  await harness?.close();
  harness = undefined;
});

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const conversationIdOf = (text: string) => /conversation (\S+) \(rejoin/.exec(text)![1];

/** The permission menu is open at the bottom of the screen (its box's last line ends it). */
const menuOpen =
  /Do you want to proceed\?[^\n]*\n[^\n]*1\. Yes[^\n]*\n[^\n]*2\. Yes, and don't ask again[^\n]*\n[^\n]*3\. No, and tell Claude what to do differently[^\n]*\n╰─+╯ *$/;

describe('chat in a terminal', () => {
  it('streams answers, interrupts with Ctrl-C, leaves with Ctrl-D and rejoins', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'text', text: 'Let me look.' },
            { type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } },
          ],
        },
        { content: [{ type: 'text', text: 'Streaming in tmux works.' }], chunkSize: 4, deltaDelayMs: 60 },
        // Held open after its first block: the user interrupts it.
        {
          content: [
            { type: 'text', text: 'A long answer being written' },
            { type: 'text', text: 'never' },
          ],
          hold: { afterBlocks: 1, until: held },
        },
        { content: [{ type: 'text', text: 'Rejoined and answering.' }] },
      ],
    });
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'one\ntwo\nthree\n');
    await harness.startWorker();

    const first = startChat(harness, 'chat-a', '--cwd', harness.workspace);
    const conversationId = (await eventually(async () => /conversation (\S+) \(rejoin/.exec(screen(first))?.[1], Boolean, 90_000))!;
    await eventually(async () => screen(first), chatReady, 30_000);

    tmux('send-keys', '-t', first, 'read the notes', 'Enter');
    const answered = await eventually(
      async () => screen(first),
      (text) => text.includes('Streaming in tmux works.') && /\$\d+\.\d{4}\]/.test(text),
      60_000,
    );
    // The tool line and its result (not an error: a failed call shows `⎿ Error: …`).
    expect(answered).toMatch(/● Read\(notes\.txt\)\n {2}⎿ {2}(?!Error)\S/);
    expect(answered.split('Streaming in tmux works.').length).toBe(2); // once

    tmux('send-keys', '-t', first, 'write a lot', 'Enter');
    await eventually(
      async () => screen(first),
      (text) => text.includes('A long answer being written'),
      60_000,
    );
    tmux('send-keys', '-t', first, 'C-c');
    // The interrupted answer stays on screen, followed by the aborted result and a new prompt.
    const interrupted = await eventually(
      async () => screen(first),
      (text) =>
        /A long answer being written[\s\S]*\[interrupting[\s\S]*✗ interrupted while the model was answering[\s\S]*\$\d+\.\d{4}\]\s*\n> *$/.test(
          text.trimEnd() + ' ',
        ),
      60_000,
    );
    expect(interrupted.split('A long answer being written').length).toBe(2);
    release();

    tmux('send-keys', '-t', first, 'C-d');
    await eventually(
      async () => screen(first),
      (text) => text.includes('[chat exited 0]'),
      30_000,
    );
    expect(screen(first)).toContain(`rejoin with: durable-agent chat ${conversationId}`);
    const status = await harness.api.status(conversationId);
    expect(status.ended).toBe(false);

    const second = startChat(harness, 'chat-b', conversationId);
    await eventually(
      async () => screen(second),
      (text) => text.includes(`rejoined ${conversationId}`) && chatReady(text),
      90_000,
    );
    tmux('send-keys', '-t', second, 'are you there?', 'Enter');
    await eventually(
      async () => screen(second),
      (text) => text.includes('Rejoined and answering.'),
      60_000,
    );
    tmux('send-keys', '-t', second, 'C-c');
    tmux('send-keys', '-t', second, 'C-c');
    await eventually(
      async () => screen(second),
      (text) => text.includes('[chat exited 0]'),
      30_000,
    );
    expect((await harness.api.status(conversationId)).ended).toBe(false);
  });

  it("asks with Claude Code's arrow-key menu when a tool needs permission: a digit, a typed reason for no, decided elsewhere", async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'text', text: 'Writing it.' },
            { type: 'tool_use', id: 'toolu_chat_w1', name: 'Write', input: { file_path: 'hello.txt', content: 'hi\n' } },
          ],
        },
        { content: [{ type: 'text', text: 'The file is written.' }], chunkSize: 4, deltaDelayMs: 30 },
        { content: [{ type: 'tool_use', id: 'toolu_chat_w2', name: 'Write', input: { file_path: 'nope.txt', content: 'no\n' } }] },
        { content: [{ type: 'text', text: 'Understood, I will not write it.' }] },
        { content: [{ type: 'tool_use', id: 'toolu_chat_w3', name: 'Write', input: { file_path: 'other.txt', content: 'ok\n' } }] },
        { content: [{ type: 'text', text: 'Approved elsewhere, written.' }] },
      ],
    });
    await harness.startWorker();
    const session = startChat(harness, 'chat-perm', '--cwd', harness.workspace, '--permission-mode', 'default');
    await eventually(async () => screen(session), chatReady, 90_000);
    // The call as every view shows it, why it asks, and the content it would write (`│ hi`, or
    // numbered as client/render/diff.ts shows a Write: `1   hi`).
    const question = new RegExp(`⚠ Write\\(hello\\.txt\\) needs permission: [^\\n]*\\n {4}(?:│|\\d+ ) +hi\\n[\\s\\S]*${menuOpen.source}`);

    tmux('send-keys', '-t', session, 'write hello.txt', 'Enter');
    await eventually(
      async () => screen(session),
      (text) => question.test(text.trimEnd() + ' '),
      60_000,
    );
    tmux('send-keys', '-t', session, '1'); // a digit picks at once
    const allowed = await eventually(
      async () => screen(session),
      (text) => text.includes('The file is written.') && /\$\d+\.\d{4}\]\s*\n> *$/.test(text.trimEnd() + ' '),
      60_000,
    );
    expect(allowed).toContain('Write toolu_chat_w1 allowed');
    expect(await readFile(path.join(harness.workspace, 'hello.txt'), 'utf8')).toBe('hi\n');

    tmux('send-keys', '-t', session, 'now write nope.txt', 'Enter');
    await eventually(
      async () => screen(session),
      (text) => new RegExp(`nope\\.txt[^\\n]*\\n[^\\n]*(?:│|\\d+ ) +no\\n[\\s\\S]*${menuOpen.source}`).test(text.trimEnd() + ' '),
      60_000,
    );
    // Down twice and Enter: "No, and tell Claude what to do differently" asks what, which goes back with the denial.
    tmux('send-keys', '-t', session, 'Down');
    tmux('send-keys', '-t', session, 'Down');
    await eventually(
      async () => screen(session),
      (text) => /❯ 3\. No, and tell Claude/.test(text),
      10_000,
    );
    tmux('send-keys', '-t', session, 'Enter');
    await eventually(
      async () => screen(session),
      (text) => /what to do instead[^\n]*: /.test(text),
      10_000,
    );
    tmux('send-keys', '-t', session, '-l', 'write notes.md instead');
    tmux('send-keys', '-t', session, 'Enter');
    const denied = await eventually(
      async () => screen(session),
      (text) => text.includes('Understood, I will not write it.'),
      60_000,
    );
    expect(denied).toContain('Write toolu_chat_w2 denied');
    expect(denied).toMatch(/● Write\(nope\.txt\)\n {2}⎿ {2}Error: The user doesn't want to proceed/);
    await expect(readFile(path.join(harness.workspace, 'nope.txt'))).rejects.toThrow(/ENOENT/);
    const lastRequest = JSON.stringify(harness.model.requests.at(-1)!.body.messages.at(-1));
    expect(lastRequest).toContain('write notes.md instead');

    // Decided from another client first: chat stops asking and goes on.
    tmux('send-keys', '-t', session, 'and other.txt', 'Enter');
    await eventually(
      async () => screen(session),
      (text) => new RegExp(`other\\.txt[^\\n]*\\n[^\\n]*(?:│|\\d+ ) +ok\\n[\\s\\S]*${menuOpen.source}`).test(text.trimEnd() + ' '),
      60_000,
    );
    await harness.api.decidePermission(conversationIdOf(screen(session)), { toolUseId: 'toolu_chat_w3', behavior: 'allow' });
    const elsewhere = await eventually(
      async () => screen(session),
      (text) => text.includes('Approved elsewhere, written.') && /\$\d+\.\d{4}\]\s*\n> *$/.test(text.trimEnd() + ' '),
      60_000,
    );
    expect(elsewhere).toContain('Write toolu_chat_w3 is no longer waiting');
    expect(elsewhere.split('needs permission:').length).toBe(4); // asked once each, not again after the result
    expect(elsewhere).not.toContain('Do you want to proceed?'); // the menu went away with its request
    expect(await readFile(path.join(harness.workspace, 'other.txt'), 'utf8')).toBe('ok\n');
  });

  it("shows local slash commands' output (no result line after them) and sends a three-line bracketed paste as one prompt on Enter", async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'Got the three lines.' }] }] });
    await harness.startWorker();
    const session = startChat(harness, 'chat-local', '--cwd', harness.workspace);
    await eventually(async () => screen(session), chatReady, 90_000);

    // Local commands answer without the model: their output shows in chat (issue 19, item 2).
    tmux('send-keys', '-t', session, '/help', 'Enter');
    await eventually(
      async () => screen(session),
      (text) => /Commands:\n\s+\/help/.test(text) && /Anything else is sent to the model/.test(text),
      60_000,
    );
    tmux('send-keys', '-t', session, '/cost', 'Enter');
    await eventually(
      async () => screen(session),
      (text) => /Total cost: +\$0\.0000/.test(text),
      60_000,
    );
    tmux('send-keys', '-t', session, '/frobnicate', 'Enter');
    await eventually(
      async () => screen(session),
      (text) => text.includes('Unknown command: /frobnicate'),
      60_000,
    );
    expect(harness.model.requests).toHaveLength(0);

    expect(screen(session)).not.toMatch(/✓ done · 0 turns/); // a local command is no query

    // A bracketed paste (the chat turned the mode on; `paste-buffer -p` brackets it) of three lines
    // stays on the prompt line as one placeholder, and is one prompt, its lines in order, on Enter.
    tmux('set-buffer', '-b', `paste-${process.pid}`, 'AAA\nBBB\nCCC');
    tmux('paste-buffer', '-p', '-b', `paste-${process.pid}`, '-t', session);
    await eventually(
      async () => screen(session),
      (text) => /\n> \[Pasted text \+2 lines\] *$/.test(text.trimEnd() + ' '),
      10_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // nothing is sent without Enter
    expect(harness.model.requests).toHaveLength(0);
    tmux('send-keys', '-t', session, 'Enter');
    await eventually(
      async () => screen(session),
      (text) => text.includes('Got the three lines.') && /\$\d+\.\d{4}\]\s*\n> *$/.test(text.trimEnd() + ' '),
      60_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 500)); // a stray second prompt would arrive by now
    expect(harness.model.requests).toHaveLength(1);
    const prompt = JSON.stringify(harness.model.requests[0].body.messages.at(-1));
    expect(prompt).toMatch(/AAA\\nBBB\\nCCC/);
  });

  it('sends lines typed before it is ready, and keeps a prompt the server did not take (issue 19, item 9)', async () => {
    const state = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-chat-server-'));
    const port = await freePort();
    const serverOptions = { ephemeral: false, dbFilename: path.join(state, 'temporal.db'), port, headless: true, log: () => {} };
    server = await startDevServer(serverOptions);
    harness = await createHarness(
      { script: [{ content: [{ type: 'text', text: 'Heard you early.' }] }, { content: [{ type: 'text', text: 'Back again.' }] }] },
      { address: server.address },
    );
    await harness.startWorker();
    const session = startChat(harness, 'chat-early', '--cwd', harness.workspace);
    // Typed at once, before the chat has shown its prompt.
    tmux('send-keys', '-t', session, 'early bird', 'Enter');
    await eventually(
      async () => screen(session),
      (text) => text.includes('Heard you early.') && /\$\d+\.\d{4}\]\s*\n> *$/.test(text.trimEnd() + ' '),
      90_000,
    );
    expect(JSON.stringify(harness.model.requests[0].body.messages.at(-1))).toContain('early bird');

    // The server goes away: a prompt typed now is said not to be sent, and kept.
    await server.stop();
    tmux('send-keys', '-t', session, 'are you there', 'Enter');
    const refused = await eventually(
      async () => screen(session),
      (text) => text.includes('✗ Not sent'),
      30_000,
    );
    expect(refused).toMatch(/✗ Not sent[\s\S]*press Enter to send it again/); // word-wrapped at the terminal's width
    expect(refused).not.toContain('[chat exited');

    // The server comes back (same state): an empty Enter sends the kept prompt, and the live view reads on.
    server = await startDevServer(serverOptions);
    // The chat's connection finds the server again after a reconnect backoff: an Enter it cannot send
    // yet says "Not sent" once more and keeps the prompt, so the next empty Enter tries again.
    const notSent = (text: string) => text.split('✗ Not sent').length - 1;
    for (let attempt = 1; ; attempt++) {
      const before = notSent(screen(session));
      tmux('send-keys', '-t', session, 'Enter');
      const after = await eventually(
        async () => screen(session),
        (text) => text.includes('Back again.') || notSent(text) > before,
        90_000,
      );
      if (after.includes('Back again.')) break;
      expect(after, 'the kept prompt was not sent after 10 empty Enters').not.toContain('[chat exited');
      if (attempt === 10) throw new Error(`the kept prompt was not sent after 10 empty Enters:\n${after}`);
    }
    expect(JSON.stringify(harness.model.requests.at(-1)!.body.messages.at(-1))).toContain('are you there');
    expect(screen(session)).not.toContain('[chat exited');
  });

  it('shows a running Bash with its latest output while it runs (issue 19, item 6)', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'for i in 1 2 3 4 5 6; do echo "step $i"; sleep 1; done', description: 'steps' } }] },
        { content: [{ type: 'text', text: 'All steps done.' }] },
      ],
    });
    await harness.startWorker();
    const session = startChat(harness, 'chat-progress', '--cwd', harness.workspace, '--dangerously-skip-permissions');
    await eventually(async () => screen(session), chatReady, 90_000);
    tmux('send-keys', '-t', session, 'run the steps', 'Enter');
    const during = await eventually(
      async () => screen(session),
      (text) => /● Bash\(for i in [^\n]*· running \d+s · step [2-5]/.test(text),
      60_000,
    );
    expect(during).not.toContain('All steps done.');
    const after = await eventually(
      async () => screen(session),
      (text) => text.includes('All steps done.'),
      60_000,
    );
    // The progress line gave way to the call and its result.
    expect(after).toMatch(/● Bash\(for i in [^\n]*\)\n {2}⎿ {2}step 1 \(6 lines\)/);
    expect(after).not.toMatch(/· running \d+s/);
  });

  it('starts with a prompt given on the command line, as claude "…" does', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'Hello from the first prompt.' }] }] });
    await harness.startWorker();
    const session = startChat(harness, 'chat-initial', '--cwd', harness.workspace, "'say hello please'"); // quoted for the shell
    await eventually(
      async () => screen(session),
      (text) => text.includes('Hello from the first prompt.') && /\$\d+\.\d{4}\]\s*\n> *$/.test(text.trimEnd() + ' '),
      90_000,
    );
    expect(screen(session)).toContain('> say hello please');
    expect(JSON.stringify(harness.model.requests[0].body.messages.at(-1))).toContain('say hello please');
  });
  it('shows a long command whole in its permission question, wrapped, its bidi control and escape visible (issue 29, item 5)', async () => {
    // 300 characters: a right-to-left override and a screen-clearing escape early, the action at the end.
    const head = 'echo "\u202Egnp.tpircs \u001b[2J\u001b[H" > /dev/null; # ';
    const tail = ' padding\ntouch chat-long.txt';
    const command = `${head}${'x'.repeat(300 - head.length - tail.length)}${tail}`;
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'text', text: 'Running it.' },
            { type: 'tool_use', id: 'toolu_chat_long', name: 'Bash', input: { command } },
          ],
        },
        { content: [{ type: 'text', text: 'Done with the long one.' }] },
      ],
    });
    await harness.startWorker();
    const session = startChat(harness, 'chat-long', '--cwd', harness.workspace, '--permission-mode', 'default');
    await eventually(async () => screen(session), chatReady, 90_000);
    tmux('send-keys', '-t', session, 'run the long command', 'Enter');
    const asked = await eventually(
      async () => screen(session),
      (text) => menuOpen.test(text.trimEnd() + ' '),
      60_000,
    );
    const lines = asked.split('\n');
    const question = lines.findIndex((line) => line.startsWith('⚠ Bash needs permission: '));
    expect(question).toBeGreaterThanOrEqual(0);
    // Each line of the command `│ `, the rest of a line the terminal's 120 columns wrapped `↳ `: joined, the command.
    const shownLines = lines.slice(question + 1).filter((line) => /^ {4}[│↳] /.test(line));
    expect(shownLines.length).toBeGreaterThanOrEqual(3);
    const shown = shownLines
      .map((line) => (line.startsWith('    │ ') ? `\n${line.slice(6)}` : line.slice(6)))
      .join('')
      .slice(1);
    expect(shown).toBe(showInvisibleCharacters(command));
    expect(asked).toContain('⟨U+202E⟩gnp.tpircs ⟨U+001B⟩[2J⟨U+001B⟩[H');
    expect(asked).not.toContain('…');
    expect(asked).toContain('> run the long command'); // the escape did not clear the screen

    tmux('send-keys', '-t', session, 'Enter'); // the first choice, Yes
    await eventually(
      async () => screen(session),
      (text) => text.includes('Done with the long one.'),
      60_000,
    );
    expect(await readFile(path.join(harness.workspace, 'chat-long.txt'), 'utf8')).toBe('');
  });
});
