/**
 * Model call runs: the streaming part of a model call (one Messages API stream, its live deltas,
 * its streamed tool_use reports) as an object that is not tied to the activity that started it.
 * The activity-dependent parts — heartbeats, the cancellation signal, the logger, the attempt number
 * reported — go through a swappable `RunBinding`, so a call started by the `callModelLocal` local
 * activity can be handed over to a regular `callModel` activity on the same process
 * (docs/architecture.md, "Loop overhead"):
 *
 *   local phase   bound to the local activity: no heartbeats (local activities have none), its
 *                 cancellation aborts the stream;
 *   handed over   detached, waiting in this process's registry under a fresh key for the attach
 *                 activity (the worker-specific handoff task queue); aborted and dropped if nobody
 *                 attaches in time (`orphanAfterMs`) or when the handoff queue's worker stops;
 *   attached      bound to the regular activity: heartbeats with the usual details, its
 *                 cancellation aborts the stream.
 *
 * The run never throws: its `outcome` is the final message or the error, and the activity that
 * owns it at the end turns that into a result or a failure.
 */
import type { CallFacts } from '../common/permission-facts';
import { gatherCallFacts } from './permission-facts/gather';
import Anthropic from '@anthropic-ai/sdk';
import type { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { CallModelInput, SystemPromptBlock } from '../common/activity-types';
import type { ApiMessage } from '../common/messages';
import { concurrencyNeedsFacts, isToolUseStartableEarly } from '../common/tool-specs';
import { type LivePublisher, livePublisher } from './live-publisher';
import { requestTools } from './tool-definitions';
import type { ModelInfo } from '../common/models';
import { type RequestOptions, buildModelRequest } from './request-params';

/**
 * A streamed tool_use is reported (a signal: a workflow task and four history events) only when
 * the stream is still going this long after the block completed. A tool the model names at the
 * end of its answer starts as soon as the call returns anyway; early start pays off only while
 * the model keeps streaming (seed §2.4), so quick answers cost no signals at all.
 */
export const STREAMED_TOOL_REPORT_DELAY_MS = 50;

/**
 * No heartbeat before a call has run this long (or half its heartbeat timeout, if shorter). The
 * SDK sends the first heartbeat at once — an RPC and a mutable-state write on the server per
 * model call — and the worker holds the call's completion until that RPC has returned: 2–4 ms of
 * every loop iteration (bench/results/iteration-overhead.md). Quick calls need none; a long
 * stream heartbeats from here on (throttled by the worker), so a dead worker and a cancellation
 * are still noticed within about a second more than before.
 */
export const FIRST_HEARTBEAT_AFTER_MS = 1_000;

/** What heartbeats go to: an activity Context, or a run's current binding. */
export interface HeartbeatSink {
  heartbeatTimeoutMs?: number;
  heartbeat(details: unknown): void;
}

/** Heartbeat period while waiting on something other than the stream (see heartbeatingWhile). */
function waitHeartbeatPeriodMs(timeoutMs: number): number {
  return Math.max(100, Math.min(FIRST_HEARTBEAT_AFTER_MS, timeoutMs / 2));
}

/**
 * Awaits `work`, heartbeating every second (or half the heartbeat timeout) while it is pending —
 * none when it is quick, none when `sink()` has no heartbeat timeout. `sink` is read at every
 * tick: a run's binding may change while it waits.
 */
export async function heartbeatingWhileBound<T>(sink: () => HeartbeatSink, work: Promise<T>, details: () => unknown): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    const current = sink();
    if (current.heartbeatTimeoutMs) current.heartbeat(details());
    timer = setTimeout(tick, waitHeartbeatPeriodMs(sink().heartbeatTimeoutMs ?? Infinity));
  };
  const first = sink().heartbeatTimeoutMs;
  timer = setTimeout(tick, waitHeartbeatPeriodMs(first ?? Infinity));
  try {
    return await work;
  } finally {
    clearTimeout(timer);
  }
}

