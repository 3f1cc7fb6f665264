/**
 * Workspace checkpoints (issue 31): a content-addressed store, per workspace and outside it, of the
 * working tree — tracked, untracked and ignored files up to a size budget — and of the workspace's
 * own git state (HEAD, refs, index), so that a rewind undoes what the tools and Bash did, commits
 * and branch switches included. See docs/checkpoints.md.
 *
 * The store is a git repository of its own (`<workspace state dir>/checkpoints.git`) run with the
 * system git: GIT_DIR is the store, GIT_WORK_TREE the workspace, GIT_INDEX_FILE a private index in
 * the store, so the workspace's `.git` is never the repository of any command we run. That index
 * persists between checkpoints: git's stat cache then makes unchanged files free, and a checkpoint
 * of an unchanged 10,000-file tree costs a directory walk, not a re-hash.
 *
 * A checkpoint is a parentless commit (so that deleting its ref frees it) whose tree is
 *   files/        the working tree
 *   state/git/    raw copies of the workspace's .git/HEAD, packed-refs, refs/**, index, MERGE_HEAD…
 *   state/tips    the object ids those name (kept alive in the store by refs/keep/<id>)
 *   index-tree/   a tree written from the workspace's index (keeps staged-only blobs alive)
 * with the label as a JSON trailer of its message and a ref `refs/checkpoints/<conversation>/<seq>`.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync } from 'node:fs';
import { lstat, mkdir, open, readFile, readdir, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { workspaceStateDir } from '../tool-journal';

export type CheckpointReason = 'before-tool' | 'turn-end' | (string & {});

export interface CheckpointLabel {
  conversationId: string;
  reason: CheckpointReason;
  toolUseId?: string;
  /** Index of the user prompt (turn) the checkpoint belongs to. */
  prompt?: number;
}

/** A label as stored: with the time the checkpoint was taken (ISO 8601, ms). */
export interface StoredCheckpointLabel extends CheckpointLabel {
  at: string;
}

export interface CheckpointStoreOptions {
  stateDir: string;
  cwd: string;
  /** Files larger than this are not captured, and left alone by restore (default 1 MiB). */
  maxFileBytes?: number;
  /** gitignore-style patterns (relative to the workspace root) never captured nor removed. */
  excludes?: string[];
}

export interface SkippedPath {
  path: string;
  reason: 'oversized' | 'special-file' | 'nested-repository';
}

export interface TakeResult {
  /** The checkpoint's commit id in the store: what a conversation records. */
  id: string;
  seq: number;
  /** The working tree's tree id: equal for two checkpoints of the same content. */
  tree: string;
  files: number;
  /** Bytes of files (re)hashed for this checkpoint: an upper bound of the content added. */
  bytesAdded?: number;
  ms: number;
  skipped: SkippedPath[];
  warnings: string[];
}

export interface RestoreResult {
  /** Files written (absent or different now). */
  restored: number;
  /** Files removed (present now, not in the checkpoint). */
  removed: number;
  /** Whether the workspace's git state (HEAD, refs, index) was put back. */
  gitState: boolean;
  /** Present now, not in the checkpoint, yet kept: oversized, excluded or special files, nested repositories. */
  leftAlone: string[];
  warnings: string[];
}

export interface CheckpointChange {
  path: string;
  status: 'added' | 'modified' | 'deleted';
}

export interface CheckpointInfo {
  id: string;
  seq: number;
  label: StoredCheckpointLabel;
  /** When it was taken (ISO 8601). */
  time: string;
}

export interface PruneOptions {
  /** Newest checkpoints kept per conversation (default 100, as Claude Code). */
  keepPerConversation?: number;
  /** Checkpoints older than this are deleted (default 30 days, as Claude Code). */
  maxAgeDays?: number;
  now?: Date | number;
  /** Unreachable objects younger than this stay (default 0: all go). Safe beside another process taking checkpoints. */
  graceSeconds?: number;
}

export interface PruneResult {
  deleted: number;
  kept: number;
}

export interface CheckpointStore {
  /** The store's git directory. */
  readonly dir: string;
  take(label: CheckpointLabel): Promise<TakeResult>;
  restore(id: string): Promise<RestoreResult>;
  /** Paths changed from `fromId` to `toId` (absent: to the working tree now). */
  diff(fromId: string, toId?: string): Promise<CheckpointChange[]>;
  list(conversationId: string): Promise<CheckpointInfo[]>;
  prune(options?: PruneOptions): Promise<PruneResult>;
  /**
   * Writes a checkpoint's files into `targetDir` (created; must be empty): a fork's workspace.
   * `withGit`: and, when the checkpoint captured git state, a repository of its own (`git`: made).
   */
  materialize(id: string, targetDir: string, options?: { withGit?: boolean }): Promise<{ files: number; git: boolean }>;
}

/** `DURABLE_AGENT_CHECKPOINTS=0` on the worker: no checkpoints (before tools, before prompts), nor exactly-once re-runs of commands. */
export const CHECKPOINTS_ENVIRONMENT_VARIABLE = 'DURABLE_AGENT_CHECKPOINTS';

export function checkpointsDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[CHECKPOINTS_ENVIRONMENT_VARIABLE] === '0';
}

export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
/** A private-index lock older than this was left by a process that died while writing it. */
const STALE_LOCK_MS = 60_000;
export const DEFAULT_KEEP_PER_CONVERSATION = 100;
export const DEFAULT_MAX_AGE_DAYS = 30;

/**
 * Settings on every command, over anything in the store's config: no hooks, no fsmonitor (both run
 * programs), no line-ending or encoding conversion (checkpoints are byte-exact), symlinks and exec
 * bits as they are, no reflogs (they would keep pruned checkpoints alive), no automatic gc.
 */
const ISOLATION = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.autocrlf=false',
  'core.safecrlf=false',
  'core.symlinks=true',
  'core.filemode=true',
  'core.ignoreCase=false',
  'core.precomposeUnicode=false',
  'core.untrackedCache=false',
  'core.splitIndex=false',
  'core.sparseCheckout=false',
  'core.excludesFile=/dev/null',
  'core.attributesFile=/dev/null',
  'core.logAllRefUpdates=false',
  'core.bare=false',
  'gc.auto=0',
  // A commit-graph written by one prune names commits the next prune deletes; the store's walks are small without it.
  'gc.writeCommitGraph=false',
  'core.commitGraph=false',
  'maintenance.auto=false',
  'protocol.allow=never',
].flatMap((setting) => ['-c', setting]);

