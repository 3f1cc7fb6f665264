/** The CLI's connection to Temporal: a `ConversationClient` on the configured server and task queue. */
import { connectClient, temporalSettings } from '../infra/connection';
import { ConversationClient } from './api';
import type { Io } from './command-line';

/** A client for the configured server, its task queue, and how to close the connection. */
export async function connect(): Promise<{ api: ConversationClient; taskQueue: string; close: () => Promise<void> }> {
  const settings = temporalSettings();
  const client = await connectClient(settings);
  return { api: new ConversationClient(client), taskQueue: settings.taskQueue, close: () => client.connection.close() };
}

/** Warns when nobody polls the task queue: the conversation would wait for a worker forever. */
export async function warnIfNoWorker(api: ConversationClient, taskQueue: string, io: Io): Promise<void> {
  try {
    const response = await api.client.workflowService.describeTaskQueue({
      namespace: api.client.options.namespace,
      taskQueue: { name: taskQueue },
    });
    if ((response.pollers ?? []).length === 0) {
      io.err(`Note: no worker is polling task queue "${taskQueue}" right now; the conversation waits until one starts (\`durable-agent worker\`).`);
    }
  } catch {
    /* best effort */
  }
}
