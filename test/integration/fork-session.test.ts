/**
 * `ask -r <id> --fork-session "prompt"` (Claude Code's --fork-session, issue 31's fork): a new
 * conversation from the parent's transcript now, in its own copy of the workspace, linked to its
 * parent; the parent's transcript and files stay as they were. An ended parent cannot be forked
 * with its files: a clear error, nothing started.
 */
import { readFile, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { RecordedRequest, ScriptedTurn } from '../../testing/scripted-model-server';
import { cliAgainst, isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness } from '../helpers/harness';

isolateEnvironment();

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

type Message = { role: string; content: string | Array<{ type: string; text?: string }> };
const textOf = (content: Message['content']) => (typeof content === 'string' ? content : (content.filter((block) => block.type === 'text').at(-1)?.text ?? ''));
const promptsOf = (request: RecordedRequest) =>
  (request.body.messages as Message[]).filter((message) => message.role === 'user' && textOf(message.content) !== '').map((message) => textOf(message.content));

function respond(request: RecordedRequest): ScriptedTurn {
  const last = (request.body.messages as Message[]).at(-1)!;
  const prompt = promptsOf(request).at(-1) ?? '';
  if (typeof last.content !== 'string' && last.content.some((block) => block.type === 'tool_result'))
    return { content: [{ type: 'text', text: `Done: ${prompt}.` }] };
  if (prompt === 'write the file') return { content: [{ type: 'tool_use', name: 'Write', input: { file_path: 'a.txt', content: 'one\n' } }] };
  if (prompt === 'change it in the fork') return { content: [{ type: 'tool_use', name: 'Write', input: { file_path: 'a.txt', content: 'fork\n' } }] };
  return { content: [{ type: 'text', text: `Answer to ${prompt}.` }] };
}

const cli = (h: Harness, ...args: string[]) => cliAgainst(h, ...args);

describe('ask -r <id> --fork-session', () => {
  it('starts a new conversation from the transcript now, in its own copy of the workspace; the parent is unchanged', async () => {
    harness = await createHarness({ respond });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'write the file', config: harness.config(), taskQueue: harness.taskQueue });
    const parent = started.conversationId;
    expect((await harness.api.waitForResult(parent, started.inputUuid!)).subtype).toBe('success');
    const parentTranscript = await harness.api.transcript(parent);
    const parentFiles = await readdir(harness.workspace);

    const forked = await cli(harness, 'ask', '-r', parent, '--fork-session', '--cwd', harness.workspace, '--output-format', 'json', 'change it in the fork');
    expect(forked.code).toBe(0);
    const result = JSON.parse(forked.out);
    expect(result).toMatchObject({ subtype: 'success', result: 'Done: change it in the fork.' });
    const fork = result.session_id as string;
    expect(fork).not.toBe(parent);
    // The fork's workspace: printed, new, beside the parent's, with the parent's files as they were.
    const cwd = new RegExp(`^Forked ${parent} into ${fork}, in (\\S+) \\(1 file\\); ${parent} is unchanged\\.$`).exec(forked.err.trim())?.[1];
    expect(cwd, forked.err).toBeDefined();
    onTestFinished(() => rm(cwd!, { recursive: true, force: true }));
    expect(cwd).not.toBe(harness.workspace);
    expect(path.dirname(cwd!)).toBe(path.dirname(harness.workspace));
    expect(await readFile(path.join(cwd!, 'a.txt'), 'utf8')).toBe('fork\n'); // its own prompt changed its own copy
    expect(await readFile(path.join(harness.workspace, 'a.txt'), 'utf8')).toBe('one\n');
    expect(await readdir(harness.workspace)).toEqual(parentFiles);

    // Linked to its parent; its transcript the parent's, then its own prompt; the parent's the same as before.
    expect((await harness.api.status(fork)).forkedFrom).toEqual({ conversationId: parent });
    const forkTranscript = await harness.api.transcript(fork);
    expect(JSON.stringify(forkTranscript)).toContain('write the file');
    expect(JSON.stringify(forkTranscript)).toContain('change it in the fork');
    expect(await harness.api.transcript(parent)).toEqual(parentTranscript);
    const forkRequest = harness.model.requests.find((request) => promptsOf(request).includes('change it in the fork'))!;
    expect(promptsOf(forkRequest)).toEqual(['write the file', 'change it in the fork']);
    expect(JSON.stringify(forkRequest.body)).toContain(cwd!);

    // An ended parent: its workflow cannot make the copy — a clear error, no conversation started.
    await harness.api.end(parent);
    await harness.client.workflow.getHandle(parent).result();
    const ended = await cli(harness, 'ask', '-r', parent, '--fork-session', '--cwd', harness.workspace, 'again');
    expect(ended.code).toBe(1);
    expect(ended.err).toMatch(/an ended conversation cannot be forked with its files; resume it with -r instead/);
    expect(harness.model.requests.some((request) => promptsOf(request).includes('again'))).toBe(false);
  });
});
