import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseHookSettings } from '../../common/hooks';
import { readPlugin } from '../../activities/plugins';

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
