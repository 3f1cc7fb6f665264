import { describe, expect, it } from 'vitest';
import { classifyBashCommand } from '../../common/bash-classifier';

const READ_ONLY: readonly string[] = [
  // plain read-only programs
  'ls',
  'ls -la src',
  'cat package.json',
  'head -n 20 README.md',
  'tail -n 5 log.txt',
  'wc -l src/*.ts',
  'pwd',
  'sleep 0.3; cat notes.txt',
  'echo hello world',
  'echo "$HOME"',
  'grep -rn TODO src',
  'egrep "a|b" file.txt',
  'fgrep -l needle .',
  'rg -n "foo bar" src',
  'find . -name "*.ts" -type f',
  'which node',
  'file README.md',
  'stat package.json',
  'du -sh .',
  'df -h',
  'tree -L 2',
  'sort names.txt',
  'sort -u -k2 names.txt',
  'uniq -c counts.txt',
  'uniq -f 1 in.txt',
  'cut -d: -f1 /etc/passwd',
  'tr a-z A-Z',
  'diff a.txt b.txt',
  'cmp a.bin b.bin',
  'date',
  'date +%Y-%m-%d',
  'date -u -d yesterday +%s',
  'env',
  'printenv PATH',
  'whoami',
  'id -u',
  'uname -a',
  'basename /a/b.txt',
  'dirname /a/b.txt',
  'realpath .',
  'readlink -f link',
  'true',
  'test -f package.json',
  '[ -d src ]',
  // git read-only subcommands
  'git status',
  'git log --oneline -10',
  'git diff HEAD~1',
  'git show HEAD:README.md',
  'git branch',
  'git branch -a',
  'git branch -r',
  'git branch --list "feat/*"',
  'git rev-parse HEAD',
  'git ls-files',
  'git blame src/app.ts',
  'git remote -v',
  'git describe --tags',
  'git -C packages/api status',
  'git --no-pager log -1',
  // sed without -i
  "sed -n '1,20p' file.txt",
  "sed 's/foo/bar/g' file.txt",
  "sed -n -e '/start/,/end/p' file.txt",
  // composition
  'cat file | grep foo | wc -l',
  'ls && pwd',
  'ls || echo missing',
  'ls; pwd',
  'ls\npwd',
  'grep foo file 2>/dev/null',
  'ls missing 2>&1 | head',
  'ls > /dev/null',
  'ls &>/dev/null',
  'cat < input.txt',
];

const READ_ONLY_MORE: readonly string[] = [
  "echo 'a > b'", // redirection inside quotes is text
  "echo 'rm -rf /; $(evil)'", // single quotes: no substitution
  'echo a\\>b', // escaped redirection is text
  'LANG=C sort file.txt',
  'cd src && ls',
  'ls # > out.txt is a comment',
  'git status |& head',
  'echo ${HOME} "${USER:-nobody}"',
];

