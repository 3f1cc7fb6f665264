/**
 * Model calls started as a local activity and handed over (activities/model-call-runs.ts,
 * callModelLocal / callModel with `attach` in activities/call-model.ts), with the real Anthropic
 * SDK against the scripted model server and the SDK's MockActivityEnvironment as the activity
 * Context: what is sent, what each phase answers, where heartbeats, cancellation and failures go.
 */
import Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CallModelInput, CallModelLocalInput, CallModelLocalResult, CallModelResult, RequestContext } from '../../common/activity-types';
import { EMPTY_CHAIN_DIGEST, chainDigest, valueDigest } from '../../common/digest';
import type { TranscriptMessage } from '../../common/messages';
import { modelInfoFromTable } from '../../common/models';
import { type CallModelDeps, createCallModel, createCallModelLocal } from '../../activities/call-model';
import {
  type RunBinding,
  abandonModelCallRuns,
  detachedBinding,
  handOverModelCallRun,
  handoffQueueFor,
  modelCallRunStats,
  registerHandoffQueue,
  startModelCallRun,
  takeModelCallRun,
} from '../../activities/model-call-runs';
import { TranscriptCache } from '../../activities/transcript-cache';
import { type ScriptedModelServer, errorBurst, promptTooLongTurn, startScriptedModelServer } from '../../testing/scripted-model-server';

let server: ScriptedModelServer;
let anthropic: Anthropic;
let taskQueue: string;
let handoffQueue: string;
let unregister: () => void;
let reports: Array<{ attempt: number; index: number; name: string }>;
let deps: CallModelDeps;

beforeEach(async () => {
  server = await startScriptedModelServer();
  anthropic = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
  taskQueue = `queue-${randomUUID()}`;
  handoffQueue = `${taskQueue}-handoff`;
  unregister = registerHandoffQueue(taskQueue, handoffQueue);
  reports = [];
  deps = {
    anthropic,
    transcriptCache: new TranscriptCache(),
    reportToolUse: async (_target, report) => {
      reports.push({ attempt: report.attempt, index: report.index, name: report.block.name });
    },
  };
});

afterEach(async () => {
  unregister();
  abandonModelCallRuns(handoffQueue);
  await server.close();
  expect(server.rejections).toEqual([]);
});

/** An inline request (legacy inputs carry it): needs no transcript cache. */
const inline = (overrides: Partial<CallModelLocalInput> = {}): CallModelLocalInput => ({
  conversationId: 'conversation-1',
  model: 'claude-sonnet-4-6',
  maxTokens: 1024,
  system: [{ type: 'text', text: 'You are a test.' }],
  messages: [{ role: 'user', content: 'hi' }],
  toolNames: ['Read'],
  handoffAfterMs: 100,
  ...overrides,
});

/** Failures are what these tests expect: the SDK's "Activity failed" warnings would only be noise. */
const quiet = { logger: new DefaultLogger('ERROR') };
const localEnvironment = (queue = taskQueue) => new MockActivityEnvironment({ taskQueue: queue, isLocal: true }, quiet);
const attachEnvironment = (attempt = 1, heartbeatDetails?: unknown) =>
  new MockActivityEnvironment({ taskQueue: handoffQueue, attempt, heartbeatTimeoutMs: 200, heartbeatDetails }, quiet);

async function callLocal(input: CallModelLocalInput, environment = localEnvironment()): Promise<CallModelLocalResult> {
  return environment.run(createCallModelLocal(deps), input);
}

async function callAttached(input: CallModelInput, environment = attachEnvironment()): Promise<CallModelResult> {
  return environment.run(createCallModel(deps), input);
}

