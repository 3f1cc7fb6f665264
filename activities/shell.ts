/**
 * Runs `bash -c command` in its own process group (`detached: true`), so a timeout or a
 * cancellation kills everything it started, not just the shell: an orphan left by a cancelled
 * activity would keep running on the worker host with no conversation to report to. Used by the
 * Bash tool and by Stop hooks, inside the OS sandbox when they pass one (activities/sandbox.ts).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Output kept in memory per command; callers apply their own budgets. Past it, the first half and
 * the last half are kept (a build's errors and a test run's summary come last) and the middle is
 * dropped, with a marker where it was.
 */
export const MAX_CAPTURE_BYTES = 10 * 1024 * 1024;
/** The head kept of an output over MAX_CAPTURE_BYTES; the tail gets the rest. */
export const CAPTURE_HEAD_BYTES = MAX_CAPTURE_BYTES / 2;
/** Time between SIGTERM and SIGKILL of the process group. */
export const KILL_GRACE_MS = 1_000;
/**
 * After the shell exits, how long to wait for its output pipes to close. Background jobs that
 * inherited the pipes keep them open; past this window they are terminated.
 */
const PIPE_DRAIN_MS = 250;

/**
 * Environment variable that marks every process a shell run starts, so the processes that left
 * its process group (`setsid`, daemons) can still be found and stopped when the command returns.
 */
export const SHELL_RUN_MARKER = 'DURABLE_AGENT_SHELL_RUN_ID';

/**
 * The worker's credentials, never passed to tool or hook processes: a command (or a prompt-injected
 * model) could print them into history and model context (issue 12, defect 4), or use them to drive
 * the worker's own Temporal server (issue 29). A trailing `*` matches a prefix. Every `TEMPORAL_*`
 * goes (API key, TLS files, gRPC metadata, envconfig file and profile) but the two that only say
 * where the server is (TEMPORAL_KEPT_VARIABLES); so do the codec server's token and the encryption key.
 */
export const CREDENTIAL_ENVIRONMENT_VARIABLES = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'TEMPORAL_*',
  'DURABLE_AGENT_ENCRYPTION_KEY*',
  'DURABLE_AGENT_CODEC_TOKEN',
] as const;
/** The Temporal variables a tool process keeps: where the server is, not how to get in. */
const TEMPORAL_KEPT_VARIABLES = ['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE'] as const;
/** Comma-separated extra names (or prefixes ending in `*`) withheld from tool and hook processes. */
export const TOOL_ENV_DENYLIST_VARIABLE = 'DURABLE_AGENT_TOOL_ENV_DENYLIST';

/** The worker's environment minus credentials: what every tool and hook process starts with. */
export function toolProcessEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const configured = (env[TOOL_ENV_DENYLIST_VARIABLE] ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const denied = [...CREDENTIAL_ENVIRONMENT_VARIABLES, ...configured];
  const isDenied = (name: string) =>
    !(TEMPORAL_KEPT_VARIABLES as readonly string[]).includes(name) &&
    denied.some((entry) => (entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : name === entry));
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !isDenied(name)) result[name] = value;
  }
  return result;
}

/** How to start a command inside the OS sandbox (activities/sandbox.ts builds it): `program ...args bash -c command`. */
export interface SandboxLaunch {
  program: string;
  args: string[];
  /** Added to the command's environment: TMPDIR (the sandbox's private /tmp), git's neutralised config, the proxy variables. */
  env?: Record<string, string>;
  /** Started inside before the command (the proxy forwarder): `program arg1 arg2` (socat, else `node -e script`). */
  forwarder?: Forwarder;
  /** Call when the command has ended (stops the proxy). */
  release?: () => Promise<void>;
  /** Requests the allowed-domains proxy refused, filled in as the command runs. */
  refusedRequests?: Array<{ target: string; reason: string }>;
  /** The sandbox has no network at all (no allowedDomains). */
  networkOff?: boolean;
  /**
   * Network off and every writable root inside the workspace (real paths): the command can change
   * nothing but the workspace's files and its private /tmp, and dies with the worker (`--die-with-parent`).
   */
  contained?: boolean;
}

export interface ShellOptions {
  command: string;
  cwd: string;
  timeoutMs: number;
  signal: AbortSignal;
  /** Written to the command's stdin, which is then closed; without it stdin is /dev/null. */
  stdin?: string;
  env?: Record<string, string>;
  /** Output as it arrives (stdout and stderr interleaved). */
  onOutput?: (text: string) => void;
  /** Start the shell inside this sandbox (bubblewrap); absent: unsandboxed. */
  sandbox?: SandboxLaunch;
}

