/**
 * `/rewind` in chat (issue 31), in a real terminal (tmux): a scripted model writes a file on
 * prompt 1 and changes it on prompt 2; `/rewind` offers the prompts in an arrow-key picker, prompt 1 then Enter (both) puts
 * the file and the conversation back as they were before prompt 1, and the input line holds
 * prompt 1's text to edit — Enter sends it, the next model request carries it as its only prompt.
 * `/rewind 9` says there is no such prompt and changes nothing. And `chat -r <id> --fork-session`:
 * a new conversation forked from a live one, in its own copy of the workspace, the parent unchanged.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { RecordedRequest, ScriptedTurn } from '../../testing/scripted-model-server';
import { chatAnswered, killTerminals, screen, startChat, tmux } from '../helpers/tmux';
import { type Harness, createHarness, eventually } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  killTerminals();
  await harness?.close();
  harness = undefined;
});

/** Prompt 1 is two lines (a paste): it must come back whole. */
const PROMPT_ONE = 'write the file\nwith care';
const PROMPT_TWO = 'change the file';

type Message = { role: string; content: string | Array<{ type: string; text?: string }> };
const textOf = (content: Message['content']) => (typeof content === 'string' ? content : (content.filter((block) => block.type === 'text').at(-1)?.text ?? ''));

/** The prompts (user turns with text) of a request. */
const promptsOf = (request: RecordedRequest) =>
  (request.body.messages as Message[]).filter((message) => message.role === 'user' && textOf(message.content) !== '').map((message) => textOf(message.content));

function respond(request: RecordedRequest): ScriptedTurn {
  const messages = request.body.messages as Message[];
  const prompt = promptsOf(request).at(-1) ?? '';
  const last = messages.at(-1)!;
  const afterTool = typeof last.content !== 'string' && last.content.some((block) => block.type === 'tool_result');
  if (afterTool) return { content: [{ type: 'text', text: `Done: ${prompt.split('\n')[0]}.` }] };
  if (prompt === PROMPT_ONE) return { content: [{ type: 'tool_use', name: 'Write', input: { file_path: 'a.txt', content: 'one\n' } }] };
  if (prompt === PROMPT_TWO) return { content: [{ type: 'tool_use', name: 'Edit', input: { file_path: 'a.txt', old_string: 'one', new_string: 'two' } }] };
  return { content: [{ type: 'text', text: `Answer to ${prompt.split('\n')[0]}.` }] };
}

/** A query's result and status line, then the prompt. */

