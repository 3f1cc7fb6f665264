/**
 * Permissions with durable approvals (issue 9) and bounded paths (issue 12 defect 3), on the dev
 * server with the strict scripted model server: a tool that needs permission waits (phase
 * `awaiting_permission`) for the `decidePermission` update; decisions are exactly once, survive a
 * worker that is down and continue-as-new; `ask` without a terminal denies at once and lists the
 * denials; paths outside the workspace are denied when nobody can approve; a malformed
 * settings.json ends the conversation with its position (issue 29: fail closed).
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConversationConfigInput } from '../../common/config';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { promptForPermissions } from '../../client/commands/permissions';
import { cli, isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness, eventually, expectValidApiOrder } from '../helpers/harness';

isolateEnvironment();
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/** The tool_result blocks of a request's last user message. */
function toolResults(request: RecordedRequest): Array<{ tool_use_id: string; content: string; is_error?: boolean }> {
  const last = request.body.messages[request.body.messages.length - 1] as { content: unknown };
  return Array.isArray(last.content) ? ((last.content as Array<{ type: string }>).filter((block) => block.type === 'tool_result') as never) : [];
}

/** Starts a conversation in `default` mode where someone can approve (as `durable-agent start`). */
async function start(h: Harness, prompt: string, overrides: Partial<ConversationConfigInput> = {}) {
  // For the in-process CLI (`approve`, `deny`).
  process.env.TEMPORAL_ADDRESS = h.address;
  process.env.DURABLE_AGENT_TASK_QUEUE = h.taskQueue;
  return h.api.start({ prompt, config: h.config({ permissions: {}, ...overrides }), taskQueue: h.taskQueue });
}

async function waitingFor(h: Harness, conversationId: string, toolUseId: string) {
  // A subagent's child workflow may not exist yet.
  const status = await eventually(
    () => h.api.status(conversationId).catch(() => undefined),
    (current) => current?.phase === 'awaiting_permission' && (current.pendingPermissions ?? []).some((pending) => pending.toolUseId === toolUseId),
  );
  return status!;
}

