/**
 * Conservative read-only classifier for Bash commands (seed §2.4: only concurrency-safe calls may run
 * side by side; read-only calls skip the mutation journal). Pure: the workflow bundle imports it.
 *
 * It answers `readOnly: true` only when it can prove the command cannot change the workspace. Anything
 * it does not understand — an unknown program, a redirection to a file, a substitution whose output it
 * cannot see — is classified as not read-only. A false "not read-only" only costs parallelism; a false
 * "read-only" could run a write concurrently, so every doubt resolves towards "not read-only".
 */

/** The classifier's verdict, with a reason for logs and tests. */
export interface BashClassification {
  readonly readOnly: boolean;
  readonly reason: string;
}

/** A shell word after quote removal. */
interface Word {
  readonly text: string;
  /** Contains a `$` expansion, so its runtime value is unknown. */
  readonly dynamic: boolean;
  /** Contains unquoted glob or brace characters, so it may expand to several (unknown) words. */
  readonly glob: boolean;
  /** Offset in `text` where the first quoted or escaped part starts (Infinity when fully unquoted). */
  readonly firstQuotedAt: number;
}

type ControlOperator = '|' | '&&' | '||' | ';' | '\n';

type Token =
  | { readonly kind: 'word'; readonly word: Word }
  | { readonly kind: 'operator'; readonly operator: ControlOperator }
  | { readonly kind: 'redirect' };

interface SimpleCommand {
  readonly words: Word[];
}

class NotReadOnly extends Error {
  override readonly name = 'NotReadOnly';
}

const READ_ONLY_REASON = 'every command is a known read-only command';

/** Classify `command`; `readOnly` is true only when every part is provably read-only. */
export function classifyBashCommand(command: string): BashClassification {
  if (command.trim() === '') return { readOnly: false, reason: 'empty command' };
  try {
    const commands = splitCommands(tokenize(command));
    if (commands.length === 0) return { readOnly: false, reason: 'no command to run' };
    for (const simple of commands) checkSimpleCommand(simple);
    return { readOnly: true, reason: READ_ONLY_REASON };
  } catch (error) {
    if (error instanceof NotReadOnly) return { readOnly: false, reason: error.message };
    throw error;
  }
}

function reject(reason: string): never {
  throw new NotReadOnly(reason);
}

// ---------------------------------------------------------------------------------------------
// Tokenizer: a small shell-aware scanner (quotes, escapes, operators, redirections).
// ---------------------------------------------------------------------------------------------

