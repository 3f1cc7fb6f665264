/**
 * Integration-test harness: a real Temporal dev server (from global setup), real workers, the
 * real Anthropic SDK talking to the scripted model server, real files in a temp workspace.
 * Workflow code is bundled once per test file; each test gets its own task queue and worker.
 */
import { closeSafeInterceptors } from '../../infra/grpc-retry';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import Anthropic from '@anthropic-ai/sdk';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect, inject } from 'vitest';
import { type ActivityDeps, createActivities } from '../../activities';
import { settleLivePublishers } from '../../activities/live-publisher';
import type { TranscriptCache } from '../../activities/transcript-cache';
import { ConversationClient } from '../../client/api';
import type { ConversationConfigInput } from '../../common/config';
import type { ResultMessage } from '../../common/result';
import { type RecordedRequest, type ScriptedModelServer, type ScriptedModelServerOptions, startScriptedModelServer } from '../../testing/scripted-model-server';
import { createWorker } from '../../worker/worker';
import { setWorkerTemporalAddress } from '../../activities/sandbox-network';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

// Worker lifecycle chatter drowns test output; warnings and errors still show.
// DA_CORE_LOG='temporalio_sdk_core=debug,warn' shows sdk-core's own log (activations, commands, evictions).
try {
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    ...(process.env.DA_CORE_LOG ? { telemetryOptions: { logging: { filter: process.env.DA_CORE_LOG } } } : {}),
  });
} catch {
  /* already installed in this process */
}

/** The workflow bundle the global setup built once for the whole test run. */
export function workflowBundle(): { codePath: string } {
  return { codePath: inject('workflowBundlePath') };
}

/**
 * The environment that gives a worker process (`durable-agent worker`) the run's workflow bundle
 * (DURABLE_AGENT_WORKFLOW_BUNDLE) instead of bundling at its start, seconds of CPU each; nothing when
 * the environment encrypts payloads (that bundle carries the codec's converters, the run's does not).
 */
export function workerProcessBundle(env: NodeJS.ProcessEnv = process.env): { DURABLE_AGENT_WORKFLOW_BUNDLE?: string } {
  if (env.DURABLE_AGENT_ENCRYPTION_KEY || env.DURABLE_AGENT_ENCRYPTION_KEY_FILE) return {};
  return { DURABLE_AGENT_WORKFLOW_BUNDLE: inject('workflowBundlePath') };
}

/**
 * The environment of a CLI or worker process of this test that has no model key (`npm start`'s
 * scripted demo, `worker --scripted`): the test's server, task queue, state directory and
 * deployment, and the run's bundle.
 */
export function keylessProcessEnvironment(h: Pick<Harness, 'address' | 'taskQueue' | 'stateDir' | 'deploymentName'>): NodeJS.ProcessEnv {
  const { ANTHROPIC_API_KEY: _key, ANTHROPIC_BASE_URL: _url, ...rest } = process.env;
  return {
    ...rest,
    TEMPORAL_ADDRESS: h.address,
    TEMPORAL_NAMESPACE: 'default',
    DURABLE_AGENT_TASK_QUEUE: h.taskQueue,
    DURABLE_AGENT_STATE_DIR: h.stateDir,
    DURABLE_AGENT_DEPLOYMENT_NAME: h.deploymentName,
    ...workerProcessBundle(rest),
  };
}

/** Options of {@link createHarness} beyond the scripted model's. */
export interface HarnessOptions {
  /**
   * The test sends requests the API would refuse on purpose: `close()` then does not fail on the
   * model server's validator rejections (by default every such 400 fails the test).
   */
  expectRejections?: boolean;
  /** host:port of a Temporal server of the test's own (default: the shared one from global setup). */
  address?: string;
  /** Payload codecs and failure converter for the harness's client and every in-process worker (encryption tests). */
  dataConverter?: NonNullable<Parameters<typeof createWorker>[0]['dataConverter']>;
}

export interface Harness {
  address: string;
  client: Client;
  api: ConversationClient;
  model: ScriptedModelServer;
  taskQueue: string;
  /**
   * The Worker Deployment a versioned worker of this test joins (`DURABLE_AGENT_DEPLOYMENT_NAME`): the
   * test files share one server, and versions of one deployment compete for "current" (the next must
   * poll every task queue of the current one), so no test's worker joins another's deployment.
   */
  deploymentName: string;
  workspace: string;
  stateDir: string;
  /** A conversation config for this harness's workspace, with quick crash-recovery timeouts. */
  config(overrides?: Partial<ConversationConfigInput>): ConversationConfigInput;
  /** Starts an in-process worker on this task queue; stopped by `close()`. */
  startWorker(options?: WorkerOverrides): Promise<Worker>;
  /** Shuts one worker down (as a deploy or a crash-free restart would) and waits until it has stopped. */
  stopWorker(worker: Worker): Promise<void>;
  /**
   * Starts a worker in a separate process (for crash tests): `tsx worker/main.ts`, with extra
   * environment and modules loaded first (`--import`, e.g. test/helpers/hold-tool.cjs), or another
   * entry point (`script`). Unversioned unless the test's env says otherwise
   * (`DURABLE_AGENT_UNVERSIONED: ''`, with `DURABLE_AGENT_DEPLOYMENT_NAME: harness.deploymentName`): every test file shares one server, and a worker that makes its
   * version current in deployment `durable-agent` would compete with the other files' workers
   * (a version's task queues, at most 100, and the current version's must all be polled by the next).
   */
  spawnWorkerProcess(options?: { env?: Record<string, string>; imports?: string[]; script?: string }): Promise<ChildProcess>;
  /** Stops everything; then throws if the model server refused any request (unless `expectRejections`). */
  close(): Promise<void>;
}

