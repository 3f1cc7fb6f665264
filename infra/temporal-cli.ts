/**
 * Find (or, failing that, build) the Temporal CLI binary the project uses for its dev server.
 *
 * Lookup order — the first one that works wins, and the chosen source is logged:
 *   1. `$TEMPORAL_CLI_PATH` (an explicit setting: if it is set but broken we fail loudly instead of guessing);
 *   2. `temporal` on PATH (must answer `temporal --version`);
 *   3. the cached build `${DURABLE_AGENT_CACHE_DIR ?? ~/.cache/durable-agent}/temporal-1.5.1/temporal`;
 *   4. `go install github.com/temporalio/cli/cmd/temporal@v1.5.1` into that directory, if `go` is installed
 *      (a lock file makes concurrent callers wait for one build instead of building twice);
 *   5. the download that `@temporalio/testing` does for `TestWorkflowEnvironment.createLocal()`
 *      (https://temporal.download, needs internet access; cached under `<cache dir>/sdk-download/`).
 *
 * The build happens once per machine (per cache directory): it says so, where the binary goes, and
 * how long it has been going — a progress line on a terminal (`live`), rewritten every second, or
 * else a plain line every 10 s — with go's own progress (modules downloaded, packages built: `-v`).
 *
 * `tsx infra/temporal-cli.ts` (`npm run temporal:ensure`) ensures the CLI and prints its path on stdout;
 * progress goes to stderr.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const TEMPORAL_CLI_VERSION = '1.5.1';
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';
/** `go.mod` of github.com/temporalio/cli v1.5.1 says `go 1.25.0`. */
const MIN_GO_MINOR = 25;

export type TemporalCliSource = 'TEMPORAL_CLI_PATH' | 'PATH' | 'cache' | 'go install' | '@temporalio/testing download';

export interface EnsureTemporalCliOptions {
  log?: (line: string) => void;
  /** A terminal for a build's live progress line (rewritten in place); without one, a line every 10 s goes to `log`. */
  live?: NodeJS.WriteStream;
  /** Log which binary is used when one is found (default true); a build and its progress are logged either way. */
  announceFound?: boolean;
}

export interface TemporalCli {
  /** Absolute path (or bare command name, for the PATH case) of a working `temporal` binary. */
  path: string;
  /** Where it came from: one of {@link TemporalCliSource}, plus details. */
  source: string;
}

const exe = process.platform === 'win32' ? 'temporal.exe' : 'temporal';

export function temporalCacheRoot(): string {
  return process.env.DURABLE_AGENT_CACHE_DIR || path.join(os.homedir(), '.cache', 'durable-agent');
}

export function cachedCliDir(): string {
  return path.join(temporalCacheRoot(), `temporal-${TEMPORAL_CLI_VERSION}`);
}

export function cachedCliPath(): string {
  return path.join(cachedCliDir(), exe);
}

const goInstallCommand = () => `GOBIN=${cachedCliDir()} go install ${TEMPORAL_CLI_MODULE}@v${TEMPORAL_CLI_VERSION}`;
/** Same linker flags as the CLI's release builds (.goreleaser.yml): stripped, and `--version` says 1.5.1. */
const GO_LDFLAGS = `-s -w -X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION}`;

/** Runs `<bin> --version`; returns its first output line, or undefined if it does not run. */
export function cliVersion(bin: string): string | undefined {
  const res = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (res.error || res.status !== 0) return undefined;
  return `${res.stdout}${res.stderr}`.trim().split('\n')[0] || 'temporal (unknown version)';
}

function defaultLog(line: string): void {
  process.stderr.write(`[temporal-cli] ${line}\n`);
}

