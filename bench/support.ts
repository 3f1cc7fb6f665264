/**
 * What the benchmarks share: the real stack (an ephemeral Temporal dev server, one in-process
 * worker, the real Anthropic SDK against the scripted model server on loopback), a conversation's
 * history across all of its continue-as-new runs (bytes, events, task timings), and the results
 * files (`bench/results/<name>.md`, each section with date, machine, commit and exact command).
 */
import Anthropic from '@anthropic-ai/sdk';
import { Client, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, bundleWorkflowCode } from '@temporalio/worker';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createActivities } from '../activities';
import { ConversationClient } from '../client/api';
import { readLive } from '../client/live';
import type { ConversationConfigInput } from '../common/config';
import type { ResultMessage } from '../common/result';
import { startDevServer } from '../infra/dev-server';
import { type Responder, type ScriptedModelServer, startScriptedModelServer } from '../testing/scripted-model-server';
import { WORKFLOWS_PATH, createWorker } from '../worker/worker';
import { readFilesPrompt, readFilesResponder } from './read-files';

/**
 * Benchmarks run unattended with tools unchecked by a person, as before a conversation without a
 * `permissions` config was checked (issue 17 §8); the gate still decides every call on its facts.
 */
export const BENCH_PERMISSIONS = { mode: 'bypassPermissions' as const };

const REPO_ROOT = path.resolve(__dirname, '..');
const EventType = temporal.api.enums.v1.EventType;

// ---------------------------------------------------------------------------------------------
// The stack
// ---------------------------------------------------------------------------------------------

export interface BenchStack {
  client: Client;
  api: ConversationClient;
  /** The in-process model server; undefined with `modelProcess` (it runs in `processes.model`). */
  model: ScriptedModelServer | undefined;
  /** Pids of the processes around the worker (CPU accounting: bench/cpu.ts). */
  processes: { server: number | undefined; model: number | undefined };
  /**
   * When each model request left the worker (`performance.now()`, through the Anthropic client's
   * fetch): the loop's own time, free of the query's start and close, and of the workflow clock.
   */
  modelRequestTimes: number[];
  taskQueue: string;
  /** Temp directory the conversations use as `cwd`; holds `files`. */
  workspace: string;
}

export interface BenchStackOptions {
  respond: Responder;
  /** Files created in the workspace before the worker starts: relative path → content. */
  files?: Record<string, string>;
  /**
   * Run the scripted model server in a child process (bench/model-process.ts, which answers the
   * read-files loop; `respond` is then unused), so the worker's CPU is the engine's alone.
   */
  modelProcess?: boolean;
}

/**
 * Starts the dev server, the scripted model server and a worker; runs `body` while the worker
 * polls; then stops and removes everything (also when `body` throws).
 */
export async function withBenchStack<T>(options: BenchStackOptions, body: (stack: BenchStack) => Promise<T>): Promise<T> {
  installQuietRuntime();
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    const server = await startDevServer({ ephemeral: true, headless: true, log: () => undefined });
    cleanups.push(() => server.stop());
    const model = options.modelProcess ? undefined : await startScriptedModelServer({ respond: options.respond });
    if (model) cleanups.push(() => model.close());
    const modelChild = options.modelProcess ? await startModelProcess() : undefined;
    if (modelChild) cleanups.push(() => modelChild.stop());
    const modelUrl = model?.url ?? modelChild!.url;
    const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-bench-'));
    const stateDir = `${workspace}-state`;
    cleanups.push(() => rm(workspace, { recursive: true, force: true }));
    cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
    for (const [name, content] of Object.entries(options.files ?? {})) await writeFile(path.join(workspace, name), content);

    // One page of a large history can exceed gRPC's default 4 MB receive limit.
    const connection = await Connection.connect({ address: server.address, channelArgs: { 'grpc.max_receive_message_length': 256 * 1024 * 1024 } });
    cleanups.push(() => connection.close());
    const client = new Client({ connection, namespace: 'default' });
    const workerConnection = await NativeConnection.connect({ address: server.address });
    cleanups.push(() => workerConnection.close());
    const taskQueue = `bench-${randomUUID()}`;
    const modelRequestTimes: number[] = [];
    const timedFetch: typeof fetch = (input, init) => {
      modelRequestTimes.push(performance.now());
      return fetch(input, init);
    };
    const worker = await createWorker({
      connection: workerConnection,
      namespace: 'default',
      taskQueue,
      workflowBundle: await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') }),
      activities: createActivities({
        anthropic: new Anthropic({ apiKey: 'bench', baseURL: modelUrl, maxRetries: 0, fetch: timedFetch }),
        stateDir,
        temporalClient: client,
      }),
    });
    const processes = { server: server.process.pid, model: modelChild?.process.pid };
    return await worker.runUntil(() => body({ client, api: new ConversationClient(client), model, processes, taskQueue, workspace, modelRequestTimes }));
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    if (largePayloadWarnings > 0) progress(`the SDK warned ${largePayloadWarnings} times of a payload over 512 KB (${LARGE_PAYLOAD_WARNING})`);
  }
}

