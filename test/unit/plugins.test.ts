import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseHookSettings } from '../../common/hooks';
import { loadPlugins, readPlugin } from '../../activities/plugins';
import { readCustomCommands } from '../../activities/custom-commands';
import { loadSessionContext, readAgents } from '../../activities/session-context';
import { loadHookSettings } from '../../activities/hooks/run-hooks';
import { loadMcpConfig } from '../../activities/mcp/activities';

describe('readPlugin', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'plugin-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('reads the manifest, the default folders and the hooks with ${CLAUDE_PLUGIN_ROOT} replaced', async () => {
    await mkdir(path.join(root, '.claude-plugin'), { recursive: true });
    await mkdir(path.join(root, 'hooks'), { recursive: true });
    await writeFile(path.join(root, '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'kit', commands: './extra' }));
    await writeFile(
      path.join(root, 'hooks', 'hooks.json'),
      JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '${CLAUDE_PLUGIN_ROOT}/check.sh' }] }] } }),
    );
    const plugin = await readPlugin(root);
    expect(plugin.name).toBe('kit');
    expect(plugin.commandDirectories).toEqual([path.join(root, 'commands'), path.join(root, 'extra')]);
    expect(plugin.skillDirectories).toEqual([path.join(root, 'skills')]);
    const parsed = parseHookSettings(plugin.hooks, path.join(root, 'hooks', 'hooks.json'));
    expect(parsed.hooks.PreToolUse?.[0].hooks[0]).toMatchObject({ command: `${root}/check.sh` });
  });

  it('refuses a folder without a manifest or with a malformed one', async () => {
    await expect(readPlugin(root)).rejects.toThrow(/plugin.json manifest/);
    await mkdir(path.join(root, '.claude-plugin'), { recursive: true });
    await writeFile(path.join(root, '.claude-plugin', 'plugin.json'), '{');
    await expect(readPlugin(root)).rejects.toThrow(/not valid JSON/);
  });
});