/** Who a run reports to right now. */
export interface RunBinding extends HeartbeatSink {
  /** The attempt number in live items and streamed tool_use reports (and the result). */
  attempt: number;
  /** Consecutive overloaded answers before this attempt (heartbeat details). */
  overloadedBefore: number;
  /** No stream-progress heartbeat before this time (ms since epoch); Infinity: none. */
  firstHeartbeatAt: number;
  /** Aborting it aborts the HTTP stream; absent while handed over. */
  cancellationSignal?: AbortSignal;
  /**
   * Send nothing to the workflow yet (the local phase): a signal sent while a local activity holds
   * the workflow task is applied only after that task — after the message, if the call ends in
   * the local phase. Live deltas and streamed tool_use reports wait for a binding without it (the
   * handoff); a call that ends first sends none: its message shows it all.
   */
  holdSignals?: boolean;
  log: { warn(message: string, meta?: Record<string, unknown>): void };
}

/** A binding with no activity behind it: no heartbeats, no cancellation (a handed-over run waiting for its attach). */
export function detachedBinding(attempt: number, log: RunBinding['log']): RunBinding {
  // Holds its signals too: a run nobody attaches to (its attach cancelled, its queue gone) must not
  // keep writing deltas and reports into the conversation; the attaching activity releases them.
  return { attempt, overloadedBefore: 0, firstHeartbeatAt: Infinity, heartbeat: () => undefined, holdSignals: true, log };
}

/** How a run ended. `cancelled`: its stream was aborted (the bound activity's cancellation, or the registry's). */
export type RunOutcome = { type: 'message'; message: Anthropic.Message } | { type: 'failed'; error: unknown; cancelled: boolean };

export interface ToolUseReporter {
  (
    target: NonNullable<CallModelInput['streamToolUses']>,
    report: { attempt: number; index: number; block: { type: 'tool_use'; id: string; name: string; input: unknown }; facts?: CallFacts },
  ): Promise<void>;
}

/** The request a CallModelInput refers to, as the API takes it. */
export interface MaterializedRequest {
  system: SystemPromptBlock[];
  messages: ApiMessage[];
  toolNames: string[];
  structuredOutputSchema?: Record<string, unknown>;
  /** Issue 22: the MCP servers' tools offered. */
  mcpTools?: import('../common/mcp-context').McpToolDefinition[];
  /** Issue 33: the server-side web search tool offered. */
  webSearch?: import('../common/web-search').WebSearchToolDefinition;
  /** The model as the Models API describes it (limits, capabilities). */
  model: ModelInfo;
  /** Thinking, effort, metadata (activities/request-params.ts). */
  options: RequestOptions;
}

export interface StartModelCallRunOptions {
  anthropic: Anthropic;
  input: CallModelInput;
  request: MaterializedRequest;
  binding: RunBinding;
  /** When the call started (durationMs of the result counts from here). */
  startedAt: number;
  reportToolUse?: ToolUseReporter;
  temporalClient?: Client;
}

/** Counters of this process's runs, for tests and diagnostics. */
export interface ModelCallRunStats {
  /** Runs whose stream has not ended yet (every model call in this process, local, handed over or regular). */
  streaming: number;
  /** Handed-over runs waiting for their attach activity. */
  waiting: number;
  started: number;
  handedOver: number;
  attached: number;
  /** Handed-over runs aborted and dropped because nobody attached in time. */
  orphaned: number;
  /** Handed-over runs aborted and dropped because their handoff queue's worker stopped. */
  abandoned: number;
}

const counters = { started: 0, handedOver: 0, attached: 0, orphaned: 0, abandoned: 0 };
const streaming = new Set<ModelCallRun>();