/**
 * `$GIT_DIR/info/attributes` outranks every .gitattributes in the workspace: without it a
 * workspace's `* text eol=crlf` would rewrite line endings on capture and restore, and a
 * `filter=` would name a driver (none is configured here, but the file is workspace content).
 */
const ATTRIBUTES = '* -text -crlf -eol -ident -filter -working-tree-encoding\n';

/** Pseudo-refs and merge state at the top of .git, captured beside HEAD so a restore ends a merge Bash began. */
const PSEUDO_REFS = ['ORIG_HEAD', 'MERGE_HEAD', 'MERGE_MODE', 'MERGE_MSG', 'CHERRY_PICK_HEAD', 'REVERT_HEAD'];
const TIP_FILES = new Set(['HEAD', 'ORIG_HEAD', 'MERGE_HEAD', 'CHERRY_PICK_HEAD', 'REVERT_HEAD']);

const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
const LABEL_TRAILER = 'Checkpoint-Label: ';
const IDENTITY = { GIT_AUTHOR_NAME: 'durable-agent', GIT_AUTHOR_EMAIL: 'checkpoints@durable-agent.invalid' };

interface GitOptions {
  input?: string | Buffer;
  env?: Record<string, string>;
  cwd?: string;
  /** Without GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE (for `git init`). */
  noRepository?: boolean;
}

/** What is remembered between checkpoints of one store in this process (the index on disk is the rest). */
interface Memory {
  /** The index's tree, with the index file's stamp when it was written. */
  filesTree?: { tree: string; stamp: string };
  roots: Map<string, string>;
  keep?: Set<string>;
  seqs: Map<string, number>;
}

const memories = new Map<string, Memory>();
const queues = new Map<string, Promise<unknown>>();

interface GitStateCache {
  key: string;
  stateTree: string;
  indexTree?: string;
}

interface StateFile {
  /** Path inside .git, with '/'. */
  name: string;
  content: Buffer;
}

export function createCheckpointStore(options: CheckpointStoreOptions): CheckpointStore {
  const fromEnvironment = checkpointSettingsFromEnvironment();
  return new GitCheckpointStore({
    ...options,
    maxFileBytes: options.maxFileBytes ?? fromEnvironment.maxFileBytes,
    excludes: options.excludes ?? fromEnvironment.excludes,
  });
}

/** The worker's checkpoint settings (docs/checkpoints.md): the size budget and excludes, from its environment. */
export const CHECKPOINT_SETTINGS_VARIABLES = {
  maxFileBytes: 'DURABLE_AGENT_CHECKPOINT_MAX_FILE_BYTES',
  excludes: 'DURABLE_AGENT_CHECKPOINT_EXCLUDES',
} as const;

/**
 * `DURABLE_AGENT_CHECKPOINT_MAX_FILE_BYTES` (files larger are not captured; default 1 MiB) and
 * `DURABLE_AGENT_CHECKPOINT_EXCLUDES` (gitignore patterns, comma-separated, e.g. `node_modules/,*.log`).
 * The worker's own (an operator's): a repository cannot exclude itself from its checkpoints. A
 * value that cannot be read throws, so no checkpoint is taken with a budget nobody chose.
 */
export function checkpointSettingsFromEnvironment(env: NodeJS.ProcessEnv = process.env): Pick<CheckpointStoreOptions, 'maxFileBytes' | 'excludes'> {
  const settings: Pick<CheckpointStoreOptions, 'maxFileBytes' | 'excludes'> = {};
  const bytes = env[CHECKPOINT_SETTINGS_VARIABLES.maxFileBytes]?.trim();
  if (bytes) {
    if (!/^[0-9]+$/.test(bytes) || !Number.isSafeInteger(Number(bytes)) || Number(bytes) < 1) {
      throw new Error(`${CHECKPOINT_SETTINGS_VARIABLES.maxFileBytes} must be a whole number of bytes (1 or more), got "${bytes}"`);
    }
    settings.maxFileBytes = Number(bytes);
  }
  const excludes = env[CHECKPOINT_SETTINGS_VARIABLES.excludes];
  if (excludes?.trim())
    settings.excludes = excludes
      .split(',')
      .map((pattern) => pattern.trim())
      .filter(Boolean);
  return settings;
}

class GitCheckpointStore implements CheckpointStore {
  readonly dir: string;
  private readonly cwd: string;
  private readonly maxFileBytes: number;
  private readonly excludes: string[];
  private readonly index: string;
  private readonly excludeFile: string;
  private readonly stateCacheFile: string;
  private initialized?: Promise<void>;

  constructor(options: CheckpointStoreOptions) {
    this.cwd = path.resolve(options.cwd);
    this.dir = path.join(workspaceStateDir(options.stateDir, this.cwd), 'checkpoints.git');
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.index = path.join(this.dir, 'checkpoint-index');
    this.excludeFile = path.join(this.dir, 'info', 'exclude');
    this.stateCacheFile = path.join(this.dir, 'git-state-cache.json');
    const excludes = [...(options.excludes ?? [])];
    // A state directory inside the workspace holds this store: capturing it would capture itself.
    const stateRelative = path.relative(this.cwd, path.resolve(options.stateDir));
    if (stateRelative && !stateRelative.startsWith('..') && !path.isAbsolute(stateRelative)) {
      excludes.push(
        `/${stateRelative
          .split(path.sep)
          .join('/')
          .replace(/[\\*?[!#]/g, '\\$&')}/`,
      );
    }
    this.excludes = excludes;
  }

  private get memory(): Memory {
    let memory = memories.get(this.dir);
    if (!memory) memories.set(this.dir, (memory = { roots: new Map(), seqs: new Map() }));
    return memory;
  }

  private forget(): void {
    memories.delete(this.dir);
  }

