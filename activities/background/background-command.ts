/**
 * Background Bash (issue 21 §1): a command started detached from the worker — its own session and
 * process group, stdout and stderr to a file in the state directory, its exit status written by a
 * small wrapper shell — so a worker that dies or is deployed mid-command leaves it running. A
 * record file (pid, the process's start time from /proc, boot id, a marker in its environment)
 * lets a later activity, in this process or the next worker's, re-attach to it and never start it
 * again: everything here is keyed by the task id the workflow supplies.
 *
 * Files, per workspace (activities/tool-journal.ts workspaceStateDir) and conversation:
 * - `background/<conversation>/<task>/record.json`, `status` (the exit code), `stop-requested`;
 * - `tool-results/background/<conversation>/<task>.output`: the output, under the directory the
 *   sandbox re-exposes read-only, so the model can read it with Read or a sandboxed `tail`.
 */
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type BackgroundOutcome,
  type BackgroundTaskRef,
  type ReadTaskOutputInput,
  type ReadTaskOutputResult,
  type StartBackgroundCommandInput,
  type StartBackgroundCommandResult,
  type StopResult,
  TASK_ID_PATTERN,
} from '../../common/background';
import { decideSandbox, sandboxedArgv } from '../sandbox';
import { SHELL_RUN_MARKER, findProcessesWithEnvironment, readProcessStat, signalProcess, toolProcessEnvironment } from '../shell';
import { TASK_OUTPUT_DEFAULT_TIMEOUT_MS, TASK_OUTPUT_MAX_TIMEOUT_MS } from '../../common/tools/task-output';
import { workspaceStateDir } from '../tool-journal';

/** Output kept in a notification's tail (the whole output stays in the file). */
export const NOTIFICATION_TAIL_CHARS = 2_000;
/** Output TaskOutput returns at most: Bash's result budget (common/tools/bash.ts maxResultSizeChars). */
export const TASK_OUTPUT_MAX_CHARS = 30_000;
/** Between SIGTERM and SIGKILL of a stopped command's process group. */
export const STOP_GRACE_MS = 2_000;
/** How often a supervisor looks at its command (and heartbeats). */
export const SUPERVISE_POLL_MS = 1_000;

/**
 * The wrapper: runs the command (`$2…`, the sandbox's bwrap line or `bash -c`) and writes its exit
 * status to `$1` atomically. Trapping TERM/INT/HUP with a handler (not ignoring them, which the
 * command would inherit) means a signal to the process group ends the command but not the
 * wrapper, which still records the status (143 for SIGTERM). Only SIGKILL, or the host dying,
 * leaves no status: that command is reported as killed (when stopped) or interrupted.
 */
const WRAPPER =
  'trap \'signalled=1\' TERM INT HUP; status_file=$1; shift; "$@"; code=$?; ' +
  'printf \'%s\\n\' "$code" > "$status_file.tmp" && mv -f "$status_file.tmp" "$status_file"';

/** What the record file holds: enough to find the process again and to know it is the same one. */
export interface BackgroundRecord {
  version: 1;
  taskId: string;
  conversationId: string;
  command: string;
  description?: string;
  cwd: string;
  /** The wrapper's pid, which is also its process group and session id; absent if it never started. */
  pid?: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks since boot): a reused pid has another. */
  processStartTime?: string;
  /** /proc/sys/kernel/random/boot_id at start: after a reboot no pid is ours. */
  bootId?: string;
  host: string;
  /** `NAME=value` in the environment of every process the command starts (to find ones that left the group). */
  marker: string;
  outputPath: string;
  startedAt: string;
  /** How it ran: `sandboxed (network off)`, `unsandboxed: …`. */
  sandbox: string;
  /** Set when the command could not be started, or an earlier attempt died before recording its pid. */
  startError?: string;
  /** `startError` came from an attempt that died before recording its pid: the command may or may not have run. */
  unconfirmed?: boolean;
}

