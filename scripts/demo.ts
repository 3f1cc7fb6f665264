/**
 * `npm start` — the main job on embedded defaults:
 *  1. uses the Temporal server at TEMPORAL_ADDRESS (default localhost:7233) if one answers,
 *     otherwise starts the local dev server (state in .durable-agent/temporal.db, UI on 8233) —
 *     on a fresh machine after building the Temporal CLI once (infra/temporal-cli.ts; it narrates);
 *  2. starts a worker in this process;
 *  3. runs a conversation that fixes a bug in a small demo workspace and prints its progress.
 * With ANTHROPIC_API_KEY it talks to the real API; without one it runs a scripted demo
 * conversation against the local scripted model server, and says so.
 * One line per step (issue 32, item 4): server, worker, model, conversation, its events, the
 * result, how to continue; it exits as soon as it has said that (a dev server it started is left
 * stopping cleanly on its own).
 */
// Only light modules at load time: the first line shows before the SDKs and the rest load (seconds under tsx).
import type { Client } from '@temporalio/client';
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { DevServer } from '../infra/dev-server';
import type { Responder, ScriptedModelServer } from '../testing/scripted-model-server';
import { DEMO_PROMPT, demoTurn } from '../worker/scripted-model';

/** This checkout (as infra/dev-server.ts's REPO_ROOT). */
const REPO_ROOT = path.resolve(__dirname, '..');

/**
 * The run is unattended (nobody to approve): edits inside its own temp workspace and exactly the
 * test command run; anything else that would ask is denied (issue 17: nothing runs unchecked).
 */
const UNATTENDED_PERMISSIONS = { mode: 'acceptEdits' as const, allow: ['Bash(node test.js)'], canApprove: false };

/**
 * The demo's workspace: outside the checkout's `.durable-agent/`, which holds the dev server's database and which
 * the tools therefore refuse (activities/sandbox.ts secretPaths: there every Read and Edit of the demo failed),
 * one per checkout.
 */
const DEMO_WORKSPACE = path.join(os.tmpdir(), `durable-agent-demo-${createHash('sha256').update(REPO_ROOT).digest('hex').slice(0, 8)}`);
const PROMPT = DEMO_PROMPT;

/** The demo workspace: a one-line bug in math.js that test.js catches (also used by `npm run smoke`). */
export const FILES: Record<string, string> = {
  'math.js': `// Small math helpers.\nfunction sum(numbers) {\n  let total = 0;\n  for (let i = 1; i < numbers.length; i++) total += numbers[i];\n  return total;\n}\n\nfunction average(numbers) {\n  return numbers.length === 0 ? 0 : sum(numbers) / numbers.length;\n}\n\nmodule.exports = { sum, average };\n`,
  'test.js': `const assert = require('node:assert');\nconst { sum, average } = require('./math');\n\nassert.strictEqual(sum([1, 2, 3]), 6);\nassert.strictEqual(average([2, 4, 6]), 4);\nconsole.log('all tests passed');\n`,
  'CLAUDE.md': `# Demo project\nRun \`node test.js\` to test. Keep fixes minimal.\n`,
};

/**
 * The scripted conversation: explore, reproduce, fix, verify, report — keyed on the turn number, whatever the
 * prompt (the smoke run words its own). `worker --scripted` plays the same for the demo's prompt.
 */
export const demoResponder: Responder = (request) => demoTurn(request.body.messages.filter((message: { role: string }) => message.role === 'assistant').length);

/**
 * The Temporal server at TEMPORAL_ADDRESS if one answers, else the local dev server (started here, after
 * building the Temporal CLI if this machine has none yet: that build says what it does, and for how long).
 * One line per step; `quiet`: not the dev server's own details (its command line, the CLI found).
 */
