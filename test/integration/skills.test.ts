/**
 * Issue 33 §3, Agent Skills end to end through `-p`, a real worker, the dev server and the strict
 * scripted model server: the model is offered the Skill tool and the skills' names and
 * descriptions; a Skill call answers "Launching skill" and the skill's body (with its folder)
 * reaches the model in the next request; while the skill is active its `allowed-tools` let a Write
 * run without asking and its folder's files are read without asking — the same calls without the
 * skill are denied (nobody can approve under -p); a person's `/<skill> args` expands the body,
 * winning over a custom command of the same name; a custom command's `allowed-tools` work the same way.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { cli, isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness } from '../helpers/harness';

isolateEnvironment();
let harness: Harness | undefined;
let home: string;
beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-skills-home-'));
  process.env.HOME = home;
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await rm(home, { recursive: true, force: true });
});

type Block = { type: string; tool_use_id?: string; content?: unknown; is_error?: boolean; text?: string };
function lastUserBlocks(request: RecordedRequest): Block[] {
  const last = request.body.messages[request.body.messages.length - 1] as { role: string; content: unknown };
  expect(last.role).toBe('user');
  return Array.isArray(last.content) ? (last.content as Block[]) : [{ type: 'text', text: String(last.content) }];
}
const toolNames = (request: RecordedRequest) => ((request.body.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name);
const systemText = (request: RecordedRequest) => JSON.stringify(request.body.system);
const resultText = (block: Block | undefined) => (typeof block?.content === 'string' ? block.content : JSON.stringify(block?.content));

describe('Agent Skills', () => {
  it('a Skill call loads the body into the next request, and its allowed-tools and folder need no approval while it is active', async () => {
    const skillDir = path.join(home, '.claude', 'skills', 'release-notes');
    await mkdir(skillDir, { recursive: true });
    await writeFile(
      path.join(skillDir, 'SKILL.md'),
      '---\nname: release-notes\ndescription: Writes release notes into NOTES.md\nallowed-tools: Write\n---\nWrite NOTES.md from the changes. See reference.md for the format.\n',
    );
    await writeFile(path.join(skillDir, 'reference.md'), 'format-canary-7f3a\n');
    const userOnly = path.join(home, '.claude', 'skills', 'deploy');
    await mkdir(userOnly, { recursive: true });
    await writeFile(path.join(userOnly, 'SKILL.md'), '---\ndescription: Deploys\ndisable-model-invocation: true\n---\nShip it.\n');
    const reads = (id: string) => ({ type: 'tool_use' as const, id, name: 'Read', input: { file_path: path.join(skillDir, 'reference.md') } });
    const writes = (id: string, text: string) => ({ type: 'tool_use' as const, id, name: 'Write', input: { file_path: 'NOTES.md', content: text } });
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_skill', name: 'Skill', input: { skill: 'release-notes', args: 'v2' } }] },
        { content: [reads('toolu_ref'), writes('toolu_write', 'notes with skill\n')] },
        { content: [{ type: 'text', text: 'Notes written.' }] },
        // A second conversation: the same calls without the skill are asked about, and denied under -p.
        { content: [reads('toolu_ref_plain'), writes('toolu_write_plain', 'notes without skill\n')] },
        { content: [{ type: 'text', text: 'Denied.' }] },
      ],
    });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();

    const run = await cli('-p', '--cwd', harness.workspace, '--output-format', 'json', 'write the release notes');
    expect(run.code, run.err).toBe(0);
    expect(JSON.parse(run.out)).toMatchObject({ result: 'Notes written.', permission_denials: [] });
    const [first, second] = harness.model.requests;
    // Offered up front: the tool and the model-invocable skills' names and descriptions, no body.
    expect(toolNames(first!)).toContain('Skill');
    expect(systemText(first!)).toContain('- release-notes: Writes release notes into NOTES.md');
    expect(systemText(first!)).not.toContain('deploy');
    expect(JSON.stringify(first!.body)).not.toContain('See reference.md');
    // The next request: the tool result says it is loading, the body follows with its folder and args.
    const blocks = lastUserBlocks(second!);
    expect(blocks[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_skill' });
    expect(resultText(blocks[0])).toBe('Launching skill: release-notes');
    expect(blocks[0]!.is_error ?? false).toBe(false);
    const body = blocks
      .slice(1)
      .map((block) => block.text ?? '')
      .join('\n');
    expect(body).toContain(`Base directory for this skill: ${skillDir}\n\nWrite NOTES.md from the changes.`);
    expect(body).toContain('ARGUMENTS: v2');
    // While it is active: its folder is read and its allowed tool runs, nobody asked.
    const third = lastUserBlocks(harness.model.requests[2]!);
    expect(third.map((block) => [block.tool_use_id, block.is_error ?? false])).toEqual([
      ['toolu_ref', false],
      ['toolu_write', false],
    ]);
    expect(resultText(third[0])).toContain('format-canary-7f3a');
    expect(await readFile(path.join(harness.workspace, 'NOTES.md'), 'utf8')).toBe('notes with skill\n');

    // Without the skill the same calls ask; -p has nobody to approve, so both are denied.
    const plain = await cli('-p', '--cwd', harness.workspace, '--output-format', 'json', 'write them without the skill');
    expect(plain.code, plain.err).toBe(0);
    expect(JSON.parse(plain.out).permission_denials.map((denial: { tool_use_id: string }) => denial.tool_use_id)).toEqual([
      'toolu_ref_plain',
      'toolu_write_plain',
    ]);
    expect(await readFile(path.join(harness.workspace, 'NOTES.md'), 'utf8')).toBe('notes with skill\n');
  }, 180_000);

  it("/<skill> from the person expands its body with the arguments, a user-only skill too, and wins over a custom command's name", async () => {
    const skillDir = path.join(home, '.claude', 'skills', 'deploy');
    await mkdir(skillDir, { recursive: true });
    await writeFile(path.join(skillDir, 'SKILL.md'), '---\ndescription: Deploys\ndisable-model-invocation: true\n---\nDeploy $ARGUMENTS now.\n');
    await mkdir(path.join(home, '.claude', 'commands'), { recursive: true });
    await writeFile(path.join(home, '.claude', 'commands', 'deploy.md'), 'The command, not the skill: $ARGUMENTS');
    // A custom command's allowed-tools go through the same grant: its Write runs without asking.
    await writeFile(path.join(home, '.claude', 'commands', 'jot.md'), '---\ndescription: Jot\nallowed-tools: Write\n---\nWrite $ARGUMENTS to JOT.md');
    harness = await createHarness({
      script: [
        { content: [{ type: 'text', text: 'Deployed.' }] },
        { content: [{ type: 'tool_use', id: 'toolu_jot', name: 'Write', input: { file_path: 'JOT.md', content: 'jotted\n' } }] },
        { content: [{ type: 'text', text: 'Jotted.' }] },
      ],
    });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();

    const run = await cli('-p', '--cwd', harness.workspace, '/deploy staging');
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain('Deployed.');
    const [request] = harness.model.requests;
    const sent = JSON.stringify(request!.body.messages);
    expect(sent).toContain(`Base directory for this skill: ${skillDir}\\n\\nDeploy staging now.`);
    expect(sent).not.toContain('The command, not the skill');
    // Only a person may invoke it: the model is not offered the tool for it.
    expect(toolNames(request!)).not.toContain('Skill');

    const jot = await cli('-p', '--cwd', harness.workspace, '--output-format', 'json', '/jot jotted');
    expect(jot.code, jot.err).toBe(0);
    expect(JSON.parse(jot.out)).toMatchObject({ result: 'Jotted.', permission_denials: [] });
    expect(await readFile(path.join(harness.workspace, 'JOT.md'), 'utf8')).toBe('jotted\n');
    // /help lists the skill; no model call.
    const help = await cli('-p', '--cwd', harness.workspace, '/help');
    expect(help.out).toContain('/deploy — Deploys (user)');
    expect(harness.model.requests).toHaveLength(3);
  }, 120_000);
});
