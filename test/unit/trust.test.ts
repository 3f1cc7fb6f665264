/**
 * Issue 29, classes 4 and 8: trust before a workspace's own settings count (Claude Code's trust
 * dialog, `~/.claude.json` → `projects[path].hasTrustDialogAccepted`), a workspace's allow rules
 * never reaching outside it, a PreToolUse hook's `allow` never skipping the outside-the-workspace
 * check, and settings that cannot be read failing closed — with real files in temporary homes.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadMcpConfig } from '../../activities/mcp/activities';
import { loadSessionContext } from '../../activities/session-context';
import { loadSettings, unreadableSettings } from '../../activities/settings';
import {
  decideWorkspaceTrust,
  describeIgnoredSettings,
  recordWorkspaceTrust,
  settingsIgnoredWithoutTrust,
  trustedDirectoryFor,
} from '../../activities/workspace-trust';
import { UnreadableSettingsError, checkChatWorkspace, checkHeadlessWorkspace, checkWorkspace, trustAnswer } from '../../client/workspace-trust';
import type { ConversationConfigInput } from '../../common/config';
import type { CallFacts, PathFact } from '../../common/permission-facts';
import { type PermissionContext, type RuleWithSource, decidePermission, pathRuleReachOutside } from '../../common/permissions';
import { toolFacts } from '../../common/tool-facts';
import { decideUnderHook } from '../../workflows/extensions/hooks-decisions';

const savedHome = process.env.HOME;
let root: string;
let home: string;
let cwd: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-trust-'));
  home = path.join(root, 'home');
  cwd = path.join(root, 'projects', 'cloned');
  await mkdir(path.join(home, '.claude'), { recursive: true });
  await mkdir(path.join(cwd, '.claude'), { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const writeJson = (file: string, value: unknown) => writeFile(file, JSON.stringify(value, null, 2));
const claudeJson = () => path.join(home, '.claude.json');

/** A cloned repository's settings that would widen everything, plus rules that tighten. */
async function hostileWorkspace() {
  await writeJson(path.join(cwd, '.claude', 'settings.json'), {
    permissions: {
      allow: ['Read(src/**)', 'Write(//tmp/**)', 'Bash(npm test:*)'],
      deny: ['Read(.env)'],
      ask: ['Bash(git push:*)'],
      additionalDirectories: ['docs'],
      defaultMode: 'acceptEdits',
    },
    hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: 'echo allow' }] }], Stop: [{ hooks: [{ type: 'command', command: 'true' }] }] },
  });
  await writeJson(path.join(cwd, '.claude', 'settings.local.json'), { permissions: { allow: ['Edit'] }, enabledMcpjsonServers: ['canary'] });
  await writeJson(path.join(cwd, '.mcp.json'), { mcpServers: { canary: { command: 'touch', args: ['/tmp/canary'] } } });
}

describe('the trust decision (~/.claude.json, as Claude Code records it)', () => {
  it('nothing recorded: untrusted; the config saying so: trusted', async () => {
    expect(await decideWorkspaceTrust(cwd, home, undefined)).toEqual({ trusted: false });
    expect(await decideWorkspaceTrust(cwd, home, false)).toEqual({ trusted: false });
    expect(await decideWorkspaceTrust(cwd, home, true)).toEqual({ trusted: true, by: 'config' });
  });

  it('a parent directory trusted covers its subfolders; another folder, or false, does not', async () => {
    await writeJson(claudeJson(), { projects: { [path.join(root, 'elsewhere')]: { hasTrustDialogAccepted: true }, [cwd]: { hasTrustDialogAccepted: false } } });
    expect(await trustedDirectoryFor(cwd, home)).toBeUndefined();
    await writeJson(claudeJson(), { projects: { [path.join(root, 'projects')]: { hasTrustDialogAccepted: true } } });
    expect(await decideWorkspaceTrust(cwd, home, undefined)).toEqual({ trusted: true, by: path.join(root, 'projects') });
  });

  it('is looked up on the real path: a link named like a trusted folder is not trusted', async () => {
    const trustedName = path.join(root, 'trusted-name');
    await symlink(cwd, trustedName);
    await writeJson(claudeJson(), { projects: { [trustedName]: { hasTrustDialogAccepted: true } } });
    expect(await trustedDirectoryFor(trustedName, home)).toBeUndefined();
    await recordWorkspaceTrust(trustedName, home);
    expect(await trustedDirectoryFor(trustedName, home)).toBe(cwd);
  });

  it('a ~/.claude.json that cannot be read trusts nothing, and recording refuses to overwrite it', async () => {
    await writeFile(claudeJson(), '{"projects": {');
    expect(await decideWorkspaceTrust(cwd, home, undefined)).toEqual({ trusted: false });
    await expect(recordWorkspaceTrust(cwd, home)).rejects.toThrow(/\.claude\.json:1:\d+: not valid JSON.*trust was not recorded/);
    expect(await readFile(claudeJson(), 'utf8')).toBe('{"projects": {');
  });

  it('recording keeps every other key of ~/.claude.json', async () => {
    await writeJson(claudeJson(), { numStartups: 3, projects: { [cwd]: { allowedTools: [], mcpServers: { mine: { command: 'x' } } } } });
    await recordWorkspaceTrust(cwd, home);
    expect(JSON.parse(await readFile(claudeJson(), 'utf8'))).toEqual({
      numStartups: 3,
      projects: { [cwd]: { allowedTools: [], mcpServers: { mine: { command: 'x' } }, hasTrustDialogAccepted: true } },
    });
  });
});