export async function ensureTemporalCli(options: EnsureTemporalCliOptions = {}): Promise<TemporalCli> {
  const log = options.log ?? defaultLog;
  const found = options.announceFound === false ? () => {} : log;
  const tried: string[] = [];

  // 1. Explicit override.
  const envPath = process.env.TEMPORAL_CLI_PATH;
  if (envPath) {
    const version = cliVersion(envPath);
    if (!version) {
      throw new Error(
        `TEMPORAL_CLI_PATH is set to ${envPath}, but \`${envPath} --version\` does not run. ` +
          `Point it at a working Temporal CLI binary, or unset it to let durable-agent find or build one.`,
      );
    }
    const fromEnv = { path: path.resolve(envPath), source: 'TEMPORAL_CLI_PATH' };
    found(`Using the Temporal CLI from TEMPORAL_CLI_PATH: ${fromEnv.path} (${version})`);
    return fromEnv;
  }
  tried.push('TEMPORAL_CLI_PATH: not set');

  // 2. On PATH.
  const onPath = cliVersion('temporal');
  if (onPath) {
    const resolved = whichSync('temporal') ?? 'temporal';
    found(`Using the Temporal CLI on PATH: ${resolved} (${onPath})`);
    return { path: resolved, source: 'PATH' };
  }
  tried.push('`temporal` on PATH: not found (or `temporal --version` failed)');

  // 3. Cached build.
  const cached = cachedCliPath();
  const cachedVersion = fs.existsSync(cached) ? cliVersion(cached) : undefined;
  if (cachedVersion) {
    found(`Using the cached Temporal CLI: ${cached} (${cachedVersion})`);
    return { path: cached, source: 'cache' };
  }
  tried.push(`cached build ${cached}: ${fs.existsSync(cached) ? 'exists but does not run' : 'not there'}`);

  // 4. Build it with Go.
  const go = goVersion();
  if (go) {
    try {
      const built = await buildWithGo(go, log, options.live);
      return built;
    } catch (err) {
      const msg = (err as Error).message;
      log(`go install failed: ${msg}`);
      tried.push(`go install (${go.raw}): failed: ${msg}`);
    }
  } else {
    tried.push('go install: `go` is not installed');
  }

  // 5. @temporalio/testing's own download (needs internet).
  try {
    const downloaded = await downloadViaTestingPackage(log);
    if (downloaded) return downloaded;
    tried.push('@temporalio/testing download: produced no binary');
  } catch (err) {
    tried.push(`@temporalio/testing download: ${(err as Error).message}`);
  }

  throw new Error(
    [
      `Could not find or build the Temporal CLI (v${TEMPORAL_CLI_VERSION}). Tried:`,
      ...tried.map((t) => `  - ${t}`),
      '',
      'Fix it in one of these ways:',
      `  - install Go >= 1.${MIN_GO_MINOR} (https://go.dev/dl/) and re-run \`npm run temporal:ensure\`, or build it yourself:`,
      `      ${goInstallCommand()}`,
      '    (needs access to the Go module proxy, proxy.golang.org; the first build takes several minutes)',
      '  - or install a Temporal CLI release (https://github.com/temporalio/cli/releases,',
      '    `brew install temporal`, or `curl -sSf https://temporal.download/cli.sh | sh`) and put `temporal` on PATH,',
      '  - or set TEMPORAL_CLI_PATH=/path/to/temporal to use a binary you already have.',
    ].join('\n'),
  );
}

function whichSync(cmd: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, process.platform === 'win32' ? `${cmd}.exe` : cmd);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      /* keep looking */
    }
  }
  return undefined;
}

export interface GoVersion {
  raw: string;
  major: number;
  minor: number;
}

export function goVersion(): GoVersion | undefined {
  const res = spawnSync('go', ['version'], { encoding: 'utf8', timeout: 30_000 });
  if (res.error || res.status !== 0) return undefined;
  const raw = res.stdout.trim();
  const m = /go(\d+)\.(\d+)/.exec(raw.replace(/^go version /, ''));
  return { raw, major: m ? Number(m[1]) : 0, minor: m ? Number(m[2]) : 0 };
}

