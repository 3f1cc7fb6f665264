/**
 * Issue 33 §3, a plugin end to end: a real dev server and worker, the strict scripted model
 * server and @modelcontextprotocol/server-everything. One conversation started with
 * `--plugin-dir` (config `pluginDirs`) has all of the plugin active at once: its command
 * (`/kit:greet`) expands into the prompt, its UserPromptSubmit hook runs as the user with
 * `CLAUDE_PLUGIN_ROOT`, its MCP server's tools are offered (`mcp__plugin_kit_everything__…`), its
 * skill is listed and loaded by the Skill tool (`kit:checklist`), and its agent runs as a subagent
 * with its own prompt (`kit:helper`).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness } from '../helpers/harness';

const EVERYTHING = path.resolve(__dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');

isolateEnvironment();
let harness: Harness | undefined;
let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-plugin-'));
  process.env.HOME = path.join(root, 'home');
  await mkdir(process.env.HOME, { recursive: true });
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await rm(root, { recursive: true, force: true });
});

const toolNames = (request: RecordedRequest) => ((request.body.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name);
const sent = (request: RecordedRequest) => JSON.stringify(request.body.messages);
const systemText = (request: RecordedRequest) => JSON.stringify(request.body.system);

async function writePlugin(dir: string, hookLog: string): Promise<void> {
  const file = async (relative: string, text: string) => {
    await mkdir(path.dirname(path.join(dir, relative)), { recursive: true });
    await writeFile(path.join(dir, relative), text);
  };
  await file('.claude-plugin/plugin.json', JSON.stringify({ name: 'kit', version: '1.0.0', description: 'A test kit' }));
  await file('commands/greet.md', '---\ndescription: Greets someone\n---\nSay hello to $ARGUMENTS from the kit.\n');
  await file('agents/helper.md', '---\nname: helper\ndescription: Helps with kit tasks\ntools: Read\n---\nKIT-HELPER-PROMPT: you help with the kit.\n');
  await file('skills/checklist/SKILL.md', '---\nname: checklist\ndescription: The kit release checklist\n---\nKIT-CHECKLIST-BODY: bump, tag, publish.\n');
  await file(
    'hooks/hooks.json',
    JSON.stringify({
      hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: `printf '%s\\n' "$CLAUDE_PLUGIN_ROOT" >> ${JSON.stringify(hookLog)}` }] }] },
    }),
  );
  await file('.mcp.json', JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
}

describe('plugins', () => {
  it("a --plugin-dir plugin's command, hook, MCP server, skill and agent are all active in one conversation", async () => {
    const pluginDir = path.join(root, 'kit');
    const hookLog = path.join(root, 'hook.log');
    await writePlugin(pluginDir, hookLog);
    harness = await createHarness({
      respond: (request) => {
        if (systemText(request).includes('KIT-HELPER-PROMPT')) return { content: [{ type: 'text', text: 'The helper helped.' }] };
        const text = sent(request);
        if (text.includes('The helper helped.')) return { content: [{ type: 'text', text: 'All done.' }] };
        if (text.includes('KIT-CHECKLIST-BODY'))
          return {
            content: [
              {
                type: 'tool_use',
                id: 'toolu_agent',
                name: 'Agent',
                input: { description: 'kit help', prompt: 'Help with the kit.', subagent_type: 'kit:helper' },
              },
            ],
          };
        return { content: [{ type: 'tool_use', id: 'toolu_skill', name: 'Skill', input: { skill: 'kit:checklist' } }] };
      },
    });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: '/kit:greet world', config: harness.config({ pluginDirs: [pluginDir] }), taskQueue: harness.taskQueue });
    expect(await harness.api.waitForResult(started.conversationId, started.inputUuid!)).toMatchObject({ subtype: 'success', result: 'All done.' });

    const parent = harness.model.requests.filter((request) => !systemText(request).includes('KIT-HELPER-PROMPT'));
    const first = parent[0];
    // The command expanded; the MCP server's tools and the Skill tool offered; the skill listed.
    expect(sent(first)).toContain('Say hello to world from the kit.');
    expect(toolNames(first)).toEqual(expect.arrayContaining(['Skill', 'Agent', 'mcp__plugin_kit_everything__echo']));
    expect(JSON.stringify(first.body)).toContain('kit:checklist');
    // The hook ran as the user, with the plugin's root.
    expect((await readFile(hookLog, 'utf8')).trim()).toBe(pluginDir);
    // The skill's body in the next request; the plugin's agent ran with its own prompt.
    expect(sent(parent[1])).toContain('KIT-CHECKLIST-BODY: bump, tag, publish.');
    expect(harness.model.requests.some((request) => systemText(request).includes('KIT-HELPER-PROMPT'))).toBe(true);
    expect(sent(parent.at(-1)!)).toContain('The helper helped.');
    await harness.api.end(started.conversationId);
  }, 120_000);

  it('a --plugin-dir that is not a plugin ends the conversation before its first prompt, saying which folder', async () => {
    const notAPlugin = path.join(root, 'empty');
    await mkdir(notAPlugin, { recursive: true });
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'never' }] }] });
    await harness.startWorker();
    const started = await harness.api.start({ prompt: 'hi', config: harness.config({ pluginDirs: [notAPlugin] }), taskQueue: harness.taskQueue });
    const failure = await harness.api.waitForResult(started.conversationId, started.inputUuid!).then(
      () => undefined,
      (error: Error) => error.message,
    );
    // The person reads why: the failure's own words, with the folder.
    expect(failure).toMatch(/is failed and will not answer input [\s\S]*plugin[\s\S]*empty/i);
    expect(harness.model.requests).toHaveLength(0);
  }, 120_000);
});
