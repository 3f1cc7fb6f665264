/**
 * The stack both screenshot scripts run on (scripts/ui-screenshots.ts, scripts/terminal-screenshots.ts): an ephemeral dev
 * server, the scripted model server with `responder`, the `npm start` demo's workspace files in a temporary directory, and
 * an in-process worker on `taskQueue` whose model is the scripted one. `close()` stops it all.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createActivities } from '../activities';
import { type DevServer, startDevServer } from '../infra/dev-server';
import { type Responder, startScriptedModelServer } from '../testing/scripted-model-server';
import { type AgentWorker, createWorker } from '../worker/worker';
import { FILES } from './demo';

export interface ScreenshotStack {
  server: DevServer;
  client: Client;
  worker: AgentWorker;
  /** The demo workspace (math.js, test.js). */
  workspace: string;
  close(): Promise<void>;
}

export async function startScreenshotStack(options: {
  name: string;
  taskQueue: string;
  responder: Responder;
  headless: boolean;
  log: (line: string) => void;
}): Promise<ScreenshotStack> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const server = await startDevServer({ ephemeral: true, headless: options.headless, log: options.log });
  const model = await startScriptedModelServer({ respond: options.responder });
  const workspace = await mkdtemp(path.join(os.tmpdir(), `durable-agent-${options.name}-demo-`));
  for (const [file, content] of Object.entries(FILES)) await writeFile(path.join(workspace, file), content);
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });
  const workerConnection = await NativeConnection.connect({ address: server.address });
  const worker = await createWorker({
    connection: workerConnection,
    namespace: server.namespace,
    taskQueue: options.taskQueue,
    activities: createActivities({
      anthropic: new Anthropic({ apiKey: 'scripted', baseURL: model.url, maxRetries: 0 }),
      stateDir: await mkdtemp(path.join(os.tmpdir(), `durable-agent-${options.name}-state-`)),
      temporalClient: client,
    }),
  });
  return {
    server,
    client,
    worker,
    workspace,
    close: async () => {
      await workerConnection.close();
      await connection.close();
      await model.close();
      await server.stop();
      await rm(workspace, { recursive: true, force: true });
    },
  };
}
