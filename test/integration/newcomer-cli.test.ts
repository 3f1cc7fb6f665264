/**
 * The installed CLI run as `npm run cli` runs it (in the package's directory, INIT_CWD the
 * person's): the default workspace is theirs and status shows it (issue 19, item 10); `list` is
 * newest first, shows the workspace, takes --json, and any command takes a short id (item 11).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newConversationId } from '../../client/api';
import { type Harness, REPO_ROOT, createHarness } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function npmRunCli(h: Harness, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const env = { ...process.env, TEMPORAL_ADDRESS: h.address, DURABLE_AGENT_TASK_QUEUE: h.taskQueue, INIT_CWD: h.workspace, npm_lifecycle_event: 'cli' };
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(REPO_ROOT, 'bin', 'durable-agent.js'), ...args], { cwd: REPO_ROOT, env, timeout: 90_000 }, (error, out, err) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out, err }),
    );
  });
}

describe('the CLI from where the person stands', () => {
  it('works in the directory it was run from, lists newest first with workspaces, and takes short ids', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'One.' }] }, { content: [{ type: 'text', text: 'Two.' }] }] });
    await harness.startWorker();
    // A conversation that stays open (awaiting input), then a one-shot ask that ends after it.
    const started = await npmRunCli(harness, 'start', '--follow', 'the open one');
    expect(started.code, started.err).toBe(0);
    const openId = started.out.split('\n')[0].trim();
    const asked = await npmRunCli(harness, 'ask', '--output-format', 'json', 'the newest one');
    expect(asked.code, asked.err).toBe(0);
    const askId = JSON.parse(asked.out).session_id as string;

    const listed = await npmRunCli(harness, 'list', '--limit', '1', '--json', '--workspace', '.');
    expect(listed.code, listed.err).toBe(0);
    const [newest] = JSON.parse(listed.out);
    expect(newest).toMatchObject({ id: askId, workspace: harness.workspace, firstPrompt: 'the newest one' });

    // This workspace's only: other test files run at the same time on the same server, and their conversations are newer.
    const table = await npmRunCli(harness, 'list', '--limit', '5', '--workspace', '.');
    expect(table.out).toMatch(/WORKSPACE/);
    const ids = table.out
      .split('\n')
      .slice(1)
      .map((line) => line.split(/\s+/)[0])
      .filter(Boolean);
    expect(ids).toEqual([askId, openId]);

    const short = openId.slice(-8);
    const status = await npmRunCli(harness, 'status', short);
    expect(status.code, status.err).toBe(0);
    expect(status.out).toContain(`conversation  ${openId}`);
    expect(status.out).toContain(`workspace     ${harness.workspace}`);
  });

  it('names a conversation without a prompt plainly', () => {
    expect(newConversationId()).toMatch(/^conversation-[0-9a-f]{8}$/);
    expect(newConversationId('Fix the bug')).toMatch(/^conversation-fix-the-bug-[0-9a-f]{8}$/);
  });
});
