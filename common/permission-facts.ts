/**
 * The facts a permission decision is made on, gathered where the tool acts (style §20, issue 17).
 *
 * The workflow cannot parse Bash with a real grammar (tree-sitter-bash's WASM build loads
 * asynchronously) nor look at the file system, so an activity on the workspace's host gathers
 * these facts — the command's syntax tree reduced to simple commands, every path resolved to its
 * real path — and records them in history; the workflow's pure rule engine
 * (common/permissions.ts `decidePermission`) decides on them. Replay reads the recorded facts.
 *
 * Fail closed: whatever the gatherer does not understand is a `problem`, and a problem asks.
 */

/** A path as the tool will use it. */
export interface PathFact {
  /** As the model (or the command) wrote it. */
  literal: string;
  /** Absolute, lexically normalised against the directory it is relative to. */
  absolute: string;
  /**
   * Every symbolic link resolved (`realpath`). For a path that does not exist yet: the real path
   * of its nearest existing parent joined with the rest.
   */
  real: string;
  exists: boolean;
  /** `other`: a device, FIFO, socket, or a `/proc` / `/sys` entry — never read-only input. */
  kind: 'file' | 'directory' | 'other' | 'missing';
}

/** How a path is used by a call. */
export type PathAccess = 'read' | 'write';

/** One simple command of a Bash command line, after quote removal and wrappers unwrapped. */
export interface BashCommandFact {
  /**
   * The words after quote removal, with wrappers (`env`, `command`, `builtin`, `time`, `nice`,
   * `timeout`, `nohup`, `sudo`, `xargs`, …) and leading `VAR=value` assignments removed and the
   * program reduced to its name (`/bin/rm` → `rm`). A word whose value is not known before the
   * command runs (an expansion, a glob) is kept as written, and `dynamic` is true.
   */
  argv: string[];
  /** argv[0] (the program's name), or '' when the command is only assignments. */
  program: string;
  /** The words joined by single spaces: what a Bash rule's text is matched against. */
  text: string;
  /** Some word's value depends on an expansion (parameter, arithmetic, glob, brace, `~user`). */
  dynamic: boolean;
  /**
   * For each word of argv: it is dynamic (kept as written), or came from a brace expansion. An allow
   * rule never covers a dynamic word with its literal part.
   */
  dynamicWords: boolean[];
  /** The wrappers removed in front of it, outermost first (`env`, `timeout`, `nice`, `xargs`, `find` for -exec, …). */
  wrappers: string[];
  /** Provably reads only (real option parsing of a known program; see common/bash-read-only.ts). */
  readOnly: boolean;
  /** Why it is (or is not) read-only: shown when the decision asks. */
  reason: string;
  /**
   * The paths it reads or writes: operands, redirect targets, `cd` targets, every path a glob
   * expands to. `recursive`: when a directory, everything below it is read (a git pathspec);
   * `history`: a path in git's history, which need not exist now.
   */
  paths: { access: PathAccess; path: PathFact; recursive?: boolean; history?: boolean }[];
  /** Some redirect writes a file (other than /dev/null). */
  writesByRedirect: boolean;
  /** Some redirect reads a file (`< f`; not /dev/null or a descriptor). Absent in facts recorded before it existed. */
  readsByRedirect?: boolean;
  /** The directory it runs in (after a `cd` earlier in the same list), absolute. */
  cwd: string;
  /** Reached through a wrapper that runs code from a string (`bash -c`, `sh -c`, `eval`, `watch`), `xargs` or `find -exec`. */
  nested: boolean;
}

/** What an activity found in a Bash command line. */
export interface BashFacts {
  /**
   * Constructs the gatherer does not model, or that run code it cannot see (a command or process
   * substitution, `$'…'` hiding an operator, a heredoc feeding a shell, a function definition, …).
   * Non-empty: an allow rule or the read-only default cannot let the command run without asking
   * (deny rules still apply to every simple command that was found).
   */
  problems: string[];
  /** Every simple command anywhere in the tree (substitutions and nested shells included). */
  commands: BashCommandFact[];
}

/** The facts of one tool call. */
export interface CallFacts {
  toolUseId: string;
  /** File tools: every path the call touches (Read/Edit/Write: `file_path`; Glob/Grep: the root). */
  paths?: { access: PathAccess; path: PathFact }[];
  /** Bash only. */
  bash?: BashFacts;
}

/** The gatherFacts activity's input. */
export interface GatherFactsInput {
  /** The workspace: relative paths and commands start here. */
  cwd: string;
  /** The worker's home for `~` (the activity uses its own when absent). */
  homeDir?: string;
  calls: { toolUseId: string; name: string; input: unknown }[];
}

export interface GatherFactsResult {
  facts: CallFacts[];
}

/**
 * What runTool enforces where it acts, besides the decision (issue 17 §4): a file tool re-checks
 * the real path it is about to open, and Grep and Glob skip every file a Read deny rule covers or
 * that lies outside the working directories.
 */
export interface ToolAccess {
  workingDirectories: string[];
  /** The content of every `Read(…)` deny rule (and of a bare `Read` deny, `**`). */
  readDeny: string[];
  homeDir?: string;
  /**
   * The real paths the decision allowed (CallFacts.paths[].path.real). A write whose real path is
   * not one of these at the moment it opens the file (a symlink swapped in after the check) fails.
   */
  allowedRealPaths?: string[];
  /**
   * Bash: someone can answer, so the sandbox's proxy runs and a domain not in
   * `sandbox.network.allowedDomains` asks the conversation (common/network-request.ts) instead of being refused.
   */
  askForDomains?: boolean;
}

/**
 * Whether a Bash command line provably only reads, on its facts: nothing the gatherer could not
 * follow and every simple command read-only. The one answer to "read-only" for Bash — the
 * permission engine's plan mode and read-only default, concurrency, early start and the crash
 * journal all read it (issue 29: one Bash analysis). No facts: not read-only (fail closed).
 */
export function isReadOnlyBash(facts: BashFacts | undefined): boolean {
  return facts !== undefined && facts.problems.length === 0 && facts.commands.every((command) => command.readOnly);
}