describe('durable approvals', () => {
  it('waits for approval, rejects an unknown id, answers a duplicate with the recorded decision', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_write_1', name: 'Write', input: { file_path: 'approved.txt', content: 'yes\n' } }] },
        { content: [{ type: 'text', text: 'Wrote it.' }] },
      ],
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await start(harness, 'write approved.txt');

    const status = await waitingFor(harness, conversationId, 'toolu_write_1');
    expect(status.pendingPermissions).toEqual([
      {
        toolUseId: 'toolu_write_1',
        toolName: 'Write',
        input: { file_path: 'approved.txt', content: 'yes\n' },
        since: expect.any(Number),
        reason: 'Write changes files',
      },
    ]);
    expect(status.permissionMode).toBe('default');
    expect(await exists(path.join(harness.workspace, 'approved.txt'))).toBe(false);

    const unknown = await harness.api.decidePermission(conversationId, { toolUseId: 'toolu_nope', behavior: 'allow' }).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((unknown as WorkflowUpdateFailedError).cause?.message).toContain(
      'No permission request for tool_use_id "toolu_nope" in this conversation. Waiting: toolu_write_1 (Write).',
    );
    expect((unknown as WorkflowUpdateFailedError).cause).toMatchObject({ type: 'UnknownPermissionRequest' });
    const unknownByCli = await cli('approve', conversationId, 'toolu_nope');
    expect(unknownByCli).toMatchObject({ code: 1, err: expect.stringContaining('No permission request for tool_use_id "toolu_nope"') });
    const malformed = await harness.api
      .decidePermission(conversationId, { toolUseId: 'toolu_write_1', behavior: 'maybe' as 'allow' })
      .catch((error: unknown) => error);
    expect((malformed as WorkflowUpdateFailedError).cause).toMatchObject({
      type: 'InvalidPermissionDecision',
      message: 'decidePermission: behavior must be "allow" or "deny", got "maybe"',
    });

    const approved = await cli('approve', conversationId, 'toolu_write_1');
    expect(approved).toMatchObject({ code: 0, out: 'Write toolu_write_1 allowed\n  Write(approved.txt)\n    1   yes\n' });
    const duplicate = await harness.api.decidePermission(conversationId, { toolUseId: 'toolu_write_1', behavior: 'deny', message: 'changed my mind' });
    expect(duplicate).toMatchObject({ toolUseId: 'toolu_write_1', behavior: 'allow', decidedBy: 'user' });

    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'Wrote it.', permission_denials: [] });
    expect(await readFile(path.join(harness.workspace, 'approved.txt'), 'utf8')).toBe('yes\n');
    expect((await harness.api.status(conversationId)).pendingPermissions).toEqual([]);
  }, 120_000);

  it('parallel requests wait and are decided independently', async () => {
    const outsideDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-outside-'));
    await writeFile(path.join(outsideDir, 'one.txt'), 'first outside file\n');
    await writeFile(path.join(outsideDir, 'two.txt'), 'second outside file\n');
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'tool_use', id: 'toolu_par_1', name: 'Read', input: { file_path: path.join(outsideDir, 'one.txt') } },
            { type: 'tool_use', id: 'toolu_par_2', name: 'Read', input: { file_path: path.join(outsideDir, 'two.txt') } },
          ],
        },
        { content: [{ type: 'text', text: 'Read one of them.' }] },
      ],
    });
    try {
      await harness.startWorker();
      const { conversationId, inputUuid } = await start(harness, 'read both');
      await waitingFor(harness, conversationId, 'toolu_par_1');
      const both = await waitingFor(harness, conversationId, 'toolu_par_2');
      expect(both.pendingPermissions!.map((pending) => pending.toolUseId).sort()).toEqual(['toolu_par_1', 'toolu_par_2']);
      expect(both.pendingPermissions![0].reason).toContain('is outside the working directories');

      await harness.api.decidePermission(conversationId, { toolUseId: 'toolu_par_2', behavior: 'allow' });
      const oneLeft = await eventually(
        () => harness!.api.status(conversationId),
        (status) => status.pendingPermissions?.length === 1,
      );
      expect(oneLeft).toMatchObject({ phase: 'awaiting_permission', pendingPermissions: [{ toolUseId: 'toolu_par_1' }] });
      await harness.api.decidePermission(conversationId, { toolUseId: 'toolu_par_1', behavior: 'deny' });

      const result = await harness.api.waitForResult(conversationId, inputUuid!);
      expect(result.permission_denials).toEqual([
        { tool_name: 'Read', tool_use_id: 'toolu_par_1', tool_input: { file_path: path.join(outsideDir, 'one.txt') } },
      ]);
      const [first, second] = toolResults(harness.model.requests[1]);
      expect(first).toMatchObject({ tool_use_id: 'toolu_par_1', is_error: true });
      expect(JSON.stringify(second)).toContain('second outside file');
    } finally {
      await rm(outsideDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('a denial gives the model the rejection and the message, runs nothing, and lands in permission_denials', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_rm_1', name: 'Bash', input: { command: 'rm -rf data' } }] },
        { content: [{ type: 'text', text: 'I will use the trash instead.' }] },
      ],
    });
    await mkdir(path.join(harness.workspace, 'data'));
    await harness.startWorker();
    const { conversationId, inputUuid } = await start(harness, 'clean up');
    await waitingFor(harness, conversationId, 'toolu_rm_1');

    const denied = await cli('deny', conversationId, 'toolu_rm_1', 'use', 'the', 'trash');
    expect(denied).toMatchObject({ code: 0, out: 'Bash toolu_rm_1 denied\n  Bash(rm -rf data)\n' });
    const result = await harness.api.waitForResult(conversationId, inputUuid!);

    expect(result.permission_denials).toEqual([{ tool_name: 'Bash', tool_use_id: 'toolu_rm_1', tool_input: { command: 'rm -rf data' } }]);
    expect(await exists(path.join(harness.workspace, 'data'))).toBe(true);
    const [answered] = toolResults(harness.model.requests[1]);
    expect(answered).toMatchObject({ tool_use_id: 'toolu_rm_1', is_error: true });
    expect(JSON.stringify(answered.content)).toContain("The user doesn't want to proceed with this tool use");
    expect(JSON.stringify(answered.content)).toContain('use the trash');
    expectValidApiOrder(harness.model.requests[1]);
  }, 120_000);

  it('a decision sent while no worker runs is applied when one comes back', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_down_1', name: 'Write', input: { file_path: 'later.txt', content: 'after the restart\n' } }] },
        { content: [{ type: 'text', text: 'Done after the restart.' }] },
      ],
    });
    const first = await harness.startWorker();
    const { conversationId, inputUuid } = await start(harness, 'write later.txt');
    await waitingFor(harness, conversationId, 'toolu_down_1');
    await harness.stopWorker(first);

    // The update waits on the server until a worker accepts it.
    const decision = harness.api.decidePermission(conversationId, { toolUseId: 'toolu_down_1', behavior: 'allow' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await harness.startWorker();
    expect(await decision).toMatchObject({ behavior: 'allow', decidedBy: 'user' });
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'Done after the restart.' });
    expect(await readFile(path.join(harness.workspace, 'later.txt'), 'utf8')).toBe('after the restart\n');
    // Exactly once: the replayed history holds one decision, and a duplicate gets it back.
    expect(await harness.api.decidePermission(conversationId, { toolUseId: 'toolu_down_1', behavior: 'deny' })).toMatchObject({ behavior: 'allow' });
  }, 120_000);

  it('decisions and --always rules survive continue-as-new', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_can_1', name: 'Bash', input: { command: 'touch made-once' } }] },
        { content: [{ type: 'text', text: 'Made it.' }] },
        { content: [{ type: 'tool_use', id: 'toolu_can_2', name: 'Bash', input: { command: 'touch made-once' } }] },
        { content: [{ type: 'text', text: 'Made it again without asking.' }] },
      ],
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await start(harness, 'touch a file', { continueAsNewAfterEvents: 10 });
    await waitingFor(harness, conversationId, 'toolu_can_1');
    const always = await cli('approve', '--always', conversationId, 'toolu_can_1');
    expect(always).toMatchObject({
      code: 0,
      out: 'Bash toolu_can_1 allowed; allow rule Bash(touch made-once) added for this session\n  Bash(touch made-once)\n',
    });
    await harness.api.waitForResult(conversationId, inputUuid!);

    const again = await harness.api.send(conversationId, 'once more');
    const result = await harness.api.waitForResult(conversationId, again);
    expect(result).toMatchObject({ subtype: 'success', result: 'Made it again without asking.', permission_denials: [] });
    const status = await harness.api.status(conversationId);
    expect(status.continuedAsNewCount).toBeGreaterThanOrEqual(1);
    // The decision taken in an earlier run is still the recorded one.
    expect(await harness.api.decidePermission(conversationId, { toolUseId: 'toolu_can_1', behavior: 'deny' })).toMatchObject({
      behavior: 'allow',
      addedRule: 'Bash(touch made-once)',
    });
  }, 120_000);

  it('abort while waiting ends the wait cleanly; a wait that times out is a denial', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_abort_1', name: 'Bash', input: { command: 'touch never' } }] },
        { content: [{ type: 'tool_use', id: 'toolu_timeout_1', name: 'Bash', input: { command: 'touch never-either' } }] },
        { content: [{ type: 'text', text: 'Nobody answered.' }] },
      ],
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await start(harness, 'touch', { permissions: { approvalTimeoutMs: 2_000 } });
    await waitingFor(harness, conversationId, 'toolu_abort_1');
    await harness.api.abort(conversationId);
    const aborted = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(aborted).toMatchObject({ terminal_reason: 'aborted_tools', permission_denials: [] });
    expect(await harness.api.status(conversationId)).toMatchObject({ phase: 'awaiting_input', pendingPermissions: [] });

    const next = await harness.api.send(conversationId, 'try again');
    const timedOut = await harness.api.waitForResult(conversationId, next);
    expect(timedOut).toMatchObject({ result: 'Nobody answered.', permission_denials: [{ tool_name: 'Bash', tool_use_id: 'toolu_timeout_1' }] });
    expect(JSON.stringify(toolResults(harness.model.requests[2])[0].content)).toContain('was not given within');
    expect(await exists(path.join(harness.workspace, 'never-either'))).toBe(false);
  }, 120_000);
});

