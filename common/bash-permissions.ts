/**
 * The Bash permission decision on gathered facts (issue 17 §1, §3, §7): pure and Node-free, so the
 * workflow decides with it on the facts an activity recorded (activities/permission-facts/bash-facts.ts).
 *
 * - Deny and ask rules match broadly, per simple command anywhere in the line: the rule's program
 *   is the command's (`/bin/rm`, `\rm`, `command rm`, `bash -c "rm …"` all reduce to `rm`), the
 *   rule's options are among the command's after short clusters are split and long synonyms
 *   mapped (`rm -rf` covers `rm -fr`, `rm -r -f`, `rm --recursive --force`), and the rule's other
 *   words begin the command's. A command that might match (its words expand at run time, or the
 *   words are there but not at the start) asks instead.
 * - Allow rules match exactly: `npm test` the command, `npm test:*` it followed by anything, `*`
 *   a wildcard; never a command reached through `bash -c`/`eval`/`xargs`/`find -exec`, one with a
 *   writing redirect, or one whose words the rule's literal part covers are only known at run time.
 * - Every path a command reads must be inside the working directories (as written and as its real
 *   path) and outside the Read deny rules; every path it writes inside and not protected.
 */
import type { BashCommandFact, BashFacts, PathFact } from './permission-facts';
import {
  type PermissionContext,
  type PermissionDecision,
  type PermissionRule,
  type RuleWithSource,
  isProtectedPath,
  parsePermissionRule,
} from './permission-rules';
import { isInside, normalizePath, pathMatchesRule, ruleMayMatchInside } from './path-rules';
import { EDIT_TOOLS } from './tool-specs';

type Match = 'yes' | 'maybe' | 'no';

// ---- rule text ----

/** A rule's words with quotes and backslashes removed (`\*` is a literal star). */
export function splitRuleWords(text: string): string[] {
  const words: string[] = [];
  let current = '';
  let started = false;
  let quote: string | undefined;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (quote) {
      if (char === quote) quote = undefined;
      else if (char === '\\' && quote === '"' && index + 1 < text.length) current += text[++index];
      else current += char;
      continue;
    }
    if (/\s/.test(char)) {
      if (started) words.push(current);
      current = '';
      started = false;
      continue;
    }
    started = true;
    if (char === '\\' && index + 1 < text.length) current += text[++index];
    else if (char === "'" || char === '"') quote = char;
    else current += char;
  }
  if (started) words.push(current);
  return words;
}

/** Whether the text has a `*` that is not escaped with a backslash. */
function hasWildcard(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    if (text[index] === '\\') index++;
    else if (text[index] === '*') return true;
  }
  return false;
}

