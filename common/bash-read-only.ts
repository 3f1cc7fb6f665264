/**
 * Is one simple command provably read-only? (issue 17 §2.) The Bash fact gatherer parses a command
 * line with tree-sitter into simple commands — argv after quote removal, wrappers removed, the
 * program reduced to its name — and asks this pure function about each one.
 *
 * The words are parsed as the program parses them (common/bash-read-only/getopt.ts: clusters,
 * attached values, abbreviated long options, `--`, GNU permutation) against per-program
 * allow-lists (common/bash-read-only/programs.ts, git.ts). Fail closed: an unknown program or
 * option, a dangerous option under any spelling, a word whose runtime value could become an
 * option, or a form we do not model is not read-only, with a reason the permission prompt shows.
 *
 * It also reports the path words it recognised (operands and path-valued option arguments) with
 * how the program uses them, so the caller can check every path a read-only command reads.
 * Pure and Node-free: the workflow bundle may import it.
 */
import { type ArgvPath, compiledTable, compileOptions, maySplit, mayYieldOption, parseArgv, refused, words } from './bash-read-only/getopt';
import { classifyGit } from './bash-read-only/git';
import { FOLLOWS_LINKS, PROGRAMS, type ProgramSpec, readOperand } from './bash-read-only/programs';

export type { ArgvPath } from './bash-read-only/getopt';

/** The verdict on one simple command. */
export interface ReadOnlyVerdict {
  readonly readOnly: boolean;
  /** Why (or why not): shown when the decision asks. */
  readonly reason: string;
  /** Path words and how the program uses them (reported whether or not it is read-only). */
  readonly paths: ArgvPath[];
}

export interface ClassifyArgvOptions {
  /** `dynamic[i]`: word i has an expansion or glob; argv[i] is then the word as written. */
  readonly dynamic: readonly boolean[];
}

/** Classifies one simple command's words (argv[0] is the program's name). */
export function classifyArgv(argv: readonly string[], options: ClassifyArgvOptions): ReadOnlyVerdict {
  const dynamic = options.dynamic;
  if (dynamic.length !== argv.length) return refuse('dynamic does not say for every word whether it expands');
  const program = argv[0];
  if (program === undefined || program === '') return refuse('no program to run');
  if (dynamic[0]) return refuse(`the program name "${program}" expands at runtime`);
  if (program.includes('/')) return refuse(`program given by path (${program})`);
  const special = Object.hasOwn(SPECIAL, program) ? SPECIAL[program] : undefined;
  if (special !== undefined) return special(argv, dynamic);
  const spec = Object.hasOwn(PROGRAMS, program) ? PROGRAMS[program] : undefined;
  if (spec !== undefined) return classifyByTable(program, spec, argv, dynamic);
  const known = Object.hasOwn(NOT_READ_ONLY, program) ? NOT_READ_ONLY[program] : undefined;
  return refuse(known ?? `${program} is not a program known to be read-only`);
}

function refuse(reason: string, paths: ArgvPath[] = []): ReadOnlyVerdict {
  return { readOnly: false, reason, paths };
}

function readOnly(reason: string, paths: ArgvPath[] = []): ReadOnlyVerdict {
  return { readOnly: true, reason, paths };
}

function classifyByTable(program: string, spec: ProgramSpec, argv: readonly string[], dynamic: readonly boolean[]): ReadOnlyVerdict {
  const parsed = parseArgv(argv, dynamic, 1, compiledTable(spec.options), spec.rules);
  const operands = spec.operands(parsed, argv);
  const paths = [...parsed.paths, ...operands.paths].sort((a, b) => a.index - b.index);
  const refusal = parsed.failure ?? parsed.refusals[0] ?? operands.refuse ?? spec.check?.(parsed, argv);
  if (refusal !== undefined) return refuse(`${program}: ${refusal}`, paths);
  const written = paths.find((path) => path.access === 'write');
  if (written !== undefined) return refuse(`${program} writes ${written.text}`, paths);
  return readOnly(`${program} only reads`, paths);
}

// --- programs with their own grammar -------------------------------------------------------------

type Classifier = (argv: readonly string[], dynamic: readonly boolean[]) => ReadOnlyVerdict;

/** echo (the Bash builtin) prints its words; it takes no path and cannot write. */
const classifyEcho: Classifier = () => readOnly('echo only prints its words');