/** One model call's stream (see the module comment). */
export class ModelCallRun {
  readonly startedAt: number;
  /** Resolves once the stream has ended and its reports and live deltas are flushed; never rejects. */
  readonly outcome: Promise<RunOutcome>;
  private binding: RunBinding;
  private readonly controller = new AbortController();
  private unlink: () => void = () => undefined;
  private done = false;
  private call: { requestId: string; attempt: number; fallback: number };
  private live: LivePublisher | undefined;
  private releaseSignals: () => void = () => undefined;
  /** Resolves when the run may signal the workflow (a binding without `holdSignals`). */
  private readonly signalsReleased: Promise<void>;
  /** Resolves at the first text or thinking delta: words a reader would see have begun to arrive. */
  readonly firstDelta: Promise<void>;
  private markFirstDelta: () => void = () => undefined;

  constructor(private readonly options: StartModelCallRunOptions) {
    this.startedAt = options.startedAt;
    this.binding = options.binding;
    this.signalsReleased = new Promise<void>((resolve) => (this.releaseSignals = resolve));
    this.firstDelta = new Promise<void>((resolve) => (this.markFirstDelta = resolve));
    if (!options.binding.holdSignals) this.releaseSignals();
    this.call = this.callFor(options.binding);
    this.link(options.binding);
    counters.started++;
    streaming.add(this);
    this.outcome = this.stream().finally(() => {
      this.done = true;
      this.unlink();
      streaming.delete(this);
    });
  }

  /** Reports to `binding` from now on: its heartbeats, its attempt, its cancellation. */
  bind(binding: RunBinding): void {
    this.unlink();
    this.binding = binding;
    this.call = this.callFor(binding);
    if (!this.done) this.link(binding);
    if (!binding.holdSignals) {
      this.live?.release();
      this.releaseSignals();
    }
  }

  /** Aborts the HTTP stream (the outcome becomes a cancellation). */
  abort(reason?: unknown): void {
    this.controller.abort(reason);
  }

  private callFor(binding: RunBinding) {
    const stream = this.options.input.stream;
    return { requestId: stream?.requestId ?? '', attempt: binding.attempt, fallback: stream?.fallback ?? 0 };
  }

  private link(binding: RunBinding): void {
    const signal = binding.cancellationSignal;
    if (!signal) return;
    if (signal.aborted) {
      this.controller.abort(signal.reason);
      return;
    }
    const onAbort = () => this.controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    this.unlink = () => {
      signal.removeEventListener('abort', onAbort);
      this.unlink = () => undefined;
    };
  }