describe('nobody to approve', () => {
  it('a large result saved outside the workspace can be read back without asking; other outside files still cannot', async () => {
    let savedPath = '';
    harness = await createHarness({
      respond: (request) => {
        const step = harness!.model.requests.length;
        if (step === 1) return { content: [{ type: 'tool_use', id: 'toolu_big_1', name: 'Bash', input: { command: 'seq 1 20000' } }] };
        if (step === 2) {
          savedPath = /Full output saved to: (\S+)/.exec(toolResults(request)[0]?.content ?? '')?.[1] ?? '';
          return {
            content: [
              { type: 'tool_use', id: 'toolu_read_saved', name: 'Read', input: { file_path: savedPath || '/nonexistent' } },
              { type: 'tool_use', id: 'toolu_read_other', name: 'Read', input: { file_path: path.join(path.dirname(savedPath || '/x'), 'other.txt') } },
            ],
          };
        }
        return { content: [{ type: 'text', text: 'Read the saved output.' }] };
      },
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await start(harness, 'count', { permissions: { canApprove: false, allow: ['Bash(seq:*)'] } });
    const result = await harness.api.waitForResult(conversationId, inputUuid!);

    expect(savedPath).toMatch(/tool-results/);
    expect(path.relative(harness.workspace, savedPath).startsWith('..')).toBe(true); // outside the workspace
    const [saved, other] = toolResults(harness.model.requests[2]);
    expect(saved.is_error ?? false).toBe(false);
    expect(saved.content).toMatch(/^\s+1\t1\n\s+2\t2\n/); // the saved output, read back
    expect(other.is_error).toBe(true);
    expect(result.permission_denials.map((denial) => denial.tool_use_id)).toEqual(['toolu_read_other']);
  });

  it('ask without a terminal denies at once, lists the denials, and never touches paths outside the workspace', async () => {
    const outside = `/tmp/durable-agent-outside-${randomUUID()}.txt`;
    const escape = `escape-${randomUUID()}.txt`;
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'tool_use', id: 'toolu_out_1', name: 'Write', input: { file_path: outside, content: 'x' } },
            { type: 'tool_use', id: 'toolu_out_2', name: 'Write', input: { file_path: `../${escape}`, content: 'x' } },
            { type: 'tool_use', id: 'toolu_out_3', name: 'Read', input: { file_path: '/etc/shadow' } },
            { type: 'tool_use', id: 'toolu_in_1', name: 'Read', input: { file_path: 'inside.txt' } },
          ],
        },
        { content: [{ type: 'text', text: 'Could not do it.' }] },
      ],
    });
    await writeFile(path.join(harness.workspace, 'inside.txt'), 'readable\n');
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();

    const asked = await cli('ask', '--cwd', harness.workspace, '--output-format', 'json', 'write outside');
    expect(asked.code).toBe(0);
    const result = JSON.parse(asked.out);
    expect(result.permission_denials).toEqual([
      { tool_name: 'Write', tool_use_id: 'toolu_out_1', tool_input: { file_path: outside, content: 'x' } },
      { tool_name: 'Write', tool_use_id: 'toolu_out_2', tool_input: { file_path: `../${escape}`, content: 'x' } },
      { tool_name: 'Read', tool_use_id: 'toolu_out_3', tool_input: { file_path: '/etc/shadow' } },
    ]);
    expect(await exists(outside)).toBe(false);
    expect(await exists(path.join(path.dirname(harness.workspace), escape))).toBe(false);
    const results = toolResults(harness.model.requests[1]);
    expect(results.map((block) => block.is_error ?? false)).toEqual([true, true, true, false]);
    expect(JSON.stringify(results[0].content)).toContain('nobody is available to approve it');
    expect(JSON.stringify(results[3].content)).toContain('readable');
  }, 120_000);

  it('--allowed-tools, --disallowed-tools and --permission-mode decide without asking', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'tool_use', id: 'toolu_rule_1', name: 'Bash', input: { command: 'touch allowed-by-rule' } },
            { type: 'tool_use', id: 'toolu_rule_2', name: 'Write', input: { file_path: 'accepted.txt', content: 'ok' } },
          ],
        },
        { content: [{ type: 'tool_use', id: 'toolu_rule_3', name: 'Read', input: { file_path: 'accepted.txt' } }] },
        { content: [{ type: 'text', text: 'Done.' }] },
      ],
    });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();
    const asked = await cli(
      'ask',
      '--cwd',
      harness.workspace,
      '--output-format',
      'json',
      '--permission-mode',
      'acceptEdits',
      '--allowed-tools',
      'Bash(touch:*)',
      '--disallowed-tools',
      'Read(accepted.txt)',
      'go',
    );
    const result = JSON.parse(asked.out);
    expect(result.permission_denials).toEqual([{ tool_name: 'Read', tool_use_id: 'toolu_rule_3', tool_input: { file_path: 'accepted.txt' } }]);
    expect(await exists(path.join(harness.workspace, 'allowed-by-rule'))).toBe(true);
    expect(await readFile(path.join(harness.workspace, 'accepted.txt'), 'utf8')).toBe('ok');
    expect(JSON.stringify(toolResults(harness.model.requests[2])[0].content)).toContain('denied by the cliArg rule Read(accepted.txt)');

    const bad = await cli('ask', '--cwd', harness.workspace, '--allowed-tools', 'Bash(npm', 'go');
    expect(bad).toMatchObject({ code: 2, err: expect.stringContaining('--allowed-tools: Invalid permission rule "Bash(npm"') });
    const badMode = await cli('ask', '--cwd', harness.workspace, '--permission-mode', 'yolo', 'go');
    expect(badMode).toMatchObject({
      code: 2,
      err: expect.stringContaining('--permission-mode must be one of default, acceptEdits, plan, bypassPermissions, dontAsk'),
    });
  }, 120_000);
});