/** The Bash builtins true and false ignore their words. */
const classifyNoop: Classifier = (argv) => readOnly(`${argv[0]} does nothing`);

/** printf prints; `printf -v NAME` assigns a variable (whose subscript Bash evaluates). */
const classifyPrintf: Classifier = (argv, dynamic) => {
  const first = argv[1];
  if (first === undefined) return refuse('printf without a format');
  if (dynamic[1] && mayYieldOption(first)) return refuse(`printf: "${first}" expands at runtime where -v may stand`);
  if (!dynamic[1] && first.startsWith('-') && first !== '--' && first !== '-') {
    return refuse(first.startsWith('-v') ? 'printf -v assigns a variable' : `printf: option ${first} is not known to be read-only`);
  }
  return readOnly('printf only prints');
};

/** Version queries of interpreters: anything else runs code. */
function versionOnly(flags: readonly string[]): Classifier {
  return (argv, dynamic) =>
    argv.length === 2 && !dynamic[1] && flags.includes(argv[1])
      ? readOnly(`${argv[0]} ${argv[1]} prints its version`)
      : refuse(`${argv[0]} runs code (only ${flags.join(' / ')} is read-only)`);
}

const TEST_FILE_OPERATORS = new Set(['-a', '-b', '-c', '-d', '-e', '-f', '-g', '-h', '-k', '-p', '-r', '-s', '-u', '-w', '-x', '-G', '-L', '-N', '-O', '-S']);
const TEST_BINARY_OPERATORS = new Set(['=', '==', '!=', '<', '>', '-eq', '-ne', '-lt', '-le', '-gt', '-ge', '-nt', '-ot', '-ef']);
const TEST_PATH_BINARY = new Set(['-nt', '-ot', '-ef']);

/**
 * test and [: `-v NAME` (and `-R`) evaluate an array subscript, which can run a command substitution
 * (`test -v 'a[$(cmd)]'`). A dynamic word is accepted only quoted (one word) and where it cannot
 * become an operator: a lone word (one word is a string test), the operand of a unary test or `!`
 * (two words), or either side of a binary one (three words).
 */
function classifyTest(argv: readonly string[], dynamic: readonly boolean[]): ReadOnlyVerdict {
  const program = argv[0];
  let words = argv.slice(1).map((text, offset) => ({ text, index: offset + 1, dynamic: dynamic[offset + 1] === true }));
  if (program === '[') {
    const last = words[words.length - 1];
    if (last === undefined || last.dynamic || last.text !== ']') return refuse('[ without a closing ]');
    words = words.slice(0, -1);
  }
  const paths: ArgvPath[] = [];
  const forbidden = words.find((word) => !word.dynamic && (word.text === '-v' || word.text === '-R'));
  if (forbidden !== undefined) return refuse(`${program} ${forbidden.text} evaluates a variable's subscript, which can run commands`);
  const operatorAt = (position: number) => words[position] !== undefined && !words[position].dynamic;
  for (let position = 0; position < words.length; position += 1) {
    const word = words[position];
    if (word.dynamic) {
      if (maySplit(word.text)) return refuse(`${program}: "${word.text}" may split into several words, operators among them`, paths);
      const alone = words.length === 1;
      const afterUnary = words.length === 2 && position === 1 && operatorAt(0) && (words[0].text.startsWith('-') || words[0].text === '!');
      const binarySide = words.length === 3 && position !== 1 && operatorAt(1) && TEST_BINARY_OPERATORS.has(words[1].text);
      if (!alone && !afterUnary && !binarySide) return refuse(`${program}: "${word.text}" expands at runtime where an operator may stand`, paths);
    }
    const previous = words[position - 1];
    const next = words[position + 1];
    const fileOperand = previous !== undefined && !previous.dynamic && TEST_FILE_OPERATORS.has(previous.text);
    const pathSide =
      (next !== undefined && !next.dynamic && TEST_PATH_BINARY.has(next.text)) ||
      (previous !== undefined && !previous.dynamic && TEST_PATH_BINARY.has(previous.text));
    if (fileOperand || pathSide) paths.push({ index: word.index, access: 'read', text: word.text });
  }
  return readOnly(`${program} only tests`, paths);
}

