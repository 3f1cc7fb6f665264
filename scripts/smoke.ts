/**
 * `npm run smoke` — a real-API smoke run (not part of `npm test`): one conversation against the
 * real Anthropic Messages API, through every real piece (Temporal, worker, workflow, SDK, tools).
 *
 * It makes a temp workspace with a bug (demo.ts's math.js / test.js), asks the model to Read the
 * files, fix math.js with Edit and run the test with Bash, prints the result as JSON, and exits
 * non-zero if the result is an error or the workspace's test still fails. The Temporal server is
 * found or started as by `npm start` (scripts/demo.ts).
 *
 * Without ANTHROPIC_API_KEY it says so and exits 0. `SMOKE_SCRIPTED=1` runs the same path against
 * the local scripted model server (demo.ts's scripted conversation) as a self-check of the script:
 * then any request the server's validator refused also fails the run.
 */
import Anthropic from '@anthropic-ai/sdk';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { anthropicFromEnvironment, createActivities } from '../activities';
import { ConversationClient } from '../client/api';
import { formatEvent } from '../client/format';
import { DEFAULT_MODEL } from '../common/config';
import type { ResultMessage } from '../common/result';
import { connectClient, connectionOptions, temporalSettings } from '../infra/connection';
import { type ScriptedModelServer, startScriptedModelServer } from '../testing/scripted-model-server';
import { createWorker } from '../worker/worker';
import { FILES, demoResponder, ensureServer } from './demo';

/**
 * The run is unattended (nobody to approve): edits inside its own temp workspace and exactly the
 * test command run; anything else that would ask is denied (issue 17: nothing runs unchecked).
 */
const UNATTENDED_PERMISSIONS = { mode: 'acceptEdits' as const, allow: ['Bash(node test.js)'], canApprove: false };

const PROMPT =
  'The test in test.js fails. Use the Read tool to read math.js and test.js, fix the bug in math.js ' +
  'with the Edit tool, then run `node test.js` with the Bash tool to verify that it passes.';
/** Long enough for a slow model turn or a few retries; a hung run still ends. */
const RESULT_TIMEOUT_MS = 10 * 60 * 1000;

/** Whether `node test.js` passes in the workspace (the model's fix, checked independently). */
async function workspaceTestPasses(workspace: string): Promise<boolean> {
  try {
    await promisify(execFile)(process.execPath, ['test.js'], { cwd: workspace, timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<number> {
  const scriptedRun = process.env.SMOKE_SCRIPTED === '1';
  if (!process.env.ANTHROPIC_API_KEY && !scriptedRun) {
    console.log(
      'The smoke run talks to the real Anthropic API and needs a key: set ANTHROPIC_API_KEY ' +
        '(ANTHROPIC_API_KEY=sk-... npm run smoke). Nothing was run. (SMOKE_SCRIPTED=1 runs it against the local scripted model server.)',
    );
    return 0;
  }

  Runtime.install({ logger: new DefaultLogger('WARN') });
  const { address, server } = await ensureServer();
  let scripted: ScriptedModelServer | undefined;
  let anthropic: Anthropic | undefined;
  if (scriptedRun) {
    scripted = await startScriptedModelServer({ respond: demoResponder });
    anthropic = new Anthropic({ apiKey: 'scripted-smoke', baseURL: scripted.url, maxRetries: 0 });
    console.log(`SMOKE_SCRIPTED=1: using the local scripted model server (${scripted.url}), not the real API.`);
  } else {
    anthropic = anthropicFromEnvironment();
  }
  const model = process.env.DURABLE_AGENT_MODEL ?? DEFAULT_MODEL;

  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-smoke-'));
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-smoke-state-'));
  for (const [file, content] of Object.entries(FILES)) await writeFile(path.join(workspace, file), content);

  const settings = temporalSettings();
  // Its own task queue: a worker already polling the default queue must not take these tasks.
  const taskQueue = `smoke-${randomUUID().slice(0, 8)}`;
  const client = await connectClient({ ...settings, address });
  const connection = await NativeConnection.connect(connectionOptions({ ...settings, address }));
  const worker = await createWorker({
    connection,
    namespace: settings.namespace,
    taskQueue,
    dataConverter: settings.dataConverter,
    activities: createActivities({ anthropic, stateDir, temporalClient: client }),
  });
  const api = new ConversationClient(client);

  let result: ResultMessage | undefined;
  try {
    await worker.runUntil(async () => {
      const { conversationId, inputUuid } = await api.start({
        prompt: PROMPT,
        taskQueue,
        config: { cwd: workspace, model, maxTurns: 20, permissions: UNATTENDED_PERMISSIONS },
      });
      console.log(`Smoke run: conversation ${conversationId}, model ${model}, workspace ${workspace}\n`);
      result = await api.waitForResult(conversationId, inputUuid!, {
        signal: AbortSignal.timeout(RESULT_TIMEOUT_MS),
        onEvent: (event) => {
          const line = formatEvent(event);
          if (line) console.log(line);
        },
      });
      await api.end(conversationId);
      await api.summary(conversationId);
    });
  } finally {
    await connection.close();
    await client.connection.close();
  }

  const testPasses = await workspaceTestPasses(workspace);
  const rejections = scripted?.rejections ?? [];
  await scripted?.close();
  await server?.stop();
  await rm(workspace, { recursive: true, force: true });
  await rm(stateDir, { recursive: true, force: true });

  const summary = {
    subtype: result?.subtype,
    is_error: result?.is_error,
    terminal_reason: result?.terminal_reason,
    num_turns: result?.num_turns,
    total_cost_usd: result?.total_cost_usd,
    transitions: result?.transitions,
    duration_ms: result?.duration_ms,
    usage: result?.usage,
    model: result?.model,
    workspace_test_passes: testPasses,
    ...(scripted ? { scripted_server_rejections: rejections } : {}),
    result: result?.result,
  };
  console.log(`\nSmoke result:\n${JSON.stringify(summary, null, 2)}`);
  const failed = !result || result.is_error || !testPasses || rejections.length > 0;
  console.log(failed ? '\nSMOKE RUN FAILED' : '\nSmoke run passed.');
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
