/**
 * The Temporal server and `temporal-sql-tool` binaries of the PostgreSQL stack (infra/postgres-stack.ts), at the
 * version docker-compose.yml runs, built once per machine from the Go module proxy like the CLI
 * (infra/temporal-cli.ts) and cached in `${DURABLE_AGENT_CACHE_DIR ?? ~/.cache/durable-agent}/temporal-server-<v>/`:
 *
 *   CGO_ENABLED=0 GOBIN=<staging> go install -ldflags='-s -w' \
 *     go.temporal.io/server/cmd/server@v<v> go.temporal.io/server/cmd/tools/sql@v<v>
 *
 * A lock file makes concurrent callers wait for one build. `TEMPORAL_SERVER_PATH` / `TEMPORAL_SQL_TOOL_PATH` use
 * binaries you already have instead. `tsx infra/temporal-server.ts` builds them and prints their paths.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { acquireLock, goVersion, runStreaming, temporalCacheRoot } from './temporal-cli';

/**
 * docker-compose.yml's `TEMPORAL_VERSION` default (test/unit/postgres-stack.test.ts checks they agree). 1.31.0
 * already has what versioned workers need (issue 30): Worker Deployments, `initialVersioningBehavior` on
 * continue-as-new, and `system.enableSendTargetVersionChanged` on by default (read in its source:
 * common/dynamicconfig/constants.go, service/history/workflow/workflow_task_state_machine.go), so it stays.
 */
export const TEMPORAL_SERVER_VERSION = '1.31.0';
const MODULE = 'go.temporal.io/server';
/** `go.mod` of go.temporal.io/server v1.31.0 says `go 1.25`. */
const MIN_GO_MINOR = 25;

export interface TemporalServerBinaries {
  server: string;
  sqlTool: string;
  version: string;
}

export function cachedServerDir(): string {
  return path.join(temporalCacheRoot(), `temporal-server-${TEMPORAL_SERVER_VERSION}`);
}

/** `<bin> --version`'s output, or undefined when it does not run. */
function binaryVersion(bin: string): string | undefined {
  const res = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (res.error || res.status !== 0) return undefined;
  return `${res.stdout}${res.stderr}`.trim().split('\n')[0] || 'unknown version';
}

/** Why the stack's binaries cannot be had on this machine (no cached build and no Go), or undefined. */
export function serverBinariesUnavailable(): string | undefined {
  if (process.env.TEMPORAL_SERVER_PATH && process.env.TEMPORAL_SQL_TOOL_PATH) return undefined;
  const dir = cachedServerDir();
  if (fs.existsSync(path.join(dir, 'temporal-server')) && fs.existsSync(path.join(dir, 'temporal-sql-tool'))) return undefined;
  if (!goVersion()) return `Go is not installed, and there is no cached build of the Temporal server ${TEMPORAL_SERVER_VERSION} in ${dir}`;
  return undefined;
}

