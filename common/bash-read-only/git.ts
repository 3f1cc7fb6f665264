/**
 * git's read-only forms (issue 17 §2). Global options are matched exactly, as git.c does; the
 * options that name another repository, work tree or config (`-C`, `--git-dir`, `--work-tree`,
 * `-c`, …) refuse. Subcommand options are allow-listed by exact name: git's parse-options accepts
 * abbreviations (`--ext` for `--ext-diff`), so an unlisted prefix must not pass as something else.
 *
 * What argv cannot show: git reads the repository's config, and `core.fsmonitor`, `diff.external`,
 * textconv drivers, `core.pager` and hooks there can run programs. The fact gatherer
 * (activities/permission-facts/git-repository.ts) requires the repository git would discover to be
 * the workspace's own `.git`, and the sandbox runs git with `safe.bareRepository=explicit`; this
 * module only judges the words.
 */
import { type ArgvPath, compiledTable, hasOption, type OptionSpec, options, type ParsedOperand, type ParseResult, parseArgv, refused, words } from './getopt';

export interface GitVerdict {
  readonly readOnly: boolean;
  readonly reason: string;
  readonly paths: ArgvPath[];
}

const CONFIG_NOTE = "it reads the repository's config, which can run programs: only the workspace's own .git is accepted";

/** Global options that cannot change what git reads or runs. */
const GLOBAL_FLAGS = new Set(
  words(
    '--no-pager -P --no-optional-locks --no-replace-objects --literal-pathspecs --glob-pathspecs',
    '--noglob-pathspecs --icase-pathspecs --no-lazy-fetch --no-advice',
  ),
);

const GLOBAL_REFUSED: Readonly<Record<string, string>> = {
  '-C': "git -C runs in another directory, with that repository's config",
  '--git-dir': 'git --git-dir names another repository, whose config can run programs',
  '--work-tree': 'git --work-tree names another work tree',
  '-c': 'git -c sets config, which can run programs',
  '--config-env': 'git --config-env sets config, which can run programs',
  '--exec-path': 'git --exec-path chooses where git finds its programs',
  '--namespace': 'git --namespace changes which refs are read',
  '--bare': 'git --bare treats the current directory as a repository',
  '-p': 'git -p pipes output through a pager',
  '--paginate': 'git --paginate pipes output through a pager',
  '--super-prefix': 'git --super-prefix is internal',
  '--attr-source': 'git --attr-source changes which attributes (textconv, filters) apply',
  '--list-cmds': 'git --list-cmds is not a read-only form we model',
  '-h': 'git --help opens a pager or browser',
  '--help': 'git --help opens a pager or browser',
  '--html-path': 'not a form we model',
  '--man-path': 'not a form we model',
  '--info-path': 'not a form we model',
};

/**
 * Options shared by diff, log and show (diff-options), plus refusals that apply to all three.
 * An option listed with a value must really take one (checked against git 2.39): listing a flag
 * as taking a value would hide the next word, which git reads as an option, from this check.
 * git's revision parser takes some values only attached (`--format=`, `--min-parents=`,
 * `--max-parents=`: `skip_prefix(arg, "--format=")`; parse-options' PARSE_OPT_OPTARG options such
 * as `--abbrev`, `--color`, `--stat`): those are `=?` here, so `git log --format --output=F` is
 * seen writing F — git opens F while it parses, before it rejects the bare `--format`.
 */
