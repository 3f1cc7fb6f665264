/**
 * Issue 17 §10: Bash and Stop hooks run in a bubblewrap sandbox. Real bwrap, real files: the
 * activity runs whatever the rule engine let through (bypassPermissions included), so these are
 * the commands a misjudging parser would allow, and the sandbox is what stops them.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunStopHooksResult } from '../../common/activity-types';
import { bwrapArguments, decideSandbox, execFileInSandbox, readDenyPaths, resetSandboxAvailability, sandboxAvailability } from '../../activities/sandbox';
import { domainAllowed, isHostLocalAddress } from '../../activities/sandbox-network';
import { isExcludedCommand, mergeSandboxSettings } from '../../activities/sandbox-settings';
import { runStopHooks } from '../../activities/stop-hooks';
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

afterAll(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
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

  it('network: on by default; off when the settings say so (allowedDomains: [])', async () => {
    const server = net.createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const connect = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3`;
    try {
      expect(await bash(connect)).toEqual({ isError: false, content: 'hello' });
      const off = await bash(connect, { sandboxConfig: { network: { allowedDomains: [] } } });
      expect(off.isError).toBe(true);
      expect(off.content).toMatch(/Connection refused|Network is unreachable|connect/);
      await writeUserSettings({ network: { allowedDomains: [] } });
      expect((await bash(connect)).isError).toBe(true);
      // A project file cannot turn it back on.
      await writeProjectSettings({ network: { allowedDomains: ['127.0.0.1'] } });
      const project = await bash(connect);
      expect(project.isError).toBe(true);
      expect(project.content).toMatch(/sandbox\.network\.allowedDomains ignored/);
    } finally {
      server.close();
    }
  }, 30_000);

  it('network: an allowedDomains list lets through only those domains, through the proxy', async () => {
    // 127.0.0.2, not 127.0.0.1: loopback stays inside the sandbox (NO_PROXY), as a local dev server would.
    const server = http.createServer((request, response) => response.end(`hello ${request.method}\n`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const config = { sandboxConfig: { network: { allowedDomains: ['127.0.0.2'] } } };
    try {
      // Plain HTTP through the proxy, and a CONNECT tunnel (-p), as HTTPS uses.
      expect(await bash(`curl -sS http://127.0.0.2:${port}/ && curl -sS -p http://127.0.0.2:${port}/`, config)).toEqual({ isError: false, content: 'hello GET\nhello GET' });
      const blocked = await bash(`curl -sS -p http://127.0.0.3:${port}/`, config);
      expect(blocked.isError).toBe(true);
      expect(blocked.content).toMatch(/CONNECT tunnel failed, response 403/);
      expect(blocked.content).toMatch(/network requests to 127\.0\.0\.3:\d+ were blocked/);
      // Around the proxy there is no route.
      expect((await bash(`exec 3<>/dev/tcp/127.0.0.2/${port} && echo connected`, config)).isError).toBe(true);
      // The user's list, which a project file may narrow.
      await writeUserSettings({ network: { allowedDomains: ['127.0.0.2', 'example.com'] } });
      expect((await bash(`curl -sS http://127.0.0.2:${port}/`)).isError).toBe(false);
      await writeProjectSettings({ network: { allowedDomains: ['example.com'] } });
      expect((await bash(`curl -fsS http://127.0.0.2:${port}/`)).isError).toBe(true);
    } finally {
      server.close();
    }
  }, 30_000);

  it("network: '*' allows any host through the proxy, but not this host's loopback or link-local (metadata) addresses", async () => {
    const server = http.createServer((request, response) => response.end('reached\n'));
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const config = { sandboxConfig: { network: { allowedDomains: ['*'] } } };
    try {
      for (const url of [`http://127.0.0.2:${port}/`, `http://localhost:${port}/`, `http://[::1]:${port}/`, 'http://169.254.169.254/latest/meta-data/']) {
        const result = await bash(`curl -fsS --noproxy '' -p --max-time 5 ${url}`, config);
        expect(result.isError, url).toBe(true);
        expect(result.content, url).toMatch(/403/);
      }
      // A non-loopback address of this host: reachable through the proxy.
      const external = Object.values(os.networkInterfaces()).flat().find((entry) => entry && entry.family === 'IPv4' && !entry.internal);
      if (external) expect(await bash(`curl -fsS -p http://${external.address}:${port}/`, config)).toEqual({ isError: false, content: 'reached' });
    } finally {
      server.close();
    }
  }, 30_000);

  it('git and npm work; .git/config, .git/hooks and .claude stay read-only', async () => {
    execFileSync('git', ['init', '-q', workspace]);
    await mkdir(path.join(workspace, '.claude'), { recursive: true });
    await writeFile(path.join(workspace, 'a.txt'), 'a');
    const result = await bash('npm --version && git status --short && git add a.txt && git -c user.name=t -c user.email=t@t commit -qm one && git log --oneline | wc -l');
    expect(result.isError).toBe(false);
    expect(result.content).toMatch(/^\d+\.\d+\.\d+\n\?\? a\.txt\n1$/);

    const config = readFileSync(path.join(workspace, '.git', 'config'), 'utf8');
    const attempt = await bash(
      'git config core.fsmonitor "touch /tmp/pwned"; echo "[core]\n\tfsmonitor = x" >> .git/config; echo x > .git/hooks/pre-commit; echo {} > .claude/settings.json',
    );
    expect(attempt.content).toMatch(/Read-only file system|could not lock config file/);
    expect(readFileSync(path.join(workspace, '.git', 'config'), 'utf8')).toBe(config);
    expect(existsSync(path.join(workspace, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(path.join(workspace, '.claude', 'settings.json'))).toBe(false);

    // Nor by moving them aside: mount points cannot be renamed.
    const moved = await bash('mv .git .git-old; mkdir -p .git; echo evil > .git/config; mv .claude .claude-old; mv .git/hooks .git/hooks-old');
    expect(moved.content).toMatch(/Device or resource busy/);
    expect(readFileSync(path.join(workspace, '.git', 'config'), 'utf8')).toBe(config);
    expect(existsSync(path.join(workspace, '.git-old'))).toBe(false);
    expect(existsSync(path.join(workspace, '.claude-old'))).toBe(false);
    expect(existsSync(path.join(workspace, '.git', 'hooks-old'))).toBe(false);
    expect((await bash('git status --short')).content).toBe('Tool ran without output or errors');
  }, 30_000);

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
    const result = await bash('sleep 34.25 > /dev/null 2>&1 & setsid sleep 34.5 > /dev/null 2>&1 < /dev/null & nohup sleep 34.75 > /dev/null 2>&1 & sleep 0.2; echo started');
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
    expect(['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1', '169.254.169.254', 'fe80::1', '0.0.0.0'].every(isHostLocalAddress)).toBe(true);
    expect(['10.0.0.1', '93.184.216.34', '2606:4700::1'].some(isHostLocalAddress)).toBe(false);
  });

  it('excludedCommands cover plain simple commands only', () => {
    expect(isExcludedCommand('docker ps -a', ['docker ps'])).toBe(true);
    expect(isExcludedCommand('npm run build', ['npm:*'])).toBe(true);
    expect(isExcludedCommand('docker ps; rm -rf ~', ['docker'])).toBe(false);
    expect(isExcludedCommand('docker $(rm -rf ~)', ['docker'])).toBe(false);
    expect(isExcludedCommand('docker ps > /etc/x', ['docker'])).toBe(false);
    expect(isExcludedCommand('FOO=1 docker ps', ['docker'])).toBe(false);
    expect(isExcludedCommand('dockerd', ['docker'])).toBe(false);
    expect(isExcludedCommand('docker images', ['docker ps'])).toBe(false);
  });

  it('bwrap arguments: shallow mounts first, hiding wins at equal depth, remounts last', () => {
    const args = bwrapArguments({
      cwd: '/s/ws',
      writable: ['/s/ws', '/h'],
      readOnly: ['/s/ws/.git/config'],
      hiddenDirectories: ['/s', '/h/.ssh'],
      hiddenFiles: ['/h/.netrc'],
      reexposed: ['/s/workspaces/x/tool-results'],
      network: false,
    }).join(' ');
    expect(args).toContain('--unshare-net');
    expect(args).toContain('--cap-drop ALL');
    const order = ['--bind /h /h', '--tmpfs /s', '--bind /s/ws /s/ws', '--tmpfs /h/.ssh', '--ro-bind /dev/null /h/.netrc', '--ro-bind /s/ws/.git/config', '--ro-bind /s/workspaces/x/tool-results', '--remount-ro /s', '--chdir /s/ws'];
    const positions = order.map((part) => args.indexOf(part));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });
});