describe('settings files', () => {
  it('a malformed settings.json ends the conversation with the file and position (issue 29: fail closed, never fewer rules)', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_set_1', name: 'Bash', input: { command: 'touch from-local-rule' } }] },
        { content: [{ type: 'text', text: 'Settings survived.' }] },
      ],
    });
    await mkdir(path.join(harness.workspace, '.claude'));
    await writeFile(path.join(harness.workspace, '.claude', 'settings.json'), '{\n  "permissions": { "allow": ["Bash"] \n');
    await writeFile(path.join(harness.workspace, '.claude', 'settings.local.json'), JSON.stringify({ permissions: { allow: ['Bash(touch:*)'] } }));
    await harness.startWorker();
    const { conversationId } = await start(harness, 'touch', { permissions: { canApprove: false } });
    const failure = await harness.client.workflow
      .getHandle(conversationId)
      .result()
      .catch((error: unknown) => error as { cause?: { type?: string; message?: string } });
    expect(failure).toMatchObject({ cause: { type: 'InvalidSettings', message: expect.stringMatching(/\.claude\/settings\.json:3:1: not valid JSON/) } });
    expect(harness.model.requests).toHaveLength(0);
    expect(await exists(path.join(harness.workspace, 'from-local-rule'))).toBe(false);
  }, 120_000);

  it('--setting-sources user refuses the workspace settings (rules and Stop hooks)', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_src_1', name: 'Bash', input: { command: 'touch not-allowed' } }] },
        { content: [{ type: 'text', text: 'Denied, as configured.' }] },
      ],
    });
    await mkdir(path.join(harness.workspace, '.claude'));
    await writeFile(
      path.join(harness.workspace, '.claude', 'settings.json'),
      JSON.stringify({ permissions: { allow: ['Bash'] }, hooks: { Stop: [{ hooks: [{ type: 'command', command: 'touch hook-ran; exit 2' }] }] } }),
    );
    await harness.startWorker();
    const { conversationId, inputUuid } = await start(harness, 'touch', { permissions: { canApprove: false }, settingSources: ['user'] });
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result).toMatchObject({ result: 'Denied, as configured.', permission_denials: [{ tool_use_id: 'toolu_src_1' }] });
    expect(await exists(path.join(harness.workspace, 'hook-ran'))).toBe(false);
    expect(await exists(path.join(harness.workspace, 'not-allowed'))).toBe(false);
  }, 120_000);
});

