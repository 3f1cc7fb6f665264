/**
 * Issue 17 §10 through a real conversation: the rule engine lets everything through
 * (bypassPermissions), the model's Bash call tries to escape, and the OS sandbox stops it on the
 * worker. Real dev server, scripted model server, in-process worker, real bubblewrap.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { type Harness, createHarness, eventually, expectValidApiOrder } from '../helpers/harness';

const bwrapInstalled = ['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'].some((candidate) => existsSync(candidate));
if (!bwrapInstalled && process.env.CI) throw new Error('bubblewrap (bwrap) is not installed, but CI must run the sandbox tests');
if (!bwrapInstalled) console.warn('SKIPPING test/integration/sandbox.test.ts: bubblewrap (bwrap) is not installed (apt-get install bubblewrap)');

const FAKE_API_KEY = 'sk-ant-fake-integration-sandbox-42';
const saved = { HOME: process.env.HOME, ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY };
let base: string;
let home: string;
let outside: string;
let harness: Harness | undefined;

beforeAll(async () => {
  // Not under /tmp: the sandbox's /tmp is private, which would hide these trivially.
  base = await mkdtemp(path.join(existsSync('/var/tmp') ? '/var/tmp' : '/tmp', 'durable-agent-sandbox-it-'));
  home = path.join(base, 'home');
  outside = path.join(base, 'outside');
  await mkdir(path.join(home, '.ssh'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(home, '.ssh', 'id_rsa'), '-----BEGIN FAKE PRIVATE KEY-----\n');
  // The in-process worker's home and credentials.
  process.env.HOME = home;
  process.env.ANTHROPIC_API_KEY = FAKE_API_KEY;
});

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

afterAll(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await rm(base, { recursive: true, force: true });
});

type ToolResult = { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };
function toolResultsOf(request: RecordedRequest): ToolResult[] {
  const last = request.body.messages[request.body.messages.length - 1];
  return (last.content as ToolResult[]).filter((block) => block.type === 'tool_result');
}

describe.skipIf(!bwrapInstalled)('Bash in a conversation runs in the sandbox', () => {
  it('bypassPermissions lets the command run; the sandbox still stops the escape, the key and the worker environ', async () => {
    const escape = `echo inside > made.txt; touch ${home}/escaped; echo x > ${outside}/escaped; cat ~/.ssh/id_rsa; tr '\\0' '\\n' < /proc/$PPID/environ; cat /proc/*/environ | tr '\\0' '\\n' | grep -c ANTHROPIC_API_KEY`;
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_escape', name: 'Bash', input: { command: escape } }] },
        {
          content: [
            { type: 'tool_use', id: 'toolu_unsandboxed', name: 'Bash', input: { command: `touch ${home}/asked-for`, dangerouslyDisableSandbox: true } },
          ],
        },
        { content: [{ type: 'text', text: 'Done.' }] },
      ],
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await harness.api.start({
      prompt: 'try to get out',
      config: harness.config({ permissions: { mode: 'bypassPermissions' } }),
      taskQueue: harness.taskQueue,
    });
    // Running outside the sandbox is an escalation: it asks even in bypassPermissions (issue 17 §10).
    const waiting = await eventually(
      () => harness!.api.status(conversationId),
      (status) => (status.pendingPermissions ?? []).some((pending) => pending.toolUseId === 'toolu_unsandboxed'),
    );
    expect(waiting.pendingPermissions![0].reason).toContain('outside the sandbox');
    expect(existsSync(path.join(home, 'asked-for'))).toBe(false);
    await harness.api.decidePermission(conversationId, { toolUseId: 'toolu_unsandboxed', behavior: 'allow' });
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'Done.' });

    const [escaped] = toolResultsOf(harness.model.requests[1]);
    expect(escaped.tool_use_id).toBe('toolu_escape');
    expect(escaped.content).toMatch(/Read-only file system/);
    expect(escaped.content).not.toContain('FAKE PRIVATE KEY');
    expect(escaped.content).not.toContain(FAKE_API_KEY);
    expect(await readFile(path.join(harness.workspace, 'made.txt'), 'utf8')).toBe('inside\n');
    expect(existsSync(path.join(home, 'escaped'))).toBe(false);
    expect(existsSync(path.join(outside, 'escaped'))).toBe(false);

    // Claude Code's escape hatch: honoured once approved (allowUnsandboxedCommands defaults to true).
    const [unsandboxed] = toolResultsOf(harness.model.requests[2]);
    expect(unsandboxed).toMatchObject({ tool_use_id: 'toolu_unsandboxed' });
    expect(unsandboxed.is_error ?? false).toBe(false);
    expect(existsSync(path.join(home, 'asked-for'))).toBe(true);
    expectValidApiOrder(harness.model.requests[2]);
  }, 120_000);
});