const DIFF_OPTIONS = options(
  '-p|-u|--patch -s|--no-patch --raw --patch-with-raw --patch-with-stat --stat=? --compact-summary --numstat --shortstat --dirstat=?',
  '--cumulative --summary -z --name-only --name-status --submodule=? --color=? --no-color --color-moved=? --no-color-moved',
  '--color-moved-ws= --word-diff=? --word-diff-regex= --color-words=? --no-renames --rename-empty --no-rename-empty --check --full-index',
  '--binary --abbrev=? --no-abbrev -B|--break-rewrites=? -M|--find-renames=? -C|--find-copies=? --find-copies-harder',
  '-D|--irreversible-delete -l= --diff-filter= -S= -G= --find-object= --pickaxe-all --pickaxe-regex -O=R --rotate-to= --skip-to= -R',
  '--relative=? --no-relative -a|--text --ignore-cr-at-eol --ignore-space-at-eol -b|--ignore-space-change -w|--ignore-all-space',
  '--ignore-blank-lines -I|--ignore-matching-lines= --inter-hunk-context= -W|--function-context --no-function-context --exit-code --quiet',
  '--no-ext-diff --no-textconv --ignore-submodules=? --src-prefix= --dst-prefix= --no-prefix --default-prefix --line-prefix=',
  '--ita-invisible-in-index --ita-visible-in-index -U|--unified=? --minimal --patience --histogram --diff-algorithm= --anchored=',
  '--indent-heuristic --no-indent-heuristic --full-diff -m --diff-merges= --no-diff-merges --cc --dd --combined-all-paths -c -t',
  refused('--ext-diff', 'git --ext-diff runs the external diff program from the config'),
  refused('--textconv', 'git --textconv runs the textconv programs from the config'),
  refused('--output=W', 'git --output writes to a file'),
);

/** Revision walking and formatting options of log and show. */
const LOG_OPTIONS = options(
  '--oneline --graph --decorate=? --no-decorate --decorate-refs= --decorate-refs-exclude= --clear-decorations --source',
  '--use-mailmap|--mailmap --no-mailmap|--no-use-mailmap --log-size -L= --all --branches=? --tags=? --remotes=? --glob= --exclude=',
  '--reflog -g|--walk-reflogs --first-parent --merges --no-merges --min-parents=? --max-parents=? --no-min-parents --no-max-parents',
  '--reverse --follow --abbrev-commit --no-abbrev-commit --full-history --simplify-merges --ancestry-path=? --simplify-by-decoration',
  '--dense --sparse --show-pulls --date-order --topo-order --author-date-order --left-right --left-only --right-only --cherry',
  '--cherry-mark --cherry-pick --boundary --not --no-walk=? --do-walk --pretty=? --format=? --encoding= --expand-tabs=? --no-expand-tabs',
  '--notes=? --no-notes --show-notes=? --date= --relative-date --parents --children -n|--max-count= --skip= --since|--after=',
  '--until|--before= --since-as-filter= --author= --committer= --grep= --grep-reflog= --all-match --invert-grep -i|--regexp-ignore-case',
  '--basic-regexp -E|--extended-regexp -F|--fixed-strings -P|--perl-regexp --remove-empty --count --show-linear-break=?',
  '--no-color-moved-ws',
  refused('--show-signature', 'git --show-signature runs gpg (gpg.program from the config)'),
);
const DIFF_AND_LOG_OPTIONS = [...DIFF_OPTIONS, ...LOG_OPTIONS];

interface Subcommand {
  readonly options: readonly OptionSpec[];
  readonly numeric?: boolean;
  /** Why the parsed form is not read-only, if it is not. */
  readonly check?: (parsed: ParseResult) => string | undefined;
  /** Operands are paths git may read (diff --no-index, blame, ls-files); else none are reported. */
  readonly operandPaths?: boolean;
  /** It shows what its paths hold, through history (log, show, diff, cat-file): a directory operand is read throughout. */
  readonly showsContent?: boolean;
}

