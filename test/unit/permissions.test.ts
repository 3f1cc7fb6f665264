/** The permission rule engine (common/permissions.ts): rule syntax, matching, modes, paths. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gatherCallFacts } from '../../activities/permission-facts/gather';
import { loadSettings } from '../../activities/settings';
import {
  type PermissionContext,
  type PermissionMode,
  decidePermission,
  parsePermissionRule,
  pathMatchesRule,
  ruleForAlways,
  splitRuleList,
  toolPaths,
  TOOLS_WITHOUT_PERMISSION,
} from '../../common/permissions';
import { TOOL_SPECS, getToolSpec } from '../../common/tool-specs';

const CWD = '/work/project';

function context(overrides: Partial<PermissionContext> & { allow?: string[]; deny?: string[]; ask?: string[] } = {}): PermissionContext {
  const rules = (list: string[] = []) => list.map((rule) => ({ rule, source: 'cliArg' as const }));
  return {
    mode: overrides.mode ?? 'default',
    rules: { allow: rules(overrides.allow), deny: rules(overrides.deny), ask: rules(overrides.ask) },
    workingDirectories: overrides.workingDirectories ?? [CWD],
    homeDir: '/home/alice',
  };
}

/** Decides as the gate does: facts from the tool's own spec, and for Bash its command parsed by the real grammar (issue 29: the only Bash analysis). */
async function decide(toolName: string, input: unknown, ctx: PermissionContext) {
  const spec = getToolSpec(toolName)!;
  const parsed = spec.inputSchema.safeParse(input);
  const gathered = toolName === 'Bash' && parsed.success ? await gatherCallFacts({ toolUseId: 't', name: toolName, input }, CWD, '/home/alice') : undefined;
  const facts = {
    validInput: parsed.success,
    readOnly: parsed.success && (toolName === 'Agent' || spec.isReadOnly(parsed.data, gathered)),
    ...(gathered && { gathered }),
  };
  return decidePermission({ toolName, input }, facts, ctx).behavior;
}

describe('rule syntax', () => {
  it('parses Tool and Tool(specifier); Tool(*) and Tool() mean the whole tool', () => {
    expect(parsePermissionRule('Read')).toEqual({ toolName: 'Read' });
    expect(parsePermissionRule('Bash(npm test:*)')).toEqual({ toolName: 'Bash', content: 'npm test:*' });
    expect(parsePermissionRule('Bash(*)')).toEqual({ toolName: 'Bash' });
    expect(parsePermissionRule('Write(//tmp/**)')).toEqual({ toolName: 'Write', content: '//tmp/**' });
    expect(() => parsePermissionRule('Bash(npm')).toThrow(/Invalid permission rule "Bash\(npm"/);
    expect(() => parsePermissionRule('')).toThrow(/expected Tool or Tool\(specifier\)/);
  });

  it('splits rule lists on commas and spaces outside parentheses', () => {
    expect(splitRuleList('Bash(npm test:*),Read Edit(src/**)')).toEqual(['Bash(npm test:*)', 'Read', 'Edit(src/**)']);
    expect(splitRuleList('  Bash(git log:*) ,  Write ')).toEqual(['Bash(git log:*)', 'Write']);
  });
});

describe('Bash matching (on the parsed command only)', () => {
  it('prefix :* matches the command and it with arguments, at a word boundary', async () => {
    const allowed = (rule: string, command: string) => decide('Bash', { command }, context({ allow: [`Bash(${rule})`] }));
    expect(await allowed('npm test:*', 'npm test')).toBe('allow');
    expect(await allowed('npm test:*', 'npm test -- --watch')).toBe('allow');
    expect(await allowed('npm test:*', 'npm testx')).toBe('ask');
    expect(await allowed('npm test', 'npm test --ci')).toBe('ask');
    expect(await allowed('git * main', 'git push origin main')).toBe('allow');
    expect(await allowed('ls *', 'ls')).toBe('allow');
  });

  it('compound commands: allow needs every part, deny any part', async () => {
    expect(await decide('Bash', { command: 'npm test && rm -rf build' }, context({ allow: ['Bash(npm test:*)'] }))).toBe('ask');
    expect(await decide('Bash', { command: 'npm test && rm -rf build' }, context({ allow: ['Bash(npm test:*)', 'Bash(rm:*)'] }))).toBe('allow');
    expect(await decide('Bash', { command: 'echo hi && rm -rf build' }, context({ deny: ['Bash(rm:*)'], mode: 'bypassPermissions' }))).toBe('deny');
    // Quotes are the parser's: `&&` inside a string is no separator, a pipe is.
    expect(await decide('Bash', { command: 'echo "a && rm b" | wc -l' }, context({ deny: ['Bash(rm:*)'] }))).toBe('allow');
  });

  it('a Bash call without facts is a command nobody examined: it asks (a rule on the whole tool still decides)', () => {
    const unexamined = (ctx: PermissionContext) =>
      decidePermission({ toolName: 'Bash', input: { command: 'ls' } }, { validInput: true, readOnly: true }, ctx).behavior;
    expect(unexamined(context())).toBe('ask');
    expect(unexamined(context({ allow: ['Bash(ls)'] }))).toBe('ask');
    expect(unexamined(context({ mode: 'plan' }))).toBe('deny');
    expect(unexamined(context({ mode: 'dontAsk', allow: ['Bash(ls:*)'] }))).toBe('deny');
    expect(unexamined(context({ mode: 'bypassPermissions', deny: ['Bash(rm:*)'] }))).toBe('ask');
    expect(unexamined(context({ deny: ['Bash'] }))).toBe('deny');
    expect(unexamined(context({ ask: ['Bash'], mode: 'bypassPermissions' }))).toBe('ask');
  });
});

