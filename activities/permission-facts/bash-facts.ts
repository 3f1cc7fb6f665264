/**
 * The Bash command line as facts (issue 17 §1): tree-sitter-bash's syntax tree reduced to every
 * simple command anywhere in it, after quote removal, with wrappers unwrapped, program paths
 * reduced to names, redirect targets and path operands resolved where the command will run.
 * The workflow's pure rule engine (common/bash-permissions.ts) decides on these facts.
 *
 * Fail closed: a node type this walker does not model, a parse error, or a construct that runs code
 * the facts cannot show (a command or process substitution, `eval` of a run-time string, a
 * function definition, an arithmetic context that evaluates variables, …) is a `problem`, and a
 * problem asks. Deny rules still see every simple command that was found.
 *
 * Activity-side only: the WASM grammar loads asynchronously, and paths are resolved on the host.
 */
import path from 'node:path';
import { Language, type Node, Parser } from 'web-tree-sitter';
import { type ArgvPath, classifyArgv } from '../../common/bash-read-only';
import type { BashCommandFact, BashFacts, PathAccess, PathFact } from '../../common/permission-facts';
import { discoverGitRepository, type GitRepository } from './git-repository';
import { expandGlob, findUnescaped, hasGlob, MAX_GLOB_MATCHES, unescapePattern } from './glob';

export interface BashFactsContext {
  /** The directory the command starts in, absolute. */
  cwd: string;
  /** `~` expands to this. */
  homeDir: string;
  /** Resolves a path as the command will see it (`literal` relative to `base`). */
  resolve(literal: string, base: string): Promise<PathFact>;
}

// ---- the parser (loaded once per process) ----

let parserPromise: Promise<Parser> | undefined;

/** tree-sitter with the Bash grammar; the WASM modules load on the first call only. */
export function loadBashParser(): Promise<Parser> {
  parserPromise ??= (async () => {
    await Parser.init();
    const language = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
    const parser = new Parser();
    parser.setLanguage(language);
    return parser;
  })().catch((error: unknown) => {
    parserPromise = undefined;
    throw error;
  });
  return parserPromise;
}

// ---- words ----

/** Stands for an expansion inside a word's pattern: NUL cannot occur in a shell word. */
const MARK = '\u0000';

/** One word after brace and tilde expansion. */
interface Word {
  /** The word's value after quote removal; as written when `kind` is not 'static'. */
  value: string;
  /** Unknown before the command runs (expansion or glob), or produced by brace expansion. */
  dynamic: boolean;
  kind: 'static' | 'glob' | 'expansion';
  /** The word with quoted characters backslash-escaped (glob and static words). */
  pattern: string;
  raw: string;
}

type Piece = { text: string; quoted: boolean } | { expansion: string };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_BRACE_WORDS = 256;

function escapeAll(text: string): string {
  let out = '';
  for (const char of text) out += `\\${char}`;
  return out;
}

/** Bash brace expansion of an escaped pattern (`{a,b}`, `{1..3}`, `{a..e..2}`); undefined when too large. */
export function expandBraces(pattern: string): string[] | undefined {
  const results: string[] = [];
  const visit = (current: string, depth: number): boolean => {
    if (depth > 16) return false;
    let start = findUnescaped(current, '{');
    while (start >= 0) {
      const alternatives = braceAt(current, start);
      if (alternatives) {
        const [items, end] = alternatives;
        for (const item of items) {
          if (!visit(current.slice(0, start) + item + current.slice(end + 1), depth + 1)) return false;
        }
        return true;
      }
      start = findUnescaped(current, '{', start + 1);
    }
    results.push(current);
    return results.length <= MAX_BRACE_WORDS;
  };
  try {
    return visit(pattern, 0) ? results : undefined;
  } catch (error) {
    if (error instanceof TooManyWords) return undefined;
    throw error;
  }
}

/** A sequence (`{1..100000}`) longer than MAX_BRACE_WORDS. */
class TooManyWords extends Error {}

/** The alternatives of a brace expression starting at `start`, and the index of its `}`. */
function braceAt(pattern: string, start: number): [string[], number] | undefined {
  let depth = 0;
  const commas: number[] = [];
  for (let index = start; index < pattern.length; index++) {
    const char = pattern[index];
    if (char === '\\') {
      index++;
      continue;
    }
    if (char === '{') depth++;
    else if (char === '}') {
      depth--;
      if (depth === 0) {
        const inner = pattern.slice(start + 1, index);
        if (commas.length > 0) {
          const items: string[] = [];
          let from = start + 1;
          for (const comma of commas) {
            items.push(pattern.slice(from, comma));
            from = comma + 1;
          }
          items.push(pattern.slice(from, index));
          return [items, index];
        }
        const sequence = braceSequence(inner);
        return sequence ? [sequence, index] : undefined;
      }
    } else if (char === ',' && depth === 1) commas.push(index);
  }
  return undefined;
}

function braceSequence(inner: string): string[] | undefined {
  const numeric = /^([-+]?\d+)\.\.([-+]?\d+)(?:\.\.([-+]?\d+))?$/.exec(inner);
  const match = numeric ?? /^([A-Za-z])\.\.([A-Za-z])(?:\.\.([-+]?\d+))?$/.exec(inner);
  if (!match) return undefined;
  const [from, to] = numeric ? [Number(match[1]), Number(match[2])] : [match[1].charCodeAt(0), match[2].charCodeAt(0)];
  const step = Math.abs(Number(match[3] ?? 1)) || 1;
  const width = numeric && (/^[-+]?0\d/.test(match[1]) || /^[-+]?0\d/.test(match[2])) ? Math.max(match[1].length, match[2].length) : 0;
  if (Math.abs(to - from) / step > MAX_BRACE_WORDS) throw new TooManyWords();
  const items: string[] = [];
  for (let value = from; from <= to ? value <= to : value >= to; value += from <= to ? step : -step) {
    const text = String(Math.abs(value)).padStart(width - (value < 0 ? 1 : 0), '0');
    items.push(!numeric ? escapeAll(String.fromCharCode(value)) : value < 0 ? `-${text}` : text);
  }
  return items;
}

/** `$'…'`'s one-letter escapes; `\\`, `\'`, `\"` and `\?` are the character itself. */
const ANSI_C_ESCAPES: Record<string, string> = { a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** Decodes the inside of `$'…'`. */
export function decodeAnsiC(inner: string): string {
  let out = '';
  for (let index = 0; index < inner.length; index++) {
    const char = inner[index];
    if (char !== '\\' || index + 1 >= inner.length) {
      out += char;
      continue;
    }
    const next = inner[++index];
    if (Object.hasOwn(ANSI_C_ESCAPES, next)) out += ANSI_C_ESCAPES[next];
    else if ('\\\'"?'.includes(next)) out += next;
    else if (/[0-7]/.test(next)) {
      const digits = /^[0-7]{1,3}/.exec(inner.slice(index))![0];
      out += String.fromCharCode(parseInt(digits, 8) & 0xff);
      index += digits.length - 1;
    } else if (next === 'x' && /[0-9a-fA-F]/.test(inner[index + 1] ?? '')) {
      const digits = /^[0-9a-fA-F]{1,2}/.exec(inner.slice(index + 1))![0];
      out += String.fromCharCode(parseInt(digits, 16));
      index += digits.length;
    } else if ((next === 'u' || next === 'U') && /[0-9a-fA-F]/.test(inner[index + 1] ?? '')) {
      const digits = new RegExp(`^[0-9a-fA-F]{1,${next === 'u' ? 4 : 8}}`).exec(inner.slice(index + 1))![0];
      const code = parseInt(digits, 16);
      out += code <= 0x10ffff ? String.fromCodePoint(code) : '';
      index += digits.length;
    } else if (next === 'c' && index + 1 < inner.length) {
      out += String.fromCharCode(inner[++index].toUpperCase().charCodeAt(0) ^ 0x40);
    } else out += `\\${next}`;
  }
  return out;
}

/** Decodes a double-quoted string's literal part: `\` escapes only `$`, `` ` ``, `"`, `\` and newline. */
function decodeDoubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_match, char: string) => (char === '\n' ? '' : char));
}

// ---- what the walker knows about the shell ----

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'yash', 'posh', 'fish', 'csh', 'tcsh', 'rbash']);
/** Programs that read a program (or shell commands) from standard input when given no script. */
const INTERPRETERS = new Set([
  ...SHELLS,
  ...['python', 'python2', 'python3', 'node', 'nodejs', 'deno', 'bun', 'perl', 'ruby', 'php', 'lua', 'luajit', 'tclsh', 'wish', 'expect', 'osascript'],
  ...['pwsh', 'powershell', 'R', 'Rscript', 'irb', 'sqlite3', 'psql', 'mysql', 'gdb', 'jshell', 'scala', 'ghci', 'julia'],
  ...['ed', 'ex', 'vi', 'vim', 'nvim', 'ssh', 'sudo', 'su', 'at', 'batch', 'crontab'],
]);
const isInterpreter = (program: string) => INTERPRETERS.has(program) || /^python\d+(\.\d+)?$/.test(program);