export const SUBCOMMANDS: Readonly<Record<string, Subcommand>> = {
  status: {
    options: options(
      '-s|--short -b|--branch --porcelain=? --long -v|--verbose -u|--untracked-files=? --ignored=? --ignore-submodules=? -z --column=?',
      '--no-column --ahead-behind --no-ahead-behind --renames --no-renames --find-renames=? --show-stash',
    ),
    operandPaths: true,
  },
  log: { options: DIFF_AND_LOG_OPTIONS, numeric: true, operandPaths: true, showsContent: true },
  show: { options: DIFF_AND_LOG_OPTIONS, numeric: true, operandPaths: true, showsContent: true },
  diff: {
    options: options(...DIFF_OPTIONS, '--cached|--staged --merge-base --no-index --base --ours --theirs -1 -2 -3 -0'),
    operandPaths: true,
    showsContent: true,
  },
  'rev-parse': {
    options: options(
      '--show-toplevel --abbrev-ref=? --short=? --verify -q|--quiet --git-dir --show-prefix --show-cdup --is-inside-work-tree',
      '--is-inside-git-dir --is-bare-repository --is-shallow-repository --symbolic --symbolic-full-name --absolute-git-dir',
      '--git-common-dir --show-superproject-working-tree --show-object-format=? --all --branches=? --tags=? --remotes=? --sq --not',
      '--revs-only --no-revs --flags --no-flags --default= --prefix= --path-format= --git-path= --shared-index-path --local-env-vars',
    ),
  },
  'ls-files': {
    options: options(
      '-c|--cached -d|--deleted -m|--modified -o|--others -i|--ignored -s|--stage -u|--unmerged -k|--killed -z -t -v -f --exclude|-x=',
      '-X|--exclude-from=R --exclude-per-directory= --exclude-standard --error-unmatch --full-name --recurse-submodules --abbrev=? --debug',
      '--eol --deduplicate --directory --no-empty-directory --sparse --format= --with-tree= --resolve-undo',
    ),
    operandPaths: true,
  },
  blame: {
    options: options(
      '-L= -l -t -S=R --reverse -p|--porcelain --line-porcelain --incremental -e|--show-email -w -M=? -C=? -s -n|--show-number',
      '-f|--show-name --root --show-stats --date= --abbrev=? -c --color-lines --color-by-age --ignore-rev= --ignore-revs-file=R',
      '--contents=R --encoding= --first-parent --progress --no-progress --minimal --score-debug -b',
    ),
    operandPaths: true,
  },
  'cat-file': {
    options: options(
      '-t -s -e -p --allow-unknown-type --use-mailmap|--mailmap --no-use-mailmap|--no-mailmap',
      refused('--textconv', 'git cat-file --textconv runs the textconv programs from the config'),
      refused('--filters', 'git cat-file --filters runs the filter programs from the config'),
      refused('--path=', 'git cat-file --path is for --textconv/--filters'),
      refused('--batch=?', 'git cat-file --batch reads object names from its input, which cannot be checked'),
      refused('--batch-check=?', 'git cat-file --batch-check reads object names from its input, which cannot be checked'),
      refused('--batch-command=?', 'git cat-file --batch-command reads commands from its input, which cannot be checked'),
      refused('--batch-all-objects', 'git cat-file --batch-all-objects prints every object, whatever path it had'),
    ),
    // `git cat-file -p HEAD:path`: the object's path is what a Read rule judges.
    operandPaths: true,
    showsContent: true,
  },
  describe: {
    options: options(
      '--tags --all --long --abbrev=? --always --exact-match --contains --match= --exclude= --first-parent --candidates= --debug',
      refused('--dirty=?', 'git describe --dirty refreshes the index'),
      refused('--broken=?', 'git describe --broken refreshes the index'),
    ),
  },
  branch: {
    options: options(
      '-a|--all -r|--remotes -l|--list -v|--verbose --show-current --no-color --color=? --contains= --no-contains= --merged= --no-merged=',
      '--points-at= --sort= --format= --column=? --no-column -i|--ignore-case --abbrev=? --no-abbrev --omit-empty -q|--quiet',
    ),
    check: (parsed) =>
      parsed.operands.length > 0 && !hasOption(parsed, '--list')
        ? `git branch ${parsed.operands[0].text} creates a branch (only --list takes patterns)`
        : undefined,
  },
  tag: {
    options: options(
      '-l|--list -n=? --contains= --no-contains= --merged= --no-merged= --points-at= --sort= --format= --column=? --no-column',
      '-i|--ignore-case --color=? --omit-empty',
    ),
    check: (parsed) =>
      parsed.operands.length > 0 && !hasOption(parsed, '--list') ? `git tag ${parsed.operands[0].text} creates a tag (only --list takes patterns)` : undefined,
  },
  remote: {
    options: options('-v|--verbose'),
    check: (parsed) => (parsed.operands.length > 0 ? `git remote ${parsed.operands[0].text} is not a listing form` : undefined),
  },
  config: {
    options: options(
      '--get --get-all --get-regexp --get-urlmatch -l|--list --global --system --local --worktree -f|--file=R --blob= --show-origin',
      '--show-scope -z|--null --name-only --type= --bool --int --bool-or-int --path --expiry-date --default= --includes --no-includes',
      '--fixed-value --all --regexp --value= --url=',
      refused('--add', 'git config --add sets a value'),
      refused('--replace-all', 'git config --replace-all sets values'),
      refused('--unset', 'git config --unset removes a value'),
      refused('--unset-all', 'git config --unset-all removes values'),
      refused('--rename-section', 'git config --rename-section changes the config'),
      refused('--remove-section', 'git config --remove-section changes the config'),
      refused('-e|--edit', 'git config --edit opens an editor'),
      refused('--get-color', 'not a form we model'),
      refused('--get-colorbool', 'not a form we model'),
    ),
    check: (parsed) => {
      if (hasOption(parsed, '--get', '--get-all', '--get-regexp', '--get-urlmatch', '--list')) return undefined;
      const [first] = parsed.operands;
      if (first !== undefined && !first.dynamic && (first.text === 'get' || first.text === 'list')) return undefined;
      if (parsed.operands.length === 1 && first !== undefined && !first.dynamic && first.text.includes('.')) return undefined;
      return 'git config without --get/--list (or `get`/`list`) sets a value';
    },
  },
};