const WORD_BREAK = new Set([' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')']);
const OUTPUT_REDIRECT_TARGETS_ALLOWED = new Set(['/dev/null']);

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let position = 0;

  const readWord = (): Word => {
    let text = '';
    let dynamic = false;
    let glob = false;
    let firstQuotedAt = Infinity;
    let openBracket = false;
    const markQuoted = () => {
      if (firstQuotedAt === Infinity) firstQuotedAt = text.length;
    };
    while (position < source.length) {
      const char = source[position];
      if (WORD_BREAK.has(char)) break;
      if (char === '\\') {
        const next = source[position + 1];
        position += 2;
        if (next === undefined || next === '\n') continue; // trailing backslash / line continuation
        markQuoted();
        text += next;
        continue;
      }
      if (char === "'") {
        const end = source.indexOf("'", position + 1);
        if (end === -1) reject('unterminated single quote');
        markQuoted();
        text += source.slice(position + 1, end);
        position = end + 1;
        continue;
      }
      if (char === '"') {
        markQuoted();
        position += 1;
        let closed = false;
        while (position < source.length) {
          const inner = source[position];
          if (inner === '"') {
            closed = true;
            position += 1;
            break;
          }
          if (inner === '\\') {
            const next = source[position + 1];
            if (next !== undefined && '$`"\\\n'.includes(next)) {
              if (next !== '\n') text += next;
              position += 2;
            } else {
              text += inner;
              position += 1;
            }
            continue;
          }
          if (inner === '`') reject('command substitution (backticks)');
          if (inner === '$') {
            if (source[position + 1] === '(') reject('command substitution $(...)');
            checkParameterExpansion(source, position);
            dynamic = true;
          }
          text += inner;
          position += 1;
        }
        if (!closed) reject('unterminated double quote');
        continue;
      }
      if (char === '`') reject('command substitution (backticks)');
      if (char === '$') {
        const next = source[position + 1];
        if (next === '(') reject('command substitution $(...)');
        if (next === "'") {
          // ANSI-C quoting: decoding escapes is not worth it; its value counts as unknown.
          markQuoted();
          dynamic = true;
          position += 2;
          while (position < source.length && source[position] !== "'") {
            position += source[position] === '\\' ? 2 : 1;
          }
          if (position >= source.length) reject('unterminated $\'...\' quote');
          position += 1;
          continue;
        }
        checkParameterExpansion(source, position);
        dynamic = true;
        text += char;
        position += 1;
        continue;
      }
      // `[` alone (the test command) is literal; `[...]` is a bracket glob.
      if (char === '*' || char === '?' || char === '{' || (char === ']' && openBracket)) glob = true;
      if (char === '[') openBracket = true;
      text += char;
      position += 1;
    }
    return { text, dynamic, glob, firstQuotedAt };
  };

  const readRedirect = (fileDescriptor: string | undefined) => {
    const char = source[position];
    const next = source[position + 1];
    let operator: string;
    if (char === '&') {
      operator = source[position + 2] === '>' ? '&>>' : '&>';
    } else if (char === '<') {
      if (next === '(') reject('process substitution <(...)');
      if (next === '<') reject('here-document or here-string (<<)');
      if (next === '>') reject('read-write redirection (<>)');
      operator = next === '&' ? '<&' : '<';
    } else {
      if (next === '(') reject('process substitution >(...)');
      operator = next === '>' ? '>>' : next === '|' ? '>|' : next === '&' ? '>&' : '>';
    }
    position += operator.length;
    while (source[position] === ' ' || source[position] === '\t') position += 1;
    const start = position;
    const target = readWord();
    if (position === start) reject(`redirection ${operator} without a target`);
    checkRedirect(operator, target, fileDescriptor);
    tokens.push({ kind: 'redirect' });
  };

  while (position < source.length) {
    const char = source[position];
    const next = source[position + 1];
    if (char === ' ' || char === '\t') {
      position += 1;
    } else if (char === '\n') {
      tokens.push({ kind: 'operator', operator: '\n' });
      position += 1;
    } else if (char === '#') {
      // A comment runs to the end of the line (only at a word start, which is where we are).
      while (position < source.length && source[position] !== '\n') position += 1;
    } else if (char === ';') {
      if (next === ';' || next === '&') reject('case terminator (;; or ;&)');
      tokens.push({ kind: 'operator', operator: ';' });
      position += 1;
    } else if (char === '&') {
      if (next === '&') {
        tokens.push({ kind: 'operator', operator: '&&' });
        position += 2;
      } else if (next === '>') {
        readRedirect(undefined);
      } else {
        reject('background execution (&)');
      }
    } else if (char === '|') {
      if (next === '|') {
        tokens.push({ kind: 'operator', operator: '||' });
        position += 2;
      } else {
        tokens.push({ kind: 'operator', operator: '|' });
        position += next === '&' ? 2 : 1; // `|&` pipes stderr too
      }
    } else if (char === '(' || char === ')') {
      reject('subshell or grouping with ( )');
    } else if (char === '<' || char === '>') {
      readRedirect(undefined);
    } else {
      const word = readWord();
      const after = source[position];
      const isFileDescriptor =
        (after === '<' || after === '>') && word.firstQuotedAt === Infinity && /^\d+$/.test(word.text);
      if (isFileDescriptor) readRedirect(word.text);
      else tokens.push({ kind: 'word', word });
    }
  }
  return tokens;
}

/** `${NAME=value}` / `${NAME:=value}` assign a variable (PATH among them) as a side effect. */
function checkParameterExpansion(source: string, dollarAt: number): void {
  if (source[dollarAt + 1] !== '{') return;
  const end = source.indexOf('}', dollarAt + 2);
  const body = source.slice(dollarAt + 2, end === -1 ? undefined : end);
  if (/^[A-Za-z_][A-Za-z0-9_]*:?=/.test(body)) reject(`parameter expansion \${${body}} assigns a variable`);
}

