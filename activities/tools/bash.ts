/**
 * Bash tool implementation. Each command runs in its own process group (`detached: true`) so a
 * timeout or cancellation can kill everything it started, not just the shell: an orphan left by a
 * cancelled activity would keep running on the worker host with no conversation to report to.
 */
import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as sleep } from 'node:timers/promises';
import { BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS, type BashInput } from '../../common/tools/bash';
import type { ToolExecutionContext, ToolExecutionResult } from './index';

/** Output kept in memory per command; the caller applies the model-facing result budget. */
export const BASH_MAX_CAPTURE_BYTES = 10 * 1024 * 1024;
/** Time between SIGTERM and SIGKILL of the process group. */
export const BASH_KILL_GRACE_MS = 1_000;
/**
 * After the shell exits, how long to wait for its output pipes to close. Background jobs that
 * inherited the pipes keep them open; past this window they are terminated (see below).
 */
const PIPE_DRAIN_MS = 250;
const NO_OUTPUT = 'Tool ran without output or errors';

/** True while any process (zombies included) is in process group `groupId`. */
function processGroupExists(groupId: number): boolean {
  try {
    process.kill(-groupId, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** SIGTERM the whole group, give it a short grace, then SIGKILL whatever is left. */
export async function killProcessGroup(groupId: number, graceMs = BASH_KILL_GRACE_MS): Promise<void> {
  try {
    process.kill(-groupId, 'SIGTERM');
  } catch {
    return; // group already gone
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && processGroupExists(groupId)) await sleep(25);
  try {
    process.kill(-groupId, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Collects a stream's text up to a shared byte budget. */
class OutputCapture {
  private readonly parts: { stdout: string[]; stderr: string[] } = { stdout: [], stderr: [] };
  private bytes = 0;
  truncated = false;

  constructor(private readonly maxBytes: number) {}

  add(stream: 'stdout' | 'stderr', text: string, byteLength: number): void {
    if (this.truncated) return;
    if (this.bytes + byteLength > this.maxBytes) {
      this.truncated = true;
      return;
    }
    this.bytes += byteLength;
    this.parts[stream].push(text);
  }

  text(stream: 'stdout' | 'stderr'): string {
    return this.parts[stream].join('');
  }
}

/** Bash: run `bash -c command` in cwd; stdout then stderr, `Exit code N` and is_error on failure. */
export async function executeBash(input: BashInput, context: ToolExecutionContext): Promise<ToolExecutionResult> {
  const { signal, onProgress } = context;
  signal.throwIfAborted();
  const timeoutMs = Math.min(input.timeout ?? BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS);
  const cwdStat = await stat(context.cwd).catch(() => undefined);
  if (!cwdStat?.isDirectory()) {
    return { isError: true, content: `Working directory does not exist: ${context.cwd}` };
  }

  const child = spawn('bash', ['-c', input.command], {
    cwd: context.cwd,
    detached: true, // its own process group, so we can signal -pid
    stdio: ['ignore', 'pipe', 'pipe'],
    env: process.env,
  });

  const capture = new OutputCapture(BASH_MAX_CAPTURE_BYTES);
  const reportProgress = (text: string) => {
    try {
      onProgress?.(text);
    } catch {
      // A failing progress sink (e.g. a heartbeat after cancellation) must not crash the stream handler.
    }
  };
  for (const stream of ['stdout', 'stderr'] as const) {
    const decoder = new StringDecoder('utf8');
    child[stream].on('data', (chunk: Buffer) => {
      const text = decoder.write(chunk);
      capture.add(stream, text, chunk.length);
      if (text !== '') reportProgress(text);
    });
    child[stream].on('end', () => {
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
  }, timeoutMs);
  signal.addEventListener('abort', terminate, { once: true });
  if (signal.aborted) terminate(); // aborted while we were checking cwd

  let backgroundKilled = false;
  try {
    const outcome = await new Promise<{ code: number | null; signal: NodeJS.Signals | null } | { error: Error }>(
      (resolve) => {
        child.once('error', (error) => resolve({ error }));
        child.once('exit', (code, exitSignal) => resolve({ code, signal: exitSignal }));
      },
    );
    if ('error' in outcome) {
      terminate();
      await termination;
      signal.throwIfAborted();
      return { isError: true, content: `Failed to start bash: ${outcome.error.message}` };
    }
    if (termination) await termination;
    const drained = await Promise.race([closed.then(() => true), sleep(PIPE_DRAIN_MS).then(() => false)]);
    if (!drained && !termination) {
      // Background jobs still hold our pipes: without this the call would never finish.
      backgroundKilled = true;
      terminate();
    }
    if (termination) {
      await termination;
      await Promise.race([closed, sleep(PIPE_DRAIN_MS)]);
    }
    signal.throwIfAborted();

    const parts = [capture.text('stdout').trimEnd(), capture.text('stderr').trimEnd()].filter((part) => part !== '');
    if (capture.truncated) parts.push(`[output capture stopped at ${BASH_MAX_CAPTURE_BYTES} bytes]`);
    if (backgroundKilled) parts.push('[background processes still attached to the output were terminated when the command finished]');
    if (timedOut) {
      parts.push(`Command timed out after ${timeoutMs}ms`);
      return { isError: true, content: parts.join('\n') };
    }
    if (outcome.code !== 0) {
      parts.push(outcome.code === null ? `Command terminated by signal ${outcome.signal}` : `Exit code ${outcome.code}`);
      return { isError: true, content: parts.join('\n') };
    }
    return { isError: false, content: parts.length === 0 ? NO_OUTPUT : parts.join('\n') };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', terminate);
    child.stdout.destroy();
    child.stderr.destroy();
  }
}