/** Liveness probes, injectable so tests can play a reused pid without waiting for the kernel to reuse one. */
export interface ProcessProbe {
  /** Field 22 of /proc/<pid>/stat and the state letter, or undefined when there is no such process. */
  processStat(pid: number): Promise<{ startTime: string; state: string; processGroup: number } | undefined>;
  bootId(): Promise<string | undefined>;
}

export const procProbe: ProcessProbe = {
  processStat: readProcessStat,
  async bootId() {
    return (await readFile('/proc/sys/kernel/random/boot_id', 'utf8').catch(() => '')).trim() || undefined;
  },
};

export interface BackgroundDeps {
  stateDir: string;
  probe?: ProcessProbe;
}

/** Directory name per conversation: readable, hashed so ids differing only in unsafe characters stay apart. */
function conversationDirectory(conversationId: string): string {
  const hash = createHash('sha256').update(conversationId).digest('hex').slice(0, 12);
  return `${conversationId.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 80)}-${hash}`;
}

/** Where a task's files live (pure; exported for tests and `status`). */
export function backgroundPaths(stateDir: string, ref: BackgroundTaskRef) {
  const workspace = workspaceStateDir(stateDir, ref.cwd);
  const conversation = conversationDirectory(ref.conversationId);
  const directory = path.join(workspace, 'background', conversation, ref.taskId);
  return {
    directory,
    claim: path.join(directory, 'claim.json'),
    record: path.join(directory, 'record.json'),
    status: path.join(directory, 'status'),
    stopRequested: path.join(directory, 'stop-requested'),
    output: path.join(workspace, 'tool-results', 'background', conversation, `${ref.taskId}.output`),
  };
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

let temporaryCounter = 0;
/** Atomic write (rename): a crash never leaves a torn record. */
async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  const temporary = `${file}.${process.pid}.${++temporaryCounter}.tmp`;
  await writeFile(temporary, JSON.stringify(value, null, 2));
  await rename(temporary, file);
}

function checkTaskId(taskId: string): string | undefined {
  return TASK_ID_PATTERN.test(taskId) ? undefined : `Invalid background task id ${JSON.stringify(taskId)} (letters, digits, _ and - only).`;
}

/** In this process: the allowed-domains proxies of commands it started (released when their supervisor sees the end). */
const proxyReleases = new Map<string, () => Promise<void>>();

/**
 * Starts the command detached and returns at once with the output path. Idempotent per task id:
 * a second call (a retried activity) returns the first call's task and starts nothing.
 */
