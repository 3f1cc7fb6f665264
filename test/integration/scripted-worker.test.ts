/**
 * `durable-agent worker --scripted` (issue 19, item 5): the way to try everything without a key.
 * The installed binary runs the worker and the commands, as a person would: a Read, a Write that
 * permissions refuse when nobody can answer, a Bash and a subagent, all from plain prompts.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../../common/messages';
import { SCRIPTED_HELP, scriptedResponder } from '../../worker/scripted-model';
import { type Harness, REPO_ROOT, createHarness, eventually, keylessProcessEnvironment } from '../helpers/harness';

const BIN = path.join(REPO_ROOT, 'bin', 'durable-agent.js');
let harness: Harness | undefined;
let worker: ChildProcess | undefined;
afterEach(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((resolve) => worker!.once('exit', resolve));
    worker.kill('SIGTERM');
    await exited;
  }
  worker = undefined;
  await harness?.close();
  harness = undefined;
});

function durableAgent(h: Harness, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: h.workspace, env: keylessProcessEnvironment(h), timeout: 90_000 }, (error, out, err) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out, err }),
    );
  });
}

describe('durable-agent worker --scripted', () => {
  it('answers plain prompts with real tools, permissions and subagents, without a key', async () => {
    harness = await createHarness();
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'alpha\nbeta\n');
    worker = spawn(process.execPath, [BIN, 'worker', '--scripted'], {
      cwd: harness.workspace,
      env: keylessProcessEnvironment(harness),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    worker.stdout!.on('data', (chunk) => (output += chunk));
    worker.stderr!.on('data', (chunk) => (output += chunk));
    const deadline = Date.now() + 90_000;
    while (!output.includes('polling task queue') && Date.now() < deadline && worker.exitCode === null) await new Promise((r) => setTimeout(r, 200));
    expect(output).toContain('SCRIPTED model');
    expect(output).toContain('polling task queue');
    // Not the bundler's INFO lines nor the handoff worker's "No workflows registered" (issue 19, item 8).
    expect(output).not.toMatch(/webpack|\[INFO\]|No workflows registered/);
    // Its banner lists the scripted model's prompts (SCRIPTED_HELP); besides those, a few lines.
    const helpLines = new Set(SCRIPTED_HELP.split('\n'));
    expect(
      output
        .trim()
        .split('\n')
        .filter((line) => !helpLines.has(line)).length,
      output,
    ).toBeLessThan(8);

    const help = await durableAgent(harness, 'ask', 'hello');
    expect(help.out).toMatch(/scripted model[\s\S]*read <file>[\s\S]*agent <task>/);

    const read = await durableAgent(harness, 'ask', '--output-format', 'json', 'read notes.txt');
    expect(read.code).toBe(0);
    expect(JSON.parse(read.out).result).toMatch(/Here is what came back:[\s\S]*alpha[\s\S]*beta/);

    // No terminal to ask in: the Write is denied, as with claude -p.
    const write = await durableAgent(harness, 'ask', '--output-format', 'json', 'write out.txt hello there');
    const denied = JSON.parse(write.out);
    expect(denied.permission_denials.map((denial: { tool_name: string }) => denial.tool_name)).toEqual(['Write']);
    await expect(readFile(path.join(harness.workspace, 'out.txt'))).rejects.toThrow(/ENOENT/);

    const bash = await durableAgent(harness, 'ask', '--output-format', 'json', '--allowed-tools', 'Bash(echo:*)', 'run echo from-bash');
    expect(JSON.parse(bash.out).result).toContain('from-bash');

    const agent = await durableAgent(harness, 'ask', '--output-format', 'json', 'agent read notes.txt');
    const viaAgent = JSON.parse(agent.out);
    expect(viaAgent.result).toMatch(/Here is what came back:[\s\S]*alpha/);
    const children = [];
    for await (const execution of harness.client.workflow.list({ query: `WorkflowId STARTS_WITH '${viaAgent.session_id}--agent-'` }))
      children.push(execution.workflowId);
    expect(children).toHaveLength(1);

    // Claude Code's -p -c: a new one-shot conversation carries on from the workspace's latest one.
    const continued = await durableAgent(harness, '-p', '-c', '--output-format', 'json', 'hello again');
    expect(continued.code, continued.err).toBe(0);
    const next = JSON.parse(continued.out);
    expect(next.session_id).not.toBe(viaAgent.session_id);
    const transcript = await durableAgent(harness, 'transcript', next.session_id);
    expect(transcript.out).toContain('agent read notes.txt');
    expect(transcript.out).toContain('hello again');
  });
});

/** The assistant texts of a transcript, in order. */
function assistantTexts(messages: TranscriptMessage[]): string[] {
  return messages.flatMap((message) =>
    message.type === 'assistant' ? message.message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])) : [],
  );
}