async function buildWithGo(go: GoVersion, log: (line: string) => void, live?: NodeJS.WriteStream): Promise<TemporalCli> {
  const dir = cachedCliDir();
  const target = cachedCliPath();
  fs.mkdirSync(dir, { recursive: true });
  const lock = await acquireLock(path.join(dir, '.build.lock'), log);
  try {
    // Someone else may have finished the build while we waited for the lock.
    const version = fs.existsSync(target) ? cliVersion(target) : undefined;
    if (version) {
      log(`Using the Temporal CLI another process just built: ${target} (${version})`);
      return { path: target, source: 'cache' };
    }

    log(
      `Building the Temporal CLI v${TEMPORAL_CLI_VERSION} from the Go module proxy, once: it is kept in ${displayPath(dir)} for every later run. ` +
        'The first build takes a few minutes and uses every core…',
    );
    log(`  $ CGO_ENABLED=0 ${goInstallCommand().replace(' go install ', ` go install -v -ldflags='${GO_LDFLAGS}' `)}   (${go.raw})`);
    // Build into a private GOBIN, then rename into place, so nobody ever sees a half-written binary.
    const staging = fs.mkdtempSync(path.join(dir, '.gobin-'));
    const env: NodeJS.ProcessEnv = { ...process.env, GOBIN: staging };
    // The release binaries are built without cgo (.goreleaser.yml); doing the same means no C compiler is needed.
    if (env.CGO_ENABLED === undefined) env.CGO_ENABLED = '0';
    if (go.major === 1 && go.minor < MIN_GO_MINOR && !process.env.GOTOOLCHAIN) {
      // Let go fetch a new enough toolchain (through the module proxy) instead of failing.
      env.GOTOOLCHAIN = 'auto';
      log(`  ${go.raw} is older than go1.${MIN_GO_MINOR}; setting GOTOOLCHAIN=auto so go fetches a newer toolchain`);
    }
    const started = Date.now();
    let progress: GoProgress | undefined;
    try {
      // -v: go names each package as it builds it, the build's own progress (counted, not printed one by one).
      progress = await runStreaming(
        'go',
        ['install', '-v', `-ldflags=${GO_LDFLAGS}`, `${TEMPORAL_CLI_MODULE}@v${TEMPORAL_CLI_VERSION}`],
        env,
        log,
        () => lock.touch(),
        {
          live,
        },
      );
      const builtPath = path.join(staging, exe);
      if (!fs.existsSync(builtPath)) throw new Error(`go install succeeded but ${builtPath} is missing`);
      fs.renameSync(builtPath, target);
    } finally {
      fs.rmSync(staging, { recursive: true, force: true });
    }
    const builtVersion = cliVersion(target);
    if (!builtVersion) throw new Error(`the freshly built ${target} does not run \`--version\``);
    log(
      `Built ${displayPath(target)} (${builtVersion}) in ${formatElapsed(Date.now() - started)}${progress ? ` (${describeProgress(progress)})` : ''}; later runs use it at once.`,
    );
    return { path: target, source: 'go install' };
  } finally {
    lock.release();
  }
}

/** A path under the home directory as `~/…`. */
export function displayPath(file: string): string {
  const home = os.homedir();
  return home && (file === home || file.startsWith(`${home}${path.sep}`)) ? `~${file.slice(home.length)}` : file;
}

/** `45 s`, `2 min 05 s`. */
export function formatElapsed(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
}

/** What a go build has said so far: modules downloaded (`go: downloading …`) and packages built (`-v`). */
export interface GoProgress {
  downloaded: number;
  built: number;
  latest?: string;
}

/** `12 modules downloaded, 340 packages built`, leaving out what is zero. */
export function describeProgress(progress: GoProgress): string {
  const parts = [
    progress.downloaded ? `${progress.downloaded} module${progress.downloaded === 1 ? '' : 's'} downloaded` : '',
    progress.built ? `${progress.built} package${progress.built === 1 ? '' : 's'} built` : '',
  ].filter(Boolean);
  return parts.join(', ') || 'starting';
}

/**
 * Counts a line of go's output into `progress` when it is progress (a module download, or a package
 * name that `go install -v` prints as it builds it); returns false for anything else (an error, a note).
 */
export function countGoProgress(line: string, progress: GoProgress): boolean {
  const download = /^go: downloading (\S+)/.exec(line);
  if (download) {
    progress.downloaded++;
    progress.latest = download[1];
    return true;
  }
  if (/^[A-Za-z0-9][\w.~-]*(\/[\w.~+-]+)*$/.test(line) && !line.startsWith('go:')) {
    progress.built++;
    progress.latest = line;
    return true;
  }
  return false;
}

export interface StreamingOptions {
  /** A terminal to keep one progress line on, rewritten every second; without one, a plain line every `tickMs`. */
  live?: NodeJS.WriteStream;
  /** How often a plain progress line goes to `log` (default 10 s). */
  tickMs?: number;
}

/**
 * Runs a go command: its progress lines (downloads, packages built) are counted, anything else is
 * forwarded to `log`, and the elapsed time with that progress shows every second on `live` (a
 * terminal) or every `tickMs` as a line. Resolves with the progress counted.
 */
