/**
 * Per-program allow-lists for the read-only classifier (issue 17 §2): every long option the
 * program knows is listed — the dangerous ones as `refused(…)` — so an abbreviation resolves as the
 * program would resolve it (`sort --co=sh` is `--compress-program`). An option not listed is
 * unknown and refuses. Operand rules say which operands are paths the program reads.
 */
import { type ArgvPath, hasOption, type OptionSpec, options, type ParsedOperand, type ParseResult, type ParseRules, refused } from './getopt';

/** What a program does with its operands: the paths it reads, or why it is not read-only. */
export type OperandRule = (parsed: ParseResult, argv: readonly string[]) => { paths: ArgvPath[]; refuse?: string };

export interface ProgramSpec {
  readonly options: readonly OptionSpec[];
  readonly operands: OperandRule;
  readonly rules?: ParseRules;
  /** A further check on the parsed options: a reason when not read-only. */
  readonly check?: (parsed: ParseResult, argv: readonly string[]) => string | undefined;
}

// --- operand rules -------------------------------------------------------------------------------

/** An operand that is a file the program reads. */
export const readOperand = (operand: ParsedOperand): ArgvPath => ({ index: operand.index, access: 'read', text: operand.text });

/** Every operand is a file the program reads. */
export const readPaths: OperandRule = (parsed) => ({ paths: parsed.operands.filter(isPathOperand).map(readOperand) });

/** `-` is standard input (or output), not a file. */
function isPathOperand(operand: { text: string; dynamic: boolean }): boolean {
  return operand.dynamic || operand.text !== '-';
}

/** Operands are text (names, numbers, sets), not paths. */
export const textOperands: OperandRule = () => ({ paths: [] });

/** The program takes no operands (it would fail on one; we refuse). */
export const noOperands: OperandRule = (parsed) =>
  parsed.operands.length === 0 ? { paths: [] } : { paths: [], refuse: `unexpected operand "${parsed.operands[0].text}"` };

/**
 * At most `max` operands, read through `rule`; a dynamic operand may expand to several words, so it
 * counts as too many. `why` says what an operand past `max` would do.
 */
export function atMost(max: number, why: string, rule: OperandRule): OperandRule {
  return (parsed, argv) => {
    const base = rule(parsed, argv);
    const dynamicOperand = parsed.operands.find((operand) => operand.dynamic);
    if (dynamicOperand !== undefined) {
      return { ...base, refuse: base.refuse ?? `operand "${dynamicOperand.text}" may expand to several words, and ${why}` };
    }
    if (parsed.operands.length > max) return { ...base, refuse: base.refuse ?? why };
    return base;
  };
}

/** The operand at `position` is a file the program writes (reported), the others are read. */
export function writesOperand(position: number): OperandRule {
  return (parsed) => ({ paths: parsed.operands.map((operand, index) => ({ ...readOperand(operand), access: index === position ? 'write' : 'read' })) });
}

/**
 * The first operand is a pattern (or a filter) unless one of `patternOptions` gave it; the rest
 * are files read (grep, rg, jq).
 */
export function patternThenPaths(patternOptions: readonly string[]): OperandRule {
  return (parsed) => {
    const files = hasOption(parsed, ...patternOptions) ? parsed.operands : parsed.operands.slice(1);
    return { paths: files.filter(isPathOperand).map(readOperand) };
  };
}

// --- tables --------------------------------------------------------------------------------------

const HELP = '--help --version';

/** Paths are checked where the command starts; a link met on the way down is not. */
export const FOLLOWS_LINKS = 'follows symbolic links met while recursing, to files outside the checked paths';

const FILES0_FROM = 'reads a list of further files to read, which cannot be checked before it runs';

const grep: ProgramSpec = {
  options: options(
    '--help -V|--version -E|--extended-regexp -F|--fixed-strings -G|--basic-regexp -P|--perl-regexp -e|--regexp= -f|--file=R',
    '-i|-y|--ignore-case --no-ignore-case -w|--word-regexp -x|--line-regexp -z|--null-data -s|--no-messages -v|--invert-match',
    '-m|--max-count= -b|--byte-offset -n|--line-number --no-line-number --line-buffered -H|--with-filename -h|--no-filename --label=',
    '-o|--only-matching -q|--quiet|--silent --binary-files= -a|--text -I -d|--directories= -D|--devices= -r|--recursive',
    refused('-R|--dereference-recursive', FOLLOWS_LINKS),
    '--include= --exclude= --exclude-from=R --exclude-dir= -L|--files-without-match -l|--files-with-matches -c|--count -T|--initial-tab',
    '-Z|--null -B|--before-context= -A|--after-context= -C|--context= --color|--colour=? -U|--binary -u|--unix-byte-offsets',
    '--group-separator= --no-group-separator',
  ),
  rules: { numeric: true },
  operands: patternThenPaths(['-e', '-f']),
};