describe('paths', () => {
  it('resolves the paths a file tool touches, including a Glob pattern that leaves its root', () => {
    expect(toolPaths('Write', { file_path: '../escape.txt' }, CWD)).toEqual(['/work/escape.txt']);
    expect(toolPaths('Read', { file_path: '/etc/shadow' }, CWD)).toEqual(['/etc/shadow']);
    expect(toolPaths('Glob', { pattern: '/etc/*' }, CWD)).toEqual([CWD, '/etc']);
    expect(toolPaths('Grep', { pattern: 'x', path: 'src' }, CWD)).toEqual([`${CWD}/src`]);
  });

  it('matches gitignore-style patterns: //abs, ~/home, /workspace-root, relative, any depth', () => {
    const at = { cwd: CWD, homeDir: '/home/alice' };
    expect(pathMatchesRule('//tmp/**', '/tmp/a/b.txt', at)).toBe(true);
    expect(pathMatchesRule('~/Documents/*.pdf', '/home/alice/Documents/x.pdf', at)).toBe(true);
    expect(pathMatchesRule('/src/**/*.ts', `${CWD}/src/a/b.ts`, at)).toBe(true);
    expect(pathMatchesRule('/src/**/*.ts', `${CWD}/lib/a.ts`, at)).toBe(false);
    expect(pathMatchesRule('*.env', `${CWD}/deep/dir/.env`, at)).toBe(true); // gitignore: * may match nothing
    expect(pathMatchesRule('*.env', `${CWD}/deep/env.txt`, at)).toBe(false);
    expect(pathMatchesRule('*.env', `${CWD}/deep/prod.env`, at)).toBe(true);
    expect(pathMatchesRule('secrets', `${CWD}/a/secrets/key.pem`, at)).toBe(true);
    expect(pathMatchesRule('src/**', `${CWD}/src/x/y.ts`, at)).toBe(true);
    expect(pathMatchesRule('src/**', `/elsewhere/src/y.ts`, at)).toBe(false);
  });
});

