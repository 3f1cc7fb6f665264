import { describe, expect, it } from 'vitest';
import { anchorPathRule, globToRegExp, isInside, pathMatchesRule } from '../../common/path-rules';
import { pathMatchesRule as reexported } from '../../common/permissions';

const CWD = '/work/project';
const at = { cwd: CWD, homeDir: '/home/alice' };
const matches = (rule: string, target: string) => pathMatchesRule(rule, target, at);

describe('path rules: anchoring (gitignore, as Claude Code)', () => {
  it('//abs from /, ~/ from home, /x and ./x and a/b from the workspace root, a bare name at any depth', () => {
    expect(anchorPathRule('//etc/**', at)).toEqual({ root: '/', pattern: 'etc/**' });
    expect(anchorPathRule('~/.ssh/**', at)).toEqual({ root: '/home/alice', pattern: '.ssh/**' });
    expect(anchorPathRule('/src/*.ts', at)).toEqual({ root: CWD, pattern: 'src/*.ts' });
    expect(anchorPathRule('./src/*.ts', at)).toEqual({ root: CWD, pattern: 'src/*.ts' });
    expect(anchorPathRule('src/*.ts', at)).toEqual({ root: CWD, pattern: 'src/*.ts' });
    expect(anchorPathRule('.env', at)).toEqual({ root: CWD, pattern: '**/.env' });
    expect(anchorPathRule('build/', at)).toEqual({ root: CWD, pattern: '**/build' });
    expect(anchorPathRule('../secrets/**', at)).toEqual({ root: '/work', pattern: 'secrets/**' });
    expect(anchorPathRule('~/x', { cwd: CWD })).toBeUndefined();
  });

  it('matches absolute targets below the anchor only', () => {
    expect(matches('//tmp/**', '/tmp/a/b.txt')).toBe(true);
    expect(matches('//tmp/**', '/var/tmp/a')).toBe(false);
    expect(matches('~/.ssh/**', '/home/alice/.ssh/id_rsa')).toBe(true);
    expect(matches('~/.ssh/**', '/home/bob/.ssh/id_rsa')).toBe(false);
    expect(matches('~', '/home/alice/anything')).toBe(true);
    expect(matches('/src/**/*.ts', `${CWD}/src/a/b.ts`)).toBe(true);
    expect(matches('/src/**/*.ts', `${CWD}/src/b.ts`)).toBe(true);
    expect(matches('/src/**/*.ts', `${CWD}/lib/src/b.ts`)).toBe(false);
    expect(matches('src/*.ts', `${CWD}/src/a/b.ts`)).toBe(false);
    expect(matches('src/**', '/elsewhere/src/y.ts')).toBe(false);
    expect(matches('../secrets/**', '/work/secrets/key')).toBe(true);
    expect(matches('../secrets/**', `${CWD}/secrets/key`)).toBe(false);
  });

  it('a bare pattern matches at any depth, dotfiles included; a matched directory covers its contents', () => {
    expect(matches('.env', `${CWD}/.env`)).toBe(true);
    expect(matches('.env', `${CWD}/a/b/.env`)).toBe(true);
    expect(matches('.env', `${CWD}/.env.example`)).toBe(false);
    expect(matches('*.env', `${CWD}/deep/dir/.env`)).toBe(true);
    expect(matches('*.env', `${CWD}/deep/prod.env`)).toBe(true);
    expect(matches('*.env', `${CWD}/deep/env.txt`)).toBe(false);
    expect(matches('secrets', `${CWD}/a/secrets/key.pem`)).toBe(true);
    expect(matches('node_modules/', `${CWD}/node_modules/x/index.js`)).toBe(true);
    expect(matches('**', `${CWD}/.git/config`)).toBe(true);
    expect(matches('*', `${CWD}/.hidden`)).toBe(true);
  });
});