const sort: ProgramSpec = {
  options: options(
    HELP,
    '-b|--ignore-leading-blanks -d|--dictionary-order -f|--ignore-case -g|--general-numeric-sort -i|--ignore-nonprinting -M|--month-sort',
    '-h|--human-numeric-sort -n|--numeric-sort -R|--random-sort --random-source=R -r|--reverse --sort= -V|--version-sort --batch-size= -c',
    '--check=? -C --debug -k|--key= -m|--merge -s|--stable -S|--buffer-size= -t|--field-separator= -T|--temporary-directory= --parallel=',
    '-u|--unique -z|--zero-terminated',
    refused('-o|--output=W', 'sort -o/--output writes its result to a file'),
    refused('--compress-program=', 'sort --compress-program runs a program'),
    refused('--files0-from=R', FILES0_FROM),
  ),
  operands: readPaths,
};

const diff: ProgramSpec = {
  options: options(
    '--help -v|--version -i|--ignore-case --ignore-file-name-case --no-ignore-file-name-case -E|--ignore-tab-expansion',
    '-Z|--ignore-trailing-space -b|--ignore-space-change -w|--ignore-all-space -B|--ignore-blank-lines -I|--ignore-matching-lines= -a|--text',
    '--binary --strip-trailing-cr -c -C= --context=? -u -U= --unified=? -e|--ed -n|--rcs -y|--side-by-side -W|--width= --left-column',
    '--suppress-common-lines -l|--paginate -t|--expand-tabs -T|--initial-tab --tabsize= --suppress-blank-empty -p|--show-c-function',
    '-F|--show-function-line= --label= -q|--brief -s|--report-identical-files --normal -r|--recursive --no-dereference -N|--new-file',
    '--unidirectional-new-file -x|--exclude= -X|--exclude-from=R -S|--starting-file= --from-file=R --to-file=R --horizon-lines= -d|--minimal',
    '--speed-large-files --line-format= --old-line-format= --new-line-format= --unchanged-line-format= --old-group-format=',
    '--new-group-format= --changed-group-format= --unchanged-group-format= -D|--ifdef= --color=? --palette=',
  ),
  rules: { numeric: true },
  operands: readPaths,
  // diff -r follows every symbolic link it meets below its operands unless told not to.
  check: (parsed) => (hasOption(parsed, '-r') && !hasOption(parsed, '--no-dereference') ? `-r without --no-dereference ${FOLLOWS_LINKS}` : undefined),
};

const ls: ProgramSpec = {
  options: options(
    HELP,
    '-a|--all -A|--almost-all --author -b|--escape --block-size= -B|--ignore-backups -c -C --color=? -d|--directory -D|--dired -f -F',
    '--classify=? --file-type --format= --full-time -g --group-directories-first -G|--no-group -h|--human-readable --si',
    '-H|--dereference-command-line --dereference-command-line-symlink-to-dir --hide= --hyperlink=? --indicator-style= -i|--inode',
    '-I|--ignore= -k|--kibibytes -l -L|--dereference -m -n|--numeric-uid-gid -N|--literal -o -p -q|--hide-control-chars',
    '--show-control-chars -Q|--quote-name --quoting-style= -r|--reverse -R|--recursive -s|--size -S --sort= --time= --time-style= -t',
    '-T|--tabsize= -u -U -v -w|--width= -x -X -Z|--context --zero -1',
  ),
  operands: readPaths,
};

const date: ProgramSpec = {
  options: options(
    HELP,
    '-d|--date= --debug -f|--file=R -I|--iso-8601=? --resolution -R|--rfc-email --rfc-3339= -r|--reference=R -u|--utc|--universal',
    refused('-s|--set=', 'date -s/--set sets the system clock'),
  ),
  operands: (parsed) => {
    const setting = parsed.operands.find((operand) => !operand.text.startsWith('+') || operand.dynamic);
    return setting === undefined ? { paths: [] } : { paths: [], refuse: `date operand "${setting.text}" sets the system clock` };
  },
};