export function runStreaming(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
  onTick?: () => void,
  options: StreamingOptions = {},
): Promise<GoProgress> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const progress: GoProgress = { downloaded: 0, built: 0 };
    const live = options.live?.isTTY ? options.live : undefined;
    let shown = false;
    const clearLive = () => {
      if (live && shown) live.write('\r\u001b[2K');
      shown = false;
    };
    const say = (line: string) => {
      clearLive();
      log(line);
    };
    const status = () => {
      const latest = progress.latest ? ` · ${progress.latest}` : '';
      return `… building, ${formatElapsed(Date.now() - started)} so far: ${describeProgress(progress)}${latest}`;
    };
    const tail: string[] = [];
    const onLine = (line: string) => {
      if (!line.trim()) return;
      tail.push(line);
      if (tail.length > 20) tail.shift();
      if (!countGoProgress(line.trim(), progress)) say(`  ${line}`);
    };
    forwardLines(child.stdout, onLine);
    forwardLines(child.stderr, onLine);
    const columns = () => Math.max(40, (live?.columns || 100) - 1);
    const liveTimer = live
      ? setInterval(() => {
          live.write(`\r\u001b[2K  ${status()}`.slice(0, columns() + 5));
          shown = true;
        }, 1_000)
      : undefined;
    const tickTimer = setInterval(() => {
      onTick?.();
      if (!live) log(`  ${status()}`);
    }, options.tickMs ?? 10_000);
    const stopTimers = () => {
      clearInterval(tickTimer);
      if (liveTimer) clearInterval(liveTimer);
      clearLive();
    };
    child.on('error', (err) => {
      stopTimers();
      reject(err);
    });
    child.on('close', (code, signal) => {
      stopTimers();
      if (code === 0) resolve(progress);
      else reject(new Error(`\`${cmd} ${args.join(' ')}\` exited with ${signal ?? code}. Last output:\n${tail.join('\n')}`));
    });
  });
}

export function forwardLines(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  if (!stream) return;
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, i).replace(/\r$/, ''));
      buf = buf.slice(i + 1);
    }
  });
  stream.on('end', () => {
    if (buf) onLine(buf);
    buf = '';
  });
}

// ---------------------------------------------------------------------------------------------------------------
// A small cross-process lock: an O_EXCL lock file holding {pid, host}. A lock whose owner is dead (same host) or
// whose file has not been touched for LOCK_STALE_MS (owner on another host/container) is taken over.

const LOCK_STALE_MS = 10 * 60_000;
const LOCK_POLL_MS = 2_000;

export interface Lock {
  touch(): void;
  release(): void;
}

