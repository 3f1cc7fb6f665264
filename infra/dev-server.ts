/**
 * Start a Temporal dev server (`temporal server start-dev`) from the CLI that infra/temporal-cli.ts finds or builds.
 *
 * - `startDevServer()` — used by the test global setup (ephemeral, in-memory, free ports, headless) and by anything
 *   else that needs a throwaway server.
 * - `runServerForPeople()` — what `npm run server` (client/cli.ts `server`) calls: a persistent SQLite-backed
 *   server on 127.0.0.1:7233 with the Web UI on :8233, until Ctrl+C / SIGTERM.
 * - `isTemporalReachable()` — a real gRPC round trip (Connection.connect + GetSystemInfo) with a short timeout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Connection } from '@temporalio/client';
import { type SearchAttributeType } from '@temporalio/common';
import { SEARCH_ATTRIBUTES } from '../common/search-attributes';
import { ensureTemporalCli, forwardLines } from './temporal-cli';

/** How `temporal server start-dev --search-attribute name=TYPE` spells each search attribute type. */
const CLI_SEARCH_ATTRIBUTE_TYPES: Record<SearchAttributeType, string> = {
  TEXT: 'Text',
  KEYWORD: 'Keyword',
  INT: 'Int',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

export const REPO_ROOT = path.resolve(__dirname, '..');
/** Where `npm run server` keeps its state (git-ignored: `.durable-agent/`). */
export const DEFAULT_DB_FILENAME = path.join(REPO_ROOT, '.durable-agent', 'temporal.db');
export const DEFAULT_PORT = 7233;
export const DEFAULT_UI_PORT = 8233;
/** `durable-agent server` passes this to `--ui-codec-endpoint` (e.g. http://127.0.0.1:8888 or …:8888/<token>). */
export const UI_CODEC_ENDPOINT_VARIABLE = 'DURABLE_AGENT_UI_CODEC_ENDPOINT';

export interface DevServerOptions {
  /** In-memory state and free ports (unless `port`/`uiPort` are given). Default true. When false, the server
   *  persists to `dbFilename` (default `.durable-agent/temporal.db`) and uses ports 7233/8233 by default. */
  ephemeral?: boolean;
  /** SQLite file to persist to (implies persistence even when `ephemeral` is left at its default). */
  dbFilename?: string;
  /** Frontend gRPC port. */
  port?: number;
  /** Web UI port (ignored when headless). */
  uiPort?: number;
  /** No Web UI. Default false. */
  headless?: boolean;
  /** Namespace to create and wait for. Default 'default' (which start-dev always creates). */
  namespace?: string;
  /** Our own progress lines (and the server's output when `forwardServerOutput`). Default: stderr. */
  log?: (line: string) => void;
  /** Forward the server's stdout/stderr lines to `log`. Default false (they are kept for error messages). */
  forwardServerOutput?: boolean;
  /** Server log level (debug, info, warn, error, never). Default 'warn'. */
  logLevel?: string;
  /** How long to wait for the server to answer. Default 60 s. */
  startTimeoutMs?: number;
  /** Use this Temporal CLI binary instead of calling ensureTemporalCli(). */
  cliPath?: string;
  /** Dynamic config values laid over {@link DEV_SERVER_DYNAMIC_CONFIG}, key by key (benchmarks compare settings). */
  dynamicConfig?: Record<string, DynamicConfigValue>;
  /** Extra arguments for `temporal server start-dev`. */
  extraArgs?: string[];
}

export type DynamicConfigValue = string | number | boolean;

/**
 * The dynamic config every dev server the project starts gets (`--dynamic-config-value key=JSON`): tests' global
 * setup, `npm run server`, `npm start`'s demo, benchmarks. Performance figures: bench/results/dispatch-latency.md
 * (`npm run bench:dispatch`: a workflow awaiting 50 no-op activities in sequence, ms per hop, 2-core machine).
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, DynamicConfigValue>> = {
  // Same as the TypeScript SDK's own test server; the version check would call out to the internet.
  'frontend.enableServerVersionCheck': false,
  'frontend.enableUpdateWorkflowExecution': true,
  'frontend.enableUpdateWorkflowExecutionAsyncAccepted': true,
  // Every workflow or activity task reaches matching through a read of its history shard's transfer queue, and those
  // reads are limited to 20 per second per shard (burst 20). The dev server has ONE shard, shared by every workflow
  // on it: once the burst is spent each dispatch waits 50 ms, 100 ms per activity hop (50 hops: 5.05 s). At 1000/s:
  // 19–21 ms per hop; 100/s and 10000/s measured the same, so at 1000 the limit no longer binds.
  'history.transferProcessorMaxPollRPS': 1000,
  // Eager activity execution: the reply to the workflow task completion carries the activity task it scheduled,
  // saving a transfer-queue read and a trip through matching per activity: 100 → 50 ms per hop under the default
  // limit, 19.8 → 16.6 ms per hop with the raised one.
  'system.enableActivityEagerExecution': true,
  // Left at their defaults because they measured no different: 4 task queue partitions (1 partition: 100.0 vs
  // 100.0 ms per hop; 18.7 vs 19.7 ms with the settings above) and matching.forwarderMaxRatePerSecond (100.0 ms).
};

export interface DevServer {
  /** host:port of the frontend gRPC service. */
  address: string;
  /** Web UI URL, unless headless. */
  uiUrl?: string;
  cliPath: string;
  namespace: string;
  process: ChildProcess;
  /** SIGTERM, then SIGKILL after a grace period; resolves once the process has exited. Idempotent. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
const STOP_GRACE_MS = 10_000;

function defaultLog(line: string): void {
  process.stderr.write(`[dev-server] ${line}\n`);
}

/** Real gRPC check: connects and calls WorkflowService.GetSystemInfo within `timeoutMs`. */
export async function isTemporalReachable(address: string, timeoutMs = 2_000): Promise<boolean> {
  let connection: Connection | undefined;
  let timer: NodeJS.Timeout | undefined;
  const attempt = (async () => {
    connection = await Connection.connect({ address, connectTimeout: timeoutMs });
    await connection.withDeadline(Date.now() + timeoutMs, () => connection!.workflowService.getSystemInfo({}));
    return true;
  })();
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs + 500);
  });
  try {
    return await Promise.race([attempt.catch(() => false), timeout]);
  } finally {
    clearTimeout(timer);
    attempt.catch(() => undefined).finally(() => connection?.close().catch(() => undefined));
  }
}