describe('subagents', () => {
  it('a subagent inherits mode and rules; its request is approved on the child and listed by the parent status', async () => {
    const toolNames = (request: RecordedRequest): string[] => request.body.tools.map((tool: { name: string }) => tool.name);
    const isChild = (request: RecordedRequest) => !toolNames(request).includes('Agent');
    const answered = (request: RecordedRequest) => JSON.stringify(request.body.messages.at(-1)?.content ?? '').includes('tool_result');
    harness = await createHarness({
      respond: (request) => {
        if (isChild(request)) {
          if (answered(request)) return { content: [{ type: 'text', text: 'Child wrote the file.' }] };
          return { content: [{ type: 'tool_use', id: 'toolu_child_write', name: 'Write', input: { file_path: 'child.txt', content: 'from the child\n' } }] };
        }
        if (answered(request)) return { content: [{ type: 'text', text: 'The agent is done.' }] };
        return {
          content: [
            {
              type: 'tool_use',
              id: 'toolu_agent_p',
              name: 'Agent',
              input: { description: 'write a file', prompt: 'Write child.txt', subagent_type: 'general-purpose' },
            },
          ],
        };
      },
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await start(harness, 'delegate', { permissions: { allow: ['Read'] } });
    const childId = `${conversationId}--agent-toolu_agent_p`;
    const childStatus = await waitingFor(harness, childId, 'toolu_child_write');
    expect(childStatus.permissionMode).toBe('default');

    const parentStatus = await cli('status', conversationId);
    expect(parentStatus.out).toContain(`approve: durable-agent approve ${childId} toolu_child_write`);
    expect(parentStatus.out).toContain('(subagent)');
    const parentFeed = await harness.api.events(conversationId);
    expect(JSON.stringify(parentFeed.events)).toContain('Waiting for permission: Write');

    expect(await cli('approve', childId, 'toolu_child_write')).toMatchObject({ code: 0 });
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'The agent is done.' });
    expect(await readFile(path.join(harness.workspace, 'child.txt'), 'utf8')).toBe('from the child\n');
  }, 120_000);
});