export async function ensureServer(options: { quiet?: boolean } = {}): Promise<{ address: string; uiUrl?: string; server?: DevServer }> {
  const say = (line: string) => console.log(line);
  const detail = options.quiet ? () => {} : say;
  const [{ temporalSettings }, { findTemporalUi }, { DEFAULT_DB_FILENAME, DEFAULT_UI_PORT, isTemporalReachable, startDevServer }, { ensureTemporalCli }] =
    await Promise.all([import('../infra/connection'), import('../infra/ui-url'), import('../infra/dev-server'), import('../infra/temporal-cli')]);
  const settings = temporalSettings();
  // Nothing listening is told in milliseconds; the gRPC check waits out its timeout (2.1 s measured).
  if (!(await refused(settings.address)) && (await isTemporalReachable(settings.address, 2_000))) {
    const uiUrl = await findTemporalUi(settings.address);
    say(`Temporal server: using the one at ${settings.address}${uiUrl ? ` · Web UI ${uiUrl}` : ''}`);
    return { address: settings.address, uiUrl };
  }
  say(`Temporal server: none at ${settings.address}; starting the local dev server (state in ${path.relative(process.cwd(), DEFAULT_DB_FILENAME)})…`);
  const cli = await ensureTemporalCli({ log: say, live: process.stderr.isTTY ? process.stderr : undefined, announceFound: !options.quiet });
  const portFree = (await refused('127.0.0.1:7233')) || !(await isTemporalReachable('127.0.0.1:7233', 500));
  const startedAt = Date.now();
  const server = await startDevServer({
    ephemeral: false,
    dbFilename: DEFAULT_DB_FILENAME,
    port: portFree ? 7233 : undefined,
    uiPort: portFree ? DEFAULT_UI_PORT : undefined,
    headless: false,
    cliPath: cli.path,
    log: detail,
  });
  process.env.TEMPORAL_ADDRESS = server.address;
  say(`Temporal server: ready at ${server.address} in ${seconds(Date.now() - startedAt)}${server.uiUrl ? ` · Web UI ${server.uiUrl}` : ''}`);
  return { address: server.address, uiUrl: server.uiUrl, server };
}

/** Whether nothing listens at `host:port` (the connection is refused); false when something does, or when unsure. */
export function refused(address: string, timeoutMs = 1_000): Promise<boolean> {
  const match = /^\[?(.*?)\]?:(\d+)$/.exec(address);
  if (!match) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = net.connect({ host: match[1], port: Number(match[2]) });
    const done = (value: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(false));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED'));
  });
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Stops a dev server this process started without waiting for it (its clean shutdown takes about a second):
 * SIGTERM, and our ends of its stdout/stderr go to a detached drain that reads until the server closes them —
 * with those pipes closed, the server's shutdown lines would kill it with SIGPIPE half-way (measured: 18 ms,
 * signal SIGPIPE, versus exit code 0 after 1.3–1.5 s when drained). The drain's background `cat` names its input
 * (`<&3`): sh gives an asynchronous command /dev/null as its stdin otherwise (that version died of SIGPIPE, 141).
 * dev-server.ts's watchdog still SIGKILLs the server if it hangs for 10 s after this process is gone.
 */
export function stopInBackground(server: DevServer): void {
  const child = server.process;
  if (child.exitCode !== null || child.signalCode !== null) return;
  if (process.platform !== 'win32' && child.stdout && child.stderr) {
    const drain = spawn('sh', ['-c', 'cat <&3 >/dev/null & cat >/dev/null; wait'], { detached: true, stdio: [child.stdout, 'ignore', 'ignore', child.stderr] });
    drain.on('error', () => undefined);
    drain.unref();
  }
  child.kill('SIGTERM');
  child.stdout?.destroy();
  child.stderr?.destroy();
  child.unref();
}

async function prepareWorkspace(): Promise<void> {
  await rm(DEMO_WORKSPACE, { recursive: true, force: true });
  await mkdir(DEMO_WORKSPACE, { recursive: true });
  for (const [file, content] of Object.entries(FILES)) await writeFile(path.join(DEMO_WORKSPACE, file), content);
}

/**
 * `npm start` prints the conversation, the UI link and how to continue — nothing else (issue 19,
 * item 8). The conversation runs on the main task queue when no other worker polls it, so a
 * worker started later (`npm run worker -- --scripted`) answers `transcript` and `status` for it.
 */