/** Where a port's first choice starts: below it, ports are left to services people run on purpose. */
const LOWEST_CHOSEN_PORT = 20_000;

/** The first port of the kernel's ephemeral range (where outgoing connections take their local ports); 32768 when unknown. */
function ephemeralRangeStart(): number {
  try {
    const start = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) && start > LOWEST_CHOSEN_PORT + 1_000 ? start : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * `count` distinct free TCP ports on 127.0.0.1, chosen below the kernel's ephemeral range: a server
 * binds its ports seconds after they were chosen (PostgreSQL and the schemas come first), and a port
 * the kernel hands out for `listen(0)` is one it also hands to outgoing connections in between (a
 * PostgreSQL-backed server failed to start in a full test run: "bind: address already in use").
 * Each port is held while the others are found; the OS picks one only when none is free below the range.
 */
export async function getFreePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  const listen = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, HOST, () => {
        servers.push(server);
        resolve(true);
      });
    });
  try {
    const span = ephemeralRangeStart() - LOWEST_CHOSEN_PORT;
    for (let found = 0; found < count; found++) {
      let held = false;
      for (let attempt = 0; attempt < 50 && !held; attempt++) {
        const port = LOWEST_CHOSEN_PORT + Math.floor(Math.random() * span);
        held = !servers.some((server) => (server.address() as net.AddressInfo).port === port) && (await listen(port));
      }
      if (!held && !(await listen(0))) throw new Error('no free TCP port on 127.0.0.1');
    }
    return servers.map((server) => (server.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

// Servers started by this process; killed if the process exits without stopping them.
const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) {
      try {
        child.kill('SIGTERM');
      } catch {
        /* already gone */
      }
    }
  });
}

/**
 * A tiny detached `sh` loop that SIGTERMs (then SIGKILLs) the server if this process dies without running its
 * 'exit' handlers (SIGKILL, a crash, a signal with no handler). It exits by itself once the server is gone.
 */
function spawnWatchdog(serverPid: number): ChildProcess | undefined {
  if (process.platform === 'win32') return undefined;
  const script = [
    'p=$1; s=$2',
    'while kill -0 "$p" 2>/dev/null; do kill -0 "$s" 2>/dev/null || exit 0; sleep 1; done',
    'kill -TERM "$s" 2>/dev/null',
    'i=0; while kill -0 "$s" 2>/dev/null && [ $i -lt 10 ]; do sleep 1; i=$((i+1)); done',
    'kill -KILL "$s" 2>/dev/null; exit 0',
  ].join('\n');
  try {
    const wd = spawn('sh', ['-c', script, 'durable-agent-dev-server-watchdog', String(process.pid), String(serverPid)], {
      detached: true,
      stdio: 'ignore',
    });
    wd.on('error', () => undefined);
    wd.unref();
    return wd;
  } catch {
    return undefined;
  }
}