/** bench/model-process.ts in a child process; resolves once it listens. */
async function startModelProcess(): Promise<{ url: string; process: ChildProcess; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'model-process.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (\S+)/.exec(output);
      if (match) resolve(match[1]);
    });
    void exited.then(() => reject(new Error(`the model process exited before listening: ${output}`)));
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return { url, process: child, stop };
}

/** The SDK core's warning for each payload over 512 KB: one line per model call of a long query. */
const LARGE_PAYLOAD_WARNING = 'TMPRL1103';
let largePayloadWarnings = 0;

/** The SDK's warnings of a payload over 512 KB so far in this process (counted, not printed). */
export function largePayloadWarningCount(): number {
  return largePayloadWarnings;
}

/**
 * Warnings and errors (the SDK core's too) go to stderr, so stdout carries only the report; the
 * large-payload warning is counted instead of printed, and the count reported at the end.
 */
function installQuietRuntime(): void {
  const logger = new DefaultLogger('WARN', (entry) => {
    if (entry.message.includes(LARGE_PAYLOAD_WARNING)) {
      largePayloadWarnings++;
      return;
    }
    process.stderr.write(`[${entry.level}] ${entry.message}${entry.meta ? ` ${JSON.stringify(entry.meta)}` : ''}\n`);
  });
  try {
    Runtime.install({ logger, telemetryOptions: { logging: { forward: {} } } });
  } catch {
    /* already installed in this process */
  }
}

async function drain(items: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of items) void _;
}

/** One timed query of a one-shot conversation, waited for until the workflow has closed. */
export interface TimedQuery {
  conversationId: string;
  firstRunId: string;
  result: ResultMessage;
  /** Client side: from `start` until the conversation (one-shot) has closed. */
  wallMs: number;
  /** Worker side: from the query's first model request to its last (`BenchStack.modelRequestTimes`). */
  loopMs: number;
  /** Model requests the query made. */
  modelRequests: number;
}

/**
 * Starts a one-shot conversation and waits for it to close (the long-poll on its result, so
 * nothing polls the worker with queries while it is being measured).
 */
export async function runOneShotQuery(stack: BenchStack, prompt: string, config: Omit<ConversationConfigInput, 'cwd' | 'oneShot'> = {}): Promise<TimedQuery> {
  const startedAt = performance.now();
  const firstRequest = stack.modelRequestTimes.length;
  const { conversationId, handle } = await stack.api.start({
    prompt,
    taskQueue: stack.taskQueue,
    config: { cwd: stack.workspace, oneShot: true, permissions: BENCH_PERMISSIONS, ...config },
  });
  // BENCH_READER=1: a client follows the live channel meanwhile (its long-polls are history too).
  const reading = process.env.BENCH_READER === '1' ? drain(readLive(stack.client, conversationId)) : Promise.resolve();
  const summary = await stack.api.summary(conversationId);
  await reading;
  const wallMs = performance.now() - startedAt;
  if (!summary.lastResult) throw new Error(`${conversationId} ended (${summary.endedBy}) without a result`);
  const requests = stack.modelRequestTimes.slice(firstRequest);
  const loopMs = requests.length > 1 ? requests[requests.length - 1] - requests[0] : 0;
  return { conversationId, firstRunId: handle.firstExecutionRunId, result: summary.lastResult, wallMs, loopMs, modelRequests: requests.length };
}