  private async stream(): Promise<RunOutcome> {
    const { anthropic, input, request, reportToolUse, temporalClient } = this.options;
    // Reports go out one at a time, in stream order: the workflow starts a safe tool early only
    // when no unsafe call precedes it, so it must never see a later block before an earlier one.
    // After a failed report nothing more is reported (the workflow runs those tools after the call).
    let reports: Promise<boolean> = Promise.resolve(true);
    let endStream: () => void = () => {};
    const streamEnded = new Promise<void>((resolve) => (endStream = resolve));
    let ended = false;
    /** Waits until `at` (ms since epoch) unless the stream ends first; true if it is still going. */
    const stillStreamingAt = async (at: number): Promise<boolean> => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([streamEnded, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, at - Date.now()))))]);
      clearTimeout(timer);
      return !ended;
    };
    let live: LivePublisher | undefined;
    try {
      live = livePublisher(temporalClient, input.stream);
      if (live && this.binding.holdSignals) live.hold();
      this.live = live;
      const { params, betas } = buildModelRequest(
        input,
        {
          system: request.system,
          messages: request.messages,
          tools: requestTools(request),
        },
        request.model,
        request.options,
      );
      const stream = anthropic.messages.stream(params, {
        signal: this.controller.signal,
        ...(betas.length ? { headers: { 'anthropic-beta': betas.join(',') } } : {}),
      });
      let blocks = 0;
      let outputChars = 0;
      stream.on('streamEvent', (event) => {
        if (event.type === 'content_block_delta') {
          const delta = event.delta;
          outputChars += delta.type === 'text_delta' ? delta.text.length : delta.type === 'input_json_delta' ? delta.partial_json.length : 0;
          if (delta.type === 'text_delta') live?.model({ type: 'text_delta', call: this.call, index: event.index, text: delta.text });
          else if (delta.type === 'thinking_delta') live?.model({ type: 'thinking_delta', call: this.call, index: event.index, thinking: delta.thinking });
          if (delta.type === 'text_delta' || delta.type === 'thinking_delta') this.markFirstDelta();
        } else if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
          live?.model({ type: 'tool_use_start', call: this.call, index: event.index, id: event.content_block.id, name: event.content_block.name });
        }
        // Heartbeats are throttled by the SDK; each carries progress for the Temporal UI.
        const binding = this.binding;
        if (Date.now() >= binding.firstHeartbeatAt) binding.heartbeat({ blocks, outputChars, overloaded: binding.overloadedBefore });
      });
      // Only calls the workflow may start early are reported: concurrency-safe ones before the
      // first unsafe one (seed §2.4). Anything else would only add signals to the history.
      let sawUnsafe = false;
      stream.on('contentBlock', (block) => {
        blocks++;
        if (block.type !== 'tool_use' || sawUnsafe) return;
        // Issue 29: a Bash call is judged on its parsed command's facts, gathered below before it is
        // reported; where facts cannot be gathered here (tools run on another host), it is unsafe.
        const judgedOnFacts = concurrencyNeedsFacts(block.name);
        if (judgedOnFacts ? !input.streamToolUses?.permissionFacts : !isToolUseStartableEarly(block)) {
          sawUnsafe = true;
          return;
        }
        if (input.streamToolUses && reportToolUse) {
          const target = input.streamToolUses;
          const report = {
            attempt: this.binding.attempt,
            index: blocks - 1,
            block: { type: 'tool_use' as const, id: block.id, name: block.name, input: block.input },
          };
          const reportAt = Date.now() + STREAMED_TOOL_REPORT_DELAY_MS;
          reports = reports.then(async (reporting) => {
            if (!reporting || !(await stillStreamingAt(reportAt))) return false;
            // Held in the local phase: reported after a handoff, if the stream is still going then.
            await Promise.race([this.signalsReleased, streamEnded]);
            if (ended) return false;
            try {
              const facts = target.permissionFacts
                ? await gatherCallFacts(
                    { toolUseId: block.id, name: block.name, input: block.input },
                    target.permissionFacts.cwd,
                    target.permissionFacts.homeDir,
                  )
                : undefined;
              // A command that may change things is unsafe: neither it nor any later call is reported.
              if (judgedOnFacts && !isToolUseStartableEarly(block, facts)) return false;
              await reportToolUse(target, { ...report, ...(facts && { facts }) });
              return true;
            } catch (error) {
              this.binding.log.warn('Could not report a streamed tool_use; later ones are not reported either', { error: String(error) });
              return false;
            }
          });
        }
      });
      const final = await stream.finalMessage();
      ended = true;
      endStream();
      await reports;
      // The deltas reach the workflow before the message does: readers never see them after it.
      if (live) {
        const publisher = live;
        await heartbeatingWhileBound(
          () => this.binding,
          publisher.close(),
          () => ({ overloaded: this.binding.overloadedBefore }),
        ).catch((error: unknown) => this.binding.log.warn('Could not publish the last deltas', { error: String(error) }));
      }
      return { type: 'message', message: final };
    } catch (error) {
      ended = true;
      endStream();
      await reports;
      live?.abandon();
      return { type: 'failed', error, cancelled: this.controller.signal.aborted || error instanceof Anthropic.APIUserAbortError };
    }
  }
}

/** Starts streaming `options.request` at once. */
export function startModelCallRun(options: StartModelCallRunOptions): ModelCallRun {
  return new ModelCallRun(options);
}

// ---------------------------------------------------------------------------------------------
// The registry of handed-over runs (process-wide: the attach activity finds them by key)
// ---------------------------------------------------------------------------------------------