describe('decisions', () => {
  it('read-only tools and read-only Bash inside the workspace need no approval; changes ask', async () => {
    const ctx = context();
    expect(await decide('Read', { file_path: 'a.txt' }, ctx)).toBe('allow');
    expect(await decide('Grep', { pattern: 'x' }, ctx)).toBe('allow');
    expect(await decide('Bash', { command: 'ls -la' }, ctx)).toBe('allow');
    expect(await decide('Bash', { command: 'npm install' }, ctx)).toBe('ask');
    expect(await decide('Write', { file_path: 'a.txt', content: '' }, ctx)).toBe('ask');
    expect(await decide('Agent', { description: 'd', prompt: 'p', subagent_type: 'Explore' }, ctx)).toBe('allow');
  });

  it('paths outside the workspace and --add-dir ask, even for reads and in acceptEdits (issue 12 defect 3)', async () => {
    for (const mode of ['default', 'acceptEdits'] as PermissionMode[]) {
      const ctx = context({ mode, workingDirectories: [CWD, '/data/shared'] });
      expect(await decide('Write', { file_path: '/tmp/outside.txt', content: 'x' }, ctx)).toBe('ask');
      expect(await decide('Write', { file_path: '../escape.txt', content: 'x' }, ctx)).toBe('ask');
      expect(await decide('Read', { file_path: '/etc/shadow' }, ctx)).toBe('ask');
      expect(await decide('Glob', { pattern: '../../**' }, ctx)).toBe('ask');
      expect(await decide('Read', { file_path: '/data/shared/x.csv' }, ctx)).toBe('allow');
    }
    expect(
      await decide('Write', { file_path: '/data/shared/y', content: '' }, context({ mode: 'acceptEdits', workingDirectories: [CWD, '/data/shared'] })),
    ).toBe('allow');
  });

  it('deny beats ask beats allow, whatever the specificity', async () => {
    expect(await decide('Bash', { command: 'aws s3 ls' }, context({ deny: ['Bash(aws:*)'], allow: ['Bash(aws s3 ls)'] }))).toBe('deny');
    expect(await decide('Read', { file_path: 'x' }, context({ ask: ['Read'], allow: ['Read(x)'] }))).toBe('ask');
    expect(await decide('Edit', { file_path: 'src/a.ts', old_string: 'a', new_string: 'b' }, context({ allow: ['Edit(src/**)'] }))).toBe('allow');
    expect(await decide('Write', { file_path: 'src/a.ts', content: '' }, context({ allow: ['Edit(src/**)'] }))).toBe('allow'); // Edit rules cover Write
    expect(await decide('Write', { file_path: '/tmp/x', content: '' }, context({ allow: ['Write(//tmp/**)'] }))).toBe('allow');
    expect(await decide('Read', { file_path: '.env' }, context({ deny: ['Read(.env)'] }))).toBe('deny');
  });

  it('modes: plan runs read-only only; acceptEdits allows edits inside; bypass allows (not protected dirs); dontAsk denies what would ask', async () => {
    const write = { file_path: 'a.txt', content: '' };
    expect(await decide('Write', write, context({ mode: 'plan', allow: ['Write'] }))).toBe('deny');
    expect(await decide('Read', { file_path: 'a.txt' }, context({ mode: 'plan' }))).toBe('allow');
    expect(await decide('Bash', { command: 'git status' }, context({ mode: 'plan' }))).toBe('allow');
    expect(await decide('Write', write, context({ mode: 'acceptEdits' }))).toBe('allow');
    expect(await decide('Bash', { command: 'rm x' }, context({ mode: 'acceptEdits' }))).toBe('ask');
    expect(await decide('Bash', { command: 'rm x' }, context({ mode: 'bypassPermissions' }))).toBe('allow');
    expect(await decide('Write', { file_path: '/tmp/x', content: '' }, context({ mode: 'bypassPermissions' }))).toBe('allow');
    expect(await decide('Write', { file_path: '.git/config', content: '' }, context({ mode: 'bypassPermissions' }))).toBe('ask');
    expect(await decide('Write', { file_path: '.claude/agents/a.md', content: '' }, context({ mode: 'bypassPermissions' }))).toBe('allow');
    expect(await decide('Bash', { command: 'rm x' }, context({ mode: 'dontAsk' }))).toBe('deny');
    expect(await decide('Bash', { command: 'rm x' }, context({ mode: 'dontAsk', allow: ['Bash(rm:*)'] }))).toBe('allow');
    expect(await decide('Read', { file_path: 'a' }, context({ mode: 'dontAsk' }))).toBe('allow');
  });

  it('tools of issues 21 and 22: workflow-answered tools need no permission, MCP tools and unknown tools ask (fail closed)', async () => {
    const plain = (toolName: string, ctx: PermissionContext, extra: { readOnly?: boolean; mcpServer?: string } = {}) =>
      decidePermission(
        { toolName, input: {} },
        { validInput: true, readOnly: extra.readOnly ?? false, ...(extra.mcpServer && { mcpServer: extra.mcpServer }) },
        ctx,
      ).behavior;
    // The task list, wakeups, cron jobs, SendMessage touch only this conversation's own state: no prompt.
    for (const tool of ['TaskCreate', 'TaskUpdate', 'ScheduleWakeup', 'CronCreate', 'CronDelete', 'SendMessage', 'TaskOutput', 'TaskStop'])
      expect(plain(tool, context())).toBe('allow');
    // TaskOutput / TaskStop even in plan mode (they only read or stop this conversation's background work) ...
    expect(plain('TaskStop', context({ mode: 'plan' }))).toBe('allow');
    // ... but the rules still apply, and a scheduling tool is not read-only: plan mode refuses it.
    expect(plain('TaskStop', context({ deny: ['TaskStop'] }))).toBe('deny');
    expect(plain('CronCreate', context({ mode: 'plan' }))).toBe('deny');
    expect(plain('ScheduleWakeup', context({ ask: ['ScheduleWakeup'] }))).toBe('ask');
    // A tool the engine has no decision for asks — it is never allowed by default.
    expect(plain('WebFetch', context())).toBe('ask');
    expect(plain('MultiEdit', context({ mode: 'acceptEdits' }))).toBe('ask');
    expect(plain('WebFetch', context({ mode: 'dontAsk' }))).toBe('deny');
    // MCP tools: ask without a rule (even when annotated read-only); `mcp__server`, `mcp__server__*` and the tool's own name cover it.
    const mcp = { readOnly: true, mcpServer: 'github' };
    expect(plain('mcp__github__list_issues', context(), mcp)).toBe('ask');
    expect(plain('mcp__github__list_issues', context({ allow: ['mcp__github'] }), mcp)).toBe('allow');
    expect(plain('mcp__github__list_issues', context({ allow: ['mcp__github__*'] }), mcp)).toBe('allow');
    expect(plain('mcp__github__list_issues', context({ allow: ['mcp__github__list_issues'] }), mcp)).toBe('allow');
    expect(plain('mcp__github__list_issues', context({ allow: ['mcp__gitlab'] }), mcp)).toBe('ask');
    expect(plain('mcp__github__list_issues', context({ allow: ['mcp__github'], deny: ['mcp__github__list_issues'] }), mcp)).toBe('deny');
    expect(plain('mcp__github__list_issues', context({ mode: 'bypassPermissions' }), mcp)).toBe('allow');
  });

  it('exactly the workflow-answered tools say in their spec that they need no permission (a spec flag, so the set is pinned here)', async () => {
    // Claude Code's list: Agent, SendMessage, the task list, ScheduleWakeup, the cron tools, EnterWorktree / ExitWorktree, Skill; TaskOutput / TaskStop in any mode.
    expect([...TOOLS_WITHOUT_PERMISSION].sort()).toEqual(
      [
        'Agent',
        'CronCreate',
        'CronDelete',
        'CronList',
        'EnterWorktree',
        'ExitWorktree',
        'ScheduleWakeup',
        'SendMessage',
        'Skill',
        'TaskCreate',
        'TaskGet',
        'TaskList',
        'TaskOutput',
        'TaskStop',
        'TaskUpdate',
      ].sort(),
    );
    // No tool that touches the workspace is in it: they keep their own decisions.
    for (const tool of ['Read', 'Write', 'Edit', 'Bash', 'Glob', 'Grep']) expect(getToolSpec(tool)?.permission).toBeUndefined();
    expect(TOOL_SPECS.filter((spec) => spec.permission === 'none-in-any-mode').map((spec) => spec.name)).toEqual(['TaskOutput', 'TaskStop']);
    // Only those two are allowed before the mode is looked at: TaskStop is not read-only, yet plan mode lets it stop
    // this conversation's own work; a tool that is not read-only and has no such flag is refused there.
    const inPlan = (toolName: string) => decidePermission({ toolName, input: {} }, { validInput: true, readOnly: false }, context({ mode: 'plan' })).behavior;
    expect(getToolSpec('TaskStop')!.isReadOnly({ task_id: 'b1' } as never)).toBe(false);
    expect(inPlan('TaskStop')).toBe('allow');
    expect(inPlan('TaskOutput')).toBe('allow');
    expect(inPlan('SendMessage')).toBe('deny');
  });

  it('invalid input is left to the tool to report', async () => {
    expect(await decide('Write', { file_path: 7 }, context())).toBe('allow');
  });

  it('--always adds the tool in the file directory (no Bash rule without the parsed command)', async () => {
    expect(ruleForAlways('Bash', { command: 'npm install' }, CWD)).toBeUndefined(); // the gate makes it from the parsed command (bashAlwaysRule)
    expect(ruleForAlways('Write', { file_path: '/tmp/out/a.txt' }, CWD)).toBe('Write(//tmp/out/**)');
    expect(ruleForAlways('Edit', { file_path: 'src/a.ts' }, CWD)).toBe(`Edit(/${CWD}/src/**)`);
    expect(
      await decide('Write', { file_path: '/tmp/out/b.txt', content: '' }, context({ allow: [ruleForAlways('Write', { file_path: '/tmp/out/a.txt' }, CWD)!] })),
    ).toBe('allow');
  });
});

