/** The Bash fact gatherer (activities/permission-facts/bash-facts.ts) on the real tree-sitter grammar. */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  decodeAnsiC,
  expandBraces,
  gatherBashFacts,
  globPrefix,
  isDataVariable,
  loadBashParser,
  writerPaths,
} from '../../activities/permission-facts/bash-facts';
import type { BashFacts, PathFact } from '../../common/permission-facts';

const CWD = '/ws';
const HOME = '/home/u';

/** Lexical resolution: these tests look at what the gatherer asks for, not at a file system. */
async function resolve(literal: string, base: string): Promise<PathFact> {
  const absolute = path.posix.resolve(base, literal);
  return { literal, absolute, real: absolute, exists: false, kind: 'missing' };
}

async function facts(command: string): Promise<BashFacts> {
  return gatherBashFacts(command, { cwd: CWD, homeDir: HOME, resolve });
}

async function argvs(command: string): Promise<string[][]> {
  return (await facts(command)).commands.map((fact) => fact.argv);
}

async function problems(command: string): Promise<string[]> {
  return (await facts(command)).problems;
}

beforeAll(async () => {
  await loadBashParser();
});

describe('quote removal and program names', () => {
  it.each([
    ["r''m -rf x", ['rm', '-rf', 'x']],
    ['"rm" -rf x', ['rm', '-rf', 'x']],
    ['\\rm -rf x', ['rm', '-rf', 'x']],
    ["$'\\x72\\x6d' x", ['rm', 'x']],
    ["$'\\162m' x", ['rm', 'x']],
    ['/bin/rm x', ['rm', 'x']],
    ['/usr/local/bin/rg x', ['rg', 'x']],
    ['./rm x', ['./rm', 'x']],
    ['echo \'a b\' "c\\"d" e\\ f', ['echo', 'a b', 'c"d', 'e f']],
    ['echo "a\\$b" \'$c\'', ['echo', 'a$b', '$c']],
    ["echo $'a\\tb\\n'", ['echo', 'a\tb\n']],
    ['r\\\nm -rf x', ['rm', '-rf', 'x']],
    ['ls -la\\\n src', ['ls', '-la', 'src']],
    ['echo "a\\\nb"', ['echo', 'ab']],
    ["echo 'a\\\nb'", ['echo', 'a\\\nb']],
  ])('%j → %j', async (command, argv) => {
    expect(await argvs(command)).toEqual([argv]);
  });

  it('keeps a program given by another path as written, and not read-only', async () => {
    const [fact] = (await facts('./tools/cat x')).commands;
    expect(fact.program).toBe('./tools/cat');
    expect(fact.readOnly).toBe(false);
    expect(fact.reason).toMatch(/program given by its path/);
  });
});

describe('every simple command anywhere in the tree', () => {
  it('lists pipelines, lists, subshells, groups and compound statements in order', async () => {
    expect(await argvs('a && b || c | d; e & f')).toEqual([['a'], ['b'], ['c'], ['d'], ['e'], ['f']]);
    expect(await argvs('(a; { b; }); if c; then d; elif e; then f; else g; fi')).toEqual([['a'], ['b'], ['c'], ['d'], ['e'], ['f'], ['g']]);
    expect(await argvs('for x in 1 2; do a; done; while b; do c; done; until d; do e; done; case x in y) f;; esac; ! g')).toEqual([
      ['a'],
      ['b'],
      ['c'],
      ['d'],
      ['e'],
      ['f'],
      ['g'],
    ]);
  });

  it('lists the commands of substitutions, and their presence is a problem', async () => {
    const result = await facts('echo "$(a)" `b` <(c) >(d) ${x:-$(e)}');
    expect(result.commands.map((fact) => fact.argv[0])).toEqual(['a', 'b', 'c', 'd', 'e', 'echo']);
    expect(result.problems.filter((problem) => /substitution/.test(problem))).toHaveLength(5);
  });

  it('follows a here-document into the pipeline and list after it', async () => {
    const result = await facts('cat <<EOF | grep x > out && rm y\nhi $(id)\nEOF');
    expect(result.commands.map((fact) => fact.argv)).toEqual([['id'], ['cat'], ['grep', 'x'], ['rm', 'y']]);
    expect(result.commands[2].writesByRedirect).toBe(true);
  });

  it('ignores comments, including quotes inside them', async () => {
    expect(await argvs("echo hi #'\nrm -rf x\n#'")).toEqual([
      ['echo', 'hi'],
      ['rm', '-rf', 'x'],
    ]);
    expect(await argvs("echo $'\\'' ; rm -rf x #'")).toEqual([
      ['echo', "'"],
      ['rm', '-rf', 'x'],
    ]);
  });
});

