/**
 * The chat's own slash commands (client/chat/local-commands.ts) that read files only: real
 * workspace and home directories in temp dirs. Those that ask the conversation (/resume,
 * /permissions, /config, /doctor, /export) run against the dev server in
 * test/integration/chat-local-commands.test.ts.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INIT_PROMPT, LOCAL_COMMANDS, type LocalCommandContext, age, exportFileName, formatChecks, runLocalCommand } from '../../client/chat/local-commands';
import type { ConversationClient } from '../../client/api';

let root: string;
let cwd: string;
let home: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'local-commands-'));
  cwd = path.join(root, 'work');
  home = path.join(root, 'home');
  await mkdir(path.join(cwd, '.claude', 'agents'), { recursive: true });
  await mkdir(path.join(home, '.claude', 'agents'), { recursive: true });
  await writeFile(path.join(cwd, 'CLAUDE.md'), '# Project\nUse pnpm.\n');
  await writeFile(path.join(home, '.claude', 'CLAUDE.md'), 'Be brief.\n');
  await writeFile(
    path.join(cwd, '.claude', 'agents', 'reviewer.md'),
    '---\nname: reviewer\ndescription: Reviews a diff\ntools: Read, Grep\n---\nYou review.\n',
  );
  await writeFile(path.join(home, '.claude', 'agents', 'writer.md'), '---\nname: writer\ndescription: Writes docs\nmodel: haiku\n---\nYou write.\n');
  await writeFile(path.join(cwd, '.claude', 'agents', 'broken.md'), 'no front matter here\n');
  await writeFile(
    path.join(cwd, '.claude', 'settings.json'),
    JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './check-bash.sh' }] }] } }),
  );
  await writeFile(
    path.join(home, '.claude', 'settings.json'),
    JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }] } }),
  );
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A context for commands that read files only: they never touch the API. */
function context(overrides: Partial<LocalCommandContext> = {}): LocalCommandContext {
  return { api: undefined as unknown as ConversationClient, conversationId: 'c-1', cwd, taskQueue: 'q', config: { cwd }, home, env: {}, ...overrides };
}

const textOf = (result: Awaited<ReturnType<typeof runLocalCommand>>) => {
  if (result?.kind !== 'text') throw new Error(`expected text, got ${JSON.stringify(result)}`);
  return result.text;
};

