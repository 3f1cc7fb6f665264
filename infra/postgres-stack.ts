/**
 * A production-shape Temporal stack from the project's own scripts, without Docker: PostgreSQL (the machine's own
 * binaries) in a data directory of ours, the Temporal server built from go.temporal.io/server at docker-compose's
 * version (infra/temporal-server.ts), schemas set up and upgraded with `temporal-sql-tool`, the dynamic config that
 * docker-compose also uses (infra/temporal/dynamicconfig.yaml), SQL visibility on PostgreSQL, and the namespace and
 * search attributes registered by infra/namespace-setup.ts (as docker-compose does).
 *
 * - `startPostgresStack()` — tests and benchmarks: free ports, a state directory of their choosing; the Temporal
 *   server can be SIGKILLed and restarted on the same database.
 * - `runPostgresStackForPeople()` — `durable-agent server --postgres` / `npm run server:postgres`: state in
 *   `.durable-agent/postgres-stack/`, gRPC on 127.0.0.1:7233, until Ctrl+C.
 *
 * PostgreSQL refuses to run as root: when we are root, its commands run as the `postgres` user (which must be able
 * to reach the data directory).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../common/search-attributes';
import { REPO_ROOT, getFreePorts, isTemporalReachable } from './dev-server';
import { setUpNamespace } from './namespace-setup';
import { forwardLines } from './temporal-cli';
import { TEMPORAL_SERVER_VERSION, ensureTemporalServer, ensureTemporalUiServer } from './temporal-server';
import { UI_CODEC_ENDPOINT_VARIABLE } from './dev-server';

/** The dynamic config shared with docker-compose.yml. */
export const DYNAMIC_CONFIG_FILE = path.join(REPO_ROOT, 'infra', 'temporal', 'dynamicconfig.yaml');
/** Where `durable-agent server --postgres` keeps PostgreSQL's data, the server config and the logs (git-ignored). */
export const DEFAULT_STACK_DIR = path.join(REPO_ROOT, '.durable-agent', 'postgres-stack');
/** Same user and password as docker-compose.yml's PostgreSQL (a local development stack, not hardened). */
const DB_USER = 'temporal';
const DB_PASSWORD = 'temporal';
const HOST = '127.0.0.1';

export interface PostgresStackOptions {
  /** Holds `pgdata/`, `temporal.yaml` and the logs. Created if missing; reused (same database) if not. */
  stateDir: string;
  /** Frontend gRPC port. Default: a free one. */
  port?: number;
  /** PostgreSQL port. Default: a free one. */
  pgPort?: number;
  namespace?: string;
  log?: (line: string) => void;
  /** Forward the Temporal server's log lines to `log`. Default false. */
  forwardServerOutput?: boolean;
  /** Also run the Web UI (ui-server, built on first use) on this port of 127.0.0.1. Default: no UI. */
  uiPort?: number;
  /** Server log level. Default 'warn'. */
  logLevel?: string;
  /**
   * No fsync in PostgreSQL: tests, whose machine does not crash (a killed process loses nothing either way).
   * Default false.
   */
  noFsync?: boolean;
}

export interface PostgresStack {
  /** host:port of the frontend. */
  address: string;
  namespace: string;
  stateDir: string;
  pgPort: number;
  /** The Web UI's URL, when `uiPort` was given. */
  uiUrl?: string;
  /** The running Temporal server process. */
  readonly server: ChildProcess;
  /** kill -9 the Temporal server and wait until it is gone (PostgreSQL keeps running). */
  killServer(): Promise<void>;
  /** Starts the Temporal server again on the same config and database; resolves once it answers. */
  startServer(): Promise<void>;
  /** Stops the Temporal server, then PostgreSQL. Idempotent. */
  stop(): Promise<void>;
}

// --------------------------------------------------------------------------------------------------------------
// PostgreSQL