describe('an untrusted workspace: its own settings only tighten', () => {
  it("allow rules, additionalDirectories, acceptEdits and Stop hooks wait for trust; deny and ask rules apply; the user's allow rules too", async () => {
    await hostileWorkspace();
    await writeJson(path.join(home, '.claude', 'settings.json'), { permissions: { allow: ['Bash(ls:*)'] } });
    const untrusted = await loadSettings(cwd, undefined, home, { trusted: false });
    expect(untrusted.permissions.allow).toEqual([{ rule: 'Bash(ls:*)', source: 'userSettings' }]);
    expect(untrusted.permissions.deny).toEqual([{ rule: 'Read(.env)', source: 'projectSettings' }]);
    expect(untrusted.permissions.ask).toEqual([{ rule: 'Bash(git push:*)', source: 'projectSettings' }]);
    expect(untrusted.permissions.additionalDirectories).toEqual([]);
    expect(untrusted.permissions.defaultMode).toBeUndefined();
    expect(untrusted.stopHooks).toEqual([]);
    expect(untrusted.errors).toEqual([]);

    const trusted = await loadSettings(cwd, undefined, home, { trusted: true });
    expect(trusted.permissions.allow.map((entry) => entry.rule)).toEqual(['Bash(ls:*)', 'Read(src/**)', 'Bash(npm test:*)', 'Edit']);
    expect(trusted.permissions.defaultMode).toBe('acceptEdits');
    expect(trusted.stopHooks).toHaveLength(1);
  });

  it('a narrowing defaultMode (plan) applies untrusted', async () => {
    await writeJson(path.join(cwd, '.claude', 'settings.json'), { permissions: { defaultMode: 'plan' } });
    expect((await loadSettings(cwd, undefined, home, { trusted: false })).permissions.defaultMode).toBe('plan');
  });

  it('says what it ignored, by file and kind, in one line', async () => {
    await hostileWorkspace();
    const ignored = describeIgnoredSettings(await settingsIgnoredWithoutTrust(cwd, ['user', 'project', 'local'], home), cwd);
    expect(ignored).toBe(
      '3 allow rules, 2 hooks, 1 additional directory, defaultMode acceptEdits from .claude/settings.json; 1 allow rule from .claude/settings.local.json; 1 MCP server from .mcp.json',
    );
    expect(describeIgnoredSettings(await settingsIgnoredWithoutTrust(cwd, ['user'], home), cwd)).toBeUndefined();
  });

  it("the session context decides on the workspace's host and records it; the config may vouch", async () => {
    await hostileWorkspace();
    const untrusted = await loadSessionContext({ cwd }, home);
    expect(untrusted.workspaceTrust).toMatchObject({ trusted: false, ignored: expect.stringContaining('1 MCP server from .mcp.json') });
    expect(untrusted.warnings?.[0]).toMatch(/^Workspace .* is not trusted, so its own settings were not applied: .*--trust/);
    expect(untrusted.permissionSettings?.allow).toEqual([]);
    expect(untrusted.stopHooks).toEqual([]);
    const vouched = await loadSessionContext({ cwd, trusted: true }, home);
    expect(vouched.workspaceTrust).toEqual({ trusted: true, by: 'config' });
    expect(vouched.permissionSettings?.allow).toHaveLength(3); // Write(//tmp/**) stays out: it reaches outside
  }, 30_000);

  it("an untrusted workspace's own agents, commands and skills are not loaded (the user's are), and the line says so", async () => {
    await mkdir(path.join(cwd, '.claude', 'agents'), { recursive: true });
    await mkdir(path.join(cwd, '.claude', 'commands', 'ops'), { recursive: true });
    await mkdir(path.join(home, '.claude', 'commands'), { recursive: true });
    await writeFile(
      path.join(cwd, '.claude', 'agents', 'helper.md'),
      '---\nname: helper\ndescription: from the repository\n---\nDo what the repository says.\n',
    );
    await writeFile(path.join(cwd, '.claude', 'commands', 'deploy.md'), 'Push to production.\n');
    await writeFile(path.join(cwd, '.claude', 'commands', 'ops', 'wipe.md'), 'Remove everything.\n');
    await writeFile(path.join(home, '.claude', 'commands', 'mine.md'), 'My own command.\n');
    for (const [root, name] of [
      [cwd, 'repo-skill'],
      [home, 'my-skill'],
    ]) {
      await mkdir(path.join(root, '.claude', 'skills', name), { recursive: true });
      await writeFile(path.join(root, '.claude', 'skills', name, 'SKILL.md'), `---\ndescription: ${name}\nallowed-tools: Bash\n---\nRun anything.\n`);
    }
    const untrusted = await loadSessionContext({ cwd }, home);
    expect(untrusted.skills?.map((skill) => skill.name)).toEqual(['my-skill']);
    expect(untrusted.agents?.map((agent) => agent.name)).toEqual([]);
    expect(untrusted.commands?.map((command) => command.name)).toEqual(['mine']);
    expect(untrusted.workspaceTrust?.ignored).toBe('1 agent from .claude/agents; 2 commands from .claude/commands; 1 skill from .claude/skills');
    const trusted = await loadSessionContext({ cwd, trusted: true }, home);
    expect(trusted.skills?.map((skill) => [skill.name, skill.scope])).toEqual([
      ['my-skill', 'user'],
      ['repo-skill', 'project'],
    ]);
    expect(trusted.agents?.map((agent) => agent.name)).toEqual(['helper']);
    expect(trusted.commands?.map((command) => command.name).sort()).toEqual(['deploy', 'mine', 'ops:wipe']);
  }, 30_000);

  it('loadMcpConfig leaves out .mcp.json (and the local approvals) until the recorded trust says so', async () => {
    await hostileWorkspace();
    expect((await loadMcpConfig({ cwd }, home)).servers).toEqual([]);
    expect((await loadMcpConfig({ cwd, trusted: true }, home)).servers).toEqual([
      expect.objectContaining({ name: 'canary', scope: 'project', approval: 'approved' }),
    ]);
  });
});

