/**
 * One Bash analysis (issue 29 Build 3): "read-only" — what decides whether a Bash call runs beside
 * others (partitionToolCalls), starts while the model still streams, stops a prefetch, and skips
 * the crash journal — is the tree-sitter facts' answer (`isReadOnlyBash`), the same the permission
 * engine's plan mode and read-only default use. These are the hand tokenizer's tables
 * (common/bash-classifier.ts, retired), each command parsed by the real grammar in a real
 * workspace, with the cases where the parser knows better moved and said why, and issue 29's
 * attacks added.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatherBashFacts, loadBashParser } from '../../activities/permission-facts/bash-facts';
import { decideBash } from '../../common/bash-permissions';
import { isReadOnlyBash } from '../../common/permission-facts';
import { getToolSpec, isToolUseConcurrencySafe, isToolUseStartableEarly } from '../../common/tool-specs';
import { type BashWorkspace, makeBashWorkspace } from '../helpers/bash-workspace';

let fixture: BashWorkspace;

beforeAll(async () => {
  fixture = await makeBashWorkspace();
  await loadBashParser();
});

afterAll(async () => {
  await fixture?.cleanup();
});

async function facts(command: string) {
  return gatherBashFacts(command, { cwd: fixture.workspace, homeDir: fixture.home, resolve: fixture.resolve });
}

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
  // quoting, as the grammar reads it
  "echo 'a > b'",
  "echo 'rm -rf /; $(evil)'",
  'echo a\\>b',
  'LANG=C sort file.txt',
  'cd src && ls',
  'ls # > out.txt is a comment',
  'git status |& head',
  'echo ${HOME} "${USER:-nobody}"',
];

/**
 * The hand tokenizer refused these only because it could not follow them; the parser can, and
 * each runs only read-only commands: nothing runs ('', blanks), a system program by its path
 * (`/bin/ls` is `ls`), a here-document or here-string feeding `cat`, a subshell or group, a
 * background job, a wrapper that only runs its command (`env`, `time`), a compound statement.
 */
const READ_ONLY_BY_THE_PARSER: readonly string[] = [
  '',
  '   ',
  '/bin/ls',
  'cat <<EOF\nhello\nEOF',
  'cat <<< "text"',
  '(ls)',
  '(cd src; ls)',
  'ls &',
  'sleep 1 & ls',
  'env ls',
  'if true; then ls; fi',
  '{ ls; }',
  'time ls',
];

const NOT_READ_ONLY: readonly string[] = [
  // writes and unknown programs
  'rm -rf build',
  'touch x',
  'mkdir out',
  'npm test',
  'node script.js',
  'python -c "print(1)"',
  './run.sh',
  // redirection
  'echo hi > out.txt',
  'echo hi >> out.txt',
  'ls &> out.txt',
  'ls 2> errors.txt',
  'ls >| out.txt',
  'ls >&out.txt',
  'cat <> file',
  // substitution
  'echo $(rm -rf x)',
  'echo "$(touch x)"',
  'echo `touch x`',
  'diff <(ls a) <(ls b)',
  'ls >(cat)',
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
  // `git -C dir` reads the configuration of whatever repository it finds there (issue 29 class 5)
  'git -C packages/api status',
  // environment
  'PATH=/tmp/evil:$PATH ls',
  'PATH=/tmp ls',
  'LD_PRELOAD=/tmp/x.so ls',
  'GIT_EXTERNAL_DIFF=evil git diff',
  // an assignment by expansion is an assignment (the hand tokenizer caught it; the walker now does too)
  'echo ${PATH:=/tmp/evil}; ls',
  ': ${BASH_ENV=/tmp/evil}; bash -c ls',
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
  // a word only known at run time where an option may stand (`-` … as a file name)
  'for f in a b; do cat "$f"; done',
  "$'rm' x",
  "echo 'unterminated",
  // issue 29 class 2: read-only spellings that execute
  "BASH_CMDS=([grep]=/bin/bash); grep -c 'id'",
  'BASH_CMDS=([cat]=/bin/rm); cat f',
  "declare 'a[$(id)]=1'",
  "typeset 'a[$(id)]=1'",
  "local 'a[$(id)]=1'",
  "readonly 'a[$(id)]=1'",
  "declare -a 'b=([$(id)]=1)'",
  "declare $'a[$(id)]=1'",
  // issue 29 class 5: git's attached-only options
  'git log --format --output=F',
  'git log --output=F',
];

describe('one Bash analysis: read-only on the parsed command (concurrency, early start, prefetch, journal)', () => {
  it.each([...READ_ONLY, ...READ_ONLY_BY_THE_PARSER])('read-only: %j', async (command) => {
    const found = await facts(command);
    expect(isReadOnlyBash(found), `${found.problems.join('; ')} ${found.commands.map((entry) => entry.reason).join(' | ')}`).toBe(true);
    // The spec answers with the same facts: it runs beside others and may start while the model streams …
    const block = { name: 'Bash', input: { command } };
    const gathered = { toolUseId: 't', bash: found };
    expect(isToolUseConcurrencySafe(block, gathered)).toBe(true);
    expect(isToolUseStartableEarly(block, gathered)).toBe(true);
    // … but never in the background, and never without facts.
    expect(isToolUseConcurrencySafe({ name: 'Bash', input: { command, run_in_background: true } }, gathered)).toBe(false);
    expect(isToolUseConcurrencySafe(block)).toBe(false);
  });

  it.each(NOT_READ_ONLY)('not read-only: %j', async (command) => {
    const found = await facts(command);
    expect(isReadOnlyBash(found)).toBe(false);
    const gathered = { toolUseId: 't', bash: found };
    expect(getToolSpec('Bash')!.isReadOnly({ command }, gathered)).toBe(false);
    expect(isToolUseConcurrencySafe({ name: 'Bash', input: { command } }, gathered)).toBe(false);
    // There is a reason to show: a problem, or the command that may change things.
    const reasons = [...found.problems, ...found.commands.filter((entry) => !entry.readOnly).map((entry) => entry.reason)];
    expect(reasons.length).toBeGreaterThan(0);
    expect(reasons.every((reason) => reason !== '')).toBe(true);
    // Plan mode (which runs only what provably reads) refuses it: the permission engine and the scheduler agree.
    const plan = decideBash(found, { mode: 'plan', rules: { allow: [], deny: [], ask: [] }, workingDirectories: [fixture.workspace], homeDir: fixture.home });
    expect(plan.behavior).toBe('deny');
  });

  it('gives specific reasons', async () => {
    const reason = async (command: string) => {
      const found = await facts(command);
      return [...found.problems, ...found.commands.filter((entry) => !entry.readOnly).map((entry) => entry.reason)].join(' | ');
    };
    expect(await reason('echo hi > out.txt')).toMatch(/out\.txt/);
    expect(await reason('echo $(date)')).toMatch(/command substitution/);
    expect(await reason('echo ${PATH:=/tmp/evil}; ls')).toMatch(/assigns PATH/);
    expect(await reason("sed -i 's/a/b/' f")).toMatch(/-i|in place|write/);
    expect(await reason('PATH=/x ls')).toMatch(/PATH/);
  });

  it('has a table of at least 40 cases in each direction', () => {
    expect(READ_ONLY.length + READ_ONLY_BY_THE_PARSER.length).toBeGreaterThanOrEqual(40);
    expect(NOT_READ_ONLY.length).toBeGreaterThanOrEqual(40);
  });
});
