/**
 * Issue 17 §10: Bash and Stop hooks run in a bubblewrap sandbox. Real bwrap, real files: the
 * activity runs whatever the rule engine let through (bypassPermissions included), so these are
 * the commands a misjudging parser would allow, and the sandbox is what stops them.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunStopHooksResult } from '../../common/activity-types';
import {
  GIT_EXCLUDES_MOUNT,
  acquirePlaceholders,
  bwrapArguments,
  decideSandbox,
  execFileInSandbox,
  findOnPath,
  heldPlaceholders,
  readDenyPaths,
  resetSandboxAvailability,
  sandboxAvailability,
  sandboxGitEnvironment,
  sandboxPlan,
  sandboxedArgv,
  secretPaths,
} from '../../activities/sandbox';
import { domainAllowed, isHostLocalAddress, normalizeHost, resolveTarget } from '../../activities/sandbox-network';
import { DEFAULT_DB_FILENAME } from '../../infra/dev-server';
import { temporalCacheRoot } from '../../infra/temporal-cli';
import { isExcludedCommand, mergeSandboxSettings } from '../../activities/sandbox-settings';
import { gatherBashFacts } from '../../activities/permission-facts/bash-facts';
import { resolvePathFact } from '../../activities/permission-facts/paths';
import { startBackgroundCommand, superviseBackgroundCommand } from '../../activities/background/background-command';
import { runStopHooks } from '../../activities/hooks/stop-hooks';
import { executeTool, type ToolExecutionContext } from '../../activities/tools';

const bwrapInstalled = ['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'].some((candidate) => existsSync(candidate));
if (!bwrapInstalled) {
  // CI installs bubblewrap (.ci/run): there a missing bwrap is a failure, not a skip.
  if (process.env.CI) throw new Error('bubblewrap (bwrap) is not installed, but CI must run the sandbox tests');
  console.warn('SKIPPING test/unit/sandbox.test.ts sandbox cases: bubblewrap (bwrap) is not installed (apt-get install bubblewrap)');
}
const describeSandboxed = bwrapInstalled ? describe : describe.skip;

const FAKE_API_KEY = 'sk-ant-fake-sandbox-test-0123456789';
const saved = { HOME: process.env.HOME, ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY, DURABLE_AGENT_STATE_DIR: process.env.DURABLE_AGENT_STATE_DIR };

// Under /var/tmp, not /tmp: the sandbox's /tmp is private, which would hide a fake home there trivially.
let base: string;
let home: string;
let workspace: string;
let outside: string;
let stateDir: string;

beforeAll(async () => {
  base = await mkdtemp(path.join(existsSync('/var/tmp') ? '/var/tmp' : '/tmp', 'durable-agent-sandbox-'));
  process.env.ANTHROPIC_API_KEY = FAKE_API_KEY;
});

/** Puts `saved` values back into process.env (undefined: removed). */
function restoreEnvironment(values: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
}

/** Runs `body` with these variables set in process.env, then restores them. */
async function withEnvironment(values: Record<string, string>, body: () => Promise<void>): Promise<void> {
  const previous = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
  Object.assign(process.env, values);
  try {
    await body();
  } finally {
    restoreEnvironment(previous);
  }
}

afterAll(async () => {
  restoreEnvironment(saved);
  await rm(base, { recursive: true, force: true });
});

let caseNumber = 0;
beforeEach(async () => {
  const root = path.join(base, `case-${++caseNumber}`);
  home = path.join(root, 'home');
  workspace = path.join(root, 'workspace');
  outside = path.join(root, 'outside');
  stateDir = path.join(home, '.durable-agent');
  for (const directory of [home, workspace, outside, path.join(home, '.ssh'), path.join(stateDir, 'journal')]) await mkdir(directory, { recursive: true });
  await writeFile(path.join(home, '.ssh', 'id_rsa'), '-----BEGIN FAKE PRIVATE KEY-----\n');
  await writeFile(path.join(stateDir, 'journal', 'entry.json'), '{"secret":"journal"}');
  process.env.HOME = home;
  process.env.DURABLE_AGENT_STATE_DIR = stateDir;
});

afterEach(() => {
  process.env.HOME = saved.HOME;
});

function context(overrides: Partial<ToolExecutionContext> = {}): ToolExecutionContext {
  return { cwd: workspace, signal: new AbortController().signal, stateDir, ...overrides };
}

async function bash(command: string, overrides: Partial<ToolExecutionContext> = {}, extra: Record<string, unknown> = {}) {
  return executeTool('Bash', { command, ...extra }, context(overrides));
}

async function writeUserSettings(sandbox: unknown): Promise<void> {
  await mkdir(path.join(home, '.claude'), { recursive: true });
  await writeFile(path.join(home, '.claude', 'settings.json'), JSON.stringify({ sandbox }));
}

async function writeProjectSettings(sandbox: unknown, file = 'settings.json'): Promise<void> {
  await mkdir(path.join(workspace, '.claude'), { recursive: true });
  await writeFile(path.join(workspace, '.claude', file), JSON.stringify({ sandbox }));
}