/** What a test may change about a worker: the model client, activity deps, the bundle, the sinks' cache. */
export interface WorkerOverrides {
  anthropic?: Anthropic | null;
  activityDeps?: Partial<ActivityDeps>;
  workflowBundle?: NonNullable<Parameters<typeof createWorker>[0]['workflowBundle']>;
  /** The cache the workflows' sinks feed (default: the process's). */
  transcriptCache?: TranscriptCache;
  /**
   * Worker Versioning: the worker's deployment version (worker/versioning.ts). Default unversioned:
   * in-process workers of every test file share one server (see spawnWorkerProcess).
   */
  deployment?: Parameters<typeof createWorker>[0]['deployment'];
}

export async function createHarness(modelOptions: ScriptedModelServerOptions = {}, harnessOptions: HarnessOptions = {}): Promise<Harness> {
  const address = harnessOptions.address ?? inject('temporalAddress');
  const connection = await Connection.connect({ address, interceptors: closeSafeInterceptors() });
  const client = new Client({ connection, namespace: 'default', dataConverter: harnessOptions.dataConverter });
  const model = await startScriptedModelServer(modelOptions);
  const taskQueue = `test-${randomUUID()}`;
  const deploymentName = `test-deployment-${randomUUID()}`;
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-workspace-'));
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-state-'));
  const workers: Array<{ worker: Worker; running: Promise<void>; connection: NativeConnection }> = [];
  const processes: ChildProcess[] = [];

  return {
    address,
    client,
    api: new ConversationClient(client),
    model,
    taskQueue,
    deploymentName,
    workspace,
    stateDir,
    config: (overrides = {}) => ({
      cwd: workspace,
      model: 'claude-sonnet-4-6',
      modelHeartbeatTimeoutMs: 3_000,
      toolHeartbeatTimeoutMs: 3_000,
      modelInitialRetryIntervalMs: 100,
      modelMaximumAttempts: 4,
      idleTimeoutMs: 10 * 60 * 1000,
      // Tests of the loop run their tools without asking, as they did before a conversation without
      // `permissions` was checked by default (issue 17 §8): that default has its own test
      // (permission-boundary.test.ts). Deny rules, protected paths and the sandbox still hold.
      permissions: { mode: 'bypassPermissions' },
      // Issue 29: the person starting these trusts the workspace (its settings apply); trust.test.ts starts untrusted ones.
      trusted: true,
      ...overrides,
    }),
    async startWorker(options = {}) {
      const workerConnection = await NativeConnection.connect({ address });
      // As `durable-agent worker` does: the sandbox's network and WebFetch never reach this server.
      setWorkerTemporalAddress(address);
      const anthropic =
        options.anthropic === null ? undefined : (options.anthropic ?? new Anthropic({ apiKey: 'test-key', baseURL: model.url, maxRetries: 0 }));
      const worker = await createWorker({
        connection: workerConnection,
        namespace: 'default',
        taskQueue,
        dataConverter: harnessOptions.dataConverter,
        activities: createActivities({ anthropic, stateDir, temporalClient: client, ...options.activityDeps }),
        workflowBundle: options.workflowBundle ?? workflowBundle(),
        transcriptCache: options.transcriptCache,
        deployment: options.deployment,
        // DA_NO_CACHE=1: no workflow cache, so every task and query replays the whole history (finds replay
        // divergences). With no cache sdk-core also cancels a run's in-flight local activities when it
        // evicts it after a task, so a test whose local model call overlaps a child start can end
        // "Interrupted by user" under it: that is the knob, not the workflow.
        overrides: { shutdownGraceTime: '1 second', ...(process.env.DA_NO_CACHE ? { maxCachedWorkflows: 0 } : {}) },
      });
      const running = worker.run();
      workers.push({ worker, running, connection: workerConnection });
      return worker;
    },
    async stopWorker(worker) {
      const entry = workers.find((candidate) => candidate.worker === worker);
      if (!entry) return;
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await entry.running.catch(() => undefined);
      await entry.connection.close();
      workers.splice(workers.indexOf(entry), 1);
    },
    async spawnWorkerProcess(options = {}) {
      // `node --import tsx` (not the tsx CLI, which forks a second node): SIGKILL must hit the worker itself.
      const imports = (options.imports ?? []).flatMap((module) => ['--import', module]);
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        TEMPORAL_ADDRESS: address,
        TEMPORAL_NAMESPACE: 'default',
        DURABLE_AGENT_TASK_QUEUE: taskQueue,
        DURABLE_AGENT_STATE_DIR: stateDir,
        ANTHROPIC_BASE_URL: model.url,
        ANTHROPIC_API_KEY: 'test-key',
        DURABLE_AGENT_UNVERSIONED: '1',
        // A conversation whose worker process was SIGKILLed gets its next workflow task from the
        // normal queue after 2 s instead of the SDK's 10 s on the dead worker's sticky queue.
        DURABLE_AGENT_STICKY_QUEUE_TIMEOUT_MS: '2000',
        ...workerProcessBundle({ ...process.env, ...options.env }),
        ...options.env,
      };
      const child = spawn(process.execPath, ['--import', 'tsx', ...imports, options.script ?? path.join(REPO_ROOT, 'worker', 'main.ts')], {
        cwd: REPO_ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      processes.push(child);
      let output = '';
      child.stdout!.on('data', (chunk) => (output += chunk));
      child.stderr!.on('data', (chunk) => (output += chunk));
      // Ready when it says it polls.
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`worker process did not start:\n${output}`)), 90_000);
        const check = () => {
          if (output.includes('polling task queue')) {
            clearTimeout(timer);
            resolve();
          }
        };
        child.stdout!.on('data', check);
        child.on('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`worker process exited with ${code}:\n${output}`));
        });
      });
      // "polling" is logged before the first poll reaches the server: wait until the server sees a
      // poller, or a client that checks for one (the CLI's "no worker is polling" note) races it.
      await eventually(
        () => client.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue } }),
        (response) => (response.pollers ?? []).length > 0,
      );
      return child;
    },
    async close() {
      for (const child of processes) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      for (const { worker } of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
      await Promise.allSettled(workers.map(({ running }) => running));
      await settleLivePublishers();
      await Promise.allSettled(workers.map(({ connection: workerConnection }) => workerConnection.close()));
      await model.close();
      await connection.close();
      await rm(workspace, { recursive: true, force: true });
      await rm(stateDir, { recursive: true, force: true });
      // A request the real API would refuse is a bug even when the test's assertions passed.
      if (model.rejections.length > 0 && !harnessOptions.expectRejections) {
        const lines = model.rejections.map((rejection) => `  ${rejection.path} #${rejection.index}: ${rejection.message}`);
        throw new Error(
          `The scripted model server refused ${model.rejections.length} request(s) as the real API would (400 invalid_request_error):\n` +
            `${lines.join('\n')}\n` +
            'Fix the request, or pass { expectRejections: true } to createHarness if the test sends it on purpose.',
        );
      }
    },
  };
}