/** find primaries that are read-only and take no word. */
const FIND_FLAGS = new Set(
  words(
    '-print -print0 -ls -prune -quit -true -false -empty -executable -readable -writable -nogroup -nouser -xdev -mount -depth -d -daystart',
    '-noleaf -ignore_readdir_race -noignore_readdir_race -not ! -a -and -o -or ( ) , -help --help -version --version -warn -nowarn',
  ),
);
/** find primaries that are read-only and take one word that is not a file. */
const FIND_ONE_WORD = new Set(
  words(
    '-name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype -type -xtype -size -mtime -mmin -atime -amin -ctime -cmin',
    '-perm -user -group -uid -gid -links -inum -lname -ilname -maxdepth -mindepth -used -fstype -printf -context',
  ),
);
/** find primaries whose word is a file find reads. */
const FIND_READ_PRIMARIES = new Set(['-newer', '-anewer', '-cnewer', '-samefile']);
const FIND_REFUSED: Readonly<Record<string, string>> = {
  '-exec': 'find -exec runs a command',
  '-execdir': 'find -execdir runs a command',
  '-ok': 'find -ok runs a command',
  '-okdir': 'find -okdir runs a command',
  '-delete': 'find -delete deletes files',
  '-fprint': 'find -fprint writes a file',
  '-fprint0': 'find -fprint0 writes a file',
  '-fprintf': 'find -fprintf writes a file',
  '-fls': 'find -fls writes a file',
  '-follow': `find -follow ${FOLLOWS_LINKS}`,
  '-files0-from': 'find -files0-from reads its start points from a file, which cannot be checked before it runs',
};
const FIND_WRITE_PRIMARIES = new Set(['-fprint', '-fprint0', '-fprintf', '-fls']);

/**
 * find [-H] [-L] [-P] [-Olevel] [-D opts] [start…] [expression]: start points are the words before
 * the first that begins with `-`, `(` or `!`; the expression is allow-listed primary by primary.
 */
function classifyFind(argv: readonly string[], dynamic: readonly boolean[]): ReadOnlyVerdict {
  const paths: ArgvPath[] = [];
  let index = 1;
  let follows = false;
  while (index < argv.length && !dynamic[index] && /^-([HLP]|O[0-9]?)$/.test(argv[index])) {
    // -L follows every link met (the last of -H/-L/-P counts); -H only the start points, which are checked on their real path.
    if (/^-[HLP]$/.test(argv[index])) follows = argv[index] === '-L';
    index += 1;
  }
  if (follows) return refuse(`find -L ${FOLLOWS_LINKS}`);
  if (argv[index] === '-D') return refuse('find -D is a debugging form we do not model');
  // Start points.
  while (index < argv.length) {
    const word = argv[index];
    if (dynamic[index]) {
      if (mayYieldOption(word)) return refuse(`find: "${word}" expands at runtime and may become an expression`, paths);
    } else if (word.startsWith('-') || word === '(' || word === '!') break;
    paths.push({ index, access: 'read', text: word });
    index += 1;
  }
  // No start point: find searches `.`, which the caller already checks as the working directory.
  // Expression.
  let refusal: string | undefined;
  while (index < argv.length) {
    const word = argv[index];
    if (dynamic[index]) return refuse(`find: "${word}" expands at runtime inside the expression`, paths);
    if (Object.hasOwn(FIND_REFUSED, word)) {
      refusal ??= FIND_REFUSED[word];
      if (FIND_WRITE_PRIMARIES.has(word) && argv[index + 1] !== undefined) {
        paths.push({ index: index + 1, access: 'write', text: argv[index + 1] });
      }
      if (word.startsWith('-exec') || word.startsWith('-ok')) {
        return refuse(refusal, paths); // the command's words run to `;` or `+`: not a find expression
      }
      if (word === '-files0-from' && argv[index + 1] !== undefined) paths.push({ index: index + 1, access: 'read', text: argv[index + 1] });
      index += word === '-delete' || word === '-follow' ? 1 : word === '-fprintf' ? 3 : 2;
      continue;
    }
    if (/^-O[0-9]$/.test(word) || ['-H', '-L', '-P'].includes(word)) return refuse(`find: ${word} after the start points`, paths);
    if (FIND_FLAGS.has(word)) {
      index += 1;
      continue;
    }
    const readsFile = FIND_READ_PRIMARIES.has(word) || /^-newer[aBcm][aBcm]$/.test(word);
    // `-newerXt` takes a date, not a file.
    if (!readsFile && !FIND_ONE_WORD.has(word) && !/^-newer[aBcm]t$/.test(word)) return refuse(`find: ${word} is not a primary known to be read-only`, paths);
    const value = argv[index + 1];
    if (value === undefined) return refuse(`find ${word} needs a value`, paths);
    if (dynamic[index + 1] && mayYieldOption(value)) return refuse(`find: "${value}" expands at runtime`, paths);
    if (readsFile) paths.push({ index: index + 1, access: 'read', text: value });
    index += 2;
  }
  if (refusal !== undefined) return refuse(refusal, paths);
  return readOnly('find only lists', paths);
}

