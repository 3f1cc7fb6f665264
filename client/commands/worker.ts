/**
 * `durable-agent worker [--scripted | --workspace-queue <name>]`: run a worker until stopped (the
 * worker's code is loaded only here: other commands do not pay for it).
 */
import type { CommandInput } from '../command-line';
import { UsageError } from '../usage-error';

export async function workerCommand({ values }: CommandInput): Promise<number> {
  const workspaceQueue = values['workspace-queue'] as string | undefined;
  if (workspaceQueue !== undefined && workspaceQueue.trim() === '') throw new UsageError('worker: --workspace-queue needs a task queue name.');
  if (workspaceQueue !== undefined && values.scripted) throw new UsageError('worker: --scripted answers model calls; a --workspace-queue worker makes none.');
  const { runWorker } = await import('../../worker/main');
  await runWorker(process.env, { workspaceQueue, scripted: values.scripted === true });
  return 0;
}