function toolCalls(messages: TranscriptMessage[]): string[] {
  return messages.flatMap((message) =>
    message.type === 'assistant' ? message.message.content.flatMap((block) => (block.type === 'tool_use' ? [block.name] : [])) : [],
  );
}

describe('the scripted model in a real conversation (issue 32, item 5)', () => {
  it('carries on after a Ctrl-C and a /compact; runs a background command, a wakeup, a cron job and a background agent', async () => {
    harness = await createHarness({ respond: scriptedResponder });
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'alpha\nbeta\n');
    await harness.startWorker();
    const api = harness.api;
    const started = await api.start({ prompt: 'slow 60', config: harness.config({ wakeupMinimumSeconds: 1 }), taskQueue: harness.taskQueue });
    const id = started.conversationId;
    await eventually(
      () => api.transcript(id),
      (messages) => toolCalls(messages).includes('Bash'),
    );
    await api.abort(id);
    await api.waitForResult(id, started.inputUuid!);

    // The prompt after the interruption gets its own answer, not "That did not work: Interrupted by user".
    const afterAbort = await api.waitForResult(id, await api.send(id, 'read notes.txt'));
    expect(afterAbort.result).toMatch(/^Here is what came back:[\s\S]*alpha/);

    // /compact: the summary request gets a summary, the next prompt its own answer.
    const compaction = await api.compact(id);
    expect(compaction.compacted, JSON.stringify(compaction)).toBe(true);
    const afterCompact = await api.waitForResult(id, await api.send(id, 'glob *.txt'));
    expect(afterCompact.result).toMatch(/^Here is what came back:[\s\S]*notes\.txt/);

    // A background command, then its output read with TaskOutput.
    const background = await api.waitForResult(id, await api.send(id, 'run in background sleep 1; echo from-background'));
    // TaskOutput blocks until the command ends, when its notification is also due: under load the notification can
    // join the query before the next model call (by design), and the scripted model then answers it. Either way the output came back.
    expect(background.result).toMatch(
      /Here is what came back:[\s\S]*from-background|^Background command "[^"]*echo from-background" completed \(exit code 0\)/,
    );

    // A cron job is scheduled (its Schedule exists; it is deleted with the conversation).
    const cron = await api.waitForResult(id, await api.send(id, 'every 5m read notes.txt'));
    expect(cron.result).toMatch(/Here is what came back:\nScheduled recurring job/);

    // A wakeup: its prompt comes back by itself and is answered (a second Read).
    const wakeup = await api.waitForResult(id, await api.send(id, 'wakeup 1s read notes.txt'));
    expect(wakeup.result).toMatch(/Here is what came back:\nWakeup scheduled in 1 s/);
    const reads = toolCalls(await api.transcript(id)).filter((name) => name === 'Read').length;
    await eventually(
      () => api.transcript(id),
      (messages) => toolCalls(messages).filter((name) => name === 'Read').length > reads,
    );

    // A background agent: launched at once, and its answer comes back as a notification, answered in words.
    const agent = await api.waitForResult(id, await api.send(id, 'agent in background read notes.txt'));
    expect(agent.result).toMatch(/Async agent launched/);
    await eventually(
      () => api.transcript(id),
      (messages) => assistantTexts(messages).some((text) => /^Agent "read notes.txt" completed\. It said:[\s\S]*alpha/.test(text)),
    );
    const texts = assistantTexts(await api.transcript(id));
    expect(texts.join('\n')).not.toMatch(/That did not work|I'll look at the code/);
    await api.end(id);
  });
});