/** Host pids of live processes whose command line is exactly `sleep <seconds>`. */
function sleepers(seconds: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (commandLine === `sleep\0${seconds}\0` && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z') found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describeSandboxed('the sandbox bounds what an allowed command can touch', () => {
  it('is available on this host', async () => {
    expect(await sandboxAvailability()).toMatchObject({ available: true });
  });

  it('writes inside the workspace work; outside it, through .. or a symlink, they fail', async () => {
    const inside = await bash('echo inside > made.txt && mkdir -p sub && echo deep > sub/file && cat made.txt sub/file');
    expect(inside).toEqual({ isError: false, content: 'inside\ndeep' });

    expect((await bash('echo x > /tmp/../etc/sandbox-escape')).content).toMatch(/Read-only file system/);
    expect(existsSync('/etc/sandbox-escape')).toBe(false);

    expect((await bash('touch $HOME/escaped')).isError).toBe(true);
    expect(existsSync(path.join(home, 'escaped'))).toBe(false);

    expect((await bash(`echo x > ${outside}/escaped`)).isError).toBe(true);
    await symlink(outside, path.join(workspace, 'link'));
    expect((await bash('echo x > link/escaped; ln -sf /etc/passwd link2 && echo y >> link2')).isError).toBe(true);
    expect(existsSync(path.join(outside, 'escaped'))).toBe(false);
    expect(readFileSync('/etc/passwd', 'utf8')).not.toContain('\ny\n');
  }, 30_000);

  it('a private /tmp: writable, gone after the command', async () => {
    expect(await bash('echo t > /tmp/sandbox-private && cat /tmp/sandbox-private && echo "$TMPDIR"')).toEqual({ isError: false, content: 't\n/tmp' });
    expect(existsSync('/tmp/sandbox-private')).toBe(false);
  });

  it('cannot read ~/.ssh or the state directory, even when the workspace is the home directory', async () => {
    for (const cwd of [workspace, home]) {
      const result = await bash('cat ~/.ssh/id_rsa; ls -A ~/.ssh; cat $DURABLE_AGENT_STATE_DIR/journal/entry.json', { cwd });
      expect(result.content).not.toContain('FAKE PRIVATE KEY');
      expect(result.content).not.toContain('id_rsa\n');
      expect(result.content).not.toContain('secret');
      expect(result.content).toMatch(/No such file or directory/);
    }
    // Nor write there when home is writable.
    await bash('echo evil > ~/.ssh/authorized_keys; echo evil >> ~/.bashrc', { cwd: home });
    expect(existsSync(path.join(home, '.ssh', 'authorized_keys'))).toBe(false);
  });

  it("cannot read the worker's environment through /proc", async () => {
    expect(process.env.ANTHROPIC_API_KEY).toBe(FAKE_API_KEY);
    const result = await bash(`cat /proc/$PPID/environ; cat /proc/${process.pid}/environ; cat /proc/${process.ppid}/environ; cat /proc/*/environ`);
    expect(result.content).not.toContain(FAKE_API_KEY);
    // Only the sandbox's own processes are there (its init, the shells, ls, grep).
    const count = await bash("ls /proc | grep -cE '^[0-9]+$'");
    expect(Number(count.content)).toBeLessThan(10);
  });

  it("a program started with the worker's terminal (as a project's stdio MCP server is) cannot push keystrokes into it", async () => {
    // `script` gives the launcher a terminal, as a worker run in a terminal has; the program is
    // started as MCP servers are (sandboxedArgv, not detached), then an interactive shell reads
    // that terminal, as the person's shell does once the worker stops.
    const script = await findOnPath('script', process.env.PATH ?? '');
    if (!script) throw new Error('util-linux `script` is needed for the terminal case');
    const decision = await decideSandbox({ cwd: workspace, stateDir });
    const canary = path.join(outside, 'typed-into-the-terminal');
    const [program, args] = sandboxedArgv(decision.launch!, 'bash', [
      '-c',
      `(exec 3<>/dev/tty) 2>/dev/null && echo HAS-TERMINAL; exec perl -e 'require "sys/ioctl.ph"; open(my $t, ">", "/dev/tty") or exit 3; ioctl($t, &TIOCSTI, $_) for split //, "touch ${canary}; exit\\n"'`,
    ]);
    const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
    try {
      const run = spawnSync(
        script,
        ['-qec', `${[program, ...args].map(quote).join(' ')}; exec timeout --foreground -s KILL 3 bash --norc --noprofile -i`, '/dev/null'],
        {
          input: '',
          encoding: 'utf8',
          timeout: 20_000,
          env: { ...process.env, ...decision.launch!.env },
        },
      );
      expect(run.stdout).not.toContain('HAS-TERMINAL');
    } finally {
      await decision.launch!.release?.();
    }
    expect(existsSync(canary)).toBe(false);
  });

  it("the worker's System V IPC (message queues, shared memory) is not the sandbox's to read or remove", async () => {
    const key = `0x${(0x5a000000 + Math.floor(Math.random() * 0xffffff)).toString(16)}`;
    // A queue of the worker's user, readable by anyone (as postgres' or an application's shared memory may be).
    const created = spawnSync('perl', ['-e', `use IPC::SysV qw(IPC_CREAT); my $id = msgget(${key}, IPC_CREAT | 0644); defined $id or die; print $id`], {
      encoding: 'utf8',
    });
    expect(created.status, created.stderr).toBe(0);
    const id = Number(created.stdout);
    try {
      const seen = await bash(`ipcs -q; ipcrm -q ${id} && echo REMOVED`);
      expect(seen.content).not.toContain(key);
      expect(seen.content).not.toContain('REMOVED');
      expect(spawnSync('perl', ['-e', `use IPC::SysV qw(IPC_STAT); my $buf; msgctl(${id}, IPC_STAT, $buf) or exit 1`]).status).toBe(0);
    } finally {
      spawnSync('perl', ['-e', `msgctl(${id}, 0, 0)`]);
    }
  });

  it("services' unix sockets under /run (the system bus, postgres, libvirt, agents) are out of reach; /run's own links stay", async () => {
    // As root, /run is where a service's socket would be; elsewhere the case cannot be set up.
    let directory: string;
    try {
      directory = await mkdtemp('/run/durable-agent-sandbox-test-');
    } catch {
      console.warn('SKIPPING the /run socket case: /run is not writable here (run as root)');
      return;
    }
    const socket = path.join(directory, 'service.sock');
    const server = net.createServer((connection) => connection.end('SOCKET-CANARY\n'));
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      const connect = `node -e 'const c = require("net").connect(process.argv[1]); c.on("data", (d) => process.stdout.write(d)); c.on("error", (e) => console.log(e.code))' ${socket}; ls /run`;
      const result = await bash(connect);
      expect(result.content).not.toContain('SOCKET-CANARY');
      // Unsandboxed, the same command reaches it (the case can fail).
      expect((await bash(connect, {}, { dangerouslyDisableSandbox: true })).content).toContain('SOCKET-CANARY');
      const links = readdirSync('/run', { withFileTypes: true })
        .filter((entry) => entry.isSymbolicLink())
        .map((entry) => entry.name);
      for (const link of links) expect(result.content.split('\n')).toContain(link);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('network: off by default (as Claude Code), so loopback services such as the Temporal server are out of reach', async () => {
    const server = net.createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const connect = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3`;
    try {
      const off = await bash(connect);
      expect(off.isError).toBe(true);
      expect(off.content).toMatch(/Connection refused|Network is unreachable|connect/);
      expect(off.content).not.toContain('hello');
      // A failure that looks like no network says how to allow a domain.
      const named = await bash('curl -sS http://example.com/');
      expect(named.content).toMatch(/Could not resolve host/);
      expect(named.content).toMatch(/no network \(sandbox\.network\.allowedDomains is empty\)\. To allow a domain, add it to sandbox\.network\.allowedDomains/);
      // A project file cannot turn it on.
      await writeProjectSettings({ network: { allowedDomains: ['127.0.0.1'] } });
      const project = await bash(connect);
      expect(project.isError).toBe(true);
      expect(project.content).toMatch(/sandbox\.network\.allowedDomains ignored: 127\.0\.0\.1 not allowed/);
    } finally {
      server.close();
    }
  }, 30_000);

  /** A non-loopback IPv4 address of this host (the proxy refuses loopback ones), if it has one. */
  const externalAddress = Object.values(os.networkInterfaces())
    .flat()
    .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;

  /** An HTTP server on every interface answering `text(method)`; its port and a close. */
  async function httpServer(text: (method: string | undefined) => string): Promise<{ port: number; close: () => void }> {
    const server = http.createServer((request, response) => response.end(text(request.method)));
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    return { port: (server.address() as net.AddressInfo).port, close: () => server.close() };
  }

  it.skipIf(!externalAddress)(
    'network: an allowedDomains list lets through only those domains, through the proxy',
    async () => {
      const server = await httpServer((method) => `hello ${method}\n`);
      const { port } = server;
      const config = { sandboxConfig: { network: { allowedDomains: [externalAddress!] } } };
      try {
        // Plain HTTP through the proxy, and a CONNECT tunnel (-p), as HTTPS uses.
        expect(await bash(`curl -sS http://${externalAddress}:${port}/ && curl -sS -p http://${externalAddress}:${port}/`, config)).toEqual({
          isError: false,
          content: 'hello GET\nhello GET',
        });
        const blocked = await bash(`curl -sS -p http://blocked.invalid:${port}/`, config);
        expect(blocked.isError).toBe(true);
        expect(blocked.content).toMatch(/CONNECT tunnel failed, response 403/);
        expect(blocked.content).toMatch(
          /network requests blocked: blocked\.invalid:\d+ \(blocked\.invalid is not in sandbox\.network\.allowedDomains\)\. To allow a domain, add it to sandbox\.network\.allowedDomains/,
        );
        // Around the proxy there is no route.
        expect((await bash(`exec 3<>/dev/tcp/${externalAddress}/${port} && echo connected`, config)).isError).toBe(true);
        // The user's list, which a project file may narrow.
        await writeUserSettings({ network: { allowedDomains: [externalAddress!, 'example.com'] } });
        expect((await bash(`curl -sS http://${externalAddress}:${port}/`)).isError).toBe(false);
        await writeProjectSettings({ network: { allowedDomains: ['example.com'] } });
        expect((await bash(`curl -fsS http://${externalAddress}:${port}/`)).isError).toBe(true);
      } finally {
        server.close();
      }
    },
    30_000,
  );

  // Regression for 11a86cc: a background command started its forwarder as '"$2" -e "$3"', so with allowedDomains
  // no forwarder ran and the allowed host was unreachable (curl: connection refused to the proxy port).
  it.skipIf(!externalAddress)(
    'network: a background command reaches an allowed domain through the proxy, and only it',
    async () => {
      const server = await httpServer((method) => `background ${method}\n`);
      const { port } = server;
      const task = { conversationId: 'conversation-sandbox', taskId: `network-${caseNumber}`, cwd: workspace };
      try {
        const started = await startBackgroundCommand(
          { stateDir },
          {
            ...task,
            sandboxConfig: { network: { allowedDomains: [externalAddress!] } },
            command: `curl -sS http://${externalAddress}:${port}/; curl -sS -p http://blocked.invalid:${port}/ || echo blocked`,
          },
        );
        expect(started.refusal).toBeUndefined();
        const outcome = await superviseBackgroundCommand({ stateDir }, task, { pollMs: 50 });
        expect(outcome).toMatchObject({ status: 'completed', exitCode: 0 });
        const output = await readFile(started.outputPath, 'utf8');
        expect(output).toMatch(/^background GET\n/);
        expect(output).toMatch(/CONNECT tunnel failed, response 403[\s\S]*\nblocked\n?$/);
      } finally {
        server.close();
      }
    },
    30_000,
  );

  it("network: even '*' or the exact name never reaches this host's own addresses, in any spelling", async () => {
    const server = await httpServer(() => 'reached\n');
    const { port } = server;
    const hosts = [
      '127.0.0.2',
      'localhost',
      '[::1]',
      '[::ffff:7f00:1]',
      '[::ffff:127.0.0.1]',
      '2130706433',
      '0x7f000001',
      '0177.0.0.1',
      '127.1',
      '0',
      '[::]',
      '169.254.169.254',
    ];
    const config = { sandboxConfig: { network: { allowedDomains: ['*', ...hosts] } } };
    // Raw requests to the proxy's forwarder, so curl's own URL parsing does not normalize them first.
    const raw = (request: string) => `exec 3<>/dev/tcp/127.0.0.1/$DURABLE_AGENT_PROXY_PORT && printf '${request}\\r\\nHost: x\\r\\n\\r\\n' >&3 && head -1 <&3`;
    try {
      const requests = hosts.flatMap((host) => [raw(`CONNECT ${host}:${port} HTTP/1.1`), raw(`GET http://${host}:${port}/ HTTP/1.1`)]);
      const result = await bash(requests.join('; '), config);
      expect(result.content).not.toContain('reached');
      expect(result.content).not.toContain('200');
      expect(result.content.match(/HTTP\/1\.1 403/g)).toHaveLength(requests.length);
      expect(result.content).toMatch(/an address of this host/);
      // A non-loopback address of this host (a LAN, bridge or VPN interface's): refused under '*' though the service answers there (named exactly, it is reached: the previous case).
      if (externalAddress) {
        const own = { sandboxConfig: { network: { allowedDomains: ['*'] } } };
        const through = await bash(`curl -sS -p http://${externalAddress}:${port}/; curl -sS http://${externalAddress}:${port}/`, own);
        expect(through.content).not.toContain('reached');
        expect(through.content).toMatch(/an address of this host/);
        expect(await bash(`curl -fsS http://${externalAddress}:${port}/`, {}, { dangerouslyDisableSandbox: true })).toEqual({
          isError: false,
          content: 'reached',
        });
      }
    } finally {
      server.close();
    }
  }, 30_000);

  it('git and npm work; commits and every other change to .git fail, with a notice on how to commit', async () => {
    execFileSync('git', ['init', '-q', workspace]);
    await mkdir(path.join(workspace, '.claude'), { recursive: true });
    await writeFile(path.join(workspace, 'a.txt'), 'a');
    const result = await bash('npm --version && git status --short && git log --oneline 2>/dev/null | wc -l && git diff --stat');
    expect(result.isError).toBe(false);
    expect(result.content).toMatch(/^\d+\.\d+\.\d+\n\?\? a\.txt\n0$/);

    const commit = await bash('git add a.txt && git -c user.name=t -c user.email=t@t commit -qm one');
    expect(commit.isError).toBe(true);
    expect(commit.content).toMatch(/index\.lock': Read-only file system/);
    expect(commit.content).toMatch(/\[sandbox: \.git is read-only in the sandbox, so commits .* dangerouslyDisableSandbox: true \(it asks the user\)\.\]/);

    const config = readFileSync(path.join(workspace, '.git', 'config'), 'utf8');
    const attempt = await bash(
      'git config core.fsmonitor "touch /tmp/pwned"; echo "[core]\n\tfsmonitor = x" >> .git/config; echo x > .git/hooks/pre-commit; echo /x > .git/commondir; mkdir .git/modules; echo {} > .claude/settings.json',
    );
    expect(attempt.content).toMatch(/Read-only file system|could not lock config file/);
    expect(readFileSync(path.join(workspace, '.git', 'config'), 'utf8')).toBe(config);
    for (const made of ['.git/hooks/pre-commit', '.git/commondir', '.git/modules', '.claude/settings.json'])
      expect(existsSync(path.join(workspace, made)), made).toBe(false);

    // Nor by moving them aside: mount points cannot be renamed.
    const moved = await bash('mv .git .git-old; mkdir -p .git; echo evil > .git/config; mv .claude .claude-old');
    expect(moved.content).toMatch(/Device or resource busy/);
    expect(readFileSync(path.join(workspace, '.git', 'config'), 'utf8')).toBe(config);
    expect(existsSync(path.join(workspace, '.git-old'))).toBe(false);
    expect(existsSync(path.join(workspace, '.claude-old'))).toBe(false);
    expect((await bash('git status --short')).content).toBe('?? a.txt');
  }, 30_000);

  it('protected paths that do not exist cannot be created; their placeholders go when the last command using them ends', async () => {
    const attack = [
      'mkdir -p .claude && echo {} > .claude/settings.json',
      'echo {} > .claude/settings.local.json',
      `echo '{"mcpServers":{}}' > .mcp.json`,
      'echo "touch pwned" > .envrc',
      'mkdir -p .husky && echo x > .husky/pre-commit',
      'echo "yarnPath: x.js" > .yarnrc.yml',
      'echo x > .yarnrc',
      'echo x > .npmrc',
      'echo x > .gitmodules',
      'mkdir -p .vscode && echo {} > .vscode/tasks.json',
      'mkdir -p .idea/x',
      'git init -q',
      'mkdir -p .git/hooks && echo x > .git/config',
      'rm -rf .claude .git; mv .mcp.json gone; ln -s /tmp .vscode',
      'ls -A',
    ];
    const names = ['.claude', '.mcp.json', '.envrc', '.husky', '.yarnrc.yml', '.yarnrc', '.npmrc', '.gitmodules', '.vscode', '.idea', '.git'];
    // A long command holds the placeholders while a short one comes and goes.
    const long = bash('sleep 1.5; ls -A');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const result = await bash(attack.join('; '));
    expect(result.content).toMatch(/Read-only file system/);
    // Inside, the placeholders are there and empty; git does not list them.
    for (const name of names) expect(result.content).toContain(`${name}\n`);
    for (const name of names) expect(existsSync(path.join(workspace, name)), `${name} while the long command runs`).toBe(true);
    expect((await long).content.split('\n').sort()).toEqual([...names].sort());
    for (const name of names) expect(existsSync(path.join(workspace, name)), `${name} after`).toBe(false);
    expect(readdirSync(workspace)).toEqual([]);
    expect(heldPlaceholders()).toEqual([]);
  }, 30_000);

  it('a background command holds its placeholders until it ends, whatever foreground commands come and go', async () => {
    const task = { conversationId: 'conversation-sandbox', taskId: `placeholders-${caseNumber}`, cwd: workspace };
    const started = await startBackgroundCommand({ stateDir }, { ...task, command: 'sleep 1.5; echo "use flake" > .envrc || echo refused' });
    expect(started.refusal).toBeUndefined();
    expect(existsSync(path.join(workspace, '.envrc'))).toBe(true);
    expect((await bash('echo x > .envrc; ls -A .envrc')).content).toMatch(/Read-only file system/);
    expect(existsSync(path.join(workspace, '.envrc'))).toBe(true);
    const outcome = await superviseBackgroundCommand({ stateDir }, task, { pollMs: 50 });
    expect(outcome).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(await readFile(started.outputPath, 'utf8')).toMatch(/Read-only file system\n?refused/);
    expect(readdirSync(workspace)).toEqual([]);
    expect(heldPlaceholders()).toEqual([]);
  }, 30_000);

  it('a placeholder someone filled, or a path made outside meanwhile, stays; an empty .git placeholder does not confuse git', async () => {
    // The workspace inside another repository: git inside and outside still finds the outer one.
    const outer = path.dirname(workspace);
    execFileSync('git', ['init', '-q', outer]);
    const running = bash('sleep 1; git rev-parse --show-toplevel');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: workspace, encoding: 'utf8' }).trim()).toBe(outer);
    await writeFile(path.join(workspace, '.envrc'), 'export A=1\n'); // the user's own editor, on the host
    expect((await running).content).toBe(outer);
    expect(readFileSync(path.join(workspace, '.envrc'), 'utf8')).toBe('export A=1\n');
    expect(existsSync(path.join(workspace, '.git'))).toBe(false);
    // Not in any repository: an empty .git is no repository.
    await rm(path.join(outer, '.git'), { recursive: true });
    expect((await bash('git status')).content).toMatch(/not a git repository/);
  }, 30_000);

  it('/proc/sys and the other host-wide /proc entries are read-only; the command is not root', async () => {
    const before = readFileSync('/proc/sys/kernel/core_pattern', 'utf8');
    // Only ever inside bwrap: these are the host's files.
    const result = await bash(
      'echo "|/tmp/pwned" > /proc/sys/kernel/core_pattern; echo 1 > /proc/sys/vm/drop_caches; echo h > /proc/sysrq-trigger; id -u; touch made-by-me',
    );
    expect(result.content).toMatch(/\/proc\/sys\/kernel\/core_pattern: (Read-only file system|Permission denied)/);
    expect(result.content).toMatch(/\/proc\/sysrq-trigger: (Read-only file system|Permission denied|No such file or directory)/);
    expect(readFileSync('/proc/sys/kernel/core_pattern', 'utf8')).toBe(before);
    const { user } = await sandboxAvailability();
    if (process.getuid!() === 0 && user) expect(result.content).toMatch(new RegExp(`^${user.uid}$`, 'm'));
    // Files it makes belong to the worker's user on the host.
    expect(statSync(path.join(workspace, 'made-by-me')).uid).toBe(process.getuid!());
  });

  it("the worker's Temporal and codec credentials are not in a command's environment; where the server is, is", async () => {
    const secrets = {
      TEMPORAL_API_KEY: 'temporal-api-key-canary',
      TEMPORAL_GRPC_META_AUTHORIZATION: 'grpc-meta-canary',
      TEMPORAL_TLS_CLIENT_KEY_DATA: 'tls-key-canary',
      TEMPORAL_CONFIG_FILE: path.join(outside, 'temporal.toml'),
      TEMPORAL_PROFILE: 'profile-canary',
      DURABLE_AGENT_CODEC_TOKEN: 'codec-token-canary',
      DURABLE_AGENT_ENCRYPTION_KEY: 'encryption-key-canary',
    };
    const kept = { TEMPORAL_ADDRESS: '127.0.0.1:7233', TEMPORAL_NAMESPACE: 'default' };
    await withEnvironment({ ...secrets, ...kept }, async () => {
      const result = await bash('env', {}, { dangerouslyDisableSandbox: false });
      for (const value of Object.values(secrets)) expect(result.content).not.toContain(value);
      expect(result.content).toContain('TEMPORAL_ADDRESS=127.0.0.1:7233');
      expect(result.content).toContain('TEMPORAL_NAMESPACE=default');
      const unsandboxed = await bash('env', {}, { dangerouslyDisableSandbox: true });
      for (const value of Object.values(secrets)) expect(unsandboxed.content).not.toContain(value);
    });
  });

  it('the Temporal envconfig profile, TLS files, ~/.claude.json, the key file and the dev server database are hidden', async () => {
    await mkdir(path.join(home, '.config', 'temporalio'), { recursive: true });
    await writeFile(path.join(home, '.config', 'temporalio', 'temporal.toml'), 'api_key = "envconfig-canary"\n');
    await writeFile(path.join(home, '.claude.json'), '{"projects":{"trust-canary":{}}}');
    const files = {
      TEMPORAL_CONFIG_FILE: 'config-file-canary',
      TEMPORAL_TLS_CLIENT_KEY_PATH: 'tls-file-canary',
      DURABLE_AGENT_ENCRYPTION_KEY_FILE: 'key-file-canary',
    };
    for (const [name, canary] of Object.entries(files)) await writeFile(path.join(outside, `${name}.txt`), `${canary}\n`);
    await withEnvironment(Object.fromEntries(Object.keys(files).map((name) => [name, path.join(outside, `${name}.txt`)])), async () => {
      const read = `cat ~/.config/temporalio/temporal.toml ~/.claude.json ${Object.keys(files)
        .map((name) => path.join(outside, `${name}.txt`))
        .join(' ')}; echo done`;
      const result = await bash(read);
      expect(result.content).toContain('done');
      expect(result.content).not.toMatch(/canary/);
      expect(existsSync(path.join(home, '.claude.json'))).toBe(true);
      // The dev server's database (`npm run server`) and the Temporal CLI's cache: hidden when they exist.
      const plan = await sandboxPlan({ cwd: workspace, writable: [workspace], home, stateDir, env: process.env });
      expect(secretPaths(process.env)).toEqual(expect.arrayContaining([path.dirname(DEFAULT_DB_FILENAME), temporalCacheRoot()]));
      for (const entry of [path.dirname(DEFAULT_DB_FILENAME), temporalCacheRoot()].filter((entry) => existsSync(entry))) {
        expect([...plan.hiddenDirectories, ...plan.hiddenFiles]).toContain(realpathSync(entry));
      }
    });
  });

  it("a bare repository made of plain files in a subfolder is not used: its config's textconv does not run", async () => {
    execFileSync('git', ['init', '-q', workspace]);
    const bare = path.join(workspace, 'sub');
    execFileSync('git', ['init', '-q', '--bare', bare]);
    // A commit in it with a file whose diff goes through a textconv driver that leaves a canary.
    const seed = path.join(outside, 'seed');
    execFileSync('git', ['clone', '-q', bare, seed]);
    await writeFile(path.join(seed, 'a.bin'), 'one\n');
    execFileSync('git', ['-C', seed, 'add', '.']);
    execFileSync('git', ['-C', seed, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'x']);
    execFileSync('git', ['-C', seed, 'push', '-q', 'origin', 'HEAD']);
    await writeFile(path.join(bare, 'info', 'attributes'), '*.bin diff=evil\n');
    const canary = path.join(workspace, 'textconv-ran');
    await writeFile(
      path.join(bare, 'config'),
      `${readFileSync(path.join(bare, 'config'), 'utf8')}[diff "evil"]\n\ttextconv = sh -c 'touch ${canary}; cat "$0"'\n`,
    );
    const result = await bash('git -C sub log -p; git -C sub show HEAD');
    expect(result.content).toMatch(/cannot use bare repository/);
    expect(existsSync(canary)).toBe(false);
  });
  it('a writable root that is a file (where nothing can be made) still runs, with nothing to protect under it', async () => {
    const file = path.join(outside, 'history.txt');
    await writeFile(file, 'old\n');
    expect(await bash(`echo new >> ${file} && cat ${file}`, { additionalDirectories: [file] })).toEqual({ isError: false, content: 'old\nnew' });
    expect(heldPlaceholders()).toEqual([]);
  });

  it('extra working directories are writable, others are not', async () => {
    const extra = path.join(outside, 'extra');
    await mkdir(extra);
    const result = await bash(`echo e > ${extra}/file && cat ${extra}/file`, { additionalDirectories: [extra] });
    expect(result).toEqual({ isError: false, content: 'e' });
    expect((await bash(`echo e > ${extra}/file2`)).isError).toBe(true);
    // The working directories of the permission decision (ToolAccess) count too.
    expect((await bash(`echo e > ${extra}/file5`, { access: { workingDirectories: [workspace, extra], readDeny: [] } })).isError).toBe(false);
    // filesystem.allowWrite: honoured from the user's settings, not from the project's.
    await writeProjectSettings({ filesystem: { allowWrite: [extra] } });
    const project = await bash(`echo e > ${extra}/file3`);
    expect(project.isError).toBe(true);
    expect(project.content).toMatch(/sandbox\.filesystem\.allowWrite ignored/);
    await writeUserSettings({ filesystem: { allowWrite: [extra] } });
    expect((await bash(`echo e > ${extra}/file4`)).isError).toBe(false);
  }, 30_000);

  it('Read deny rules that name a path hide it in the sandbox too', async () => {
    await writeFile(path.join(workspace, '.env'), 'TOKEN=from-env');
    await mkdir(path.join(home, 'vault'));
    await writeFile(path.join(home, 'vault', 'key'), 'vault-key');
    const access = { workingDirectories: [workspace], readDeny: ['.env', '~/vault/**', '**/*.pem'] };
    const result = await bash('cat .env; cat ~/vault/key; echo done', { access });
    expect(result.content).not.toMatch(/from-env|vault-key/);
    expect(result.content).toContain('done');
    expect(readDenyPaths(access.readDeny, '/w', '/h')).toEqual(['/w/.env', '/h/vault']);
    expect(readDenyPaths(['//etc/shadow', '/build/secret/', 'src/**/*.key', '**'], '/w', '/h')).toEqual(['/etc/shadow', '/w/build/secret']);
  });

  it('filesystem.denyRead and denyWrite from any settings file tighten it', async () => {
    await writeFile(path.join(workspace, 'secret.env'), 'TOKEN=1');
    await mkdir(path.join(workspace, 'frozen'));
    await writeProjectSettings({ filesystem: { denyRead: ['secret.env'], denyWrite: ['frozen'] } });
    const result = await bash('cat secret.env; echo x > frozen/file');
    expect(result.content).not.toContain('TOKEN');
    expect(existsSync(path.join(workspace, 'frozen', 'file'))).toBe(false);
  });
});

