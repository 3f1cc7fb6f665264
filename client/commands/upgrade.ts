/**
 * `durable-agent upgrade <id> | --all [--timeout <s>]`: moves idle conversations to the Worker
 * Deployment's current version now (docs/deployment.md, "Upgrades with Worker Versioning"). A
 * conversation is pinned to the version its run started on and moves when it continues as new, which
 * it does when a workflow task tells it a newer version is current — but an idle conversation gets
 * no task until its next input. The `upgrade` update is such a task: its handler wakes the idle
 * wait, which continues as new on the current version with the whole state.
 *
 * Before the update the conversation's sticky queue is reset, so the task goes through the task
 * queue, where the server says which version is current (a task on a worker's sticky queue does not
 * carry that). Needs a server with Upgrade on Continue-as-New (Temporal server 1.31 or later): the
 * dev server of Temporal CLI 1.5.1 (server 1.29.1) pins runs but never tells them, and says so here.
 */
import {
  type Client,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  isGrpcServiceError,
} from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { upgradeUpdate } from '../../workflows/definitions';
import { type ConversationClient, ConversationEndedError, ConversationNotFoundError } from '../api';
import type { CommandInput, Io } from '../command-line';
import { withConnection } from '../connect';
import { UsageError } from '../usage-error';
import { resolveConversationId } from './list';
import { cliCommand } from '../invocation';

/** What `upgrade` did to one conversation. */
export type UpgradeResult =
  | { conversationId: string; kind: 'moved'; from: string; to: string; runId: string }
  | { conversationId: string; kind: 'current'; buildId: string }
  | { conversationId: string; kind: 'after_query'; from: string; to: string }
  | { conversationId: string; kind: 'unversioned' }
  | { conversationId: string; kind: 'not_moved'; from: string; to?: string; reason: string };

const DEFAULT_TIMEOUT_S = 30;
const AUTO_UPGRADE = temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE;

export async function upgradeCommand({ values, positionals }: CommandInput, io: Io): Promise<number> {
  if (Boolean(values.all) === positionals.length > 0) throw new UsageError('upgrade: name one conversation <id>, or --all.');
  const timeoutS = values.timeout === undefined ? DEFAULT_TIMEOUT_S : Number(values.timeout);
  if (!Number.isFinite(timeoutS) || timeoutS <= 0) throw new UsageError(`upgrade: --timeout takes a number of seconds, got "${String(values.timeout)}".`);
  return withConnection(async (api) => {
    if (!values.all) {
      const result = await upgradeConversation(api, await resolveConversationId(api, positionals[0]), timeoutS * 1000);
      io.out(describeResult(result));
      return result.kind === 'not_moved' ? 1 : 0;
    }
    const ids: string[] = [];
    const query = `WorkflowType = 'conversationWorkflow' AND ExecutionStatus = 'Running'`;
    for await (const execution of api.client.workflow.list({ query })) {
      // A subagent is part of its parent's query, and follows its parent.
      if (!execution.workflowId.includes('--agent-')) ids.push(execution.workflowId);
    }
    if (ids.length === 0) {
      io.out('No open conversations.');
      return 0;
    }
    const counts = { moved: 0, current: 0, after_query: 0, unversioned: 0, not_moved: 0 };
    for (const id of ids) {
      let result: UpgradeResult;
      try {
        result = await upgradeConversation(api, id, timeoutS * 1000);
      } catch (error) {
        // Ended between the list and now: nothing to move.
        if (error instanceof ConversationEndedError || error instanceof ConversationNotFoundError) continue;
        result = { conversationId: id, kind: 'not_moved', from: '?', reason: error instanceof Error ? error.message : String(error) };
      }
      counts[result.kind]++;
      if (result.kind !== 'current') io.out(describeResult(result));
    }
    io.out(
      `${counts.moved} moved, ${counts.current} already on the current version, ${counts.after_query} moving after their query, ` +
        `${counts.unversioned} unversioned, ${counts.not_moved} not moved.`,
    );
    return counts.not_moved > 0 ? 1 : 0;
  });
}