/** Directories whose programs are the system's: `/bin/rm` is `rm`. */
const SYSTEM_BIN = new Set(['/bin', '/usr/bin', '/sbin', '/usr/sbin', '/usr/local/bin', '/usr/local/sbin']);

/** Environment variables a command may be given without changing what code runs. */
const SAFE_ENV =
  /^(LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR|FORCE_COLOR|CLICOLOR|CLICOLOR_FORCE|COLUMNS|LINES|TERM|CI|DEBUG|NODE_ENV|RUST_BACKTRACE|RUST_LOG|PYTHONUNBUFFERED|PYTHONDONTWRITEBYTECODE|PYTHONHASHSEED|TIME_STYLE|QUOTING_STYLE|GREP_COLOR|GREP_COLORS|LS_COLORS|NPM_CONFIG_COLOR|TIMEFORMAT|HISTTIMEFORMAT)$/;
/**
 * Shell variables a plain assignment (`x=1; …`, `declare x=1`, `for x in …`, `read x`) may set as
 * data: an allow-list, since the names Bash gives a meaning (`BASH_CMDS`, `BASH_ENV`, `PS4`,
 * `PROMPT_COMMAND`, `IFS`, `PATH`, `GLOBIGNORE`, …) and the ones programs read from an environment
 * variable that may already be exported (`PAGER`, `EDITOR`, `LESSOPEN`, `GIT_*`, `LD_*`, …) are
 * many and open-ended. Bash's own variables are all upper case but `histchars` and `auto_resume`;
 * the lower-case `*_proxy` variables steer programs' network access.
 */
export function isDataVariable(name: string): boolean {
  if (SAFE_ENV.test(name)) return true;
  if (!/^[a-z_][a-z0-9_]*$/.test(name) || /^_+$/.test(name)) return false;
  return !/^(histchars|auto_resume|(http|https|ftp|all|no|socks)_proxy)$/.test(name);
}

/** Bash's reserved words: never a program's name. */
const RESERVED = new Set([
  ...['{', '}', '!', '(', ')', '[[', ']]'],
  ...['then', 'else', 'elif', 'fi', 'do', 'done', 'esac', 'in', 'if', 'while', 'until', 'for', 'case', 'function', 'select'],
]);

/** Builtins and keywords that change the shell or run code the facts cannot show. */
const PROBLEM_PROGRAMS: Record<string, string> = {
  source: 'source runs a script the permission check cannot see',
  '.': '. runs a script the permission check cannot see',
  trap: 'trap sets commands to run later',
  alias: 'alias changes what later words run',
  enable: 'enable loads or switches shell builtins',
  shopt: 'shopt changes how the shell parses and expands later commands',
  fc: 'fc re-runs commands from the history',
  bind: 'bind can run commands',
  coproc: 'coproc starts a background coprocess (not modelled)',
  let: 'let evaluates arithmetic, which can run commands through array subscripts',
  ...Object.fromEntries(['sudo', 'doas', 'pkexec', 'run0'].map((program) => [program, `${program} runs a command as another user (escalation)`])),
  su: 'su runs a shell as another user (escalation)',
  popd: 'popd changes to a directory the check cannot follow',
  select: 'select is not modelled',
};

/** Builtins whose operands are variable names: a subscript there is evaluated as arithmetic. */
const NAME_TAKING = new Set(['read', 'unset', 'mapfile', 'readarray', 'getopts', 'wait', 'declare', 'typeset', 'local', 'export', 'readonly', 'printf']);
/** Builtins whose words are assignments or names (tree-sitter parses them as a declaration_command). */
const DECLARATION_BUILTINS = new Set(['declare', 'typeset', 'local', 'export', 'readonly', 'unset']);

// ---- the walk ----

interface Redirect {
  access: PathAccess;
  word: Word;
  op: string;
}

interface Scope {
  /** Every directory the next command may run in (a `cd` adds one; `cd` may fail). */
  cwds: string[];
  redirects: Redirect[];
  nested: boolean;
  depth: number;
}

interface PendingCommand {
  words: Word[];
  cwds: string[];
  nested: boolean;
  wrappers: string[];
  /** Set when the walker knows better than the argv classifier (xargs' input, a program by path, …). */
  notReadOnly?: string;
  /** Decided here (test commands, assignments): skip classifyArgv. */
  verdict?: { readOnly: boolean; reason: string };
  /** The redirects that apply to it (its own and those of every enclosing statement). */
  redirects: Redirect[];
}

const SEPARATORS = new Set([';', '&', '&&', '||', '|', '|&', '\n', ';;', ';&', ';;&']);
/** The tokens between a list's or a compound statement's statements. */
const STATEMENT_TOKENS = new Set([...SEPARATORS, '(', ')', '{', '}', 'if', 'then', 'fi', 'elif', 'else', 'do', 'done', 'while', 'until', '!']);
/** The statements inside a node the walker does not model: still walked, for the deny rules. */
const INNER_STATEMENTS = new Set([
  ...['command', 'redirected_statement', 'pipeline', 'list', 'subshell', 'compound_statement'],
  ...['if_statement', 'while_statement', 'for_statement', 'ERROR'],
]);

/** Operands that make arithmetic evaluate a variable (or run a command). */
const ARITHMETIC_OPERANDS = new Set([
  'variable_name',
  'subscript',
  'simple_expansion',
  'expansion',
  'command_substitution',
  'word',
  'string',
  'raw_string',
  'concatenation',
]);

class Walker {
  readonly problems: string[] = [];
  readonly commands: PendingCommand[] = [];

  constructor(
    private readonly parser: Parser,
    private readonly homeDir: string,
  ) {}

  problem(text: string): void {
    if (!this.problems.includes(text)) this.problems.push(text);
  }

  /** Records a command found in `scope`, in the directories it may run in now. */
  private record(words: Word[], scope: Scope, extra: Partial<PendingCommand> = {}): void {
    this.commands.push({ words, cwds: [...scope.cwds], nested: scope.nested, wrappers: [], redirects: scope.redirects, ...extra });
  }

  /** Walks a string a command runs as shell code (`bash -c`, `eval`, `watch`), under the command's redirects. */
  private walkNested(source: string, scope: Scope): void {
    this.parseAndWalk(source, { cwds: [...scope.cwds], redirects: scope.redirects, nested: true, depth: scope.depth + 1 });
  }

  /** Parses a string (the top-level line or a `bash -c` / `eval` string) and walks it. */
  parseAndWalk(source: string, scope: Scope): void {
    if (scope.depth > 8) {
      this.problem('commands nested too deeply to check');
      return;
    }
    const tree = this.parseJoined(source);
    if (!tree) {
      this.problem('could not parse the command');
      return;
    }
    try {
      if (tree.rootNode.hasError)
        this.problem(`could not parse the command${scope.depth > 0 ? ' string it runs' : ''} (a syntax error or a construct the parser does not know)`);
      this.statement(tree.rootNode, scope);
    } finally {
      tree.delete();
    }
  }

  /**
   * Parses with line continuations removed where Bash removes them: tree-sitter treats `\⏎` as
   * white space, but Bash joins the words (`r\⏎m` is `rm`).
   */
  private parseJoined(source: string) {
    let text = source;
    for (let attempt = 0; attempt < 4; attempt++) {
      const tree = this.parser.parse(text);
      if (!tree) return null;
      const cut: number[] = [];
      const continuation = /\\\n/g;
      let match: RegExpExecArray | null;
      while ((match = continuation.exec(text))) {
        let backslashes = 0;
        for (let index = match.index; index >= 0 && text[index] === '\\'; index--) backslashes++;
        if (backslashes % 2 === 0) continue;
        if (this.continuationRemoved(tree.rootNode, match.index)) cut.push(match.index);
      }
      if (cut.length === 0) return tree;
      tree.delete();
      for (const index of cut.reverse()) text = text.slice(0, index) + text.slice(index + 2);
    }
    return this.parser.parse(text);
  }

  private continuationRemoved(root: Node, index: number): boolean {
    let node: Node | null = root.descendantForIndex(index, index + 1);
    while (node) {
      if (['raw_string', 'ansi_c_string', 'comment', 'heredoc_body', 'heredoc_content'].includes(node.type)) return false;
      if (node.type === 'command_substitution' || node.type === 'process_substitution') return true;
      node = node.parent;
    }
    return true;
  }

  // -- statements --