/** Characters that make a pathspec a glob (git matches pathspecs with fnmatch unless `:(literal)`). */
const PATHSPEC_GLOB = /[*?[\\]/;

/**
 * The paths an operand of log, show, diff, blame, cat-file, ls-files or status names (issue 29 §6).
 * After `--` it is a pathspec: from the cwd or — with `:/`,
 * `:(top)` magic — from the top level, up to its first glob character. Before `--` it may also be
 * a revision: `rev:path`, `:path`, `:N:path` name `path` from the top level (or from the cwd when
 * it starts with `./` or `../`); an empty path is the whole tree. Either way the word is also
 * reported as written, since git takes it as a file name when it is not a revision. A subcommand
 * that shows content (`showsContent`) reads a directory throughout, and a path in its history
 * need not exist now.
 */
function gitOperandPaths(operand: ParsedOperand, showsContent: boolean): ArgvPath[] {
  const { index, text } = operand;
  const read = (path: string, fromTop: boolean, history = true): ArgvPath => ({
    index,
    access: 'read',
    text: path === '' ? '.' : path,
    ...(showsContent ? { recursive: true } : {}),
    ...(showsContent && history ? { history } : {}),
    ...(fromTop ? { fromTop } : {}),
  });
  const pathspec = (spec: string): ArgvPath => {
    let rest = spec;
    let fromTop = false;
    if (rest.startsWith(':(')) {
      const close = rest.indexOf(')');
      const magic = close < 0 ? [] : rest.slice(2, close).split(',');
      fromTop = magic.includes('top');
      rest = close < 0 ? '' : rest.slice(close + 1);
    } else if (rest.startsWith(':')) {
      let position = 1;
      while (position < rest.length && '/!^'.includes(rest[position])) position++;
      fromTop = rest.slice(1, position).includes('/');
      rest = rest.slice(rest[position] === ':' ? position + 1 : position);
    }
    const glob = rest.search(PATHSPEC_GLOB);
    if (glob >= 0) rest = rest.slice(0, rest.lastIndexOf('/', glob) + 1);
    return read(rest, fromTop);
  };
  if (operand.afterDoubleDash) return [pathspec(text)];
  // A plain word before `--` is a revision unless it exists as a file (git's own disambiguation).
  const paths: ArgvPath[] = [read(text, false, false)];
  if (text.startsWith(':')) {
    // `:path`, `:N:path` (an index stage), or `:/…` (a commit message search, or top-level pathspec magic).
    const stage = /^:[0-3]:/.exec(text);
    const path = stage ? text.slice(stage[0].length) : text.slice(1);
    paths.push(read(path, !/^\.\.?\//.test(path)));
    if (!stage) paths.push(pathspec(text));
    return paths;
  }
  let depth = 0;
  for (let position = 0; position < text.length; position++) {
    const char = text[position];
    if (char === '{') depth++;
    else if (char === '}' && depth > 0) depth--;
    else if (char === ':' && depth === 0) {
      const path = text.slice(position + 1);
      paths.push(read(path, !/^\.\.?\//.test(path)));
      break;
    }
  }
  return paths;
}

/** Classifies `git …` (argv[0] is git). */
export function classifyGit(argv: readonly string[], dynamic: readonly boolean[]): GitVerdict {
  let index = 1;
  while (index < argv.length && argv[index].startsWith('-')) {
    const word = argv[index];
    if (dynamic[index]) return { readOnly: false, reason: `git option "${word}" expands at runtime`, paths: [] };
    const name = word.includes('=') ? word.slice(0, word.indexOf('=')) : word;
    if (word === '--version' || word === '-v') {
      return index === argv.length - 1
        ? { readOnly: true, reason: 'git --version prints the version', paths: [] }
        : { readOnly: false, reason: 'git --version with more words is not a form we model', paths: [] };
    }
    if (GLOBAL_FLAGS.has(word)) {
      index += 1;
      continue;
    }
    const reason = Object.hasOwn(GLOBAL_REFUSED, name) ? GLOBAL_REFUSED[name] : undefined;
    // `-C` and `-c` also come glued to their value (`-C/tmp`, `-ccore.pager=x`).
    const glued = /^-[Cc]./.test(word) ? GLOBAL_REFUSED[word.slice(0, 2)] : undefined;
    return { readOnly: false, reason: reason ?? glued ?? `git global option ${word} is not known to be read-only`, paths: [] };
  }
  const subcommand = argv[index];
  if (subcommand === undefined) return { readOnly: false, reason: 'git without a subcommand', paths: [] };
  if (dynamic[index]) return { readOnly: false, reason: `git subcommand "${subcommand}" expands at runtime`, paths: [] };
  const spec = Object.hasOwn(SUBCOMMANDS, subcommand) ? SUBCOMMANDS[subcommand] : undefined;
  if (spec === undefined) return { readOnly: false, reason: `git ${subcommand} is not a read-only git subcommand`, paths: [] };
  const parsed = parseArgv(argv, dynamic, index + 1, compiledTable(spec.options), { abbreviations: false, numeric: spec.numeric });
  const paths = [...parsed.paths];
  if (spec.operandPaths) for (const operand of parsed.operands) paths.push(...gitOperandPaths(operand, spec.showsContent === true));
  const signature = parsed.options.find((parsedOption) => parsedOption.value?.includes('%G') === true);
  const refusal =
    parsed.failure ??
    parsed.refusals[0] ??
    (signature === undefined ? undefined : `${signature.name} with a %G placeholder runs gpg to verify signatures`) ??
    spec.check?.(parsed);
  if (refusal !== undefined) return { readOnly: false, reason: `git ${subcommand}: ${refusal}`, paths };
  if (paths.some((path) => path.access === 'write')) return { readOnly: false, reason: `git ${subcommand} writes a file`, paths };
  return { readOnly: true, reason: `git ${subcommand} only reads (${CONFIG_NOTE})`, paths };
}
