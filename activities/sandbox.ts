/**
 * The OS sandbox: the boundary, whatever the permission rules thought of a command (issue 17 §10,
 * issue 29; Claude Code's sandboxed Bash uses bubblewrap on Linux too). A command the parser
 * misjudges still cannot reach:
 * - anything outside the working directories for writing: the root filesystem read-only, the
 *   working directories and a private /tmp writable;
 * - what runs code later outside it: every protected path (`.git` whole, `.claude`, `.mcp.json`,
 *   `.envrc`, `.husky`, `.vscode`, … in every writable root; shell start-up files and git's config
 *   in a writable home) read-only whether or not it exists (an absent one gets an empty placeholder
 *   while commands run: mount points cannot be created, renamed or replaced);
 * - the worker's services: no network of its own (`--unshare-net`, so not the Temporal server nor
 *   any loopback service); allowed domains only through the proxy (sandbox-network.ts), which
 *   never connects to this host's addresses;
 * - secrets: `~/.ssh` and the like, the state directory, the encryption key file, the Temporal
 *   envconfig profile and TLS files, the dev server's database, `~/.claude.json` and container-engine
 *   sockets hidden; the environment carries no credential (shell.ts `toolProcessEnvironment`);
 * - the host's kernel settings and other processes: its own PID and IPC namespaces with a fresh
 *   /proc whose host-wide writable entries (`/proc/sys`, `/proc/sysrq-trigger`, …) are read-only; no
 *   capabilities; an ordinary user inside when the worker runs as root and the host allows it.
 * git inside runs with its repository config neutralised (SANDBOX_GIT_CONFIG). Every Bash command,
 * background command and hook starts this way (activities/shell.ts runs it), and a project's stdio
 * MCP servers (activities/mcp/connections.ts, `sandboxedArgv`).
 */
import { execFile, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, realpath, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { anchorPathRule } from '../common/path-rules';
import { PROTECTED_DIRECTORIES, PROTECTED_HOME_FILES, PROTECTED_WORKSPACE_FILES } from '../common/permission-rules';
import type { SettingSource } from '../common/permissions';
import { DEFAULT_DB_FILENAME, REPO_ROOT } from '../infra/dev-server';
import { temporalCacheRoot } from '../infra/temporal-cli';
import { type AskDomain, PROXY_MOUNT, proxyForwarder, startDomainProxy } from './sandbox-network';
import { SANDBOX_EXEC_WITH_FORWARDER, type SandboxLaunch, findOnPath, runShellCommand } from './shell';
import type { BashFacts } from '../common/permission-facts';
import { gatherBashFacts } from './permission-facts/bash-facts';
import { resolvePathFact } from './permission-facts/paths';
import { isExcludedCommand, isInside, loadSandboxSettings } from './sandbox-settings';
import { workspaceStateDir } from './tool-journal';

/** Worker environment variable: `off` runs every command unsandboxed (an operator's choice, like the user's settings). */
export const SANDBOX_ENVIRONMENT_VARIABLE = 'DURABLE_AGENT_SANDBOX';
/** Worker environment variable: the bubblewrap binary to use (default: `bwrap` on PATH). */
export const BWRAP_PATH_VARIABLE = 'DURABLE_AGENT_BWRAP';

/** Under the home directory: credentials and tokens a command never needs to read. */
export const HIDDEN_HOME_PATHS = [
  '.ssh',
  '.aws',
  '.gnupg',
  '.config/gcloud',
  '.kube',
  '.docker',
  '.netrc',
  '.npmrc',
  '.git-credentials',
  '.config/gh',
  '.pypirc',
  '.azure',
  '.claude/.credentials.json',
  // Claude Code's per-project state, trust included: a command that wrote it would trust a workspace.
  '.claude.json',
  // The Temporal CLI's envconfig profiles (an API key, TLS files, the server's address).
  '.config/temporalio',
] as const;

/** Sockets that hand out root on the host (a read-only mount does not stop connect()). */
export const HIDDEN_SOCKETS = ['/var/run/docker.sock', '/run/docker.sock', '/run/containerd/containerd.sock', '/run/podman/podman.sock'] as const;

/**
 * Where services keep their unix sockets (the system bus, systemd, postgres, libvirt, containerd,
 * tailscale, each user's runtime directory with its ssh and gpg agents): hidden whole, since a
 * read-only mount does not stop connect(). Its top-level links (NixOS's `current-system`, `shm`)
 * are made again inside, and RUNTIME_KEPT mounted back read-only.
 */
const RUNTIME_DIRECTORY = '/run';
/** Inside the hidden runtime directory, what programs run from (NixOS's setuid wrappers on PATH). */
const RUNTIME_KEPT = ['/run/wrappers'] as const;

/**
 * Read-only in every writable root, whether or not they exist yet (an absent one gets an empty
 * placeholder for the command's duration): what git, the agent, editors and package managers run
 * or obey later outside the sandbox. The names are the permission engine's (common/permission-rules.ts),
 * so Write/Edit to them ask and Bash cannot change them at all.
 */
const PROTECTED_WORKSPACE_PATHS: ReadonlyArray<{ name: string; kind: PlaceholderKind }> = [
  ...PROTECTED_DIRECTORIES.map((name) => ({ name, kind: 'directory' as const })),
  ...PROTECTED_WORKSPACE_FILES.map((name) => ({ name, kind: 'file' as const })),
];
/** Read-only under the home directory when it is writable (the workspace is home): shell start-up files and git's config. */
const PROTECTED_HOME_PATHS: ReadonlyArray<{ name: string; kind: PlaceholderKind }> = [
  ...PROTECTED_HOME_FILES.map((name) => ({ name, kind: 'file' as const })),
  { name: '.config/git', kind: 'directory' },
];

/** Host-wide entries of a fresh /proc that a process of any namespace could write (`/proc/sys/kernel/core_pattern` runs as root on the host). */
const PROC_READ_ONLY = ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus', '/proc/fs'] as const;

/** The user a command runs as when the worker runs as root and the host allows a user namespace (mapped to the worker's uid: files keep its ownership). */
const SANDBOX_USER = { uid: 1000, gid: 1000 } as const;

/**
 * git inside the sandbox ignores what a repository's own files could make it run or trust
 * (`GIT_CONFIG_COUNT` outranks every config file): a bare repository made of plain files in a
 * subfolder is not discovered, and no fsmonitor starts.
 */
const SANDBOX_GIT_CONFIG: ReadonlyArray<readonly [string, string]> = [
  ['safe.bareRepository', 'explicit'],
  ['core.fsmonitor', 'false'],
];

/** Where a placeholders' ignore file is mounted inside the sandbox (its private /tmp). */
export const GIT_EXCLUDES_MOUNT = '/tmp/.durable-agent-git-excludes';

/** `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` for SANDBOX_GIT_CONFIG (and the placeholders' ignore file, when there is one). */
export function sandboxGitEnvironment(excludesFile?: string): Record<string, string> {
  const entries = [...SANDBOX_GIT_CONFIG, ...(excludesFile ? [['core.excludesFile', excludesFile] as const] : [])];
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(entries.length) };
  entries.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return env;
}