function checkRedirect(operator: string, target: Word, fileDescriptor: string | undefined): void {
  const staticTarget = target.dynamic || target.glob ? undefined : target.text;
  switch (operator) {
    case '<':
      return; // reading a file never writes
    case '<&':
      if (staticTarget !== undefined && /^(\d+-?|-)$/.test(staticTarget)) return;
      return reject(`unusual input redirection <&${target.text}`);
    case '>&':
      // `2>&1`, `>&2`, `>&-` duplicate or close descriptors; `>&file` writes to a file.
      if (staticTarget !== undefined && /^(\d+-?|-)$/.test(staticTarget)) return;
      if (staticTarget !== undefined && OUTPUT_REDIRECT_TARGETS_ALLOWED.has(staticTarget)) return;
      return reject(`output redirection to a file (${operator}${target.text})`);
    default:
      if (staticTarget !== undefined && OUTPUT_REDIRECT_TARGETS_ALLOWED.has(staticTarget)) return;
      return reject(`output redirection to a file (${fileDescriptor ?? ''}${operator} ${target.text})`);
  }
}

/** Split the token stream into simple commands at `|`, `&&`, `||`, `;` and newlines. */
function splitCommands(tokens: Token[]): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  let words: Word[] = [];
  for (const token of tokens) {
    if (token.kind === 'word') words.push(token.word);
    else if (token.kind === 'operator') {
      // Empty segments are shell syntax errors or blank lines: either way nothing runs there.
      if (words.length > 0) commands.push({ words });
      words = [];
    }
  }
  if (words.length > 0) commands.push({ words });
  return commands;
}

// ---------------------------------------------------------------------------------------------
// Per-command rules.
// ---------------------------------------------------------------------------------------------

/** Environment prefixes that cannot make a read-only program run something else (PATH, LD_*, PAGER…). */
const SAFE_ASSIGNMENT_NAMES = new Set(['LANG', 'LANGUAGE', 'TZ', 'NO_COLOR', 'FORCE_COLOR', 'CLICOLOR', 'COLUMNS', 'TERM']);

function isSafeAssignmentName(name: string): boolean {
  return SAFE_ASSIGNMENT_NAMES.has(name) || /^LC_[A-Z]+$/.test(name);
}

function assignmentName(word: Word): string | undefined {
  const match = /^([A-Za-z_][A-Za-z0-9_]*)\+?=/.exec(word.text);
  if (!match || match[0].length > word.firstQuotedAt) return undefined;
  return match[1];
}

type ArgumentCheck = (args: readonly Word[]) => void;

/** Programs that never write whatever their arguments (dynamic or globbed arguments included). */
const ANY_ARGUMENTS: ArgumentCheck = () => undefined;

/** Known writers, named so the reason is specific. */
const KNOWN_WRITERS: Record<string, string> = {
  xargs: 'xargs runs other commands',
  tee: 'tee writes to files',
  rm: 'rm deletes files',
  mv: 'mv moves files',
  cp: 'cp writes files',
  touch: 'touch writes files',
  mkdir: 'mkdir creates directories',
  chmod: 'chmod changes permissions',
  dd: 'dd writes files',
  sh: 'sh runs arbitrary commands',
  bash: 'bash runs arbitrary commands',
  eval: 'eval runs arbitrary commands',
  exec: 'exec replaces the shell with another command',
  source: 'source runs a script',
  '.': '. runs a script',
};