const tail: ProgramSpec = {
  options: options(
    HELP,
    '-c|--bytes= -f --follow=? -F -n|--lines= --max-unchanged-stats= --pid= -q|--quiet|--silent --retry -s|--sleep-interval= -v|--verbose',
    '-z|--zero-terminated ---presume-input-pipe',
  ),
  rules: { numeric: true },
  operands: readPaths,
};

const rg: ProgramSpec = {
  // ripgrep parses its own words: exact long names only (no abbreviations), clusters allowed.
  options: options(
    '-A|--after-context= -B|--before-context= -C|--context= -a|--text -b|--byte-offset -c|--count --count-matches',
    '-d|--max-depth|--maxdepth= -E|--encoding= -e|--regexp= -F|--fixed-strings -f|--file=R -g|--glob= -H|--with-filename -h|--help',
    '-I|--no-filename -i|--ignore-case -j|--threads=',
    refused('-L|--follow', FOLLOWS_LINKS),
    '-l|--files-with-matches -M|--max-columns= -m|--max-count= -N|--no-line-number -n|--line-number -o|--only-matching -p|--pretty',
    '-P|--pcre2 -q|--quiet -r|--replace= -S|--smart-case -s|--case-sensitive -t|--type= -T|--type-not= -u|--unrestricted -U|--multiline',
    '-V|--version -v|--invert-match -w|--word-regexp -x|--line-regexp -z|--search-zip -0|--null --binary --no-binary --block-buffered',
    '--no-block-buffered --color= --colors= --column --no-column --context-separator= --no-context-separator --crlf --no-crlf --debug',
    '--trace --dfa-size-limit= --engine= --field-context-separator= --field-match-separator= --files --files-without-match',
    '--glob-case-insensitive --no-glob-case-insensitive --heading --no-heading --hidden --no-hidden --iglob= --ignore-file=R',
    '--ignore-file-case-insensitive --no-ignore-file-case-insensitive --include-zero --no-include-zero --json --no-json --line-buffered',
    '--no-line-buffered --max-columns-preview --no-max-columns-preview --max-filesize= --mmap --no-mmap --multiline-dotall',
    '--no-multiline-dotall --no-config --no-ignore --ignore --no-ignore-dot --ignore-dot --no-ignore-exclude --ignore-exclude',
    '--no-ignore-files --ignore-files --no-ignore-global --ignore-global --no-ignore-messages --ignore-messages --no-ignore-parent',
    '--ignore-parent --no-ignore-vcs --ignore-vcs --no-messages --messages --no-pcre2 --no-pcre2-unicode --pcre2-unicode --no-require-git',
    '--require-git --no-unicode --unicode --null-data --one-file-system --no-one-file-system --passthru|--passthrough --path-separator=',
    '--pcre2-version --no-search-zip --sort= --sortr= --stats --no-stats --stop-on-nonmatch --no-text --trim --no-trim --type-add=',
    '--type-clear= --type-list --vimgrep --no-follow --no-fixed-strings --no-invert-match --no-unrestricted --auto-hybrid-regex',
    '--no-auto-hybrid-regex --regex-size-limit= --hyperlink-format= --generate=',
    refused('--pre=', 'rg --pre runs a preprocessor program on every file'),
    refused('--pre-glob=', 'rg --pre-glob chooses files for a --pre program'),
    '--no-pre',
    refused('--hostname-bin=', 'rg --hostname-bin runs a program'),
  ),
  rules: { abbreviations: false },
  operands: patternThenPaths(['-e', '-f', '--files', '--type-list', '--pcre2-version', '--generate']),
};

const checksum: ProgramSpec = {
  options: options(
    HELP,
    '-b|--binary --tag -t|--text -z|--zero --ignore-missing --quiet --status --strict -w|--warn',
    refused('-c|--check', 'reads the files named inside a checksum list, which cannot be checked before it runs'),
  ),
  operands: readPaths,
};

const b2sum: ProgramSpec = { ...checksum, options: options(...checksum.options, '-l|--length=') };