/** Waits until `predicate` holds for the value `probe` returns (polling; no timing assertions). */
export async function eventually<T>(probe: () => Promise<T>, predicate: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await probe();
    if (predicate(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)?.slice(0, 2000)}`);
}

/** Starts a conversation with `prompt` and waits for its first result. */
export async function runToResult(harness: Harness, prompt: string, overrides: Partial<ConversationConfigInput> = {}) {
  const started = await harness.api.start({ prompt, config: harness.config(overrides), taskQueue: harness.taskQueue });
  const result: ResultMessage = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
  return { ...started, result };
}

/** Every tool_use in a request's history is answered, exactly once and in order, by the next user turn. */
export function expectValidApiOrder(request: RecordedRequest): void {
  const messages = request.body.messages as Array<{ role: string; content: any }>;
  expect(messages[0].role).toBe('user');
  const answered: string[] = [];
  for (let index = 0; index < messages.length; index++) {
    if (index > 0) expect(messages[index].role).not.toBe(messages[index - 1].role);
    const message = messages[index];
    if (message.role === 'user' && Array.isArray(message.content)) {
      answered.push(...message.content.filter((block: any) => block.type === 'tool_result').map((block: any) => block.tool_use_id));
    }
    if (message.role !== 'assistant' || !Array.isArray(message.content)) continue;
    const toolUseIds = message.content.filter((block: any) => block.type === 'tool_use').map((block: any) => block.id);
    if (toolUseIds.length === 0) continue;
    const next = messages[index + 1];
    expect(next, `tool_use ${toolUseIds.join(', ')} has no following user turn`).toBeDefined();
    const resultIds = next.content.filter((block: any) => block.type === 'tool_result').map((block: any) => block.tool_use_id);
    expect(resultIds).toEqual(toolUseIds);
  }
  expect(new Set(answered).size).toBe(answered.length); // no tool_use answered twice
}

/**
 * The activity type of a local activity's history event (its `core_local_activity` marker, whose
 * `data` detail is JSON naming it); undefined for any other event.
 */
export function localActivityType(event: {
  markerRecordedEventAttributes?: {
    markerName?: string | null;
    details?: Record<string, { payloads?: Array<{ data?: Uint8Array | null }> | null }> | null;
  } | null;
}): string | undefined {
  const marker = event.markerRecordedEventAttributes;
  if (marker?.markerName !== 'core_local_activity') return undefined;
  const data = marker.details?.data?.payloads?.[0]?.data;
  return (JSON.parse(Buffer.from(data ?? []).toString('utf8')) as { activity_type?: string }).activity_type;
}
