/**
 * ripgrep, the engine of Grep and Glob (issue 23; style §21: regex search gets its library).
 *
 * The binary comes from `@vscode/ripgrep`'s per-platform package (`@vscode/ripgrep-linux-x64`, …),
 * which ships it in the tarball: nothing is downloaded at install. Where no such package exists for
 * the platform, `rg` on PATH is used (Debian's `ripgrep` package; the Dockerfile installs it).
 * `@vscode/ripgrep` itself is an ES module that only does this lookup, so it is repeated here.
 *
 * Rust's regex engine runs in linear time, so an ordinary pattern needs no time limit (the old
 * JavaScript RegExp search needed a worker thread and one). A pattern only PCRE2 can run
 * (look-around, backreferences) backtracks, so that search keeps a time limit.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** Longest a PCRE2 search (look-around, backreferences: a backtracking engine) may run. */
export const PCRE2_TIME_LIMIT_MS = 5_000;

/** ripgrep is missing on this machine: the tools say so (a tool error), nothing crashes. */
export class RipgrepMissingError extends Error {
  override readonly name = 'RipgrepMissingError';
}

/** A PCRE2 search that ran past PCRE2_TIME_LIMIT_MS. */
export class RipgrepTimeoutError extends Error {
  override readonly name = 'RipgrepTimeoutError';
  constructor(readonly timeLimitMs: number) {
    super(`ripgrep stopped after ${timeLimitMs} ms`);
  }
}

let cachedPath: string | undefined;

function isExecutable(candidate: string): boolean {
  try {
    accessSync(candidate, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where the rg binary is: RIPGREP_PATH, the npm per-platform package, else PATH. */
export function ripgrepPath(env: NodeJS.ProcessEnv = process.env, options: { packaged?: boolean } = {}): string {
  const usual = env === process.env && options.packaged !== false;
  if (cachedPath !== undefined && usual) return cachedPath;
  const found = findRipgrep(env, options.packaged !== false);
  if (usual) cachedPath = found;
  return found;
}

function findRipgrep(env: NodeJS.ProcessEnv, packaged: boolean): string {
  const override = env.RIPGREP_PATH;
  if (override !== undefined && override !== '') {
    if (isExecutable(override)) return override;
    throw new RipgrepMissingError(`RIPGREP_PATH is ${override}, which is not an executable file.`);
  }
  const binary = process.platform === 'win32' ? 'rg.exe' : 'rg';
  try {
    const resolved = packaged ? require.resolve(`@vscode/ripgrep-${process.platform}-${process.arch}/bin/${binary}`) : undefined;
    if (resolved !== undefined && isExecutable(resolved)) return resolved;
  } catch {
    // no per-platform package for this platform: try PATH
  }
  for (const directory of (env.PATH ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    const candidate = path.join(directory, binary);
    if (isExecutable(candidate)) return candidate;
  }
  throw new RipgrepMissingError(
    `ripgrep (rg) was not found: neither the npm package @vscode/ripgrep-${process.platform}-${process.arch} ` +
      '(installed by `npm ci` on the platforms it supports) nor `rg` on PATH. Install ripgrep ' +
      '(Debian/Ubuntu: `apt-get install ripgrep`; macOS: `brew install ripgrep`) or set RIPGREP_PATH. ' +
      'Grep and Glob need it; use Bash meanwhile.',
  );
}

export interface RipgrepRun {
  /** Exit code: 0 found, 1 nothing found, 2 an error (possibly alongside results). */
  code: number | null;
  stderr: string;
  /** The run was stopped early because `onRecord` returned false. */
  stoppedEarly: boolean;
}

export interface RipgrepOptions {
  readonly signal: AbortSignal;
  /** Records are separated by this byte: `\n` for lines, `\0` for `--null-data`-like path lists. */
  readonly separator: '\n' | '\0';
  /** Called for every record; return false to stop ripgrep (enough output). */
  readonly onRecord: (record: string) => boolean;
  /** Kill ripgrep after this long (PCRE2 searches only). */
  readonly timeLimitMs?: number;
  readonly cwd?: string;
}

/**
 * Runs rg with `args` (never through a shell) and streams its stdout as records. Aborting the
 * signal kills rg and rejects with the signal's reason; a time limit kills it and rejects with
 * RipgrepTimeoutError.
 */
export function runRipgrep(args: readonly string[], options: RipgrepOptions): Promise<RipgrepRun> {
  options.signal.throwIfAborted();
  const binary = ripgrepPath();
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, {
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let pending = '';
    let stderr = '';
    let stoppedEarly = false;
    let failure: unknown;
    const stop = (reason?: unknown) => {
      if (reason !== undefined && failure === undefined) failure = reason;
      child.kill('SIGKILL');
    };
    const onAbort = () => stop(options.signal.reason);
    options.signal.addEventListener('abort', onAbort, { once: true });
    const timer = options.timeLimitMs === undefined ? undefined : setTimeout(() => stop(new RipgrepTimeoutError(options.timeLimitMs!)), options.timeLimitMs);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (stoppedEarly) return;
      pending += chunk;
      let start = 0;
      let end: number;
      while ((end = pending.indexOf(options.separator, start)) !== -1) {
        const record = pending.slice(start, end);
        start = end + 1;
        if (!options.onRecord(record)) {
          stoppedEarly = true;
          stop();
          break;
        }
      }
      pending = pending.slice(start);
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    child.on('error', (error) => {
      failure ??= error;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      if (failure !== undefined) {
        reject(failure);
        return;
      }
      if (!stoppedEarly && pending !== '') options.onRecord(pending);
      resolve({ code, stderr, stoppedEarly });
    });
  });
}

/** ripgrep's advice to retry with --pcre2 (look-around, backreferences): the pattern needs PCRE2. */
export function needsPcre2(stderr: string): boolean {
  return stderr.includes('--pcre2');
}

/** The gist of a regex parse error from rg's stderr (its last `error:` line), for the tool result. */
export function regexErrorSummary(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const error = [...lines].reverse().find((line) => line.startsWith('error:'));
  return (error ?? lines.at(-1) ?? 'invalid pattern').replace(/^error:\s*/, '');
}

/** The worker's start-up line about Grep and Glob's engine: where rg is, or what to install. */
export function ripgrepStatusLine(): string {
  try {
    return `durable-agent worker: Grep and Glob use ripgrep at ${ripgrepPath()}`;
  } catch (error) {
    return `durable-agent worker: Grep and Glob UNAVAILABLE: ${(error as Error).message}`;
  }
}
