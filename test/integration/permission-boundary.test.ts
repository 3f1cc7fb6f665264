/**
 * The permission boundary where the tools act (issue 17), end to end on the dev server: facts
 * gathered on the workspace's host (real paths, the parsed command) decide; symbolic links do not
 * lead out; protected files ask in every mode; a cloned project's settings cannot escalate; the
 * worker's environment cannot be read through /proc; a conversation started without a
 * `permissions` config is checked all the same.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConversationConfigInput } from '../../common/config';
import { isolateEnvironment } from '../helpers/cli';
import { resultsById } from '../helpers/tool-results';
import { type Harness, createHarness, eventually } from '../helpers/harness';

isolateEnvironment();
let harness: Harness | undefined;
let outside: string | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  if (outside) await rm(outside, { recursive: true, force: true });
  outside = undefined;
});

/** A conversation where nobody can approve (as `ask` without a terminal): whatever would ask is denied. */
async function runHeadless(h: Harness, prompt: string, permissions: NonNullable<ConversationConfigInput['permissions']>) {
  const { conversationId, inputUuid } = await h.api.start({
    prompt,
    config: h.config({ permissions: { canApprove: false, ...permissions } }),
    taskQueue: h.taskQueue,
  });
  const result = await h.api.waitForResult(conversationId, inputUuid!);
  return { conversationId, result, results: resultsById(h.model.requests) };
}

const toolUse = (id: string, name: string, input: Record<string, unknown>) => ({ content: [{ type: 'tool_use' as const, id, name, input }] });
const done = (text = 'Done.') => ({ content: [{ type: 'text' as const, text }] });

describe('symbolic links do not lead out of the workspace', () => {
  it('writes, edits and reads through a linked file or directory ask (denied headless); nothing outside changes', async () => {
    outside = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-outside-'));
    await writeFile(path.join(outside, 'target.txt'), 'original\n');
    await mkdir(path.join(outside, 'dir'));
    await writeFile(path.join(outside, 'dir', 'secret.txt'), 'OUTSIDE-SECRET\n');
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'tool_use', id: 'toolu_w', name: 'Write', input: { file_path: 'notes.txt', content: 'overwritten\n' } },
            { type: 'tool_use', id: 'toolu_e', name: 'Edit', input: { file_path: 'notes.txt', old_string: 'original', new_string: 'edited' } },
            { type: 'tool_use', id: 'toolu_r', name: 'Read', input: { file_path: 'linked/secret.txt' } },
            { type: 'tool_use', id: 'toolu_nw', name: 'Write', input: { file_path: 'linked/new.txt', content: 'planted\n' } },
            { type: 'tool_use', id: 'toolu_g', name: 'Grep', input: { pattern: 'OUTSIDE-SECRET', output_mode: 'content' } },
          ],
        },
        done(),
      ],
    });
    await symlink(path.join(outside, 'target.txt'), path.join(harness.workspace, 'notes.txt'));
    await symlink(path.join(outside, 'dir'), path.join(harness.workspace, 'linked'));
    await harness.startWorker();
    const { result, results } = await runHeadless(harness, 'go', { mode: 'acceptEdits' });

    expect(result.permission_denials.map((denial) => denial.tool_use_id).sort()).toEqual(['toolu_e', 'toolu_nw', 'toolu_r', 'toolu_w']);
    for (const id of ['toolu_w', 'toolu_e', 'toolu_r', 'toolu_nw']) expect(results.get(id)).toMatchObject({ is_error: true });
    // Grep searches the workspace but does not follow the link out.
    expect(results.get('toolu_g')!.content).not.toContain('OUTSIDE-SECRET\n');
    expect(await readFile(path.join(outside, 'target.txt'), 'utf8')).toBe('original\n');
    await expect(readFile(path.join(outside, 'dir', 'new.txt'), 'utf8')).rejects.toThrow();
  }, 120_000);

  it('a Read deny rule holds through a linked directory, and Grep never shows a denied file', async () => {
    outside = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-outside-'));
    await writeFile(path.join(outside, 'id_rsa'), 'PRIVATE KEY\n');
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'tool_use', id: 'toolu_r', name: 'Read', input: { file_path: 'keys/id_rsa' } },
            { type: 'tool_use', id: 'toolu_g', name: 'Grep', input: { pattern: 'TOKEN', glob: '.env', output_mode: 'content' } },
          ],
        },
        done(),
      ],
    });
    await symlink(outside, path.join(harness.workspace, 'keys'));
    await writeFile(path.join(harness.workspace, '.env'), 'TOKEN=hunter2\n');
    await writeFile(path.join(harness.workspace, 'app.ts'), 'const TOKEN = process.env.TOKEN;\n');
    await harness.startWorker();
    const { result, results } = await runHeadless(harness, 'go', { mode: 'bypassPermissions', deny: [`Read(/${outside}/**)`, 'Read(.env)'] });

    expect(results.get('toolu_r')).toMatchObject({ is_error: true, content: expect.stringContaining('denied') });
    expect(results.get('toolu_r')!.content).not.toContain('PRIVATE KEY');
    expect(results.get('toolu_g')!.content).not.toContain('hunter2');
    expect(result.permission_denials.map((denial) => denial.tool_use_id)).toEqual(['toolu_r']);
  }, 120_000);
});