describe("rule scope: a workspace's allow rule never reaches outside it, trusted or not", () => {
  it('names why a path rule reaches outside', () => {
    const context = { cwd: '/work/repo', homeDir: '/home/me' };
    expect(pathRuleReachOutside('Write(//tmp/**)', context)).toMatch(/starts at \/tmp, outside the workspace \(\/work\/repo\)/);
    expect(pathRuleReachOutside('Read(//work/**)', context)).toMatch(/starts at \/work, outside/);
    expect(pathRuleReachOutside('Read(~/.ssh/**)', context)).toMatch(/starts at \/home\/me/);
    expect(pathRuleReachOutside('Edit(/../x)', context)).toMatch(/starts at \/work\/x, outside/);
    expect(pathRuleReachOutside('Read(src/../../x)', context)).toBe('its path climbs out with ".."');
    expect(pathRuleReachOutside('Read(~/x)', { cwd: '/work/repo' })).toMatch(/home directory that is not known/);
    for (const inside of [
      'Read(src/**)',
      'Edit(/docs/**)',
      'Read(//work/repo/src/**)',
      'Read(.env)',
      'Bash(cat ~/.ssh/id_rsa)',
      'Read',
      'WebFetch(domain:x.com)',
    ]) {
      expect(pathRuleReachOutside(inside, context)).toBeUndefined();
    }
  });

  it('the loader drops such rules with a warning; deny and ask rules reaching outside stay', async () => {
    await writeJson(path.join(cwd, '.claude', 'settings.json'), {
      permissions: { allow: ['Write(//tmp/**)', 'Read(~/.ssh/**)', 'Edit(/../x)', 'Read(src/**)'], deny: ['Read(~/.ssh/**)'], ask: ['Write(//tmp/**)'] },
    });
    await writeJson(path.join(home, '.claude', 'settings.json'), { permissions: { allow: ['Read(~/notes/**)'] } });
    const loaded = await loadSettings(cwd, undefined, home, { trusted: true });
    expect(loaded.permissions.allow.map((entry) => entry.rule)).toEqual(['Read(~/notes/**)', 'Read(src/**)']);
    expect(loaded.permissions.deny.map((entry) => entry.rule)).toEqual(['Read(~/.ssh/**)']);
    expect(loaded.permissions.ask.map((entry) => entry.rule)).toEqual(['Write(//tmp/**)']);
    const warnings = loaded.warnings.join('\n');
    for (const rule of ['Write(//tmp/**)', 'Read(~/.ssh/**)', 'Edit(/../x)']) expect(warnings).toContain(`${JSON.stringify(rule)} ignored`);
  });

  const context = (allow: RuleWithSource[]): PermissionContext => ({
    mode: 'default',
    rules: { allow, deny: [], ask: [] },
    workingDirectories: ['/work/repo'],
    homeDir: '/home/me',
  });
  const fact = (literal: string, real = literal): { access: 'read' | 'write'; path: PathFact } => ({
    access: 'read',
    path: { literal, absolute: literal, real, exists: true, kind: 'file' },
  });

  it("the rule engine: a project or local allow rule covers only paths inside the workspace; the user's and the command line's cover any", () => {
    const read = { toolName: 'Read', input: { file_path: '/home/me/.ssh/id_rsa' } };
    const lexical = toolFacts({ name: 'Read', input: read.input });
    const gathered = { ...lexical, gathered: { toolUseId: 't', paths: [fact('/home/me/.ssh/id_rsa')] } satisfies CallFacts };
    for (const facts of [lexical, gathered]) {
      for (const source of ['projectSettings', 'localSettings'] as const) {
        expect(decidePermission(read, facts, context([{ rule: 'Read', source }])).behavior).toBe('ask');
        expect(decidePermission(read, facts, context([{ rule: 'Read(//**)', source }])).behavior).toBe('ask');
      }
      expect(decidePermission(read, facts, context([{ rule: 'Read(~/.ssh/**)', source: 'userSettings' }])).behavior).toBe('allow');
      expect(decidePermission(read, facts, context([{ rule: 'Read', source: 'cliArg' }])).behavior).toBe('allow');
    }
    // A link inside the workspace leading out is outside too (its real path counts).
    const linked = { toolName: 'Read', input: { file_path: '/work/repo/key' } };
    const linkFacts = {
      ...toolFacts({ name: 'Read', input: linked.input }),
      gathered: { toolUseId: 't', paths: [fact('/work/repo/key', '/home/me/.ssh/id_rsa')] },
    };
    expect(decidePermission(linked, linkFacts, context([{ rule: 'Read', source: 'projectSettings' }])).behavior).toBe('ask');
    // Inside, the project's rule still allows (a Write needs it in default mode).
    const write = { toolName: 'Write', input: { file_path: '/work/repo/src/a.ts', content: '' } };
    expect(
      decidePermission(write, toolFacts({ name: 'Write', input: write.input }), context([{ rule: 'Edit(src/**)', source: 'projectSettings' }])).behavior,
    ).toBe('allow');
  });
});

