/**
 * getopt_long as the programs themselves parse their words (issue 17 §2), so a read-only verdict
 * is about the options the program will really see: short clusters (`-rn5`), attached or separate
 * arguments, `--name=value` / `--name value`, unique abbreviations of long options (`--o` is
 * `--output` when nothing else starts with `o`), `--` ending the options, and GNU permutation
 * (options after operands). Pure and Node-free: the workflow bundle may import it.
 *
 * Fail closed: an unknown option, an ambiguous abbreviation, a value given to a flag, a missing
 * value, or a word whose runtime value could turn into an option stops the parse with a reason.
 */

/**
 * What an option takes: `none`; `value` (required, attached or the next word); `optional` (only
 * attached: `-x5`, `--name=5`); `read` / `write` (a required value that is a path the program reads
 * / writes); `pair` (two following words, as jq's `--arg NAME VALUE`); `pair-read` (a name and a
 * path it reads, as jq's `--rawfile NAME FILE`).
 */
export type ArgumentKind = 'none' | 'value' | 'optional' | 'read' | 'write' | 'pair' | 'pair-read';

export interface OptionSpec {
  /** Every spelling: `-o`, `--output`. */
  readonly names: readonly string[];
  readonly argument: ArgumentKind;
  /** Set on options a read-only command must not use: why. */
  readonly refuse?: string;
}

/** A path word (or the part of a word after `--name=` / `-x`) and how the program uses it. */
export interface ArgvPath {
  /** Index in argv of the word that holds the path. */
  readonly index: number;
  readonly access: 'read' | 'write';
  /** The path itself: the whole word, or its tail when attached to an option (`--file=PATH`). */
  readonly text: string;
  /** Relative to the repository's top level rather than the working directory (git's `rev:path`, `:(top)` pathspecs). */
  readonly fromTop?: boolean;
  /** When it is a directory, the program reads everything below it (a git path operand). */
  readonly recursive?: boolean;
  /** It names a path in git's history, which need not exist now (a pathspec, `rev:path`). */
  readonly history?: boolean;
}

/** How a program parses its words; where not given, GNU's (permutation, abbreviations, no `-NUM`). */
export interface ParseRules {
  /** GNU permutation: options may follow operands (false: the first operand ends the options). */
  readonly permute?: boolean;
  /** Unique prefixes of long options are accepted (GNU getopt_long, git's parse-options). */
  readonly abbreviations?: boolean;
  /** `-NUM` is an option (head -5, uniq -2, diff -3, git log -5). */
  readonly numeric?: boolean;
}

export interface ParsedOption {
  readonly spec: OptionSpec;
  /** The spelling resolved to (an abbreviation resolves to the full name). */
  readonly name: string;
  readonly index: number;
  readonly value?: string;
}

export interface ParsedOperand {
  readonly index: number;
  readonly text: string;
  readonly dynamic: boolean;
  /** It came after `--` (git: a pathspec, never a revision). */
  readonly afterDoubleDash?: boolean;
}

export interface ParseResult {
  readonly options: ParsedOption[];
  readonly operands: ParsedOperand[];
  /** Path-valued option arguments seen (reported even when the command is refused). */
  readonly paths: ArgvPath[];
  /** Reasons from refused options that were recognised (parsing went on to find paths). */
  readonly refusals: string[];
  /** Set when the words could not be parsed with certainty: parsing stopped there. */
  readonly failure?: string;
}

/** An option table compiled for lookup. */
export interface OptionTable {
  readonly short: ReadonlyMap<string, OptionSpec>;
  readonly long: ReadonlyMap<string, OptionSpec>;
}

/**
 * Builds one spec from a compact spelling: names joined by `|`, then `=` and the argument kind:
 * `-a|--all` (flag), `-w|--width=` (value), `--color=?` (optional), `-f|--file=R` (read path),
 * `-o|--output=W` (write path), `--arg=2` (pair), `--rawfile=2R` (name and read path).
 */
export function option(spelling: string, refuse?: string): OptionSpec {
  const [namesPart, kindPart] = spelling.split(/=(.*)/s); // split at the first `=`
  const kinds: Record<string, ArgumentKind> = { '': 'value', '?': 'optional', R: 'read', W: 'write', '2': 'pair', '2R': 'pair-read' };
  const argument = kindPart === undefined ? 'none' : kinds[kindPart];
  if (argument === undefined) throw new Error(`bad option spelling ${spelling}`);
  const names = namesPart.split('|');
  for (const name of names) {
    if (!/^(-[^-\s]|--[^=\s]+)$/.test(name)) throw new Error(`bad option name ${name} in ${spelling}`);
  }
  return refuse === undefined ? { names, argument } : { names, argument, refuse };
}

/** A refused option: recognised (so abbreviations resolve to it) but never read-only. */
export function refused(spelling: string, reason: string): OptionSpec {
  return option(spelling, reason);
}

/**
 * An option table written like a man page's synopsis: each string holds spellings (as `option`
 * reads them) separated by whitespace, e.g. `options('-E|--extended-regexp -e|--regexp=', refused(…))`.
 * Tables are built when their module loads, so a malformed spelling throws there.
 */