export async function acquireLock(lockPath: string, log: (line: string) => void): Promise<Lock> {
  let announced = false;
  let waitingSince = Date.now();
  let lastWaitLine = Date.now();
  for (;;) {
    try {
      const fd = fs.openSync(lockPath, 'wx');
      fs.writeSync(fd, JSON.stringify({ pid: process.pid, host: os.hostname(), since: new Date().toISOString() }));
      fs.closeSync(fd);
      return {
        touch: () => {
          const now = new Date();
          try {
            fs.utimesSync(lockPath, now, now);
          } catch {
            /* ignore */
          }
        },
        release: () => {
          try {
            fs.unlinkSync(lockPath);
          } catch {
            /* ignore */
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readLock(lockPath);
    if (holder.stale) {
      log(`Removing a stale build lock ${lockPath} (${holder.why})`);
      try {
        fs.unlinkSync(lockPath);
      } catch {
        /* someone else removed it */
      }
      continue;
    }
    if (!announced) {
      log(`Another process (${holder.who}) holds ${lockPath} (a build in progress); waiting for it to finish…`);
      announced = true;
      waitingSince = Date.now();
    } else if (Date.now() - lastWaitLine >= 10_000) {
      log(`  … still waiting for that build, ${formatElapsed(Date.now() - waitingSince)} so far`);
      lastWaitLine = Date.now();
    }
    await new Promise((r) => setTimeout(r, LOCK_POLL_MS));
  }
}

function readLock(lockPath: string): { stale: boolean; who: string; why?: string } {
  let info: { pid?: number; host?: string } = {};
  let mtimeMs: number;
  try {
    mtimeMs = fs.statSync(lockPath).mtimeMs;
    info = JSON.parse(fs.readFileSync(lockPath, 'utf8') || '{}');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { stale: false, who: 'nobody' };
    // Half-written lock file: the owner is between open and write; treat as live unless old.
    mtimeMs = Date.now();
  }
  const who = `pid ${info.pid ?? '?'} on ${info.host ?? '?'}`;
  if (info.pid && info.host === os.hostname()) {
    try {
      process.kill(info.pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return { stale: true, who, why: `${who} is gone` };
    }
  }
  if (Date.now() - mtimeMs > LOCK_STALE_MS) {
    return { stale: true, who, why: `untouched for ${Math.round((Date.now() - mtimeMs) / 60_000)} min` };
  }
  return { stale: false, who };
}

// ---------------------------------------------------------------------------------------------------------------
// 5. Reuse @temporalio/testing's download. TestWorkflowEnvironment.createLocal() asks the Rust core (sdk-core's
// ephemeral_server module) to fetch https://temporal.download/cli/default?platform=…&arch=…&sdk-name=sdk-typescript
// &sdk-version=<sdk version>, extract the binary to `<downloadDir>/temporal-sdk-typescript-<sdk version>` (with its
// own `.downloading` lock file) and start it. We run that in a child process with our cache directory as
// `downloadDir`, tear the server down straight away, and keep the binary it left behind.

function sdkDownloadDir(): string {
  return path.join(temporalCacheRoot(), 'sdk-download');
}

function findSdkDownloaded(): string | undefined {
  const dir = sdkDownloadDir();
  if (!fs.existsSync(dir)) return undefined;
  const names = fs
    .readdirSync(dir)
    .filter((n) => n.startsWith('temporal-sdk-typescript-') && !n.endsWith('.downloading'))
    .sort()
    .reverse();
  for (const name of names) {
    const p = path.join(dir, name);
    if (cliVersion(p)) return p;
  }
  return undefined;
}

async function downloadViaTestingPackage(log: (line: string) => void): Promise<TemporalCli | undefined> {
  const previous = findSdkDownloaded();
  if (previous) {
    log(`Using the Temporal CLI previously downloaded by @temporalio/testing: ${previous} (${cliVersion(previous)})`);
    return { path: previous, source: '@temporalio/testing download' };
  }
  let testingEntry: string;
  try {
    testingEntry = require.resolve('@temporalio/testing');
  } catch {
    throw new Error('@temporalio/testing is not installed (it is a devDependency; run `npm ci` with dev dependencies)');
  }
  const dir = sdkDownloadDir();
  fs.mkdirSync(dir, { recursive: true });
  log(`Trying @temporalio/testing's download of the Temporal CLI from https://temporal.download into ${dir} …`);
  const script = `
    const { TestWorkflowEnvironment } = require(${JSON.stringify(testingEntry)});
    (async () => {
      const env = await TestWorkflowEnvironment.createLocal({
        server: { executable: { type: 'cached-download', downloadDir: ${JSON.stringify(dir)}, ttl: '3650d' } },
      });
      await env.teardown();
    })().then(() => process.exit(0), (err) => { console.error(String((err && err.stack) || err)); process.exit(1); });
  `;
  let failure: Error | undefined;
  try {
    await runWithTimeout(process.execPath, ['-e', script], 10 * 60_000, log);
  } catch (err) {
    failure = err as Error;
  }
  // The binary may be there even if starting the throwaway server failed (e.g. its 5 s start-up check).
  const downloaded = findSdkDownloaded();
  if (downloaded) {
    log(`Downloaded ${downloaded} (${cliVersion(downloaded)})`);
    return { path: downloaded, source: '@temporalio/testing download' };
  }
  if (failure) {
    const firstLine = failure.message.split('\n').find((l) => /error|fail/i.test(l)) ?? failure.message.split('\n')[0];
    throw new Error(`failed (needs internet access to temporal.download): ${firstLine.trim()}`);
  }
  return undefined;
}

function runWithTimeout(cmd: string, args: string[], timeoutMs: number, log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: path.resolve(__dirname, '..') });
    const out: string[] = [];
    const onLine = (line: string) => {
      if (!line.trim()) return;
      out.push(line);
      log(`  ${line}`);
    };
    forwardLines(child.stdout, onLine);
    forwardLines(child.stderr, onLine);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`exited with ${signal ?? code}\n${out.slice(-20).join('\n')}`));
    });
  });
}

if (require.main === module) {
  ensureTemporalCli({ live: process.stderr }).then(
    (cli) => {
      process.stdout.write(`${cli.path}\n`);
    },
    (err: Error) => {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    },
  );
}