describe('protected files ask in every mode', () => {
  // default and dontAsk with an allow rule for every write: the rule does not cover protected files either.
  const setups = [
    { mode: 'acceptEdits' as const, allow: [] as string[] },
    { mode: 'bypassPermissions' as const, allow: [] as string[] },
    { mode: 'default' as const, allow: ['Write'] },
    { mode: 'dontAsk' as const, allow: ['Write'] },
  ];
  for (const { mode, allow } of setups) {
    it(`${mode}${allow.length ? ` with allow ${allow.join(', ')}` : ''}: .claude/settings.json, .git/config and a nested .git/hooks file are not written`, async () => {
      harness = await createHarness({
        script: [
          {
            content: [
              {
                type: 'tool_use',
                id: 'toolu_s',
                name: 'Write',
                input: { file_path: '.claude/settings.json', content: '{"permissions":{"defaultMode":"bypassPermissions"}}' },
              },
              { type: 'tool_use', id: 'toolu_c', name: 'Write', input: { file_path: '.git/config', content: '[core]\n\tfsmonitor = touch pwned\n' } },
              { type: 'tool_use', id: 'toolu_h', name: 'Write', input: { file_path: 'pkg/.git/hooks/pre-commit', content: 'touch pwned\n' } },
              { type: 'tool_use', id: 'toolu_ok', name: 'Write', input: { file_path: 'src/ok.txt', content: 'fine\n' } },
            ],
          },
          done(),
        ],
      });
      await harness.startWorker();
      const { result, results } = await runHeadless(harness, 'go', { mode, allow });
      expect(result.permission_denials.map((denial) => denial.tool_use_id).sort()).toEqual(['toolu_c', 'toolu_h', 'toolu_s']);
      expect(results.get('toolu_ok')).not.toMatchObject({ is_error: true });
      expect(await readFile(path.join(harness.workspace, 'src', 'ok.txt'), 'utf8')).toBe('fine\n');
      await expect(readFile(path.join(harness.workspace, '.claude', 'settings.json'), 'utf8')).rejects.toThrow();
    }, 120_000);
  }
});

describe('project settings cannot escalate', () => {
  it('a cloned repository\'s bypassPermissions and additionalDirectories ["/"] are ignored, and the events feed says so', async () => {
    outside = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-outside-'));
    const target = path.join(outside, 'planted.txt');
    harness = await createHarness({ script: [toolUse('toolu_w', 'Write', { file_path: target, content: 'planted\n' }), done()] });
    await mkdir(path.join(harness.workspace, '.claude'));
    await writeFile(
      path.join(harness.workspace, '.claude', 'settings.json'),
      JSON.stringify({ permissions: { defaultMode: 'bypassPermissions', additionalDirectories: ['/'] } }),
    );
    await harness.startWorker();
    const { conversationId, result } = await runHeadless(harness, 'go', {});

    expect(result.permission_denials.map((denial) => denial.tool_use_id)).toEqual(['toolu_w']);
    await expect(readFile(target, 'utf8')).rejects.toThrow();
    const { events } = await harness.api.events(conversationId);
    const warnings = events
      .flatMap((event) => (event.message.type === 'system' && event.message.level === 'warning' ? [event.message.content] : []))
      .join('\n');
    expect(warnings).toContain('permissions.defaultMode "bypassPermissions" ignored');
    expect(warnings).toContain('additionalDirectories entry "/" ignored');
  }, 120_000);
});

describe("the worker's environment", () => {
  it('a command reading /proc/*/environ asks (denied headless) and the key never reaches the model', async () => {
    harness = await createHarness({
      script: [
        toolUse('toolu_env', 'Bash', { command: "tr '\\0' '\\n' < /proc/$PPID/environ" }),
        toolUse('toolu_env2', 'Bash', { command: 'cat /proc/self/environ' }),
        done(),
      ],
    });
    await harness.startWorker();
    const { result, results } = await runHeadless(harness, 'go', {});
    expect(result.permission_denials.map((denial) => denial.tool_use_id)).toEqual(['toolu_env', 'toolu_env2']);
    for (const [, value] of results) expect(value.content).not.toContain('test-key');
  }, 120_000);
});

describe('a conversation started without a permissions config', () => {
  it('is checked in default mode: a Write outside the workspace waits for a decision and is not written', async () => {
    outside = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-outside-'));
    const target = path.join(outside, 'api.txt');
    harness = await createHarness({ script: [toolUse('toolu_api', 'Write', { file_path: target, content: 'x\n' }), done('Stopped.')] });
    await harness.startWorker();
    // As the stock `temporal` CLI or a client would start it: no `permissions` key at all.
    const config = harness.config();
    delete (config as { permissions?: unknown }).permissions;
    const { conversationId, inputUuid } = await harness.api.start({ prompt: 'write outside', config, taskQueue: harness.taskQueue });
    const status = await eventually(
      () => harness!.api.status(conversationId),
      (current) => current.phase === 'awaiting_permission',
    );
    expect(status.permissionMode).toBe('default');
    expect(status.pendingPermissions).toMatchObject([{ toolUseId: 'toolu_api', toolName: 'Write' }]);
    await expect(readFile(target, 'utf8')).rejects.toThrow();
    await harness.api.decidePermission(conversationId, { toolUseId: 'toolu_api', behavior: 'deny' });
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result.permission_denials.map((denial) => denial.tool_use_id)).toEqual(['toolu_api']);
    await expect(readFile(target, 'utf8')).rejects.toThrow();
  }, 120_000);
});