export async function startBackgroundCommand(deps: BackgroundDeps, input: StartBackgroundCommandInput): Promise<StartBackgroundCommandResult> {
  const probe = deps.probe ?? procProbe;
  const paths = backgroundPaths(deps.stateDir, input);
  const invalid = checkTaskId(input.taskId);
  if (invalid) return { taskId: input.taskId, outputPath: paths.output, alreadyStarted: false, refusal: invalid, notices: [] };
  const existing = await readJson<BackgroundRecord>(paths.record);
  if (existing) return { taskId: input.taskId, outputPath: existing.outputPath, alreadyStarted: true, notices: [] };

  // The sandbox's plan re-exposes tool-results/ only if it exists when the plan is made.
  await mkdir(path.dirname(paths.output), { recursive: true });
  await mkdir(paths.directory, { recursive: true });
  const decision = await decideSandbox({
    cwd: input.cwd,
    additionalDirectories: input.additionalDirectories,
    settingSources: input.settingSources,
    config: input.sandboxConfig,
    command: input.command,
    dangerouslyDisableSandbox: input.dangerouslyDisableSandbox,
    stateDir: deps.stateDir,
    readDenyRules: input.readDenyRules,
  });
  if (decision.refusal) {
    return { taskId: input.taskId, outputPath: paths.output, alreadyStarted: false, refusal: decision.refusal, notices: decision.notices };
  }

  // Claim the task id before starting anything: of two attempts, only the one that creates the claim starts the command.
  const marker = `${SHELL_RUN_MARKER}=background-${randomUUID()}`;
  const base = {
    version: 1 as const,
    taskId: input.taskId,
    conversationId: input.conversationId,
    command: input.command,
    ...(input.description ? { description: input.description } : {}),
    cwd: input.cwd,
    host: os.hostname(),
    marker,
    outputPath: paths.output,
    startedAt: new Date().toISOString(),
    sandbox: decision.description,
  };
  try {
    await writeFile(paths.claim, JSON.stringify(base), { flag: 'wx' });
  } catch (error) {
    await decision.launch?.release?.();
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    await adoptClaim(paths, probe);
    return { taskId: input.taskId, outputPath: paths.output, alreadyStarted: true, notices: [] };
  }

  const sandbox = decision.launch;
  // In the sandbox with an allowed-domains proxy, its forwarder starts first (as for Bash and MCP servers).
  const [program, args] = sandbox ? sandboxedArgv(sandbox, 'bash', ['-c', input.command]) : ['bash', ['-c', input.command]];
  const output = await open(paths.output, 'a');
  let record: BackgroundRecord;
  try {
    const child = spawn('bash', ['-c', WRAPPER, 'durable-agent-background', paths.status, program, ...args], {
      cwd: input.cwd,
      // setsid(): its own session and process group, no controlling terminal; it outlives this worker.
      detached: true,
      stdio: ['ignore', output.fd, output.fd],
      env: { ...toolProcessEnvironment(), ...sandbox?.env, [SHELL_RUN_MARKER]: marker.slice(SHELL_RUN_MARKER.length + 1) },
    });
    const started = await new Promise<{ pid: number } | { error: Error }>((resolve) => {
      child.once('spawn', () => resolve({ pid: child.pid! }));
      child.once('error', (error) => resolve({ error }));
    });
    child.unref();
    if ('error' in started) {
      record = { ...base, startError: `could not start bash: ${started.error.message}` };
    } else {
      const processStat = await probe.processStat(started.pid);
      record = { ...base, pid: started.pid, processStartTime: processStat?.startTime, bootId: await probe.bootId() };
      if (sandbox?.release) proxyReleases.set(paths.directory, sandbox.release);
    }
  } finally {
    await output.close();
  }
  await writeJsonAtomic(paths.record, record);
  if (record.startError) await sandbox?.release?.();
  return { taskId: input.taskId, outputPath: paths.output, alreadyStarted: false, notices: decision.notices };
}

/**
 * An earlier attempt claimed the task id but died before writing the record. If its command is
 * running (found by the marker), record it; otherwise record that it was never confirmed started,
 * so it is reported as interrupted and never started a second time (at most once, as the tool journal).
 */
async function adoptClaim(paths: ReturnType<typeof backgroundPaths>, probe: ProcessProbe): Promise<void> {
  if (await readJson<BackgroundRecord>(paths.record)) return;
  const claim = (await readJson<BackgroundRecord>(paths.claim))!;
  for (const pid of await findProcessesWithEnvironment(claim.marker)) {
    const processStat = await probe.processStat(pid);
    if (processStat && processStat.processGroup === pid) {
      await writeJsonAtomic(paths.record, { ...claim, pid, processStartTime: processStat.startTime, bootId: await probe.bootId() });
      return;
    }
  }
  await writeJsonAtomic(paths.record, { ...claim, startError: 'the worker stopped while starting it; it was not started again', unconfirmed: true });
}

/** Whether the recorded process is still the command's (same boot, same pid, same start time, not a zombie). */
async function isRunning(record: BackgroundRecord, probe: ProcessProbe): Promise<boolean> {
  if (record.pid === undefined) return false;
  if (record.bootId !== undefined && record.bootId !== (await probe.bootId())) return false;
  const processStat = await probe.processStat(record.pid);
  if (!processStat || processStat.state === 'Z' || processStat.state === 'X') return false;
  return record.processStartTime === undefined || processStat.startTime === record.processStartTime;
}

async function readExitCode(file: string): Promise<number | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const code = Number(text.trim());
  return Number.isInteger(code) ? code : undefined;
}

async function exists(file: string): Promise<boolean> {
  return (await stat(file).catch(() => undefined)) !== undefined;
}