  /** One operation at a time per store in this process: they share the private index. */
  private exclusive<T>(body: () => Promise<T>): Promise<T> {
    const previous = queues.get(this.dir) ?? Promise.resolve();
    const next = previous.then(body, body);
    const settled = next.catch(() => undefined);
    queues.set(this.dir, settled);
    void settled.then(() => {
      if (queues.get(this.dir) === settled) queues.delete(this.dir);
    });
    return next;
  }

  // -------------------------------------------------------------------------------------------
  // git
  // -------------------------------------------------------------------------------------------

  private environment(extra: Record<string, string> = {}, noRepository = false): Record<string, string> {
    const env: Record<string, string> = {};
    // Nothing of the caller's git environment (GIT_DIR, GIT_CONFIG_PARAMETERS, …) reaches our commands.
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('GIT_')) env[key] = value;
    return {
      ...env,
      ...(noRepository ? {} : { GIT_DIR: this.dir, GIT_WORK_TREE: this.cwd, GIT_INDEX_FILE: this.index }),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_SYSTEM: '/dev/null',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_ATTR_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      GIT_NO_REPLACE_OBJECTS: '1',
      LC_ALL: 'C',
      ...IDENTITY,
      GIT_COMMITTER_NAME: IDENTITY.GIT_AUTHOR_NAME,
      GIT_COMMITTER_EMAIL: IDENTITY.GIT_AUTHOR_EMAIL,
      ...extra,
    };
  }

  private git(args: string[], options: GitOptions = {}): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const child = execFile(
        'git',
        [...ISOLATION, ...args],
        { env: this.environment(options.env, options.noRepository), cwd: options.cwd ?? this.cwd, encoding: 'buffer', maxBuffer: 1 << 30 },
        (error, stdout, stderr) => {
          if (error) reject(new Error(`git ${args[0]} failed: ${stderr.toString().trim() || error.message}`));
          else resolve(stdout);
        },
      );
      // A git that fails early closes its stdin: its exit status is the error worth reporting.
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(options.input ?? '');
    });
  }

  private async gitText(args: string[], options: GitOptions = {}): Promise<string> {
    return (await this.git(args, options)).toString('utf8').trim();
  }

  private init(): Promise<void> {
    this.initialized ??= (async () => {
      const workspace = await stat(this.cwd);
      if (!workspace.isDirectory()) throw new Error(`checkpoints: ${this.cwd} is not a directory`);
      if (!(await exists(path.join(this.dir, 'HEAD')))) {
        await mkdir(path.dirname(this.dir), { recursive: true });
        // No templates: nothing (sample hooks included) is copied into the store.
        await this.git(['init', '--quiet', '--bare', '--template=', this.dir], { cwd: path.dirname(this.dir), noRepository: true });
      }
      await mkdir(path.join(this.dir, 'info'), { recursive: true });
      const exclude = ['# written by durable-agent checkpoints: never captured, never removed', '.git', ...this.excludes, ''].join('\n');
      if ((await readText(this.excludeFile)) !== exclude) {
        await writeFile(this.excludeFile, exclude);
        // Entries the new patterns exclude must leave the index: rebuild it (one full re-hash).
        await rm(this.index, { force: true });
        this.memory.filesTree = undefined;
      }
      const attributes = path.join(this.dir, 'info', 'attributes');
      if ((await readText(attributes)) !== ATTRIBUTES) await writeFile(attributes, ATTRIBUTES);
    })();
    this.initialized.catch(() => (this.initialized = undefined));
    return this.initialized;
  }

  // -------------------------------------------------------------------------------------------
  // The working tree
  // -------------------------------------------------------------------------------------------

  /**
   * Brings the private index up to the working tree: `git ls-files --others --modified` lists what
   * is new, changed or gone since the index was written (a stat comparison; no .gitignore is read,
   * so ignored files are included, only the store's exclude file applies), and only those paths are
   * hashed (`update-index`). Paths are bytes end to end: any file name survives.
   */
  private async scan(): Promise<{ changed: number; bytes: number; skipped: SkippedPath[] }> {
    // -t tags each path: `? ` not in the index, `C ` in it and changed or gone.
    const listing = await this.git(['ls-files', '-z', '-t', '--others', '--modified', `--exclude-from=${this.excludeFile}`]);
    const root = Buffer.from(`${this.cwd}/`);
    const directories = new Map<string, boolean>();
    const realDirectory = (prefix: Buffer): boolean => {
      const key = prefix.toString('latin1');
      let known = directories.get(key);
      if (known === undefined) {
        try {
          known = lstatSync(Buffer.concat([root, prefix])).isDirectory();
        } catch {
          known = false;
        }
        directories.set(key, known);
      }
      return known;
    };
    const update: Buffer[] = [];
    const remove: Buffer[] = [];
    const skipped: SkippedPath[] = [];
    let bytes = 0;
    const seen = new Set<string>();
    for (const tagged of splitNul(listing)) {
      const indexed = tagged[0] !== 0x3f;
      const entry = tagged.subarray(2);
      const key = entry.toString('latin1');
      if (seen.has(key)) continue;
      seen.add(key);
      // A directory listed as `dir/` is a nested repository: its own git owns it.
      if (entry[entry.length - 1] === 0x2f) {
        skipped.push({ path: entry.toString('utf8'), reason: 'nested-repository' });
        continue;
      }
      // Behind a symlink or a file now: gone from here (update-index refuses paths beyond a symlink).
      let behindLink = false;
      for (let slash = entry.indexOf(0x2f); slash !== -1; slash = entry.indexOf(0x2f, slash + 1)) {
        if (!realDirectory(entry.subarray(0, slash))) {
          behindLink = true;
          break;
        }
      }
      if (behindLink) {
        if (indexed) remove.push(entry);
        continue;
      }
      let info;
      try {
        info = lstatSync(Buffer.concat([root, entry]), { throwIfNoEntry: false });
      } catch {
        info = undefined;
      }
      // A file that became a directory leaves the index (update-index refuses it); its files are listed on their own.
      if (info?.isDirectory()) remove.push(entry);
      else if (!info || info.isSymbolicLink()) update.push(entry);
      else if (info.isFile() && info.size <= this.maxFileBytes) {
        update.push(entry);
        bytes += info.size;
      } else {
        // Only an indexed one has something to remove: an oversized file costs no command on every checkpoint.
        if (indexed) remove.push(entry);
        skipped.push({ path: entry.toString('utf8'), reason: info.isFile() ? 'oversized' : 'special-file' });
      }
    }
    if (remove.length) await this.git(['update-index', '-z', '--force-remove', '--stdin'], { input: joinNul(remove) });
    // --remove: a listed path that is gone leaves the index; --replace: a file may replace a directory and back.
    if (update.length) await this.git(['update-index', '-z', '--add', '--remove', '--replace', '--stdin'], { input: joinNul(update) });
    return { changed: update.length + remove.length, bytes, skipped };
  }

  private async writeFilesTree(changed: number): Promise<string> {
    // Nothing changed and the index is as this process last left it (no other process wrote it): the same tree.
    const stamp = await fileStamp(this.index);
    const known = this.memory.filesTree;
    if (changed === 0 && known && known.stamp === stamp) return known.tree;
    const tree = await this.gitText(['write-tree']);
    this.memory.filesTree = { tree, stamp: await fileStamp(this.index) };
    return tree;
  }

  // -------------------------------------------------------------------------------------------
  // The workspace's git state
  // -------------------------------------------------------------------------------------------

  private get workspaceGitDir(): string {
    return path.join(this.cwd, '.git');
  }

  /** `undefined` when the workspace has no `.git` directory (none, or a linked worktree's `.git` file). */
  private async readGitState(warnings: string[]): Promise<StateFile[] | undefined> {
    const gitDir = this.workspaceGitDir;
    const info = await lstat(gitDir).catch(() => undefined);
    if (!info) return undefined;
    if (!info.isDirectory()) {
      warnings.push('.git is not a directory (a linked worktree or submodule): its git state is not captured');
      return undefined;
    }
    if (await exists(path.join(gitDir, 'reftable'))) {
      warnings.push('the workspace repository stores refs in a reftable: its git state is not captured');
      return undefined;
    }
    const files: StateFile[] = [];
    for (const name of ['HEAD', 'packed-refs', 'index', ...PSEUDO_REFS]) {
      const content = await readRegular(path.join(gitDir, name));
      if (content) files.push({ name, content });
    }
    for (const name of await listFiles(gitDir, 'refs')) {
      if (name.endsWith('.lock')) continue;
      const content = await readRegular(path.join(gitDir, name));
      if (content) files.push({ name, content });
    }
    return files;
  }

  /**
   * The objects the workspace's refs name must outlive the workspace's own gc, or a restore would
   * point HEAD at a commit that is gone. The store cannot borrow them (an alternate pointing at the
   * workspace breaks when the workspace prunes), so it copies them: `pack-objects` run in the store
   * with the workspace's object directory as a temporary alternate packs what the new tips reach
   * and the store lacks, into the store. Unlike `git fetch` from the workspace, no command runs
   * with the workspace's repository (and so its config, which Bash may write) as its own.
   * Each copied tip gets `refs/keep/<id>` (removed by prune when no checkpoint names it).
   */
  private async captureGitState(filesTree: string, warnings: string[]): Promise<GitStateCache | undefined> {
    const files = await this.readGitState(warnings);
    if (!files) return undefined;
    const key = createHash('sha256');
    for (const file of files) key.update(`${file.name}\0${file.content.length}\0`).update(file.content);
    const digest = key.digest('hex');
    const cached = await readJson<GitStateCache>(this.stateCacheFile);
    if (cached?.key === digest) return cached;

    const tips = [...new Set(files.flatMap((file) => tipsOf(file)))].sort();
    const objects = path.join(this.workspaceGitDir, 'objects');
    const alternate = { GIT_ALTERNATE_OBJECT_DIRECTORIES: objects };
    const sha256 = tips.some((tip) => tip.length !== 40);
    if (sha256) warnings.push('the workspace repository uses SHA-256 object ids: its objects are not copied into the store');

    let indexTree: string | undefined;
    const index = files.find((file) => file.name === 'index');
    if (index && !sha256) {
      const copy = path.join(this.dir, `workspace-index.${process.pid}.tmp`);
      try {
        await writeFile(copy, index.content);
        indexTree = await this.gitText(['write-tree'], { env: { ...alternate, GIT_INDEX_FILE: copy } });
      } catch (error) {
        warnings.push(`the workspace index's objects are not kept (${firstLine(error)})`);
      } finally {
        await rm(copy, { force: true });
      }
    }

    if (!sha256) {
      const keep = await this.keepSet();
      const missing = tips.filter((tip) => !keep.has(tip));
      if (missing.length || indexTree) {
        try {
          await this.mergeShallow();
          const revs = [...missing, ...(indexTree ? [indexTree] : []), '--not', filesTree, ...keep, ''].join('\n');
          await this.git(['pack-objects', '--revs', '--quiet', path.join(this.dir, 'objects', 'pack', 'pack')], { input: revs, env: alternate });
          if (missing.length) {
            await this.git(['update-ref', '--stdin'], { input: missing.map((tip) => `update refs/keep/${tip} ${tip}\n`).join('') });
            for (const tip of missing) keep.add(tip);
          }
        } catch (error) {
          warnings.push(`the workspace's objects were not copied into the store (${firstLine(error)})`);
          // write-tree may have answered from the index's cache-tree, naming trees only the workspace holds.
          indexTree = undefined;
        }
      }
    }

    // The raw files, as a tree: written out and hashed by update-index on a scratch index.
    const scratch = path.join(this.dir, `state.${process.pid}.tmp`);
    const scratchIndex = `${scratch}.index`;
    try {
      await rm(scratch, { recursive: true, force: true });
      const names: string[] = [];
      for (const file of [
        ...files.map((file) => ({ name: `git/${file.name}`, content: file.content })),
        { name: 'tips', content: Buffer.from(tips.join('\n')) },
      ]) {
        const target = path.join(scratch, file.name);
        await mkdir(path.dirname(target), { recursive: true });
        await writeFile(target, file.content);
        names.push(file.name);
      }
      const env = { GIT_WORK_TREE: scratch, GIT_INDEX_FILE: scratchIndex };
      await this.git(['update-index', '-z', '--add', '--stdin'], { input: names.join('\0'), env, cwd: scratch });
      const stateTree = await this.gitText(['write-tree'], { env, cwd: scratch });
      const state: GitStateCache = { key: digest, stateTree, ...(indexTree ? { indexTree } : {}) };
      await writeFile(this.stateCacheFile, JSON.stringify(state));
      return state;
    } finally {
      await rm(scratch, { recursive: true, force: true });
      await rm(scratchIndex, { force: true });
    }
  }

  /** A shallow workspace's boundary commits, so the store's own walks stop where the workspace's history does. */
  private async mergeShallow(): Promise<void> {
    const theirs = await readText(path.join(this.workspaceGitDir, 'shallow'));
    if (!theirs) return;
    const file = path.join(this.dir, 'shallow');
    const ours = (await readText(file)) ?? '';
    const merged = [...new Set([...ours.split('\n'), ...theirs.split('\n')].filter((line) => OBJECT_ID.test(line)))].sort();
    const text = merged.length ? `${merged.join('\n')}\n` : '';
    if (text !== ours) await writeFile(file, text);
  }

  private async keepSet(): Promise<Set<string>> {
    if (!this.memory.keep) {
      const text = await this.gitText(['for-each-ref', '--format=%(objectname)', 'refs/keep/']);
      this.memory.keep = new Set(text ? text.split('\n') : []);
    }
    return this.memory.keep;
  }

  // -------------------------------------------------------------------------------------------
  // take
  // -------------------------------------------------------------------------------------------

  take(label: CheckpointLabel): Promise<TakeResult> {
    if (!label.conversationId) throw new Error('checkpoints: a label needs a conversationId');
    return this.exclusive(async () => {
      const started = performance.now();
      await this.init();
      try {
        return await this.takeOnce(label, started);
      } catch (error) {
        // Remembered trees may have been pruned by another process: retry once from what is on disk.
        this.forget();
        await rm(this.stateCacheFile, { force: true });
        if (String(error).includes('git commit-tree failed') || String(error).includes('git mktree failed')) return this.takeOnce(label, started);
        throw error;
      }
    });
  }

  private async takeOnce(label: CheckpointLabel, started: number): Promise<TakeResult> {
    const warnings: string[] = [];
    await this.removeStaleIndexLock(warnings);
    const scan = await this.scan();
    const filesTree = await this.writeFilesTree(scan.changed);
    const state = await this.captureGitState(filesTree, warnings);
    const root = await this.rootTree(filesTree, state);
    const stored: StoredCheckpointLabel = { ...label, at: new Date().toISOString() };
    const subject = `checkpoint ${label.reason}${label.toolUseId ? ` ${label.toolUseId}` : ''}`.replace(/\s+/g, ' ');
    const message = `${subject}\n\n${LABEL_TRAILER}${JSON.stringify(stored)}\n`;
    const id = await this.gitText(['commit-tree', root, '-F', '-'], { input: message });
    const seq = await this.createRef(label.conversationId, id);
    return {
      id,
      seq,
      tree: filesTree,
      files: await indexEntryCount(this.index),
      ...(scan.changed ? { bytesAdded: scan.bytes } : { bytesAdded: 0 }),
      ms: Math.round((performance.now() - started) * 10) / 10,
      skipped: scan.skipped,
      warnings,
    };
  }

  /**
   * A process killed while it wrote the private index leaves its lock behind, and every later
   * checkpoint would fail on it. Writing the index takes seconds at most: a lock older than
   * STALE_LOCK_MS is a dead writer's.
   */
  private async removeStaleIndexLock(warnings: string[]): Promise<void> {
    const lock = `${this.index}.lock`;
    const info = await stat(lock).catch(() => undefined);
    if (!info || Date.now() - info.mtimeMs < STALE_LOCK_MS) return;
    await rm(lock, { force: true });
    warnings.push(`removed a stale lock of the checkpoint index (${Math.round((Date.now() - info.mtimeMs) / 1000)} s old, left by a process that died)`);
  }

  private async rootTree(filesTree: string, state: GitStateCache | undefined): Promise<string> {
    const key = `${filesTree} ${state?.stateTree ?? ''} ${state?.indexTree ?? ''}`;
    const known = this.memory.roots.get(key);
    if (known) return known;
    const entries = [`040000 tree ${filesTree}\tfiles`];
    if (state) entries.push(`040000 tree ${state.stateTree}\tstate`);
    if (state?.indexTree) entries.push(`040000 tree ${state.indexTree}\tindex-tree`);
    const root = await this.gitText(['mktree'], { input: `${entries.join('\n')}\n` });
    this.memory.roots.set(key, root);
    return root;
  }

  /** The next `refs/checkpoints/<conversation>/<seq>`, created only if absent (another process may take one too). */
  private async createRef(conversationId: string, id: string): Promise<number> {
    const prefix = `refs/checkpoints/${encodeRefComponent(conversationId)}/`;
    for (let attempt = 0; ; attempt++) {
      let last = this.memory.seqs.get(conversationId);
      if (last === undefined || attempt > 0) {
        const names = await this.gitText(['for-each-ref', '--format=%(refname)', prefix]);
        last = Math.max(0, ...(names ? names.split('\n') : []).map((name) => Number(name.slice(prefix.length))).filter(Number.isInteger));
      }
      const seq = last + 1;
      try {
        await this.git(['update-ref', `${prefix}${seq}`, id, '']);
        this.memory.seqs.set(conversationId, seq);
        return seq;
      } catch (error) {
        if (attempt >= 5) throw error;
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // restore
  // -------------------------------------------------------------------------------------------

  private async checkpointTrees(id: string): Promise<{ files: string; state?: string; indexTree?: string }> {
    if (!OBJECT_ID.test(id)) throw new Error(`checkpoints: not a checkpoint id: ${JSON.stringify(id)}`);
    let listing: Buffer;
    try {
      listing = await this.git(['ls-tree', '-z', `${id}^{commit}`]);
    } catch {
      throw new Error(`checkpoints: unknown checkpoint ${id}`);
    }
    const trees: Record<string, string> = {};
    for (const entry of splitNul(listing)) {
      const match = /^\d+ tree ([0-9a-f]+)\t(.*)$/s.exec(entry.toString('utf8'));
      if (match) trees[match[2]] = match[1];
    }
    if (!trees.files) throw new Error(`checkpoints: ${id} is not a checkpoint`);
    return { files: trees.files, state: trees.state, indexTree: trees['index-tree'] };
  }

  restore(id: string): Promise<RestoreResult> {
    return this.exclusive(async () => {
      await this.init();
      const trees = await this.checkpointTrees(id);
      const warnings: string[] = [];
      const gitDir = this.workspaceGitDir;
      for (const lock of ['index.lock', 'HEAD.lock', 'packed-refs.lock']) {
        if (trees.state && (await exists(path.join(gitDir, lock))))
          throw new Error(`checkpoints: a git command is running in the workspace (${lock}); not restoring`);
      }
      const scan = await this.scan();
      // tree → index: A = present now, not in the checkpoint; D = in the checkpoint, gone now.
      const changes = parseNameStatus(await this.git(['diff-index', '--cached', '-z', '--no-renames', '--name-status', trees.files]));
      const removed = changes.filter((change) => change.status === 'added').length;
      const restored = changes.length - removed;
      if (changes.length) await this.git(['read-tree', '-u', '--reset', trees.files]);
      this.memory.filesTree = undefined;
      const excluded = splitNul(await this.git(['ls-files', '-z', '--others', '--ignored', '--directory', `--exclude-from=${this.excludeFile}`])).map((entry) =>
        entry.toString('utf8'),
      );
      // An oversized file the checkpoint holds (it was small then) was just written back: not left alone.
      const written = new Set(changes.filter((change) => change.status === 'deleted').map((change) => change.path));
      const leftAlone = [...scan.skipped.map((entry) => entry.path), ...excluded].filter((entry) => entry !== '.git/' && !written.has(entry)).sort();
      let gitState = false;
      if (trees.state) {
        gitState = await this.restoreGitState(trees.state, trees.indexTree, warnings);
        await rm(this.stateCacheFile, { force: true });
      }
      return { restored, removed, gitState, leftAlone, warnings };
    });
  }

  private async restoreGitState(stateTree: string, indexTree: string | undefined, warnings: string[]): Promise<boolean> {
    const gitDir = this.workspaceGitDir;
    const info = await lstat(gitDir).catch(() => undefined);
    if (!info?.isDirectory()) {
      warnings.push('the checkpoint has git state but the workspace has no .git directory now: git state not restored');
      return false;
    }
    const entries = await this.readTreeBlobs(stateTree);
    const tips = (entries.get('tips')?.toString('utf8') ?? '').split('\n').filter((tip) => OBJECT_ID.test(tip));
    await this.returnObjects(tips, indexTree, warnings);

    const captured = new Map<string, Buffer>();
    for (const [name, content] of entries) if (name.startsWith('git/')) captured.set(name.slice(4), content);
    // Refs first, HEAD last: at every moment HEAD names something that exists.
    const packed = captured.get('packed-refs');
    if (packed) await writeAtomically(path.join(gitDir, 'packed-refs'), packed);
    else await rm(path.join(gitDir, 'packed-refs'), { force: true });
    const loose = (await listFiles(gitDir, 'refs')).filter((name) => !name.endsWith('.lock'));
    for (const [name, content] of captured) if (name.startsWith('refs/')) await writeAtomically(path.join(gitDir, name), content);
    for (const name of loose) if (!captured.has(name)) await unlink(path.join(gitDir, name)).catch(() => undefined);
    await removeEmptyDirectories(path.join(gitDir, 'refs'), new Set(['heads', 'tags']));
    for (const name of ['index', ...PSEUDO_REFS]) {
      const content = captured.get(name);
      if (content) await writeAtomically(path.join(gitDir, name), content);
      else await rm(path.join(gitDir, name), { force: true });
    }
    const head = captured.get('HEAD');
    if (head) await writeAtomically(path.join(gitDir, 'HEAD'), head);
    return true;
  }

  /** Objects the captured git state names that the workspace lost (its gc ran): packed back into it from the store. */
  private async returnObjects(tips: string[], indexTree: string | undefined, warnings: string[]): Promise<void> {
    if (!tips.length && !indexTree) return;
    const wanted = [...tips];
    if (indexTree) {
      for (const entry of splitNul(await this.git(['ls-tree', '-r', '-z', indexTree]))) {
        const match = /^100\d{3} blob ([0-9a-f]+)\t/.exec(entry.toString('latin1'));
        if (match) wanted.push(match[1]);
      }
    }
    const unique = [...new Set(wanted)];
    const objects = path.join(this.workspaceGitDir, 'objects');
    // Looked up in the workspace's object directory alone (the store is the repository: its config, not the workspace's).
    const check = await this.git(['cat-file', '--batch-check=%(objectname)'], {
      input: `${unique.join('\n')}\n`,
      env: { GIT_OBJECT_DIRECTORY: objects },
    });
    const lines = check.toString('utf8').split('\n');
    const missing = unique.filter((_, index) => lines[index]?.endsWith(' missing'));
    if (!missing.length) return;
    const present = tips.filter((tip) => !missing.includes(tip));
    try {
      await mkdir(path.join(objects, 'pack'), { recursive: true });
      await this.git(['pack-objects', '--revs', '--quiet', path.join(objects, 'pack', 'pack')], {
        input: [...missing, '--not', ...present, ''].join('\n'),
      });
    } catch (error) {
      warnings.push(`objects the workspace lost could not be put back (${firstLine(error)})`);
    }
  }

  /** Blobs of a tree, by path: `ls-tree -r` then one `cat-file --batch`. */
  private async readTreeBlobs(tree: string): Promise<Map<string, Buffer>> {
    const listing: Array<{ name: string; id: string }> = [];
    for (const entry of splitNul(await this.git(['ls-tree', '-r', '-z', tree]))) {
      const text = entry.toString('utf8');
      const tab = text.indexOf('\t');
      const [, type, id] = text.slice(0, tab).split(' ');
      if (type === 'blob') listing.push({ name: text.slice(tab + 1), id });
    }
    const result = new Map<string, Buffer>();
    if (!listing.length) return result;
    const output = await this.git(['cat-file', '--batch'], { input: `${listing.map((entry) => entry.id).join('\n')}\n` });
    let offset = 0;
    for (const entry of listing) {
      const newline = output.indexOf(0x0a, offset);
      const size = Number(output.subarray(offset, newline).toString('latin1').split(' ')[2]);
      result.set(entry.name, output.subarray(newline + 1, newline + 1 + size));
      offset = newline + 1 + size + 1;
    }
    return result;
  }

  // -------------------------------------------------------------------------------------------
  // diff, list, prune, materialize
  // -------------------------------------------------------------------------------------------

  diff(fromId: string, toId?: string): Promise<CheckpointChange[]> {
    return this.exclusive(async () => {
      await this.init();
      const from = await this.checkpointTrees(fromId);
      if (toId) {
        const to = await this.checkpointTrees(toId);
        return parseNameStatus(await this.git(['diff-tree', '-r', '-z', '--no-renames', '--name-status', from.files, to.files]));
      }
      await this.scan();
      return parseNameStatus(await this.git(['diff-index', '--cached', '-z', '--no-renames', '--name-status', from.files]));
    });
  }

  private async allCheckpoints(prefix: string): Promise<Array<CheckpointInfo & { ref: string }>> {
    const output = await this.git(['for-each-ref', '--format=%(refname)%00%(objectname)%00%(creatordate:unix)%00%(contents)%00', prefix]);
    const result: Array<CheckpointInfo & { ref: string }> = [];
    for (const record of output.toString('utf8').split('\0\n')) {
      const [ref, id, date, contents] = record.split('\0');
      if (!ref || !id) continue;
      const trailer = contents
        ?.split('\n')
        .reverse()
        .find((line) => line.startsWith(LABEL_TRAILER));
      let label: StoredCheckpointLabel;
      try {
        label = JSON.parse(trailer!.slice(LABEL_TRAILER.length)) as StoredCheckpointLabel;
      } catch {
        label = { conversationId: decodeRefComponent(ref.split('/')[2]), reason: 'unknown', at: new Date(Number(date) * 1000).toISOString() };
      }
      result.push({ ref, id, seq: Number(ref.slice(ref.lastIndexOf('/') + 1)), label, time: label.at });
    }
    return result;
  }

  list(conversationId: string): Promise<CheckpointInfo[]> {
    return this.exclusive(async () => {
      await this.init();
      const checkpoints = await this.allCheckpoints(`refs/checkpoints/${encodeRefComponent(conversationId)}/`);
      return checkpoints.sort((a, b) => a.seq - b.seq).map(({ id, seq, label, time }) => ({ id, seq, label, time }));
    });
  }

  /**
   * Keeps, per conversation, the newest `keepPerConversation` checkpoints no older than
   * `maxAgeDays`; deletes the other refs, the `refs/keep/` refs no remaining checkpoint names, and
   * then everything unreachable (`git gc --prune=now`). Not to be run while another process takes
   * checkpoints of the same workspace: a checkpoint being written is not reachable yet.
   */
  prune(options: PruneOptions = {}): Promise<PruneResult> {
    return this.exclusive(async () => {
      await this.init();
      const keepCount = options.keepPerConversation ?? DEFAULT_KEEP_PER_CONVERSATION;
      const maxAgeMs = (options.maxAgeDays ?? DEFAULT_MAX_AGE_DAYS) * 86_400_000;
      const now = options.now === undefined ? Date.now() : Number(options.now);
      // Per conversation, the checkpoints before tools apart from the others (before prompts, rewinds, forks):
      // a busy turn's tool checkpoints never push out the prompts a rewind goes back to.
      const byConversation = new Map<string, Array<CheckpointInfo & { ref: string }>>();
      for (const checkpoint of await this.allCheckpoints('refs/checkpoints/')) {
        const group = `${checkpoint.ref.split('/')[2]} ${checkpoint.label.reason === 'before-tool' ? 'tool' : 'other'}`;
        byConversation.set(group, [...(byConversation.get(group) ?? []), checkpoint]);
      }
      const doomed: string[] = [];
      const kept: string[] = [];
      for (const checkpoints of byConversation.values()) {
        checkpoints.sort((a, b) => b.seq - a.seq);
        checkpoints.forEach((checkpoint, index) => {
          const age = now - Date.parse(checkpoint.time);
          if (index < keepCount && !(age > maxAgeMs)) kept.push(checkpoint.id);
          else doomed.push(checkpoint.ref);
        });
      }
      if (doomed.length) await this.git(['update-ref', '--stdin'], { input: doomed.map((ref) => `delete ${ref}\n`).join('') });

      const named = new Set<string>();
      if (kept.length) {
        const output = await this.git(['cat-file', '--batch'], { input: kept.map((id) => `${id}:state/tips\n`).join('') });
        for (const line of output.toString('utf8').split('\n')) if (OBJECT_ID.test(line)) named.add(line);
      }
      const keepRefs = await this.gitText(['for-each-ref', '--format=%(refname)', 'refs/keep/']);
      const unnamed = (keepRefs ? keepRefs.split('\n') : []).filter((ref) => !named.has(ref.slice('refs/keep/'.length)));
      if (unnamed.length) await this.git(['update-ref', '--stdin'], { input: unnamed.map((ref) => `delete ${ref}\n`).join('') });

      await this.git(['reflog', 'expire', '--expire=now', '--all']);
      // The private index is a gc root: the blobs of the working tree as last scanned stay. With a
      // grace period, objects younger than it stay too (a checkpoint another process is writing).
      const grace = options.graceSeconds ?? 0;
      await this.git(['gc', grace > 0 ? `--prune=${grace}.seconds.ago` : '--prune=now', '--quiet']);
      await rm(path.join(this.dir, 'objects', 'info', 'commit-graph'), { force: true });
      await rm(path.join(this.dir, 'objects', 'info', 'commit-graphs'), { recursive: true, force: true });
      this.forget();
      await rm(this.stateCacheFile, { force: true });
      return { deleted: doomed.length, kept: kept.length };
    });
  }

  materialize(id: string, targetDir: string, options: { withGit?: boolean } = {}): Promise<{ files: number; git: boolean }> {
    return this.exclusive(async () => {
      await this.init();
      const trees = await this.checkpointTrees(id);
      const target = path.resolve(targetDir);
      await mkdir(target, { recursive: true });
      if ((await readdir(target)).length) throw new Error(`checkpoints: ${target} is not empty`);
      const index = path.join(this.dir, `materialize.${process.pid}.${Date.now()}.index`);
      let files: number;
      try {
        await this.git(['read-tree', '-u', '--reset', trees.files], { env: { GIT_WORK_TREE: target, GIT_INDEX_FILE: index }, cwd: target });
        files = await indexEntryCount(index);
      } finally {
        await rm(index, { force: true });
      }
      const git =
        options.withGit === true && trees.state !== undefined && (await this.materializeGit(trees.state, trees.indexTree, path.join(target, '.git'), target));
      return { files, git };
    });
  }

  /**
   * A fork's repository (issue 31): a new `.git` of its own with the checkpoint's HEAD, refs,
   * index and merge state, and every object those reach, packed from the store (which holds them:
   * it copied what each checkpoint's tips reach). No config, hooks or reflogs of the original.
   */
  private async materializeGit(stateTree: string, indexTree: string | undefined, gitDir: string, target: string): Promise<boolean> {
    const entries = await this.readTreeBlobs(stateTree);
    const tips = (entries.get('tips')?.toString('utf8') ?? '').split('\n').filter((tip) => OBJECT_ID.test(tip));
    if (tips.some((tip) => tip.length !== 40)) return false; // SHA-256: the store does not hold its objects
    await this.git(['init', '-q', '--template=', target], { noRepository: true, cwd: target });
    const pack = path.join(gitDir, 'objects', 'pack', 'pack');
    // What the refs reach, and the blobs only the index names (staged, never committed).
    const wanted = [...tips, ...(indexTree ? [indexTree] : [])];
    // No delta search (--window=0): a fork wants its repository now, not smallest; its own gc packs it tighter later.
    if (wanted.length) await this.git(['pack-objects', '--revs', '--quiet', '--window=0', pack], { input: `${wanted.join('\n')}\n` });
    for (const [name, content] of entries) {
      if (!name.startsWith('git/')) continue;
      const file = path.join(gitDir, name.slice(4));
      await mkdir(path.dirname(file), { recursive: true });
      await writeAtomically(file, content);
    }
    return true;
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** Conversation ids in ref names, reversibly: bytes outside [A-Za-z0-9_-] as %XX. */
export function encodeRefComponent(value: string): string {
  let result = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const char = String.fromCharCode(byte);
    result += /[A-Za-z0-9_-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return result;
}

export function decodeRefComponent(value: string): string {
  return Buffer.from(
    value.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  ).toString('utf8');
}

function tipsOf(file: StateFile): string[] {
  const text = file.content.toString('latin1');
  if (file.name === 'packed-refs') return text.split('\n').flatMap((line) => (/^[0-9a-f]{40,64} /.test(line) ? [line.split(' ')[0]] : []));
  if (file.name.startsWith('refs/') || TIP_FILES.has(file.name)) {
    return text
      .split('\n')
      .map((line) => line.trim().split(/\s/)[0])
      .filter((word) => OBJECT_ID.test(word));
  }
  return [];
}

function parseNameStatus(output: Buffer): CheckpointChange[] {
  const parts = output.toString('utf8').split('\0');
  const changes: CheckpointChange[] = [];
  for (let index = 0; index + 1 < parts.length; index += 2) {
    const code = parts[index][0];
    changes.push({ path: parts[index + 1], status: code === 'A' ? 'added' : code === 'D' ? 'deleted' : 'modified' });
  }
  return changes;
}

function splitNul(buffer: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let end = buffer.indexOf(0); end !== -1; end = buffer.indexOf(0, start)) {
    if (end > start) parts.push(buffer.subarray(start, end));
    start = end + 1;
  }
  if (start < buffer.length) parts.push(buffer.subarray(start));
  return parts;
}

function joinNul(parts: Buffer[]): Buffer {
  const zero = Buffer.alloc(1);
  return Buffer.concat(parts.flatMap((part) => [part, zero]));
}

/** Entries in an index file: its header's count (big-endian at byte 8). */
async function indexEntryCount(file: string): Promise<number> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return 0;
  try {
    const header = Buffer.alloc(12);
    const { bytesRead } = await handle.read(header, 0, 12, 0);
    return bytesRead === 12 ? header.readUInt32BE(8) : 0;
  } finally {
    await handle.close();
  }
}

/** Files under `root/relative`, as '/'-separated paths relative to `root`; regular files only. */
async function listFiles(root: string, relative: string): Promise<string[]> {
  const entries = await readdir(path.join(root, relative), { withFileTypes: true }).catch(() => []);
  const result: string[] = [];
  for (const entry of entries) {
    const name = `${relative}/${entry.name}`;
    if (entry.isDirectory()) result.push(...(await listFiles(root, name)));
    else if (entry.isFile()) result.push(name);
  }
  return result.sort();
}

async function removeEmptyDirectories(directory: string, keep: Set<string>, depth = 0): Promise<void> {
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const child = path.join(directory, entry.name);
    await removeEmptyDirectories(child, keep, depth + 1);
    if (depth === 0 && keep.has(entry.name)) continue;
    await rmdir(child).catch(() => undefined);
  }
}

/** Atomic (rename), and not at all when the file already holds `content`: a restore touches only what differs. */
async function writeAtomically(file: string, content: Buffer): Promise<void> {
  const current = await readFile(file).catch(() => undefined);
  if (current?.equals(content)) return;
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.checkpoint-${process.pid}.tmp`;
  await writeFile(temporary, content);
  await rename(temporary, file);
}

async function readRegular(file: string): Promise<Buffer | undefined> {
  const info = await lstat(file).catch(() => undefined);
  return info?.isFile() ? readFile(file).catch(() => undefined) : undefined;
}

/** Size, mtime and inode of a file: it changed when this changes. */
async function fileStamp(file: string): Promise<string> {
  const info = await stat(file, { bigint: true }).catch(() => undefined);
  return info ? `${info.size}:${info.mtimeNs}:${info.ino}` : 'absent';
}

async function readText(file: string): Promise<string | undefined> {
  return readFile(file, 'utf8').catch(() => undefined);
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

async function exists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    () => false,
  );
}

function firstLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error).split('\n')[0];
}