  statement(node: Node, scope: Scope): void {
    switch (node.type) {
      case 'program':
      case 'list':
        for (const child of node.children) if (child) this.childStatement(child, scope);
        return;
      case 'pipeline':
        for (const child of node.children) {
          if (child?.isNamed) this.statement(child, node.namedChildCount > 1 ? this.subscope(scope) : scope);
          else if (child && !SEPARATORS.has(child.type)) this.unknown(child);
        }
        return;
      case 'subshell': {
        // One scope for the whole subshell: `(cd secrets; cat key)` reads secrets/key.
        const inner = this.subscope(scope);
        for (const child of node.namedChildren) if (child) this.statement(child, inner);
        return;
      }
      case 'compound_statement':
      case 'negated_command':
      case 'if_statement':
      case 'elif_clause':
      case 'else_clause':
      case 'do_group':
      case 'while_statement':
        if (node.type === 'compound_statement' && node.child(0)?.type === '((') this.arithmetic(node, '(( … ))');
        else for (const child of node.namedChildren) if (child) this.statement(child, scope);
        return;
      case 'redirected_statement':
        this.redirected(node, scope);
        return;
      case 'command':
        this.command(node, scope);
        return;
      case 'declaration_command':
      case 'unset_command':
        this.declaration(node, scope);
        return;
      case 'variable_assignment':
        this.assignment(node, scope, 'statement');
        return;
      case 'variable_assignments':
        for (const child of node.namedChildren) if (child) this.assignment(child, scope, 'statement');
        return;
      case 'for_statement': {
        if (node.child(0)?.type === 'select') this.problem(PROBLEM_PROGRAMS.select);
        const variable = node.childForFieldName('variable');
        if (variable && !isDataVariable(variable.text))
          this.problem(`the loop assigns ${variable.text}, which is not known to be plain data (it may change what later commands run)`);
        for (const value of node.childrenForFieldName('value')) if (value) this.word(value, scope);
        const body = node.childForFieldName('body');
        if (body) this.statement(body, scope);
        return;
      }
      case 'c_style_for_statement':
        for (const part of ['initializer', 'condition', 'update'].flatMap((field) => node.childrenForFieldName(field)))
          if (part) this.arithmetic(part, 'for (( … ))');
        for (const body of node.childrenForFieldName('body')) if (body) this.statement(body, scope);
        return;
      case 'case_statement': {
        const value = node.childForFieldName('value');
        if (value) this.word(value, scope);
        for (const item of node.namedChildren) if (item && item.type === 'case_item') this.caseItem(item, scope);
        return;
      }
      case 'function_definition': {
        const name = node.childForFieldName('name')?.text ?? '';
        this.problem(`defines a shell function${name ? ` (${name})` : ''}, which changes what later words run`);
        const body = node.childForFieldName('body');
        if (body) this.statement(body, this.subscope(scope));
        return;
      }
      case 'test_command':
        this.testCommand(node, scope);
        return;
      case 'comment':
        return;
      default:
        this.unknown(node, scope);
    }
  }

  private childStatement(child: Node, scope: Scope): void {
    if (child.isNamed) this.statement(child, scope);
    else if (!STATEMENT_TOKENS.has(child.type)) this.unknown(child);
  }

  /** A node we do not model: a problem; commands inside are still listed for the deny rules. */
  private unknown(node: Node, scope?: Scope): void {
    if (node.type === 'ERROR' || node.isMissing) this.problem('could not parse the command (a syntax error or a construct the parser does not know)');
    else this.problem(`unsupported shell syntax: ${node.isNamed ? node.type : JSON.stringify(node.type)}`);
    if (!scope) return;
    for (const child of node.namedChildren) {
      if (child?.type === 'command_substitution' || child?.type === 'process_substitution') this.substitution(child, scope);
      else if (child && INNER_STATEMENTS.has(child.type)) this.statement(child, scope);
    }
  }

  /** A scope whose `cd`s do not reach the commands after it (a pipeline's part, a subshell). */
  private subscope(scope: Scope): Scope {
    return { ...scope, cwds: [...scope.cwds] };
  }

  private caseItem(item: Node, scope: Scope): void {
    for (const [child, field] of withFields(item)) {
      if (field === 'value') this.word(child, scope);
      else if (child.isNamed) this.statement(child, scope);
    }
  }

  private redirected(node: Node, scope: Scope): void {
    const redirects: Redirect[] = [];
    const continuations: Node[] = [];
    let feedsStdin = false;
    const handle = (redirect: Node) => {
      if (redirect.type === 'file_redirect') {
        const found = this.fileRedirect(redirect, scope);
        if (found) redirects.push(found);
      } else if (redirect.type === 'heredoc_redirect') {
        feedsStdin = true;
        for (const [child, field] of withFields(redirect)) {
          if (child.type === 'heredoc_body') this.word(child, scope);
          else if (field === 'redirect') handle(child);
          else if (child.isNamed && !['heredoc_start', 'heredoc_end', 'heredoc_content'].includes(child.type)) continuations.push(child);
          else if (!child.isNamed && !['<<', '<<-', '&&', '||', '|', '|&', ';'].includes(child.type)) this.unknown(child);
        }
      } else if (redirect.type === 'herestring_redirect') {
        feedsStdin = true;
        for (const child of redirect.namedChildren) if (child && child.type !== 'file_descriptor') this.word(child, scope);
      } else this.unknown(redirect, scope);
    };
    const fields = node.childrenForFieldName('redirect');
    for (const redirect of fields) if (redirect) handle(redirect);
    for (const child of node.namedChildren) if (child?.type === 'herestring_redirect' && !fields.some((r) => r?.id === child.id)) handle(child);
    const body = node.childForFieldName('body');
    const inner: Scope = { ...scope, redirects: [...scope.redirects, ...redirects] };
    const before = this.commands.length;
    if (body) this.statement(body, inner);
    else if (redirects.length > 0) this.record([], inner, { verdict: { readOnly: true, reason: 'only redirects' } });
    // `exec` with redirects only changes the shell's own descriptors for everything after it.
    const first = this.commands.at(before);
    if (body?.type === 'command' && first?.words.length === 1 && first.words[0].value === 'exec')
      this.problem('exec with redirects changes where every later command reads and writes');
    if (feedsStdin) this.checkStdinFeeds(before);
    for (const child of continuations) this.statement(child, this.subscope(scope));
  }