describe('ask in a terminal', () => {
  it('asks inline (y / n / always) and sends each answer as a decision', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_tty_1', name: 'Bash', input: { command: 'touch tty-one' } }] },
        { content: [{ type: 'tool_use', id: 'toolu_tty_2', name: 'Bash', input: { command: 'touch tty-two' } }] },
        { content: [{ type: 'text', text: 'One yes, one no.' }] },
      ],
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await start(harness, 'touch two files');
    const answers = ['maybe', 'y', 'n'];
    const questions: string[] = [];
    let printed = '';
    const stop = new AbortController();
    const prompting = promptForPermissions(
      harness.api,
      conversationId,
      stop.signal,
      (text) => (printed += `${text}\n`),
      async (question) => {
        questions.push(question);
        return answers.shift() ?? 'n';
      },
    );
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    stop.abort();
    await prompting;

    expect(result).toMatchObject({ result: 'One yes, one no.', permission_denials: [{ tool_name: 'Bash', tool_use_id: 'toolu_tty_2' }] });
    expect(questions).toEqual(['Allow? [y]es / [n]o / [a]lways: ', 'Allow? [y]es / [n]o / [a]lways: ', 'Allow? [y]es / [n]o / [a]lways: ']); // "maybe" is asked again
    expect(printed).toContain('⚠ Bash(touch tty-one) needs permission: ');
    expect(printed).toContain('Bash toolu_tty_1 allowed');
    expect(printed).toContain('Bash toolu_tty_2 denied');
    expect(await exists(path.join(harness.workspace, 'tty-one'))).toBe(true);
    expect(await exists(path.join(harness.workspace, 'tty-two'))).toBe(false);
  }, 120_000);
});