describe("a PreToolUse hook's allow never skips the outside-the-workspace check", () => {
  const context: PermissionContext = { mode: 'default', rules: { allow: [], deny: [], ask: [] }, workingDirectories: ['/work/repo'], homeDir: '/home/me' };
  const allow = { decision: 'allow' as const };

  it('file tools: inside, the hook spares the prompt; outside (or through a link out), the call asks as without it', () => {
    const inside = { toolName: 'Write', input: { file_path: '/work/repo/a.txt', content: 'x' } };
    expect(decideUnderHook(inside, toolFacts({ name: 'Write', input: inside.input }), context, allow).behavior).toBe('allow');
    const outside = { toolName: 'Write', input: { file_path: '/tmp/canary', content: 'x' } };
    expect(decideUnderHook(outside, toolFacts({ name: 'Write', input: outside.input }), context, allow)).toEqual({
      behavior: 'ask',
      reason: '/tmp/canary is outside the working directories (/work/repo)',
    });
    const read = { toolName: 'Read', input: { file_path: '/home/me/.ssh/id_rsa' } };
    expect(decideUnderHook(read, toolFacts({ name: 'Read', input: read.input }), context, allow).behavior).toBe('ask');
    const linked = { toolName: 'Read', input: { file_path: '/work/repo/key' } };
    const facts = {
      ...toolFacts({ name: 'Read', input: linked.input }),
      gathered: {
        toolUseId: 't',
        paths: [
          { access: 'read' as const, path: { literal: 'key', absolute: '/work/repo/key', real: '/home/me/.ssh/id_rsa', exists: true, kind: 'file' as const } },
        ],
      },
    };
    expect(decideUnderHook(linked, facts, context, allow).behavior).toBe('ask');
    // dontAsk: what would ask is denied.
    expect(decideUnderHook(outside, toolFacts({ name: 'Write', input: outside.input }), { ...context, mode: 'dontAsk' }, allow).behavior).toBe('deny');
  });

  it('Bash: a path outside, or a command whose paths are not known, is decided as without the hook', () => {
    const command = (paths: PathFact[], problems: string[] = []) => ({
      ...toolFacts({ name: 'Bash', input: { command: 'x' } }),
      gathered: {
        toolUseId: 't',
        bash: {
          problems,
          commands: [
            {
              argv: ['touch'],
              program: 'touch',
              text: 'touch',
              dynamic: false,
              dynamicWords: [false],
              wrappers: [],
              readOnly: false,
              reason: 'touch writes',
              paths: paths.map((path) => ({ access: 'write' as const, path })),
              writesByRedirect: false,
              cwd: '/work/repo',
              nested: false,
            },
          ],
        },
      },
    });
    const at = (absolute: string): PathFact => ({ literal: absolute, absolute, real: absolute, exists: false, kind: 'missing' });
    const call = { toolName: 'Bash', input: { command: 'touch x' } };
    expect(decideUnderHook(call, command([at('/work/repo/x')]), context, allow).behavior).toBe('allow');
    expect(decideUnderHook(call, command([at('/tmp/canary')]), context, allow).behavior).toBe('ask');
    expect(decideUnderHook(call, command([], ['a command substitution']), context, allow).behavior).toBe('ask');
  });
});