export function describeResult(result: UpgradeResult): string {
  const id = result.conversationId;
  switch (result.kind) {
    case 'moved':
      return `moved ${id}: ${result.from} → ${result.to} (run ${result.runId})`;
    case 'current':
      return `${id}: already on the current version ${result.buildId}`;
    case 'after_query':
      return `${id}: a query runs on ${result.from}; the conversation moves to ${result.to} when it ends`;
    case 'unversioned':
      return `${id}: run by an unversioned worker; nothing to move`;
    case 'not_moved':
      return `${id}: stays on ${result.from}: ${result.reason}`;
  }
}

/** Moves one open conversation to its deployment's current version (see the file's comment). */
export async function upgradeConversation(api: ConversationClient, conversationId: string, timeoutMs: number): Promise<UpgradeResult> {
  const client = api.client;
  const namespace = client.options.namespace;
  const handle = client.workflow.getHandle(conversationId);
  const description = await api.describe(conversationId);
  if (description.status.name !== 'RUNNING') throw new ConversationEndedError(conversationId, description.status.name.toLowerCase());
  const version = description.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion;
  const from = version?.buildId;
  if (!from || !version.deploymentName) return { conversationId, kind: 'unversioned' };

  const { workerDeploymentInfo } = await client.workflowService.describeWorkerDeployment({ namespace, deploymentName: version.deploymentName });
  const to = workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId ?? undefined;
  if (!to) return { conversationId, kind: 'not_moved', from, reason: `Worker Deployment ${version.deploymentName} has no current version` };
  if (to === from) return { conversationId, kind: 'current', buildId: from };
  const notMoved = (reason: string): UpgradeResult => ({ conversationId, kind: 'not_moved', from, to, reason });

  // The update's task must come through the task queue (where the server says which version is current), not the
  // sticky queue of a worker holding the run (an input's task there does not say it; measured on 1.31, the update's
  // task said it even without this reset, which is for servers where it would not).
  await client.workflowService.resetStickyTaskQueue({ namespace, execution: { workflowId: conversationId, runId: description.runId } }).catch(() => undefined);
  let answer;
  try {
    answer = await client.withDeadline(Date.now() + timeoutMs, () => handle.executeUpdate(upgradeUpdate));
  } catch (error) {
    const timedOut = error instanceof WorkflowUpdateRPCTimeoutOrCancelledError || (isGrpcServiceError(error) && error.code === 4); /* DEADLINE_EXCEEDED */
    if (timedOut) return notMoved(`no worker of version ${from} answered within ${timeoutMs / 1000} s (is one running, or a machine that kept its bundle?)`);
    // A version from before `upgrade` existed has no handler: it moves at its next input.
    if (error instanceof WorkflowUpdateFailedError) {
      return notMoved(`its version does not take \`upgrade\` (${error.cause?.message ?? error.message}); it moves at its next input`);
    }
    if (error instanceof WorkflowNotFoundError) throw new ConversationEndedError(conversationId, 'ended');
    throw error;
  }
  if (answer.outcome === 'after_query') return { conversationId, kind: 'after_query', from, to };
  if (answer.outcome === 'not_told') return notMoved(await notToldReason(client, to));

  // Moving: the next run starts AUTO_UPGRADE, shown on the old version (then in transition to the current one)
  // until a worker of the current version completes its first task; then it is pinned there.
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const next = await handle.describe();
    const versioning = next.raw.workflowExecutionInfo?.versioningInfo;
    const buildId = versioning?.deploymentVersion?.buildId;
    const settled = buildId && !versioning?.versionTransition && (versioning?.behavior !== AUTO_UPGRADE || buildId === to);
    if (next.runId !== description.runId && settled) return { conversationId, kind: 'moved', from, to: buildId, runId: next.runId };
    if (Date.now() > deadline) {
      return notMoved(
        next.runId === description.runId ? 'it said it would move, but no new run started' : `its new run ${next.runId} waits for a worker of ${to}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Why the run's task did not say that a newer version is current. */
async function notToldReason(client: Client, current: string): Promise<string> {
  const { serverVersion } = await client.workflowService.getSystemInfo({}).catch(() => ({ serverVersion: undefined }));
  const [major, minor] = (serverVersion ?? '').split('.').map(Number);
  if (major === 1 && minor < 31) {
    return `the Temporal server (${serverVersion}) does not tell a run that a newer version is current (Upgrade on Continue-as-New needs server 1.31 or later, e.g. \`${cliCommand('server --postgres')}\`)`;
  }
  return `its workflow task did not say that ${current} is current (a worker holding it in its cache took the task from its sticky queue? restart that worker and try again)`;
}