describe('runLocalCommand', () => {
  it('leaves every other line to the conversation', async () => {
    for (const line of ['hello', '/help', '/clear', '/compact keep tests', '/cost', '/status', '/model opus', '/review a.ts', '/ exit', 'exit']) {
      expect(await runLocalCommand(line, context())).toBeUndefined();
    }
    expect(LOCAL_COMMANDS.map((command) => command.name)).toEqual([
      'exit',
      'quit',
      'resume',
      'permissions',
      'memory',
      'agents',
      'hooks',
      'config',
      'doctor',
      'export',
      'init',
    ]);
  });

  it('/exit and /quit exit; /init sends the CLAUDE.md prompt', async () => {
    expect(await runLocalCommand('/exit', context())).toEqual({ kind: 'exit' });
    expect(await runLocalCommand('  /quit  ', context())).toEqual({ kind: 'exit' });
    expect(await runLocalCommand('/init', context())).toEqual({ kind: 'send', prompt: INIT_PROMPT });
    expect(INIT_PROMPT).toContain('CLAUDE.md');
  });

  it('/memory lists the project, local and user files with their paths and states', async () => {
    const result = await runLocalCommand('/memory', context());
    if (result?.kind !== 'pick') throw new Error('expected a pick');
    expect(result.items.map((item) => item.label)).toEqual([
      `Project memory: ${path.join(cwd, 'CLAUDE.md')}`,
      `Local memory: ${path.join(cwd, 'CLAUDE.local.md')}`,
      'User memory: ~/.claude/CLAUDE.md',
    ]);
    expect(result.items.map((item) => item.hint?.split(' —')[0])).toEqual(['2 lines', 'not created yet', '1 line']);
    expect(result.title).toContain('Set $EDITOR or $VISUAL');
    expect(textOf(await result.choose(path.join(cwd, 'CLAUDE.md')))).toContain(path.join(cwd, 'CLAUDE.md'));
    expect(textOf(await result.choose('/etc/passwd'))).toMatch(/^Not in the list/);
  });

  it('/memory opens the chosen file in $VISUAL (a real program), even one that does not exist yet', async () => {
    const editor = path.join(root, 'fake-editor.sh');
    await writeFile(editor, '#!/bin/sh\necho "edited by the editor" >> "$1"\n');
    await chmod(editor, 0o755);
    const result = await runLocalCommand('/memory', context({ env: { VISUAL: editor, EDITOR: 'false' } }));
    if (result?.kind !== 'pick') throw new Error('expected a pick');
    expect(result.title).toContain(`open it in ${editor}`);
    const local = path.join(cwd, 'CLAUDE.local.md');
    expect(textOf(await result.choose(local))).toMatch(/^Edited /);
    expect(await readFile(local, 'utf8')).toBe('edited by the editor\n');
    const failing = await runLocalCommand('/memory', context({ env: { EDITOR: 'false' } }));
    if (failing?.kind !== 'pick') throw new Error('expected a pick');
    expect(textOf(await failing.choose(local))).toContain('false exited with 1');
  });

  it('/agents lists the built-in, project and user agents, and a file it could not read', async () => {
    const shown = textOf(await runLocalCommand('/agents', context({ config: { cwd, trusted: true } })));
    expect(shown).toMatch(/Built-in agents:\n {2}general-purpose/);
    expect(shown).toContain(`Project agents (${path.join(cwd, '.claude', 'agents')}):\n  reviewer — Reviews a diff\n      tools: Read, Grep`);
    const untrusted = textOf(await runLocalCommand('/agents', context()));
    expect(untrusted).toContain(`Project agents (${path.join(cwd, '.claude', 'agents')}) — not loaded: this workspace is not trusted:\n  reviewer`);
    expect(shown).toContain('User agents (~/.claude/agents):\n  writer (haiku) — Writes docs');
    expect(shown).toMatch(/! Agent file ignored: .*broken\.md/);
  });

  it('/hooks lists the hooks by event with their file; an untrusted workspace’s are marked not run', async () => {
    const shown = textOf(await runLocalCommand('/hooks', context()));
    expect(shown).toContain(`PreToolUse:\n  [Bash] ./check-bash.sh  — ${path.join(cwd, '.claude', 'settings.json')} (not run: the workspace is not trusted)`);
    expect(shown).toContain('Stop:\n  notify-send done  — ~/.claude/settings.json');
    const trusted = textOf(await runLocalCommand('/hooks', context({ config: { cwd, trusted: true } })));
    expect(trusted).toContain(`[Bash] ./check-bash.sh  — ${path.join(cwd, '.claude', 'settings.json')}\n`);
    const empty = path.join(root, 'empty');
    await mkdir(empty, { recursive: true });
    expect(textOf(await runLocalCommand('/hooks', context({ cwd: empty, home: empty, config: { cwd: empty } })))).toMatch(/^No hooks configured\./);
  });

  it('names exports by date and first words; says ages and checks plainly', () => {
    const now = new Date('2026-12-07T10:00:00Z');
    expect(exportFileName('Fix the failing test in src/app.ts, please!', now)).toBe('2026-12-07-fix-the-failing-test-in-src.txt');
    expect(exportFileName(undefined, now)).toBe('2026-12-07-conversation.txt');
    expect(exportFileName('¿¡', now)).toBe('2026-12-07-conversation.txt');
    expect(age(new Date('2026-12-07T09:59:30Z'), now)).toBe('just now');
    expect(age(new Date('2026-12-07T09:55:00Z'), now)).toBe('5m ago');
    expect(age(new Date('2026-12-05T09:00:00Z'), now)).toBe('2d ago');
    expect(
      formatChecks([
        { ok: true, name: 'git', detail: 'git version 2' },
        { ok: false, name: 'rg', detail: 'missing', fix: 'install it' },
      ]),
    ).toBe('✓ git: git version 2\n✗ rg: missing\n    → install it');
  });
});