const SED_OPTIONS = compileOptions([
  '--help --version -n|--quiet|--silent --debug -e|--expression= -l|--line-length= --posix -E|-r|--regexp-extended -s|--separate --sandbox',
  '-u|--unbuffered -z|--null-data --follow-symlinks -b|--binary',
  refused('-i|--in-place=?', 'sed -i/--in-place edits files'),
  refused('-f|--file=R', 'sed -f runs a script file that was not checked'),
]);

/** sed: read-only when no option edits in place and every script only prints and edits the stream. */
function classifySed(argv: readonly string[], dynamic: readonly boolean[]): ReadOnlyVerdict {
  const parsed = parseArgv(argv, dynamic, 1, SED_OPTIONS);
  const scripts = parsed.options.filter((parsedOption) => parsedOption.spec.names.includes('-e'));
  const files = scripts.length > 0 ? parsed.operands : parsed.operands.slice(1);
  const scriptTexts = scripts.length > 0 ? scripts.map((script) => script.value ?? '') : parsed.operands.slice(0, 1).map((operand) => operand.text);
  const paths = [...parsed.paths, ...files.map(readOperand)];
  const refusal = parsed.failure ?? parsed.refusals[0];
  if (refusal !== undefined) return refuse(`sed: ${refusal}`, paths);
  if (scriptTexts.length === 0) return refuse('sed without a script', paths);
  const scriptWords = scripts.length > 0 ? scripts.map((script) => script.index) : parsed.operands.slice(0, 1).map((operand) => operand.index);
  if (scriptWords.some((wordIndex) => dynamic[wordIndex])) return refuse('sed: the script expands at runtime', paths);
  for (const script of scriptTexts) {
    if (!isReadOnlySedScript(script)) return refuse(`sed script "${script}" may write files or run commands`, paths);
  }
  return readOnly('sed only prints', paths);
}

/**
 * Accepts sed scripts made of addresses and printing/editing commands only; rejects `w`, `W`, `r`,
 * `R`, `e`, the `w`/`e` flags of `s`, labels, text commands and anything it does not recognise.
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
    position += 1;
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
    return true;
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
    if ('pdPD=lnNgGhHxzF{}'.includes(command)) continue;
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
        while (!atEnd() && /[gpiImM0-9]/.test(script[position])) position += 1;
      }
      if (!atEnd() && !' \t\n;}'.includes(script[position])) return false;
      continue;
    }
    return false;
  }
}

/**
 * xxd parses its own words: options first (matched by their first letter, `-c8` or `-c 8`), then
 * `[infile [outfile]]` — the second operand is written, so at most one is read-only.
 */
function classifyXxd(argv: readonly string[], dynamic: readonly boolean[]): ReadOnlyVerdict {
  const flagLetters = 'abCEehipuvdr';
  const valueLetters = 'cglnosR';
  const longValueForms = new Set(['-cols', '-groupsize', '-len', '-name', '-seek']);
  let index = 1;
  while (index < argv.length && argv[index].startsWith('-') && argv[index] !== '-') {
    if (dynamic[index]) return refuse(`xxd: "${argv[index]}" expands at runtime`);
    const word = argv[index];
    if (word === '--') {
      index += 1;
      break;
    }
    const letter = word[1];
    if (flagLetters.includes(letter)) index += 1;
    else if (valueLetters.includes(letter)) index += word.length === 2 || longValueForms.has(word) ? 2 : 1;
    else return refuse(`xxd: option ${word} is not known to be read-only`);
  }
  if (index < argv.length && dynamic[index] && mayYieldOption(argv[index])) {
    return refuse(`xxd: "${argv[index]}" expands at runtime where an option may stand`);
  }
  const operands = argv.slice(index).map((text, offset) => ({ index: index + offset, text }));
  const paths: ArgvPath[] = operands.map((operand, position) => ({
    index: operand.index,
    access: position === 0 ? 'read' : 'write',
    text: operand.text,
  }));
  if (operands.length > 1) return refuse('xxd writes its output to the second file operand', paths);
  if (operands.some((operand) => dynamic[operand.index])) return refuse('xxd: an operand expands at runtime and may become an output file', paths);
  return readOnly('xxd only reads', paths);
}