/** What a sandboxed command may see and touch. All paths are absolute, real and existing. */
export interface SandboxPlan {
  cwd: string;
  writable: string[];
  /** Inside writable directories, kept read-only (protected paths, placeholders included). */
  readOnly: string[];
  /** Replaced by an empty read-only directory. */
  hiddenDirectories: string[];
  /** Replaced by an empty file (/dev/null). */
  hiddenFiles: string[];
  /** Exposed read-only again inside a hidden directory (this workspace's persisted tool results). */
  reexposed: string[];
  /** Symbolic links made again inside a hidden directory (the runtime directory's own). */
  symlinks?: Array<{ path: string; target: string }>;
  /** The allowed-domains proxy's socket directory, mounted read-only at PROXY_MOUNT. Absent: no network at all. */
  proxyDirectory?: string;
  /** A file mounted read-only at GIT_EXCLUDES_MOUNT (git's excludes: the user's, plus the placeholders). */
  gitExcludes?: string;
  /** Run as this user in a user namespace (only when the worker is root and the host allows it). */
  user?: { uid: number; gid: number };
}

type MountKind = 'bind' | 'reexpose' | 'ro-bind' | 'hide-directory' | 'hide-file';
/** At equal depth, later kinds win (hiding beats exposing). */
const KIND_ORDER: Record<MountKind, number> = { bind: 0, 'ro-bind': 1, 'hide-directory': 2, 'hide-file': 3, reexpose: 4 };
const MOUNT_ARGUMENTS: Record<MountKind, (entry: string) => string[]> = {
  bind: (entry) => ['--bind', entry, entry],
  'ro-bind': (entry) => ['--ro-bind', entry, entry],
  reexpose: (entry) => ['--ro-bind', entry, entry],
  'hide-directory': (entry) => ['--tmpfs', entry],
  'hide-file': (entry) => ['--ro-bind', '/dev/null', entry],
};

/**
 * bwrap's arguments for a plan (pure). Mounts are applied shallowest first, so a deeper rule wins
 * over a shallower one whatever list it came from: a workspace inside a hidden state directory is
 * still writable, and `~/.ssh` stays hidden when the workspace is the home directory.
 */
export function bwrapArguments(plan: SandboxPlan): string[] {
  const mounts: Array<{ kind: MountKind; path: string }> = [
    ...plan.writable.map((entry) => ({ kind: 'bind' as const, path: entry })),
    ...plan.readOnly.map((entry) => ({ kind: 'ro-bind' as const, path: entry })),
    ...plan.hiddenDirectories.map((entry) => ({ kind: 'hide-directory' as const, path: entry })),
    ...plan.hiddenFiles.map((entry) => ({ kind: 'hide-file' as const, path: entry })),
    ...plan.reexposed.map((entry) => ({ kind: 'reexpose' as const, path: entry })),
  ].filter((mount) => mount.path !== '/' && !isInside(mount.path, '/proc') && !isInside(mount.path, '/dev'));
  const depth = (entry: string) => entry.split('/').filter(Boolean).length;
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || KIND_ORDER[a.kind] - KIND_ORDER[b.kind]);
  const args = plan.user ? ['--unshare-user', '--uid', String(plan.user.uid), '--gid', String(plan.user.gid)] : [];
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc');
  args.push(...PROC_READ_ONLY.flatMap((entry) => ['--ro-bind-try', entry, entry]));
  args.push('--tmpfs', '/tmp', '--unshare-pid');
  // Its own System V IPC and POSIX message queues: the worker's (its user's) shared memory and
  // queues would otherwise be its to read, change and remove (the sandbox user maps to the worker's).
  args.push('--unshare-ipc');
  // No network of its own, as Claude Code's sandbox: loopback is the sandbox's own, so the
  // worker's Temporal server and every local service are out of reach; allowed domains go
  // through the proxy's socket (PROXY_MOUNT).
  args.push('--unshare-net', '--die-with-parent');
  // A session of its own, with no controlling terminal: a process started with the worker's
  // terminal (a project's stdio MCP server is not detached) could otherwise push keystrokes into
  // it (TIOCSTI), which the person's shell or chat then reads as their own input, outside the sandbox.
  args.push('--new-session');
  // The worker may run as root: without this, the command could remount / read-write.
  args.push('--cap-drop', 'ALL');
  for (const mount of mounts) args.push(...MOUNT_ARGUMENTS[mount.kind](mount.path));
  for (const link of plan.symlinks ?? []) args.push('--symlink', link.target, link.path);
  if (plan.proxyDirectory) args.push('--ro-bind', plan.proxyDirectory, PROXY_MOUNT);
  if (plan.gitExcludes) args.push('--ro-bind', plan.gitExcludes, GIT_EXCLUDES_MOUNT);
  // A hidden directory's tmpfs is remounted read-only only after every mount point inside it was created.
  for (const mount of mounts) if (mount.kind === 'hide-directory') args.push('--remount-ro', mount.path);
  args.push('--chdir', plan.cwd);
  return args;
}