/** A rule's content with `*` as "anything" and `\*` as a star, as a regular expression. */
function wildcardRegExp(content: string): RegExp {
  let source = '';
  for (let index = 0; index < content.length; index++) {
    const char = content[index];
    if (char === '\\' && index + 1 < content.length) source += content[++index].replace(/[.+?^${}()|[\]\\*]/g, '\\$&');
    else if (char === '*') source += '.*';
    else source += char.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

const basename = (program: string) => program.slice(program.lastIndexOf('/') + 1);

// ---- allow: exact ----

function allowMatches(content: string, command: BashCommandFact, homeDir?: string): boolean {
  if (command.nested || command.writesByRedirect || command.argv.length === 0) return false;
  // A parameter expansion or substitution could be any path or option, which no check has seen.
  if (command.argv.some((word, index) => command.dynamicWords[index] && /[$`]/.test(word))) return false;
  const trimmed = content.trim();
  const prefixRule = trimmed.endsWith(':*') && !trimmed.endsWith('\\:*');
  const head = prefixRule ? trimmed.slice(0, -2).trim() : trimmed;
  if (hasWildcard(head)) {
    // Wildcards may cover any word: a word only known at run time is never covered.
    if (command.dynamicWords.some(Boolean)) return false;
    if (wildcardRegExp(head + (prefixRule ? '*' : '')).test(command.text)) return true;
    // `ls *` also covers a bare `ls`.
    const optionalTail = /^(.*\S) \*$/.exec(head);
    return !!optionalTail && !hasWildcard(optionalTail[1]) && wordsEqual(optionalTail[1], command, false, homeDir);
  }
  return wordsEqual(head, command, prefixRule, homeDir);
}

function wordsEqual(ruleText: string, command: BashCommandFact, prefix: boolean, homeDir: string | undefined): boolean {
  const words = expandRuleHome(splitRuleWords(ruleText), homeDir);
  if (words.length === 0) return false;
  if (prefix ? command.argv.length < words.length : command.argv.length !== words.length) return false;
  // An exact rule covers every word; a prefix rule its own.
  const covered = prefix ? words.length : command.argv.length;
  for (let index = 0; index < covered; index++) {
    if (command.dynamicWords[index]) return false;
    if (index < words.length && command.argv[index] !== words[index]) return false;
  }
  return true;
}

// ---- deny / ask: broad ----

/** Long options and their short equivalents, per program (the canonical form is the short one). */
const SYNONYMS: Record<string, Record<string, string[]>> = {
  rm: { '-R': ['-r'], '--recursive': ['-r'], '--force': ['-f'], '--dir': ['-d'], '--interactive': ['-i'], '--verbose': ['-v'] },
  cp: { '-R': ['-r'], '--recursive': ['-r'], '--force': ['-f'], '--archive': ['-a'] },
  mv: { '--force': ['-f'] },
  chmod: { '--recursive': ['-R'] },
  chown: { '--recursive': ['-R'] },
  chgrp: { '--recursive': ['-R'] },
  git: {
    '--force': ['-f'],
    '--force-with-lease': ['-f'],
    '--force-if-includes': ['-f'],
    '--delete': ['-d'],
    '-D': ['-d', '-f'],
    '--all': ['-a'],
    '--quiet': ['-q'],
    '--mirror': ['-f'],
  },
  rsync: { '--delete': ['--delete'], '--recursive': ['-r'] },
};
/** Options of git before the subcommand that take a value as the next word. */
const GIT_VALUED = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--super-prefix', '--config-env']);

interface Split {
  options: Set<string>;
  positionals: string[];
  /** Words only known at run time that could be options or positionals. */
  unknown: boolean;
}

/** Splits a command's words into options (clusters split, synonyms mapped) and the rest. */
function splitCommand(argv: string[], dynamicWords: boolean[], program: string, ruleLongs: string[]): Split {
  const options = new Set<string>();
  const positionals: string[] = [];
  const synonyms = SYNONYMS[program] ?? {};
  const longs = [...new Set([...Object.keys(synonyms).filter((name) => name.startsWith('--')), ...ruleLongs])];
  let unknown = false;
  let optionsEnded = false;
  const addOption = (option: string) => {
    options.add(option);
    for (const synonym of synonyms[option] ?? []) options.add(synonym);
  };
  const addLong = (word: string) => {
    const name = word.split('=', 1)[0];
    let canonical = name;
    if (!longs.includes(name)) {
      const candidates = longs.filter((long) => long.startsWith(name) && name.length >= 3);
      const same = (a: string, b: string) => JSON.stringify(synonyms[a] ?? [a]) === JSON.stringify(synonyms[b] ?? [b]);
      // A unique abbreviation, or several long options that mean the same (`--forc`: every `--force…` forces).
      if (candidates.length > 0 && candidates.every((candidate) => same(candidate, candidates[0]))) canonical = candidates[0];
    }
    addOption(canonical);
  };
  for (let index = 1; index < argv.length; index++) {
    const word = argv[index];
    if (dynamicWords[index] && /[$`*?[]/.test(word)) {
      unknown = true;
      positionals.push(word);
      continue;
    }
    if (optionsEnded || word === '-' || !word.startsWith('-')) {
      // git push +main forces the update.
      if (program === 'git' && positionals[0] === 'push' && word.startsWith('+')) options.add('-f');
      positionals.push(word);
      continue;
    }
    if (word === '--') {
      optionsEnded = true;
      continue;
    }
    // git's options before the subcommand that take the next word (`git -C dir`): the value is no option.
    const gitValued = program === 'git' && positionals.length === 0 && GIT_VALUED.has(word) && index + 1 < argv.length;
    if (word.startsWith('--')) addLong(word);
    else if (!gitValued) {
      addOption(word);
      for (const letter of word.slice(1)) addOption(`-${letter}`);
    }
    if (gitValued) index++;
  }
  return { options, positionals, unknown };
}

/** Absolute paths compared after lexical normalisation (`//`, `/.`, `a/..`). */
const normalWord = (word: string) => (word.startsWith('/') ? normalizePath(word) : word);

function wordMatches(ruleWord: string, word: string): boolean {
  if (!ruleWord.includes('*')) return ruleWord === word || normalWord(ruleWord) === normalWord(word);
  return wildcardRegExp(ruleWord.replace(/[\\]/g, '\\\\')).test(word);
}

/** A rule's `~` and `~/…` words as the home directory (the command's words are already expanded). */
function expandRuleHome(words: string[], homeDir: string | undefined): string[] {
  if (!homeDir) return words;
  return words.map((word) => (word === '~' ? homeDir : word.startsWith('~/') ? `${homeDir}${word.slice(1)}` : word));
}

function isSubsequence(needles: string[], haystack: string[]): boolean {
  let position = 0;
  for (const word of haystack) if (position < needles.length && wordMatches(needles[position], word)) position++;
  return position === needles.length;
}

/** How a deny or ask rule's content meets one command. */
function broadMatch(content: string | undefined, command: BashCommandFact, homeDir?: string): Match {
  if (command.argv.length === 0) return 'no';
  if (content === undefined) return 'yes'; // the whole tool (`Bash`)
  const trimmed = content.trim();
  const head = trimmed.endsWith(':*') ? trimmed.slice(0, -2).trim() : trimmed;
  const words = expandRuleHome(splitRuleWords(head), homeDir);
  if (words.length === 0) return 'no';
  const ruleProgram = basename(words[0]);
  if (command.dynamicWords[0] && /[$`*?[]/.test(command.argv[0])) return 'maybe';
  const program = command.program;
  if (!wordMatches(ruleProgram, program) && !wordMatches(ruleProgram, basename(program))) return 'no';
  const rest = words.slice(1).filter((word) => word !== '*');
  const ruleLongs = rest.filter((word) => word.startsWith('--')).map((word) => word.split('=', 1)[0]);
  const programName = basename(program);
  const split = splitCommand(command.argv, command.dynamicWords, programName, ruleLongs);
  const synonyms = SYNONYMS[programName] ?? {};
  const required: string[] = [];
  const rulePositionals: string[] = [];
  let ruleOptionsEnded = false;
  for (const word of rest) {
    if (ruleOptionsEnded || word === '-' || !word.startsWith('-')) rulePositionals.push(word);
    else if (word === '--') ruleOptionsEnded = true;
    else if (word.startsWith('--')) {
      const name = word.split('=', 1)[0];
      required.push(...(synonyms[name] ?? [name]));
    } else if (synonyms[word]) required.push(...synonyms[word]);
    else for (const letter of word.slice(1)) required.push(...(synonyms[`-${letter}`] ?? [`-${letter}`]));
  }
  const missingOption = required.filter((option) => !split.options.has(option));
  const prefix = rulePositionals.every((word, index) => index < split.positionals.length && wordMatches(word, split.positionals[index]));
  if (missingOption.length === 0 && prefix) return 'yes';
  if (split.unknown) return 'maybe';
  if (missingOption.length === 0 && isSubsequence(rulePositionals, command.argv.slice(1))) return 'maybe';
  return 'no';
}

// ---- the decision ----

interface BashRule {
  entry: RuleWithSource;
  /** undefined: the whole tool (`Bash`). */
  content?: string;
}

function rulesFor(list: RuleWithSource[], tools: string[]): (BashRule & { toolName: string })[] {
  const found: (BashRule & { toolName: string })[] = [];
  for (const entry of list) {
    let parsed: PermissionRule;
    try {
      parsed = parsePermissionRule(entry.rule);
    } catch {
      continue;
    }
    if (tools.includes(parsed.toolName)) found.push({ entry, content: parsed.content, toolName: parsed.toolName });
  }
  return found;
}

const describeRule = (entry: RuleWithSource) => `${entry.source} rule ${entry.rule}`;
const names = (fact: PathFact) => (fact.real === fact.absolute ? [fact.absolute] : [fact.absolute, fact.real]);
const quote = (command: BashCommandFact) => (command.text.length > 80 ? `${command.text.slice(0, 77)}…` : command.text) || '(redirect)';

/** The decision of a deny rule; `detail` follows its name in the message. */
function deniedBy(entry: RuleWithSource, detail: string): PermissionDecision {
  const rule = describeRule(entry);
  return { behavior: 'deny', reason: rule, message: `Permission to use Bash has been denied by the ${rule}${detail}.` };
}

/**
 * The decision on a Bash call's facts: deny rules (every mode), ask rules, plan mode, bypass mode,
 * problems, allow rules with path checks, then the read-only default. dontAsk turning an ask into
 * a deny is the caller's.
 */
export function decideBash(facts: BashFacts, context: PermissionContext): PermissionDecision {
  const denyRules = rulesFor(context.rules.deny, ['Bash']);
  const askRules = rulesFor(context.rules.ask, ['Bash']);
  const allowRules = rulesFor(context.rules.allow, ['Bash']);
  const readDeny = rulesFor(context.rules.deny, ['Read']);
  // The writing file tools' rules (Edit's, and Write's own) govern a command's writes.
  const editDeny = rulesFor(context.rules.deny, [...EDIT_TOOLS]);
  const workspace = context.workingDirectories[0] ?? '/';
  const pathContext = { cwd: workspace, homeDir: context.homeDir };
  const { commands, problems } = facts;

  // 1. Deny rules, on every simple command anywhere in the line.
  const maybes: string[] = [];
  for (const command of commands) {
    for (const rule of denyRules) {
      const match = broadMatch(rule.content, command, context.homeDir);
      if (match === 'yes') return deniedBy(rule.entry, ` (it matches \`${quote(command)}\`)`);
      if (match === 'maybe') maybes.push(`\`${quote(command)}\` may be what the ${describeRule(rule.entry)} forbids`);
    }
  }
  // Paths under a Read / Edit deny rule.
  for (const command of commands) {
    for (const { access, path, recursive, history } of command.paths) {
      const list = access === 'read' ? readDeny : editDeny;
      const rule = list.find((candidate) => names(path).some((target) => pathMatchesRule(candidate.content ?? '**', target, pathContext)));
      if (rule) return deniedBy(rule.entry, `: \`${quote(command)}\` ${access === 'read' ? 'reads' : 'writes'} ${path.literal}`);
      // A directory git reads through (`git log -p -- certs`), its history included: a rule for something inside it may match.
      if (recursive && (path.kind === 'directory' || (history && path.kind === 'missing'))) {
        const inside = list.find((candidate) => names(path).some((target) => ruleMayMatchInside(candidate.content ?? '**', target, pathContext)));
        if (inside) maybes.push(`\`${quote(command)}\` reads everything in ${path.literal}, where the ${describeRule(inside.entry)} may apply`);
      }
    }
  }

  // 2. Ask rules, and commands that may match a deny rule.
  for (const command of commands) {
    const rule = askRules.find((candidate) => broadMatch(candidate.content, command, context.homeDir) !== 'no');
    if (rule) return { behavior: 'ask', reason: describeRule(rule.entry) };
  }
  if (maybes.length > 0) return { behavior: 'ask', reason: maybes[0] };

  const allReadOnly = commands.every((command) => command.readOnly);
  // 3. Plan mode runs only what provably reads.
  if (context.mode === 'plan' && (!allReadOnly || problems.length > 0)) {
    const culprit = problems[0] ?? commands.find((command) => !command.readOnly)?.reason ?? 'the command may change things';
    const message = `Bash may change things (${culprit}), and this conversation is in plan mode: only read-only commands run. Present the plan instead of carrying it out.`;
    return { behavior: 'deny', reason: 'plan mode', message };
  }

  const protectedWrite = commands
    .flatMap((command) => command.paths)
    .find(({ access, path }) => access === 'write' && names(path).some((name) => isProtectedPath(name, context.workingDirectories)));
  const protectedReason = protectedWrite
    ? `${protectedWrite.path.literal} is a protected file (repository, editor or agent settings, shell start-up): writing it asks in every mode`
    : undefined;

  // 4. bypassPermissions (and a bare `Bash` allow rule) allow everything but what a deny rule cannot check.
  const allowAll = allowRules.find((rule) => rule.content === undefined);
  if (context.mode === 'bypassPermissions' || allowAll) {
    const why = allowAll ? describeRule(allowAll.entry) : 'bypassPermissions mode';
    if (problems.length > 0 && denyRules.length > 0) {
      return { behavior: 'ask', reason: `${problems[0]}; a Bash deny rule cannot be checked on code the check cannot see (${why})` };
    }
    if (protectedReason) return { behavior: 'ask', reason: protectedReason };
    return { behavior: 'allow', reason: why };
  }

  // 5. Anything the gatherer could not follow asks.
  if (problems.length > 0) return { behavior: 'ask', reason: problems.length > 1 ? `${problems[0]} (and ${problems.length - 1} more)` : problems[0] };
  if (protectedReason) return { behavior: 'ask', reason: protectedReason };

  const pathProblem = (command: BashCommandFact, allowWrites: boolean): string | undefined => {
    for (const { access, path } of command.paths) {
      if (access === 'write' && !allowWrites) return `\`${quote(command)}\` writes ${path.literal}`;
      const outside = names(path).find((target) => !context.workingDirectories.some((directory) => isInside(target, directory)));
      if (outside) {
        const via = path.real !== path.absolute ? ` (it leads to ${path.real})` : '';
        return `\`${quote(command)}\` ${access === 'read' ? 'reads' : 'writes'} ${path.literal}${via}, outside the working directories (${context.workingDirectories.join(', ')})`;
      }
      if (path.kind === 'other') return `\`${quote(command)}\` uses ${path.literal}, which is not a regular file or directory (${path.real})`;
    }
    return undefined;
  };

  // 6. Allow rules: every command covered, every path inside.
  if (commands.length > 0 && allowRules.length > 0) {
    const covering = commands.map((command) => allowRules.find((rule) => rule.content !== undefined && allowMatches(rule.content, command, context.homeDir)));
    if (covering.every(Boolean)) {
      const problem = commands.map((command) => pathProblem(command, true)).find(Boolean);
      if (!problem) {
        const used = [...new Set(covering.map((rule) => describeRule(rule!.entry)))];
        return { behavior: 'allow', reason: used.join(', ') };
      }
      return { behavior: 'ask', reason: problem };
    }
  }

  // 7. The read-only default.
  const notReadOnly = commands.find((command) => !command.readOnly);
  if (notReadOnly) return { behavior: 'ask', reason: `\`${quote(notReadOnly)}\` may change things: ${notReadOnly.reason}` };
  const problem = commands.map((command) => pathProblem(command, false)).find(Boolean);
  if (problem) return { behavior: 'ask', reason: problem };
  return { behavior: 'allow', reason: commands.length === 0 ? 'an empty command' : 'read-only command inside the working directories' };
}

// ---- "always" ----

/** Programs whose first word is a subcommand: "always" approves the subcommand (`git commit:*`). */
const SUBCOMMAND_PROGRAMS = new Set([
  ...['git', 'npm', 'pnpm', 'yarn', 'bun', 'deno', 'cargo', 'go', 'dotnet', 'pip', 'pip3', 'poetry', 'uv', 'rustup', 'brew', 'mvn', 'gradle'],
  ...['docker', 'podman', 'kubectl', 'helm', 'terraform', 'gh', 'make', 'just', 'turbo', 'nx'],
]);
/** Subcommands whose further words choose what runs: "always" approves only the exact command. */
const EXACT_SUBCOMMANDS = new Set(['config', 'exec', 'x', 'dlx', 'run', 'run-script', 'create', 'init', 'alias']);
const RUNS_SCRIPT = new Set(['npm', 'pnpm', 'yarn', 'bun']);

/** A word as rule text: `*` and `\` escaped; undefined when a rule cannot say it. */
function ruleWord(word: string): string | undefined {
  if (word === '' || /[\s()"']/.test(word)) return undefined;
  return word.replace(/[\\*]/g, '\\$&');
}

/**
 * The rule "always" adds for a call (its content, for `Bash(…)`), or undefined when no rule is safe
 * to add: several commands, problems, words only known at run time, or a command an allow rule
 * could never cover. Approving `rm -f *.o` always adds nothing.
 */
export function bashAlwaysRule(facts: BashFacts): string | undefined {
  if (facts.problems.length > 0 || facts.commands.length !== 1) return undefined;
  const [command] = facts.commands;
  if (command.nested || command.writesByRedirect || command.argv.length === 0 || command.dynamicWords.some(Boolean)) return undefined;
  const words = command.argv.map(ruleWord);
  if (words.some((word) => word === undefined)) return undefined;
  const [program, subcommand, third] = command.argv;
  if (SUBCOMMAND_PROGRAMS.has(program) && subcommand !== undefined && !subcommand.startsWith('-')) {
    if (RUNS_SCRIPT.has(program) && (subcommand === 'run' || subcommand === 'run-script') && third !== undefined && !third.startsWith('-')) {
      return `${words.slice(0, 3).join(' ')}:*`;
    }
    if (!EXACT_SUBCOMMANDS.has(subcommand)) return `${words[0]} ${words[1]}:*`;
  }
  return words.join(' ');
}
