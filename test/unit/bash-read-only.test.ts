import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyArgv } from '../../common/bash-read-only';
import { compileOptions, mayYieldOption, maySplit } from '../../common/bash-read-only/getopt';
import { SUBCOMMANDS } from '../../common/bash-read-only/git';
import { PROGRAMS } from '../../common/bash-read-only/programs';

/**
 * Turns a test's command into argv as the Bash fact gatherer hands it over: words split on blanks,
 * quotes removed from static words; a word with an expansion or a glob outside single quotes is
 * kept as written and marked dynamic.
 */
function argvOf(command: string): { argv: string[]; dynamic: boolean[] } {
  const words = command.match(/(?:[^\s'"]+|'[^']*'|"[^"]*")+/g) ?? [];
  const argv: string[] = [];
  const dynamic: boolean[] = [];
  for (const word of words) {
    const outsideSingle = word.replace(/'[^']*'/g, '');
    const outsideQuotes = outsideSingle.replace(/"[^"]*"/g, '');
    const isDynamic = word !== '[' && word !== ']' && (outsideSingle.includes('$') || /[*?[{]/.test(outsideQuotes) || word.startsWith('~'));
    argv.push(isDynamic ? word : word.replace(/'([^']*)'|"([^"]*)"/g, '$1$2'));
    dynamic.push(isDynamic);
  }
  return { argv, dynamic };
}

function classify(command: string) {
  const { argv, dynamic } = argvOf(command);
  return classifyArgv(argv, { dynamic });
}

/** Commands people run all day, and the option forms around them: must stay read-only. */
const READ_ONLY: readonly string[] = [
  // ls
  'ls',
  'ls -la src',
  'ls -la --color=auto src',
  'ls --col=never',
  'ls -1 src test',
  'ls --sort=time -r',
  'ls src -l',
  'ls -lh -- -weird',
  'ls ~/notes',
  'ls src/*.ts',
  'ls -w 80 src',
  'ls -w80',
  "ls --hide='*.o'",
  // cat, head, tail, wc
  'cat a b',
  'cat -n README.md',
  'cat -- -file',
  'cat -An x',
  'cat "src/$NAME"',
  'head -n 20 x',
  'head -20 x',
  'head -n20 x',
  'head --lines=5 x',
  'head --li=5 x',
  'head -c 100 x',
  'tail -n 5 log.txt',
  'tail -f log',
  'tail -F log',
  'tail -n +10 x',
  'tail --follow=name x',
  'tail -5 x',
  'tail ---presume-input x',
  'wc -l a b',
  'wc -l src/*.ts',
  'wc -c x',
  // stat, file, du, df
  'stat package.json',
  'stat -c %s x',
  'file README.md',
  'file -b --mime-type x',
  'file -z x.gz',
  'du -sh .',
  'du -d 1 src',
  'du --max=1 src',
  'df -h',
  'df --output=source',
  'df -hT /',
  // shell-ish builtins and identity
  'pwd',
  'pwd -P',
  'echo hello world',
  'echo "$HOME"',
  'echo -n x',
  'echo --o=x',
  'echo $(x)',
  "printf '%s\\n' a b",
  "printf -- '-v'",
  'printf x',
  'true',
  'false',
  'true --anything',
  'which node',
  'which -a git',
  'type ls',
  'type -t cd',
  'whoami',
  'id',
  'id -u',
  'id -un root',
  'uname -a',
  'uname -sr',
  'uname --kernel-name',
  // date
  'date',
  'date +%Y-%m-%d',
  'date -u -d yesterday +%s',
  'date -d @0',
  'date --date=now',
  'date -R',
  'date -I',
  'date -Iseconds',
  'date --u',
  'date -r package.json',
  // names and paths
  'basename a/b.ts .ts',
  'basename -s .ts a/b.ts',
  'dirname a/b',
  'realpath src',
  'readlink -f link',
  // sort, uniq, cut, tr, nl, od, xxd, hexdump
  'sort -u x',
  'sort names.txt',
  'sort -u -k2 names.txt',
  'sort -t: -k3,3n x',
  'sort -rn x',
  'sort -T /tmp x',
  'sort --debug x',
  'sort -ko x',
  'sort -- -o',
  'sort -k 2 -- -o',
  'sort -cu x',
  'sort -k "$K" x',
  'tail -fn 5 x',
  'diff -C 3 a b',
  'ls -Fl',
  'rg --no-pre foo',
  'cat -',
  'git log --format=%an',
  'git log --min-parents=2 --max-parents=3',
  'git cat-file -p HEAD:x',
  'git cat-file -t HEAD',
  'git log --color-moved-ws ignore-all-space',
  'uniq -c counts.txt',
  'uniq -f 1 in.txt',
  'uniq x',
  'uniq',
  'uniq -2 x',
  'cut -d: -f1 /etc/passwd',
  'cut -c1-10 x',
  'tr a-z A-Z',
  "tr -d '\\r'",
  "tr -s ' '",
  'nl x',
  'nl -ba x',
  'od -c x',
  'od -An -tx1 x',
  'xxd x',
  'xxd -l 64 x',
  'xxd -c8 x',
  'xxd -p x',
  'xxd -r hex.txt',
  'hexdump -C x',
  'tac x',
  'paste a b',
  'fold -w 80 x',
  'base64 x',
  'base64 -d x',
  'sha256sum a b',
  'md5sum x',
  'nproc',
  'grep --no-group-separator -A1 foo x',
  'file --debug x',
  // diff, cmp, comm
  'diff a.txt b.txt',
  'diff -u a b',
  'diff -ru --no-dereference dir1 dir2',
  'diff --color=always a b',
  'diff -3 a b',
  'cmp a.bin b.bin',
  'comm -12 a b',
  // grep family and rg
  'grep -rn foo src',
  'grep -rn TODO src',
  'grep -e foo -e bar x',
  "grep -i 'a b' x",
  "egrep 'a|b' f",
  'fgrep -l needle .',
  'grep -C3 foo x',
  "grep --include='*.ts' -r foo src",
  'grep -f patterns.txt src',
  'grep foo -- -file',
  'grep -c foo x',
  'grep --colour=never x y',
  'grep -rnC5 foo src',
  'head -qn5 a b',
  'rg -n foo',
  'rg -n "foo bar" src',
  'rg --files',
  'rg -t ts foo',
  "rg -g '*.ts' foo src",
  'rg -z foo',
  'rg -S foo',
  'rg --json foo',
  'rg -uu foo',
  'rg --hidden -l foo',
  'rg -rn foo',
  // find
  "find . -name '*.ts'",
  "find . -name '*.ts' -type f",
  'find src -maxdepth 2 -type d',
  'find . -newer x -print',
  'find . ( -name a -o -name b ) -print',
  'find -H . -name x',
  'find',
  'find . -path ./node_modules -prune -o -print',
  "find . -printf '%p\\n'",
  'find . -newermt 2020-01-01',
  'find src/* -type f',
  // tree, jq
  'tree',
  'tree -L 2',
  'tree -a -I node_modules src',
  'tree --dirsfirst',
  'jq . package.json',
  'jq -r .name package.json',
  "jq --arg v 1 '.x == $v' f.json",
  "jq -n '1+1'",
  "jq --rawfile t notes.txt -n '$t'",
  "jq -n --args '$ARGS' a b",
  // git
  'git status',
  'git status --short',
  'git status -sb',
  'git status --porcelain=v1',
  'git log --oneline -5',
  'git log -p -3',
  'git log --format=%H -n 5',
  'git log main..feature --oneline',
  'git log --author=me --since=2.weeks',
  'git diff HEAD~1 -- src',
  'git diff --cached',
  'git diff --stat',
  'git diff -U5 a b',
  'git diff --no-ext-diff',
  'git show HEAD',
  'git show --stat HEAD~2',
  'git branch',
  'git branch -a',
  "git branch --list 'feat*'",
  'git branch --show-current',
  'git branch -vv',
  'git tag',
  "git tag -l 'v*'",
  'git rev-parse HEAD',
  'git rev-parse --show-toplevel',
  'git rev-parse --abbrev-ref HEAD',
  'git ls-files',
  'git ls-files -m src',
  'git blame -L 1,20 src/x.ts',
  'git remote -v',
  'git remote',
  'git config --get user.name',
  'git config --list',
  'git config -l',
  'git config user.name',
  'git config get user.name',
  'git --no-pager log -1',
  'git --version',
  'git describe --tags',
  'git log --no-ext-diff -p',
  'git branch --contains HEAD',
  'git blame --reverse a..b f',
  'git -P diff',
  'git --no-optional-locks status',
  // npm, interpreters' versions
  'npm ls',
  'npm list --depth=0',
  'npm view react version',
  'npm outdated',
  'npm --version',
  'npm ls --all --json',
  'node --version',
  'node -v',
  'python3 --version',
  'python -V',
  // env, cd, test, seq, yes, sleep
  'env',
  'env -0',
  'env FOO=1',
  'printenv',
  'printenv PATH',
  'cd src',
  'cd ..',
  'cd -P src',
  'cd ~/project',
  'test -f x',
  '[ -f x ]',
  '[ -d src ]',
  'test "$X" = y',
  '[ -n "$X" ]',
  'test x -nt y',
  '[ a = b ]',
  'test ! -e x',
  '[ -z "$1" ]',
  'test',
  '[ "$X" ]',
  '[ ! "$X" ]',
  'seq 10',
  'seq 1 2 10',
  'seq -w 1 10',
  'seq -5 5',
  'yes',
  'yes n',
  'sleep 1',
  'sleep 0.5',
  // sed that only prints
  "sed -n '1,5p' x",
  "sed 's/a/b/g' x",
  "sed -n -e '/foo/p' x",
  "sed -E 's/(a)/\\1/' x",
  "sed --expression='$d' x",
];

/** Each dangerous form, its abbreviations and spellings: not read-only, and why. */
const NOT_READ_ONLY: readonly [command: string, reason: RegExp][] = [
  // sort: output file and compress program, under every spelling
  ['sort -o out x', /writes its result/],
  ['sort --output=out x', /writes its result/],
  ['sort --o=out x', /writes its result/],
  ['sort --ou out x', /writes its result/],
  ['sort --outp=out', /writes its result/],
  ['sort -uo out x', /writes its result/],
  ['sort -uoout x', /writes its result/],
  ['sort x -o y', /writes its result/],
  ['sort --co=sh x', /runs a program/],
  ['sort --compress-program=sh x', /runs a program/],
  ['sort --compress=gzip x', /runs a program/],
  ['sort --c x', /runs a program|ambiguous/],
  ['sort -co out x', /writes its result/],
  // lists of further files to read, which no one checked
  ['sort --files0-from=list', /list of further files/],
  ['sort --files0=list', /list of further files/],
  ['wc --files0-from=list', /list of further files/],
  ['du --files0-from=list', /list of further files/],
  ['file -f list', /list of further files/],
  ['find -files0-from list', /start points from a file/],
  ['sha256sum -c sums', /checksum list/],
  ['md5sum --check sums', /checksum list/],
  ['sha256sum --ch sums', /checksum list/],
  // recursion that follows symbolic links past the checked paths
  ['grep -R foo src', /symbolic links/],
  ['grep -rR foo src', /symbolic links/],
  ['grep --dereference-recursive foo src', /symbolic links/],
  ['grep --deref foo src', /symbolic links/],
  ['rg -L foo', /symbolic links/],
  ['rg --follow foo', /symbolic links/],
  ['find -L . -name x', /follows symbolic links/],
  ['find . -follow', /follows symbolic links/],
  // jq modules and filter files
  ['jq \'import "x" as $x; .\' f.json', /import\/include/],
  ['jq \'include "lib"; .\' f.json', /import\/include/],
  ['jq -f prog.jq f.json', /filter file/],
  ['jq "$F" f.json', /expands at runtime/],
  // date: setting the clock
  ['date --se=2020-01-01', /sets the system clock/],
  ['date --s=x', /sets the system clock/],
  ['date -s 2020-01-01', /sets the system clock/],
  ['date --set=x', /sets the system clock/],
  ['date -us x', /sets the system clock/],
  ['date 010101002020', /sets the system clock/],
  ['date --r=x', /ambiguous/],
  // git: other repositories, config, pagers, external programs, writes
  ['git -C /tmp status', /-C/],
  ['git -C/tmp status', /-C/],
  ['git --git-dir=/x log', /--git-dir/],
  ['git --git-dir /x log', /--git-dir/],
  ['git --work-tree=/ status', /--work-tree/],
  ['git -c core.pager=sh log', /sets config/],
  ['git -ccore.fsmonitor=x status', /sets config/],
  ['git --config-env=core.pager=X log', /sets config/],
  ['git --exec-path=/x status', /--exec-path/],
  ['git --namespace=x log', /--namespace/],
  ['git -p log', /pager/],
  ['git --paginate log', /pager/],
  ['git --bare log', /--bare/],
  ['git --git log', /not known/],
  ['git diff --ext-diff', /external diff/],
  ['git log -p --textconv', /textconv/],
  ['git show --textconv HEAD', /textconv/],
  ['git diff --output=x', /writes to a file/],
  ['git log --output=x -p', /writes to a file/],
  ['git diff --ext', /unknown option/],
  ['git diff --text --ext-diff', /external diff/],
  ['git log --show-signature', /gpg/],
  ['git commit -m x', /not a read-only git subcommand/],
  ['git push', /not a read-only git subcommand/],
  ['git checkout main', /not a read-only git subcommand/],
  ['git branch new-feature', /creates a branch/],
  ['git branch -d old', /unknown option -d/],
  ['git branch -D x', /unknown option -D/],
  ['git branch -m a b', /unknown option -m/],
  ['git tag v1', /creates a tag/],
  ['git tag -d v1', /unknown option -d/],
  ['git remote add o url', /not a listing form/],
  ['git remote remove o', /not a listing form/],
  ['git config user.name Bob', /sets a value/],
  ['git config --add x y', /sets a value/],
  ['git config --unset x', /removes a value/],
  ['git config -e', /editor/],
  ['git stash', /not a read-only git subcommand/],
  ['git reset --hard', /not a read-only git subcommand/],
  ['git clean -fd', /not a read-only git subcommand/],
  ['git help log', /not a read-only git subcommand/],
  ['git --help', /pager/],
  ['git', /without a subcommand/],
  ['git st', /not a read-only git subcommand/],
  ['git grep foo', /not a read-only git subcommand/],
  ['git describe --dirty', /refreshes the index/],
  ['git blame --reverse --textconv a..b f', /textconv|unknown option/],
  ['git branch --contains', /needs a value/],
  ["git log --format='%G?'", /gpg/],
  ["git log --pretty='format:%h %GS'", /gpg/],
  ['git $SUB', /expands at runtime/],
  ['git log $OPTS', /expands at runtime/],
  // tree
  ['tree -o out.txt', /writes its output/],
  ['tree -ofile', /writes its output/],
  ['tree -R -o x', /index file|writes its output/],
  ['tree -H . -o x', /HTML|writes its output/],
  ['tree --output=x', /unknown option/],
  // rg
  ['rg --pre=cat foo', /preprocessor/],
  ['rg --pre cat foo', /preprocessor/],
  ['rg --hostname-bin=sh foo', /runs a program/],
  ["rg --pre-glob '*' --pre x foo", /--pre/],
  ['rg --pr=x foo', /unknown option/],
  ['rg --hostname=x foo', /unknown option/],
  // uniq: the second operand is written
  ['uniq in out', /second file/],
  ['uniq -c in out', /second file/],
  ['uniq *.txt', /expands at runtime/],
  ['uniq -- *.txt', /several words/],
  ['uniq -- a b', /second file/],
  ['uniq a -c b', /second file/],
  // file
  ['file -C', /compiled magic/],
  ['file -C -m magic', /compiled magic/],
  ['file --compile', /compiled magic/],
  ['file --comp', /compiled magic/],
  ['file -bC x', /compiled magic/],
  ['file -p x', /access times/],
  // find
  ['find . -exec rm {} ;', /runs a command/],
  ['find . -execdir x ;', /runs a command/],
  ['find . -ok x ;', /runs a command/],
  ['find . -okdir x ;', /runs a command/],
  ['find . -delete', /deletes/],
  ['find . -name x -delete', /deletes/],
  ['find . -fprint out', /writes a file/],
  ['find . -fprint0 out', /writes a file/],
  ["find . -fprintf out '%p'", /writes a file/],
  ['find . -fls out', /writes a file/],
  ['find * -name x', /expands at runtime/],
  ['find . -name $X', /expands at runtime/],
  ['find . -frobnicate', /not a primary/],
  ['find . -newer', /needs a value/],
  ['find . -newermt $X', /expands at runtime/],
  // sed
  ["sed -i 's/a/b/' x", /edits files/],
  ['sed --in-place s/a/b/ x', /edits files/],
  ['sed --in=bak s/a/b/ x', /edits files/],
  ['sed -ni p x', /edits files/],
  ["sed -n 'w out' x", /may write/],
  ["sed 's/a/b/w out' x", /may write/],
  ["sed 's/a/b/e' x", /may write/],
  ["sed 'e ls' x", /may write/],
  ["sed 'r /etc/passwd' x", /may write/],
  ['sed -f script.sed x', /script file/],
  ['sed "$S" x', /expands at runtime|script/],
  // awk, pagers, editors
  ["awk '{print}' x", /system\(\)/],
  ['awk \'BEGIN{system("id")}\'', /system\(\)/],
  ["gawk '{print}' x", /system\(\)/],
  ['less x', /shell commands/],
  ['more x', /shell commands/],
  ['man ls', /pager/],
  ['vi x', /editor/],
  // printf and test/[ with -v
  ['printf -v x foo', /assigns a variable/],
  ['printf -vx foo', /assigns a variable/],
  ['printf "$F" a', /expands at runtime/],
  ['printf -x', /not known/],
  ['printf', /without a format/],
  ["test -v 'a[$(id)]'", /subscript/],
  ['[ -v x ]', /subscript/],
  ['test -R x', /subscript/],
  ['test ! -v x', /subscript/],
  ['test $X', /split/],
  ['[ $X = y ]', /split/],
  ['[ -f x', /closing/],
  ['test "$A" "$B" "$C" "$D"', /operator may stand/],
  ['[ "$A" "$B" ]', /operator may stand/],
  ['[ "$A" -a -f x ]', /operator may stand/],
  // xxd
  ['xxd a b', /second file operand/],
  ['xxd -r hex out', /second file operand/],
  ['xxd -Z x', /not known/],
  // npm, interpreters
  ['npm test', /not a read-only npm command/],
  ['npm run build', /not a read-only npm command/],
  ['npm install', /not a read-only npm command/],
  ['npm i', /not a read-only npm command/],
  ['npm', /not a read-only npm command/],
  ['npm ls --prefix=/x', /unknown option/],
  ['npm ls --js', /unknown option/],
  ['node x.js', /runs code/],
  ["node -e 'x'", /runs code/],
  ["python3 -c 'x'", /runs code/],
  ['node --version --eval x', /runs code/],
  // env, cd
  ['env rm -rf /', /runs the command/],
  ['env -C / ls', /another directory/],
  ["env -S 'sh -c x'", /runs a command/],
  ['cd', /\$HOME/],
  ['cd -', /OLDPWD/],
  ['cd a b', /one directory/],
  ['cd "$X"', /expands at runtime/],
  // dynamic words where an option may stand (workspace file names are untrusted: `sort *`)
  ['cat $X', /expands at runtime/],
  ['cat *', /expands at runtime/],
  ['grep foo *', /expands at runtime/],
  ['cat "$F"', /expands at runtime/],
  ['cat src/$F', /expands at runtime/],
  ['sort -k $K x', /may split/],
  ['ls {-o,x}', /expands at runtime/],
  ['ls --hide=*.o', /expands at runtime/],
  // unknown options, values where none belong, missing values, ambiguity
  ['ls --color=always --foo', /unknown option --foo/],
  ['ls -y', /unknown option -y/],
  ['cat --number=5', /takes no value/],
  ['head -n', /needs a value/],
  ['ls --s', /ambiguous/],
  ['grep --fi=pats x', /ambiguous/],
  ['uname foo', /unexpected operand/],
  ['whoami x', /unexpected operand/],
  // recursing through links (issue 29 §4)
  ['diff -ru dir1 dir2', /follows symbolic links/],
  ['diff --recursive a b', /follows symbolic links/],
  ['diff -r --no-dereference-x a b', /unknown option|ambiguous/],
  ['grep -R x src', /follows symbolic links/],
  ['rg -L x', /follows symbolic links/],
  ['rg --follow x', /follows symbolic links/],
  // git's attached-only values (issue 29 §5): the next word is git's own option
  ['git log --format --output=F', /--output writes/],
  ['git log --min-parents --output=F', /--output writes/],
  ['git show --max-parents --output=F', /--output writes/],
  ['git log --output=F', /--output writes/],
  ['git diff --output F', /--output writes/],
  ['git show --format --ext-diff', /--ext-diff runs/],
  ['git cat-file --textconv HEAD:x', /textconv/],
  ['git cat-file --filters HEAD:x', /filter/],
  ['git cat-file --batch', /input/],
  // not read-only programs and forms
  ['/bin/cat x', /by path/],
  ['foo', /not a program known to be read-only/],
  ['rm -rf x', /deletes/],
  ['tee out', /writes files/],
  ['xargs cat', /runs other commands/],
  ['bash -c ls', /shell/],
  ['$CMD x', /expands at runtime/],
];

/** Which words are paths, and how the program uses them. */
const PATHS: readonly [command: string, paths: [index: number, access: 'read' | 'write', text: string][]][] = [
  ['ls', []],
  [
    'cat a b',
    [
      [1, 'read', 'a'],
      [2, 'read', 'b'],
    ],
  ],
  [
    'sort -o out x',
    [
      [2, 'write', 'out'],
      [3, 'read', 'x'],
    ],
  ],
  [
    'sort --output=out x',
    [
      [1, 'write', 'out'],
      [2, 'read', 'x'],
    ],
  ],
  [
    'sort -oout x',
    [
      [1, 'write', 'out'],
      [2, 'read', 'x'],
    ],
  ],
  [
    'sort --o=out x',
    [
      [1, 'write', 'out'],
      [2, 'read', 'x'],
    ],
  ],
  ['grep -rn foo src', [[3, 'read', 'src']]],
  [
    'grep -e foo a b',
    [
      [3, 'read', 'a'],
      [4, 'read', 'b'],
    ],
  ],
  [
    'grep --file=pats x',
    [
      [1, 'read', 'pats'],
      [2, 'read', 'x'],
    ],
  ],
  [
    'grep --exclude-f=list foo x',
    [
      [1, 'read', 'list'],
      [3, 'read', 'x'],
    ],
  ],
  ['rg foo src', [[2, 'read', 'src']]],
  ['rg --files src', [[2, 'read', 'src']]],
  [
    'find . -newer ref -name x',
    [
      [1, 'read', '.'],
      [3, 'read', 'ref'],
    ],
  ],
  [
    'find . -fprint out',
    [
      [1, 'read', '.'],
      [3, 'write', 'out'],
    ],
  ],
  [
    'uniq in out',
    [
      [1, 'read', 'in'],
      [2, 'write', 'out'],
    ],
  ],
  [
    'xxd in out',
    [
      [1, 'read', 'in'],
      [2, 'write', 'out'],
    ],
  ],
  [
    'tree -o out src',
    [
      [2, 'write', 'out'],
      [3, 'read', 'src'],
    ],
  ],
  ['jq -r .x a.json', [[3, 'read', 'a.json']]],
  ["jq --rawfile t secrets -n '$t'", [[3, 'read', 'secrets']]],
  ["jq -n --args '$ARGS' a b", []],
  ['cd src', [[1, 'read', 'src']]],
  ['test -f x', [[2, 'read', 'x']]],
  [
    '[ a -nt b ]',
    [
      [1, 'read', 'a'],
      [3, 'read', 'b'],
    ],
  ],
  [
    'git diff --no-index a b',
    [
      [3, 'read', 'a'],
      [4, 'read', 'b'],
    ],
  ],
  ['git blame -L 1,5 f', [[4, 'read', 'f']]],
  ['git log --oneline', []],
  ['wc --files0-from=list', [[1, 'read', 'list']]],
  ['echo /etc/passwd', []],
  ['head -n 5 x', [[3, 'read', 'x']]],
  ['sed -n p x', [[3, 'read', 'x']]],
  [
    'diff --to-file=b a',
    [
      [1, 'read', 'b'],
      [2, 'read', 'a'],
    ],
  ],
  ['date -r ref', [[2, 'read', 'ref']]],
  [
    'file -m magic x',
    [
      [2, 'read', 'magic'],
      [3, 'read', 'x'],
    ],
  ],
  ['cat ~/.ssh/id_rsa', [[1, 'read', '~/.ssh/id_rsa']]],
  ['ls src/*.ts', [[1, 'read', 'src/*.ts']]],
  ['cat - a', [[2, 'read', 'a']]],
  ['find -files0-from list', [[2, 'read', 'list']]],
  // git's rev:path and pathspecs (issue 29 §6): the path part is what a Read rule judges
  [
    'git show HEAD:secrets/key.txt',
    [
      [2, 'read', 'HEAD:secrets/key.txt'],
      [2, 'read', 'secrets/key.txt'],
    ],
  ],
  [
    'git show HEAD~1:a/b',
    [
      [2, 'read', 'HEAD~1:a/b'],
      [2, 'read', 'a/b'],
    ],
  ],
  [
    'git show HEAD@{1}:./x',
    [
      [2, 'read', 'HEAD@{1}:./x'],
      [2, 'read', './x'],
    ],
  ],
  [
    'git cat-file -p HEAD:x',
    [
      [3, 'read', 'HEAD:x'],
      [3, 'read', 'x'],
    ],
  ],
  [
    'git show :x',
    [
      [2, 'read', ':x'],
      [2, 'read', 'x'],
      [2, 'read', 'x'],
    ],
  ],
  [
    'git show :2:x',
    [
      [2, 'read', ':2:x'],
      [2, 'read', 'x'],
    ],
  ],
  [
    'git show HEAD:',
    [
      [2, 'read', 'HEAD:'],
      [2, 'read', '.'],
    ],
  ],
  ['git log -p -- certs', [[4, 'read', 'certs']]],
  [
    'git show HEAD -- certs/server.key',
    [
      [2, 'read', 'HEAD'],
      [4, 'read', 'certs/server.key'],
    ],
  ],
  ["git log -- 'certs/*.key'", [[3, 'read', 'certs/']]],
  ["git log -- ':(top)certs'", [[3, 'read', 'certs']]],
  ["git log -- ':/certs'", [[3, 'read', 'certs']]],
  ["git log -- '*.key'", [[3, 'read', '.']]],
];

describe('classifyArgv: read-only forms', () => {
  it.each(READ_ONLY)('%s', (command) => {
    const verdict = classify(command);
    expect(verdict, verdict.reason).toMatchObject({ readOnly: true });
    expect(verdict.paths.every((path) => path.access === 'read')).toBe(true);
  });
});

describe('classifyArgv: not read-only', () => {
  it.each(NOT_READ_ONLY)('%s', (command, reason) => {
    const verdict = classify(command);
    expect(verdict.readOnly).toBe(false);
    expect(verdict.reason).toMatch(reason);
  });
});

describe('classifyArgv: path words', () => {
  it.each(PATHS)('%s', (command, paths) => {
    expect(classify(command).paths.map((path) => [path.index, path.access, path.text])).toEqual(paths);
  });
});

describe('classifyArgv: input it cannot judge', () => {
  it('refuses an empty argv and an empty program name', () => {
    expect(classifyArgv([], { dynamic: [] }).readOnly).toBe(false);
    expect(classifyArgv([''], { dynamic: [false] }).readOnly).toBe(false);
  });

  it('refuses when dynamic does not cover every word', () => {
    expect(classifyArgv(['cat', '$X'], { dynamic: [false] }).readOnly).toBe(false);
  });

  it('does not take an inherited property name for a program', () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(classifyArgv([name], { dynamic: [false] }).readOnly).toBe(false);
    }
  });

  it('says in git reasons that the repository config can run code', () => {
    expect(classify('git status').reason).toMatch(/config.*run programs/);
  });
});

describe('tables', () => {
  it.each(Object.entries(PROGRAMS))('%s compiles (no name listed twice)', (_name, spec) => {
    expect(() => compileOptions(spec.options)).not.toThrow();
  });

  it.each(Object.entries(SUBCOMMANDS))('git %s compiles (no name listed twice)', (_name, spec) => {
    expect(() => compileOptions(spec.options)).not.toThrow();
  });
});

describe('dynamic word predicates', () => {
  it.each([
    ['src/*.ts', false],
    ['"src/$X"', false],
    ['~/x', false],
    ['*', true],
    ['$X', true],
    ['"$X"', true],
    ['a$X', true],
    ['{-o,x}', true],
    ['"$@"', true],
    ['-$X', true],
  ] as const)('mayYieldOption(%s) is %s', (word, expected) => {
    expect(mayYieldOption(word)).toBe(expected);
  });

  it.each([
    ['"$X"', false],
    ['"a b $X"', false],
    ['$X', true],
    ['a*', true],
    ['"$@"', true],
    ["'$X'", false],
  ] as const)('maySplit(%s) is %s', (word, expected) => {
    expect(maySplit(word)).toBe(expected);
  });
});

/**
 * The abbreviation argument holds only if a table lists every long option the program knows (an
 * unlisted one could be the exact match of what we take for an abbreviation). Compare with the
 * installed GNU tools' --help where they are present.
 */
describe('option tables against the installed programs', () => {
  const gnu = Object.entries(PROGRAMS).filter(([name, spec]) => {
    if (spec.rules?.abbreviations === false) return false;
    try {
      return /GNU|coreutils/.test(execFileSync(name, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    } catch {
      return false;
    }
  });

  it.skipIf(gnu.length === 0).each(gnu)('%s lists every long option of its --help', (name, spec) => {
    const help = execFileSync(name, ['--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const documented = [...help.matchAll(/(?<![\w-])--([a-z0-9][a-z0-9-]*)/g)].map((match) => match[1]);
    const listed = new Set(compileOptions(spec.options).long.keys());
    expect(documented.filter((name) => !listed.has(name))).toEqual([]);
  });
});

/**
 * The verdicts agree with the real programs: run in an empty directory holding one input file
 * (and a file named `-o`), the forms refused as writers write, and the read-only forms leave the
 * directory as it was.
 */
describe('the real programs agree', () => {
  const installed = (program: string) => spawnSync('sh', ['-c', `command -v ${program}`]).status === 0;
  const snapshot = (directory: string) =>
    readdirSync(directory)
      .sort()
      .map((name) => `${name}:${statSync(join(directory, name)).size}:${statSync(join(directory, name)).mtimeMs}`);
  const runIn = (argv: string[]) => {
    const directory = mkdtempSync(join(tmpdir(), 'bash-read-only-'));
    writeFileSync(join(directory, 'in'), 'b\na\na\n');
    writeFileSync(join(directory, '-o'), 'x\n');
    const before = snapshot(directory);
    spawnSync(argv[0], argv.slice(1), { cwd: directory, input: '', timeout: 5000 });
    const after = snapshot(directory);
    rmSync(directory, { recursive: true, force: true });
    return { before, after };
  };

  const WRITERS: readonly string[][] = [
    ['sort', '--o=out', 'in'],
    ['sort', '--outp=out', 'in'],
    ['sort', '-uoout', 'in'],
    ['sort', 'in', '-o', 'out'],
    ['uniq', 'in', 'out'],
    ['xxd', 'in', 'out'],
    ['sed', '-n', 'w out', 'in'],
    ['sed', '--in=.bak', 's/a/b/', 'in'],
    ['find', '.', '-fprint', 'out'],
  ];
  it.each(WRITERS.filter((argv) => installed(argv[0])))('%s … writes, and is not read-only', (...argv) => {
    expect(classifyArgv(argv, { dynamic: argv.map(() => false) }).readOnly).toBe(false);
    const { before, after } = runIn(argv);
    expect(after).not.toEqual(before);
  });

  const READERS: readonly string[][] = [
    ['sort', '--', '-o'],
    ['sort', '-ko', 'in'],
    ['sort', '-cu', 'in'],
    ['uniq', 'in'],
    ['uniq', '-c', '--', 'in'],
    ['sed', '-n', '1p', 'in'],
    ['head', '-n', '1', 'in'],
    ['xxd', '-c8', 'in'],
    ['find', '.', '-name', 'in', '-print'],
    ['grep', '-rn', 'a', '.'],
  ];
  it.each(READERS.filter((argv) => installed(argv[0])))('%s … is read-only and writes nothing', (...argv) => {
    expect(classifyArgv(argv, { dynamic: argv.map(() => false) }).readOnly).toBe(true);
    const { before, after } = runIn(argv);
    expect(after).toEqual(before);
  });
});

/**
 * git's log, show and diff options against the installed git (issue 29 §5): an option listed as
 * taking the next word must really take it, and one listed as taking only an attached value must
 * leave the next word to git — checked by what git does with a following `--output=F`, which it
 * acts on while it parses (F appears) unless the option took it as its value.
 */
describe("git's option values against the installed git", () => {
  const gitInstalled = spawnSync('git', ['--version']).status === 0;
  const options = (['log', 'show', 'diff'] as const).flatMap((subcommand) =>
    compileOptionsList(subcommand).map((entry) => [subcommand, entry.name, entry.argument] as const),
  );
  function compileOptionsList(subcommand: string) {
    const table = compileOptions(SUBCOMMANDS[subcommand].options);
    return [...table.long.entries()]
      .filter(([, spec]) => spec.refuse === undefined && spec.argument !== 'none')
      .map(([name, spec]) => ({ name: `--${name}`, argument: spec.argument }));
  }
  let repository = '';
  afterAll(() => {
    if (repository) rmSync(repository, { recursive: true, force: true });
  });
  const outputAfter = (subcommand: string, option: string): boolean => {
    repository ||= (() => {
      const directory = mkdtempSync(join(tmpdir(), 'git-options-'));
      const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: directory, stdio: 'ignore' });
      git('init', '-q');
      writeFileSync(join(directory, 'a'), 'a\n');
      git('add', 'a');
      git('commit', '-qm', 'one');
      writeFileSync(join(directory, 'a'), 'b\n');
      git('commit', '-qam', 'two');
      return directory;
    })();
    const output = join(repository, `out-${subcommand}-${option.replace(/\W/g, '')}`);
    spawnSync('git', ['--no-pager', subcommand, option, `--output=${output}`, ...(subcommand === 'diff' ? ['HEAD~1'] : ['-1'])], {
      cwd: repository,
      timeout: 5000,
      stdio: 'ignore',
    });
    try {
      statSync(output);
      return true;
    } catch {
      return false;
    }
  };

  it.skipIf(!gitInstalled).each(options)('git %s %s (%s)', (subcommand, option, argument) => {
    expect(
      outputAfter(subcommand, option),
      argument === 'optional' ? 'git took the next word as its value' : 'git left the next word alone: its value is attached only',
    ).toBe(argument === 'optional');
  });
});