describe('wrappers', () => {
  it.each([
    ['env -i FOO=1 rm x', ['rm', 'x'], ['env']],
    ['command rm x', ['rm', 'x'], ['command']],
    ['builtin cd /', ['cd', '/'], ['builtin']],
    ['exec -a name rm x', ['rm', 'x'], ['exec']],
    ['time -p rm x', ['rm', 'x'], ['time']],
    ['nice -n 10 rm x', ['rm', 'x'], ['nice']],
    ['timeout --signal=KILL -k 5 30s rm x', ['rm', 'x'], ['timeout']],
    ['nohup rm x', ['rm', 'x'], ['nohup']],
    ['sudo -u root -E rm x', ['rm', 'x'], ['sudo']],
    ['stdbuf -oL -e0 rm x', ['rm', 'x'], ['stdbuf']],
    ['ionice -c 3 rm x', ['rm', 'x'], ['ionice']],
    ['nice timeout 5 env rm x', ['rm', 'x'], ['nice', 'timeout', 'env']],
  ])('%s → %j through %j', async (command, argv, wrappers) => {
    const [fact] = (await facts(command)).commands;
    expect(fact.argv).toEqual(argv);
    expect(fact.wrappers).toEqual(wrappers);
    expect(fact.nested).toBe(false);
  });

  it('keeps `command -v` as the command itself', async () => {
    expect(await argvs('command -v ls')).toEqual([['command', '-v', 'ls']]);
  });

  it('marks xargs and find -exec commands nested and not read-only', async () => {
    const xargs = (await facts('xargs -0 -n1 cat < list')).commands;
    expect(xargs.map((fact) => [fact.argv, fact.nested, fact.readOnly])).toEqual([[['cat'], true, false]]);
    const find = (await facts('find . -name x -exec rm {} \\; -print')).commands;
    expect(find.map((fact) => [fact.argv[0], fact.nested])).toEqual([
      ['rm', true],
      ['find', false],
    ]);
  });

  it('parses bash -c, sh -c and eval strings as nested commands, and lists the shell too', async () => {
    const result = await facts("bash -c 'rm -rf x; ls' && sh -ec \"cat y\" && eval 'echo' hi");
    expect(result.commands.map((fact) => [fact.argv, fact.nested])).toEqual([
      [['rm', '-rf', 'x'], true],
      [['ls'], true],
      [['bash', '-c', 'rm -rf x; ls'], false],
      [['cat', 'y'], true],
      [['sh', '-ec', 'cat y'], false],
      [['echo', 'hi'], true],
      [['eval', 'echo', 'hi'], false],
    ]);
    expect(result.problems).toEqual([]);
  });

  it('a string only known at run time is a problem', async () => {
    expect(await problems('bash -c "$X"')).toEqual([expect.stringMatching(/only known when the command runs/)]);
    expect(await problems('eval "$X"')).toEqual([expect.stringMatching(/only known when the command runs/)]);
    expect(await problems('echo rm | sh')).toEqual([expect.stringMatching(/standard input/)]);
  });
});

