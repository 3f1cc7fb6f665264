/**
 * The OS sandbox under the permission rules (issue 17 §10; Claude Code's sandboxed Bash uses
 * bubblewrap on Linux too). The rule engine decides what may run; this bounds what a command that
 * runs can touch, so a command the parser misjudges still cannot write outside the working
 * directories or read the worker's credentials:
 * - the root filesystem read-only; the working directories and a private /tmp writable;
 * - the user's secrets (`~/.ssh`, `~/.aws`, …), the state directory (journal, other workspaces'
 *   results), the encryption key file and container-engine sockets hidden;
 * - `.git/hooks`, `.git/config`, `.claude/` (…) of each working directory read-only, so a command
 *   cannot configure git or the agent into running code outside the sandbox later (mount points
 *   cannot be renamed; `.git` itself is one too). Known limit: new files in `.git` (`commondir`)
 *   and a repository created where there was none are not covered — git run by the worker in a
 *   workspace must not trust its config;
 * - its own PID namespace with a fresh /proc (the worker's /proc/<pid>/environ invisible), no
 *   capabilities (the worker may run as root), and no network when the settings say so.
 *   (Not an IPC namespace: it doubles bwrap's start-up time for little — SysV IPC holds no secrets here.)
 * Every Bash command and every Stop hook starts this way (activities/shell.ts runs it).
 */
import { spawn } from 'node:child_process';
import { access, constants, realpath, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { anchorPathRule } from '../common/path-rules';
import type { SettingSource } from '../common/permissions';
import { FORWARDER_SCRIPT, PROXY_MOUNT, startDomainProxy } from './sandbox-network';
import { type SandboxLaunch, runShellCommand } from './shell';
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
] as const;

/** Sockets that hand out root on the host (a read-only mount does not stop connect()). */
export const HIDDEN_SOCKETS = ['/var/run/docker.sock', '/run/docker.sock', '/run/containerd/containerd.sock', '/run/podman/podman.sock'] as const;

/**
 * Read-only inside every working directory: what git or the agent would later run or obey outside
 * the sandbox (hooks, `core.fsmonitor`, `.claude/settings.json`, editor tasks). `.git` itself stays
 * writable (commits work) unless it is a file (a worktree's pointer to its git directory).
 */
export const PROTECTED_WORKSPACE_PATHS = ['.git/hooks', '.git/config', '.claude', '.vscode', '.idea'] as const;
/** Read-only under the home directory when it is writable (the workspace is home): shell start-up files and git's config. */
export const PROTECTED_HOME_PATHS = ['.bashrc', '.bash_profile', '.bash_login', '.profile', '.zshrc', '.zshenv', '.zprofile', '.gitconfig', '.config/git'] as const;

/** What a sandboxed command may see and touch. All paths are absolute, real and existing. */
export interface SandboxPlan {
  cwd: string;
  writable: string[];
  /** Inside writable directories, bound onto themselves (writable) so they cannot be renamed or replaced. */
  pinned?: string[];
  /** Inside writable directories, kept read-only. */
  readOnly: string[];
  /** Replaced by an empty read-only directory. */
  hiddenDirectories: string[];
  /** Replaced by an empty file (/dev/null). */
  hiddenFiles: string[];
  /** Exposed read-only again inside a hidden directory (this workspace's persisted tool results). */
  reexposed: string[];
  network: boolean;
  /** The allowed-domains proxy's socket directory, mounted read-only at PROXY_MOUNT (network off otherwise). */
  proxyDirectory?: string;
}

type MountKind = 'bind' | 'reexpose' | 'ro-bind' | 'hide-directory' | 'hide-file';
/** At equal depth, later kinds win (hiding beats exposing). */
const KIND_ORDER: Record<MountKind, number> = { bind: 0, 'ro-bind': 1, 'hide-directory': 2, 'hide-file': 3, reexpose: 4 };

/**
 * bwrap's arguments for a plan (pure). Mounts are applied shallowest first, so a deeper rule wins
 * over a shallower one whatever list it came from: a workspace inside a hidden state directory is
 * still writable, and `~/.ssh` stays hidden when the workspace is the home directory.
 */