/** The last `maxChars` of a file (whole characters), with a line saying how much came before. */
export async function readOutputTail(file: string, maxChars: number): Promise<{ tail: string; bytes: number }> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return { tail: '', bytes: 0 };
  try {
    const { size } = await handle.stat();
    // Up to 4 bytes per character; then cut to characters.
    const length = Math.min(size, maxChars * 4);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    let text = buffer.toString('utf8');
    if (length < size) text = text.replace(/^\uFFFD+/, '');
    if (text.length > maxChars) text = text.slice(text.length - maxChars);
    const omitted = size - Buffer.byteLength(text);
    return { tail: omitted > 0 ? `[... ${omitted} earlier bytes in ${file} ...]\n${text}` : text, bytes: size };
  } finally {
    await handle.close();
  }
}

/** Where a task stands now: running, or its outcome. */
export async function backgroundState(
  deps: BackgroundDeps,
  ref: BackgroundTaskRef,
  tailChars = NOTIFICATION_TAIL_CHARS,
): Promise<{ running: true; record: BackgroundRecord; outputBytes: number } | { running: false; outcome: BackgroundOutcome; record?: BackgroundRecord }> {
  const probe = deps.probe ?? procProbe;
  const paths = backgroundPaths(deps.stateDir, ref);
  const record = await readJson<BackgroundRecord>(paths.record);
  if (!record) {
    if (!(await exists(paths.claim))) {
      const detail = `no background task ${ref.taskId} was started on this worker host (${os.hostname()})`;
      return { running: false, outcome: { taskId: ref.taskId, status: 'interrupted', outputPath: paths.output, tail: '', outputBytes: 0, detail } };
    }
    await adoptClaim(paths, probe);
    return backgroundState(deps, ref, tailChars);
  }
  if (await isRunning(record, probe)) {
    const outputBytes = (await stat(record.outputPath).catch(() => undefined))?.size ?? 0;
    return { running: true, record, outputBytes };
  }
  const exitCode = await readExitCode(paths.status);
  const stopped = await exists(paths.stopRequested);
  const { tail, bytes } = await readOutputTail(record.outputPath, tailChars);
  const base = { taskId: ref.taskId, outputPath: record.outputPath, tail, outputBytes: bytes };
  let outcome: BackgroundOutcome;
  if (record.startError) outcome = { ...base, status: record.unconfirmed ? 'interrupted' : 'failed', detail: record.startError };
  else if (stopped) outcome = { ...base, status: 'killed', ...(exitCode !== undefined ? { exitCode } : {}) };
  else if (exitCode === undefined)
    outcome = { ...base, status: 'interrupted', detail: 'its process is gone and it left no exit status (killed outside the agent, or its host restarted)' };
  else outcome = { ...base, status: exitCode === 0 ? 'completed' : 'failed', exitCode };
  return { running: false, outcome, record };
}

export interface SuperviseOptions {
  /** Called every poll while the command runs (Temporal's heartbeat). */
  heartbeat?: (details: { outputBytes: number }) => void;
  /** Aborts the wait (the activity's cancellation); the command keeps running. */
  signal?: AbortSignal;
  pollMs?: number;
  tailChars?: number;
}

/**
 * Waits for the command to end and returns its outcome. Never starts anything: retried on another
 * attempt or worker it re-attaches through the record. Cancellation stops the waiting, not the command.
 */
export async function superviseBackgroundCommand(deps: BackgroundDeps, ref: BackgroundTaskRef, options: SuperviseOptions = {}): Promise<BackgroundOutcome> {
  const invalid = checkTaskId(ref.taskId);
  if (invalid) throw new Error(invalid);
  for (;;) {
    options.signal?.throwIfAborted();
    const state = await backgroundState(deps, ref, options.tailChars ?? NOTIFICATION_TAIL_CHARS);
    if (!state.running) {
      const paths = backgroundPaths(deps.stateDir, ref);
      const release = proxyReleases.get(paths.directory);
      proxyReleases.delete(paths.directory);
      await release?.();
      return state.outcome;
    }
    options.heartbeat?.({ outputBytes: state.outputBytes });
    await sleep(options.pollMs ?? SUPERVISE_POLL_MS, undefined, { signal: options.signal }).catch(() => undefined);
  }
}