/**
 * The shell a sandboxed command runs under. The sandbox has its own PID namespace, which the
 * kernel empties when the command's shell exits, so the worker cannot see what it left running;
 * this shell looks (its /proc shows only the sandbox) and says so on fd 3. Known difference: a
 * command killed by a signal reports exit code 128+n, as bwrap does.
 */
const SANDBOX_SHELL =
  'bash -c "$1" 3>&-; status=$?; ' +
  'for entry in /proc/[0-9]*; do case ${entry#/proc/} in 1|$$) ;; *) printf left >&3; break ;; esac; done; ' +
  'exit $status';
/** Waits (up to 5 s) until the allowed-domains proxy's forwarder listens inside the sandbox. */
const WAIT_FOR_FORWARDER =
  'for ((attempt = 0; attempt < 500; attempt++)); do ' + '(exec 9<> /dev/tcp/127.0.0.1/$DURABLE_AGENT_PROXY_PORT) 2> /dev/null && break; sleep 0.01; done; ';
/**
 * The same, first starting the allowed-domains proxy's forwarder (`$2 $3 $4`, activities/
 * sandbox-network.ts) and waiting until it listens; neither it nor a connection's process it
 * forked (socat's `fork`) is a leftover of the command. A process whose stat cannot be read has
 * ended since the glob listed it (a connection's process closing): not a leftover either — the
 * error of that redirection is silenced around the whole `read`, or bash prints it to the command's
 * stderr.
 */
const SANDBOX_SHELL_WITH_FORWARDER =
  '"$2" "$3" "$4" 3>&- < /dev/null > /dev/null 2>&1 & forwarder=$!; ' +
  WAIT_FOR_FORWARDER +
  'bash -c "$1" 3>&-; status=$?; ' +
  'for entry in /proc/[0-9]*; do case ${entry#/proc/} in 1|$$|$forwarder) continue ;; esac; ' +
  '{ read -r _ _ _ parent _ < "$entry/stat"; } 2> /dev/null || continue; [ "$parent" = "$forwarder" ] && continue; printf left >&3; break; done; ' +
  'exit $status';

/**
 * The forwarder's start, then `exec` of the program and its arguments (`$4…`) in place of the
 * shell: for a long-running program that is not a shell command (a stdio MCP server).
 */
export const SANDBOX_EXEC_WITH_FORWARDER = '"$1" "$2" "$3" < /dev/null > /dev/null 2>&1 & ' + WAIT_FOR_FORWARDER + 'shift 3; exec "$@"';

/** The proxy's forwarder inside the sandbox: a program and its two arguments. */
export interface Forwarder {
  program: string;
  args: readonly [string, string];
}

export interface ShellRun {
  /** Set when the shell could not be started. */
  startError?: Error;
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** The output exceeded MAX_CAPTURE_BYTES: its middle was dropped (`omittedBytes`). */
  truncated: boolean;
  /** Bytes the command wrote to stdout and stderr together. */
  outputBytes: number;
  /** Bytes dropped from the middle of the output (0 unless `truncated`). */
  omittedBytes: number;
  /** Processes the command left running (background jobs, daemons) were terminated when the shell exited. */
  backgroundKilled: boolean;
}

/** The executable `program` names (a path, or a name on `searchPath`), or undefined. */
export async function findOnPath(program: string, searchPath: string, cwd = '/'): Promise<string | undefined> {
  const directories = searchPath.split(':').filter(Boolean);
  const candidates = program.includes('/') ? [path.resolve(cwd, program)] : directories.map((directory) => path.join(directory, program));
  for (const candidate of candidates) {
    const executable = await access(candidate, constants.X_OK).then(
      () => true,
      () => false,
    );
    if (executable) return candidate;
  }
  return undefined;
}

/**
 * True while a process of group `groupId` is running (zombies do not count). A sandbox leaves its
 * init process a zombie for the host's init to reap, which may take a while (as in containers).
 */
async function processGroupRunning(groupId: number): Promise<boolean> {
  // Any process of the group, zombies included.
  if (!signalProcess(-groupId, 0)) return false;
  const entries = await readdir('/proc').catch(() => undefined);
  if (entries === undefined) return true; // no /proc: trust kill(0)
  const states = await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map(async (entry) => {
        const stat = await readProcessStat(Number(entry));
        return stat?.processGroup === groupId && stat.state !== 'Z' && stat.state !== 'X';
      }),
  );
  return states.some(Boolean);
}

/** From /proc/<pid>/stat: the state letter, process group and start time (clock ticks since boot); undefined when there is no such process. */
export async function readProcessStat(pid: number): Promise<{ state: string; processGroup: number; startTime: string } | undefined> {
  const text = await readFile(`/proc/${pid}/stat`, 'latin1').catch(() => undefined);
  if (text === undefined) return undefined;
  // pid (comm) state ppid pgrp session … starttime is field 22; comm may hold spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0], processGroup: Number(fields[2]), startTime: fields[19] };
}