const READ_ONLY_PROGRAMS: Record<string, ArgumentCheck> = {
  ls: ANY_ARGUMENTS,
  cat: ANY_ARGUMENTS,
  head: ANY_ARGUMENTS,
  tail: ANY_ARGUMENTS,
  wc: ANY_ARGUMENTS,
  pwd: ANY_ARGUMENTS,
  sleep: ANY_ARGUMENTS,
  echo: ANY_ARGUMENTS,
  printf: checkPrintf,
  grep: ANY_ARGUMENTS,
  egrep: ANY_ARGUMENTS,
  fgrep: ANY_ARGUMENTS,
  rg: checkRipgrep,
  find: checkFind,
  which: ANY_ARGUMENTS,
  file: checkFile,
  stat: ANY_ARGUMENTS,
  du: ANY_ARGUMENTS,
  df: ANY_ARGUMENTS,
  tree: checkTree,
  sort: checkSort,
  uniq: checkUniq,
  cut: ANY_ARGUMENTS,
  tr: ANY_ARGUMENTS,
  diff: ANY_ARGUMENTS,
  cmp: ANY_ARGUMENTS,
  date: checkDate,
  env: checkEnv,
  printenv: ANY_ARGUMENTS,
  whoami: ANY_ARGUMENTS,
  id: ANY_ARGUMENTS,
  uname: ANY_ARGUMENTS,
  basename: ANY_ARGUMENTS,
  dirname: ANY_ARGUMENTS,
  realpath: ANY_ARGUMENTS,
  readlink: ANY_ARGUMENTS,
  true: ANY_ARGUMENTS,
  false: ANY_ARGUMENTS,
  test: ANY_ARGUMENTS,
  '[': ANY_ARGUMENTS,
  // cd only changes the directory of this one-shot shell; the commands after it are checked too.
  cd: ANY_ARGUMENTS,
  sed: checkSed,
  git: checkGit,
};

function checkSimpleCommand(command: SimpleCommand): void {
  let index = 0;
  while (index < command.words.length) {
    const name = assignmentName(command.words[index]);
    if (name === undefined) break;
    if (!isSafeAssignmentName(name)) reject(`variable assignment to ${name} can change what commands run`);
    index += 1;
  }
  if (index === command.words.length) return; // only harmless assignments: nothing runs
  const program = command.words[index];
  if (program.dynamic || program.glob) reject(`command name "${program.text}" is computed at runtime`);
  if (program.text.includes('/')) reject(`program given by path (${program.text}) cannot be verified`);
  const writer = Object.hasOwn(KNOWN_WRITERS, program.text) ? KNOWN_WRITERS[program.text] : undefined;
  if (writer !== undefined) reject(writer);
  const check = Object.hasOwn(READ_ONLY_PROGRAMS, program.text) ? READ_ONLY_PROGRAMS[program.text] : undefined;
  if (check === undefined) reject(`"${program.text}" is not a known read-only command`);
  check(command.words.slice(index + 1));
}

/** Programs whose safety depends on their flags need to see every argument literally. */
function requireStaticArguments(program: string, args: readonly Word[]): string[] {
  for (const arg of args) {
    if (arg.dynamic || arg.glob) reject(`${program} argument "${arg.text}" expands at runtime`);
  }
  return args.map((arg) => arg.text);
}

/** True for a short-option cluster such as `-uo` that contains `letter`. */
function shortClusterHas(arg: string, letter: string): boolean {
  return /^-[A-Za-z0-9]/.test(arg) && !arg.startsWith('--') && arg.slice(1).includes(letter);
}

function checkPrintf(args: readonly Word[]): void {
  // `printf -v name` assigns a shell variable; harmless, but keep the rule simple and exact.
  const texts = requireStaticArguments('printf', args);
  if (texts.includes('-v')) reject('printf -v assigns a variable');
}

function checkRipgrep(args: readonly Word[]): void {
  for (const arg of requireStaticArguments('rg', args)) {
    if (arg === '--pre' || arg.startsWith('--pre=')) reject('rg --pre runs a preprocessor command');
  }
}

const FIND_UNSAFE = new Set(['-exec', '-execdir', '-delete', '-ok', '-okdir', '-fprint', '-fprint0', '-fprintf', '-fls']);

function checkFind(args: readonly Word[]): void {
  for (const arg of requireStaticArguments('find', args)) {
    if (FIND_UNSAFE.has(arg)) reject(`find ${arg} can run commands or write files`);
  }
}

function checkFile(args: readonly Word[]): void {
  for (const arg of requireStaticArguments('file', args)) {
    if (arg === '--compile' || shortClusterHas(arg, 'C')) reject('file -C writes a compiled magic file');
  }
}

function checkTree(args: readonly Word[]): void {
  for (const arg of requireStaticArguments('tree', args)) {
    if (arg === '-o' || arg === '-R' || arg.startsWith('--output')) reject('tree -o/-R writes output files');
  }
}

