/** The CLI's connection to Temporal: a `ConversationClient` on the configured server and task queue. */
import { connectClient, temporalSettings } from '../infra/connection';
import { ConversationClient } from './api';
import type { Io } from './command-line';
import { noWorkerLine } from './worker-presence';

/** Runs `command` with a client for the configured server and its task queue; the connection is closed after it. */
export async function withConnection<T>(command: (api: ConversationClient, taskQueue: string) => Promise<T>): Promise<T> {
  const settings = temporalSettings();
  const client = await connectClient(settings);
  try {
    return await command(new ConversationClient(client), settings.taskQueue);
  } finally {
    await client.connection.close();
  }
}

/** Warns when nobody polls the task queue: the conversation would wait for a worker forever. */
export async function warnIfNoWorker(api: ConversationClient, taskQueue: string, io: Io): Promise<void> {
  if ((await api.hasPollers(taskQueue)) === false) {
    io.err(`Note: ${noWorkerLine(taskQueue)}`);
  }
}
