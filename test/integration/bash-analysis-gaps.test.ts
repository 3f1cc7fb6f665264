/**
 * Issue 29's Bash analysis gaps, end to end on the dev server with a real worker and bubblewrap:
 * read-only-looking commands that execute (a `BASH_CMDS` entry, a declaration builtin's subscript),
 * git writing through an option its attached-only neighbour did not take, a "read-only" git in a
 * bare repository of plain files, and Read deny rules past a path's first segment (a glob, a
 * `rev:path`, a pathspec). Nobody can approve, so what asks is denied; canaries show nothing ran.
 */
import { execFileSync } from 'node:child_process';
import { access, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConversationConfigInput } from '../../common/config';
import { isolateEnvironment } from '../helpers/cli';
import { resultsById } from '../helpers/tool-results';
import { type Harness, createHarness, localActivityType } from '../helpers/harness';

isolateEnvironment();
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function runHeadless(h: Harness, permissions: NonNullable<ConversationConfigInput['permissions']>) {
  const { conversationId, inputUuid } = await h.api.start({
    prompt: 'go',
    config: h.config({ permissions: { canApprove: false, ...permissions } }),
    taskQueue: h.taskQueue,
  });
  const result = await h.api.waitForResult(conversationId, inputUuid!);
  return { result, results: resultsById(h.model.requests) };
}

const exists = (target: string) =>
  access(target).then(
    () => true,
    () => false,
  );

/** A workspace that is a git repository with a committed secret, and a bare repository of plain files in a subfolder. */
async function makeRepository(workspace: string): Promise<void> {
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: workspace, stdio: 'ignore' });
  await mkdir(path.join(workspace, 'certs'), { recursive: true });
  await mkdir(path.join(workspace, 'secrets'), { recursive: true });
  await mkdir(path.join(workspace, 'src'), { recursive: true });
  await writeFile(path.join(workspace, 'certs', 'server.key'), 'CERT-KEY-CANARY\n');
  await writeFile(path.join(workspace, 'secrets', 'key.txt'), 'HISTORY-KEY-CANARY\n');
  await writeFile(path.join(workspace, 'src', 'x.ts'), 'export const x = 1;\n');
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'init');
  // What a clone can bring: a bare repository as plain files, its config running a program for git log -p.
  git('clone', '-q', '--bare', '.', 'vendor/bare');
  await writeFile(
    path.join(workspace, 'vendor', 'bare', 'config'),
    '[core]\n\tbare = true\n[diff "any"]\n\ttextconv = sh -c "touch bare-textconv-ran; cat \\"$0\\""\n',
  );
  await mkdir(path.join(workspace, 'vendor', 'bare', 'info'), { recursive: true });
  await writeFile(path.join(workspace, 'vendor', 'bare', 'info', 'attributes'), '* diff=any\n');
}