/** TaskOutput: the output so far, or (block) once the task ends or the timeout passes. */
export async function readTaskOutput(
  deps: BackgroundDeps,
  input: ReadTaskOutputInput,
  options: { heartbeat?: () => void; signal?: AbortSignal; pollMs?: number } = {},
): Promise<ReadTaskOutputResult> {
  const invalid = checkTaskId(input.taskId);
  if (invalid) throw new Error(invalid);
  const block = input.block ?? true;
  const timeout = Math.min(Math.max(0, input.timeout ?? TASK_OUTPUT_DEFAULT_TIMEOUT_MS), TASK_OUTPUT_MAX_TIMEOUT_MS);
  const deadline = Date.now() + timeout;
  let state = await backgroundState(deps, input, TASK_OUTPUT_MAX_CHARS);
  while (block && state.running && Date.now() < deadline) {
    options.heartbeat?.();
    await sleep(Math.min(options.pollMs ?? 250, Math.max(1, deadline - Date.now())), undefined, { signal: options.signal });
    state = await backgroundState(deps, input, TASK_OUTPUT_MAX_CHARS);
  }
  let result: Omit<ReadTaskOutputResult, 'content'>;
  if (state.running) {
    const { tail } = await readOutputTail(state.record.outputPath, TASK_OUTPUT_MAX_CHARS);
    result = { retrievalStatus: block ? 'timeout' : 'not_ready', status: 'running', output: tail, outputPath: state.record.outputPath };
  } else {
    const { outcome } = state;
    result = {
      retrievalStatus: 'success',
      status: outcome.status,
      ...(outcome.exitCode !== undefined ? { exitCode: outcome.exitCode } : {}),
      output: outcome.tail,
      outputPath: outcome.outputPath,
    };
  }
  const lines = [
    `<retrieval_status>${result.retrievalStatus}</retrieval_status>`,
    `<task_id>${input.taskId}</task_id>`,
    '<task_type>local_bash</task_type>',
    `<status>${result.status}</status>`,
    ...(result.exitCode !== undefined ? [`<exit_code>${result.exitCode}</exit_code>`] : []),
    `<output_file>${result.outputPath}</output_file>`,
    `<output>\n${result.output}\n</output>`,
  ];
  return { ...result, content: lines.join('\n') };
}

/**
 * TaskStop: SIGTERM to the command's process group, SIGKILL after a grace, and the same to
 * processes that left the group but carry its marker. Marks the task stopped first, so its
 * supervisor reports `killed` whatever status the wrapper manages to write.
 */
export async function stopBackgroundCommand(deps: BackgroundDeps, ref: BackgroundTaskRef, graceMs = STOP_GRACE_MS): Promise<StopResult> {
  const invalid = checkTaskId(ref.taskId);
  if (invalid) return { result: 'not-found', message: invalid };
  const probe = deps.probe ?? procProbe;
  const paths = backgroundPaths(deps.stateDir, ref);
  const record = await readJson<BackgroundRecord>(paths.record);
  if (!record) return { result: 'not-found', message: `No background task ${ref.taskId} on this worker.` };
  if (!(await isRunning(record, probe))) return { result: 'already-ended', message: `Task ${ref.taskId} is not running.` };
  await writeFile(paths.stopRequested, new Date().toISOString());
  const groupId = record.pid!;
  const signalAll = async (signal: NodeJS.Signals) => {
    signalProcess(-groupId, signal);
    for (const pid of await findProcessesWithEnvironment(record.marker)) signalProcess(pid, signal);
  };
  await signalAll('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    const marked = await findProcessesWithEnvironment(record.marker);
    // Zombies (a sandbox's init waits for the host's init to reap it) do not count; the SIGKILL below still goes to the whole group.
    if (!(await isRunning(record, probe)) && marked.length === 0) break;
    await sleep(25);
  }
  await signalAll('SIGKILL');
  return { result: 'stopped', message: `Stopped task ${ref.taskId} (${record.command}).` };
}