const NPM_OPTIONS = compileOptions([
  '-a|--all --json -l|--long -p|--parseable --depth= -g|--global --omit= --include= --link --prod|--production --dev --unicode',
  '-w|--workspace= --workspaces --include-workspace-root --package-lock-only',
]);
const NPM_READ_ONLY = new Set(['ls', 'list', 'la', 'll', 'view', 'info', 'show', 'v', 'outdated']);

/**
 * npm: `--version`, and the listing subcommands with options matched exactly (npm takes any
 * `--name=value` as config, so an unlisted one refuses). `npm test` and scripts run code.
 */
function classifyNpm(argv: readonly string[], dynamic: readonly boolean[]): ReadOnlyVerdict {
  if (argv.length === 2 && (argv[1] === '--version' || argv[1] === '-v') && !dynamic[1]) return readOnly('npm --version prints its version');
  const subcommand = argv[1];
  if (subcommand === undefined || dynamic[1] || !NPM_READ_ONLY.has(subcommand)) {
    return refuse(`npm ${subcommand ?? ''} is not a read-only npm command (scripts and installs run code)`.replace(/ +\(/, ' ('));
  }
  const parsed = parseArgv(argv, dynamic, 2, NPM_OPTIONS, { abbreviations: false });
  if (parsed.failure !== undefined) return refuse(`npm ${subcommand}: ${parsed.failure}`);
  return readOnly(`npm ${subcommand} only reads package data`);
}

const SPECIAL: Readonly<Record<string, Classifier>> = {
  echo: classifyEcho,
  true: classifyNoop,
  false: classifyNoop,
  printf: classifyPrintf,
  test: classifyTest,
  '[': classifyTest,
  find: classifyFind,
  sed: classifySed,
  xxd: classifyXxd,
  git: classifyGit,
  npm: classifyNpm,
  node: versionOnly(['--version', '-v']),
  python: versionOnly(['--version', '-V']),
  python3: versionOnly(['--version', '-V']),
};

/** Programs that are never read-only, named so the reason is specific. */
const NOT_READ_ONLY: Readonly<Record<string, string>> = {
  ...Object.fromEntries(words('awk gawk mawk nawk').map((name) => [name, 'awk programs can run commands (system(), pipes) and write files'])),
  less: 'less runs shell commands (!cmd) and an editor',
  more: 'more runs shell commands (!cmd) and an editor',
  most: 'a pager can run shell commands',
  man: 'man runs a pager, which can run shell commands',
  vi: 'an editor writes files and runs commands',
  vim: 'an editor writes files and runs commands',
  nano: 'an editor writes files',
  emacs: 'an editor writes files and runs commands',
  xargs: 'xargs runs other commands',
  tee: 'tee writes files',
  rm: 'rm deletes files',
  mv: 'mv moves files',
  cp: 'cp writes files',
  ln: 'ln creates links',
  touch: 'touch writes files',
  mkdir: 'mkdir creates directories',
  chmod: 'chmod changes permissions',
  chown: 'chown changes owners',
  dd: 'dd writes files',
  ...Object.fromEntries(words('sh bash zsh dash').map((name) => [name, 'a shell runs arbitrary commands'])),
  eval: 'eval runs arbitrary commands',
  exec: 'exec replaces the shell with another command',
  source: 'source runs a script',
  '.': '. runs a script',
  perl: 'perl runs code',
  ruby: 'ruby runs code',
  npx: 'npx runs packages',
  make: 'make runs commands',
  curl: 'curl talks to the network and can write files',
  wget: 'wget talks to the network and writes files',
  ssh: 'ssh runs commands elsewhere',
  kill: 'kill signals processes',
};