describe('assignments and the environment', () => {
  it('drops harmless leading assignments', async () => {
    const result = await facts('LC_ALL=C NO_COLOR=1 sort x');
    expect(result.commands.map((fact) => fact.argv)).toEqual([['sort', 'x']]);
    expect(result.problems).toEqual([]);
  });

  it.each([
    'PATH=/tmp ls',
    'LD_PRELOAD=/x.so ls',
    'BASH_ENV=/x ls',
    'ENV=/x sh -c ls',
    'IFS=/ ls',
    'GIT_DIR=/x git status',
    'env LD_PRELOAD=/x.so ls',
    'export PATH=/x',
    'PATH=/x; ls',
    'HOME=/; cat ~/x',
  ])('%s is a problem', async (command) => {
    expect(await problems(command)).not.toEqual([]);
  });

  it('a plain shell variable is fine', async () => {
    expect(await problems('x=1; echo $x')).toEqual([]);
  });

  it('names are data only on the allow-list: ordinary lower-case names and the harmless environment', () => {
    for (const name of ['x', 'count', 'my_var2', 'file_list', 'LC_ALL', 'NO_COLOR', 'TZ']) expect(isDataVariable(name), name).toBe(true);
    for (const name of [
      'BASH_CMDS',
      'BASH_ENV',
      'BASH_ALIASES',
      'BASH_XTRACEFD',
      'ENV',
      'PS1',
      'PS4',
      'PROMPT_COMMAND',
      'IFS',
      'PATH',
      'CDPATH',
      'GLOBIGNORE',
      'SHELLOPTS',
      'BASHOPTS',
      'LD_PRELOAD',
      'HOME',
      'HISTFILE',
      'GIT_DIR',
      'PAGER',
      'EDITOR',
      'LESSOPEN',
      'FOO',
      'histchars',
      'auto_resume',
      'http_proxy',
      '_',
    ]) {
      expect(isDataVariable(name), name).toBe(false);
    }
  });

  it.each([
    ['BASH_CMDS=([grep]=/bin/bash); grep x f', /assigns an array/],
    ['x=(a b)', /assigns an array/],
    ['a[1]=x', /array element/],
    ["declare 'a[$(id)]=1'", /array element/],
    ["declare -a 'b=([$(id)]=1)'", /array element/],
    ["typeset $'a\\x5b$(id)]=1'", /array element/],
    ['local "$X"', /only known when the command runs/],
    ['readonly PATH=/x', /not known to be plain data/],
    ['read -r PAGER < f', /PAGER/],
    ['printf -v BASH_ENV x', /BASH_ENV/],
  ])('%s is a problem', async (command, problem) => {
    expect(await problems(command)).toEqual(expect.arrayContaining([expect.stringMatching(problem)]));
  });
});

describe('words', () => {
  it('marks expansions and globs dynamic, keeping them as written', async () => {
    const [fact] = (await facts('echo $HOME "${x}y" *.ts ~/a plain')).commands;
    expect(fact.argv).toEqual(['echo', '$HOME', '"${x}y"', '*.ts', `${HOME}/a`, 'plain']);
    expect(fact.dynamicWords).toEqual([false, true, true, true, false, false]);
    expect(fact.dynamic).toBe(true);
  });

  it('expands braces into words (dynamic, but their values known)', async () => {
    const [fact] = (await facts('echo a{b,c}d {1..3} {x}')).commands;
    expect(fact.argv).toEqual(['echo', 'abd', 'acd', '1', '2', '3', '{x}']);
    expect(fact.dynamicWords).toEqual([false, true, true, true, true, true, false]);
  });

  it('tilde: the home directory at the start and after = in assignment-like words; ~user is dynamic', async () => {
    const [fact] = (await facts('dd if=~/a of=x:~/b ~root/c --opt=~/d')).commands;
    expect(fact.argv).toEqual(['dd', `if=${HOME}/a`, `of=x:${HOME}/b`, '~root/c', '--opt=~/d']);
    expect(fact.dynamicWords[3]).toBe(true);
  });

  it('unit helpers: braces, ANSI-C, glob prefixes', () => {
    expect(expandBraces('{a,b}{1..2}')).toEqual(['a1', 'a2', 'b1', 'b2']);
    expect(expandBraces('\\{a,b}')).toEqual(['\\{a,b}']);
    expect(expandBraces('{01..03}')).toEqual(['01', '02', '03']);
    expect(expandBraces('{1..100000}')).toBeUndefined();
    expect(decodeAnsiC('\\x41\\101\\u00e9\\cA\\e')).toBe('AAé\u0001\u001b');
    expect(globPrefix('/e*/sha*')).toBe('/');
    expect(globPrefix('src/**/*.ts')).toBe('src');
    expect(globPrefix('*.o')).toBe('.');
    expect(globPrefix('src/*/../../x')).toBeUndefined();
  });
});