describeSandboxed('timeouts, abort and output in the sandbox', () => {
  it('a timeout kills the command and everything it started, keeping the partial output', async () => {
    const result = await bash('echo partial; sleep 31.25 & sleep 31.5', {}, { timeout: 500 });
    expect(result.isError).toBe(true);
    expect(result.content).toBe('partial\nCommand timed out after 500ms');
    await waitFor(() => sleepers('31.25').length + sleepers('31.5').length === 0, 5_000);
  }, 20_000);

  it('abort kills it and throws', async () => {
    const controller = new AbortController();
    let output = '';
    const run = bash('sleep 32.25 & echo started; sleep 32.5', { signal: controller.signal, onProgress: (chunk) => (output += chunk) });
    await waitFor(() => output.includes('started') && sleepers('32.25').length === 1 && sleepers('32.5').length === 1);
    controller.abort();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    await waitFor(() => sleepers('32.25').length + sleepers('32.5').length === 0, 5_000);
  }, 20_000);

  it('a SIGTERM-resistant command is killed after the grace period', async () => {
    const controller = new AbortController();
    let output = '';
    const run = bash(`bash -c 'trap "" TERM; echo ready; sleep 33.25'`, { signal: controller.signal, onProgress: (chunk) => (output += chunk) });
    await waitFor(() => output.includes('ready'));
    controller.abort();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    await waitFor(() => sleepers('33.25').length === 0, 5_000);
  }, 20_000);

  it('background jobs, setsid and nohup end with the command, and the result says so', async () => {
    const result = await bash(
      'sleep 34.25 > /dev/null 2>&1 & setsid sleep 34.5 > /dev/null 2>&1 < /dev/null & nohup sleep 34.75 > /dev/null 2>&1 & sleep 0.2; echo started',
    );
    expect(result).toEqual({ isError: false, content: 'started\n[processes the command left running in the background were terminated when it finished]' });
    await waitFor(() => ['34.25', '34.5', '34.75'].every((seconds) => sleepers(seconds).length === 0), 5_000);
    expect(await bash('echo plain')).toEqual({ isError: false, content: 'plain' });
  }, 20_000);

  it('streams output and reports exit codes', async () => {
    const chunks: string[] = [];
    const result = await bash('echo first; sleep 0.3; echo second; exit 3', { onProgress: (chunk) => chunks.push(chunk) });
    expect(result).toEqual({ isError: true, content: 'first\nsecond\nExit code 3' });
    expect(chunks.join('')).toBe('first\nsecond\n');
    expect(await bash('grep -q nothing /dev/null')).toEqual({ isError: false, content: 'Exit code 1 (no matches found)' });
  });
});