function checkSort(args: readonly Word[]): void {
  for (const arg of requireStaticArguments('sort', args)) {
    if (arg === '--output' || arg.startsWith('--output=') || shortClusterHas(arg, 'o')) {
      reject('sort -o writes to a file');
    }
    if (arg.startsWith('--compress-program')) reject('sort --compress-program runs a program');
  }
}

function checkUniq(args: readonly Word[]): void {
  const texts = requireStaticArguments('uniq', args);
  let operands = 0;
  for (let index = 0; index < texts.length; index += 1) {
    const arg = texts[index];
    if (arg === '-f' || arg === '-s' || arg === '-w') index += 1; // option with a separate value
    else if (arg === '-' || !arg.startsWith('-')) operands += 1;
  }
  if (operands > 1) reject('uniq with a second file argument writes its output there');
}

function checkDate(args: readonly Word[]): void {
  const texts = requireStaticArguments('date', args);
  for (let index = 0; index < texts.length; index += 1) {
    const arg = texts[index];
    if (arg === '--set' || arg.startsWith('--set=') || shortClusterHas(arg, 's')) reject('date -s sets the clock');
    if (arg === '-d' || arg === '-f' || arg === '-r') index += 1;
    else if (!arg.startsWith('-') && !arg.startsWith('+')) reject('date with a time operand sets the clock');
  }
}

function checkEnv(args: readonly Word[]): void {
  const texts = requireStaticArguments('env', args);
  for (let index = 0; index < texts.length; index += 1) {
    const arg = texts[index];
    if (arg === '-0' || arg === '--null' || arg === '-i' || arg === '--ignore-environment') continue;
    if (arg === '-u') {
      index += 1;
      continue;
    }
    if (arg.startsWith('--unset=')) continue;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(arg)) continue;
    reject('env with a command argument runs that command');
  }
}

const SED_FLAG_LETTERS = new Set(['n', 'E', 'r', 's', 'u', 'z']);

function checkSed(args: readonly Word[]): void {
  const texts = requireStaticArguments('sed', args);
  const scripts: string[] = [];
  let positionalScriptTaken = false;
  for (let index = 0; index < texts.length; index += 1) {
    const arg = texts[index];
    if (arg === '--in-place' || arg.startsWith('--in-place=')) reject('sed -i edits files in place');
    if (arg === '-e' || arg === '--expression') {
      if (index + 1 >= texts.length) reject('sed -e without a script');
      scripts.push(texts[++index]);
      continue;
    }
    if (arg.startsWith('--expression=')) {
      scripts.push(arg.slice('--expression='.length));
      continue;
    }
    if (['--quiet', '--silent', '--regexp-extended', '--separate', '--unbuffered', '--null-data', '--posix'].includes(arg)) {
      continue;
    }
    if (arg.startsWith('--')) reject(`sed option ${arg} is not known to be read-only`);
    if (arg.startsWith('-') && arg.length > 1) {
      const letters = arg.slice(1);
      for (let letterIndex = 0; letterIndex < letters.length; letterIndex += 1) {
        const letter = letters[letterIndex];
        if (letter === 'i') reject('sed -i edits files in place');
        if (letter === 'e') {
          const rest = letters.slice(letterIndex + 1);
          if (rest !== '') scripts.push(rest);
          else if (index + 1 < texts.length) scripts.push(texts[++index]);
          else reject('sed -e without a script');
          break;
        }
        if (!SED_FLAG_LETTERS.has(letter)) reject(`sed option -${letter} is not known to be read-only`);
      }
      continue;
    }
    if (scripts.length === 0 && !positionalScriptTaken) {
      positionalScriptTaken = true;
      scripts.push(arg);
    }
    // Other operands are input files.
  }
  if (scripts.length === 0) reject('sed without a script');
  for (const script of scripts) {
    if (!isReadOnlySedScript(script)) reject(`sed script "${script}" may write files or run commands`);
  }
}

/**
 * Accepts sed scripts made of addresses and printing/editing commands only; rejects `w`, `W`, `r`, `R`,
 * `e`, the `w`/`e` flags of `s`, and anything it does not recognise.
 */