describe('problems: what runs code the facts cannot show', () => {
  it.each([
    ["test -v 'a[$(id)]'", /-v evaluates/],
    ['[ -v x ]', /-v evaluates/],
    ['[[ -v x ]]', /-v evaluates/],
    ['[[ $x -eq 1 ]]', /arithmetic/],
    ['(( x > 1 ))', /arithmetic/],
    ['echo $((x + 1))', /arithmetic/],
    ['echo $[1]', /\$\[/],
    ['echo ${!x}', /indirection/],
    ['echo ${x@P}', /transforms/],
    ['echo ${HOME:x}', /offset/],
    ['echo ${a[i]}', /subscript/],
    ['a[i]=1', /subscript/],
    ["read 'a[$(id)]'", /array element/],
    ['printf -v a[0] x', /array element/],
    ['let x=1', /let/],
    ['f() { :; }', /function/],
    ['trap ls EXIT', /trap/],
    ['alias x=y', /alias/],
    ['source x', /source/],
    ['. x', /\. runs/],
    ['shopt -s extglob', /shopt/],
    ['coproc ls', /coproc/],
    ['select x in a; do :; done', /select/],
    ['exec > out', /exec with redirects/],
    ['sudo ls', /escalation/],
    ['cd "$D"', /only known/],
    ['cd -', /only known/],
    ['popd', /popd/],
    ['cat < /dev/tcp/1.2.3.4/80', /network/],
    ['cat > "$F"', /redirect target/],
    ['python3 <<EOF\nx\nEOF', /feeds python3/],
    ['bash <<< "ls"', /feeds bash/],
    ['[ a > b ]', /redirect/],
    ["echo 'unterminated", /could not parse/],
    ['echo $(( $(id) ))', /substitution/],
    ['$CMD x', /program's name/],
    ['cat > $F', /only known when the command runs/],
    ['set -k', /set -k/],
  ])('%s', async (command, pattern) => {
    expect((await problems(command)).join('\n')).toMatch(pattern);
  });

  it('no problem for ordinary commands', async () => {
    for (const command of [
      'ls -la',
      'git status && git diff',
      'cat a | grep b > /dev/null 2>&1',
      'cd src && ls',
      'echo "$HOME"',
      'set -euo pipefail',
      '[ -f x ] && [[ -n "$y" ]]',
      'for f in *.ts; do wc -l "$f"; done',
    ]) {
      expect(await problems(command), command).toEqual([]);
    }
  });
});

describe('paths', () => {
  it('resolves operands, redirects and cd targets where the command runs', async () => {
    const result = await facts('cat a < b > c 2>> d; cd sub && cat e; cd /etc && cat f');
    const paths = result.commands.map((fact) => [fact.argv.join(' '), fact.cwd, fact.paths.map(({ access, path: p }) => `${access}:${p.absolute}`)]);
    expect(paths).toEqual([
      ['cat a', '/ws', ['read:/ws/a', 'read:/ws/b', 'write:/ws/c', 'write:/ws/d']],
      ['cd sub', '/ws', ['read:/ws/sub']],
      // A cd may fail: later commands are checked in every directory they may run in.
      ['cat e', '/ws/sub', ['read:/ws/e', 'read:/ws/sub/e']],
      ['cd /etc', '/ws/sub', ['read:/etc']],
      ['cat f', '/etc', ['read:/ws/f', 'read:/ws/sub/f', 'read:/etc/f']],
    ]);
    expect(result.commands[0].writesByRedirect).toBe(true);
  });

  it('a cd inside a subshell or pipeline does not leak out', async () => {
    const result = await facts('(cd /etc) && cat a; cd /tmp | cat b; cat c');
    expect(result.commands.filter((fact) => fact.program === 'cat').map((fact) => fact.cwd)).toEqual(['/ws', '/ws', '/ws']);
  });

  it('a cd inside a subshell reaches the statements after it in that subshell', async () => {
    const result = await facts('(cd secrets; cat key.txt)');
    const cat = result.commands.find((fact) => fact.program === 'cat');
    expect(cat?.paths.map(({ path: p }) => p.absolute)).toContain('/ws/secrets/key.txt');
  });

  it('/dev/null and descriptor duplications are not writes', async () => {
    const [fact] = (await facts('ls > /dev/null 2>&1 3>&- <&0')).commands;
    expect(fact.writesByRedirect).toBe(false);
    expect(fact.paths).toEqual([]);
  });

  it('a glob reads every path it expands to on the real file system, or the word as written when nothing matches', async () => {
    const [fact] = (await facts('cat /e*/passw? src/*.ts')).commands;
    expect(fact.paths.map(({ path: p }) => p.absolute)).toEqual(['/etc/passwd', '/ws/src/*.ts']);
  });

  it('reports the paths of file-changing programs', async () => {
    expect(writerPaths(['cp', '-r', 'a', 'b', 'dst'], [false, false, false, false, false]).map((entry) => `${entry.access}:${entry.text}`)).toEqual([
      'read:a',
      'read:b',
      'write:dst',
    ]);
    expect(writerPaths(['chmod', '-R', '755', 'x'], [false, false, false, false]).map((entry) => `${entry.access}:${entry.text}`)).toEqual(['write:x']);
    const [fact] = (await facts('rm -rf -- -x /tmp/y')).commands;
    expect(fact.paths.map(({ access, path: p }) => `${access}:${p.absolute}`)).toEqual(['write:/ws/-x', 'write:/tmp/y']);
  });
});