export function options(...entries: readonly (string | OptionSpec)[]): OptionSpec[] {
  return entries.flatMap((entry) => (typeof entry === 'string' ? words(entry).map((spelling) => option(spelling)) : [entry]));
}

/** The whitespace-separated words of `lines`, for word lists written over several lines. */
export function words(...lines: readonly string[]): string[] {
  return lines.flatMap((line) => line.trim().split(/\s+/));
}

/** Compiles entries (spelling lists, as `options` reads them, or specs) into lookup maps; a name listed twice is a table bug. */
export function compileOptions(entries: readonly (string | OptionSpec)[]): OptionTable {
  const short = new Map<string, OptionSpec>();
  const long = new Map<string, OptionSpec>();
  for (const spec of options(...entries)) {
    for (const name of spec.names) {
      const map = name.startsWith('--') ? long : short;
      const key = name.startsWith('--') ? name.slice(2) : name.slice(1);
      if (map.has(key)) throw new Error(`option ${name} listed twice`);
      map.set(key, spec);
    }
  }
  return { short, long };
}

/** Whether an option with one of `names` (under any of its spellings) was given. */
export function hasOption(parsed: ParseResult, ...names: string[]): boolean {
  return parsed.options.some((parsedOption) => parsedOption.spec.names.some((name) => names.includes(name)));
}

const compiledTables = new WeakMap<readonly OptionSpec[], OptionTable>();

/** `compileOptions(specs)`, compiled once per table. */
export function compiledTable(specs: readonly OptionSpec[]): OptionTable {
  let table = compiledTables.get(specs);
  if (table === undefined) {
    table = compileOptions(specs);
    compiledTables.set(specs, table);
  }
  return table;
}

/**
 * Whether a word that expands at runtime (`dynamic`) could yield a word that starts with `-` (an
 * option) or several words. `argv` keeps such a word as written, quotes included. It cannot when
 * its first character is a literal that is not `-` (a glob's matches all start with it) and it has
 * no unquoted expansion (which word splitting could break into several words), no `"$@"` and no
 * command substitution.
 */