/** SIGTERM the whole group, give it a short grace, then SIGKILL whatever is left. */
async function killProcessGroup(groupId: number, graceMs = KILL_GRACE_MS): Promise<void> {
  try {
    process.kill(-groupId, 'SIGTERM');
  } catch {
    return; // group already gone
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && (await processGroupRunning(groupId))) await sleep(25);
  signalProcess(-groupId, 'SIGKILL');
}

/** Pids of live processes whose environment carries `marker` (`NAME=value`; Linux /proc, none elsewhere). */
export async function findProcessesWithEnvironment(marker: string): Promise<number[]> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  const found: number[] = [];
  await Promise.all(
    entries.map(async (entry) => {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) return;
      const environment = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '');
      if (environment.split('\0').includes(marker)) found.push(Number(entry));
    }),
  );
  return found;
}

/**
 * Stop what a finished command left running: its process group, then anything that left the
 * group (`setsid`, double forks) but still carries the run's marker. True if anything was found.
 */
async function stopLeftovers(groupId: number, marker: string): Promise<boolean> {
  let found = false;
  if (await processGroupRunning(groupId)) {
    found = true;
    await killProcessGroup(groupId);
  }
  let pids = await findProcessesWithEnvironment(marker);
  if (pids.length === 0) return found;
  for (const pid of pids) signalProcess(pid, 'SIGTERM');
  const deadline = Date.now() + KILL_GRACE_MS;
  while (Date.now() < deadline && pids.length > 0) {
    await sleep(25);
    pids = pids.filter((pid) => signalProcess(pid, 0));
  }
  for (const pid of pids) signalProcess(pid, 'SIGKILL');
  return true;
}