/** The directory of PostgreSQL's server binaries: $PG_BIN, `pg_config --bindir`, or the newest /usr/lib/postgresql/N/bin. */
export function findPostgresBin(): string | undefined {
  const has = (dir: string) => fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'pg_ctl'));
  if (process.env.PG_BIN) return has(process.env.PG_BIN) ? process.env.PG_BIN : undefined;
  const config = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (config.status === 0 && has(config.stdout.trim())) return config.stdout.trim();
  const root = '/usr/lib/postgresql';
  if (fs.existsSync(root)) {
    const versions = fs
      .readdirSync(root)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    for (const version of versions) if (has(path.join(root, version, 'bin'))) return path.join(root, version, 'bin');
  }
  return undefined;
}

/** When we are root: the uid/gid of the `postgres` user PostgreSQL runs as. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error('PostgreSQL refuses to run as root, and there is no `postgres` user to run it as. Run as another user, or create one.');
  }
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Why this machine cannot run the stack (no PostgreSQL), or undefined. */
export function postgresUnavailable(): string | undefined {
  return findPostgresBin() ? undefined : 'PostgreSQL is not installed (no initdb/pg_ctl; set PG_BIN to its bin directory)';
}

function runAs(user: { uid: number; gid: number } | undefined, cmd: string, args: string[]): { status: number | null; output: string } {
  const res = spawnSync(cmd, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
    // The postgres user cannot read root's home: run from the filesystem root.
    cwd: '/',
  });
  return { status: res.error ? -1 : res.status, output: `${res.stdout ?? ''}${res.stderr ?? ''}${res.error ? res.error.message : ''}`.trim() };
}

interface Postgres {
  port: number;
  stop(): void;
}