function handoffOf(result: CallModelLocalResult) {
  if (result.type !== 'handoff' || !result.attach) throw new Error(`expected a handoff with attach, got ${JSON.stringify(result)}`);
  return { ...result, attach: result.attach };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise and its resolver (the scripted server's `hold`). */
function gate(): { until: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const until = new Promise<void>((resolve) => (open = resolve));
  return { until, open };
}

describe('callModelLocal: answers at once when nothing can be sent', () => {
  it('no handoff queue for its task queue: no_handoff_queue, no request', async () => {
    const result = await callLocal(inline(), localEnvironment(`other-${randomUUID()}`));
    expect(result).toMatchObject({ type: 'handoff', reason: 'no_handoff_queue' });
    expect(result.type === 'handoff' && result.attach).toBeFalsy();
    expect(server.requests).toHaveLength(0);
  });

  it('a process holding as many streams as its handoff worker can attach to: no_handoff_queue, no request', async () => {
    const full = `full-${randomUUID()}`;
    const release = registerHandoffQueue(full, `${full}-handoff`, 0);
    try {
      const result = await callLocal(inline(), localEnvironment(full));
      expect(result).toMatchObject({ type: 'handoff', reason: 'no_handoff_queue' });
      expect(server.requests).toHaveLength(0);
    } finally {
      release();
    }
  });

  it('a transcript this worker does not hold: cache_miss, no request, no query', async () => {
    const result = await callLocal(
      inline({
        system: undefined,
        messages: undefined,
        toolNames: undefined,
        transcript: { length: 1, digest: 'f'.repeat(64) },
        context: { digest: 'e'.repeat(64) },
      }),
    );
    expect(result).toMatchObject({ type: 'handoff', reason: 'cache_miss' });
    expect(server.requests).toHaveLength(0);
    expect(deps.transcriptCache.stats).toMatchObject({ hits: 0, misses: 0 });
  });
});

describe('callModelLocal: the model answers within the local budget', () => {
  it('returns the message, as callModel would, with attempt 1 + attemptOffset; nothing is left in the registry', async () => {
    server.enqueue({ content: [{ type: 'text', text: 'instant' }] });
    const before = modelCallRunStats();
    const result = await callLocal(inline({ handoffAfterMs: 5_000, attemptOffset: 2 }));
    expect(result).toMatchObject({ type: 'message', attempt: 3, message: { role: 'assistant', content: [{ type: 'text', text: 'instant' }] } });
    expect(server.requests).toHaveLength(1);
    const after = modelCallRunStats();
    expect(after.started - before.started).toBe(1);
    expect(after.handedOver).toBe(before.handedOver);
    expect(after).toMatchObject({ streaming: 0, waiting: 0 });
  });

  it('materialises a by-reference request from the worker cache (a hit)', async () => {
    const messages: TranscriptMessage[] = [{ type: 'user', uuid: 'u1', message: { role: 'user', content: 'from the cache' } }];
    const context: RequestContext = { system: [{ type: 'text', text: 'cached system' }], toolNames: [] };
    deps.transcriptCache.feed('conversation-1', 0, messages);
    deps.transcriptCache.putContext(valueDigest(context), context);
    server.enqueue({ content: [{ type: 'text', text: 'ok' }] });
    const result = await callLocal(
      inline({
        system: undefined,
        messages: undefined,
        toolNames: undefined,
        transcript: { length: 1, digest: chainDigest(EMPTY_CHAIN_DIGEST, messages[0]) },
        context: { digest: valueDigest(context) },
        handoffAfterMs: 5_000,
      }),
    );
    expect(result).toMatchObject({ type: 'message', attempt: 1 });
    expect(server.requests[0].body.system).toEqual(context.system);
    expect(JSON.stringify(server.requests[0].body.messages)).toContain('from the cache');
  });

  it('prompt too long comes back as data, not a handoff', async () => {
    server.enqueue(promptTooLongTurn(250_000));
    const result = await callLocal(inline({ handoffAfterMs: 5_000 }));
    expect(result).toMatchObject({ type: 'prompt_too_long', actualTokens: 250_000, limitTokens: 200_000, attempt: 1 });
    expect(modelCallRunStats().waiting).toBe(0);
  });
});

describe('handoff: a stream still going at the deadline goes on in callModel with attach', () => {
  it('slow: the local phase hands over; the attached activity gets the same stream (one request) and heartbeats', async () => {
    const held = gate();
    server.enqueue({
      content: [{ type: 'text', text: 'a long answer that keeps streaming' }],
      hold: { afterBlocks: 0, until: held.until },
      deltaDelayMs: 20,
      chunkSize: 4,
    });
    const local = localEnvironment();
    const localHeartbeats: unknown[] = [];
    local.on('heartbeat', (details) => localHeartbeats.push(details));
    const handoff = handoffOf(await callLocal(inline({ handoffAfterMs: 100 }), local));
    expect(handoff).toMatchObject({ reason: 'slow', attach: { taskQueue: handoffQueue }, elapsedMs: expect.any(Number) });
    expect(localHeartbeats).toEqual([]); // local activities have no heartbeats
    expect(modelCallRunStats()).toMatchObject({ waiting: 1 });

    const environment = attachEnvironment();
    const heartbeats: unknown[] = [];
    environment.on('heartbeat', (details) => heartbeats.push(details));
    const attached = callAttached({ ...inline(), attach: { key: handoff.attach.key } }, environment);
    await sleep(200); // past the attached activity's first-heartbeat delay (half its 200 ms timeout)
    held.open();
    const result = await attached;
    expect(result).toMatchObject({ type: 'message', attempt: 1, message: { content: [{ type: 'text', text: 'a long answer that keeps streaming' }] } });
    expect(server.requests).toHaveLength(1);
    expect(heartbeats.length).toBeGreaterThan(0);
    expect(heartbeats[heartbeats.length - 1]).toMatchObject({ overloaded: 0 });
    expect(modelCallRunStats()).toMatchObject({ waiting: 0, streaming: 0 });
  });

  it('a stream whose words have begun is handed over shortly after its first delta, not at the deadline (issue 19, item 16)', async () => {
    const held = gate();
    // First words, then the stream goes on (held) well past the local phase's grace.
    server.enqueue({
      content: [
        { type: 'text', text: 'First words' },
        { type: 'text', text: 'and more later' },
      ],
      hold: { afterBlocks: 1, until: held.until },
    });
    const started = Date.now();
    const handoff = handoffOf(await callLocal(inline({ handoffAfterMs: 5_000 })));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(handoff).toMatchObject({ reason: 'slow', attach: { taskQueue: handoffQueue } });
    const attached = callAttached({ ...inline(), attach: { key: handoff.attach.key } }, attachEnvironment());
    held.open();
    expect(await attached).toMatchObject({ type: 'message', message: { content: [{ text: 'First words' }, { text: 'and more later' }] } });
    expect(server.requests).toHaveLength(1);
  });

  it('streamed tool_use reports carry the attempt of whoever holds the run when the block completes', async () => {
    const held = gate();
    server.enqueue({
      content: [
        { type: 'tool_use', name: 'Read', input: { file_path: '/tmp/a.txt' } },
        { type: 'text', text: 'and more text after the tool call, streamed slowly' },
      ],
      stop_reason: 'end_turn',
      hold: { afterBlocks: 0, until: held.until },
      deltaDelayMs: 10,
      chunkSize: 4,
    });
    const streamToolUses = { workflowId: 'conversation-1', requestId: 'r1' };
    const handoff = handoffOf(await callLocal(inline({ handoffAfterMs: 50, streamToolUses })));
    const attached = callAttached({ ...inline(), streamToolUses, attach: { key: handoff.attach.key }, attemptOffset: 4 });
    await sleep(20);
    held.open();
    const result = await attached;
    expect(result).toMatchObject({ type: 'message', attempt: 5 });
    expect(reports).toEqual([{ attempt: 5, index: 0, name: 'Read' }]);
  });

  it('failed: the local phase hands the failure over; the attached first attempt throws it, classified, overloaded count in its heartbeat', async () => {
    server.enqueue(...errorBurst(1, 529));
    const handoff = handoffOf(await callLocal(inline({ handoffAfterMs: 5_000 })));
    expect(handoff.reason).toBe('failed');
    const environment = attachEnvironment();
    const heartbeats: unknown[] = [];
    environment.on('heartbeat', (details) => heartbeats.push(details));
    const failure = await callAttached({ ...inline(), attach: { key: handoff.attach.key } }, environment).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'overloaded_error', nonRetryable: false });
    expect(heartbeats).toEqual([{ overloaded: 1 }]);
    expect(server.requests).toHaveLength(1);
  });

  it('a failure after three overloads with a fallback is FallbackTriggered, counting the attached attempt', async () => {
    server.enqueue(...errorBurst(1, 529));
    const handoff = handoffOf(await callLocal(inline({ handoffAfterMs: 5_000 })));
    const environment = attachEnvironment(1, { overloaded: 2 });
    const failure = await callAttached({ ...inline(), fallbackAvailable: true, attach: { key: handoff.attach.key } }, environment).catch(
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ type: 'FallbackTriggered', nonRetryable: true });
  });

  it('an unknown key (another process, expired) or a later attempt sends the request afresh', async () => {
    server.enqueue({ content: [{ type: 'text', text: 'fresh' }] });
    expect(await callAttached({ ...inline(), attach: { key: 'not-held-here' } })).toMatchObject({ type: 'message', attempt: 1 });
    expect(server.requests).toHaveLength(1);

    const held = gate();
    server.enqueue(
      { content: [{ type: 'text', text: 'handed over' }], hold: { afterBlocks: 0, until: held.until } },
      { content: [{ type: 'text', text: 'retry' }] },
    );
    const handoff = handoffOf(await callLocal(inline({ handoffAfterMs: 50 })));
    const retry = await callAttached({ ...inline(), attach: { key: handoff.attach.key } }, attachEnvironment(2));
    expect(retry).toMatchObject({ type: 'message', attempt: 2, message: { content: [{ type: 'text', text: 'retry' }] } });
    expect(server.requests).toHaveLength(3);
    // The handed-over run is still waiting (a retry never attaches); it is dropped by the registry.
    expect(modelCallRunStats().waiting).toBe(1);
    held.open();
  });
});