  private fileRedirect(node: Node, scope: Scope): Redirect | undefined {
    let op = '';
    let destination: Node | null = null;
    for (const [child, field] of withFields(node)) {
      if (field === 'destination') destination = child;
      else if (field === 'descriptor') continue;
      else if (!child.isNamed) op = child.type;
      else this.unknown(child, scope);
    }
    if (op === '>&-' || op === '<&-') return undefined;
    if (!destination) {
      this.problem(`unsupported redirect: ${node.text}`);
      return undefined;
    }
    const word = this.wordsOf(destination, scope);
    if (word.length !== 1) {
      this.problem(`a redirect to ${destination.text} expands to several words`);
      return undefined;
    }
    const target = word[0];
    if ((op === '>&' || op === '<&') && target.kind === 'static' && /^(\d+|-)$/.test(target.value)) return undefined;
    if (destination.type === 'process_substitution') return undefined;
    const access: PathAccess = op === '<' || op === '<&' ? 'read' : 'write';
    if (target.kind === 'static') {
      const value = target.value;
      if (/^\/dev\/(tcp|udp)\//.test(value)) this.problem(`${op} ${value} opens a network connection`);
      if (['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/stdin', '/dev/fd/0', '/dev/fd/1', '/dev/fd/2'].includes(value)) return undefined;
    } else {
      this.problem(`the redirect target ${target.raw} is only known when the command runs`);
    }
    return { access, word: target, op };
  }

  // -- simple commands --

  private command(node: Node, scope: Scope): void {
    const assignments: Node[] = [];
    let name: Node | null = null;
    const args: Node[] = [];
    const redirects: Redirect[] = [];
    let feedsStdin = false;
    for (const [child, field] of withFields(node)) {
      if (field === 'name') name = child;
      else if (field === 'argument') args.push(child);
      else if (field === 'redirect') {
        if (child.type === 'file_redirect') {
          const found = this.fileRedirect(child, scope);
          if (found) redirects.push(found);
        } else if (child.type === 'herestring_redirect') {
          for (const part of child.namedChildren) if (part && part.type !== 'file_descriptor') this.word(part, scope);
          feedsStdin = true;
        } else this.unknown(child, scope);
      } else if (child.type === 'variable_assignment') assignments.push(child);
      else if (child.isNamed) this.unknown(child, scope);
    }
    for (const assignment of assignments) this.assignment(assignment, scope, 'prefix');
    const commandScope = redirects.length > 0 ? { ...scope, redirects: [...scope.redirects, ...redirects] } : scope;
    if (!name) {
      if (commandScope.redirects.length > 0) this.record([], commandScope, { verdict: { readOnly: true, reason: 'only assignments' } });
      return;
    }
    const words = [...this.wordsOf(name, scope), ...args.flatMap((arg) => this.wordsOf(arg, scope))];
    const before = this.commands.length;
    this.simple(words, commandScope, { nested: scope.nested, wrappers: [] });
    if (feedsStdin) this.checkStdinFeeds(before);
  }

  /** A here-document or here-string given to a shell or interpreter is code the check cannot see. */
  private checkStdinFeeds(from: number): void {
    for (const pending of this.commands.slice(from)) {
      const program = pending.words[0]?.value ?? '';
      if (pending.words.length > 0 && isInterpreter(path.posix.basename(program)))
        this.problem(`a here-document or here-string feeds ${program}, which runs it as code`);
    }
  }

  /** One simple command's words: unwraps wrappers, follows `cd`, records the command. */
  private simple(words: Word[], scope: Scope, how: { nested: boolean; wrappers: string[]; notReadOnly?: string }): void {
    if (words.length === 0) return;
    const first = words[0];
    if (first.kind !== 'static') {
      this.problem(`the program's name ${first.raw} is only known when the command runs`);
      this.record(words, scope, how);
      return;
    }
    const program = programName(first.value);
    if (RESERVED.has(program)) {
      // tree-sitter took a reserved word for a command name (`! { rm x; }`, `time { … }`): Bash
      // may read the line differently, so this asks; the words after it are still a command for
      // the deny rules.
      this.problem(`the reserved word ${program} stands where a command name is expected, which the check does not model`);
      this.simple(words.slice(1), scope, how);
      return;
    }
    if (Object.hasOwn(PROBLEM_PROGRAMS, program)) this.problem(PROBLEM_PROGRAMS[program]);
    const values = words.map((word) => (word.kind === 'static' ? word.value : undefined));

    // Wrappers: the command they run is the one that matters.
    const unwrapped = unwrap(program, values);
    if (unwrapped) {
      if (unwrapped.problem) this.problem(unwrapped.problem);
      for (const assignment of unwrapped.assignments ?? []) this.environmentVariable(assignment.slice(0, assignment.indexOf('=')));
      if (unwrapped.start !== undefined && unwrapped.start < words.length) {
        this.simple(words.slice(unwrapped.start), scope, {
          nested: how.nested || !!unwrapped.nested,
          wrappers: [...how.wrappers, program],
          notReadOnly: unwrapped.notReadOnly ?? how.notReadOnly,
        });
        return;
      }
    }

    // Shells running a string, eval.
    if (SHELLS.has(program)) {
      const script = shellScript(values);
      if (script.kind === 'string') {
        const word = words[script.index];
        if (word.kind !== 'static') this.problem(`${program} -c runs a string that is only known when the command runs`);
        else this.walkNested(word.value, scope);
      } else if (script.kind === 'stdin') this.problem(`${program} runs commands from its standard input, which the check cannot see`);
      else if (script.kind === 'unknown') this.problem(`${program}: options the check does not model`);
      this.record(words, scope, how);
      return;
    }
    if (program === 'eval') {
      this.walkJoined(program, words.slice(1), scope);
      this.record(words, scope, how);
      return;
    }
    if (program === 'find') {
      for (const exec of findExecs(values)) {
        const inner = words.slice(exec.start, exec.end);
        if (inner.length > 0)
          this.simple(inner, scope, { nested: true, wrappers: [...how.wrappers, 'find'], notReadOnly: `runs for each file find lists (${exec.primary})` });
      }
    }
    if (program === 'watch') {
      const index = watchCommand(values);
      if (index === undefined) this.problem('watch: options the check does not model');
      else this.walkJoined(program, words.slice(index), scope);
    }

    if (program === 'exec' && words.length === 1 && scope.redirects.length === 0) this.problem('exec without a command is not modelled');
    if (program === 'hash' && values.some((value) => value?.startsWith('-') && value.includes('p'))) this.problem('hash -p makes a name run another program');
    if ((program === 'complete' || program === 'compgen') && values.some((value) => value === '-C' || value === '-F'))
      this.problem(`${program} -C/-F runs commands`);
    if ((program === 'mapfile' || program === 'readarray') && values.some((value) => value?.startsWith('-') && value.includes('C')))
      this.problem(`${program} -C runs a callback`);
    if (program === 'set' && values.slice(1).some((value) => value === 'keyword' || (value !== undefined && /^[-+][a-zA-Z]*k/.test(value))))
      this.problem('set -k makes later words into environment assignments');
    if ((program === 'test' || program === '[') && words.slice(1).some((word) => word.value === '-v' || word.value === '-R'))
      this.problem(`${program} -v evaluates an array subscript, which can run commands`);
    if (NAME_TAKING.has(program)) this.nameWords(program, words);

    const control = this.controlVerdict(words);
    this.record(words, scope, { ...how, verdict: control });
    if (program === 'cd' || program === 'pushd') this.changeDirectory(words, scope, program);
  }

  /** `eval` and `watch` run their words joined with spaces as a shell string. */
  private walkJoined(program: string, rest: Word[], scope: Scope): void {
    if (rest.some((word) => word.kind !== 'static')) this.problem(`${program} runs a string that is only known when the command runs`);
    else if (rest.length > 0) this.walkNested(rest.map((word) => word.value).join(' '), scope);
  }

  /** The variable names a name-taking builtin assigns (`read x`, `printf -v x`, `getopts o x`, `declare x=1`, …). */
  private nameWords(program: string, words: Word[]): void {
    if (DECLARATION_BUILTINS.has(program)) {
      this.declarationWords(program, words.slice(1));
      return;
    }
    const values = words.map((word) => word.value);
    const candidates =
      program === 'printf' || program === 'wait'
        ? printfVariable(values, program === 'printf' ? '-v' : '-p').map((value) => ({ value, dynamic: /[$`]/.test(value) }))
        : words.slice(1).map((word) => ({ value: word.value, dynamic: word.kind !== 'static' }));
    for (const candidate of candidates) {
      if (candidate.dynamic)
        this.problem(
          `${program} ${candidate.value}: a word only known when the command runs, which ${program} may read as a variable's name (an array subscript can run commands)`,
        );
      else if (candidate.value.includes('['))
        this.problem(`${program} assigns to an array element, whose subscript Bash evaluates as arithmetic (it can run commands)`);
      else if (NAME.test(candidate.value) && !isDataVariable(candidate.value))
        this.problem(`${program} may set ${candidate.value}, which is not known to be plain data (it may change what later commands run)`);
    }
  }

  /** Builtins that only steer the script: decided here (the argv classifier knows programs). */
  private controlVerdict(words: Word[]): { readOnly: boolean; reason: string } | undefined {
    const [{ value: program }, ...rest] = words;
    if ([':', 'break', 'continue', 'exit', 'return', 'shift'].includes(program)) return { readOnly: true, reason: `${program} only steers the script` };
    const shellOption = (word: Word) => word.kind === 'static' && /^([-+][euxvo]+|pipefail|errexit|nounset|xtrace|verbose)$/.test(word.value);
    if (program === 'set' && rest.length > 0 && rest.every(shellOption)) return { readOnly: true, reason: 'set only changes shell options' };
    return undefined;
  }

  private changeDirectory(words: Word[], scope: Scope, program: string): void {
    const operands = words.slice(1).filter((word, index) => !(word.kind === 'static' && /^-[LPe@]+$/.test(word.value) && index === 0));
    if (operands.length > 1) {
      this.problem(`${program} with several operands is not modelled`);
      return;
    }
    const target = operands[0];
    let directory: string;
    if (!target) directory = this.homeDir;
    else if (target.kind !== 'static' || target.value === '-' || /^[+-]\d+$/.test(target.value)) {
      this.problem(`${program} ${target.raw}: the directory is only known when the command runs, so later paths cannot be checked`);
      return;
    } else directory = target.value;
    const next = scope.cwds.map((cwd) => path.posix.resolve(cwd, directory));
    for (const candidate of next) if (!scope.cwds.includes(candidate)) scope.cwds.push(candidate);
    if (scope.cwds.length > 16) this.problem('too many directory changes to follow');
  }

  private declaration(node: Node, scope: Scope): void {
    const keyword = node.child(0)?.type ?? '';
    const words: Word[] = [{ value: keyword, dynamic: false, kind: 'static', pattern: keyword, raw: keyword }];
    const flags: string[] = [];
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type === 'variable_assignment') {
        this.assignment(child, scope, keyword === 'export' ? 'export' : 'declare');
        words.push({ value: child.text, dynamic: true, kind: 'expansion', pattern: MARK, raw: child.text });
      } else if (child.type === 'variable_name') {
        if (keyword === 'export' && !SAFE_ENV.test(child.text)) this.problem(`exports ${child.text}, which may change what later commands run`);
        words.push({ value: child.text, dynamic: false, kind: 'static', pattern: escapeAll(child.text), raw: child.text });
      } else {
        const list = this.wordsOf(child, scope);
        for (const word of list) if (word.kind === 'static' && /^[-+]/.test(word.value)) flags.push(word.value);
        words.push(...list);
      }
    }
    this.declarationWords(keyword, words.slice(1));
    if (flags.some((flag) => /^[-+][a-zA-Z]*[nix]/.test(flag) && keyword !== 'unset'))
      this.problem(`${keyword} ${flags.join(' ')} (references, integers or exports) is not modelled`);
    this.record(words, scope, { verdict: { readOnly: true, reason: `${keyword} only changes shell variables` } });
  }

  /**
   * The words of a declaration builtin (`declare`, `typeset`, `local`, `readonly`, `export`,
   * `unset`) as Bash reads them after quote removal: a word with `[` or `=(` assigns an array
   * (`declare 'a[$(cmd)]=1'`, `declare -a 'b=([$(cmd)]=1)'`), whose subscripts Bash evaluates; a
   * word only known at run time may be either; a `NAME=value` word sets NAME.
   */
  private declarationWords(keyword: string, words: Word[]): void {
    for (const word of words) {
      const name = word.value.split('=', 1)[0];
      // A `NAME=value` assignment tree-sitter parsed: checked by assignment().
      if (word.kind === 'expansion' && /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(word.raw) && !/[[]/.test(word.raw.split('=', 1)[0])) continue;
      if (word.value.includes('[') || word.value.includes('=('))
        this.problem(`${keyword} ${word.value}: ${keyword} assigns an array element, whose subscript Bash evaluates as arithmetic (it can run commands)`);
      else if (word.kind !== 'static')
        this.problem(`${keyword} ${word.raw}: a word only known when the command runs, which ${keyword} may read as an array assignment (it can run commands)`);
      else if (!/^[-+]/.test(word.value) && keyword !== 'unset' && !(keyword === 'export' ? SAFE_ENV.test(name) : isDataVariable(name)))
        this.problem(`${keyword} ${word.value}: sets ${name}, which is not known to be plain data (it may change what later commands run)`);
    }
  }

  private assignment(node: Node, scope: Scope, where: 'statement' | 'prefix' | 'declare' | 'export'): void {
    const nameNode = node.childForFieldName('name');
    const name = nameNode?.type === 'subscript' ? (nameNode.childForFieldName('name')?.text ?? '') : (nameNode?.text ?? '');
    const value = node.childForFieldName('value');
    // An array assignment is never data: Bash evaluates its subscripts as arithmetic (which can run
    // commands), and `BASH_CMDS=([cat]=/bin/rm)` makes a later name run another program.
    if (nameNode?.type === 'subscript')
      this.problem(`the assignment to ${nameNode.text} sets an array element, whose subscript Bash evaluates (it can run commands)`);
    else if (value?.type === 'array') this.problem(`${name}=(…) assigns an array, whose subscripts Bash evaluates (it can run commands)`);
    else if (!nameNode || nameNode.type !== 'variable_name') this.unknown(node, scope);
    if (where === 'prefix' || where === 'export') this.environmentVariable(name);
    else if (!isDataVariable(name)) this.problem(`sets ${name}, which is not known to be plain data (it may change what later commands run)`);
    for (const item of value?.type === 'array' ? value.namedChildren : [value]) if (item) this.word(item, scope);
  }

  private environmentVariable(name: string): void {
    if (!SAFE_ENV.test(name)) this.problem(`sets ${name} in the environment of the command, which can change what it runs`);
  }

  private testCommand(node: Node, scope: Scope): void {
    const program = node.child(0)?.type === '[' ? '[' : '[[';
    const words: Word[] = [{ value: program, dynamic: false, kind: 'static', pattern: program, raw: program }];
    const visit = (expression: Node) => {
      switch (expression.type) {
        case 'unary_expression':
        case 'binary_expression':
        case 'parenthesized_expression':
        case 'ternary_expression':
        case 'postfix_expression': {
          const operator = expression.childForFieldName('operator')?.text ?? '';
          if (operator === '-v' || operator === '-R') this.problem(`${program} ${operator} evaluates an array subscript, which can run commands`);
          if (program === '[' && (operator === '>' || operator === '<')) this.problem(`inside [ ], ${operator} is a redirect`);
          if (program === '[[' && /^-(eq|ne|lt|le|gt|ge)$/.test(operator)) {
            for (const side of [expression.childForFieldName('left'), expression.childForFieldName('right')]) {
              if (side && !isPlainNumber(side)) this.problem(`[[ … ${operator} … ]] evaluates ${side.text} as arithmetic, which can run commands`);
            }
          }
          for (let index = 0; index < expression.childCount; index++) {
            const child = expression.child(index)!;
            if (child.isNamed) visit(child);
            else words.push({ value: child.type, dynamic: false, kind: 'static', pattern: child.type, raw: child.type });
          }
          return;
        }
        case 'test_operator':
        case 'regex':
        case 'extglob_pattern':
          words.push({ value: expression.text, dynamic: false, kind: 'static', pattern: escapeAll(expression.text), raw: expression.text });
          return;
        case 'redirected_statement':
        case 'command':
          this.unknown(expression, scope);
          return;
        default:
          words.push(...this.wordsOf(expression, scope));
      }
    };
    for (const child of node.namedChildren) if (child) visit(child);
    words.push({ value: program === '[' ? ']' : ']]', dynamic: false, kind: 'static', pattern: ']', raw: ']' });
    for (const word of words)
      if (word.value === '-v' || word.value === '-R') this.problem(`${program} -v evaluates an array subscript, which can run commands`);
    this.record(words, scope, { verdict: { readOnly: true, reason: `${program} … ${program === '[' ? ']' : ']]'} only tests` } });
  }

  /** `(( … ))`, `$(( … ))`, for (( … )): evaluating a variable can run a subscript's command substitution. */
  private arithmetic(node: Node, what: string): void {
    if (node.text.startsWith('$[')) {
      this.problem('$[ … ] is arithmetic that can run commands through array subscripts');
      return;
    }
    const evaluates = (current: Node): boolean => ARITHMETIC_OPERANDS.has(current.type) || current.namedChildren.some((child) => !!child && evaluates(child));
    if (node.namedChildren.some((child) => !!child && evaluates(child)) || ['variable_name', 'word', 'subscript'].includes(node.type))
      this.problem(`${what} evaluates variables as arithmetic, which can run commands through array subscripts`);
    if (node.descendantsOfType(['command_substitution', 'process_substitution']).some(Boolean)) this.problem('a command substitution inside arithmetic');
  }

  // -- words --

  /** Walks a word-like node for what it runs (substitutions, arithmetic); discards the value. */
  word(node: Node, scope: Scope): void {
    this.pieces(node, scope);
  }

  /** A word node as the words it becomes (brace expansion may make several). */
  wordsOf(node: Node, scope: Scope): Word[] {
    const raw = node.text;
    const pieces = this.pieces(node, scope);
    const pattern = pieces.map((piece) => ('expansion' in piece ? MARK : piece.quoted ? escapeAll(piece.text) : piece.text)).join('');
    const expansion = pieces.some((piece) => 'expansion' in piece);
    const expanded = expansion ? undefined : expandBraces(pattern);
    if (!expanded) {
      if (!expansion) this.problem(`the brace expansion ${raw} makes too many words`);
      return [{ value: raw, dynamic: true, kind: 'expansion', pattern, raw }];
    }
    const braced = expanded.length !== 1 || expanded[0] !== pattern;
    return expanded.map((alternative) => {
      const tilde = this.tilde(alternative);
      if (tilde === undefined) return { value: raw, dynamic: true, kind: 'expansion', pattern: alternative, raw };
      if (hasGlob(tilde))
        return { value: braced ? unescapePattern(tilde) : raw, dynamic: true, kind: 'glob', pattern: tilde, raw: braced ? unescapePattern(tilde) : raw };
      return { value: unescapePattern(tilde), dynamic: braced, kind: 'static', pattern: tilde, raw };
    });
  }

  /** Tilde expansion at the start of a word and after `=`/`:` of an assignment-like word; undefined for `~user`. */
  private tilde(pattern: string): string | undefined {
    const home = escapeAll(this.homeDir);
    const expandAt = (text: string, at: number): string | undefined => {
      if (text[at] !== '~') return text;
      const end = findUnescaped(text, '/:', at);
      const stop = end < 0 ? text.length : end;
      if (stop !== at + 1) return undefined;
      return text.slice(0, at) + home + text.slice(at + 1);
    };
    let result = expandAt(pattern, 0);
    if (result === undefined) return undefined;
    const equals = result.indexOf('=');
    if (equals > 0 && NAME.test(result.slice(0, equals))) {
      let position = equals + 1;
      while (position < result.length) {
        const next = expandAt(result, position);
        if (next === undefined) return undefined;
        result = next;
        const colon = findUnescaped(result, ':', position);
        if (colon < 0) break;
        position = colon + 1;
      }
    }
    return result;
  }

  private pieces(node: Node, scope: Scope): Piece[] {
    switch (node.type) {
      case 'word':
      case 'number':
        return node.namedChildCount > 0 ? this.rangePieces(node, scope, false) : [{ text: node.text, quoted: false }];
      case 'brace_expression':
      case 'extglob_pattern':
      case 'regex':
      case 'test_operator':
      case 'variable_name':
      case 'special_variable_name':
      case 'file_descriptor':
        return [{ text: node.text, quoted: false }];
      case 'raw_string':
        return [{ text: node.text.slice(1, -1), quoted: true }];
      case 'ansi_c_string':
        return [{ text: decodeAnsiC(node.text.slice(2, -1)), quoted: true }];
      case 'string':
        return this.rangePieces(node, scope, true);
      case 'concatenation':
      case 'command_name':
        return this.rangePieces(node, scope, false);
      case 'heredoc_body':
        for (const child of node.namedChildren) if (child && child.type !== 'heredoc_content') this.pieces(child, scope);
        return [{ text: node.text, quoted: true }];
      // The rest are only known when the command runs: `$"…"` too, translated through the locale's message catalog.
      case 'translated_string':
      case 'array':
        for (const child of node.namedChildren) if (child) this.pieces(child, scope);
        break;
      case 'simple_expansion':
        break;
      case 'expansion':
        this.expansion(node, scope);
        break;
      case 'arithmetic_expansion':
        this.arithmetic(node, '$(( … ))');
        break;
      case 'command_substitution':
      case 'process_substitution':
        this.substitution(node, scope);
        break;
      default:
        this.unknown(node, scope);
    }
    return [{ expansion: node.text }];
  }

  /** A string's or concatenation's parts, covering the text between children. */
  private rangePieces(node: Node, scope: Scope, quoted: boolean): Piece[] {
    const pieces: Piece[] = [];
    const source = node.text;
    const base = node.startIndex;
    let start = quoted ? 1 : 0;
    const end = quoted ? source.length - 1 : source.length;
    const literal = (text: string) => {
      if (text) pieces.push({ text: quoted ? decodeDoubleQuoted(text) : text, quoted });
    };
    for (const child of node.children) {
      if (!child) continue;
      const from = child.startIndex - base;
      const to = child.endIndex - base;
      if (from < start || to > end) continue;
      literal(source.slice(start, from));
      if (child.type === 'string_content' || !child.isNamed) literal(source.slice(from, to));
      else pieces.push(...this.pieces(child, scope));
      start = to;
    }
    literal(source.slice(start, end));
    return pieces;
  }

  /** `${…}`: indirection, `@` transformations and arithmetic offsets or subscripts can run code. */
  private expansion(node: Node, scope: Scope): void {
    const text = node.text;
    if (/^\$\{!/.test(text)) this.problem(`${text} expands a variable named by another (indirection), which can run commands through array subscripts`);
    let afterColon = false;
    for (let index = 0; index < node.childCount; index++) {
      const child = node.child(index)!;
      // `${PATH:=/tmp/evil}` assigns, as `PATH=…` would: only a data variable may be set so.
      if (!child.isNamed && (child.type === '=' || child.type === ':=')) {
        const target = node.namedChildren.find((candidate) => candidate?.type === 'variable_name' || candidate?.type === 'subscript');
        const name = target?.type === 'subscript' ? target.childForFieldName('name')?.text : target?.text;
        if (name === undefined || !isDataVariable(name))
          this.problem(`${text} assigns ${name ?? 'a variable'}, which is not known to be plain data (it may change what later commands run)`);
      }
      if (!child.isNamed) {
        if (child.type === '@') this.problem(`${text} transforms a value (\${…@…}), which can run commands`);
        if (child.type === ':') afterColon = true;
        continue;
      }
      if (child.type === 'subscript') {
        const subscriptIndex = child.childForFieldName('index');
        if (subscriptIndex && !(subscriptIndex.type === 'number' || ['@', '*'].includes(subscriptIndex.text)))
          this.problem(`${text} evaluates an array subscript, which can run commands`);
        for (const substitution of child.descendantsOfType(['command_substitution', 'process_substitution']))
          if (substitution) this.substitution(substitution, scope);
        continue;
      }
      if (afterColon && child.type !== 'number') this.problem(`${text} evaluates its offset as arithmetic, which can run commands`);
      if (child.type === 'command_substitution' || child.type === 'process_substitution') this.substitution(child, scope);
      else if (child.type === 'arithmetic_expansion') this.arithmetic(child, '$(( … ))');
      else if (['expansion', 'simple_expansion', 'string', 'concatenation', 'word', 'raw_string', 'ansi_c_string', 'array'].includes(child.type))
        this.pieces(child, scope);
      else if (child.type === 'binary_expression' || child.type === 'parenthesized_expression' || child.type === 'unary_expression') {
        for (const substitution of child.descendantsOfType(['command_substitution', 'process_substitution']))
          if (substitution) this.substitution(substitution, scope);
      }
    }
    if (/@[A-Za-z]\}$/.test(text)) this.problem(`${text} transforms a value (\${…@…}), which can run commands`);
  }

  private substitution(node: Node, scope: Scope): void {
    const kind = node.type === 'process_substitution' ? 'process substitution' : 'command substitution';
    this.problem(`a ${kind} (${node.text.length > 60 ? `${node.text.slice(0, 57)}…` : node.text}) runs a command whose output the check cannot see`);
    const inner: Scope = { ...scope, cwds: [...scope.cwds], redirects: [] };
    for (const [child, field] of withFields(node)) {
      if (field === 'redirect') {
        // `$(<file)` reads the file.
        const found = child.type === 'file_redirect' ? this.fileRedirect(child, scope) : undefined;
        if (found) this.record([], inner, { redirects: [found], verdict: { readOnly: true, reason: 'reads a file into the command line' } });
      } else if (child.isNamed) this.childStatement(child, inner);
    }
  }
}

/** A node's children, each with its field name. */
function* withFields(node: Node): Generator<[Node, string | null]> {
  for (let index = 0; index < node.childCount; index++) yield [node.child(index)!, node.fieldNameForChild(index)];
}

function isPlainNumber(node: Node): boolean {
  if (node.type === 'number') return node.namedChildCount === 0;
  if (node.type === 'word') return /^-?\d+$/.test(node.text);
  if (node.type === 'simple_expansion') return /^\$[#?$!]$/.test(node.text);
  return false;
}

/** `/bin/rm` → `rm`; other paths stay as written. */
function programName(value: string): string {
  if (!value.includes('/')) return value;
  const directory = path.posix.dirname(path.posix.normalize(value));
  return SYSTEM_BIN.has(directory) ? path.posix.basename(value) : value;
}

interface Unwrapped {
  /** Index of the wrapped command's first word (undefined: none). */
  start?: number;
  problem?: string;
  assignments?: string[];
  nested?: boolean;
  notReadOnly?: string;
}

/**
 * Skips a wrapper's options. `flags`: options without a value; `valued`: options that take one
 * (attached or as the next word); long options as `--name` (valued ones also `--name=`).
 */
function skipOptions(
  values: (string | undefined)[],
  from: number,
  flags: string,
  valued: string,
  longFlags: string[] = [],
  longValued: string[] = [],
): number | undefined {
  let index = from;
  while (index < values.length) {
    const word = values[index];
    if (word === undefined) return undefined;
    if (word === '--') return index + 1;
    if (!word.startsWith('-') || word === '-') return index;
    if (word.startsWith('--')) {
      const [name] = word.split('=', 1);
      if (longFlags.includes(name) && !word.includes('=')) index++;
      else if (longValued.includes(name)) index += word.includes('=') ? 1 : 2;
      else return undefined;
      continue;
    }
    let position = 1;
    let consumed = 1;
    while (position < word.length) {
      const letter = word[position];
      if (flags.includes(letter)) position++;
      else if (valued.includes(letter)) {
        if (position === word.length - 1) consumed = 2;
        break;
      } else return undefined;
    }
    index += consumed;
  }
  return index;
}

/** The wrappers Bash users put in front of a command, and where the command starts. */
function unwrap(program: string, values: (string | undefined)[]): Unwrapped | undefined {
  const options = (from: number, ...spec: [flags: string, valued: string, longFlags?: string[], longValued?: string[]]): Unwrapped => {
    const start = skipOptions(values, from, ...spec);
    return start === undefined ? { problem: `${program}: options the check does not model` } : { start };
  };
  switch (program) {
    case 'command':
      if (values.slice(1).some((value) => value === '-v' || value === '-V' || (value?.startsWith('-') && /[vV]/.test(value)))) return undefined;
      return options(1, 'p', '');
    case 'builtin':
      return { start: 1 };
    case 'coproc':
      // `coproc NAME { …; }` or `coproc command`: the problem is reported by the caller.
      return { start: values[1] !== undefined && NAME.test(values[1]) && values[2] === '{' ? 2 : 1 };
    case 'exec':
      return options(1, 'cl', 'a');
    case 'time':
      return options(1, 'p', '');
    case 'nohup':
      return { start: values[1] === '--' ? 2 : 1 };
    case 'nice':
      return options(/^-\d+$/.test(values[1] ?? '') ? 2 : 1, '', 'n', [], ['--adjustment']);
    case 'timeout': {
      // The duration follows the options.
      const { start, problem } = options(1, 'v', 'sk', ['--preserve-status', '--foreground', '--verbose'], ['--signal', '--kill-after']);
      return start === undefined ? { problem } : { start: start + 1 };
    }
    case 'stdbuf':
      return options(1, '', 'ioe', [], ['--input', '--output', '--error']);
    case 'ionice':
      // `-p`, `-P`, `-u`: it changes running processes, and runs nothing.
      if (values.some((value) => /^(-[pPu]$|--(pid|pgid|uid))/.test(value ?? ''))) return undefined;
      return options(1, 't', 'cn', ['--ignore'], ['--class', '--classdata']);
    case 'setsid':
      return options(1, 'cfw', '', ['--ctty', '--fork', '--wait']);
    case 'env': {
      let index = 1;
      const assignments: string[] = [];
      while (index < values.length) {
        const word = values[index];
        if (word === undefined) return { problem: 'env: a word only known when the command runs', start: undefined };
        if (word === '-' || word === '-i' || word === '--ignore-environment' || word === '-0' || word === '--null') index++;
        else if (word === '-u' || word === '--unset') index += 2;
        else if (/^-u.|^--unset=/.test(word)) index++;
        else if (word === '--') index++;
        else if (word.startsWith('-')) return { problem: `env ${word} is not modelled` };
        else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) {
          assignments.push(word);
          index++;
        } else break;
      }
      return index < values.length ? { start: index, assignments } : { assignments };
    }
    case 'sudo':
    case 'doas': {
      const start = skipOptions(
        values,
        1,
        'AbEHiKklnPSsv',
        'CDghprtTUu',
        ['--preserve-env', '--login', '--shell', '--non-interactive', '--background', '--askpass', '--set-home', '--stdin'],
        ['--user', '--group', '--host', '--prompt', '--chdir', '--role', '--type', '--other-user', '--close-from', '--command-timeout'],
      );
      return start === undefined ? {} : { start };
    }
    case 'xargs': {
      if (values.some((value) => value === '-a' || value?.startsWith('--arg-file') || /^-a./.test(value ?? '')))
        return { problem: 'xargs -a reads its arguments from a file the check does not follow' };
      const start = skipOptions(
        values,
        1,
        '0prtx',
        'adEILlnPs',
        ['--null', '--no-run-if-empty', '--verbose', '--interactive', '--exit', '--open-tty', '--show-limits'],
        ['--delimiter', '--eof', '--replace', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
      );
      if (start === undefined) return { problem: 'xargs: options the check does not model' };
      if (start >= values.length) return undefined;
      return { start, nested: true, notReadOnly: 'runs with arguments read from its input (xargs), which the check cannot see' };
    }
    default:
      return undefined;
  }
}

/** Where a shell's `-c` string is, or how else it gets its commands. */
function shellScript(values: (string | undefined)[]): { kind: 'string'; index: number } | { kind: 'file' | 'stdin' | 'unknown' } {
  let command = false;
  let index = 1;
  while (index < values.length) {
    const word = values[index];
    if (word === undefined) {
      if (command) break;
      return { kind: 'unknown' };
    }
    if (word === '--' || word === '-') {
      index++;
      break;
    }
    // `-o name`, `-O name`, `--rcfile file`: an option and its value.
    if (/^[-+][oO]$|^--(rcfile|init-file)$/.test(word)) index += 2;
    else if (word.startsWith('--')) index++;
    else if (/^[-+][A-Za-z]+$/.test(word)) {
      if (word.startsWith('-') && word.includes('c')) command = true;
      if (word.startsWith('-') && word.includes('s') && !command) return { kind: 'stdin' };
      index++;
    } else break;
  }
  if (command) return index < values.length ? { kind: 'string', index } : { kind: 'unknown' };
  return index < values.length ? { kind: 'file' } : { kind: 'stdin' };
}

/** find's -exec/-execdir/-ok/-okdir commands: [start, end) in argv. */
function findExecs(values: (string | undefined)[]): { start: number; end: number; primary: string }[] {
  const found: { start: number; end: number; primary: string }[] = [];
  for (let index = 1; index < values.length; index++) {
    const primary = values[index];
    if (primary !== '-exec' && primary !== '-execdir' && primary !== '-ok' && primary !== '-okdir') continue;
    let end = index + 1;
    while (end < values.length && values[end] !== ';' && values[end] !== '+') end++;
    found.push({ start: index + 1, end, primary });
    index = end;
  }
  return found;
}

/** Where `watch`'s command starts (undefined: options not modelled). */
function watchCommand(values: (string | undefined)[]): number | undefined {
  return skipOptions(
    values,
    1,
    'bcdegptwx',
    'nq',
    ['--beep', '--color', '--no-color', '--differences', '--errexit', '--chgexit', '--precise', '--no-title', '--no-wrap', '--exec', '--no-linewrap'],
    ['--interval', '--equexit'],
  );
}

/** The variable `printf -v NAME` (or `wait -p NAME`) assigns. */
function printfVariable(values: string[], flag = '-v'): string[] {
  const names: string[] = [];
  for (let index = 1; index < values.length; index++) {
    const value = values[index];
    if (value === flag && values[index + 1] !== undefined) names.push(values[index + 1]!);
    else if (value?.startsWith(flag) && value.length > 2) names.push(value.slice(2));
    if (value === '--' || !value.startsWith('-')) break;
  }
  return names;
}

// ---- facts ----

/**
 * Programs that change files, whose operands the argv classifier does not report (it only models
 * read-only programs): their operands are paths, so an allow rule (`Bash(rm -f:*)`) still cannot
 * reach outside the working directories or into protected files. `valued`: short options taking a
 * value; `target`: the option naming a destination directory; `skipFirst`: the first operand is a
 * mode or owner; `copy`: sources are read, the last operand written.
 */
const WRITERS: Record<string, { valued: string; target?: string; reference?: string; skipFirst?: boolean; copy?: boolean }> = {
  rm: { valued: '' },
  rmdir: { valued: '' },
  unlink: { valued: '' },
  shred: { valued: 'nsu' },
  touch: { valued: 'dt', reference: 'r' },
  mkdir: { valued: 'm' },
  truncate: { valued: 's', reference: 'r' },
  tee: { valued: '' },
  chmod: { valued: '', skipFirst: true },
  chown: { valued: '', skipFirst: true },
  chgrp: { valued: '', skipFirst: true },
  mv: { valued: 'S', target: 't' },
  cp: { valued: 'S', target: 't', copy: true },
  ln: { valued: 'S', target: 't', copy: true },
  install: { valued: 'mogS', target: 't', copy: true },
  patch: { valued: 'pBDFgiorVYzd' },
};

/** The path operands of a file-changing program (see WRITERS), with how it uses them. */
export function writerPaths(argv: string[], dynamic: boolean[]): { index: number; access: PathAccess; text: string }[] {
  const spec = WRITERS[argv[0]];
  if (!spec) return [];
  const paths: { index: number; access: PathAccess; text: string }[] = [];
  const operands: number[] = [];
  let optionsEnded = false;
  let referenceGiven = false;
  for (let index = 1; index < argv.length; index++) {
    const word = argv[index];
    if (optionsEnded || dynamic[index] || !word.startsWith('-') || word === '-') {
      operands.push(index);
      continue;
    }
    if (word === '--') {
      optionsEnded = true;
      continue;
    }
    if (word.startsWith('--')) {
      const [name, value] = [word.split('=', 1)[0], word.includes('=') ? word.slice(word.indexOf('=') + 1) : undefined];
      if (name === '--target-directory' && value !== undefined) paths.push({ index, access: 'write', text: value });
      if ((name === '--reference' || name === '--output' || name === '--input') && value !== undefined) {
        paths.push({ index, access: name === '--output' ? 'write' : 'read', text: value });
        referenceGiven ||= name === '--reference';
      }
      continue;
    }
    for (let position = 1; position < word.length; position++) {
      const letter = word[position];
      const isTarget = spec.target === letter;
      const isReference = spec.reference === letter;
      if (!spec.valued.includes(letter) && !isTarget && !isReference) continue;
      const attached = word.slice(position + 1);
      const valueIndex = attached ? index : index + 1;
      const text = attached || argv[index + 1];
      if (text !== undefined && (isTarget || isReference)) paths.push({ index: valueIndex, access: isTarget ? 'write' : 'read', text });
      if (isReference) referenceGiven = true;
      if (!attached) index++;
      break;
    }
  }
  const files = spec.skipFirst && !referenceGiven ? operands.slice(1) : operands;
  const targetGiven = paths.some((entry) => entry.access === 'write');
  files.forEach((index, position) => {
    // cp/ln/install: the sources are read; the destination (the last operand, or -t DIR) is written.
    const source = spec.copy && (targetGiven || position < files.length - 1);
    paths.push({ index, access: source ? 'read' : 'write', text: argv[index] });
  });
  return paths.sort((a, b) => a.index - b.index);
}

/** The static directory a glob pattern cannot leave (`/e*\/sha*` → `/`), or undefined (`..` after a wildcard). */
export function globPrefix(pattern: string): string | undefined {
  const first = findUnescaped(pattern, '*?[');
  const slash = pattern.lastIndexOf('/', first);
  const rest = pattern.slice(first);
  if (rest.split('/').some((segment) => unescapePattern(segment) === '..')) return undefined;
  if (slash < 0) return '.';
  return unescapePattern(pattern.slice(0, slash)) || '/';
}

/**
 * The facts of a Bash command line: every simple command anywhere in it, with its paths resolved
 * where it will run. Never throws on odd input: what it cannot follow is a problem.
 */
export async function gatherBashFacts(command: string, context: BashFactsContext): Promise<BashFacts> {
  const parser = await loadBashParser();
  const walker = new Walker(parser, context.homeDir);
  // tree-sitter reads a carriage return as a space; Bash makes it part of the word.
  if (command.includes('\r')) walker.problem('a carriage return, which Bash reads as part of a word (tree-sitter as a space)');
  walker.parseAndWalk(command, { cwds: [context.cwd], redirects: [], nested: false, depth: 0 });
  const repositories = new Map<string, Promise<GitRepository>>();
  const commands = await Promise.all(walker.commands.map((pending) => finish(pending, walker, context, repositories)));
  return { problems: walker.problems, commands };
}

/**
 * The program whose exit status a command line ends with, when the line is one pipeline or one
 * command, by the grammar (`LANG=C cat log | grep x 2>/dev/null` → `grep`, `[ -f x ]` → `[`);
 * undefined for anything else (a list, where an earlier command's status may be the one seen; a
 * parse error; a name only known at run time). For the exit code's meaning
 * (common/tools/bash.ts `interpretExitCode`), not a permission.
 */
export async function finalProgram(command: string): Promise<string | undefined> {
  const parser = await loadBashParser();
  const tree = parser.parse(command);
  if (!tree) return undefined;
  try {
    if (tree.rootNode.hasError) return undefined;
    const statements = tree.rootNode.namedChildren.filter((node): node is Node => node !== null && node.type !== 'comment');
    let node: Node | null | undefined = statements.length === 1 ? statements[0] : undefined;
    for (let depth = 0; node && depth < 8; depth++) {
      if (node.type === 'redirected_statement') node = node.childForFieldName('body');
      else if (node.type === 'pipeline') node = node.namedChildren.filter((child): child is Node => child !== null && child.type !== 'comment').at(-1);
      else break;
    }
    if (node?.type === 'test_command') return node.text.startsWith('[[') ? '[[' : '[';
    if (node?.type !== 'command') return undefined;
    const name = node.childForFieldName('name');
    const word = name?.namedChildCount === 1 ? name.namedChildren[0] : undefined;
    if (word?.type !== 'word' || /[\\$`'"]/.test(word.text)) return undefined;
    return path.posix.basename(word.text);
  } finally {
    tree.delete();
  }
}

/** Where a git command starts looking for its repository (`-C dir` moves it); undefined when it names one (`--git-dir`, `--work-tree`, `--bare`). */
function gitStart(argv: string[], dynamicWords: boolean[], cwd: string): string | undefined {
  let start = cwd;
  for (let index = 1; index < argv.length && argv[index].startsWith('-'); index++) {
    const word = argv[index];
    if (dynamicWords[index] || /^--(git-dir|work-tree|bare)(=|$)/.test(word)) return undefined;
    if (word === '-C' || word === '-c' || word === '--config-env' || word === '--namespace' || word === '--exec-path' || word === '--super-prefix') {
      if (word === '-C') start = path.posix.resolve(start, argv[index + 1] ?? '.');
      index++;
    } else if (word.startsWith('-C')) start = path.posix.resolve(start, word.slice(2));
  }
  return start;
}

/** A path a command uses, before it is resolved: a word's text, or a glob to expand where the command runs. */
interface PathRequest {
  access: PathAccess;
  literal: string;
  /** An escaped glob pattern: expanded from each directory the command may run in. */
  glob?: string;
  /** Relative to the git repository's top level (`rev:path`). */
  fromTop?: boolean;
  recursive?: boolean;
  history?: boolean;
}

async function finish(
  pending: PendingCommand,
  walker: Walker,
  context: BashFactsContext,
  repositories: Map<string, Promise<GitRepository>>,
): Promise<BashCommandFact> {
  const words = [...pending.words];
  const name = words[0]?.kind === 'static' ? programName(words[0].value) : undefined;
  const programByPath = name?.includes('/') ? name : undefined;
  if (name !== undefined && !programByPath) words[0] = { ...words[0], value: name };
  const argv = words.map((word) => word.value);
  const dynamicWords = words.map((word) => word.dynamic);
  const cwd = pending.cwds[pending.cwds.length - 1];
  const requests: PathRequest[] = [];

  const want = (entry: ArgvPath, word: Word) => {
    const how = { access: entry.access, fromTop: entry.fromTop, recursive: entry.recursive, history: entry.history };
    if (word.kind === 'static') {
      requests.push({ ...how, literal: entry.text });
      return;
    }
    const whole = entry.text === word.value || entry.text === word.raw;
    const pattern = whole ? word.pattern : word.kind === 'glob' && !/["'\\$`]/.test(entry.text) ? entry.text : undefined;
    // `..` after a wildcard leaves through whatever the wildcard matched, which a lexical `..` would misjudge.
    if (pattern === undefined || word.kind !== 'glob' || globPrefix(pattern) === undefined) {
      walker.problem(`the path ${word.raw} is only known when the command runs`);
      return;
    }
    requests.push({ ...how, literal: unescapePattern(pattern), glob: pattern });
  };

  let { readOnly, reason } = pending.verdict ?? { readOnly: true, reason: 'no command' };
  if (!pending.verdict && words.length > 0) {
    const dynamicArgs = words.map((word) => word.kind !== 'static');
    const verdict = classifyArgv(argv, { dynamic: dynamicArgs });
    ({ readOnly, reason } = verdict);
    const reported = verdict.paths.length > 0 || verdict.readOnly ? verdict.paths : writerPaths(argv, dynamicArgs);
    for (const entry of reported) {
      const word = words[entry.index];
      if (word) want(entry, word);
    }
    // Every other glob is judged as read too: a command the classifier could not follow (`cat *.key`:
    // a match may be an option) may read what it matches, and a glob in a pattern's place becomes
    // the pattern and files to read (`grep -v certs/*` is `grep -v certs/a.pem certs/server.key`).
    words.forEach((word, index) => {
      if (index > 0 && word.kind === 'glob' && !reported.some((entry) => entry.index === index)) want({ index, access: 'read', text: word.value }, word);
    });
  }
  const byPath = programByPath && `runs ${programByPath}, a program given by its path (not the system's ${path.posix.basename(programByPath)})`;
  const written = pending.redirects.find((redirect) => redirect.access === 'write');
  // What the walker knows (xargs' input, find -exec), then a program by path, then a writing redirect overrules the verdict.
  const overrule = pending.notReadOnly || byPath || (readOnly && written && `writes ${written.word.raw} (redirect ${written.op})`);
  if (overrule) {
    readOnly = false;
    reason = overrule;
  }
  for (const redirect of pending.redirects) if (redirect.word.kind === 'static') requests.push({ access: redirect.access, literal: redirect.word.value });

  // git reads the config of the repository it finds: only the workspace's own is vouched for.
  let topLevel = context.cwd;
  if (argv[0] === 'git' && !programByPath) {
    for (const candidate of pending.cwds) {
      const start = gitStart(argv, dynamicWords, candidate);
      if (start === undefined) continue;
      if (!repositories.has(start)) repositories.set(start, discoverGitRepository(start, context.cwd));
      const repository = await repositories.get(start)!;
      if (repository.problem) walker.problem(repository.problem);
      topLevel = repository.topLevel;
    }
  }

  const wanted = new Map<string, { request: PathRequest; literal: string; base: string }>();
  const add = (request: PathRequest, literal: string, base: string) => {
    const key = `${request.access}\u0000${path.posix.resolve(base, literal)}`;
    const known = wanted.get(key);
    // One fact per path; a read through a directory (or its history) is the wider of the two.
    if (known === undefined) wanted.set(key, { request, literal, base });
    else known.request = { ...known.request, recursive: known.request.recursive || request.recursive, history: known.request.history || request.history };
  };
  for (const request of requests) {
    const bases = request.literal.startsWith('/') ? [cwd] : request.fromTop ? [topLevel] : pending.cwds;
    for (const base of bases) {
      // Every path the glob becomes where the command runs; no match leaves the word as written (Bash's default).
      const expansion = request.glob === undefined ? { matches: [] } : await expandGlob(request.glob, base);
      if ('tooMany' in expansion) {
        walker.problem(`the glob ${request.literal} matches more than ${MAX_GLOB_MATCHES} paths, too many to check`);
        continue;
      }
      for (const match of expansion.matches.length > 0 ? expansion.matches : [request.literal]) add(request, match, base);
    }
  }
  const paths: BashCommandFact['paths'] = await Promise.all(
    [...wanted.values()].map(async ({ request, literal, base }) => {
      const fact = { access: request.access, path: await context.resolve(literal, base) };
      return request.recursive ? { ...fact, recursive: true, ...(request.history ? { history: true } : {}) } : fact;
    }),
  );
  return {
    argv,
    program: argv[0] ?? '',
    text: argv.join(' '),
    dynamic: dynamicWords.some(Boolean),
    dynamicWords,
    readOnly,
    reason,
    paths,
    writesByRedirect: written !== undefined,
    readsByRedirect: pending.redirects.some((redirect) => redirect.access === 'read'),
    cwd,
    nested: pending.nested,
    wrappers: pending.wrappers,
  };
}
