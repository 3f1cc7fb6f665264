/**
 * Issue 29, class 7, end to end through the CLI with a real worker and the dev server, asserted by
 * canary: a workspace's `CLAUDE.md` linked to `~/.ssh/id_rsa`, a rule in `.claude/rules/` linked
 * to a secret outside the workspace, and an `@import` of a file under a Read deny rule never reach
 * the model's request (nor the conversation's history); the session's warnings name each file it
 * did not read; a memory file inside the workspace still reaches the model.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli, isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness } from '../helpers/harness';

isolateEnvironment();
let harness: Harness | undefined;
let home: string;
let outside: string;
beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-memory-home-'));
  outside = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-memory-outside-'));
  process.env.HOME = home;
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await rm(outside, { recursive: true, force: true });
});

describe('memory files on their real path', () => {
  it('a CLAUDE.md, a rule and an import that lead to secrets never reach the model or the history; the person is told', async () => {
    const keyCanary = `ssh-key-canary-${randomUUID()}`;
    const outsideCanary = `outside-canary-${randomUUID()}`;
    const deniedCanary = `denied-canary-${randomUUID()}`;
    const insideCanary = `inside-canary-${randomUUID()}`;
    await mkdir(path.join(home, '.ssh'));
    await writeFile(path.join(home, '.ssh', 'id_rsa'), `-----BEGIN OPENSSH PRIVATE KEY-----\n${keyCanary}\n`);
    await writeFile(path.join(outside, 'notes.md'), `${outsideCanary}\n`);
    await mkdir(path.join(home, '.claude'));
    await writeFile(path.join(home, '.claude', 'settings.json'), JSON.stringify({ permissions: { deny: ['Read(./private/**)'] } }));

    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'Read the memory.' }] }] });
    const workspace = harness.workspace;
    await symlink(path.join(home, '.ssh', 'id_rsa'), path.join(workspace, 'CLAUDE.md'));
    await mkdir(path.join(workspace, '.claude', 'rules'), { recursive: true });
    await symlink(path.join(outside, 'notes.md'), path.join(workspace, '.claude', 'rules', 'notes.md'));
    await mkdir(path.join(workspace, 'private'));
    await writeFile(path.join(workspace, 'private', 'plan.md'), `${deniedCanary}\n`);
    await writeFile(path.join(workspace, 'CLAUDE.local.md'), `Use tabs. ${insideCanary}\n\nSee @private/plan.md\n`);

    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();
    const run = await cli('-p', '--cwd', workspace, '--output-format', 'json', 'what do the memory files say?');
    expect(run.code).toBe(0);

    const request = JSON.stringify(harness.model.requests[0].body);
    expect(request).toContain(insideCanary);
    for (const canary of [keyCanary, outsideCanary, deniedCanary]) expect(request).not.toContain(canary);
    // Every payload of the history as text (payload data are bytes), so a canary cannot hide in an encoding.
    const history = JSON.stringify(await harness.client.workflow.getHandle(JSON.parse(run.out).session_id).fetchHistory(), (_key, value: unknown) =>
      value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : value,
    );
    // (The memory files' text reaches the model by reference, not through history; the secrets are in neither.)
    for (const canary of [keyCanary, outsideCanary, deniedCanary]) expect(history).not.toContain(canary);

    // The person is told which files were not read (the session's warnings in its events feed: chat shows them as [warning] lines).
    const feed = JSON.stringify((await harness.api.events(JSON.parse(run.out).session_id)).events);
    for (const canary of [keyCanary, outsideCanary, deniedCanary]) expect(feed).not.toContain(canary);
    const notices = [...feed.matchAll(/Memory file not read: ([^ ]+) /g)].map((match) => match[1]);
    expect(new Set(notices)).toEqual(
      new Set([path.join(workspace, 'CLAUDE.md'), path.join(workspace, '.claude', 'rules', 'notes.md'), path.join(workspace, 'private', 'plan.md')]),
    );
  }, 120_000);
});