describe('issue 29: one Bash analysis, its gaps closed', () => {
  it('read-only-looking commands that execute, write or read past a deny rule are denied headless; nothing runs; everyday commands still do', async () => {
    // One call per turn: a Bash call that errors cancels its parallel siblings.
    const calls: [id: string, command: string][] = [
      ['toolu_cmds', "BASH_CMDS=([grep]=/bin/bash); grep -c 'touch bashcmds-ran' src/x.ts"],
      ['toolu_decl', "declare 'a[$(touch declare-ran)]=1'"],
      ['toolu_out', 'git log --format --output=format-output-written'],
      ['toolu_bare', 'cd vendor/bare && git log -p'],
      ['toolu_glob', 'cat certs/*.key'],
      ['toolu_rev', 'git show HEAD:secrets/key.txt'],
      ['toolu_spec', 'git log -p -- certs'],
      ['toolu_ls', 'ls src'],
      ['toolu_cat', 'cat src/x.ts'],
      ['toolu_log', 'git log --oneline'],
    ];
    harness = await createHarness({
      script: [
        ...calls.map(([id, command]) => ({ content: [{ type: 'tool_use' as const, id, name: 'Bash', input: { command } }] })),
        { content: [{ type: 'text', text: 'Done.' }] },
      ],
    });
    await makeRepository(harness.workspace);
    await harness.startWorker();
    const { result, results } = await runHeadless(harness, { mode: 'default', deny: ['Read(certs/server.key)', 'Read(secrets/**)'] });

    expect(result.permission_denials.map((denial) => denial.tool_use_id).sort()).toEqual(
      ['toolu_bare', 'toolu_cmds', 'toolu_decl', 'toolu_glob', 'toolu_out', 'toolu_rev', 'toolu_spec'].sort(),
    );
    for (const canary of ['bashcmds-ran', 'declare-ran', 'format-output-written', 'vendor/bare/bare-textconv-ran', 'bare-textconv-ran']) {
      expect(await exists(path.join(harness.workspace, canary)), canary).toBe(false);
    }
    const everything = [...results.values()].map((entry) => entry.content).join('\n');
    expect(everything).not.toContain('CERT-KEY-CANARY');
    expect(everything).not.toContain('HISTORY-KEY-CANARY');
    expect(results.get('toolu_ls')).toMatchObject({ content: expect.stringContaining('x.ts') });
    expect(results.get('toolu_cat')).toMatchObject({ content: expect.stringContaining('export const x') });
    expect(results.get('toolu_log')).toMatchObject({ content: expect.stringContaining('init') });
  }, 180_000);

  it('bypassPermissions: a changed command name cannot pass a deny rule on the program it really runs', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_rm', name: 'Bash', input: { command: 'BASH_CMDS=([cat]=/bin/rm); cat src/x.ts' } }] },
        { content: [{ type: 'text', text: 'Done.' }] },
      ],
    });
    await makeRepository(harness.workspace);
    await harness.startWorker();
    const { result } = await runHeadless(harness, { mode: 'bypassPermissions', deny: ['Bash(rm:*)'] });
    expect(result.permission_denials.map((denial) => denial.tool_use_id)).toEqual(['toolu_rm']);
    expect(await exists(path.join(harness.workspace, 'src', 'x.ts'))).toBe(true);
  }, 180_000);

  it('the facts schedule a reply: read-only Bash calls run side by side on facts gathered once, a write alone, a call after it on fresh facts', async () => {
    const reply = [
      ['toolu_ls', 'ls src'],
      ['toolu_cat', 'cat src/x.ts'],
      ['toolu_write', 'touch written.txt'],
      ['toolu_after', 'ls'],
      ['toolu_expand', 'echo ${PATH:=/tmp/evil}; ls'],
    ] as const;
    harness = await createHarness({
      script: [
        { content: reply.map(([id, command]) => ({ type: 'tool_use' as const, id, name: 'Bash', input: { command } })) },
        { content: [{ type: 'text', text: 'Done.' }] },
      ],
    });
    await makeRepository(harness.workspace);
    await harness.startWorker();
    // No early start while streaming: every call is scheduled from the final reply, on facts gathered for it.
    const { conversationId, inputUuid } = await harness.api.start({
      prompt: 'go',
      config: harness.config({ streamingToolExecution: false, permissions: { canApprove: false, allow: ['Bash(touch written.txt)'] } }),
      taskQueue: harness.taskQueue,
    });
    const result = await harness.api.waitForResult(conversationId, inputUuid!);
    const results = resultsById(harness.model.requests);
    expect(results.get('toolu_cat')).toMatchObject({ content: expect.stringContaining('export const x') });
    expect(results.get('toolu_after')).toMatchObject({ content: expect.stringContaining('written.txt') });
    // The assignment by expansion is not read-only: it asks, and nobody can approve.
    expect(result.permission_denials.map((denial) => denial.tool_use_id)).toEqual(['toolu_expand']);

    const events = (await harness.client.workflow.getHandle(conversationId).fetchHistory()).events ?? [];
    const id = (event: (typeof events)[number]) => Number(String(event.eventId));
    const runTools = new Map<string, { scheduled: number; closed?: number }>();
    const byScheduled = new Map<number, string>();
    for (const event of events) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled?.activityType?.name === 'runTool') {
        const toolUseId = (JSON.parse(Buffer.from(scheduled.input!.payloads![0].data!).toString()) as { toolUseId: string }).toolUseId;
        runTools.set(toolUseId, { scheduled: id(event) });
        byScheduled.set(id(event), toolUseId);
      }
      const closed = event.activityTaskCompletedEventAttributes ?? event.activityTaskFailedEventAttributes;
      if (closed) {
        const toolUseId = byScheduled.get(Number(String(closed.scheduledEventId)));
        if (toolUseId) runTools.get(toolUseId)!.closed = id(event);
      }
    }
    const at = (toolUseId: string) => runTools.get(toolUseId)!;
    // The two reads run together: the second is scheduled before the first closes.
    expect(at('toolu_cat').scheduled).toBeLessThan(at('toolu_ls').closed!);
    // The write runs alone, after both; the read after it only once it closed.
    expect(at('toolu_write').scheduled).toBeGreaterThan(Math.max(at('toolu_ls').closed!, at('toolu_cat').closed!));
    expect(at('toolu_after').scheduled).toBeGreaterThan(at('toolu_write').closed!);
    // Facts: one activity for the reply's five calls (the gate reuses them for the calls before and
    // including the write), then one for each call after the write, gathered when its turn came.
    const gathers = events.filter((event) => localActivityType(event) === 'gatherPermissionFacts');
    expect(gathers).toHaveLength(3);
  }, 180_000);
});