describe('/rewind and --fork-session in chat', () => {
  it('lists the prompts, restores files and conversation, and puts the prompt back on the input line to edit and send', async () => {
    harness = await createHarness({ respond });
    await harness.startWorker();
    const file = path.join(harness.workspace, 'a.txt');
    const session = startChat(harness, 'chat-rewind', '--cwd', harness.workspace, '--dangerously-skip-permissions');
    const conversationId = (await eventually(async () => /conversation (\S+) \(rejoin/.exec(screen(session))?.[1], Boolean, 90_000))!;
    await eventually(
      async () => screen(session),
      (text) => /Ctrl-D leaves[^\n]*\n> *$/.test(`${text.trimEnd()} `),
      30_000,
    );

    // Prompt 1, pasted (two lines, one prompt, sent on Enter): the model writes a.txt.
    tmux('set-buffer', '-b', `rewind-${process.pid}`, PROMPT_ONE);
    tmux('paste-buffer', '-p', '-b', `rewind-${process.pid}`, '-t', session, '-d');
    await eventually(
      async () => screen(session),
      (text) => /\n> \[Pasted text \+1 line\] *$/.test(`${text.trimEnd()} `),
      10_000,
    );
    tmux('send-keys', '-t', session, 'Enter');
    await eventually(
      async () => screen(session),
      (text) => chatAnswered(text, 'Done: write the file.'),
      60_000,
    );
    expect(await readFile(file, 'utf8')).toBe('one\n');
    tmux('send-keys', '-t', session, PROMPT_TWO, 'Enter');
    await eventually(
      async () => screen(session),
      (text) => chatAnswered(text, 'Done: change the file.'),
      60_000,
    );
    expect(await readFile(file, 'utf8')).toBe('two\n');
    const transcriptBefore = await harness.api.transcript(conversationId);

    // A prompt that does not exist: a clear message, nothing changed.
    tmux('send-keys', '-t', session, '/rewind 9', 'Enter');
    const refused = await eventually(
      async () => screen(session),
      (text) => /No prompt 9: choose 1–2[^\n]*\n> *$/.test(`${text.trimEnd()} `),
      30_000,
    );
    expect(refused).not.toContain('Rewound');
    expect(await readFile(file, 'utf8')).toBe('two\n');
    expect(await harness.api.transcript(conversationId)).toEqual(transcriptBefore);

    // /rewind: an arrow-key picker of the prompts (first line, files changed since), then what to restore.
    tmux('send-keys', '-t', session, '/rewind', 'Enter');
    const listed = await eventually(
      async () => screen(session),
      (text) =>
        /Rewind to just before which prompt\?[^\n]*\n[^\n]*❯ 1\. write the file[^\n]*\n[^\n]* 2\. change the file[^\n]*\n╰─+╯ *$/.test(`${text.trimEnd()} `),
      30_000,
    );
    expect(listed).toMatch(/1\. write the file +— 1 file changed since \(a\.txt\)/);
    expect(listed).toMatch(/2\. change the file +— 1 file changed since \(a\.txt\)/);
    // Down and up again (arrows move the choice), then Enter picks prompt 1.
    tmux('send-keys', '-t', session, 'Down');
    await eventually(
      async () => screen(session),
      (text) => /❯ 2\. change the file/.test(text),
      10_000,
    );
    tmux('send-keys', '-t', session, 'Up');
    await eventually(
      async () => screen(session),
      (text) => /❯ 1\. write the file/.test(text),
      10_000,
    );
    tmux('send-keys', '-t', session, 'Enter');
    await eventually(
      async () => screen(session),
      (text) => /Restore what\?[^\n]*\n[^\n]*❯ 1\. Restore code and conversation/.test(text),
      30_000,
    );
    const requestsBefore = harness.model.requests.length;
    tmux('send-keys', '-t', session, 'Enter');
    // The outcome, then the prompt's text on the input line, ready to edit (both its lines).
    const rewound = await eventually(
      async () => screen(session),
      (text) => /Rewound to just before prompt 1\.[\s\S]*\n> write the file\n {2}with care *$/.test(`${text.trimEnd()} `),
      30_000,
    );
    expect(rewound).toMatch(/Files: \d+ written, 1 removed\./);
    await expect(readFile(file, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' }); // a.txt did not exist before prompt 1
    expect(await harness.api.transcript(conversationId)).toEqual([]);
    // Still on the input line a moment later (the rewind's feed line did not push it away).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(`${screen(session).trimEnd()} `).toMatch(/\n> write the file\n {2}with care *$/);
    expect(harness.model.requests.length).toBe(requestsBefore);

    // Enter sends it unedited: the prompt as first typed (both lines), the request's only prompt.
    tmux('send-keys', '-t', session, 'Enter');
    await eventually(
      async () => screen(session),
      (text) => text.split('Done: write the file.').length === 3 && chatAnswered(text, ''),
      60_000,
    );
    const next = harness.model.requests[requestsBefore];
    expect(promptsOf(next)).toEqual([PROMPT_ONE]);
    expect(next.body.messages[0]).toMatchObject({ role: 'user' });
    expect(await readFile(file, 'utf8')).toBe('one\n');
  });

  it('chat -r <id> --fork-session forks a live conversation into its own workspace and chats there', async () => {
    harness = await createHarness({ respond });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: PROMPT_ONE, config: harness.config(), taskQueue: harness.taskQueue });
    const parent = started.conversationId;
    await harness.api.waitForResult(parent, started.inputUuid!);
    const parentTranscript = await harness.api.transcript(parent);

    const session = startChat(harness, 'chat-fork', '-r', parent, '--fork-session');
    // Lines the terminal wrapped, joined (-J): the fork's line is longer than 120 columns.
    const shown = await eventually(
      async () => tmux('capture-pane', '-p', '-J', '-t', session, '-S', '-200'),
      // Word-wrapped at the terminal's width (the workspace path is long): whitespace may be a line break.
      (text) => /Forked \S+\s+into\s+\S+,\s+in\s+\S+\s+\(1 file\);\s+\S+\s+is unchanged\.\n[\s\S]*Ctrl-D leaves[^\n]*\n> *$/.test(`${text.trimEnd()} `),
      90_000,
    );
    const [, from, fork, cwd] = /Forked (\S+)\s+into\s+(\S+),\s+in\s+(\S+)\s+\(1 file\)/.exec(shown)!;
    onTestFinished(() => rm(cwd, { recursive: true, force: true }));
    expect(from).toBe(parent);
    expect(shown).toContain(`conversation ${fork} (rejoin with: durable-agent chat ${fork})`);
    expect(await readFile(path.join(cwd, 'a.txt'), 'utf8')).toBe('one\n');

    tmux('send-keys', '-t', session, PROMPT_TWO, 'Enter');
    await eventually(
      async () => screen(session),
      (text) => chatAnswered(text, 'Done: change the file.'),
      60_000,
    );
    expect(await readFile(path.join(cwd, 'a.txt'), 'utf8')).toBe('two\n');
    expect(await readFile(path.join(harness.workspace, 'a.txt'), 'utf8')).toBe('one\n');
    expect(await harness.api.transcript(parent)).toEqual(parentTranscript);
    expect((await harness.api.status(fork)).forkedFrom).toEqual({ conversationId: parent });
  });
});