async function main(): Promise<void> {
  console.log('durable-agent demo: a Temporal server, a worker and one conversation that fixes a bug. Loading…');
  (await import('../worker/runtime-logger')).installPeopleLogger();
  const { address, uiUrl, server } = await ensureServer({ quiet: true });
  try {
    await runDemo(address, uiUrl, server);
  } finally {
    // Also when the demo failed: the server is not left to a SIGTERM at exit with nobody reading its output.
    if (server) stopInBackground(server);
  }
}

async function runDemo(address: string, uiUrl: string | undefined, server: DevServer | undefined): Promise<void> {
  // Said before the worker's code loads: under tsx on a fresh clone that alone took 4.6 s (1.5 s once tsx has its cache).
  const workerStartedAt = Date.now();
  console.log(
    process.env.DURABLE_AGENT_WORKFLOW_BUNDLE?.trim()
      ? 'Worker: starting, with the prebuilt workflow bundle…'
      : 'Worker: starting — loading its code, then bundling the workflows (a few seconds)…',
  );
  const [
    { default: Anthropic },
    { NativeConnection, Runtime },
    { anthropicFromEnvironment, createActivities, defaultStateDir },
    { ConversationClient },
    { connectClient, connectionOptions, temporalSettings },
    { conversationUiUrl },
    { formatEvent },
    { DEFAULT_MODEL },
    { startScriptedModelServer },
    { createWorker },
    { becomeCurrentVersion, versionedDeployment, versioningFromEnvironment },
    { prebuiltWorkflowBundle, prepareWorkerVersion },
  ] = await Promise.all([
    import('@anthropic-ai/sdk'),
    import('@temporalio/worker'),
    import('../activities'),
    import('../client/api'),
    import('../infra/connection'),
    import('../infra/ui-url'),
    import('../client/format'),
    import('../common/config'),
    import('../testing/scripted-model-server'),
    import('../worker/worker'),
    import('../worker/versioning'),
    import('../worker/workflow-bundles'),
  ]);
  const settings = temporalSettings();
  const client = await connectClient({ ...settings, address });
  let scripted: ScriptedModelServer | undefined;
  let anthropic = anthropicFromEnvironment();
  const model = process.env.DURABLE_AGENT_MODEL ?? DEFAULT_MODEL;
  if (!process.env.ANTHROPIC_API_KEY) {
    scripted = await startScriptedModelServer({ respond: demoResponder });
    anthropic = new Anthropic({ apiKey: 'scripted-demo', baseURL: scripted.url, maxRetries: 0 });
  }
  await prepareWorkspace();
  // A scripted demo must not hand its model calls to someone's real worker (nor take theirs).
  const othersPoll = scripted ? await hasPollers(client, settings.namespace, settings.taskQueue) : false;
  const taskQueue = othersPoll ? `demo-${randomUUID().slice(0, 8)}` : settings.taskQueue;
  const connection = await NativeConnection.connect(connectionOptions({ ...settings, address }));
  // On the main task queue the demo's worker is versioned as `durable-agent worker` is (issue 30): a queue with a
  // current version sends new conversations to that version's workers only. It becomes current only when no other
  // worker polls the queue (theirs stays current otherwise, and answers). A queue of its own stays unversioned.
  const versioning = taskQueue === settings.taskQueue ? versioningFromEnvironment() : undefined;
  const othersPollMain = versioning ? await hasPollers(client, settings.namespace, taskQueue) : false;
  // DURABLE_AGENT_WORKFLOW_BUNDLE: a bundle built ahead of time, as for `durable-agent worker`.
  const prebuilt = await prebuiltWorkflowBundle();
  const version = versioning
    ? await prepareWorkerVersion(versioning, {
        stateDir: defaultStateDir(),
        dataConverter: settings.dataConverter,
        logger: Runtime.instance().logger,
        prebuilt,
      })
    : undefined;
  const worker = await createWorker({
    connection,
    namespace: settings.namespace,
    taskQueue,
    dataConverter: settings.dataConverter,
    activities: createActivities({ anthropic, stateDir: defaultStateDir(), temporalClient: client }),
    ...(version
      ? { workflowBundle: { code: version.code }, deployment: versionedDeployment(version.deploymentName, version.buildId) }
      : prebuilt
        ? { workflowBundle: { code: prebuilt.code } }
        : {}),
  });
  const api = new ConversationClient(client);
  console.log(`Worker: ready in ${seconds(Date.now() - workerStartedAt)}, on task queue ${taskQueue}`);
  console.log(scripted ? 'No ANTHROPIC_API_KEY: the model is scripted; the worker, tools and Temporal are real.' : `Model: ${model} (Anthropic API).`);

  let exitCode = 0;
  let conversationId = '';
  await worker.runUntil(async () => {
    if (version && versioning?.becomeCurrent && !othersPollMain) {
      const outcome = await becomeCurrentVersion(
        client.workflowService,
        { namespace: settings.namespace, deploymentName: version.deploymentName, buildId: version.buildId },
        { identity: `durable-agent demo ${process.pid}` },
      );
      if (typeof outcome !== 'string')
        console.warn(`Worker Deployment version ${version.deploymentName}:${version.buildId} is not current: ${outcome.notCurrent}`);
    }
    const started = await api.start({ prompt: PROMPT, taskQueue, config: { cwd: DEMO_WORKSPACE, model, maxTurns: 20, permissions: UNATTENDED_PERMISSIONS } });
    conversationId = started.conversationId;
    console.log(`Conversation ${conversationId} started in ${DEMO_WORKSPACE}`);
    if (uiUrl) console.log(`Temporal UI: ${conversationUiUrl(uiUrl, settings.namespace, conversationId)}`);
    console.log('');
    // Each call's input, so its result reads as Claude Code's (`Read 11 lines`, `Updated math.js with 1 addition and 1 removal`).
    const calls: Parameters<typeof formatEvent>[1] = new Map();
    const result = await api.waitForResult(conversationId, started.inputUuid!, {
      onEvent: (event) => {
        const line = formatEvent(event, calls);
        if (line) console.log(line);
      },
    });
    await api.end(conversationId);
    await api.summary(conversationId);
    exitCode = result.is_error ? 1 : 0;
  });
  const queue = taskQueue === settings.taskQueue ? '' : `DURABLE_AGENT_TASK_QUEUE=${taskQueue} `;
  const steps: Array<[string, string]> = [
    ...(server ? ([['npm run server', 'the Temporal server and UI again (they keep this conversation)']] as Array<[string, string]>) : []),
    [`${queue}npm run worker${scripted ? ' -- --scripted' : ''}`, scripted ? 'a worker; without a key, the scripted model' : 'a worker'],
    [`npm run cli -- transcript ${conversationId}`, 'this conversation again'],
    ['npm run cli -- chat', 'a conversation of your own (npm run cli -- help: every command)'],
  ];
  const width = Math.max(...steps.map(([command]) => command.length).filter((length) => length <= 40));
  console.log(['', 'Continue:', ...steps.map(([command, what]) => `  ${command.padEnd(width)}   # ${what}`)].join('\n'));
  await Promise.all([connection.close(), client.connection.close(), scripted?.close()]);
  process.exitCode = exitCode;
}

async function hasPollers(client: Client, namespace: string, taskQueue: string): Promise<boolean> {
  const response = await client.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue } }).catch(() => undefined);
  return (response?.pollers ?? []).length > 0;
}

// Only when run (`npm start`), not when the smoke run imports the helpers above.
if (require.main === module) {
  main().then(
    // Everything is said, closed and ended: exit now rather than wait for timers left behind (the live
    // publisher's backstop, gRPC's) — 0.5–0.7 s measured. The core's forwarded log lines are flushed first.
    async () => {
      (await import('@temporalio/worker')).Runtime.instance().flushLogs();
      process.exit(process.exitCode ?? 0);
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