export async function ensureTemporalServer(
  log: (line: string) => void = (line) => process.stderr.write(`[temporal-server] ${line}\n`),
): Promise<TemporalServerBinaries> {
  const fromEnv = { server: process.env.TEMPORAL_SERVER_PATH, sqlTool: process.env.TEMPORAL_SQL_TOOL_PATH };
  if (fromEnv.server || fromEnv.sqlTool) {
    if (!fromEnv.server || !fromEnv.sqlTool) throw new Error('Set both TEMPORAL_SERVER_PATH and TEMPORAL_SQL_TOOL_PATH, or neither.');
    const version = binaryVersion(fromEnv.server);
    if (!version || !binaryVersion(fromEnv.sqlTool))
      throw new Error(`TEMPORAL_SERVER_PATH=${fromEnv.server} or TEMPORAL_SQL_TOOL_PATH=${fromEnv.sqlTool} does not run --version.`);
    return { server: fromEnv.server, sqlTool: fromEnv.sqlTool, version };
  }
  const dir = cachedServerDir();
  const server = path.join(dir, 'temporal-server');
  const sqlTool = path.join(dir, 'temporal-sql-tool');
  const cached = () => {
    const version = fs.existsSync(server) && fs.existsSync(sqlTool) ? binaryVersion(server) : undefined;
    return version && binaryVersion(sqlTool) ? { server, sqlTool, version } : undefined;
  };
  const found = cached();
  if (found) return found;

  const go = goVersion();
  if (!go) {
    throw new Error(
      `The PostgreSQL stack needs the Temporal server ${TEMPORAL_SERVER_VERSION}, built with Go (not installed) into ${dir}. ` +
        'Install Go >= 1.25 (https://go.dev/dl/), or set TEMPORAL_SERVER_PATH and TEMPORAL_SQL_TOOL_PATH to binaries you have.',
    );
  }
  fs.mkdirSync(dir, { recursive: true });
  const lock = await acquireLock(path.join(dir, '.build.lock'), log);
  try {
    const built = cached();
    if (built) return built;
    const packages = [`${MODULE}/cmd/server@v${TEMPORAL_SERVER_VERSION}`, `${MODULE}/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`];
    log(
      `Building the Temporal server ${TEMPORAL_SERVER_VERSION} and temporal-sql-tool from the Go module proxy (${go.raw}); the first build takes several minutes…`,
    );
    const staging = fs.mkdtempSync(path.join(dir, '.gobin-'));
    const env: NodeJS.ProcessEnv = { ...process.env, GOBIN: staging };
    if (env.CGO_ENABLED === undefined) env.CGO_ENABLED = '0';
    if (go.major === 1 && go.minor < MIN_GO_MINOR && !env.GOTOOLCHAIN) env.GOTOOLCHAIN = 'auto';
    try {
      await runStreaming('go', ['install', '-ldflags=-s -w', ...packages], env, log, () => lock.touch());
      fs.renameSync(path.join(staging, 'sql'), sqlTool);
      fs.renameSync(path.join(staging, 'server'), server);
    } finally {
      fs.rmSync(staging, { recursive: true, force: true });
    }
    const result = cached();
    if (!result) throw new Error(`The freshly built ${server} or ${sqlTool} does not run --version.`);
    log(`Built ${server} (${result.version}) and ${sqlTool}`);
    return result;
  } finally {
    lock.release();
  }
}

if (require.main === module) {
  ensureTemporalServer().then(
    (binaries) => console.log(`${binaries.server}\n${binaries.sqlTool}`),
    (error: Error) => {
      console.error(error.message);
      process.exit(1);
    },
  );
}

/** docker-compose.yml's `TEMPORAL_UI_VERSION` default: the Web UI server (github.com/temporalio/ui-server). */
export const TEMPORAL_UI_VERSION = '2.49.1';

/**
 * The Temporal Web UI server at docker-compose's version, built once like the server (its assets are embedded in the
 * Go module) and cached in `<cache>/temporal-ui-<v>/temporal-ui-server`; `TEMPORAL_UI_SERVER_PATH` uses yours.
 */
export async function ensureTemporalUiServer(log: (line: string) => void = (line) => process.stderr.write(`[temporal-ui] ${line}\n`)): Promise<string> {
  if (process.env.TEMPORAL_UI_SERVER_PATH) return process.env.TEMPORAL_UI_SERVER_PATH;
  const dir = path.join(temporalCacheRoot(), `temporal-ui-${TEMPORAL_UI_VERSION}`);
  const binary = path.join(dir, 'temporal-ui-server');
  if (fs.existsSync(binary) && binaryVersion(binary)) return binary;
  const go = goVersion();
  if (!go) throw new Error(`The Web UI server ${TEMPORAL_UI_VERSION} is built with Go, which is not installed (or set TEMPORAL_UI_SERVER_PATH).`);
  fs.mkdirSync(dir, { recursive: true });
  const lock = await acquireLock(path.join(dir, '.build.lock'), log);
  try {
    if (fs.existsSync(binary) && binaryVersion(binary)) return binary;
    log(`Building the Temporal Web UI server ${TEMPORAL_UI_VERSION} from the Go module proxy (${go.raw}); the first build takes a few minutes…`);
    const staging = fs.mkdtempSync(path.join(dir, '.gobin-'));
    const env: NodeJS.ProcessEnv = { ...process.env, GOBIN: staging };
    if (env.CGO_ENABLED === undefined) env.CGO_ENABLED = '0';
    try {
      await runStreaming('go', ['install', '-ldflags=-s -w', `github.com/temporalio/ui-server/v2/cmd/server@v${TEMPORAL_UI_VERSION}`], env, log, () =>
        lock.touch(),
      );
      fs.renameSync(path.join(staging, 'server'), binary);
    } finally {
      fs.rmSync(staging, { recursive: true, force: true });
    }
    if (!binaryVersion(binary)) throw new Error(`The freshly built ${binary} does not run --version.`);
    return binary;
  } finally {
    lock.release();
  }
}