describe('loadPlugins and the loaders that use it (issue 33)', () => {
  let dir: string;
  let home: string;
  let cwd: string;
  let kit: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'plugins-'));
    home = path.join(dir, 'home');
    cwd = path.join(dir, 'work');
    kit = path.join(dir, 'kit');
    await mkdir(path.join(kit, '.claude-plugin'), { recursive: true });
    await mkdir(path.join(kit, 'commands'), { recursive: true });
    await mkdir(path.join(kit, 'agents'), { recursive: true });
    await mkdir(path.join(kit, 'hooks'), { recursive: true });
    await mkdir(path.join(home, '.claude', 'plugins'), { recursive: true });
    await mkdir(path.join(cwd, '.claude'), { recursive: true });
    await writeFile(path.join(kit, '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'kit' }));
    await writeFile(path.join(kit, 'commands', 'hello.md'), 'Say hello to $ARGUMENTS');
    await writeFile(path.join(kit, 'agents', 'helper.md'), '---\nname: helper\ndescription: Helps\n---\nYou help.');
    await writeFile(
      path.join(kit, 'hooks', 'hooks.json'),
      JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: '${CLAUDE_PLUGIN_ROOT}/stop.sh' }] }] } }),
    );
    await writeFile(path.join(kit, '.mcp.json'), JSON.stringify({ mcpServers: { echo: { command: 'node', args: ['${CLAUDE_PLUGIN_ROOT}/server.js'] } } }));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads a --plugin-dir; a missing one or a bad manifest is an error naming it', async () => {
    const loaded = await loadPlugins({ cwd, pluginDirs: [kit, path.join(dir, 'nope')], home, trusted: false });
    expect(loaded.plugins.map((plugin) => [plugin.name, plugin.origin])).toEqual([['kit', 'plugin-dir']]);
    expect(loaded.errors).toEqual([`--plugin-dir ${path.join(dir, 'nope')}: not a directory on this worker`]);
    await writeFile(path.join(kit, '.claude-plugin', 'plugin.json'), '{"name": 3}');
    expect((await loadPlugins({ cwd, pluginDirs: [kit], home, trusted: false })).errors[0]).toMatch(/needs a name/);
  });

  it("loads installed plugins the user's settings enable; a workspace's settings enable only once trusted", async () => {
    await writeFile(
      path.join(home, '.claude', 'plugins', 'installed_plugins.json'),
      JSON.stringify({ version: 2, plugins: { 'kit@market': [{ scope: 'user', installPath: kit }] } }),
    );
    expect((await loadPlugins({ cwd, home, trusted: true })).plugins).toEqual([]);
    await writeFile(path.join(cwd, '.claude', 'settings.json'), JSON.stringify({ enabledPlugins: { 'kit@market': true } }));
    expect((await loadPlugins({ cwd, home, trusted: false })).plugins).toEqual([]);
    expect((await loadPlugins({ cwd, home, trusted: true })).plugins.map((plugin) => plugin.id)).toEqual(['kit@market']);
    await writeFile(path.join(home, '.claude', 'settings.json'), JSON.stringify({ enabledPlugins: { 'kit@market': true } }));
    const loaded = await loadPlugins({ cwd, home, trusted: false });
    expect(loaded.plugins.map((plugin) => [plugin.name, plugin.origin, plugin.root])).toEqual([['kit', 'installed', kit]]);
  });

  it('adds the commands as /kit:hello, the agents as kit:helper, the hooks as user hooks with the root, the servers as plugin:kit:echo', async () => {
    const plugins = (await loadPlugins({ cwd, pluginDirs: [kit], home, trusted: false })).plugins;
    const commands = await readCustomCommands(cwd, home, { project: false, plugins });
    expect(commands.commands.map((command) => [command.name, command.scope])).toEqual([['kit:hello', 'plugin']]);
    const agents = await readAgents(cwd, home, { project: false, plugins });
    expect(agents.agents.map((agent) => agent.name)).toEqual(['kit:helper']);
    const hooks = await loadHookSettings({ cwd, pluginDirs: [kit], settingSources: ['user'] }, home);
    expect(hooks.hooks.Stop?.[0].hooks[0]).toMatchObject({ command: `${kit}/stop.sh`, scope: 'user', pluginRoot: kit });
    const mcp = await loadMcpConfig({ cwd, pluginDirs: [kit] }, home);
    expect(mcp.servers).toEqual([
      expect.objectContaining({
        name: 'plugin:kit:echo',
        scope: 'user',
        approval: 'approved',
        config: expect.objectContaining({ args: [`${kit}/server.js`] }),
      }),
    ]);
    expect((await loadMcpConfig({ cwd, pluginDirs: [kit], strictMcpConfig: true }, home)).servers).toEqual([]);
  });

  it('the session context lists the plugins (for skillSources) and refuses a bad --plugin-dir', async () => {
    const context = await loadSessionContext({ cwd, pluginDirs: [kit], trusted: false }, home);
    expect(context.plugins).toEqual([{ name: 'kit', root: kit, origin: 'plugin-dir' }]);
    expect(context.commands?.map((command) => command.name)).toContain('kit:hello');
    await expect(loadSessionContext({ cwd, pluginDirs: [path.join(dir, 'nope')], trusted: false }, home)).rejects.toThrow(/not a directory/);
  });

  // A real plugin from npm (selfish-pipeline@1.3.0, a devDependency), as installed.
  it('loads selfish-pipeline@1.3.0: its commands and hooks', async () => {
    const root = path.resolve(__dirname, '../../node_modules/selfish-pipeline');
    const plugins = (await loadPlugins({ cwd, pluginDirs: [root], home, trusted: false })).plugins;
    expect(plugins.map((plugin) => plugin.name)).toEqual(['selfish']);
    const commands = await readCustomCommands(cwd, home, { project: false, plugins });
    expect(commands.commands.map((command) => command.name)).toContain('selfish:spec');
    const agents = await readAgents(cwd, home, { project: false, plugins });
    expect(agents.agents.map((agent) => agent.name)).toContain('selfish:selfish-architect');
    const hooks = await loadHookSettings({ cwd, pluginDirs: [root], settingSources: ['user'] }, home);
    expect(hooks.hooks.SessionStart?.[0].hooks[0]).toMatchObject({ command: `"${root}/scripts/session-start-context.sh"`, pluginRoot: root });
  });
});
