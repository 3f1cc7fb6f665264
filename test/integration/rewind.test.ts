/**
 * Issue 31: rewind, as Claude Code's `/rewind` with Bash edits included. A conversation edits
 * files with Write, Edit and Bash (`sed -i`, `>>`, `rm`, `git commit`, a branch switch) across
 * three prompts, on a real worker, server, git and sandbox; a rewind to prompt 2 puts back the
 * files, git HEAD and the transcript exactly as they were before prompt 2, and the next model
 * request carries only the earlier messages. `--code` and `--conversation` alone, and a rewind
 * past a compaction of an earlier run (un-compact); a fork at prompt 2 that diverges in its own
 * workspace and repository while the parent stays as it was.
 */
import { execFile } from 'node:child_process';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { RecordedRequest, ScriptedTurn } from '../../testing/scripted-model-server';
import type { TranscriptMessage } from '../../common/messages';
import { compactUpdate } from '../../workflows/definitions';
import { cliAgainst, isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness, expectValidApiOrder } from '../helpers/harness';

isolateEnvironment();

const execFileAsync = promisify(execFile);

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const GIT = ['-c', 'user.name=Test', '-c', 'user.email=test@example.com'];
const git = async (cwd: string, ...args: string[]) => (await execFileAsync('git', [...GIT, ...args], { cwd })).stdout.trim();

/** The text of the last prompt (a user turn with text, not only tool results) and how many assistant turns answered it so far. */
function position(request: RecordedRequest): { prompt: string; step: number } {
  const messages = request.body.messages as Array<{ role: string; content: string | Array<{ type: string; text?: string }> }>;
  const textOf = (content: (typeof messages)[number]['content']) =>
    typeof content === 'string' ? content : (content.filter((block) => block.type === 'text').at(-1)?.text ?? '');
  let index = messages.length - 1;
  while (index >= 0 && !(messages[index].role === 'user' && textOf(messages[index].content) !== '')) index--;
  return {
    prompt: index >= 0 ? textOf(messages[index].content) : '',
    step: messages.slice(index + 1).filter((message) => message.role === 'assistant').length,
  };
}

const tool = (name: string, input: Record<string, unknown>): ScriptedTurn => ({ content: [{ type: 'tool_use', name, input }] });
const text = (words: string): ScriptedTurn => ({ content: [{ type: 'text', text: words }] });

const SCRIPT: Record<string, ScriptedTurn[]> = {
  'prompt one': [tool('Write', { file_path: 'a.txt', content: 'one\n' }), text('Wrote a.txt.')],
  'prompt two': [
    tool('Edit', { file_path: 'a.txt', old_string: 'one', new_string: 'two' }),
    tool('Bash', { command: 'sed -i s/bee/BEE/ b.txt && echo more >> c.txt && rm d.txt', description: 'edit, append and remove (sandboxed)' }),
    // .git is read-only in the sandbox: a commit runs outside it, as the sandbox's notice tells the model.
    tool('Bash', { command: `git ${GIT.join(' ')} add -A && git ${GIT.join(' ')} commit -qm two`, description: 'commit', dangerouslyDisableSandbox: true }),
    text('Prompt two done.'),
  ],
  'prompt three': [
    tool('Bash', {
      command: `echo three >> a.txt && git ${GIT.join(' ')} commit -qam three && git checkout -qb side`,
      description: 'append, commit, branch',
      dangerouslyDisableSandbox: true,
    }),
    tool('Write', { file_path: 'e.txt', content: 'new file\n' }),
    text('Prompt three done.'),
  ],
};

function respond(request: RecordedRequest): ScriptedTurn {
  if (JSON.stringify(request.body.messages).includes('write a detailed summary of the conversation')) {
    return text('<analysis>Going through it.</analysis>\n<summary>Prompts one and two edited files.</summary>');
  }
  const { prompt, step } = position(request);
  const script = SCRIPT[prompt];
  return script ? (script[step] ?? text('Nothing more.')) : text(`Answer to ${prompt}.`);
}