describe('cancellation', () => {
  it('the local activity cancelled before the handoff: the stream is aborted, CancelledFailure', async () => {
    const held = gate();
    server.enqueue({ content: [{ type: 'text', text: 'never' }], hold: { afterBlocks: 0, until: held.until } });
    const environment = localEnvironment();
    const running = callLocal(inline({ handoffAfterMs: 5_000 }), environment);
    await sleep(100);
    environment.cancel();
    const failure = await running.catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CancelledFailure);
    expect(modelCallRunStats()).toMatchObject({ streaming: 0, waiting: 0 });
    held.open();
  });

  it('the attached activity cancelled: the handed-over stream is aborted, CancelledFailure', async () => {
    const held = gate();
    server.enqueue({ content: [{ type: 'text', text: 'never' }], hold: { afterBlocks: 0, until: held.until } });
    const handoff = handoffOf(await callLocal(inline({ handoffAfterMs: 50 })));
    const environment = attachEnvironment();
    const running = callAttached({ ...inline(), attach: { key: handoff.attach.key } }, environment);
    await sleep(50);
    environment.cancel();
    expect(await running.catch((error: unknown) => error)).toBeInstanceOf(CancelledFailure);
    expect(modelCallRunStats()).toMatchObject({ streaming: 0, waiting: 0 });
    held.open();
  });
});