describe('path rules: glob syntax (picomatch)', () => {
  it('{a,b} alternatives', () => {
    expect(matches('*.{ts,js}', `${CWD}/src/index.ts`)).toBe(true);
    expect(matches('*.{ts,js}', `${CWD}/index.js`)).toBe(true);
    expect(matches('*.{ts,js}', `${CWD}/index.json`)).toBe(false);
    expect(matches('{src,lib}/**', `${CWD}/lib/a/b`)).toBe(true);
    expect(matches('{src,lib}/**', `${CWD}/test/a`)).toBe(false);
    expect(matches('//etc/{passwd,shadow}', '/etc/shadow')).toBe(true);
  });

  it('[…] classes, negated with ! or ^', () => {
    expect(matches('src/[ab]*.ts', `${CWD}/src/alpha.ts`)).toBe(true);
    expect(matches('src/[ab]*.ts', `${CWD}/src/beta.ts`)).toBe(true);
    expect(matches('src/[ab]*.ts', `${CWD}/src/gamma.ts`)).toBe(false);
    expect(matches('file[0-9].txt', `${CWD}/x/file7.txt`)).toBe(true);
    expect(matches('file[!0-9].txt', `${CWD}/file7.txt`)).toBe(false);
    expect(matches('file[!0-9].txt', `${CWD}/filex.txt`)).toBe(true);
    expect(matches('file[^0-9].txt', `${CWD}/filex.txt`)).toBe(true);
  });

  it('? one character, * within a segment, ** across segments', () => {
    expect(matches('/a?c', `${CWD}/abc`)).toBe(true);
    expect(matches('/a?c', `${CWD}/a/c`)).toBe(false);
    expect(matches('/a.c', `${CWD}/abc`)).toBe(false);
    expect(matches('/src/*', `${CWD}/src/a/b.ts`)).toBe(true); // src/a is matched: a directory covers its contents
    expect(matches('/src/*.ts', `${CWD}/src/a/b.ts`)).toBe(false);
    expect(matches('/a/**/z', `${CWD}/a/z`)).toBe(true);
    expect(matches('/a/**/z', `${CWD}/a/b/c/z`)).toBe(true);
  });

  it('a leading ! and extglobs are literal: a rule never means "everything but"', () => {
    expect(matches('!secret', `${CWD}/other`)).toBe(false);
    expect(matches('!secret', `${CWD}/!secret`)).toBe(true);
    expect(matches('+(a|b)', `${CWD}/a`)).toBe(false);
  });

  it('a backslash escapes a glob character', () => {
    expect(matches('/a\\*b', `${CWD}/a*b`)).toBe(true);
    expect(matches('/a\\*b', `${CWD}/axb`)).toBe(false);
  });

  it('globToRegExp compiles with the same options; permissions.ts re-exports pathMatchesRule', () => {
    expect(globToRegExp('**/*.{ts,tsx}').test('a/b/c.tsx')).toBe(true);
    expect(globToRegExp('[!a]x').test('ax')).toBe(false);
    expect(reexported('*.{ts,js}', `${CWD}/a.ts`, at)).toBe(true);
    expect(isInside('/a/bc', '/a/b')).toBe(false);
    expect(isInside('/a/b/c', '/a/b')).toBe(true);
    expect(isInside('/x', '/')).toBe(true);
  });
});

describe('path rules in decisions', () => {
  it('Read(*.{ts,js}) and Read(src/[ab]*.ts) deny; Edit(src/{a,b}/**) allows', async () => {
    const { decidePermission } = await import('../../common/permissions');
    const context = (deny: string[], allow: string[] = []) => ({
      mode: 'default' as const,
      rules: { deny: deny.map((rule) => ({ rule, source: 'cliArg' as const })), ask: [], allow: allow.map((rule) => ({ rule, source: 'cliArg' as const })) },
      workingDirectories: [CWD],
      homeDir: '/home/alice',
    });
    const facts = { validInput: true, readOnly: true };
    expect(decidePermission({ toolName: 'Read', input: { file_path: 'src/x.ts' } }, facts, context(['Read(*.{ts,js})'])).behavior).toBe('deny');
    expect(decidePermission({ toolName: 'Read', input: { file_path: 'src/x.md' } }, facts, context(['Read(*.{ts,js})'])).behavior).toBe('allow');
    expect(decidePermission({ toolName: 'Read', input: { file_path: 'src/b2.ts' } }, facts, context(['Read(src/[ab]*.ts)'])).behavior).toBe('deny');
    expect(decidePermission({ toolName: 'Read', input: { file_path: 'src/c2.ts' } }, facts, context(['Read(src/[ab]*.ts)'])).behavior).toBe('allow');
    const edit = { toolName: 'Edit', input: { file_path: 'src/b/y.ts', old_string: 'a', new_string: 'b' } };
    expect(decidePermission(edit, { validInput: true, readOnly: false }, context([], ['Edit(src/{a,b}/**)'])).behavior).toBe('allow');
    expect(
      decidePermission(
        { ...edit, input: { ...edit.input, file_path: 'src/c/y.ts' } },
        { validInput: true, readOnly: false },
        context([], ['Edit(src/{a,b}/**)']),
      ).behavior,
    ).toBe('ask');
  });
});