describeSandboxed('what runs unsandboxed, and when', () => {
  it('dangerouslyDisableSandbox runs it unsandboxed unless allowUnsandboxedCommands is false', async () => {
    const escape = path.join(home, 'unsandboxed');
    expect((await bash(`touch ${escape}`, {}, { dangerouslyDisableSandbox: true })).isError).toBe(false);
    expect(existsSync(escape)).toBe(true);
    await rm(escape);

    await writeUserSettings({ allowUnsandboxedCommands: false });
    const refused = await bash(`touch ${escape}`, {}, { dangerouslyDisableSandbox: true });
    expect(refused.isError).toBe(true);
    expect(refused.content).toMatch(/dangerouslyDisableSandbox was ignored/);
    expect(existsSync(escape)).toBe(false);

    // A project file cannot allow it again.
    await writeProjectSettings({ allowUnsandboxedCommands: true }, 'settings.local.json');
    const project = await bash(`touch ${escape}`, {}, { dangerouslyDisableSandbox: true });
    expect(project.isError).toBe(true);
    expect(project.content).toMatch(/settings\.local\.json: sandbox\.allowUnsandboxedCommands ignored/);
    expect(existsSync(escape)).toBe(false);
  });

  it("a project file cannot disable it; the user's settings and the conversation's config can", async () => {
    const escape = path.join(home, 'unsandboxed');
    await writeProjectSettings({ enabled: false, excludedCommands: ['touch'] });
    const project = await bash(`touch ${escape}`);
    expect(project.isError).toBe(true);
    expect(project.content).toMatch(/sandbox\.enabled ignored: a workspace settings file may not set it to false/);
    expect(project.content).toMatch(/sandbox\.excludedCommands ignored/);
    expect(existsSync(escape)).toBe(false);

    expect((await bash(`touch ${escape}`, { sandboxConfig: { enabled: false } })).isError).toBe(false);
    await rm(escape);
    await writeUserSettings({ enabled: false });
    expect((await bash(`touch ${escape}`)).isError).toBe(false);
  });

  it("the user's excludedCommands run unsandboxed, only as plain simple commands", async () => {
    const escape = path.join(home, 'excluded');
    await writeUserSettings({ excludedCommands: ['touch'] });
    expect((await bash(`touch ${escape}`)).isError).toBe(false);
    expect(existsSync(escape)).toBe(true);
    expect((await bash(`touch ${escape}2; touch ${escape}3`)).isError).toBe(true);
    expect(existsSync(`${escape}3`)).toBe(false);
  });

  it('no bubblewrap: runs unsandboxed with a notice, or is refused with failIfUnavailable', async () => {
    resetSandboxAvailability();
    const env = { ...process.env, DURABLE_AGENT_BWRAP: '/nonexistent/bwrap' };
    try {
      const unavailable = await decideSandbox({ cwd: workspace, home, env });
      expect(unavailable.launch).toBeUndefined();
      expect(unavailable.refusal).toBeUndefined();
      expect(unavailable.notices.join('\n')).toMatch(/ran WITHOUT the sandbox: bubblewrap \(\/nonexistent\/bwrap\) cannot start a sandbox here/);
      const refused = await decideSandbox({ cwd: workspace, home, env, config: { failIfUnavailable: true } });
      expect(refused.refusal).toMatch(/Not run: the sandbox is unavailable/);
    } finally {
      resetSandboxAvailability();
    }
    expect((await decideSandbox({ cwd: workspace, home })).launch).toBeDefined();
  });

  it("execFileInSandbox: the worker's own git in a workspace cannot be made to run code on the host", async () => {
    execFileSync('git', ['init', '-q', workspace]);
    await writeFile(path.join(workspace, 'a.txt'), 'a');
    // What a command could leave behind where the sandbox does not reach (a repository it created).
    execFileSync('git', ['config', 'core.fsmonitor', `touch ${outside}/pwned; false`], { cwd: workspace });
    const status = await execFileInSandbox('git', ['status', '--short'], { cwd: workspace, stateDir });
    expect(status).toBe('?? a.txt\n');
    expect(existsSync(path.join(outside, 'pwned'))).toBe(false);
    await expect(execFileInSandbox('git', ['rev-parse', '--verify', 'nothing'], { cwd: workspace })).rejects.toThrow(/exit 128/);
  });

  it('Stop hooks run in the sandbox', async () => {
    const escape = path.join(home, 'hooked');
    const environment = new MockActivityEnvironment();
    const result: RunStopHooksResult = await environment.run(runStopHooks, {
      conversationId: 'conversation-sandbox',
      cwd: workspace,
      stopHookActive: false,
      lastAssistantMessage: 'done',
      hooks: [{ hooks: [{ type: 'command' as const, command: `cat > hook-input.json; touch ${escape}; cat ~/.ssh/id_rsa` }] }],
    });
    const [outcome] = result.outcomes;
    expect(outcome.stdout).not.toContain('FAKE PRIVATE KEY');
    expect(existsSync(escape)).toBe(false);
    expect(JSON.parse(await readFile(path.join(workspace, 'hook-input.json'), 'utf8'))).toMatchObject({ hook_event_name: 'Stop' });
  });
});