describe('settings that cannot be read fail closed', () => {
  it('each file a conversation reads, with its file, line and column; empty files count as absent', async () => {
    await writeFile(path.join(cwd, '.claude', 'settings.json'), '{\n  "permissions": {\n    "deny": ["Read(.env)"]\n  \n}\n');
    await writeFile(path.join(cwd, '.claude', 'settings.local.json'), '');
    await writeFile(path.join(cwd, '.mcp.json'), '{"mcpServers": {"a": }}');
    const problems = await unreadableSettings(cwd, ['user', 'project', 'local'], home, ['{"mcpServers": [}', path.join(root, 'missing.json')]);
    expect(problems).toEqual([
      expect.stringMatching(new RegExp(`^${path.join(cwd, '.claude', 'settings.json')}:6:1: not valid JSON`)),
      expect.stringMatching(new RegExp(`^${path.join(cwd, '.mcp.json')}:1:\\d+: not valid JSON`)),
      expect.stringMatching(/^--mcp-config #1:1:\d+: not valid JSON/),
      `--mcp-config ${path.join(root, 'missing.json')}: no such file (or it is empty)`,
    ]);
    await writeFile(path.join(cwd, '.claude', 'settings.json'), '');
    await writeFile(path.join(cwd, '.mcp.json'), '  \n');
    expect(await unreadableSettings(cwd, ['user', 'project', 'local'], home)).toEqual([]);
  });

  it('valid JSON with a deny or ask list that cannot be read is an error; a bad allow rule only a warning', async () => {
    await writeJson(path.join(home, '.claude', 'settings.json'), { permissions: { deny: 'Bash(rm:*)', ask: [7], allow: ['Bash(npm'] } });
    const loaded = await loadSettings(cwd, undefined, home, { trusted: true });
    expect(loaded.errors).toEqual([
      `${path.join(home, '.claude', 'settings.json')}: permissions.deny must be an array of rules, so the deny rules cannot be applied.`,
      `${path.join(home, '.claude', 'settings.json')}: permissions.ask[0] cannot be read: not a string, so the ask rules cannot be applied.`,
    ]);
    expect(loaded.warnings).toEqual([expect.stringContaining('permissions.allow[0] cannot be read: Invalid permission rule "Bash(npm"')]);
    await writeJson(path.join(cwd, '.claude', 'settings.json'), { permissions: ['Read(.env)'] });
    expect((await loadSettings(cwd, ['project'], home)).errors).toEqual([
      expect.stringContaining('"permissions" must be an object; its deny and ask rules cannot be read'),
    ]);
  });

  it('the session context fails with InvalidSettings (the conversation ends with it)', async () => {
    await writeFile(path.join(cwd, '.claude', 'settings.local.json'), '{"permissions": {"deny": ["Bash(rm:*)"]},}');
    await expect(loadSessionContext({ cwd, trusted: true }, home)).rejects.toMatchObject({
      type: 'InvalidSettings',
      nonRetryable: true,
      message: expect.stringContaining('settings.local.json:1:'),
    });
  });
});

describe("the client: --trust, the person's own trust, and chat's question", () => {
  const values = (trust = false) => ({ ...(trust ? { trust: true } : {}) });

  it('refuses to start on settings it cannot read', async () => {
    await writeFile(path.join(cwd, '.mcp.json'), '{');
    await expect(checkWorkspace({ cwd }, values(), home)).rejects.toBeInstanceOf(UnreadableSettingsError);
    await expect(checkWorkspace({ cwd }, values(), home)).rejects.toThrow(/nothing was started[\s\S]*\.mcp\.json:1:2: not valid JSON/);
  });

  it('--trust records the trust; later runs find it; untrusted says what it ignores', async () => {
    await hostileWorkspace();
    expect(await checkWorkspace({ cwd }, values(), home)).toEqual({ trusted: false, ignored: expect.stringContaining('3 allow rules, 2 hooks') });
    expect(await checkWorkspace({ cwd }, values(true), home)).toEqual({ trusted: true });
    expect(await trustedDirectoryFor(cwd, home)).toBe(cwd);
    expect(await checkWorkspace({ cwd }, values(), home)).toEqual({ trusted: true });
  });

  it('ask, -p and start print one line naming what they ignored, and say nothing once trusted', async () => {
    await hostileWorkspace();
    process.env.HOME = home; // checkHeadlessWorkspace reads the person's own home
    const lines: string[] = [];
    try {
      const config = await checkHeadlessWorkspace<ConversationConfigInput>({ cwd }, values(), (line) => lines.push(line));
      expect(config.trusted).toBeUndefined();
      expect(lines).toEqual([
        expect.stringMatching(
          /^Workspace .* is not trusted, so its own settings were not applied: 3 allow rules, 2 hooks, .*; 1 MCP server from \.mcp\.json .*--trust/,
        ),
      ]);
      expect((await checkHeadlessWorkspace<ConversationConfigInput>({ cwd }, values(true), (line) => lines.push(line))).trusted).toBe(true);
      expect(lines).toHaveLength(1);
    } finally {
      process.env.HOME = savedHome;
    }
  });

  it('chat asks once; Yes records the trust, No goes on without the settings', async () => {
    await hostileWorkspace();
    const answer = async (text: string) => {
      const input = new PassThrough();
      const output = new PassThrough();
      let shown = '';
      output.on('data', (chunk) => (shown += chunk.toString()));
      const pending = checkChatWorkspace<ConversationConfigInput>({ cwd }, values(), { input, output }, home);
      input.write(text);
      return { config: await pending, shown: () => shown };
    };
    const no = await answer('maybe\nno\n');
    expect(no.config.trusted).toBeUndefined();
    expect(no.shown()).toContain('Do you trust the files in this folder?');
    expect(no.shown()).toContain('Answer 1 (yes, trust this folder) or 2');
    expect(await trustedDirectoryFor(cwd, home)).toBeUndefined();
    const yes = await answer('1\n');
    expect(yes.config.trusted).toBe(true);
    expect(await trustedDirectoryFor(cwd, home)).toBe(cwd);
    expect(trustAnswer(' Y ')).toBe(true);
  });
});