/** The workspace as the test compares it: every file (not .git) with its content, HEAD's commit and branch. */
async function snapshot(workspace: string): Promise<{ files: Record<string, string>; head: string; branch: string; status: string }> {
  const files: Record<string, string> = {};
  for (const name of (await readdir(workspace)).sort()) {
    if (name === '.git') continue;
    files[name] = await readFile(path.join(workspace, name), 'utf8');
  }
  return {
    files,
    head: await git(workspace, 'rev-parse', 'HEAD'),
    branch: await git(workspace, 'symbolic-ref', '--short', 'HEAD'),
    status: await git(workspace, 'status', '--porcelain'),
  };
}

async function setUp(): Promise<Harness> {
  const created = await createHarness({ respond });
  const workspace = created.workspace;
  await git(workspace, 'init', '-q', '-b', 'main');
  await writeFile(path.join(workspace, 'b.txt'), 'bee\n');
  await writeFile(path.join(workspace, 'c.txt'), 'sea\n');
  await writeFile(path.join(workspace, 'd.txt'), 'dee\n');
  await git(workspace, 'add', '-A');
  await git(workspace, 'commit', '-qm', 'initial');
  await created.startWorker();
  return created;
}

/**
 * A conversation through prompt one and then `prompts` (default two and three), with the workspace
 * and the transcript just before each of those (before[0]: before prompt two, before[1]: before
 * prompt three) and after the last.
 */
async function throughPrompts(h: Harness, prompts = ['prompt two', 'prompt three'], config = h.config()) {
  const started = await h.api.start({ prompt: 'prompt one', config, taskQueue: h.taskQueue });
  const id = started.conversationId;
  await settle(h, id, started.inputUuid!);
  const before: Array<{ workspace: Awaited<ReturnType<typeof snapshot>>; transcript: TranscriptMessage[] }> = [];
  for (const words of prompts) {
    before.push({ workspace: await snapshot(h.workspace), transcript: await historyOf(h, id) });
    await prompt(h, id, words);
  }
  return { id, before, after: { workspace: await snapshot(h.workspace), transcript: await historyOf(h, id) } };
}

/** Sends a prompt and waits for its result; returns the workspace's snapshot after it. */
async function prompt(h: Harness, conversationId: string, words: string) {
  const inputUuid = await h.api.send(conversationId, words);
  await settle(h, conversationId, inputUuid);
}