export function mayYieldOption(written: string): boolean {
  if (/\$@|\$\{@|\[@\]|`|\$\(|\$\[|\$'/.test(written)) return true;
  let position = 0;
  let firstLiteral: string | undefined;
  let quote: '"' | "'" | undefined;
  while (position < written.length) {
    const char = written[position];
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else firstLiteral ??= char;
      position += 1;
      continue;
    }
    if (char === '\\') {
      firstLiteral ??= written[position + 1] ?? '\\';
      position += 2;
      continue;
    }
    if (quote === '"') {
      if (char === '"') quote = undefined;
      else if (char === '$') {
        if (firstLiteral === undefined) return true; // the expansion's value comes first
      } else firstLiteral ??= char;
      position += 1;
      continue;
    }
    if (char === '"' || char === "'") {
      quote = char;
      position += 1;
      continue;
    }
    if (char === '$') return true; // unquoted: split into words, any of which may start with `-`
    if (firstLiteral === undefined) {
      if (char === '~' && position === 0 && (written[1] === '/' || written.length === 1)) {
        firstLiteral = '/'; // `~` and `~/x` expand to the home directory: an absolute path
      } else if ('*?[{'.includes(char))
        return true; // a glob or brace first: any name may match
      else firstLiteral = char;
    }
    position += 1;
  }
  if (firstLiteral === undefined) return true;
  return !/^[A-Za-z0-9_./+,:@%=]$/.test(firstLiteral);
}

/**
 * Whether a word kept as written may expand to more than one word (or none): an unquoted
 * expansion is split, an unquoted glob or brace yields any number of names, `"$@"` yields one word
 * per argument.
 */
export function maySplit(written: string): boolean {
  if (/\$@|\$\{@|\[@\]|\$\{!/.test(written)) return true;
  let quote: '"' | "'" | undefined;
  for (let position = 0; position < written.length; position += 1) {
    const char = written[position];
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else if (quote === '"' && char === '\\') position += 1;
      continue;
    }
    if (char === '\\') {
      position += 1;
      continue;
    }
    if (char === '"' || char === "'") quote = char;
    else if ('$*?[{`'.includes(char)) return true;
  }
  return false;
}

/**
 * Parses `argv[start..]` with `table` and `rules`. Dynamic words in an option position (or as an
 * option's value) that could yield an option stop the parse; elsewhere they are operands.
 */
export function parseArgv(argv: readonly string[], dynamic: readonly boolean[], start: number, table: OptionTable, rules: ParseRules = {}): ParseResult {
  const { permute = true, abbreviations = true, numeric = false } = rules;
  const options: ParsedOption[] = [];
  const operands: ParsedOperand[] = [];
  const paths: ArgvPath[] = [];
  const refusals: string[] = [];
  const result = (failure?: string): ParseResult =>
    failure === undefined ? { options, operands, paths, refusals } : { options, operands, paths, refusals, failure };

  let endOfOptions = false;
  let index = start;
  // Takes the separate word after index `at` as an option's value.
  const takeSeparate = (name: string, at: number): { value: string; index: number } | string => {
    const valueIndex = at + 1;
    if (valueIndex >= argv.length) return `${name} needs a value`;
    // The first word an expansion yields is the value whatever it starts with; more words would not be.
    if (dynamic[valueIndex] && maySplit(argv[valueIndex])) {
      return `the value of ${name} ("${argv[valueIndex]}") expands at runtime and may split into more words`;
    }
    return { value: argv[valueIndex], index: valueIndex };
  };
  const record = (spec: OptionSpec, name: string, wordIndex: number, value?: { value: string; index: number }) => {
    options.push(value === undefined ? { spec, name, index: wordIndex } : { spec, name, index: wordIndex, value: value.value });
    if (spec.refuse !== undefined) refusals.push(spec.refuse);
    if (value !== undefined && (spec.argument === 'read' || spec.argument === 'write')) {
      paths.push({ index: value.index, access: spec.argument, text: value.value });
    }
  };
  // Takes an option's argument(s); returns the index of the last word consumed or a failure.
  const takeArgument = (spec: OptionSpec, name: string, wordIndex: number, attached: string | undefined): number | string => {
    const pair = spec.argument === 'pair' || spec.argument === 'pair-read';
    if (attached !== undefined) {
      if (spec.argument === 'none' || pair) return pair ? `${name} takes two separate words` : `${name} takes no value`;
      record(spec, name, wordIndex, { value: attached, index: wordIndex });
      return wordIndex;
    }
    if (spec.argument === 'none' || spec.argument === 'optional') {
      record(spec, name, wordIndex);
      return wordIndex;
    }
    const first = takeSeparate(name, wordIndex);
    if (typeof first === 'string') return first;
    const second = pair ? takeSeparate(name, first.index) : undefined;
    if (typeof second === 'string') return second;
    record(spec, name, wordIndex, first);
    if (second !== undefined && spec.argument === 'pair-read') paths.push({ index: second.index, access: 'read', text: second.value });
    return second?.index ?? first.index;
  };

  while (index < argv.length) {
    const word = argv[index];
    const optionPosition = !endOfOptions && (permute || operands.length === 0);
    if (!optionPosition) {
      operands.push({ index, text: word, dynamic: dynamic[index] === true, ...(endOfOptions ? { afterDoubleDash: true } : {}) });
      index += 1;
      continue;
    }
    if (dynamic[index] && mayYieldOption(word)) return result(`"${word}" expands at runtime where an option may stand`);
    if (dynamic[index] || word === '-' || !word.startsWith('-')) {
      operands.push({ index, text: word, dynamic: dynamic[index] === true });
      index += 1;
      continue;
    }
    if (word === '--') {
      endOfOptions = true;
      index += 1;
      continue;
    }
    if (numeric && /^-[0-9]+$/.test(word)) {
      options.push({ spec: { names: ['-NUM'], argument: 'none' }, name: word, index });
      index += 1;
      continue;
    }
    let last: number | string;
    if (word.startsWith('--')) {
      const equals = word.indexOf('=');
      const typed = word.slice(2, equals === -1 ? undefined : equals);
      const attached = equals === -1 ? undefined : word.slice(equals + 1);
      const resolved = resolveLong(table, typed, abbreviations);
      if (typeof resolved === 'string') return result(resolved);
      last = takeArgument(resolved.spec, `--${resolved.name}`, index, attached);
    } else {
      last = index;
      for (let position = 1; position < word.length; position += 1) {
        const letter = word[position];
        const spec = table.short.get(letter);
        if (spec === undefined) return result(`unknown option -${letter}`);
        // A letter that takes an argument takes the rest of the word, if any, and ends the cluster.
        const rest = spec.argument === 'none' || position === word.length - 1 ? undefined : word.slice(position + 1);
        last = takeArgument(spec, `-${letter}`, index, rest);
        if (spec.argument !== 'none') break;
      }
    }
    if (typeof last === 'string') return result(last);
    index = last + 1;
  }
  return result();
}

function resolveLong(table: OptionTable, typed: string, abbreviations: boolean): { spec: OptionSpec; name: string } | string {
  const exact = table.long.get(typed);
  if (exact !== undefined) return { spec: exact, name: typed };
  if (!abbreviations || typed === '') return `unknown option --${typed}`;
  const matches = [...table.long.entries()].filter(([name]) => name.startsWith(typed));
  const specs = new Set(matches.map(([, spec]) => spec));
  if (specs.size === 0) return `unknown option --${typed}`;
  // glibc accepts an ambiguous prefix whose candidates are one option; a refused candidate wins.
  const refusedMatch = matches.find(([, spec]) => spec.refuse !== undefined);
  if (specs.size > 1) {
    if (refusedMatch !== undefined) return { spec: refusedMatch[1], name: refusedMatch[0] };
    return `ambiguous option --${typed} (${matches.map(([name]) => `--${name}`).join(', ')})`;
  }
  return { spec: matches[0][1], name: matches[0][0] };
}