export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const log = options.log ?? defaultLog;
  const startedAt = Date.now();
  const cli = options.cliPath ? { path: options.cliPath } : await ensureTemporalCli({ log });
  const namespace = options.namespace ?? 'default';
  const headless = options.headless ?? false;
  const persistent = options.ephemeral === false || options.dbFilename !== undefined;
  const dbFilename = persistent ? path.resolve(options.dbFilename ?? DEFAULT_DB_FILENAME) : undefined;
  const freePortsWanted = persistent ? 0 : 2;
  const [free1, free2] = freePortsWanted ? await getFreePorts(freePortsWanted) : [];
  const port = options.port ?? (persistent ? DEFAULT_PORT : free1);
  const uiPort = headless ? undefined : (options.uiPort ?? (persistent ? DEFAULT_UI_PORT : free2));
  const address = `${HOST}:${port}`;

  if (dbFilename) fs.mkdirSync(path.dirname(dbFilename), { recursive: true });

  const args = ['server', 'start-dev', '--ip', HOST, '--port', String(port)];
  if (headless) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  if (dbFilename) args.push('--db-filename', dbFilename);
  args.push('--namespace', namespace);
  for (const key of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${key.name}=${CLI_SEARCH_ATTRIBUTE_TYPES[key.type]}`);
  args.push('--log-level', options.logLevel ?? 'warn');
  for (const [key, value] of Object.entries({ ...DEV_SERVER_DYNAMIC_CONFIG, ...options.dynamicConfig })) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  args.push(...(options.extraArgs ?? []));

  log(`Starting Temporal dev server: ${cli.path} ${args.join(' ')}` + (dbFilename ? '' : ' (in-memory: state is lost when it stops)'));
  // Own process group (detached): a terminal Ctrl+C reaches us, and we stop the server via stop(), rather than
  // the server racing us to exit. If we die without stopping it, the 'exit' hook and the watchdog kill it.
  const child = spawn(cli.path, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
  live.add(child);
  installExitHook();

  let stopping: Promise<void> | undefined;
  const tail: string[] = [];
  const onLine = (line: string) => {
    if (!line.trim()) return;
    tail.push(line);
    if (tail.length > 40) tail.shift();
    // Once we are stopping it, its shutdown chatter (dial errors between its own services) is just noise.
    if (options.forwardServerOutput && !stopping) log(`[temporal] ${line}`);
  };
  forwardLines(child.stdout, onLine);
  forwardLines(child.stderr, onLine);

  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let spawnError: Error | undefined;
  const exitPromise = new Promise<void>((resolve) => {
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      live.delete(child);
      resolve();
    });
    child.on('error', (err) => {
      spawnError = err;
      live.delete(child);
      resolve();
    });
  });
  const watchdog = child.pid ? spawnWatchdog(child.pid) : undefined;

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (!exited && !spawnError) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => {
          if (!exited) child.kill('SIGKILL');
        }, STOP_GRACE_MS);
        await exitPromise;
        clearTimeout(timer);
      }
      if (watchdog?.pid && watchdog.exitCode === null) {
        try {
          process.kill(watchdog.pid, 'SIGTERM');
        } catch {
          /* already gone */
        }
      }
    })();
    return stopping;
  };

  const tailText = () => (tail.length ? `\nLast server output:\n  ${tail.slice(-20).join('\n  ')}` : '\n(no server output)');
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (spawnError) throw new Error(`Could not start ${cli.path}: ${spawnError.message}`);
    if (exited) {
      throw new Error(
        `The Temporal dev server exited during start-up (${exited.signal ?? `exit code ${exited.code}`}) ` +
          `— is port ${port}${uiPort ? ` or ${uiPort}` : ''} already in use?` +
          tailText(),
      );
    }
    if (await isReady(address, namespace)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `The Temporal dev server at ${address} did not answer within ${Math.round(timeoutMs / 1000)} s ` +
          `(Connection.connect + GetSystemInfo + DescribeNamespace ${namespace}).` +
          tailText(),
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }

  const uiUrl = uiPort ? `http://localhost:${uiPort}` : undefined;
  log(
    `Temporal dev server ready at ${address} (namespace ${namespace}) in ${((Date.now() - startedAt) / 1000).toFixed(1)} s` +
      (uiUrl ? `; Web UI ${uiUrl}` : ''),
  );
  return { address, uiUrl, cliPath: cli.path, namespace, process: child, stop };
}