describe('the registry of handed-over runs', () => {
  const recording = (attempt: number) => {
    const heartbeats: unknown[] = [];
    const binding: RunBinding = {
      attempt,
      overloadedBefore: 0,
      heartbeatTimeoutMs: 200,
      firstHeartbeatAt: 0,
      heartbeat: (details) => heartbeats.push(details),
      log: console,
    };
    return { binding, heartbeats };
  };
  const request = {
    system: [{ type: 'text' as const, text: 'You are a test.' }],
    messages: [{ role: 'user' as const, content: 'hi' }],
    toolNames: [],
    model: modelInfoFromTable('claude-sonnet-4-6')!,
    options: {},
  };

  it('a run nobody attaches to is aborted and dropped after orphanAfterMs', async () => {
    const held = gate();
    server.enqueue({ content: [{ type: 'text', text: 'orphan' }], hold: { afterBlocks: 0, until: held.until } });
    const run = startModelCallRun({ anthropic, input: inline(), request, binding: detachedBinding(1, console), startedAt: Date.now() });
    const before = modelCallRunStats();
    const key = handOverModelCallRun(run, handoffQueue, 100);
    expect(modelCallRunStats().waiting).toBe(before.waiting + 1);
    const outcome = await run.outcome;
    expect(outcome).toMatchObject({ type: 'failed', cancelled: true });
    expect(modelCallRunStats()).toMatchObject({ waiting: before.waiting, orphaned: before.orphaned + 1 });
    expect(takeModelCallRun(key)).toBeUndefined();
    held.open();
  });

  it('a run taken before it expires is rebound: heartbeats go to the new binding, the expiry no longer applies', async () => {
    const held = gate();
    server.enqueue({
      content: [{ type: 'text', text: 'kept alive by its attach' }],
      hold: { afterBlocks: 0, until: held.until },
      deltaDelayMs: 10,
      chunkSize: 4,
    });
    const first = recording(1);
    const run = startModelCallRun({ anthropic, input: inline(), request, binding: first.binding, startedAt: Date.now() });
    await sleep(50);
    run.bind(detachedBinding(1, console));
    const key = handOverModelCallRun(run, handoffQueue, 150);
    expect(takeModelCallRun(key)).toBe(run);
    const second = recording(2);
    run.bind(second.binding);
    await sleep(250); // past the orphan deadline
    held.open();
    expect(await run.outcome).toMatchObject({ type: 'message' });
    expect(second.heartbeats.length).toBeGreaterThan(0);
    expect(modelCallRunStats().waiting).toBe(0);
  });

  it('a stopped handoff queue abandons its waiting runs; handoffQueueFor follows registration', async () => {
    const held = gate();
    server.enqueue({ content: [{ type: 'text', text: 'abandoned' }], hold: { afterBlocks: 0, until: held.until } });
    expect(handoffQueueFor(taskQueue)).toBe(handoffQueue);
    const second = registerHandoffQueue(taskQueue, `${handoffQueue}-2`);
    expect(handoffQueueFor(taskQueue)).toBe(`${handoffQueue}-2`);
    second();
    second();
    expect(handoffQueueFor(taskQueue)).toBe(handoffQueue);
    const handoff = handoffOf(await callLocal(inline({ handoffAfterMs: 50 })));
    unregister();
    expect(handoffQueueFor(taskQueue)).toBeUndefined();
    expect(abandonModelCallRuns(handoffQueue)).toBe(1);
    expect(modelCallRunStats().waiting).toBe(0);
    await vi.waitFor(() => expect(modelCallRunStats().streaming).toBe(0)); // the abort ends the stream
    expect(takeModelCallRun(handoff.attach.key)).toBeUndefined();
    held.open();
  });
});