export function bwrapArguments(plan: SandboxPlan): string[] {
  const mounts: Array<{ kind: MountKind; path: string }> = [
    ...[...plan.writable, ...(plan.pinned ?? [])].map((entry) => ({ kind: 'bind' as const, path: entry })),
    ...plan.readOnly.map((entry) => ({ kind: 'ro-bind' as const, path: entry })),
    ...plan.hiddenDirectories.map((entry) => ({ kind: 'hide-directory' as const, path: entry })),
    ...plan.hiddenFiles.map((entry) => ({ kind: 'hide-file' as const, path: entry })),
    ...plan.reexposed.map((entry) => ({ kind: 'reexpose' as const, path: entry })),
  ].filter((mount) => mount.path !== '/' && !isInside(mount.path, '/proc') && !isInside(mount.path, '/dev'));
  const depth = (entry: string) => entry.split('/').filter(Boolean).length;
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || KIND_ORDER[a.kind] - KIND_ORDER[b.kind]);
  const args = [
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    '--unshare-pid',
    ...(plan.network ? [] : ['--unshare-net']),
    '--die-with-parent',
    // The worker may run as root: without this, the command could remount / read-write.
    '--cap-drop', 'ALL',
  ];
  // Remounted read-only only after every mount point inside them was created.
  const remounts: string[] = [];
  for (const mount of mounts) {
    switch (mount.kind) {
      case 'bind':
        args.push('--bind', mount.path, mount.path);
        break;
      case 'ro-bind':
      case 'reexpose':
        args.push('--ro-bind', mount.path, mount.path);
        break;
      case 'hide-directory':
        args.push('--tmpfs', mount.path);
        remounts.push(mount.path);
        break;
      case 'hide-file':
        args.push('--ro-bind', '/dev/null', mount.path);
        break;
    }
  }
  if (plan.proxyDirectory) args.push('--ro-bind', plan.proxyDirectory, PROXY_MOUNT);
  for (const entry of remounts) args.push('--remount-ro', entry);
  args.push('--chdir', plan.cwd);
  return args;
}

export type { SandboxLaunch } from './shell';

export interface SandboxAvailability {
  available: boolean;
  bwrap?: string;
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
  const cwd = os.tmpdir();
  const args = bwrapArguments({ cwd: '/', writable: [], readOnly: [], hiddenDirectories: [], hiddenFiles: [], reexposed: [], network: false });
  const outcome = await new Promise<{ code: number | null; stderr: string; error?: Error }>((resolve) => {
    const child = spawn(bwrap, [...args, 'true'], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', (error) => resolve({ code: null, stderr, error }));
    child.once('close', (code) => resolve({ code, stderr }));
  });
  if (outcome.code === 0) return { available: true, bwrap };
  const why = outcome.error?.message ?? (outcome.stderr.trim() || `exit code ${outcome.code}`);
  return { available: false, bwrap, reason: `bubblewrap (${bwrap}) cannot start a sandbox here: ${why} (are unprivileged user namespaces disabled?)` };
}

async function findOnPath(program: string, searchPath: string): Promise<string | undefined> {
  for (const directory of searchPath.split(':').filter(Boolean)) {
    const candidate = path.join(directory, program);
    if (await access(candidate, constants.X_OK).then(() => true, () => false)) return candidate;
  }
  return undefined;
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
  if (request.command !== undefined && isExcludedCommand(request.command, settings.excludedCommands)) {
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
          (settings.failIfUnavailable ? 'Commands are refused (sandbox.failIfUnavailable).' : 'Commands run UNSANDBOXED (set sandbox.failIfUnavailable to refuse them).'),
      );
    }
    if (settings.failIfUnavailable) {
      return { notices, refusal: `Not run: the sandbox is unavailable on this host (${available.reason}) and sandbox.failIfUnavailable is true.`, description: 'refused: no sandbox' };
    }
    notices.push(`[ran WITHOUT the sandbox: ${available.reason}]`);
    return { notices, description: 'unsandboxed: sandbox unavailable' };
  }
  const network = settings.allowedDomains === undefined;
  const plan = await sandboxPlan({
    cwd: request.cwd,
    writable: [request.cwd, ...(request.additionalDirectories ?? []), ...settings.allowWrite],
    denyWrite: settings.denyWrite,
    denyRead: [...settings.denyRead, ...readDenyPaths(request.readDenyRules ?? [], path.resolve(request.cwd), home)],
    home,
    stateDir: request.stateDir ?? (env.DURABLE_AGENT_STATE_DIR || path.join(home, '.durable-agent')),
    env,
    network,
  });
  if (settings.allowedDomains !== undefined && settings.allowedDomains.length > 0) {
    // Only these domains, through a proxy outside the sandbox (sandbox-network.ts).
    const proxy = await startDomainProxy(settings.allowedDomains);
    return {
      launch: {
        program: available.bwrap!,
        args: bwrapArguments({ ...plan, proxyDirectory: proxy.directory }),
        env: proxy.env,
        forwarder: { node: process.execPath, script: FORWARDER_SCRIPT },
        release: () => proxy.close(),
        refusedHosts: proxy.refused,
      },
      notices,
      description: `sandboxed (network: ${settings.allowedDomains.join(', ')} only)`,
    };
  }
  return {
    launch: { program: available.bwrap!, args: bwrapArguments(plan) },
    notices,
    description: `sandboxed (network ${network ? 'on' : 'off'})`,
  };
}