/** The programs described by a table alone. */
export const PROGRAMS: Readonly<Record<string, ProgramSpec>> = {
  ls,
  dir: ls,
  vdir: ls,
  cat: {
    options: options(HELP, '-A|--show-all -b|--number-nonblank -e -E|--show-ends -n|--number -s|--squeeze-blank -t -T|--show-tabs -u -v|--show-nonprinting'),
    operands: readPaths,
  },
  head: {
    options: options(HELP, '-c|--bytes= -n|--lines= -q|--quiet|--silent -v|--verbose -z|--zero-terminated'),
    rules: { numeric: true },
    operands: readPaths,
  },
  tail,
  wc: {
    options: options(HELP, '-c|--bytes -m|--chars -l|--lines -L|--max-line-length -w|--words --total=', refused('--files0-from=R', FILES0_FROM)),
    operands: readPaths,
  },
  stat: {
    options: options(HELP, '-L|--dereference -f|--file-system -c|--format= --printf= -t|--terse --cached='),
    operands: readPaths,
  },
  file: {
    options: options(
      '--help -v|--version -b|--brief -c|--checking-printout -d|--debug -e|--exclude= --exclude-quiet= -E -F|--separator=',
      refused('-f|--files-from=R', FILES0_FROM),
      '-h|--no-dereference -i|--mime --apple --extension --mime-type --mime-encoding -k|--keep-going -l|--list -L|--dereference',
      '-m|--magic-file=R -n|--no-buffer -N|--no-pad -P|--parameter= -r|--raw -s|--special-files -z|--uncompress -Z|--uncompress-noreport',
      '-0|--print0',
      refused('-C|--compile', 'file -C/--compile writes a compiled magic file'),
      refused('-p|--preserve-date', "file -p/--preserve-date writes the files' access times back"),
      refused('-S|--no-sandbox', 'file -S/--no-sandbox turns off its sandbox for decompressors'),
    ),
    operands: readPaths,
  },
  du: {
    options: options(
      HELP,
      '-0|--null -a|--all -A|--apparent-size -B|--block-size= -b|--bytes -c|--total -D|--dereference-args -d|--max-depth=',
      refused('--files0-from=R', FILES0_FROM),
      '-H -h|--human-readable --inodes -k -L|--dereference -l|--count-links -m -P|--no-dereference -S|--separate-dirs --si -s|--summarize',
      '-t|--threshold= --time=? --time-style= -X|--exclude-from=R --exclude= -x|--one-file-system',
    ),
    operands: readPaths,
  },
  df: {
    options: options(
      HELP,
      '-a|--all -B|--block-size= -h|--human-readable -H|--si -i|--inodes -k -l|--local --no-sync --output=? -P|--portability --sync',
      '--total -t|--type= -T|--print-type -x|--exclude-type= -v',
    ),
    operands: readPaths,
  },
  // Bash builtins parse their own options: no long options, no abbreviations, no permutation.
  pwd: { options: options('-L -P'), rules: { permute: false, abbreviations: false }, operands: textOperands },
  type: {
    options: options('-a -f -p -P -t'),
    rules: { permute: false, abbreviations: false },
    operands: textOperands,
  },
  which: {
    options: options(
      '-a|--all -s -i|--read-alias --skip-alias --read-functions --skip-functions --skip-dot --skip-tilde --show-dot --show-tilde',
      '--tty-only -v|-V|--version --help',
    ),
    rules: { abbreviations: false },
    operands: textOperands,
  },
  whoami: { options: options(HELP), operands: noOperands },
  id: {
    options: options(HELP, '-a -Z|--context -g|--group -G|--groups -n|--name -r|--real -u|--user -z|--zero'),
    operands: textOperands,
  },
  uname: {
    options: options(
      HELP,
      '-a|--all -s|--kernel-name -n|--nodename -r|--kernel-release -v|--kernel-version -m|--machine -p|--processor -i|--hardware-platform',
      '-o|--operating-system',
    ),
    operands: noOperands,
  },
  date,
  basename: { options: options(HELP, '-a|--multiple -s|--suffix= -z|--zero'), operands: textOperands },
  dirname: { options: options(HELP, '-z|--zero'), operands: textOperands },
  realpath: {
    options: options(
      HELP,
      '-e|--canonicalize-existing -m|--canonicalize-missing -L|--logical -P|--physical -q|--quiet --relative-to=R --relative-base=R',
      '-s|--strip|--no-symlinks -z|--zero',
    ),
    operands: readPaths,
  },
  readlink: {
    options: options(
      HELP,
      '-f|--canonicalize -e|--canonicalize-existing -m|--canonicalize-missing -n|--no-newline -q|--quiet -s|--silent -v|--verbose',
      '-z|--zero',
    ),
    operands: readPaths,
  },
  sort,
  uniq: {
    options: options(
      HELP,
      '-c|--count -d|--repeated -D --all-repeated=? -f|--skip-fields= --group=? -i|--ignore-case -s|--skip-chars= -u|--unique',
      '-z|--zero-terminated -w|--check-chars=',
    ),
    rules: { numeric: true },
    operands: atMost(1, 'uniq writes its output to a second file operand', writesOperand(1)),
  },
  cut: {
    options: options(
      HELP,
      '-b|--bytes= -c|--characters= -d|--delimiter= -f|--fields= -n --complement -s|--only-delimited --output-delimiter=',
      '-z|--zero-terminated',
    ),
    operands: readPaths,
  },
  tr: {
    options: options(HELP, '-c|-C|--complement -d|--delete -s|--squeeze-repeats -t|--truncate-set1'),
    operands: textOperands,
  },
  nl: {
    options: options(
      HELP,
      '-b|--body-numbering= -d|--section-delimiter= -f|--footer-numbering= -h|--header-numbering= -i|--line-increment=',
      '-l|--join-blank-lines= -n|--number-format= -p|--no-renumber -s|--number-separator= -v|--starting-line-number= -w|--number-width=',
    ),
    operands: readPaths,
  },
  od: {
    options: options(
      HELP,
      '-A|--address-radix= --endian= -j|--skip-bytes= -N|--read-bytes= -S= --strings=? -t|--format= -v|--output-duplicates -w|--width=?',
      '--traditional -a -b -c -d -f -i -l -o -s -x -B -D -e -F -H -I -L -O -X',
    ),
    operands: readPaths,
  },
  hexdump: {
    options: options(
      '-h|--help -V|--version -b|--one-byte-octal -X|--one-byte-hex -c|--one-byte-char -C|--canonical -d|--two-bytes-decimal',
      '-o|--two-bytes-octal -x|--two-bytes-hex -e|--format= -f|--format-file=R -L|--color=? -n|--length= -s|--skip= -v|--no-squeezing',
    ),
    operands: readPaths,
  },
  diff,
  cmp: {
    options: options('--help -v|--version -b|--print-bytes -i|--ignore-initial= -l|--verbose -n|--bytes= -s|--quiet|--silent'),
    // cmp FILE1 FILE2 [SKIP1 [SKIP2]]: skips are numbers; reporting them as paths is harmless.
    operands: readPaths,
  },
  comm: {
    options: options(HELP, '-1 -2 -3 --check-order --nocheck-order --output-delimiter= --total -z|--zero-terminated'),
    operands: readPaths,
  },
  grep,
  egrep: grep,
  rg,
  fgrep: grep,
  tree: {
    // tree parses its own words: no abbreviations, and `-R` with `-o` writes 00Tree.html files.
    options: options(
      '--help --version -a -d -l -f -x -L= -P= -I= --gitignore --gitfile=R --ignore-case --matchdirs --metafirst --prune --info',
      '--infofile=R --noreport --charset= --filelimit= --dirsfirst --filesfirst --timefmt= -q -N -Q -p -u -g -s -h --si --du -D --inodes',
      '--device -F -v -t -c -U -r --sort= -i -A -S -n -C -X -J --noindent --nolinks --fromfile --fromtabfile --condense',
      refused('-o=W', 'tree -o writes its output to a file'),
      refused('-R', 'tree -R writes an index file into every directory'),
      refused('-H=', 'tree -H writes HTML meant for a file'),
      refused('-T=', 'tree -T titles HTML output meant for a file'),
    ),
    rules: { abbreviations: false },
    operands: readPaths,
  },
  jq: {
    // jq matches its long options exactly; its filter cannot write files or run programs.
    options: options(
      '-h|--help -V|--version --build-configuration -n|--null-input -R|--raw-input -s|--slurp -c|--compact-output -r|--raw-output',
      '--raw-output0 -j|--join-output -a|--ascii-output -S|--sort-keys -C|--color-output -M|--monochrome-output --tab --indent=',
      '--unbuffered --stream --stream-errors --seq -L=R -e|--exit-status --arg=2',
      refused('-f|--from-file=R', 'jq -f runs a filter file that was not checked'),
      '--argjson=2 --slurpfile=2R --rawfile=2R --jsonargs --args',
    ),
    rules: { abbreviations: false },
    // `import`/`include` read modules and JSON data from any directory a `search` key names.
    check: (parsed) => {
      const filter = parsed.operands[0];
      if (filter === undefined) return undefined;
      if (filter.dynamic) return 'the jq filter expands at runtime';
      return /\b(import|include)\b/.test(filter.text) ? 'a jq filter with import/include reads modules from other directories' : undefined;
    },
    operands: (parsed) => {
      const positional = parsed.options.find((parsedOption) => ['--args', '--jsonargs'].includes(parsedOption.name));
      let files = hasOption(parsed, '-f') ? parsed.operands : parsed.operands.slice(1);
      // After --args / --jsonargs the remaining operands are values, not files.
      if (positional !== undefined) files = files.filter((operand) => operand.index < positional.index);
      return { paths: files.map(readOperand) };
    },
  },
  env: {
    // Only the forms that print the environment: one that runs a command is unwrapped by the caller.
    options: options(
      HELP,
      '-0|--null -u|--unset= -i|--ignore-environment',
      refused('-C|--chdir=', 'env -C runs a command in another directory'),
      refused('-S|--split-string=', 'env -S runs a command'),
      refused('-v|--debug', 'env -v is for running a command'),
      refused('--default-signal=?', 'env --default-signal is for running a command'),
      refused('--ignore-signal=?', 'env --ignore-signal is for running a command'),
      refused('--block-signal=?', 'env --block-signal is for running a command'),
      refused('--list-signal-handling', 'env --list-signal-handling is for running a command'),
      refused('-a|--argv0=', 'env --argv0 is for running a command'),
    ),
    rules: { permute: false },
    operands: (parsed) => {
      const command = parsed.operands.find((operand) => operand.dynamic || !/^[A-Za-z_][A-Za-z0-9_]*=/.test(operand.text));
      return command === undefined ? { paths: [] } : { paths: [], refuse: `env runs the command "${command.text}"` };
    },
  },
  printenv: { options: options(HELP, '-0|--null'), operands: textOperands },
  seq: {
    options: options(HELP, '-f|--format= -s|--separator= -w|--equal-width'),
    rules: { numeric: true },
    operands: textOperands,
  },
  yes: { options: options(HELP), rules: { permute: false }, operands: textOperands },
  sleep: { options: options(HELP), operands: textOperands },
  tac: { options: options(HELP, '-b|--before -r|--regex -s|--separator='), operands: readPaths },
  paste: { options: options(HELP, '-d|--delimiters= -s|--serial -z|--zero-terminated'), operands: readPaths },
  fold: { options: options(HELP, '-b|--bytes -s|--spaces -w|--width='), rules: { numeric: true }, operands: readPaths },
  base64: { options: options(HELP, '-d|--decode -i|--ignore-garbage -w|--wrap='), operands: readPaths },
  ...Object.fromEntries(['md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum'].map((name) => [name, checksum])),
  b2sum,
  nproc: { options: options(HELP, '--all --ignore='), operands: noOperands },
  cd: {
    options: options('-L -P -e -@'),
    rules: { permute: false, abbreviations: false },
    operands: (parsed) => {
      const [target] = parsed.operands;
      if (target === undefined) return { paths: [], refuse: 'cd without a directory goes to $HOME' };
      if (parsed.operands.length > 1) return { paths: [], refuse: 'cd takes one directory' };
      if (target.text === '-') return { paths: [], refuse: 'cd - goes to $OLDPWD, which is not known here' };
      // `~` and `~/dir` expand to the home directory, which the caller resolves; other expansions it cannot.
      if (target.dynamic && !/^~(\/[^$`*?[{"'\\]*)?$/.test(target.text)) {
        return { paths: [readOperand(target)], refuse: `cd "${target.text}" expands at runtime` };
      }
      return { paths: [readOperand(target)] };
    },
  },
};