/**
 * A query loop of `n` iterations: in iteration i the scripted model asks to `Read` `fileName(i)`;
 * after `n` tool results it answers with text. The turn is decided from the request (the prompt
 * names the files, the tool results say how many are done: bench/read-files.ts), so a retried
 * model call gets the same answer, and the model server may run in its own process.
 */
export function readFilesLoop(fileName: (index: number) => string): {
  respond: Responder;
  run: (stack: BenchStack, n: number) => Promise<TimedQuery>;
} {
  return {
    respond: readFilesResponder,
    // Limits well above the query: neither the turn limit nor auto-compaction may end it early.
    // A 1M-window model (the scripted server, like the API, refuses input + max_tokens over the
    // model's window).
    run: (stack, n) => runOneShotQuery(stack, readFilesPrompt(fileName, n), { maxTurns: n + 10, model: 'claude-sonnet-5' }),
  };
}

// ---------------------------------------------------------------------------------------------
// History across continue-as-new runs
// ---------------------------------------------------------------------------------------------

export interface HistorySummary {
  runs: number;
  /** Sum over runs of the protobuf-encoded size of `temporal.api.history.v1.History`. */
  bytes: number;
  events: number;
  /** Events per type, keyed by enum name (EVENT_TYPE_WORKFLOW_TASK_COMPLETED, ...). */
  eventCounts: Record<string, number>;
  /** Protobuf-encoded bytes of the events of each type, keyed like `eventCounts`. */
  eventBytes: Record<string, number>;
  /** Local activities (their `core_local_activity` markers) per activity type. */
  localActivities: Record<string, number>;
  /** The largest single event (its encoded bytes), the one nearest Temporal's 2 MB payload limit. */
  largestEvent: { type: string; bytes: number };
  /** Each run of the continue-as-new chain, in order. */
  perRun: RunSummary[];
  /** Milliseconds between the phases of each task, from event timestamps, in history order. */
  gaps: {
    workflowTaskScheduleToStart: number[];
    workflowTaskStartToComplete: number[];
    /** Keyed by activity type (callModel, runTool, ...). */
    activityScheduleToStart: Record<string, number[]>;
    activityStartToClose: Record<string, number[]>;
    /** Inside the activity function, from the `durationMs` of its result (callModel), keyed by type. */
    activityInside: Record<string, number[]>;
  };
}

/** One run of a continue-as-new chain. */
export interface RunSummary {
  runId: string;
  /** Protobuf-encoded size of the run's `History`. */
  bytes: number;
  events: number;
  /** ActivityTaskScheduled events per activity type (callModel, runTool, compactConversation, ...). */
  activities: Record<string, number>;
  /** Local activities (their `core_local_activity` markers) per activity type. */
  localActivities: Record<string, number>;
  largestEvent: { type: string; bytes: number };
}

/**
 * Walks a workflow's runs from `firstRunId` along its continue-as-new chain (each run's last event
 * names the next run) and summarizes each run's history as it goes, holding one at a time.
 */
export async function summarizeHistory(client: Client, workflowId: string, firstRunId: string): Promise<HistorySummary> {
  const summary: HistorySummary = {
    runs: 0,
    bytes: 0,
    events: 0,
    eventCounts: {},
    eventBytes: {},
    largestEvent: { type: 'none', bytes: 0 },
    perRun: [],
    localActivities: {},
    gaps: {
      workflowTaskScheduleToStart: [],
      workflowTaskStartToComplete: [],
      activityScheduleToStart: {},
      activityStartToClose: {},
      activityInside: {},
    },
  };
  for (let runId: string | undefined = firstRunId; runId;) {
    const history: temporal.api.history.v1.IHistory = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events: HistoryEvent[] = history.events ?? [];
    const bytes = temporal.api.history.v1.History.encode(history).finish().length;
    summary.runs++;
    summary.bytes += bytes;
    summary.events += events.length;
    summary.perRun.push(runSummary(runId, bytes, events));
    addTaskGaps(events, summary);
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId || undefined;
  }
  return summary;
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

function runSummary(runId: string, bytes: number, events: HistoryEvent[]): RunSummary {
  const run: RunSummary = { runId, bytes, events: events.length, activities: {}, localActivities: {}, largestEvent: { type: 'none', bytes: 0 } };
  for (const event of events) {
    const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (type) run.activities[type] = (run.activities[type] ?? 0) + 1;
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === LOCAL_ACTIVITY_MARKER) {
      const localType = localActivityType(marker.details?.data?.payloads?.[0]?.data);
      run.localActivities[localType] = (run.localActivities[localType] ?? 0) + 1;
    }
    const eventBytes = temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
    if (eventBytes > run.largestEvent.bytes) run.largestEvent = { type: EventType[event.eventType ?? 0] ?? String(event.eventType), bytes: eventBytes };
  }
  return run;
}