/** The real path of `entry`, or undefined when it does not exist. */
async function real(entry: string): Promise<string | undefined> {
  return realpath(entry).catch(() => undefined);
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
  network: boolean;
}): Promise<SandboxPlan> {
  const cwd = (await real(options.cwd)) ?? path.resolve(options.cwd);
  const writable = unique(await resolveAll(options.writable.map((entry) => path.resolve(options.cwd, entry))));
  const underWritable = (entry: string) => writable.some((root) => isInside(entry, root));

  const protectedCandidates = [
    ...writable.flatMap((root) => PROTECTED_WORKSPACE_PATHS.map((relative) => path.join(root, relative))),
    ...PROTECTED_HOME_PATHS.map((relative) => path.join(options.home, relative)),
    ...(options.denyWrite ?? []),
  ];
  const readOnly: string[] = [];
  for (const candidate of protectedCandidates) {
    const resolved = await real(candidate);
    if (resolved && underWritable(resolved)) readOnly.push(resolved);
  }
  // A worktree's `.git` file names its git directory: rewritten, it would point git at any config.
  // A `.git` directory stays writable (commits) but becomes a mount point, which cannot be renamed:
  // otherwise `mv .git old && mkdir .git` would leave a new config in its place.
  const pinned: string[] = [];
  for (const root of writable) {
    const dotGit = path.join(root, '.git');
    const info = await stat(dotGit).catch(() => undefined);
    if (info?.isFile()) readOnly.push(dotGit);
    else if (info?.isDirectory()) pinned.push((await real(dotGit)) ?? dotGit);
  }

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
  for (const relative of HIDDEN_HOME_PATHS) await hide(path.join(options.home, relative));
  for (const socket of HIDDEN_SOCKETS) await hide(socket);
  await hide(options.env.SSH_AUTH_SOCK);
  await hide(options.env.DURABLE_AGENT_ENCRYPTION_KEY_FILE);
  await hide(options.stateDir);
  for (const entry of options.denyRead ?? []) await hide(entry);

  // The model is told where an oversized result was saved; it may grep it with Bash.
  const reexposed: string[] = [];
  const workspaceState = workspaceStateDir(options.stateDir, options.cwd);
  for (const directory of ['tool-results', 'hook-output']) {
    const resolved = await real(path.join(workspaceState, directory));
    if (resolved) reexposed.push(resolved);
  }
  return {
    cwd,
    writable,
    pinned: unique(pinned.filter(underWritable)),
    readOnly: unique(readOnly),
    hiddenDirectories: unique(hiddenDirectories),
    hiddenFiles: unique(hiddenFiles),
    reexposed: unique(reexposed),
    network: options.network,
  };
}

async function resolveAll(entries: readonly string[]): Promise<string[]> {
  const resolved = await Promise.all(entries.map((entry) => real(entry)));
  return resolved.filter((entry): entry is string => entry !== undefined && entry !== '/');
}

function unique(entries: readonly string[]): string[] {
  return [...new Set(entries)];
}

/** One line for the worker's banner: whether commands will run sandboxed on this host. */
export async function sandboxStatusLine(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if ((env[SANDBOX_ENVIRONMENT_VARIABLE] ?? '').toLowerCase() === 'off') {
    return `durable-agent worker: Bash sandbox OFF (${SANDBOX_ENVIRONMENT_VARIABLE}=off): commands and Stop hooks run unsandboxed`;
  }
  const available = await sandboxAvailability(env);
  return available.available
    ? `durable-agent worker: Bash sandbox active (bubblewrap at ${available.bwrap}): commands and Stop hooks run in it unless the settings turn it off`
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
  const decision = await decideSandbox({ cwd: options.cwd, stateDir: options.stateDir, config: { network: { allowedDomains: [] } } });
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