/** Waits for the result, approving the commands that run outside the sandbox (they ask in every mode) as a person would. */
async function settle(h: Harness, conversationId: string, inputUuid: string) {
  const approving = (async () => {
    for (let stop = false; !stop;) {
      const status = await h.api.status(conversationId).catch(() => undefined);
      for (const pending of status?.pendingPermissions ?? []) {
        await h.api.decidePermission(conversationId, { toolUseId: pending.toolUseId, behavior: 'allow' }).catch(() => undefined);
      }
      stop = status?.lastResult?.input_uuids?.includes(inputUuid) === true;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const result = await h.api.waitForResult(conversationId, inputUuid);
  await approving;
  expect(result.subtype).toBe('success');
}

const cli = (h: Harness, ...args: string[]) => cliAgainst(h, ...args);

const historyOf = (h: Harness, id: string) => h.api.transcript(id);
const promptsIn = (messages: readonly TranscriptMessage[]) =>
  messages.flatMap((message) => (message.type === 'user' && typeof message.message.content === 'string' ? [message.message.content] : []));

describe('rewind (issue 31)', () => {
  it('a rewind to prompt 2 puts back files, git HEAD and the transcript; the next request carries only the earlier messages', async () => {
    harness = await setUp();
    const { id, before, after } = await throughPrompts(harness);
    const { workspace: beforeTwo, transcript: transcriptBeforeTwo } = before[0];
    const afterThree = after.workspace;
    expect(afterThree.branch).toBe('side');
    expect(afterThree.files['e.txt']).toBe('new file\n');
    expect(afterThree.files['d.txt']).toBeUndefined();

    const listed = await cli(harness, 'checkpoints', id);
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(/^\s+1 .* prompt one .*changed since/m);
    expect(listed.out).toMatch(/^\s+3 .* prompt three /m);

    const rewound = await cli(harness, 'rewind', id, '--to', '2', '--json');
    expect(rewound.err).toBe('');
    const outcome = JSON.parse(rewound.out);
    expect(outcome).toMatchObject({ to: 2, mode: 'both', prompt: 'prompt two', gitState: true, messagesRemoved: expect.any(Number) });
    expect(await snapshot(harness.workspace)).toEqual(beforeTwo);
    expect(await historyOf(harness, id)).toEqual(transcriptBeforeTwo);

    const requestsBefore = harness.model.requests.length;
    await prompt(harness, id, 'after the rewind');
    const next = harness.model.requests[requestsBefore];
    expectValidApiOrder(next);
    const sent = JSON.stringify(next.body.messages);
    expect(sent).toContain('prompt one');
    expect(sent).not.toContain('prompt two');
    expect(sent).not.toContain('prompt three');
    expect(next.body.messages).toHaveLength(transcriptBeforeTwo.length + 1);
    // The prompts after the rewind are numbered on from it: the new one is prompt 2.
    const points = await harness.api.checkpoints(id);
    expect(points.map((point) => point.text)).toEqual(['prompt one', 'after the rewind']);

    // The rewind can itself be undone: its checkpoint holds the workspace as it was after prompt three.
    expect(outcome.undoCheckpointId).toMatch(/^[0-9a-f]{40}$/);
  });

  it('--code restores the files only, --conversation the transcript only', async () => {
    harness = await setUp();
    const { id, before, after } = await throughPrompts(harness);
    const transcriptBeforeTwo = before[0].transcript;
    const beforeThree = before[1].workspace;
    const transcriptAfterThree = after.transcript;

    const code = await cli(harness, 'rewind', id, '--to', '3', '--code');
    expect(code).toMatchObject({ code: 0, err: '' });
    expect(code.out).toContain('Rewound to just before prompt 3.');
    expect(await snapshot(harness.workspace)).toEqual(beforeThree);
    expect(await historyOf(harness, id)).toEqual(transcriptAfterThree.concat()); // unchanged

    const conversation = await cli(harness, 'rewind', id, '--to', '2', '--conversation');
    expect(conversation).toMatchObject({ code: 0, err: '' });
    expect(await historyOf(harness, id)).toEqual(transcriptBeforeTwo);
    expect(await snapshot(harness.workspace)).toEqual(beforeThree); // files untouched

    // Bad requests: a clear error, nothing changed.
    const tooFar = await cli(harness, 'rewind', id, '--to', '9');
    expect(tooFar.code).toBe(1);
    expect(tooFar.err).toMatch(/"to" must be a prompt number from 1 to 1/);
    const both = await cli(harness, 'rewind', id, '--to', '1', '--code', '--conversation');
    expect(both.code).toBe(2);
    expect(await historyOf(harness, id)).toEqual(transcriptBeforeTwo);
  });

  it('a rewind past a compaction of an earlier run brings back the full transcript (un-compact)', async () => {
    harness = await setUp();
    // Every query ends by continuing as new, so prompt 2 and the compaction are an earlier run's.
    const config = harness.config({ continueAsNewAfterEvents: 1 });
    const started = await harness.api.start({ prompt: 'prompt one', config, taskQueue: harness.taskQueue });
    const id = started.conversationId;
    await settle(harness, id, started.inputUuid!);
    const transcriptBeforeTwo = await historyOf(harness, id);
    const beforeTwo = await snapshot(harness.workspace);
    await prompt(harness, id, 'prompt two');
    const compacted = await harness.client.workflow.getHandle(id).executeUpdate(compactUpdate, { args: [{}] });
    expect(compacted).toMatchObject({ compacted: true });
    const firstRun = (await harness.client.workflow.getHandle(id).describe()).runId;
    await prompt(harness, id, 'prompt three');
    await expect.poll(async () => (await harness!.client.workflow.getHandle(id).describe()).runId, { timeout: 20_000, interval: 250 }).not.toBe(firstRun);
    expect(promptsIn(await historyOf(harness, id))).not.toContain('prompt one');

    const rewound = await harness.api.rewind(id, { to: 2 });
    expect(rewound).toMatchObject({ to: 2, uncompacted: true });
    const restored = await historyOf(harness, id);
    expect(restored).toEqual(transcriptBeforeTwo);
    expect(restored.some((message) => message.type === 'compact_boundary')).toBe(false);
    expect(await snapshot(harness.workspace)).toEqual(beforeTwo);

    const requestsBefore = harness.model.requests.length;
    await prompt(harness, id, 'after the rewind');
    const sent = JSON.stringify(harness.model.requests[requestsBefore].body.messages);
    expect(sent).toContain('prompt one');
    expect(sent).not.toContain('Prompts one and two edited files');
  });

  it('a fork at prompt 2 diverges in its own workspace and repository while the parent is unchanged', async () => {
    harness = await setUp();
    const { id, before, after } = await throughPrompts(harness);
    const { workspace: beforeTwo, transcript: transcriptBeforeTwo } = before[0];
    const { workspace: parentAfter, transcript: parentTranscript } = after;

    const forkDir = `${harness.workspace}-fork-test`;
    onTestFinished(() => rm(forkDir, { recursive: true, force: true }));
    const forked = await cli(harness, 'fork', id, '--at', '2', '--cwd', forkDir, '--json');
    expect(forked.err).toBe('');
    const fork = JSON.parse(forked.out);
    expect(fork).toMatchObject({ cwd: forkDir, at: 2, git: true, parentConversationId: id });
    // The fork's workspace is the parent's before prompt 2, git history and branch included.
    expect(await snapshot(forkDir)).toEqual(beforeTwo);
    expect(await historyOf(harness, fork.conversationId)).toEqual(transcriptBeforeTwo);
    expect((await harness.api.status(fork.conversationId)).forkedFrom).toEqual({ conversationId: id, prompt: 2 });
    // `list` (the DurableAgentForkedFrom search attribute) links it to its parent too.
    await expect
      .poll(async () => (JSON.parse((await cli(harness!, 'list', '--json', '--workspace', forkDir)).out) as Array<{ id: string; forkedFrom?: string }>)[0], {
        timeout: 10_000,
      })
      .toMatchObject({ id: fork.conversationId, forkedFrom: id });

    // It diverges: its own prompt two runs in its own workspace and repository.
    await prompt(harness, fork.conversationId, 'prompt two');
    const forkAfter = await snapshot(forkDir);
    expect(forkAfter.files['a.txt']).toBe('two\n');
    expect(forkAfter.files['d.txt']).toBeUndefined();
    expect(forkAfter.head).not.toBe(beforeTwo.head);
    expect(await git(forkDir, 'log', '--format=%s')).toBe('two\ninitial');
    // The parent: the same files, HEAD, branch and transcript as before the fork.
    expect(await snapshot(harness.workspace)).toEqual(parentAfter);
    expect(await historyOf(harness, id)).toEqual(parentTranscript);
    // The fork's first request continued the parent's messages before prompt 2, and read the
    // parent's cached prefix: the tools and the static system prompt (its environment block names
    // the fork's own directory, so the messages after it are written to the cache afresh).
    const forkRequests = harness.model.requests.filter((request) => JSON.stringify(request.body.system).includes(forkDir));
    expect(forkRequests.length).toBeGreaterThan(0);
    expect(JSON.stringify(forkRequests[0].body.messages)).toContain('prompt one');
    const forkTranscript = await historyOf(harness, fork.conversationId);
    const firstAnswer = forkTranscript.slice(transcriptBeforeTwo.length).find((message) => message.type === 'assistant');
    const parentFirstTwo = parentTranscript.slice(transcriptBeforeTwo.length).find((message) => message.type === 'assistant');
    const usage = firstAnswer?.type === 'assistant' ? firstAnswer.message.usage : undefined;
    const parentUsage = parentFirstTwo?.type === 'assistant' ? parentFirstTwo.message.usage : undefined;
    console.log(`prompt two's first request: fork ${JSON.stringify(usage)}; parent ${JSON.stringify(parentUsage)}`);
    expect(usage?.cache_read_input_tokens).toBeGreaterThan(0);
  });
});