function addTaskGaps(events: HistoryEvent[], summary: HistorySummary): void {
  const byId = new Map<number, HistoryEvent>();
  const time = (event: HistoryEvent | undefined) => (event ? tsToMs(event.eventTime) : NaN);
  const eventById = (id: unknown) => byId.get(Number(id));
  const push = (record: Record<string, number[]>, key: string, value: number) => (record[key] ??= []).push(value);
  const { gaps } = summary;
  for (const event of events) {
    byId.set(Number(event.eventId), event);
    const name = EventType[event.eventType ?? 0] ?? String(event.eventType);
    summary.eventCounts[name] = (summary.eventCounts[name] ?? 0) + 1;
    const bytes = temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
    summary.eventBytes[name] = (summary.eventBytes[name] ?? 0) + bytes;
    if (bytes > summary.largestEvent.bytes) summary.largestEvent = { type: name, bytes };

    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === LOCAL_ACTIVITY_MARKER) {
      const type = localActivityType(marker.details?.data?.payloads?.[0]?.data);
      summary.localActivities[type] = (summary.localActivities[type] ?? 0) + 1;
    }

    const workflowTaskStarted = event.workflowTaskStartedEventAttributes;
    if (workflowTaskStarted) gaps.workflowTaskScheduleToStart.push(time(event) - time(eventById(workflowTaskStarted.scheduledEventId)));
    const workflowTaskCompleted = event.workflowTaskCompletedEventAttributes;
    if (workflowTaskCompleted) gaps.workflowTaskStartToComplete.push(time(event) - time(eventById(workflowTaskCompleted.startedEventId)));

    const activityStarted = event.activityTaskStartedEventAttributes;
    if (activityStarted) {
      const scheduled = eventById(activityStarted.scheduledEventId);
      push(gaps.activityScheduleToStart, activityName(scheduled), time(event) - time(scheduled));
    }
    const activityClosed =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskTimedOutEventAttributes ??
      event.activityTaskCanceledEventAttributes;
    if (activityClosed && Number(activityClosed.startedEventId) > 0) {
      push(gaps.activityStartToClose, activityName(eventById(activityClosed.scheduledEventId)), time(event) - time(eventById(activityClosed.startedEventId)));
    }
    const inside = resultDurationMs(event.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data);
    if (inside !== undefined) push(gaps.activityInside, activityName(eventById(event.activityTaskCompletedEventAttributes?.scheduledEventId)), inside);
  }
}

/** The marker the SDK records for each local activity; its `data` detail is JSON naming the type. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

function localActivityType(data: Uint8Array | null | undefined): string {
  try {
    return (JSON.parse(Buffer.from(data ?? []).toString('utf8')) as { activity_type?: string }).activity_type ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** The `durationMs` of a JSON activity result (callModel's, compactConversation's), if it has one. */