describe('settings files', () => {
  it('merges user, project and local rules by --setting-sources; a malformed file is an error naming its file, line and column (issue 29)', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-settings-'));
    try {
      const home = path.join(root, 'home');
      const cwd = path.join(root, 'project');
      await mkdir(path.join(home, '.claude'), { recursive: true });
      await mkdir(path.join(cwd, '.claude'), { recursive: true });
      await writeFile(
        path.join(home, '.claude', 'settings.json'),
        JSON.stringify({ permissions: { allow: ['Bash(npm test:*)'], defaultMode: 'acceptEdits' } }),
      );
      await writeFile(
        path.join(cwd, '.claude', 'settings.json'),
        JSON.stringify({
          permissions: { deny: ['Read(.env)', 'Bash(npm'], additionalDirectories: ['../shared'] },
          hooks: { Stop: [{ hooks: [{ type: 'command', command: 'true' }] }] },
        }),
      );
      await writeFile(path.join(cwd, '.claude', 'settings.local.json'), '{\n  "permissions": {\n    "allow": ["Edit"],\n  }\n}');

      const all = await loadSettings(cwd, undefined, home, { trusted: true });
      expect(all.permissions.allow).toEqual([{ rule: 'Bash(npm test:*)', source: 'userSettings' }]);
      expect(all.permissions.deny).toEqual([{ rule: 'Read(.env)', source: 'projectSettings' }]);
      expect(all.permissions.defaultMode).toBe('acceptEdits');
      // A project's file cannot open a directory outside the workspace (issue 17 §6).
      expect(all.permissions.additionalDirectories).toEqual([]);
      expect(all.warnings.join('\n')).toContain('additionalDirectories entry "../shared" ignored: it is outside the workspace');
      expect(all.stopHooks).toHaveLength(1);
      // Issue 29: a deny rule that cannot be read, and a file that is not JSON, fail closed.
      expect(all.errors.join('\n')).toContain('permissions.deny[1] cannot be read: Invalid permission rule "Bash(npm"');
      expect(all.errors.join('\n')).toMatch(/settings\.local\.json:4:3: not valid JSON/);

      const userOnly = await loadSettings(cwd, ['user'], home);
      expect(userOnly.stopHooks).toEqual([]); // a user can refuse the workspace's hooks
      expect(userOnly.permissions.deny).toEqual([]);
      expect(userOnly.warnings).toEqual([]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('a project or local file cannot switch to bypassPermissions or open directories outside the workspace; the user can', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-settings-'));
    try {
      const home = path.join(root, 'home');
      const cwd = path.join(root, 'project');
      await mkdir(path.join(home, '.claude'), { recursive: true });
      await mkdir(path.join(cwd, '.claude'), { recursive: true });
      const projectFile = JSON.stringify({
        permissions: { defaultMode: 'bypassPermissions', additionalDirectories: ['/', '~', 'docs', path.join(root, 'shared')] },
      });
      await writeFile(path.join(cwd, '.claude', 'settings.json'), projectFile);
      await writeFile(
        path.join(cwd, '.claude', 'settings.local.json'),
        JSON.stringify({ permissions: { defaultMode: 'bypassPermissions', additionalDirectories: ['../..'] } }),
      );

      const cloned = await loadSettings(cwd, undefined, home, { trusted: true });
      expect(cloned.permissions.defaultMode).toBeUndefined();
      expect(cloned.permissions.additionalDirectories).toEqual([path.join(cwd, 'docs')]);
      const warnings = cloned.warnings.join('\n');
      expect(warnings).toContain('settings.json: permissions.defaultMode "bypassPermissions" ignored');
      expect(warnings).toContain('settings.local.json: permissions.defaultMode "bypassPermissions" ignored');
      for (const entry of ['"/"', '"~"', '"../.."', JSON.stringify(path.join(root, 'shared'))])
        expect(warnings).toContain(`additionalDirectories entry ${entry} ignored`);

      // The user's own settings may do both; a project may then repeat a directory the user opened.
      await writeFile(
        path.join(home, '.claude', 'settings.json'),
        JSON.stringify({ permissions: { defaultMode: 'bypassPermissions', additionalDirectories: [path.join(root, 'shared')] } }),
      );
      const trusted = await loadSettings(cwd, undefined, home, { trusted: true });
      expect(trusted.permissions.defaultMode).toBe('bypassPermissions');
      expect(trusted.permissions.additionalDirectories).toEqual([path.join(root, 'shared'), path.join(cwd, 'docs'), path.join(root, 'shared')]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