function isReadOnlySedScript(script: string): boolean {
  let position = 0;
  const atEnd = () => position >= script.length;
  const readDelimited = (delimiter: string): boolean => {
    while (position < script.length && script[position] !== delimiter) {
      if (script[position] === '\n') return false;
      position += script[position] === '\\' ? 2 : 1;
    }
    if (atEnd()) return false;
    position += 1; // closing delimiter
    return true;
  };
  const readAddress = (): boolean => {
    const char = script[position];
    if (char === '$') {
      position += 1;
      return true;
    }
    if (/[0-9]/.test(char ?? '')) {
      while (/[0-9~]/.test(script[position] ?? '')) position += 1;
      return true;
    }
    if (char === '/') {
      position += 1;
      if (!readDelimited('/')) return false;
      while (script[position] === 'I' || script[position] === 'M') position += 1;
      return true;
    }
    return true; // no address
  };

  while (true) {
    while (!atEnd() && ' \t\n;'.includes(script[position])) position += 1;
    if (atEnd()) return true;
    if (!readAddress()) return false;
    if (script[position] === ',') {
      position += 1;
      if (script[position] === '+' || script[position] === '~') position += 1;
      if (!readAddress()) return false;
    }
    while (script[position] === ' ' || script[position] === '!') position += 1;
    const command = script[position];
    if (command === undefined) return false;
    position += 1;
    if ('pdPD=lnNgGhHxz{}'.includes(command)) continue;
    if (command === 'q' || command === 'Q') {
      while (/[0-9 ]/.test(script[position] ?? '')) position += 1;
      continue;
    }
    if (command === 's' || command === 'y') {
      const delimiter = script[position];
      if (delimiter === undefined || delimiter === '\\' || delimiter === '\n' || delimiter === ' ') return false;
      position += 1;
      if (!readDelimited(delimiter) || !readDelimited(delimiter)) return false;
      if (command === 's') {
        while (!atEnd() && /[gpiIm0-9]/.test(script[position])) position += 1;
      }
      if (!atEnd() && !' \t\n;}'.includes(script[position])) return false;
      continue;
    }
    return false;
  }
}

const GIT_READ_ONLY_SUBCOMMANDS = new Set(['status', 'log', 'diff', 'show', 'rev-parse', 'ls-files', 'blame', 'describe']);
const GIT_BRANCH_LISTING_FLAGS = new Set([
  '-a', '--all', '-r', '--remotes', '--list', '-l', '-v', '-vv', '--verbose', '--show-current', '--no-color', '--color',
]);

function checkGit(args: readonly Word[]): void {
  const texts = requireStaticArguments('git', args);
  let index = 0;
  // Global options before the subcommand.
  while (index < texts.length && texts[index].startsWith('-')) {
    const option = texts[index];
    if (option === '-C') index += 2;
    else if (['--no-pager', '-P', '--no-optional-locks', '--bare', '--no-replace-objects', '--literal-pathspecs'].includes(option)) {
      index += 1;
    } else if (option.startsWith('--git-dir=') || option.startsWith('--work-tree=')) index += 1;
    else if (option === '-c' || option.startsWith('--config-env') || option.startsWith('--exec-path')) {
      reject(`git ${option} can make git run arbitrary programs`);
    } else reject(`git global option ${option} is not known to be read-only`);
  }
  const subcommand = texts[index];
  if (subcommand === undefined) return reject('git without a subcommand');
  const rest = texts.slice(index + 1);
  if (rest.some((arg) => arg === '--output' || arg.startsWith('--output='))) reject(`git ${subcommand} --output writes a file`);
  if (GIT_READ_ONLY_SUBCOMMANDS.has(subcommand)) return;
  if (subcommand === 'branch') {
    const listing = rest.includes('--list') || rest.includes('-l');
    for (const arg of rest) {
      if (GIT_BRANCH_LISTING_FLAGS.has(arg)) continue;
      if (!arg.startsWith('-') && listing) continue; // a --list pattern
      reject(`git branch ${arg} changes branches`);
    }
    return;
  }
  if (subcommand === 'remote') {
    if (rest.every((arg) => arg === '-v' || arg === '--verbose')) return;
    return reject(`git remote ${rest.join(' ')} changes remotes`);
  }
  reject(`git ${subcommand} is not a read-only git subcommand`);
}