describe('sandbox settings (pure)', () => {
  const context = { cwd: '/w', home: '/h', workingDirectories: ['/w'] };
  it('workspace files may only tighten', () => {
    const { settings, warnings } = mergeSandboxSettings(
      [
        { origin: 'user', trusted: true, value: { network: { allowedDomains: ['a.com', 'b.com'] }, failIfUnavailable: false } },
        {
          origin: 'project',
          trusted: false,
          value: {
            enabled: false,
            failIfUnavailable: true,
            allowUnsandboxedCommands: false,
            network: { allowedDomains: ['b.com', 'c.com'] },
            filesystem: { allowWrite: ['/etc', 'build', '~/x'], denyRead: ['~/secret'] },
          },
        },
        { origin: 'local', trusted: false, value: { allowUnsandboxedCommands: true } },
      ],
      context,
    );
    expect(settings).toMatchObject({
      enabled: true,
      failIfUnavailable: true,
      allowUnsandboxedCommands: false,
      allowedDomains: ['b.com'],
      allowWrite: [],
      denyRead: ['/h/secret'],
    });
    expect(warnings.join('\n')).toMatch(/project: sandbox\.enabled ignored/);
    expect(warnings.join('\n')).toMatch(/project: sandbox\.network\.allowedDomains ignored: c\.com/);
    expect(warnings.join('\n')).toMatch(/project: sandbox\.filesystem\.allowWrite ignored: \/etc is outside/);
    expect(warnings.join('\n')).toMatch(/project: sandbox\.filesystem\.allowWrite ignored: \/h\/x is outside/);
    expect(warnings.join('\n')).toMatch(/local: sandbox\.allowUnsandboxedCommands ignored/);
    expect(warnings.join('\n')).not.toMatch(/build/);
  });

  it('a workspace file may turn the network off when the user left it on; malformed keys warn', () => {
    const { settings, warnings } = mergeSandboxSettings(
      [
        { origin: 'project', trusted: false, value: { network: { allowedDomains: [] }, enabled: 'no' } },
        { origin: 'config', trusted: true, value: 'yes' },
      ],
      context,
    );
    expect(settings.allowedDomains).toEqual([]);
    expect(settings.enabled).toBe(true);
    expect(warnings).toEqual(['project: sandbox.enabled must be true or false; it was ignored.', 'config: "sandbox" must be an object; it was ignored.']);
  });

  it('allowed domains: exact names, and *.domain for subdomains', () => {
    expect(domainAllowed('github.com', ['github.com'])).toBe(true);
    expect(domainAllowed('GitHub.com.', ['github.com'])).toBe(true);
    expect(domainAllowed('api.github.com', ['github.com'])).toBe(false);
    expect(domainAllowed('api.github.com', ['*.github.com'])).toBe(true);
    expect(domainAllowed('github.com', ['*.github.com'])).toBe(false);
    expect(domainAllowed('evilgithub.com', ['*.github.com'])).toBe(false);
    expect(domainAllowed('github.com.evil.net', ['github.com'])).toBe(false);
    expect(domainAllowed('anything.org', ['*'])).toBe(true);
  });

  it('excludedCommands cover one plain simple command only, on the parsed command (issue 29: one Bash analysis)', async () => {
    const excluded = async (command: string, entries: string[]) =>
      isExcludedCommand(
        await gatherBashFacts(command, { cwd: '/w', homeDir: '/h', resolve: (literal, base) => resolvePathFact(literal, base, '/h') }),
        entries,
      );
    expect(await excluded('docker ps -a', ['docker ps'])).toBe(true);
    expect(await excluded('npm run build', ['npm:*'])).toBe(true);
    expect(await excluded('docker ps; rm -rf ~', ['docker'])).toBe(false);
    expect(await excluded('docker $(rm -rf ~)', ['docker'])).toBe(false);
    expect(await excluded('docker ps > /etc/x', ['docker'])).toBe(false);
    expect(await excluded('docker ps < /etc/shadow', ['docker'])).toBe(false);
    expect(await excluded('FOO=1 docker ps', ['docker'])).toBe(false);
    expect(await excluded('dockerd', ['docker'])).toBe(false);
    expect(await excluded('docker images', ['docker ps'])).toBe(false);
    expect(await excluded('docker ps | sh', ['docker'])).toBe(false);
    expect(await excluded('bash -c "docker ps"', ['docker'])).toBe(false);
    expect(await excluded('env docker ps', ['docker'])).toBe(false);
    expect(await excluded('docker p{s,x}', ['docker'])).toBe(false);
    expect(await excluded('docker $X', ['docker'])).toBe(false);
    expect(await excluded('docker() { rm -rf ~; }; docker ps', ['docker'])).toBe(false);
    expect(await excluded('', ['docker'])).toBe(false);
    // Quotes and a comment are the grammar's: the words are what runs.
    expect(await excluded('docker "ps" -a # list', ['docker ps'])).toBe(true);
    expect(isExcludedCommand(undefined, ['docker'])).toBe(false);
  });

  it('bwrap arguments: shallow mounts first, hiding wins at equal depth, remounts last', () => {
    const args = bwrapArguments({
      cwd: '/s/ws',
      writable: ['/s/ws', '/h'],
      readOnly: ['/s/ws/.git/config'],
      hiddenDirectories: ['/s', '/h/.ssh'],
      hiddenFiles: ['/h/.netrc'],
      reexposed: ['/s/workspaces/x/tool-results'],
    }).join(' ');
    expect(args).toContain('--unshare-net');
    expect(args).toContain('--cap-drop ALL');
    expect(args).not.toContain('--unshare-user');
    const order = [
      '--bind /h /h',
      '--tmpfs /s',
      '--bind /s/ws /s/ws',
      '--tmpfs /h/.ssh',
      '--ro-bind /dev/null /h/.netrc',
      '--ro-bind /s/ws/.git/config',
      '--ro-bind /s/workspaces/x/tool-results',
      '--remount-ro /s',
      '--chdir /s/ws',
    ];
    const positions = order.map((part) => args.indexOf(part));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it('bwrap arguments: no network whatever the plan; /proc/sys read-only over the fresh /proc; a user namespace when asked', () => {
    const plan = { cwd: '/w', writable: ['/w'], readOnly: ['/w/.git', '/w/.mcp.json'], hiddenDirectories: [], hiddenFiles: [], reexposed: [] };
    const args = bwrapArguments({ ...plan, proxyDirectory: '/tmp/p', gitExcludes: '/tmp/e/ignore', user: { uid: 1000, gid: 1000 } }).join(' ');
    expect(args).toContain('--unshare-net');
    expect(args).toContain('--new-session');
    expect(args).toContain('--unshare-ipc');
    expect(args.indexOf('--proc /proc')).toBeLessThan(args.indexOf('--ro-bind-try /proc/sys /proc/sys'));
    expect(args).toContain('--ro-bind-try /proc/sysrq-trigger /proc/sysrq-trigger');
    expect(args.startsWith('--unshare-user --uid 1000 --gid 1000 ')).toBe(true);
    expect(args).toContain('--ro-bind /w/.git /w/.git');
    expect(args).toContain('--ro-bind /w/.mcp.json /w/.mcp.json');
    expect(args.indexOf('--tmpfs /tmp')).toBeLessThan(args.indexOf(`--ro-bind /tmp/e/ignore ${GIT_EXCLUDES_MOUNT}`));
    expect(sandboxGitEnvironment(GIT_EXCLUDES_MOUNT)).toEqual({
      GIT_CONFIG_COUNT: '3',
      GIT_CONFIG_KEY_0: 'safe.bareRepository',
      GIT_CONFIG_VALUE_0: 'explicit',
      GIT_CONFIG_KEY_1: 'core.fsmonitor',
      GIT_CONFIG_VALUE_1: 'false',
      GIT_CONFIG_KEY_2: 'core.excludesFile',
      GIT_CONFIG_VALUE_2: GIT_EXCLUDES_MOUNT,
    });
  });

  it("the worker's installation under /tmp stays readable inside (the sandbox's /tmp is its own), its database still hidden", async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-install-'));
    try {
      const installation = path.join(root, 'checkout');
      const ws = path.join(root, 'ws');
      await mkdir(path.join(installation, '.durable-agent'), { recursive: true });
      await mkdir(ws, { recursive: true });
      await writeFile(path.join(installation, 'server.js'), 'installation-canary');
      await writeFile(path.join(installation, '.durable-agent', 'temporal.db'), 'database-canary');
      await writeFile(path.join(root, 'other.txt'), 'other-canary');
      const options = { cwd: ws, writable: [ws], home: path.join(root, 'home'), stateDir: path.join(root, 'state'), env: {}, installation };
      const plan = await sandboxPlan(options);
      expect(plan.reexposed).toContain(installation);
      const plain = bwrapArguments({ ...plan, hiddenDirectories: [...plan.hiddenDirectories, path.join(installation, '.durable-agent')] });
      const read = (file: string) => spawnSync('bwrap', [...plain, 'cat', file], { encoding: 'utf8' }).stdout;
      expect(read(path.join(installation, 'server.js'))).toBe('installation-canary');
      expect(read(path.join(installation, '.durable-agent', 'temporal.db'))).toBe('');
      expect(read(path.join(root, 'other.txt'))).toBe(''); // the rest of the host's /tmp stays out of sight
      // An installation inside a working directory is that directory's (writable), not re-mounted read-only over it.
      expect((await sandboxPlan({ ...options, cwd: root, writable: [root] })).reexposed).not.toContain(installation);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('the plan protects every protected name in every writable root, existing or not, and refuses a linked one', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-plan-'));
    try {
      const ws = path.join(root, 'ws');
      const extra = path.join(root, 'extra');
      await mkdir(path.join(ws, '.git'), { recursive: true });
      await mkdir(extra, { recursive: true });
      await writeFile(path.join(extra, '.mcp.json'), '{}');
      const plan = await sandboxPlan({ cwd: ws, writable: [ws, extra], home: path.join(root, 'home'), stateDir: path.join(root, 'state'), env: {} });
      expect(plan.readOnly).toEqual(expect.arrayContaining([path.join(ws, '.git'), path.join(extra, '.mcp.json')]));
      const absent = plan.absent.map((entry) => `${entry.kind}:${path.relative(root, entry.path)}`);
      for (const name of ['.claude', '.vscode', '.idea', '.husky'])
        expect(absent).toEqual(expect.arrayContaining([`directory:ws/${name}`, `directory:extra/${name}`]));
      for (const name of ['.mcp.json', '.envrc', '.gitmodules', '.npmrc', '.yarnrc', '.yarnrc.yml']) expect(absent).toContain(`file:ws/${name}`);
      expect(absent).toContain('directory:extra/.git');
      expect(absent).not.toContain('file:extra/.mcp.json');
      expect(plan.unpinnable).toEqual([]);

      // A writable home whose .config leads out: nothing is made through the link.
      const home = path.join(root, 'home');
      await mkdir(path.join(root, 'outside-config'), { recursive: true });
      await mkdir(home);
      await symlink(path.join(root, 'outside-config'), path.join(home, '.config'));
      const homePlan = await sandboxPlan({ cwd: home, writable: [home], home, stateDir: path.join(root, 'state'), env: {} });
      expect(homePlan.absent.map((entry) => path.relative(home, entry.path))).toEqual(expect.arrayContaining(['.bashrc', '.gitconfig']));
      expect(homePlan.absent.map((entry) => entry.path)).not.toContain(path.join(home, '.config', 'git'));

      await symlink(path.join(root, 'elsewhere'), path.join(ws, '.claude'));
      const decision = await decideSandbox({ cwd: ws, home: path.join(root, 'home'), stateDir: path.join(root, 'state') });
      expect(decision.refusal).toMatch(/\.claude is a symbolic link, which the sandbox cannot keep a command from replacing/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('a placeholder this worker holds counts as absent in the next plan, so that command holds it too (a release cannot pull it from under its start)', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-plan-'));
    try {
      const options = { cwd: root, writable: [root], home: path.join(root, 'home'), stateDir: path.join(root, 'state'), env: {} };
      const first = await sandboxPlan(options);
      const held = await acquirePlaceholders(first.absent);
      expect(existsSync(path.join(root, '.vscode'))).toBe(true);
      const second = await sandboxPlan(options);
      expect(second.absent.map((entry) => entry.path).sort()).toEqual(first.absent.map((entry) => entry.path).sort());
      expect(second.readOnly).toEqual([]);
      const alsoHeld = await acquirePlaceholders(second.absent);
      await held.release();
      expect(existsSync(path.join(root, '.vscode'))).toBe(true);
      await alsoHeld.release();
      expect(readdirSync(root)).toEqual([]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('placeholders that share a directory this worker made leave nothing behind, whichever is released first', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-plan-'));
    try {
      for (const order of ['first-made first', 'last-made first']) {
        const first = await acquirePlaceholders([{ path: path.join(root, 'home', '.bashrc'), kind: 'file' }]);
        const second = await acquirePlaceholders([{ path: path.join(root, 'home', '.config', 'git'), kind: 'directory' }]);
        expect(readdirSync(path.join(root, 'home')).sort()).toEqual(['.bashrc', '.config']);
        const [early, late] = order === 'first-made first' ? [first, second] : [second, first];
        await early.release();
        expect(existsSync(path.join(root, 'home')), order).toBe(true);
        await late.release();
        expect(readdirSync(root), order).toEqual([]);
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('proxy addresses are compared after parsing: every spelling of a local address is local', async () => {
    const local = [
      '127.0.0.1',
      '127.9.9.9',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '[::ffff:7f00:1]',
      '2130706433',
      '0x7f000001',
      '0177.0.0.1',
      '127.1',
      '0',
      '0.0.0.0',
      '::',
      '169.254.169.254',
      'fe80::1',
      '::127.0.0.1',
    ];
    for (const address of local) expect(isHostLocalAddress(address), address).toBe(true);
    expect(['10.0.0.1', '93.184.216.34', '2606:4700::1', '::ffff:93.184.216.34'].some(isHostLocalAddress)).toBe(false);
    expect(normalizeHost('0x7f000001')).toBe('127.0.0.1');
    expect(normalizeHost('[::ffff:127.0.0.1]')).toBe('::ffff:7f00:1');
    expect(normalizeHost('Example.COM.')).toBe('example.com');
    expect(normalizeHost('a b')).toBeUndefined();
    for (const host of ['2130706433', '[::ffff:7f00:1]', 'localhost', '127.1']) {
      expect(await resolveTarget(host, 80, ['*', host]), host).toMatchObject({ refused: expect.stringMatching(/an address of this host/) });
    }
    expect(await resolveTarget('example.com', 80, ['github.com'])).toEqual({ refused: 'example.com is not in sandbox.network.allowedDomains' });
    for (const host of ['93.184.216.34', '[::ffff:93.184.216.34]', '[::ffff:5db8:d822]', '1572395042']) {
      expect(await resolveTarget(host, 7233, ['*'], new Set(['93.184.216.34:7233'])), host).toMatchObject({
        refused: expect.stringMatching(/Temporal server/),
      });
    }
    // Every other port of the Temporal server's host too (its Web UI, its HTTP API on a port nobody knows); other hosts are reached.
    expect(await resolveTarget('93.184.216.34', 443, ['*'], new Set(['93.184.216.34:7233']))).toMatchObject({ refused: expect.stringMatching(/any port/) });
    expect(await resolveTarget('93.184.216.35', 443, ['*'], new Set(['93.184.216.34:7233']))).toEqual({ address: '93.184.216.35' });
    // This host's interface addresses (a LAN, bridge or VPN one), on every port, unless the list names them exactly.
    const own = new Set(['192.0.2.7', 'fd00::7']);
    for (const host of ['192.0.2.7', '[fd00::7]', '[::ffff:192.0.2.7]', '3221225991']) {
      expect(await resolveTarget(host, 443, ['*'], new Set(), own), host).toMatchObject({ refused: expect.stringMatching(/an address of this host/) });
    }
    expect(await resolveTarget('192.0.2.7', 443, ['192.0.2.7'], new Set(), own)).toEqual({ address: '192.0.2.7' });
  });
});