function resultDurationMs(data: Uint8Array | null | undefined): number | undefined {
  if (!data) return undefined;
  try {
    const value = (JSON.parse(Buffer.from(data).toString('utf8')) as { durationMs?: unknown }).durationMs;
    return typeof value === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
}

function activityName(scheduled: HistoryEvent | undefined): string {
  return scheduled?.activityTaskScheduledEventAttributes?.activityType?.name ?? 'unknown';
}

/** Occurrences of an event type in a summary. */
function eventCount(summary: HistorySummary, type: temporal.api.enums.v1.EventType): number {
  return summary.eventCounts[EventType[type]] ?? 0;
}

/** Local activities of all types in a summary. */
function localActivityCount(summary: HistorySummary): number {
  return sum(Object.values(summary.localActivities));
}

/** Column headers of {@link perIterationCounts}. */
export const PER_ITERATION_HEADERS = [
  'events / iteration',
  'workflow tasks / iteration',
  'activities / iteration',
  'local activities / iteration',
  'signals / iteration',
];

/** What {@link perIterationCounts} counts, for a table's footnote. */
export const PER_ITERATION_LEGEND =
  'Workflow tasks = WorkflowTaskCompleted events; activities = ActivityTaskScheduled; local activities = their ' +
  '`core_local_activity` markers; signals = WorkflowExecutionSignaled.';

/** Events, workflow tasks, activities, local activities and signals per iteration (2 decimals). */
export function perIterationCounts(summary: HistorySummary, iterations: number): string[] {
  return [
    summary.events,
    eventCount(summary, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
    eventCount(summary, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
    localActivityCount(summary),
    eventCount(summary, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
  ].map((count) => (count / iterations).toFixed(2));
}

// ---------------------------------------------------------------------------------------------
// Figures and results files
// ---------------------------------------------------------------------------------------------

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The `p`th percentile (0–100), nearest rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/** `1234567` → `1.23 MB` (decimal units, as Temporal's limits are stated). */
export function formatBytes(bytes: number): string {
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(2)} MB`;
  if (bytes >= 1e3) return `${(bytes / 1e3).toFixed(1)} kB`;
  return `${bytes} B`;
}

export function markdownTable(header: string[], rows: Array<Array<string | number>>): string {
  return [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}

/** Positional arguments, and `--note TEXT` (a remark written under the section's heading). */
export function benchArgs(): { positionals: string[]; note?: string; modelProcess: boolean } {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    options: { note: { type: 'string' }, 'model-process': { type: 'boolean' } },
    allowPositionals: true,
  });
  return { positionals, note: values.note, modelProcess: values['model-process'] ?? false };
}

/** How this process was started, as someone would retype it. */
function commandLine(): string {
  const args = process.argv.slice(2).map((arg) => (/^[\w./:=@+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`));
  const file = path.relative(REPO_ROOT, process.argv[1]);
  // `npm run NAME` sets both; `npx tsx FILE` sets them too, to npx's own values.
  const { npm_lifecycle_event: script, npm_lifecycle_script: scriptCommand } = process.env;
  if (script && scriptCommand?.includes(file)) return `npm run ${script}${args.length ? ` -- ${args.join(' ')}` : ''}`;
  return ['npx tsx', file, ...args].join(' ');
}

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
}

function commit(): string {
  try {
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain') ? '+dirty' : ''}`;
  } catch {
    return 'unknown';
  }
}

function cpuCount(): number {
  try {
    return Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
  } catch {
    return os.availableParallelism();
  }
}

/** Date, machine, commit and command: captured when the benchmark starts. */
export function runContext(): string[] {
  const load = os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
  return [
    `- machine: nproc ${cpuCount()} (${os.cpus()[0]?.model.trim() ?? 'unknown cpu'}), load average at start ${load}, node ${process.version}, ${os.platform()} ${os.release()}`,
    `- commit: ${commit()}`,
    `- command: \`${commandLine()}\``,
  ];
}

/** Prints a results section and appends it to `bench/results/<name>.md`. */
export async function publishResults(name: string, section: { title: string; context: string[]; note?: string; body: string[] }): Promise<void> {
  const report = [
    `## ${new Date().toISOString()} — ${section.title}`,
    '',
    ...(section.note ? [`**${section.note}**`, ''] : []),
    ...section.context,
    '',
    ...section.body,
    '',
  ].join('\n');
  console.log(report);
  const resultsDir = path.join(__dirname, 'results');
  await mkdir(resultsDir, { recursive: true });
  await appendFile(path.join(resultsDir, `${name}.md`), `${report}\n`);
}

/** Runs a benchmark's main and exits non-zero with the error on failure. */
export function runBench(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}

/** Progress on stderr (stdout carries the report). */
export function progress(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}