interface Waiting {
  run: ModelCallRun;
  /** The handoff queue named in the handoff. */
  taskQueue: string;
  timer: NodeJS.Timeout;
}

const waiting = new Map<string, Waiting>();

/**
 * Keeps `run` (already detached) for the activity that will attach to it on `taskQueue`; returns
 * its key. Nobody attaching within `orphanAfterMs` aborts and drops it.
 */
export function handOverModelCallRun(run: ModelCallRun, taskQueue: string, orphanAfterMs: number): string {
  const key = randomUUID();
  const timer = setTimeout(() => {
    if (waiting.get(key)?.run !== run) return;
    waiting.delete(key);
    counters.orphaned++;
    run.abort(new Error(`Model call ${key} handed over but not attached within ${orphanAfterMs} ms`));
  }, orphanAfterMs);
  // The stream keeps the process alive while it runs; the expiry alone must not.
  timer.unref();
  waiting.set(key, { run, taskQueue, timer });
  counters.handedOver++;
  return key;
}

/** The handed-over run with `key`, removed from the registry (the caller attaches to it), if this process holds it. */
export function takeModelCallRun(key: string): ModelCallRun | undefined {
  const entry = waiting.get(key);
  if (!entry) return undefined;
  waiting.delete(key);
  clearTimeout(entry.timer);
  counters.attached++;
  return entry.run;
}

/** Aborts and drops every handed-over run waiting on `taskQueue` (its worker stopped: nobody will attach). */
export function abandonModelCallRuns(taskQueue: string): number {
  let count = 0;
  for (const [key, entry] of waiting) {
    if (entry.taskQueue !== taskQueue) continue;
    waiting.delete(key);
    clearTimeout(entry.timer);
    entry.run.abort(new Error(`The handoff queue ${taskQueue} stopped before model call ${key} was attached`));
    count++;
  }
  counters.abandoned += count;
  return count;
}

/** This process's runs: how many stream, how many wait for their attach, and what happened to the rest. */
export function modelCallRunStats(): ModelCallRunStats {
  return { streaming: streaming.size, waiting: waiting.size, ...counters };
}

// ---------------------------------------------------------------------------------------------
// Worker-specific handoff task queues (one per createWorker; worker/worker.ts registers them)
// ---------------------------------------------------------------------------------------------

/** Main task queue → the handoff queues of the running workers that poll it in this process (newest last), with their capacity. */
const handoffQueues = new Map<string, Array<{ queue: string; capacity: number }>>();

/**
 * Makes `handoffQueue` the queue `callModelLocal` hands calls of `taskQueue` over to, while its
 * worker runs; `capacity`: the streams it can attach to at once. Returns the unregistration (idempotent).
 */
export function registerHandoffQueue(taskQueue: string, handoffQueue: string, capacity = Infinity): () => void {
  const queues = handoffQueues.get(taskQueue) ?? [];
  const entry = { queue: handoffQueue, capacity };
  queues.push(entry);
  handoffQueues.set(taskQueue, queues);
  return () => {
    const current = handoffQueues.get(taskQueue);
    const index = current?.indexOf(entry) ?? -1;
    if (!current || index < 0) return;
    current.splice(index, 1);
    if (current.length === 0) handoffQueues.delete(taskQueue);
  };
}

/**
 * The handoff queue of a running worker in this process that polls `taskQueue`, if any — and none
 * while the process already holds as many streams as that worker can attach to.
 */
export function handoffQueueFor(taskQueue: string): string | undefined {
  const queues = handoffQueues.get(taskQueue);
  const newest = queues?.[queues.length - 1];
  if (!newest || streaming.size >= newest.capacity) return undefined;
  return newest.queue;
}

/** Whether `handoffQueue` is still registered for `taskQueue` (its worker has not begun to stop). */
export function handoffQueueRegistered(taskQueue: string, handoffQueue: string): boolean {
  return handoffQueues.get(taskQueue)?.some((entry) => entry.queue === handoffQueue) ?? false;
}
