/**
 * The chat's own slash commands that ask the conversation or the server
 * (client/chat/local-commands.ts), on the dev server with a real worker and the scripted model:
 * /resume lists this workspace's other conversations newest first and switches, /permissions and
 * /config show the conversation's mode and model, /doctor checks the real setup, /export writes
 * the transcript. None of them reaches the model.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LocalCommandContext, runLocalCommand } from '../../client/chat/local-commands';
import { type Harness, createHarness, eventually, runToResult } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function context(h: Harness, conversationId: string): LocalCommandContext {
  return {
    api: h.api,
    conversationId,
    cwd: h.workspace,
    taskQueue: h.taskQueue,
    config: h.config(),
    env: { TEMPORAL_ADDRESS: h.address, PATH: process.env.PATH },
  };
}

const textOf = (result: Awaited<ReturnType<typeof runLocalCommand>>) => {
  if (result?.kind !== 'text') throw new Error(`expected text, got ${JSON.stringify(result)}`);
  return result.text;
};

describe('chat local commands against the server', () => {
  it('/resume, /permissions, /config, /doctor and /export', async () => {
    let answers = 0;
    harness = await createHarness({ respond: () => ({ content: [{ type: 'text', text: `Answer ${++answers}` }] }) });
    const h = harness;
    await h.startWorker();
    const older = await runToResult(h, 'Explain the build setup');
    const current = await runToResult(h, 'Fix the failing test in math.js');
    const requests = h.model.requests.length;
    const ctx = context(h, current.conversationId);

    // /resume: the other conversation of this workspace, with its first prompt and age; choosing it switches.
    const pick = await eventually(
      () => runLocalCommand('/resume', ctx),
      (result) => result?.kind === 'pick' && result.items.some((item) => item.value === older.conversationId),
    );
    if (pick?.kind !== 'pick') throw new Error('expected a pick');
    expect(pick.items.map((item) => item.value)).not.toContain(current.conversationId);
    const item = pick.items.find((candidate) => candidate.value === older.conversationId)!;
    expect(item.label).toBe('Explain the build setup');
    expect(item.hint).toMatch(/^(just now|\dm ago) · /);
    expect(await pick.choose(older.conversationId)).toEqual({ kind: 'switch', conversationId: older.conversationId });

    // /permissions and /config: what the conversation reports.
    const status = await h.api.status(current.conversationId);
    const permissions = textOf(await runLocalCommand('/permissions', ctx));
    expect(permissions).toContain(`Permission mode: ${status.permissionMode ?? 'default'}`);
    expect(permissions).toMatch(/Allow rules:\n/);
    const config = textOf(await runLocalCommand('/config', ctx));
    expect(config).toContain(`model              ${status.currentModel}  — the conversation`);
    expect(config).toContain(`task queue         ${h.taskQueue}  — the chat's connection`);

    // /doctor: the server and this test's worker are there; the tools are checked for real.
    const doctor = textOf(await runLocalCommand('/doctor', ctx));
    expect(doctor).toContain(`✓ Temporal: reachable at ${h.address}`);
    expect(doctor).toContain(`✓ Worker: polling task queue "${h.taskQueue}"`);
    expect(doctor).toMatch(/✓ ripgrep: ripgrep \d+/);
    expect(doctor).toMatch(/✓ git: git version/);
    const noWorker = textOf(await runLocalCommand('/doctor', { ...ctx, taskQueue: `${h.taskQueue}-nobody` }));
    expect(noWorker).toMatch(/✗ Worker: none polling task queue ".*-nobody"\n {4}→ start one/);

    // /export: the transcript as text, in the workspace by default, or where asked.
    const exported = textOf(await runLocalCommand('/export', ctx));
    const file = (await readdir(h.workspace)).find((name) => /^\d{4}-\d{2}-\d{2}-fix-the-failing-test-in-math\.txt$/.test(name));
    expect(file).toBeDefined();
    expect(exported).toBe(`Conversation exported to ${path.join(h.workspace, file!)}`);
    const body = await readFile(path.join(h.workspace, file!), 'utf8');
    expect(body).toContain('Fix the failing test in math.js');
    expect(body).toContain('Answer 2');
    expect(textOf(await runLocalCommand('/export notes/out.txt', ctx))).toMatch(/^Could not write .*notes\/out\.txt .*; here it is:\n\n[\s\S]*Answer 2/);
    expect(textOf(await runLocalCommand('/export out.txt', ctx))).toBe(`Conversation exported to ${path.join(h.workspace, 'out.txt')}`);

    expect(h.model.requests).toHaveLength(requests); // nothing reached the model
  });
});