export { findOnPath, type SandboxLaunch } from './shell';

export interface SandboxAvailability {
  available: boolean;
  bwrap?: string;
  /** The user commands run as (a user namespace), when the worker is root and the host allows it. */
  user?: { uid: number; gid: number };
  /** Why not, when unavailable. */
  reason?: string;
}

let availability: Promise<SandboxAvailability> | undefined;
let unavailableWarned = false;

/**
 * Whether bubblewrap is installed and can start a sandbox here (user namespaces, mount
 * permissions), tried once per worker with the same options every command gets.
 */
export function sandboxAvailability(env: NodeJS.ProcessEnv = process.env): Promise<SandboxAvailability> {
  availability ??= probe(env);
  return availability;
}

/** Forget the cached probe (tests that change PATH or DURABLE_AGENT_BWRAP). */
export function resetSandboxAvailability(): void {
  availability = undefined;
  unavailableWarned = false;
}

async function probe(env: NodeJS.ProcessEnv): Promise<SandboxAvailability> {
  if (process.platform !== 'linux') return { available: false, reason: `the sandbox uses bubblewrap, which needs Linux (this is ${process.platform})` };
  const bwrap = env[BWRAP_PATH_VARIABLE] || (await findOnPath('bwrap', env.PATH ?? ''));
  if (!bwrap) return { available: false, reason: 'bubblewrap (bwrap) is not installed; install it (Debian/Ubuntu: apt-get install bubblewrap)' };
  const empty: SandboxPlan = { cwd: '/', writable: [], readOnly: [], hiddenDirectories: [], hiddenFiles: [], reexposed: [] };
  const attempt = (plan: SandboxPlan) =>
    new Promise<{ code: number | null; stderr: string; error?: Error }>((resolve) => {
      const child = spawn(bwrap, [...bwrapArguments(plan), 'true'], { cwd: os.tmpdir(), stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('error', (error) => resolve({ code: null, stderr, error }));
      child.once('close', (code) => resolve({ code, stderr }));
    });
  // As root, a user namespace makes the command an ordinary user inside (where the kernel allows one).
  if (process.getuid?.() === 0 && (await attempt({ ...empty, user: SANDBOX_USER })).code === 0) return { available: true, bwrap, user: { ...SANDBOX_USER } };
  const outcome = await attempt(empty);
  if (outcome.code === 0) return { available: true, bwrap };
  const why = outcome.error?.message ?? (outcome.stderr.trim() || `exit code ${outcome.code}`);
  return { available: false, bwrap, reason: `bubblewrap (${bwrap}) cannot start a sandbox here: ${why} (are unprivileged user namespaces disabled?)` };
}

export interface SandboxRequest {
  cwd: string;
  /** Working directories besides cwd (writable in the sandbox). */
  additionalDirectories?: readonly string[];
  settingSources?: readonly SettingSource[];
  /** Claude Code's `sandbox` object from the conversation's config (may weaken, like the user's settings). */
  config?: unknown;
  /** The Bash command (for `excludedCommands`); absent for hooks. */
  command?: string;
  /** Bash's `dangerouslyDisableSandbox`. */
  dangerouslyDisableSandbox?: boolean;
  /** The worker's state directory (hidden but for this workspace's persisted results). */
  stateDir?: string;
  /** No network whatever the settings allow (the worker's own programs: no proxy to start). */
  noNetwork?: boolean;
  /**
   * Asks the conversation whether a domain not in `allowedDomains` may be reached (someone can
   * answer): the proxy then runs even with an empty list. Absent: unlisted domains are refused.
   */
  askDomain?: AskDomain;
  /** `Read(…)` deny rules' contents (ToolAccess.readDeny): hidden in the sandbox too, where a path names them. */
  readDenyRules?: readonly string[];
  home?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * The paths `Read(…)` deny rules name, for the sandbox to hide (as Claude Code's sandbox uses the
 * permission rules). A mount needs a path, not a pattern: `Read(~/.secrets/**)`, `Read(//etc/x)`,
 * `Read(./.env)` and `Read(.env)` (the top-level one; deeper matches of a slash-less pattern and
 * other globs are left to the rule engine and the file tools).
 */
export function readDenyPaths(rules: readonly string[], cwd: string, home: string): string[] {
  const paths: string[] = [];
  for (const rule of rules) {
    const anchored = anchorPathRule(rule, { cwd, homeDir: home });
    if (!anchored) continue;
    let pattern = anchored.pattern.replace(/(^|\/)\*\*$/, '');
    if (pattern.startsWith('**/')) pattern = pattern.slice(3);
    if (/[*?[\]{}!]/.test(pattern)) continue;
    paths.push(pattern === '' ? anchored.root : path.join(anchored.root, pattern));
  }
  return paths;
}

export interface SandboxDecision {
  /** How to start the command sandboxed; absent: it runs unsandboxed (see `notices`). */
  launch?: SandboxLaunch;
  /** Set when the command must not run at all (no sandbox and `failIfUnavailable`). */
  refusal?: string;
  /**
   * Lines for the tool result: why a command ran unsandboxed when the user did not ask for it,
   * and settings keys that were ignored (a workspace file trying to weaken the sandbox).
   */
  notices: string[];
  /** One phrase for logs: `sandboxed (network off)`, `unsandboxed: sandbox.enabled is false`, … */
  description: string;
}

/** A command's parsed facts for `excludedCommands` (undefined when it cannot be examined: not excluded). */
async function commandFacts(command: string, cwd: string, home: string): Promise<BashFacts | undefined> {
  try {
    return await gatherBashFacts(command, { cwd, homeDir: home, resolve: (literal, base) => resolvePathFact(literal, base, home) });
  } catch {
    return undefined;
  }
}

/** How the command in `request` should run: the sandbox's settings, the call's flags and what the host can do. */
export async function decideSandbox(request: SandboxRequest): Promise<SandboxDecision> {
  const env = request.env ?? process.env;
  const home = request.home ?? os.homedir();
  const { settings, warnings } = await loadSandboxSettings({
    cwd: request.cwd,
    additionalDirectories: request.additionalDirectories,
    settingSources: request.settingSources,
    config: request.config,
    home,
  });
  const notices = warnings.map((warning) => `[sandbox settings: ${warning}]`);
  if ((env[SANDBOX_ENVIRONMENT_VARIABLE] ?? '').toLowerCase() === 'off') {
    return { notices, description: `unsandboxed: ${SANDBOX_ENVIRONMENT_VARIABLE}=off on this worker` };
  }
  if (!settings.enabled) return { notices, description: 'unsandboxed: sandbox.enabled is false' };
  if (
    request.command !== undefined &&
    settings.excludedCommands.length > 0 &&
    isExcludedCommand(await commandFacts(request.command, request.cwd, home), settings.excludedCommands)
  ) {
    return { notices, description: 'unsandboxed: the command is in sandbox.excludedCommands' };
  }
  if (request.dangerouslyDisableSandbox) {
    if (settings.allowUnsandboxedCommands) return { notices, description: 'unsandboxed: dangerouslyDisableSandbox' };
    notices.push('[dangerouslyDisableSandbox was ignored: sandbox.allowUnsandboxedCommands is false, so the command ran in the sandbox]');
  }
  const available = await sandboxAvailability(env);
  if (!available.available) {
    if (!unavailableWarned) {
      unavailableWarned = true;
      console.warn(
        `durable-agent worker: the Bash sandbox is unavailable: ${available.reason}. ` +
          (settings.failIfUnavailable
            ? 'Commands are refused (sandbox.failIfUnavailable).'
            : 'Commands run UNSANDBOXED (set sandbox.failIfUnavailable to refuse them).'),
      );
    }
    if (settings.failIfUnavailable) {
      return {
        notices,
        refusal: `Not run: the sandbox is unavailable on this host (${available.reason}) and sandbox.failIfUnavailable is true.`,
        description: 'refused: no sandbox',
      };
    }
    notices.push(`[ran WITHOUT the sandbox: ${available.reason}]`);
    return { notices, description: 'unsandboxed: sandbox unavailable' };
  }
  const plan = await sandboxPlan({
    cwd: request.cwd,
    writable: [request.cwd, ...(request.additionalDirectories ?? []), ...settings.allowWrite],
    denyWrite: settings.denyWrite,
    denyRead: [...settings.denyRead, ...readDenyPaths(request.readDenyRules ?? [], path.resolve(request.cwd), home)],
    home,
    stateDir: request.stateDir ?? (env.DURABLE_AGENT_STATE_DIR || path.join(home, '.durable-agent')),
    env,
    user: available.user,
  });
  if (plan.unpinnable.length > 0) {
    return {
      notices,
      refusal:
        `Not run: ${plan.unpinnable.join(', ')} ${plan.unpinnable.length === 1 ? 'is a symbolic link' : 'are symbolic links'}, which the sandbox cannot keep a command from replacing ` +
        '(a protected path must stay read-only). Replace the link with the directory or file itself, or run the command with dangerouslyDisableSandbox: true (it asks the user).',
      description: 'refused: a protected path is a symbolic link',
    };
  }
  // Absent protected paths get placeholders for as long as the command runs (released with it).
  const { release: releasePlaceholders, mounted, gitExcludes } = await acquirePlaceholders(plan.absent, env);
  const sandboxed = { ...plan, readOnly: [...plan.readOnly, ...mounted], gitExcludes };
  // The sandbox's /tmp is private, and the worker's TMPDIR may not be writable in it.
  const environment = { TMPDIR: '/tmp', ...sandboxGitEnvironment(gitExcludes ? GIT_EXCLUDES_MOUNT : undefined) };
  if (request.noNetwork || (settings.allowedDomains.length === 0 && !request.askDomain)) {
    // Contained: what it can change is the workspace's files (a checkpoint of cwd holds them) and its
    // own /tmp, which goes with it (issue 31 §4: a retry after a crash may restore and run it again).
    const contained = plan.writable.every((root) => isInside(root, plan.cwd));
    return {
      launch: {
        program: available.bwrap!,
        args: bwrapArguments(sandboxed),
        env: environment,
        release: releasePlaceholders,
        networkOff: true,
        contained,
      },
      notices,
      description: 'sandboxed (network off)',
    };
  }
  // Only these domains (and those a person approves when asked), through a proxy outside the sandbox (sandbox-network.ts).
  const proxy = await startDomainProxy(settings.allowedDomains, env, request.askDomain).catch(async (error: unknown) => {
    await releasePlaceholders();
    throw error;
  });
  return {
    launch: {
      program: available.bwrap!,
      args: bwrapArguments({ ...sandboxed, proxyDirectory: proxy.directory }),
      env: { ...environment, ...proxy.env },
      forwarder: await proxyForwarder(),
      release: async () => {
        await proxy.close();
        await releasePlaceholders();
      },
      refusedRequests: proxy.refused,
    },
    notices,
    description:
      settings.allowedDomains.length > 0
        ? `sandboxed (network: ${settings.allowedDomains.join(', ')} only${request.askDomain ? '; other domains ask' : ''})`
        : 'sandboxed (network: each domain asks)',
  };
}

/** The real path of `entry`, or undefined when it does not exist. */
async function real(entry: string): Promise<string | undefined> {
  return realpath(entry).catch(() => undefined);
}

/** The real path of the nearest existing ancestor of `entry` (itself included), with the rest joined on. */
async function realAncestor(entry: string): Promise<string> {
  const resolved = await real(entry);
  if (resolved) return resolved;
  const parent = path.dirname(entry);
  return parent === entry ? entry : path.join(await realAncestor(parent), path.basename(entry));
}

export type PlaceholderKind = 'file' | 'directory';

/** A resolved plan, and what it needs before it can start. */
export interface ResolvedSandboxPlan extends SandboxPlan {
  /** Protected paths that do not exist yet: a placeholder is made for each, then mounted read-only. */
  absent: Array<{ path: string; kind: PlaceholderKind }>;
  /** Protected paths that are symbolic links (a mount would land on the target; the link could be replaced). */
  unpinnable: string[];
}

/**
 * Where a worker's secrets live besides the home directory's: the envconfig file TEMPORAL_CONFIG_FILE
 * names (and $XDG_CONFIG_HOME/temporalio), TLS files TEMPORAL_TLS_* name, the encryption key file,
 * the dev server's database (`npm run server`) and the Temporal CLI's cache.
 */
export function secretPaths(env: NodeJS.ProcessEnv): string[] {
  const named = Object.entries(env)
    .filter(([name, value]) => (name === 'TEMPORAL_CONFIG_FILE' || name.startsWith('TEMPORAL_TLS_')) && value !== undefined && path.isAbsolute(value))
    .map(([, value]) => value!);
  return [
    ...named,
    ...(env.XDG_CONFIG_HOME ? [path.join(env.XDG_CONFIG_HOME, 'temporalio')] : []),
    ...(env.DURABLE_AGENT_ENCRYPTION_KEY_FILE ? [env.DURABLE_AGENT_ENCRYPTION_KEY_FILE] : []),
    path.dirname(DEFAULT_DB_FILENAME),
    temporalCacheRoot(),
  ];
}

/**
 * The worker's own credentials on disk, which the worker-side file tools (Read, Write, Edit, Grep,
 * Glob) refuse whatever the decision, as the sandbox hides them from commands: `secretPaths` and
 * the Temporal envconfig profiles under the home directory.
 */
export function workerCredentialPaths(env: NodeJS.ProcessEnv, home: string): string[] {
  return [...secretPaths(env), path.join(home, '.config', 'temporalio')];
}

/** Resolves the plan's paths on the host: only existing paths are mounted (bwrap cannot create mount points on a read-only root). */
export async function sandboxPlan(options: {
  cwd: string;
  writable: readonly string[];
  denyWrite?: readonly string[];
  denyRead?: readonly string[];
  home: string;
  stateDir: string;
  env: NodeJS.ProcessEnv;
  user?: { uid: number; gid: number };
  /** The worker's own installation (default: this checkout), kept visible when it lives under /tmp. */
  installation?: string;
}): Promise<ResolvedSandboxPlan> {
  const cwd = (await real(options.cwd)) ?? path.resolve(options.cwd);
  const writable = unique(await resolveAll(options.writable.map((entry) => path.resolve(options.cwd, entry))));
  const underWritable = (entry: string) => writable.some((root) => isInside(entry, root));

  const readOnly: string[] = [];
  const absent: ResolvedSandboxPlan['absent'] = [];
  const unpinnable: string[] = [];
  const protect = async (candidate: string, kind: PlaceholderKind) => {
    const info = await lstat(candidate).catch(() => undefined);
    // This worker's own placeholder (or one being removed) is held like an absent path, so it stays while the command runs.
    if (!info || isPlaceholder(candidate)) {
      // Absent: a placeholder keeps the name, where a command could create it (a parent that leads out through a link is read-only there).
      if (underWritable(candidate) && underWritable(await realAncestor(path.dirname(candidate)))) absent.push({ path: candidate, kind });
      return;
    }
    if (info.isSymbolicLink()) {
      const resolved = await real(candidate);
      if (underWritable(candidate)) unpinnable.push(candidate);
      if (resolved && underWritable(resolved)) readOnly.push(resolved);
      return;
    }
    if (underWritable(candidate)) readOnly.push(candidate);
  };
  const homeReal = (await real(options.home)) ?? options.home;
  await Promise.all([
    ...writable.flatMap((root) => PROTECTED_WORKSPACE_PATHS.map((entry) => protect(path.join(root, entry.name), entry.kind))),
    ...(underWritable(homeReal) ? PROTECTED_HOME_PATHS.map((entry) => protect(path.join(homeReal, entry.name), entry.kind)) : []),
  ]);
  readOnly.push(...(await resolveAll(options.denyWrite ?? [])).filter(underWritable));

  const hiddenDirectories: string[] = [];
  const hiddenFiles: string[] = [];
  const hide = async (candidate: string | undefined) => {
    if (!candidate) return;
    const resolved = await real(candidate);
    if (!resolved || resolved === '/') return;
    const info = await stat(resolved).catch(() => undefined);
    if (!info) return;
    // A working directory inside a hidden one stays visible (mounted deeper), but hiding a working directory itself would empty the workspace.
    if (writable.includes(resolved)) return;
    (info.isDirectory() ? hiddenDirectories : hiddenFiles).push(resolved);
  };
  await Promise.all(
    [
      ...HIDDEN_HOME_PATHS.map((relative) => path.join(options.home, relative)),
      RUNTIME_DIRECTORY,
      ...HIDDEN_SOCKETS,
      options.env.SSH_AUTH_SOCK,
      ...secretPaths(options.env),
      options.stateDir,
      ...(options.denyRead ?? []),
    ].map(hide),
  );

  const reexposed = await resolveAll(RUNTIME_KEPT);
  // The worker's own installation stays visible (read-only) as it is anywhere else on the read-only root, also
  // when it lives under the host's /tmp, which the sandbox replaces with its own (a clone under /tmp: the MCP
  // servers and scripts a workspace names from it would vanish). Its database directory stays hidden (deeper).
  const installation = await real(options.installation ?? REPO_ROOT);
  if (installation && isInside(installation, '/tmp') && !underWritable(installation)) reexposed.push(installation);
  // A linked worktree's repository (issue 33: `<repository>/.claude/worktrees/<name>`) stays readable, as its
  // main checkout's `.git` is, so git works there as in the main checkout (read-only: `.git` is protected).
  for (const root of writable) {
    const repository = await linkedWorktreeRepository(root);
    if (repository && !underWritable(repository)) reexposed.push(repository);
  }
  // The model is told where an oversized result was saved; it may grep it with Bash.
  const workspaceState = workspaceStateDir(options.stateDir, options.cwd);
  reexposed.push(...(await resolveAll(['tool-results', 'hook-output'].map((directory) => path.join(workspaceState, directory)))));
  return {
    cwd,
    writable,
    readOnly: unique(readOnly),
    hiddenDirectories: unique(hiddenDirectories),
    hiddenFiles: unique(hiddenFiles),
    reexposed: unique(reexposed),
    symlinks: hiddenDirectories.includes(RUNTIME_DIRECTORY) ? await runtimeLinks() : [],
    ...(options.user ? { user: options.user } : {}),
    absent: uniqueBy(absent, (entry) => entry.path),
    unpinnable: unique(unpinnable),
  };
}

/**
 * The git directory of the repository `root` is a linked worktree of (its `.git` a file naming
 * `<repository>/.git/worktrees/<name>`), when that repository holds the worktree — the layout
 * worktrees are made in here. Anything else (a `.git` file pointing elsewhere) is not followed.
 */
async function linkedWorktreeRepository(root: string): Promise<string | undefined> {
  const text = await readFile(path.join(root, '.git'), 'utf8').catch(() => undefined);
  const gitdir = text === undefined ? undefined : /^gitdir: (.+)$/m.exec(text)?.[1]?.trim();
  if (!gitdir) return undefined;
  const common = await real(path.resolve(root, gitdir, '..', '..'));
  if (!common || path.basename(common) !== '.git' || !isInside(root, path.dirname(common))) return undefined;
  return (await stat(common).catch(() => undefined))?.isDirectory() ? common : undefined;
}

/** The runtime directory's top-level symbolic links, to be made again inside the hidden one. */
async function runtimeLinks(): Promise<Array<{ path: string; target: string }>> {
  const entries = await readdir(RUNTIME_DIRECTORY, { withFileTypes: true }).catch(() => []);
  const links = await Promise.all(
    entries
      .filter((entry) => entry.isSymbolicLink())
      .map(async (entry) => {
        const link = path.join(RUNTIME_DIRECTORY, entry.name);
        const target = await readlink(link).catch(() => undefined);
        return target === undefined ? undefined : { path: link, target };
      }),
  );
  return links.filter((link) => link !== undefined);
}

/**
 * Placeholders in use by this worker's running commands, per path: how many use it, and whether
 * this worker made it (then the parent directories it had to make too) or found it made.
 */
const placeholders = new Map<string, { users: number; kind: PlaceholderKind; made: Promise<PlaceholderOutcome> }>();

/** Made by this worker (with the parent directories it had to make), found made by someone else, or impossible to make here (nor by a command). */
type PlaceholderOutcome = { parents: string[] } | 'existing' | 'impossible';
/** Placeholders being removed: a command that needs the same path again waits for that first. */
const removals = new Map<string, Promise<void>>();

function isPlaceholder(entry: string): boolean {
  return placeholders.has(entry) || removals.has(entry);
}

/**
 * Makes an empty placeholder (file or directory) for each absent protected path, so it can be
 * mounted read-only and nothing can be created there; `release` takes this command's share back
 * and removes each placeholder once no running command (background ones included) uses it and it
 * is still an empty placeholder. A path someone else made meanwhile is left alone. Registered
 * before the first await, so concurrent commands share one placeholder rather than race for it.
 */
export async function acquirePlaceholders(
  entries: ReadonlyArray<{ path: string; kind: PlaceholderKind }>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ release: () => Promise<void>; mounted: string[]; gitExcludes?: string }> {
  const held: string[] = [];
  for (const entry of entries) {
    let placeholder = placeholders.get(entry.path);
    if (!placeholder) {
      placeholder = { users: 0, kind: entry.kind, made: makePlaceholder(entry) };
      placeholders.set(entry.path, placeholder);
    }
    placeholder.users++;
    held.push(entry.path);
  }
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await Promise.all(
      held.map(async (entry) => {
        const placeholder = placeholders.get(entry)!;
        if (--placeholder.users > 0) return;
        placeholders.delete(entry);
        const removal = removePlaceholder(entry, placeholder.kind, placeholder.made);
        removals.set(entry, removal);
        await removal.finally(() => removals.get(entry) === removal && removals.delete(entry));
      }),
    );
  };
  const outcomes = await Promise.all(held.map((entry) => placeholders.get(entry)!.made));
  // What cannot be made here (a root that is a file, a read-only file system) cannot be made by the command either: nothing to mount.
  const mounted = held.filter((_, index) => outcomes[index] !== 'impossible');
  // Empty placeholder files would show as untracked in every `git status` inside: git ignores them there.
  const files = entries.filter((entry) => entry.kind === 'file' && mounted.includes(entry.path)).map((entry) => path.basename(entry.path));
  const gitExcludes = files.length > 0 ? await gitExcludesFile(files, env) : undefined;
  return { release, mounted, gitExcludes };
}

/**
 * Parent directories this worker made for its placeholders, with how many live placeholders lie
 * under each: the last one out removes it (two placeholders in one new directory share it).
 */
const madeParents = new Map<string, number>();
/** Placeholders are made and removed one at a time, so shared parents are counted without races. */
let placeholderQueue: Promise<unknown> = Promise.resolve();

function oneAtATime<T>(step: () => Promise<T>): Promise<T> {
  const next = placeholderQueue.then(step);
  placeholderQueue = next.catch(() => undefined);
  return next;
}

function ancestors(entry: string): string[] {
  const chain: string[] = [];
  for (let parent = path.dirname(entry); parent !== path.dirname(parent); parent = path.dirname(parent)) chain.push(parent);
  return chain;
}

/** Makes one placeholder, after any removal of the same path in flight (queued before it). */
function makePlaceholder(entry: { path: string; kind: PlaceholderKind }): Promise<PlaceholderOutcome> {
  return oneAtATime(async () => {
    const missing: string[] = [];
    for (const parent of ancestors(entry.path)) {
      if (await lstat(parent).catch(() => undefined)) break;
      missing.unshift(parent);
    }
    const made: string[] = [];
    try {
      for (const parent of missing) {
        await mkdir(parent);
        made.push(parent);
      }
      if (entry.kind === 'directory') await mkdir(entry.path);
      else await writeFile(entry.path, '', { flag: 'wx' });
    } catch (error) {
      for (const parent of made.reverse()) await rmdir(parent).catch(() => undefined);
      // Made by someone else meanwhile: it exists, and is mounted read-only as it is.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return 'existing';
      return 'impossible';
    }
    for (const parent of made) madeParents.set(parent, 0);
    const parents = ancestors(entry.path).filter((parent) => madeParents.has(parent));
    for (const parent of parents) madeParents.set(parent, madeParents.get(parent)! + 1);
    return { parents };
  });
}

function removePlaceholder(entry: string, kind: PlaceholderKind, made: Promise<PlaceholderOutcome>): Promise<void> {
  return oneAtATime(async () => {
    const mine = await made;
    if (typeof mine === 'string') return;
    const info = await lstat(entry).catch(() => undefined);
    if (info && kind === 'directory' && info.isDirectory()) await rmdir(entry).catch(() => undefined);
    else if (info && kind === 'file' && info.isFile() && info.size === 0) await unlink(entry).catch(() => undefined);
    // Deepest first; a parent someone filled meanwhile stays (rmdir refuses a directory that is not empty).
    for (const parent of mine.parents) {
      const users = madeParents.get(parent)! - 1;
      if (users > 0) madeParents.set(parent, users);
      else {
        madeParents.delete(parent);
        await rmdir(parent).catch(() => undefined);
      }
    }
  });
}

let userExcludesFile: Promise<string> | undefined;

/**
 * The user's own git excludes file (core.excludesFile in the global config, else git's default),
 * looked up once per worker: the placeholders' ignore file replaces it inside, so it carries it.
 */
function userGitExcludesFile(env: NodeJS.ProcessEnv): Promise<string> {
  userExcludesFile ??= new Promise<string>((resolve) => {
    const fallback = path.join(env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'git', 'ignore');
    // Only the user's global file is read (no repository's config): cwd is /.
    execFile('git', ['config', '--global', '--path', '--get', 'core.excludesFile'], { cwd: '/', timeout: 5_000 }, (error, stdout) =>
      resolve(error || stdout.trim() === '' ? fallback : stdout.trim()),
    );
  });
  return userExcludesFile;
}

/** This worker's ignore files, one per set of placeholder names (a handful at most), made once and removed when it exits. */
const excludesFiles = new Map<string, Promise<string>>();
let excludesDirectory: string | undefined;

function gitExcludesFile(names: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  const key = [...names].sort().join('\n');
  let file = excludesFiles.get(key);
  if (!file) {
    file = (async () => {
      const own = await readFile(await userGitExcludesFile(env), 'utf8').catch(() => '');
      if (!excludesDirectory) {
        excludesDirectory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-git-excludes-'));
        const directory = excludesDirectory;
        process.once('exit', () => rmSync(directory, { recursive: true, force: true }));
      }
      const target = path.join(excludesDirectory, `ignore-${excludesFiles.size}`);
      await writeFile(target, `${own}${own === '' || own.endsWith('\n') ? '' : '\n'}# durable-agent sandbox: empty read-only placeholders\n${key}\n`);
      return target;
    })();
    excludesFiles.set(key, file);
    file.catch(() => excludesFiles.delete(key));
  }
  return file;
}

/** How many placeholders this worker holds (tests: none is left behind). */
export function heldPlaceholders(): string[] {
  return [...placeholders.keys()];
}

async function resolveAll(entries: readonly string[]): Promise<string[]> {
  const resolved = await Promise.all(entries.map((entry) => real(entry)));
  return resolved.filter((entry): entry is string => entry !== undefined && entry !== '/');
}

function unique(entries: readonly string[]): string[] {
  return [...new Set(entries)];
}

function uniqueBy<T>(entries: readonly T[], key: (entry: T) => string): T[] {
  const seen = new Set<string>();
  return entries.filter((entry) => !seen.has(key(entry)) && seen.add(key(entry)) !== undefined);
}

/**
 * `program args…` as a sandboxed argv (no shell in between: a stdio MCP server): bwrap's arguments,
 * then the program; with the allowed-domains proxy, a small shell that starts its forwarder first.
 */
export function sandboxedArgv(launch: SandboxLaunch, program: string, args: readonly string[]): [string, string[]] {
  if (!launch.forwarder) return [launch.program, [...launch.args, program, ...args]];
  return [
    launch.program,
    [...launch.args, 'bash', '-c', SANDBOX_EXEC_WITH_FORWARDER, 'durable-agent-sandbox', launch.forwarder.program, ...launch.forwarder.args, program, ...args],
  ];
}

/** What a command prints when it found no network (curl, git, npm, pip, Node, Python). */
const NO_NETWORK_OUTPUT =
  /Could not resolve host|Temporary failure in name resolution|Name or service not known|Network is unreachable|getaddrinfo (ENOTFOUND|EAI_AGAIN)|EAI_AGAIN|ENETUNREACH|No address associated with hostname|Failed to establish a new connection|Couldn't connect to server/;
/** What git prints when it could not change the read-only `.git`. */
const READ_ONLY_GIT_OUTPUT = /\.git\b[^\n]*(Read-only file system|Permission denied)|(Read-only file system|Permission denied)[^\n]*\.git\b/;

/**
 * Lines for a sandboxed command's result (after it ran): the network requests the proxy refused
 * and how to allow a domain, a failure that looks like no network at all, and a failed change to
 * the read-only `.git` (commits run outside the sandbox, which asks the user).
 */
export function sandboxResultNotices(launch: SandboxLaunch | undefined, run: { exitCode: number | null; stdout: string; stderr: string }): string[] {
  if (!launch) return [];
  const notices: string[] = [];
  const howToAllow = "To allow a domain, add it to sandbox.network.allowedDomains in your user settings (~/.claude/settings.json) or the conversation's config";
  const refused = [...new Map((launch.refusedRequests ?? []).map((entry) => [entry.target, entry.reason])).entries()];
  if (refused.length > 0) {
    notices.push(
      `[sandbox: network requests blocked: ${refused.map(([target, reason]) => `${target} (${reason})`).join('; ')}. ${howToAllow} (this host's own addresses are never reachable).]`,
    );
  }
  if (run.exitCode === 0) return notices;
  const output = `${run.stdout}\n${run.stderr}`;
  if (launch.networkOff && NO_NETWORK_OUTPUT.test(output)) {
    notices.push(
      `[sandbox: commands run with no network (sandbox.network.allowedDomains is empty). ${howToAllow}, or run the command with dangerouslyDisableSandbox: true (it asks the user).]`,
    );
  }
  if (READ_ONLY_GIT_OUTPUT.test(output)) {
    notices.push(
      '[sandbox: .git is read-only in the sandbox, so commits and other changes to the repository fail here; run them with dangerouslyDisableSandbox: true (it asks the user).]',
    );
  }
  return notices;
}

/** One line for the worker's banner: whether commands will run sandboxed on this host. */
export async function sandboxStatusLine(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if ((env[SANDBOX_ENVIRONMENT_VARIABLE] ?? '').toLowerCase() === 'off') {
    return `durable-agent worker: Bash sandbox OFF (${SANDBOX_ENVIRONMENT_VARIABLE}=off): commands and Stop hooks run unsandboxed`;
  }
  const available = await sandboxAvailability(env);
  return available.available
    ? `durable-agent worker: Bash sandbox active (bubblewrap at ${available.bwrap}${available.user ? `, as uid ${available.user.uid}` : ''}): commands, hooks and project MCP servers run in it, with no network but sandbox.network.allowedDomains, unless the settings turn it off`
    : `durable-agent worker: Bash sandbox UNAVAILABLE: ${available.reason}; commands run unsandboxed unless sandbox.failIfUnavailable is set`;
}

/** `'word'` for bash, whatever the word holds. */
function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs a program the worker itself needs in a workspace (e.g. the session context's `git status`)
 * in the same sandbox as Bash, network off: a repository's config is workspace content, and
 * `core.fsmonitor`, filters or a `commondir` a command wrote would otherwise run code on the host.
 * Rejects when the program cannot start or exits non-zero (as execFile does).
 */
export async function execFileInSandbox(
  file: string,
  args: readonly string[],
  options: { cwd: string; timeoutMs?: number; stateDir?: string; signal?: AbortSignal },
): Promise<string> {
  const decision = await decideSandbox({ cwd: options.cwd, stateDir: options.stateDir, noNetwork: true });
  if (decision.refusal) throw new Error(decision.refusal);
  const run = await runShellCommand({
    command: [file, ...args].map(shellQuote).join(' '),
    cwd: options.cwd,
    timeoutMs: options.timeoutMs ?? 10_000,
    signal: options.signal ?? new AbortController().signal,
    sandbox: decision.launch,
  }).finally(() => decision.launch?.release?.());
  if (run.startError) throw run.startError;
  if (run.exitCode !== 0) throw new Error(`${file} ${args.join(' ')} failed (${run.timedOut ? 'timed out' : `exit ${run.exitCode}`}): ${run.stderr.trim()}`);
  return run.stdout;
}
