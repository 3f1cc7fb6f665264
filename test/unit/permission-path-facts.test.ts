/**
 * The permission engine deciding a file tool on the facts gathered where it acts (issue 17 §4–§5):
 * a path counts as written and as its real path; protected files ask in every mode.
 */
import { describe, expect, it } from 'vitest';
import type { CallFacts, PathFact } from '../../common/permission-facts';
import { type PermissionContext, type PermissionMode, decidePermission, isProtectedPath } from '../../common/permissions';
import { toolAccessFor } from '../../common/tool-access';
import { toolFacts } from '../../common/tool-facts';

const CWD = '/work/project';

function context(mode: PermissionMode = 'default', rules: { allow?: string[]; deny?: string[]; ask?: string[] } = {}): PermissionContext {
  const list = (entries: string[] = []) => entries.map((rule) => ({ rule, source: 'cliArg' as const }));
  return { mode, rules: { allow: list(rules.allow), deny: list(rules.deny), ask: list(rules.ask) }, workingDirectories: [CWD], homeDir: '/home/alice' };
}

function path(literal: string, real?: string, kind: PathFact['kind'] = 'file'): PathFact {
  const absolute = literal.startsWith('/') ? literal : `${CWD}/${literal}`;
  return { literal, absolute, real: real ?? absolute, exists: kind !== 'missing', kind };
}

function decide(toolName: string, input: Record<string, unknown>, gathered: PathFact, ctx: PermissionContext) {
  const access = toolName === 'Write' || toolName === 'Edit' ? 'write' : 'read';
  const facts: CallFacts = { toolUseId: 'toolu_1', paths: [{ access, path: gathered }] };
  return decidePermission({ toolName, input }, { ...toolFacts({ name: toolName, input }), gathered: facts }, ctx);
}

const write = (file: string) => ({ file_path: file, content: 'x' });
const edit = (file: string) => ({ file_path: file, old_string: 'a', new_string: 'b' });

describe('symbolic links: the real path counts', () => {
  it('a write through a link inside the workspace that leads out asks, in acceptEdits too', () => {
    const link = path('notes.txt', '/etc/cron.d/job');
    for (const mode of ['default', 'acceptEdits'] as const) {
      const decision = decide('Write', write('notes.txt'), link, context(mode));
      expect(decision.behavior).toBe('ask');
      expect(decision.reason).toContain('it leads to /etc/cron.d/job');
    }
    // Without the link the same write is fine in acceptEdits.
    expect(decide('Write', write('notes.txt'), path('notes.txt'), context('acceptEdits')).behavior).toBe('allow');
  });

  it('a read through a linked directory leading out asks, and a deny rule on the target denies', () => {
    const linked = path('vendor/secret.txt', '/outside/secret.txt');
    expect(decide('Read', { file_path: 'vendor/secret.txt' }, linked, context()).behavior).toBe('ask');
    expect(decide('Read', { file_path: 'vendor/secret.txt' }, linked, context('default', { deny: ['Read(//outside/**)'] })).behavior).toBe('deny');
    // bypassPermissions runs it, but a deny rule still holds there.
    expect(decide('Read', { file_path: 'vendor/secret.txt' }, linked, context('bypassPermissions')).behavior).toBe('allow');
    expect(decide('Read', { file_path: 'vendor/secret.txt' }, linked, context('bypassPermissions', { deny: ['Read(//outside/**)'] })).behavior).toBe('deny');
  });

  it('an allow rule must cover the real path too', () => {
    const linked = path('src/link.ts', '/etc/passwd');
    expect(decide('Edit', edit('src/link.ts'), linked, context('default', { allow: ['Edit(src/**)'] })).behavior).toBe('ask');
    expect(decide('Edit', edit('src/a.ts'), path('src/a.ts'), context('default', { allow: ['Edit(src/**)'] })).behavior).toBe('allow');
  });

  it('a device, FIFO or /proc entry is not read-only input', () => {
    const decision = decide('Read', { file_path: 'fifo' }, path('fifo', `${CWD}/fifo`, 'other'), context());
    expect(decision.behavior).toBe('ask');
    expect(
      decide('Read', { file_path: '/proc/1/environ' }, path('/proc/1/environ', '/proc/1/environ', 'other'), context('default', { allow: ['Read(//proc/**)'] }))
        .behavior,
    ).toBe('ask');
  });
});

describe('protected files ask in every mode', () => {
  const cases: Array<[string, string?]> = [
    ['.claude/settings.json'],
    ['.git/config'],
    ['.git/hooks/pre-commit'],
    ['packages/app/.git/config'],
    ['sub/.claude/settings.local.json'],
    ['.vscode/settings.json'],
    ['.idea/workspace.xml'],
    ['.bashrc'],
    ['link-to-git-config', `${CWD}/.git/config`],
    // What the sandbox keeps read-only, whether or not it exists (issue 29).
    ['.git/commondir'],
    ['.envrc'],
    ['.husky/pre-commit'],
    ['.yarnrc.yml'],
    ['.yarnrc'],
    ['.npmrc'],
    ['.mcp.json'],
    ['.gitmodules'],
  ];
  for (const [file, real] of cases) {
    it(`${file}${real ? ` (→ ${real})` : ''}`, () => {
      for (const mode of ['default', 'acceptEdits', 'bypassPermissions'] as const) {
        const decision = decide('Write', write(file), path(file, real), context(mode, { allow: ['Write', 'Edit'] }));
        expect(decision.behavior, mode).toBe('ask');
        expect(decision.reason).toContain('protected');
      }
      expect(decide('Write', write(file), path(file, real), context('dontAsk', { allow: ['Write'] })).behavior).toBe('deny');
    });
  }

  it('.claude/commands, .claude/agents and .claude/skills are not protected; reading a protected file is fine', () => {
    expect(isProtectedPath(`${CWD}/.claude/commands/test.md`)).toBe(false);
    expect(isProtectedPath(`${CWD}/.claude/agents/reviewer.md`)).toBe(false);
    expect(decide('Write', write('.claude/commands/test.md'), path('.claude/commands/test.md'), context('acceptEdits')).behavior).toBe('allow');
    expect(decide('Read', { file_path: '.git/config' }, path('.git/config'), context()).behavior).toBe('allow');
    expect(isProtectedPath(`${CWD}/src/git/config.ts`)).toBe(false);
  });
});

describe('what runTool enforces for an allowed call', () => {
  it("carries the Read deny rules, the working directories and a write's real path", () => {
    const ctx = context('default', { deny: ['Read(.env)', 'Read', 'Bash(rm:*)', 'Edit(x)'] });
    const facts: CallFacts = { toolUseId: 't', paths: [{ access: 'write', path: path('a.txt', '/work/project/real/a.txt') }] };
    expect(toolAccessFor(ctx, facts)).toEqual({
      workingDirectories: [CWD],
      readDeny: ['.env', '**'],
      homeDir: '/home/alice',
      allowedRealPaths: ['/work/project/real/a.txt'],
    });
    // An approved read outside: its real path is where the tool may then read.
    const outside: CallFacts = { toolUseId: 't', paths: [{ access: 'read', path: path('/srv/data', '/srv/data', 'directory') }] };
    expect(toolAccessFor(context(), outside).workingDirectories).toEqual([CWD, '/srv/data']);
  });
});