async function isReady(address: string, namespace: string): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: 1_000 });
    await connection.withDeadline(Date.now() + 2_000, async () => {
      await connection!.workflowService.getSystemInfo({});
      await connection!.workflowService.describeNamespace({ namespace });
    });
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/**
 * `npm run server`: a persistent dev server for people — SQLite state in `.durable-agent/temporal.db`, gRPC on
 * 127.0.0.1:7233, Web UI on http://localhost:8233 — that runs until SIGINT/SIGTERM and then stops cleanly.
 */
export async function runServerForPeople(overrides: Partial<DevServerOptions> = {}): Promise<void> {
  const log = overrides.log ?? ((line: string) => console.log(line));
  const port = overrides.port ?? DEFAULT_PORT;
  if (await isTemporalReachable(`${HOST}:${port}`, 1_500)) {
    log(`A Temporal server is already answering at ${HOST}:${port}; nothing to start. (Stop it first to restart it.)`);
    // Perhaps a stock `temporal server start-dev`, started without our search attributes: `list --status` and the
    // workspace filters need them, so they are added now (issue 32, item 3) — or it says what to run.
    await addSearchAttributesTo(`${HOST}:${port}`, overrides.namespace ?? 'default', log);
    return;
  }
  const server = await startDevServer({
    ephemeral: false,
    dbFilename: DEFAULT_DB_FILENAME,
    port,
    uiPort: overrides.uiPort ?? DEFAULT_UI_PORT,
    headless: false,
    forwardServerOutput: true,
    // The Web UI decrypts encrypted conversations through `durable-agent codec-server` (docs/deployment.md).
    extraArgs: process.env[UI_CODEC_ENDPOINT_VARIABLE] ? ['--ui-codec-endpoint', process.env[UI_CODEC_ENDPOINT_VARIABLE]] : [],
    ...overrides,
    log,
  });
  log('');
  log(`Temporal server:  ${server.address}   (namespace ${server.namespace})`);
  log(`Web UI:           ${server.uiUrl}`);
  // Its path may hold the codec server's token: show only where it points.
  const codecEndpoint = process.env[UI_CODEC_ENDPOINT_VARIABLE];
  if (codecEndpoint) log(`UI codec endpoint: on ${URL.canParse(codecEndpoint) ? new URL(codecEndpoint).origin : `${codecEndpoint} (not a URL!)`}`);
  log(`State:            ${overrides.dbFilename ?? DEFAULT_DB_FILENAME}`);
  log(`Search attributes: ${SEARCH_ATTRIBUTES.map((key) => key.name).join(', ')}`);
  log('Press Ctrl+C to stop.');

  await new Promise<void>((resolve, reject) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      // Under `npm run`/tsx the signal can arrive twice (from the terminal and relayed by tsx): keep the handlers
      // installed until the server has stopped, so a repeat does not kill us half-way through stopping.
      if (stopping) return;
      stopping = true;
      log(`\n${signal} received; stopping the Temporal server…`);
      server.process.off('exit', onExit);
      server.stop().then(
        () => {
          cleanup();
          log('Temporal server stopped.');
          resolve();
        },
        (err: unknown) => {
          cleanup();
          reject(err);
        },
      );
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      cleanup();
      reject(new Error(`The Temporal server exited unexpectedly (${signal ?? `exit code ${code}`}).`));
    };
    const cleanup = () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      server.process.off('exit', onExit);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    server.process.once('exit', onExit);
  });
}

/** Registers the search attributes a server already running lacks; when it cannot, the commands that would. */
async function addSearchAttributesTo(address: string, namespace: string, log: (line: string) => void): Promise<void> {
  const { setUpNamespace } = await import('./namespace-setup');
  const connection = await Connection.connect({ address, connectTimeout: 2_000 });
  try {
    await setUpNamespace(connection, { namespace, log: (line) => log(`It lacked durable-agent's search attributes: ${line}.`) });
    log(`Search attributes: ${SEARCH_ATTRIBUTES.map((key) => key.name).join(', ')} (namespace ${namespace}).`);
  } catch (error) {
    log(
      `Could not check or add durable-agent's search attributes there (${(error as Error).message}); without them \`list --status\` and ` +
        `the workspace filters fail. Add them with:\n` +
        SEARCH_ATTRIBUTES.map(
          (key) =>
            `  temporal operator search-attribute create --address ${address} --namespace ${namespace} --name ${key.name} --type ${CLI_SEARCH_ATTRIBUTE_TYPES[key.type]}`,
        ).join('\n'),
    );
  } finally {
    await connection.close().catch(() => undefined);
  }
}

if (require.main === module) {
  runServerForPeople().catch((err: Error) => {
    console.error(err.message);
    process.exit(1);
  });
}
