/**
 * Runs a shell command in its own process group, so a timeout or a cancellation kills the whole
 * tree (the command and everything it started), never leaving orphans behind.
 */
import { spawn } from 'node:child_process';

export interface ShellRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
}

export interface ShellOptions {
  command: string;
  cwd: string;
  timeoutMs: number;
  signal?: AbortSignal;
  stdin?: string;
  env?: Record<string, string>;
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
  /** In-memory capture cap per stream; output past it is dropped (the caller reports the size). */
  maxCaptureBytes?: number;
}

const KILL_GRACE_MS = 500;

export function runShellCommand(options: ShellOptions): Promise<ShellRun> {
  const maxCapture = options.maxCaptureBytes ?? 10 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', options.command], {
      cwd: options.cwd,
      detached: true, // own process group: kill(-pid) reaches every descendant
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let aborted = false;
    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
      setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }, KILL_GRACE_MS).unref();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (stdout.length < maxCapture) stdout += chunk;
      options.onOutput?.(chunk, 'stdout');
    });
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < maxCapture) stderr += chunk;
      options.onOutput?.(chunk, 'stderr');
    });
    child.stdin.on('error', () => undefined); // the command may exit without reading stdin
    child.stdin.end(options.stdin ?? '');
    child.on('error', (error) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      // The group may still hold background children of the command; they go with it.
      if (timedOut || aborted) killGroup();
      resolve({ exitCode, signal, stdout, stderr, timedOut, aborted });
    });
  });
}