function startPostgres(stateDir: string, port: number, noFsync: boolean, log: (line: string) => void): Postgres {
  const bin = findPostgresBin();
  if (!bin) throw new Error(postgresUnavailable());
  const user = postgresUser();
  const dataDir = path.join(stateDir, 'pgdata');
  const logFile = path.join(stateDir, 'postgresql.log');
  const chown = (file: string) => user && fs.chownSync(file, user.uid, user.gid);

  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    chown(dataDir);
    if (user) {
      const reach = runAs(user, 'test', ['-w', dataDir]);
      if (reach.status !== 0) {
        throw new Error(
          `PostgreSQL runs as the postgres user, which cannot write ${dataDir}: give it access to every directory above it, or choose another state directory.`,
        );
      }
    }
    const pwFile = path.join(dataDir, '..', `.pwfile-${process.pid}`);
    fs.writeFileSync(pwFile, `${DB_PASSWORD}\n`, { mode: 0o600 });
    chown(pwFile);
    try {
      log(`Creating the PostgreSQL database cluster in ${dataDir}`);
      const init = runAs(user, path.join(bin, 'initdb'), [
        '-D',
        dataDir,
        '-U',
        DB_USER,
        `--pwfile=${pwFile}`,
        '-A',
        'scram-sha-256',
        '-E',
        'UTF8',
        '--locale=C',
      ]);
      if (init.status !== 0) throw new Error(`initdb failed:\n${init.output}`);
    } finally {
      fs.rmSync(pwFile, { force: true });
    }
  }
  if (!fs.existsSync(logFile)) {
    fs.writeFileSync(logFile, '');
    chown(logFile);
  }
  // A cluster left running by a process that died: stop it (it is ours: the data directory is).
  if (runAs(user, path.join(bin, 'pg_ctl'), ['-D', dataDir, 'status']).status === 0) {
    log('A PostgreSQL server is still running on this data directory (left by an earlier run): stopping it');
    runAs(user, path.join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
  }
  const settings = [
    `-p ${port}`,
    `-c listen_addresses=${HOST}`,
    // No Unix socket: its path would have to be short and writable; TCP on loopback is what Temporal uses anyway.
    "-c unix_socket_directories=''",
    '-c max_connections=300',
    ...(noFsync ? ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off'] : []),
  ].join(' ');
  const start = runAs(user, path.join(bin, 'pg_ctl'), ['-D', dataDir, '-l', logFile, '-w', '-t', '60', '-o', settings, 'start']);
  if (start.status !== 0) {
    const tail = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n') : '';
    throw new Error(`PostgreSQL did not start on ${HOST}:${port} (is the port in use?):\n${start.output}\n${tail}`);
  }
  log(`PostgreSQL (${bin}) is up on ${HOST}:${port}, data in ${dataDir}`);
  let stopped = false;
  return {
    port,
    stop() {
      if (stopped) return;
      stopped = true;
      runAs(user, path.join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', '-t', '60', 'stop']);
    },
  };
}

// --------------------------------------------------------------------------------------------------------------
// Schemas

function setUpSchemas(sqlTool: string, pgPort: number, log: (line: string) => void): void {
  const base = ['--plugin', 'postgres12', '--ep', HOST, '-p', String(pgPort), '-u', DB_USER, '--pw', DB_PASSWORD];
  const run = (args: string[]) => {
    const res = spawnSync(sqlTool, [...base, ...args], { encoding: 'utf8', timeout: 300_000 });
    return { ok: res.status === 0, output: `${res.stdout ?? ''}${res.stderr ?? ''}`.trim() };
  };
  for (const [db, schema] of [
    ['temporal', 'postgresql/v12/temporal'],
    ['temporal_visibility', 'postgresql/v12/visibility'],
  ] as const) {
    const created = run(['--db', db, 'create-database']);
    if (!created.ok && !/already exists/.test(created.output)) throw new Error(`temporal-sql-tool create-database ${db} failed:\n${created.output}`);
    // As docker-compose's temporal-admin-tools: upgrade; on a database with no schema yet, set up version 0.0 first.
    let updated = run(['--db', db, 'update-schema', '--schema-name', schema]);
    if (!updated.ok) {
      const setup = run(['--db', db, 'setup-schema', '-v', '0.0']);
      if (!setup.ok) throw new Error(`temporal-sql-tool setup-schema ${db} failed:\n${setup.output}`);
      updated = run(['--db', db, 'update-schema', '--schema-name', schema]);
      if (!updated.ok) throw new Error(`temporal-sql-tool update-schema ${db} failed:\n${updated.output}`);
    }
    log(`schema of ${db} is up to date (${schema})`);
  }
}

// --------------------------------------------------------------------------------------------------------------
// Temporal server

interface ServerPorts {
  frontend: number;
  frontendMembership: number;
  frontendHttp: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

/** The server's static config (config/development-postgres12.yaml of the server, with our ports and files). */
export function serverConfigYaml(options: {
  ports: ServerPorts;
  pgPort: number;
  logLevel: string;
  dynamicConfigFile: string;
  numHistoryShards?: number;
}): string {
  const { ports, pgPort } = options;
  const store = (db: string, maxConns: number) => `
      sql:
        pluginName: postgres12
        databaseName: ${db}
        connectAddr: "${HOST}:${pgPort}"
        connectProtocol: tcp
        user: ${DB_USER}
        password: ${DB_PASSWORD}
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: 1h`;
  const service = (grpc: number, membership: number, extra = '') => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnIP: ${HOST}${extra}`;
  return `# Written by infra/postgres-stack.ts on every start; edit that file, not this one.
log:
  stdout: true
  level: ${options.logLevel}
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: ${options.numHistoryShards ?? 4}
  datastores:
    postgres-default:${store('temporal', 20)}
    postgres-visibility:${store('temporal_visibility', 10)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "${HOST}"
services:
  frontend:${service(ports.frontend, ports.frontendMembership, `\n      httpPort: ${ports.frontendHttp}`)}
  history:${service(ports.history, ports.historyMembership)}
  matching:${service(ports.matching, ports.matchingMembership)}
  worker:${service(ports.worker, ports.workerMembership)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "${HOST}:${ports.frontend}"
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: "${options.dynamicConfigFile}"
  pollInterval: 10s
`;
}

const STOP_GRACE_MS = 10_000;

/** Kills the Temporal server and stops PostgreSQL if this process dies without stopping them (SIGKILL, crash). */
function spawnWatchdog(getServerPid: () => number | undefined, stateDir: string, pgBin: string | undefined): ChildProcess | undefined {
  // The server pid changes on restart: the watchdog reads it from a file we keep current.
  const pidFile = path.join(stateDir, 'temporal-server.pid');
  const pid = getServerPid();
  if (pid) fs.writeFileSync(pidFile, String(pid));
  const pgPidFile = path.join(stateDir, 'pgdata', 'postmaster.pid');
  const script = [
    'p=$1; pidfile=$2; pgpid=$3',
    'while kill -0 "$p" 2>/dev/null; do sleep 1; done',
    's=$(cat "$pidfile" 2>/dev/null); [ -n "$s" ] && kill -KILL "$s" 2>/dev/null',
    'u=$(cat "$pidfile.ui" 2>/dev/null); [ -n "$u" ] && kill -KILL "$u" 2>/dev/null',
    // SIGINT: PostgreSQL's fast shutdown.
    'm=$(head -n1 "$pgpid" 2>/dev/null); [ -n "$m" ] && kill -INT "$m" 2>/dev/null',
    'exit 0',
  ].join('\n');
  if (process.platform === 'win32' || !pgBin) return undefined;
  try {
    const wd = spawn('sh', ['-c', script, 'durable-agent-postgres-stack-watchdog', String(process.pid), pidFile, pgPidFile], {
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

/** The Web UI server (ui-server) for `address`, with docker-compose's UI version, on 127.0.0.1:`port`. */
async function startUi(stateDir: string, port: number, address: string, namespace: string, log: (line: string) => void): Promise<ChildProcess> {
  const binary = await ensureTemporalUiServer(log);
  const configDir = path.join(stateDir, 'ui', 'config');
  fs.mkdirSync(configDir, { recursive: true });
  const codec = process.env[UI_CODEC_ENDPOINT_VARIABLE];
  fs.writeFileSync(
    path.join(configDir, 'development.yaml'),
    [
      '# Written by infra/postgres-stack.ts on every start.',
      `temporalGrpcAddress: "${address}"`,
      `host: "${HOST}"`,
      `port: ${port}`,
      'enableUi: true',
      `defaultNamespace: "${namespace}"`,
      'cors:',
      '  allowOrigins:',
      `    - "http://localhost:${port}"`,
      ...(codec ? ['codec:', `  endpoint: "${codec}"`] : []),
      '',
    ].join('\n'),
  );
  const child = spawn(binary, ['--root', path.join(stateDir, 'ui'), '--config', 'config', '--env', 'development', 'start'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: process.platform !== 'win32',
  });
  // The watchdog (spawnWatchdog) kills it too if we die without stopping it.
  fs.writeFileSync(path.join(stateDir, 'temporal-server.pid.ui'), String(child.pid ?? ''));
  let output = '';
  child.stderr?.on('data', (chunk) => (output = `${output}${chunk}`.slice(-4000)));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`The Web UI server exited during start-up:\n${output}`);
    const ok = await fetch(`http://${HOST}:${port}/`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`The Web UI server did not answer on ${HOST}:${port} within 60 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  log(`Web UI (ui-server) on http://localhost:${port}`);
  return child;
}

/** `count` distinct ports in 20000–32767 that are free on 127.0.0.1 now (tried at random). */
async function freeLowPorts(count: number): Promise<number[]> {
  const found: number[] = [];
  for (let tries = 0; found.length < count && tries < 1000; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 12_768);
    if (found.includes(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const probe = net.createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, HOST, () => probe.close(() => resolve(true)));
    });
    if (free) found.push(port);
  }
  if (found.length < count) throw new Error("Found no free ports below 32768 for the Temporal server's membership.");
  return found;
}

async function isReady(address: string, namespace?: string): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: 1_000 });
    await connection.withDeadline(Date.now() + 2_000, async () => {
      await connection!.workflowService.getSystemInfo({});
      if (namespace) await connection!.workflowService.describeNamespace({ namespace });
    });
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

export async function startPostgresStack(options: PostgresStackOptions): Promise<PostgresStack> {
  const log = options.log ?? ((line: string) => process.stderr.write(`[postgres-stack] ${line}\n`));
  const namespace = options.namespace ?? 'default';
  const stateDir = path.resolve(options.stateDir);
  const startedAt = Date.now();
  fs.mkdirSync(stateDir, { recursive: true });
  const binaries = await ensureTemporalServer(log);

  const free = await getFreePorts(10);
  // The server stores membership ports in a smallint column (cluster_membership.rpc_port): below 32768, where the
  // OS's ephemeral ports (what getFreePorts hands out) are not.
  const [frontendMembership, historyMembership, matchingMembership, workerMembership] = await freeLowPorts(4);
  const pgPort = options.pgPort ?? free[9];
  const frontend = options.port ?? free[0];
  // With the default frontend port, the other services take the server's own defaults (as docker-compose does).
  const ports: ServerPorts =
    frontend === 7233
      ? {
          frontend,
          frontendMembership: 6933,
          frontendHttp: 7243,
          history: 7234,
          historyMembership: 6934,
          matching: 7235,
          matchingMembership: 6935,
          worker: 7239,
          workerMembership: 6939,
        }
      : {
          frontend,
          frontendMembership,
          frontendHttp: free[2],
          history: free[3],
          historyMembership,
          matching: free[5],
          matchingMembership,
          worker: free[7],
          workerMembership,
        };
  const address = `${HOST}:${frontend}`;

  const postgres = startPostgres(stateDir, pgPort, options.noFsync ?? false, log);
  let server: ChildProcess | undefined;
  let watchdog: ChildProcess | undefined;
  let ui: ChildProcess | undefined;
  try {
    setUpSchemas(binaries.sqlTool, pgPort, log);

    const check = spawnSync(binaries.server, ['validate-dynamic-config', DYNAMIC_CONFIG_FILE], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`${DYNAMIC_CONFIG_FILE} is not valid dynamic config:\n${check.stdout}${check.stderr}`);
    const configFile = path.join(stateDir, 'temporal.yaml');
    fs.writeFileSync(configFile, serverConfigYaml({ ports, pgPort, logLevel: options.logLevel ?? 'warn', dynamicConfigFile: DYNAMIC_CONFIG_FILE }));

    const tail: string[] = [];
    const serverLog = fs.createWriteStream(path.join(stateDir, 'temporal-server.log'), { flags: 'a' });
    let stopping = false;
    const launch = async (): Promise<void> => {
      const child = spawn(binaries.server, ['--config-file', configFile, '--allow-no-auth', 'start'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: process.platform !== 'win32',
        cwd: stateDir,
      });
      server = child;
      fs.writeFileSync(path.join(stateDir, 'temporal-server.pid'), String(child.pid ?? ''));
      let exited: string | undefined;
      child.once('exit', (code, signal) => (exited = signal ?? `exit code ${code}`));
      child.once('error', (error) => (exited = error.message));
      const onLine = (line: string) => {
        serverLog.write(`${line}\n`);
        tail.push(line);
        if (tail.length > 40) tail.shift();
        if (options.forwardServerOutput && !stopping) log(`[temporal] ${line}`);
      };
      forwardLines(child.stdout, onLine);
      forwardLines(child.stderr, onLine);
      const deadline = Date.now() + 120_000;
      while (!(await isReady(address))) {
        if (exited) throw new Error(`The Temporal server exited during start-up (${exited}). Last output:\n  ${tail.slice(-20).join('\n  ')}`);
        if (Date.now() > deadline)
          throw new Error(`The Temporal server at ${address} did not answer within 120 s. Last output:\n  ${tail.slice(-20).join('\n  ')}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };
    await launch();
    watchdog = spawnWatchdog(() => server?.pid, stateDir, findPostgresBin());

    const connection = await Connection.connect({ address });
    try {
      await setUpNamespace(connection, { namespace, log });
    } finally {
      await connection.close();
    }
    while (!(await isReady(address, namespace))) await new Promise((resolve) => setTimeout(resolve, 250));
    let uiUrl: string | undefined;
    if (options.uiPort !== undefined) {
      ui = await startUi(stateDir, options.uiPort, address, namespace, log);
      uiUrl = `http://localhost:${options.uiPort}`;
    }
    log(
      `Temporal server ${TEMPORAL_SERVER_VERSION} on PostgreSQL ready at ${address} (namespace ${namespace}) in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`,
    );

    const stopServer = async (signal: NodeJS.Signals) => {
      const child = server;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await gone;
      clearTimeout(timer);
    };
    let stopped: Promise<void> | undefined;
    return {
      address,
      uiUrl,
      namespace,
      stateDir,
      pgPort,
      get server() {
        return server!;
      },
      killServer: () => stopServer('SIGKILL'),
      async startServer() {
        await launch();
        while (!(await isReady(address, namespace))) await new Promise((resolve) => setTimeout(resolve, 250));
      },
      stop() {
        stopped ??= (async () => {
          stopping = true;
          ui?.kill('SIGTERM');
          await stopServer('SIGTERM');
          postgres.stop();
          serverLog.end();
          if (watchdog?.pid && watchdog.exitCode === null) {
            try {
              process.kill(watchdog.pid, 'SIGTERM');
            } catch {
              /* already gone */
            }
          }
        })();
        return stopped;
      },
    };
  } catch (error) {
    ui?.kill('SIGKILL');
    server?.kill('SIGKILL');
    postgres.stop();
    if (watchdog?.pid) {
      try {
        process.kill(watchdog.pid, 'SIGTERM');
      } catch {
        /* gone */
      }
    }
    throw error;
  }
}

/**
 * `durable-agent server --postgres`: the stack on 127.0.0.1:7233 (PostgreSQL on 127.0.0.1:55432), state in
 * `.durable-agent/postgres-stack/`, until SIGINT/SIGTERM; then it stops the server and PostgreSQL.
 */
export async function runPostgresStackForPeople(log: (line: string) => void = (line) => console.log(line)): Promise<void> {
  const port = 7233;
  if (await isTemporalReachable(`${HOST}:${port}`, 1_500)) {
    log(`A Temporal server is already answering at ${HOST}:${port}; nothing to start. (Stop it first to restart it.)`);
    return;
  }
  const stack = await startPostgresStack({ stateDir: DEFAULT_STACK_DIR, port, pgPort: 55432, uiPort: 8080, log, logLevel: 'warn', forwardServerOutput: true });
  log('');
  log(`Temporal server:   ${stack.address}   (namespace ${stack.namespace}; ${TEMPORAL_SERVER_VERSION} on PostgreSQL, SQL visibility)`);
  log(`Web UI:            ${stack.uiUrl}   (ui-server, docker-compose's UI version)`);
  log(`PostgreSQL:        ${HOST}:${stack.pgPort}   (user ${DB_USER}, password ${DB_PASSWORD}; databases temporal, temporal_visibility)`);
  log(`State:             ${stack.stateDir}   (delete it to start over)`);
  log(`Dynamic config:    ${DYNAMIC_CONFIG_FILE}`);
  log(`Search attributes: ${SEARCH_ATTRIBUTES.map((key) => key.name).join(', ')}`);
  log('Press Ctrl+C to stop.');
  await new Promise<void>((resolve, reject) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      log(`\n${signal} received; stopping the Temporal server and PostgreSQL…`);
      stack.server.off('exit', onExit);
      stack.stop().then(() => {
        cleanup();
        log('Stopped.');
        resolve();
      }, reject);
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      cleanup();
      void stack
        .stop()
        .finally(() =>
          reject(
            new Error(`The Temporal server exited unexpectedly (${signal ?? `exit code ${code}`}); see ${path.join(stack.stateDir, 'temporal-server.log')}.`),
          ),
        );
    };
    const cleanup = () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    stack.server.once('exit', onExit);
  });
}

if (require.main === module) {
  runPostgresStackForPeople().catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });
}