/** process.kill without the throw; false when the process is gone. */
export function signalProcess(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The marker left in a stream's text where its middle was dropped. */
export function omittedOutputMarker(bytes: number): string {
  return `\n[... ${bytes} bytes of output omitted here ...]\n`;
}

interface CapturedChunk {
  stream: 'stdout' | 'stderr';
  text: string;
  bytes: number;
}

/**
 * Collects stdout and stderr within MAX_CAPTURE_BYTES: the first CAPTURE_HEAD_BYTES as they come,
 * then a rolling window of the most recent output (both streams, in arrival order), dropping
 * its oldest chunks. Each stream's text is its head, a marker if any of it was dropped, its tail.
 */
export class OutputCapture {
  private readonly head: CapturedChunk[] = [];
  private headBytes = 0;
  private readonly tail: CapturedChunk[] = [];
  /** Index of the oldest chunk still in `tail` (dropping by index keeps each add O(1) amortised). */
  private tailStart = 0;
  private tailBytes = 0;
  private readonly omitted = { stdout: 0, stderr: 0 };
  totalBytes = 0;

  constructor(
    private readonly headLimit = CAPTURE_HEAD_BYTES,
    private readonly tailLimit = MAX_CAPTURE_BYTES - CAPTURE_HEAD_BYTES,
  ) {}

  get omittedBytes(): number {
    return this.omitted.stdout + this.omitted.stderr;
  }

  get truncated(): boolean {
    return this.omittedBytes > 0;
  }

  add(stream: 'stdout' | 'stderr', text: string, byteLength: number): void {
    this.totalBytes += byteLength;
    // Once anything went to the tail, everything after it does too, so order is kept.
    if (this.tail.length === 0 && this.headBytes + byteLength <= this.headLimit) {
      this.head.push({ stream, text, bytes: byteLength });
      this.headBytes += byteLength;
      return;
    }
    this.tail.push({ stream, text, bytes: byteLength });
    this.tailBytes += byteLength;
    // Drop the oldest chunks beyond the window; the newest one always stays.
    while (this.tailBytes > this.tailLimit && this.tail.length - this.tailStart > 1) {
      const dropped = this.tail[this.tailStart++];
      this.tailBytes -= dropped.bytes;
      this.omitted[dropped.stream] += dropped.bytes;
    }
    if (this.tailStart > 1024 && this.tailStart * 2 > this.tail.length) {
      this.tail.splice(0, this.tailStart);
      this.tailStart = 0;
    }
  }

  text(stream: 'stdout' | 'stderr'): string {
    const of = (chunks: CapturedChunk[]) =>
      chunks
        .filter((chunk) => chunk.stream === stream)
        .map((chunk) => chunk.text)
        .join('');
    const omitted = this.omitted[stream];
    return of(this.head) + (omitted > 0 ? omittedOutputMarker(omitted) : '') + of(this.tail.slice(this.tailStart));
  }
}

/**
 * Runs the command to completion, timeout or abort. Resolves in every case but one: when
 * `signal` aborts, it rejects with the signal's reason once the process group is dead.
 */
export async function runShellCommand(options: ShellOptions): Promise<ShellRun> {
  const { signal } = options;
  signal.throwIfAborted();
  const runId = randomUUID();
  const { sandbox } = options;
  const forwarder = sandbox?.forwarder ? [sandbox.forwarder.program, ...sandbox.forwarder.args] : [];
  const script = forwarder.length > 0 ? SANDBOX_SHELL_WITH_FORWARDER : SANDBOX_SHELL;
  const [program, args] = sandbox
    ? [sandbox.program, [...sandbox.args, 'bash', '-c', script, 'durable-agent-sandbox', options.command, ...forwarder]]
    : ['bash', ['-c', options.command]];
  const child = spawn(program, args, {
    cwd: options.cwd,
    // Its own process group, so we can signal -pid; Node also makes it a new session with no
    // controlling terminal, so a sandboxed command cannot push input into one (TIOCSTI).
    detached: true,
    stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', sandbox ? 'pipe' : 'ignore'],
    env: { ...toolProcessEnvironment(), ...sandbox?.env, ...options.env, [SHELL_RUN_MARKER]: runId },
  });
  let leftInSandbox = false;
  const leftovers = child.stdio[3] as NodeJS.ReadableStream | null | undefined;
  leftovers?.on('data', () => (leftInSandbox = true));
  leftovers?.on('error', () => undefined);
  if (options.stdin !== undefined && child.stdin) {
    child.stdin.on('error', () => undefined); // the command may exit without reading it
    child.stdin.end(options.stdin);
  }

  const capture = new OutputCapture();
  const report = (text: string) => {
    try {
      options.onOutput?.(text);
    } catch {
      // A failing progress sink (e.g. a heartbeat after cancellation) must not crash the stream handler.
    }
  };
  // stdout and stderr are always piped (see spawn above).
  const stdout = child.stdout!;
  const stderr = child.stderr!;
  for (const [stream, pipe] of [
    ['stdout', stdout],
    ['stderr', stderr],
  ] as const) {
    const decoder = new StringDecoder('utf8');
    pipe.on('data', (chunk: Buffer) => {
      const text = decoder.write(chunk);
      capture.add(stream, text, chunk.length);
      if (text !== '') report(text);
    });
    pipe.on('end', () => {
      const rest = decoder.end();
      if (rest !== '') capture.add(stream, rest, Buffer.byteLength(rest));
    });
  }
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  let termination: Promise<void> | undefined;
  let timedOut = false;
  const terminate = () => {
    if (child.pid !== undefined) termination ??= killProcessGroup(child.pid);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    terminate();
  }, options.timeoutMs);
  signal.addEventListener('abort', terminate, { once: true });

  let backgroundKilled = false;
  const run = (exit: { exitCode: number | null; exitSignal: NodeJS.Signals | null; startError?: Error }): ShellRun => ({
    ...exit,
    stdout: capture.text('stdout'),
    stderr: capture.text('stderr'),
    timedOut,
    truncated: capture.truncated,
    outputBytes: capture.totalBytes,
    omittedBytes: capture.omittedBytes,
    backgroundKilled,
  });
  try {
    const outcome = await new Promise<{ code: number | null; signal: NodeJS.Signals | null } | { error: Error }>((resolve) => {
      child.once('error', (error) => resolve({ error }));
      child.once('exit', (code, exitSignal) => resolve({ code, signal: exitSignal }));
    });
    if ('error' in outcome) {
      terminate();
      await termination;
      signal.throwIfAborted();
      return run({ exitCode: null, exitSignal: null, startError: outcome.error });
    }
    if (termination) await termination;
    const drained = await Promise.race([closed.then(() => true), sleep(PIPE_DRAIN_MS).then(() => false)]);
    // A tool call ends when its command does: background jobs (`cmd &`, nohup, setsid,
    // disown) would otherwise outlive the conversation on the worker host (issue 12, defect 9).
    // In the sandbox the kernel ends them: its PID namespace dies with the command's shell, and
    // nothing inside can leave it. The sandbox's own look (fd 3) says whether there were any.
    const stopped = sandbox || child.pid === undefined ? false : await stopLeftovers(child.pid, `${SHELL_RUN_MARKER}=${runId}`);
    backgroundKilled = (sandbox ? leftInSandbox : stopped) && termination === undefined;
    if (!drained) await Promise.race([closed, sleep(PIPE_DRAIN_MS)]);
    signal.throwIfAborted();
    return run({ exitCode: outcome.code, exitSignal: outcome.signal });
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', terminate);
    stdout.destroy();
    stderr.destroy();
    (leftovers as { destroy?: () => void } | null | undefined)?.destroy?.();
  }
}
