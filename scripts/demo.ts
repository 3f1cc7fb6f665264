/**
 * `npm start` — the main job on embedded defaults:
 *  1. uses the Temporal server at TEMPORAL_ADDRESS (default localhost:7233) if one answers,
 *     otherwise starts the local dev server (state in .durable-agent/temporal.db, UI on 8233);
 *  2. starts a worker in this process;
 *  3. runs a conversation that fixes a bug in a small demo workspace and prints its progress.
 * With ANTHROPIC_API_KEY it talks to the real API; without one it runs a scripted demo
 * conversation against the local scripted model server, and says so.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { Client } from '@temporalio/client';
import { NativeConnection, Runtime } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { anthropicFromEnvironment, createActivities, defaultStateDir } from '../activities';
import { ConversationClient } from '../client/api';
import { connectClient, connectionOptions, temporalSettings } from '../infra/connection';
import { conversationUiUrl, findTemporalUi } from '../infra/ui-url';
import { formatEvent } from '../client/format';
import { DEFAULT_MODEL } from '../common/config';
import { type Responder, type ScriptedModelServer, startScriptedModelServer } from '../testing/scripted-model-server';
import { createWorker } from '../worker/worker';
import { becomeCurrentVersion, versionedDeployment, versioningFromEnvironment } from '../worker/versioning';
import { prebuiltWorkflowBundle, prepareWorkerVersion } from '../worker/workflow-bundles';
import { DEMO_PROMPT, demoTurn } from '../worker/scripted-model';
import { installPeopleLogger } from '../worker/runtime-logger';
import { DEFAULT_DB_FILENAME, DEFAULT_UI_PORT, type DevServer, REPO_ROOT, isTemporalReachable, startDevServer } from '../infra/dev-server';

/**
 * The run is unattended (nobody to approve): edits inside its own temp workspace and exactly the
 * test command run; anything else that would ask is denied (issue 17: nothing runs unchecked).
 */
const UNATTENDED_PERMISSIONS = { mode: 'acceptEdits' as const, allow: ['Bash(node test.js)'], canApprove: false };

const DEMO_WORKSPACE = path.join(REPO_ROOT, '.durable-agent', 'demo-workspace');
const PROMPT = DEMO_PROMPT;

/** The demo workspace: a one-line bug in math.js that test.js catches (also used by `npm run smoke`). */
export const FILES: Record<string, string> = {
  'math.js': `// Small math helpers.\nfunction sum(numbers) {\n  let total = 0;\n  for (let i = 1; i < numbers.length; i++) total += numbers[i];\n  return total;\n}\n\nfunction average(numbers) {\n  return numbers.length === 0 ? 0 : sum(numbers) / numbers.length;\n}\n\nmodule.exports = { sum, average };\n`,
  'test.js': `const assert = require('node:assert');\nconst { sum, average } = require('./math');\n\nassert.strictEqual(sum([1, 2, 3]), 6);\nassert.strictEqual(average([2, 4, 6]), 4);\nconsole.log('all tests passed');\n`,
  'CLAUDE.md': `# Demo project\nRun \`node test.js\` to test. Keep fixes minimal.\n`,
};

/** The scripted conversation: explore, reproduce, fix, verify, report — keyed on the turn number. */
export const demoResponder: Responder = (request) => demoTurn(request.body.messages.filter((message: { role: string }) => message.role === 'assistant').length);

/**
 * The Temporal server at TEMPORAL_ADDRESS if one answers, else the local dev server (started here).
 * `quiet`: only what a person needs (`npm start`); otherwise each step is logged.
 */
export async function ensureServer(options: { quiet?: boolean } = {}): Promise<{ address: string; uiUrl?: string; server?: DevServer }> {
  const say = options.quiet ? () => {} : (line: string) => console.log(line);
  const settings = temporalSettings();
  if (await isTemporalReachable(settings.address, 2_000)) {
    say(`Using the Temporal server at ${settings.address}.`);
    return { address: settings.address, uiUrl: await findTemporalUi(settings.address) };
  }
  say(`No Temporal server at ${settings.address}; starting the local dev server (state: ${path.relative(process.cwd(), DEFAULT_DB_FILENAME)}).`);
  const portFree = !(await isTemporalReachable('127.0.0.1:7233', 500));
  const server = await startDevServer({
    ephemeral: false,
    dbFilename: DEFAULT_DB_FILENAME,
    port: portFree ? 7233 : undefined,
    uiPort: portFree ? DEFAULT_UI_PORT : undefined,
    headless: false,
    log: say,
  });
  process.env.TEMPORAL_ADDRESS = server.address;
  return { address: server.address, uiUrl: server.uiUrl, server };
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
  installPeopleLogger();
  const { address, uiUrl, server } = await ensureServer({ quiet: true });
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
    console.log(scripted ? 'No ANTHROPIC_API_KEY: the model is scripted; the worker, tools and Temporal are real.' : `Model: ${model} (Anthropic API).`);
    console.log(`Conversation ${conversationId} in ${path.relative(process.cwd(), DEMO_WORKSPACE)}`);
    if (uiUrl) console.log(`Temporal UI: ${conversationUiUrl(uiUrl, settings.namespace, conversationId)}`);
    console.log('');
    const result = await api.waitForResult(conversationId, started.inputUuid!, {
      onEvent: (event) => {
        const line = formatEvent(event);
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
  await server?.stop();
  process.exitCode = exitCode;
}

async function hasPollers(client: Client, namespace: string, taskQueue: string): Promise<boolean> {
  const response = await client.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue } }).catch(() => undefined);
  return (response?.pollers ?? []).length > 0;
}

// Only when run (`npm start`), not when the smoke run imports the helpers above.
if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