const NOT_READ_ONLY: readonly string[] = [
  '',
  '   ',
  // writes and unknown programs
  'rm -rf build',
  'touch x',
  'mkdir out',
  'npm test',
  'node script.js',
  'python -c "print(1)"',
  './run.sh',
  '/bin/ls',
  // redirection
  'echo hi > out.txt',
  'echo hi >> out.txt',
  'ls &> out.txt',
  'ls 2> errors.txt',
  'ls >| out.txt',
  'ls >&out.txt',
  'cat <> file',
  'cat <<EOF\nhello\nEOF',
  'cat <<< "text"',
  // substitution
  'echo $(rm -rf x)',
  'echo "$(touch x)"',
  'echo `touch x`',
  'diff <(ls a) <(ls b)',
  'ls >(cat)',
  // subshells, background
  '(ls)',
  '(cd src; ls)',
  'ls &',
  'sleep 1 & ls',
  // known writers
  'ls | xargs rm',
  'echo hi | tee out.txt',
  "sed -i 's/a/b/' file.txt",
  "sed -i.bak 's/a/b/' file.txt",
  "sed --in-place 's/a/b/' file.txt",
  "sed -ni 's/a/b/p' file.txt",
  "sed 's/a/b/w out.txt' file.txt",
  "sed '1e touch x' file.txt",
  "sed 'w out.txt' file.txt",
  // find with actions
  'find . -name "*.tmp" -delete',
  'find . -exec rm {} ;',
  'find . -execdir touch x ;',
  'find . -ok rm {} ;',
  'find . -fprint out.txt',
  'find . -fls out.txt',
  'find . -name *.ts', // unquoted glob could expand to an option
  'find . -name [a]*',
  'git log $(echo --output=x)',
  'git diff $REV',
  // flag-dependent programs
  'sort -o out.txt in.txt',
  'sort --output=out.txt in.txt',
  'sort -uo out.txt in.txt',
  'uniq in.txt out.txt',
  'tree -o out.txt',
  'file -C -m magic',
  'date -s "2020-01-01"',
  'date 010100002020',
  'env ls',
  'env -i bash',
  'rg --pre ./evil foo',
  // git writes and dangerous options
  'git commit -m x',
  'git push',
  'git checkout main',
  'git branch -D old',
  'git branch new-branch',
  'git remote add origin url',
  'git -c core.pager=evil log',
  'git diff --output=patch.diff',
  'git stash',
  // environment
  'PATH=/tmp/evil:$PATH ls',
  'PATH=/tmp ls',
  'LD_PRELOAD=/tmp/x.so ls',
  'GIT_EXTERNAL_DIFF=evil git diff',
  'FOO=bar; ls',
  'echo ${PATH:=/tmp/evil}; ls',
  'echo "${X=1}"',
  // composition with one bad part
  'ls && rm x',
  'ls; npm install',
  'cat file | sh',
  'ls || touch x',
  'git status && git commit -am x',
  // computed command names
  '$CMD',
  '"$CMD" file',
  "$'rm' x",
  // keywords and odd syntax
  'if true; then ls; fi',
  'for f in *; do cat $f; done',
  '{ ls; }',
  'time ls',
  "echo 'unterminated",
];

describe('classifyBashCommand', () => {
  it.each([...READ_ONLY, ...READ_ONLY_MORE])('read-only: %j', (command) => {
    const result = classifyBashCommand(command);
    expect(result, result.reason).toMatchObject({ readOnly: true });
  });

  it.each(NOT_READ_ONLY)('not read-only: %j', (command) => {
    const result = classifyBashCommand(command);
    expect(result.readOnly, `expected not read-only, reason: ${result.reason}`).toBe(false);
    expect(result.reason).not.toBe('');
  });

  it('gives specific reasons', () => {
    expect(classifyBashCommand('').reason).toBe('empty command');
    expect(classifyBashCommand('echo hi > out.txt').reason).toMatch(/redirection/);
    expect(classifyBashCommand('echo $(date)').reason).toMatch(/command substitution/);
    expect(classifyBashCommand('ls | xargs rm').reason).toMatch(/xargs/);
    expect(classifyBashCommand('npm test').reason).toMatch(/not a known read-only command/);
    expect(classifyBashCommand("sed -i 's/a/b/' f").reason).toMatch(/sed -i/);
    expect(classifyBashCommand('PATH=/x ls').reason).toMatch(/PATH/);
    expect(classifyBashCommand('git branch -D x').reason).toMatch(/git branch/);
    expect(classifyBashCommand('ls &').reason).toMatch(/background/);
    expect(classifyBashCommand('(ls)').reason).toMatch(/subshell/);
  });

  it('has a table of at least 40 cases in each direction', () => {
    expect(READ_ONLY.length + READ_ONLY_MORE.length).toBeGreaterThanOrEqual(40);
    expect(NOT_READ_ONLY.length).toBeGreaterThanOrEqual(40);
  });
});
