/**
 * The loop's decisions (recovery counters, fallback, stop-hook cap, max turns) through its own
 * deps seam (seed §2.3 "why deps.callModel is injected"), without Temporal: the deps here are
 * plain scripted functions. The same paths run end to end in test/integration.
 */
import { describe, expect, it } from 'vitest';
import {
  type ApiMessage,
  type AssistantApiMessage,
  type Message,
  type ToolUseBlock,
  type TranscriptMessage,
  type UserMessage,
  buildApiMessages,
} from '../../common/messages';
import type { Terminal, TransitionType } from '../../common/result';
import {
  MAX_OUTPUT_TOKENS_RECOVERY_MESSAGE,
  type ModelRequest,
  type ModelResponse,
  type LoopSession,
  type QueryDeps,
  type LoopCheckpoint,
  type StopHookDecision,
  type Suspended,
  type ToolExecutor,
  prependUserContext,
  queryLoop,
} from '../../workflows/query/loop';
import { isLoopEvent } from '../../workflows/query/state';
import type { CompactResponse } from '../../workflows/compaction/summary';
import { MAX_CONSECUTIVE_STOP_HOOK_BLOCKS } from '../../workflows/query/handle-stop-hooks';
import { Transcript } from '../../workflows/transcript';

/** A model request with its transcript reference materialised, as the worker would send it. */
type SentRequest = ModelRequest & { messages: ApiMessage[] };

function reply(content: AssistantApiMessage['content'], stop_reason: AssistantApiMessage['stop_reason'] = 'end_turn'): ModelResponse {
  return {
    type: 'message',
    durationMs: 1,
    message: {
      id: 'msg',
      role: 'assistant',
      model: 'm',
      content,
      stop_reason,
      usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
  };
}

interface Run {
  terminal: Terminal | Suspended;
  yielded: Message[];
  requests: SentRequest[];
  transitions: TransitionType[];
}

async function run(
  responses: Array<ModelResponse | ((request: SentRequest) => ModelResponse)>,
  options: {
    hooks?: () => StopHookDecision;
    maxTurns?: number;
    fallbackModel?: string;
    queued?: () => UserMessage[];
    tokenBudget?: number;
    contextWindowTokens?: number;
    prompt?: string;
    shouldSuspend?: () => boolean;
    onHooks?: (stopHookActive: boolean) => void;
    resume?: { checkpoint: LoopCheckpoint; messages: TranscriptMessage[] };
    compact?: () => CompactResponse;
    checkLimits?: LoopSession['checkLimits'];
    postToolBatch?: QueryDeps['runPostToolBatchHooks'];
  } = {},
): Promise<Run> {
  let counter = 0;
  const requests: SentRequest[] = [];
  const transcript = new Transcript(options.resume?.messages ?? [{ type: 'user', uuid: 'first', message: { role: 'user', content: options.prompt ?? 'go' } }]);
  const transitions: TransitionType[] = [];
  const executor: ToolExecutor = {
    async *getRemainingResults(toolUses: ToolUseBlock[]) {
      for (const toolUse of toolUses) {
        yield {
          type: 'user',
          uuid: `r${counter++}`,
          message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'ok' }] },
        } satisfies UserMessage;
      }
    },
    async discard() {},
  };
  const deps: QueryDeps = {
    uuid: () => `u${counter++}`,
    newToolExecutor: () => executor,
    callModel: async (request) => {
      const sent = { ...request, messages: buildApiMessages(transcript.messages.slice(0, request.transcript.length), request.userContext) };
      expect(request.transcript.digest).toBe(transcript.digestAt(request.transcript.length));
      requests.push(sent);
      const next = responses.shift();
      if (!next) throw new Error('script exhausted');
      return typeof next === 'function' ? next(sent) : next;
    },
    runStopHooks: async ({ stopHookActive }) => {
      options.onHooks?.(stopHookActive);
      return options.hooks?.() ?? { blockingErrors: [], preventContinuation: false, notices: [] };
    },
    isAborted: () => false,
    now: () => 0,
    compactConversation: async () => options.compact?.() ?? { type: 'error', errorMessage: 'no compaction scripted' },
    ...(options.postToolBatch && { runPostToolBatchHooks: options.postToolBatch }),
  };
  const session: LoopSession = {
    takeQueuedInputs: () => options.queued?.() ?? [],
    shouldSuspend: options.shouldSuspend,
    checkLimits: options.checkLimits,
  };
  const generator = queryLoop(
    {
      transcript,
      resume: options.resume?.checkpoint,
      systemPrompt: [{ type: 'text', text: 'system' }],
      model: 'primary',
      fallbackModel: options.fallbackModel,
      maxTurns: options.maxTurns ?? 10,
      maxOutputTokens: 8_192,
      tokenBudget: options.tokenBudget,
      contextWindowTokens: options.contextWindowTokens,
    },
    deps,
    session,
  );
  const yielded: Message[] = [];
  while (true) {
    const next = await generator.next();
    if (next.done) return { terminal: next.value, yielded, requests, transitions };
    // The session's part (seed §2.10 Phase D): what the loop yields joins the transcript; its events tell the session.
    if (isLoopEvent(next.value)) {
      if (next.value.type === 'transition') transitions.push(next.value.transition);
      continue;
    }
    if (next.value.type === 'user' || next.value.type === 'assistant') transcript.append(next.value);
    yielded.push(next.value);
  }
}

const toolUse = (id: string): ToolUseBlock => ({ type: 'tool_use', id, name: 'Read', input: { file_path: 'x' } });

describe('queryLoop', () => {
  it('escalates the output cap once, then nudges three times, then surfaces the error', async () => {
    const truncated = () => reply([{ type: 'text', text: 'partial' }], 'max_tokens');
    const { terminal, requests, transitions, yielded } = await run([truncated(), truncated(), truncated(), truncated(), truncated()]);
    expect(transitions).toEqual(['max_output_tokens_escalate', 'max_output_tokens_recovery', 'max_output_tokens_recovery', 'max_output_tokens_recovery']);
    expect(requests.map((request) => request.maxTokens)).toEqual([8_192, 64_000, 64_000, 64_000, 64_000]);
    // The escalated retry resends the same request; the truncated output is not kept.
    expect(requests[1].messages).toEqual(requests[0].messages);
    // Nudges keep the truncated output and end with the recovery message.
    const last = requests[4].messages.at(-1)!;
    expect(JSON.stringify(last.content)).toContain(MAX_OUTPUT_TOKENS_RECOVERY_MESSAGE.slice(0, 40));
    expect(requests[4].messages.filter((message) => message.role === 'assistant')).toHaveLength(3);
    expect(terminal.reason).toBe('model_error');
    expect(yielded.some((message) => message.type === 'system' && message.level === 'error')).toBe(true);
  });

  it('resets the recovery counter after a successful tool turn', async () => {
    const truncated = () => reply([{ type: 'text', text: 'partial' }], 'max_tokens');
    const { terminal, transitions } = await run([
      truncated(),
      truncated(),
      reply([toolUse('t1')], 'tool_use'),
      truncated(),
      reply([{ type: 'text', text: 'done' }]),
    ]);
    expect(transitions).toEqual(['max_output_tokens_escalate', 'max_output_tokens_recovery', 'tool_use', 'max_output_tokens_escalate']);
    expect(terminal.reason).toBe('completed');
  });

  it('switches to the fallback model on overload and says so', async () => {
    const { terminal, requests, transitions, yielded } = await run([{ type: 'overloaded', errorMessage: '529' }, reply([{ type: 'text', text: 'hi' }])], {
      fallbackModel: 'backup',
    });
    expect(requests.map((request) => request.model)).toEqual(['primary', 'backup']);
    expect(transitions).toEqual(['fallback_retry']);
    expect(terminal.reason).toBe('completed');
    expect(yielded).toContainEqual(expect.objectContaining({ type: 'system', content: 'Switched to backup due to high demand for primary' }));
  });

  it('ends with model_error on overload when no fallback is configured', async () => {
    const { terminal, requests } = await run([{ type: 'overloaded', errorMessage: 'Overloaded' }]);
    expect(requests).toHaveLength(1);
    expect(terminal).toEqual({ reason: 'model_error', error: 'Overloaded' });
  });

  it('feeds blocking stop-hook errors back and gives up after the cap', async () => {
    const responses = Array.from({ length: MAX_CONSECUTIVE_STOP_HOOK_BLOCKS }, () => reply([{ type: 'text', text: 'done?' }]));
    const { terminal, requests, transitions } = await run(responses, {
      hooks: () => ({ blockingErrors: ['lint failed'], preventContinuation: false, notices: [] }),
    });
    expect(requests).toHaveLength(MAX_CONSECUTIVE_STOP_HOOK_BLOCKS);
    expect(transitions).toEqual(Array(MAX_CONSECUTIVE_STOP_HOOK_BLOCKS - 1).fill('stop_hook_retry'));
    expect(JSON.stringify(requests[1].messages.at(-1))).toContain('lint failed');
    expect(terminal.reason).toBe('completed');
  });

  it('keeps counting hook blocks (and stop_hook_active) across tool turns', async () => {
    const seen: boolean[] = [];
    const responses: ModelResponse[] = [];
    for (let i = 0; i < MAX_CONSECUTIVE_STOP_HOOK_BLOCKS; i++) responses.push(reply([toolUse(`t${i}`)], 'tool_use'), reply([{ type: 'text', text: 'done?' }]));
    const { terminal, requests } = await run(responses, {
      hooks: () => ({ blockingErrors: ['still failing'], preventContinuation: false, notices: [] }),
      onHooks: (active) => seen.push(active),
    });
    expect(terminal.reason).toBe('completed');
    expect(requests).toHaveLength(2 * MAX_CONSECUTIVE_STOP_HOOK_BLOCKS);
    expect(seen).toEqual([false, ...Array(MAX_CONSECUTIVE_STOP_HOOK_BLOCKS - 1).fill(true)]);
  });

  it('PostToolBatch: gets every call of a reply with its result; its context goes with the results; a stop ends the query before the next model call', async () => {
    const batches: Array<Array<{ id: string; response: string }>> = [];
    const { requests, terminal } = await run([reply([toolUse('a'), toolUse('b')], 'tool_use'), reply([{ type: 'text', text: 'done' }])], {
      postToolBatch: async (calls) => {
        batches.push(calls.map(({ block, response }) => ({ id: block.id, response })));
        return { context: '<system-reminder>\nPostToolBatch hook additional context: both ran\n</system-reminder>' };
      },
    });
    expect(batches).toEqual([
      [
        { id: 'a', response: 'ok' },
        { id: 'b', response: 'ok' },
      ],
    ]);
    expect(terminal.reason).toBe('completed');
    const last = JSON.stringify(requests[1].messages.at(-1));
    expect(last).toContain('"tool_use_id":"b"');
    expect(last).toContain('PostToolBatch hook additional context: both ran');
    const stopped = await run([reply([toolUse('a')], 'tool_use'), reply([{ type: 'text', text: 'never' }])], {
      postToolBatch: async () => ({ stop: 'tests must pass first' }),
    });
    expect(stopped.requests).toHaveLength(1);
    expect(stopped.terminal).toEqual({ reason: 'hook_stopped', error: 'tests must pass first' });
  });

  it('stops when a hook prevents continuation', async () => {
    const { terminal } = await run([reply([{ type: 'text', text: 'done' }])], {
      hooks: () => ({ blockingErrors: [], preventContinuation: true, stopReason: 'enough', notices: [] }),
    });
    expect(terminal).toEqual({ reason: 'stop_hook_prevented', error: 'enough' });
  });

  it('stops at max turns after the tools of the last allowed turn have results', async () => {
    const { terminal, requests, yielded } = await run(
      [reply([toolUse('a')], 'tool_use'), reply([toolUse('b')], 'tool_use'), reply([toolUse('c')], 'tool_use')],
      { maxTurns: 2 },
    );
    expect(requests).toHaveLength(2);
    expect(terminal.reason).toBe('max_turns');
    const results = yielded.filter((message) => message.type === 'user');
    expect(results).toHaveLength(2);
  });

  it('injects queued input after the tool results of the same turn', async () => {
    let queued: UserMessage[] = [{ type: 'user', uuid: 'q', message: { role: 'user', content: 'also do this' } }];
    const { requests } = await run([reply([toolUse('a')], 'tool_use'), reply([{ type: 'text', text: 'ok' }])], {
      queued: () => queued.splice(0),
    });
    const last = requests[1].messages.at(-1)!;
    expect(last.role).toBe('user');
    expect(JSON.stringify(last.content)).toMatch(/tool_result.*also do this/);
    queued = [];
  });
});

describe('queryLoop limits', () => {
  const withOutput = (tokens: number): ModelResponse => {
    const response = reply([{ type: 'text', text: 'some work' }]);
    if (response.type === 'message') response.message.usage.output_tokens = tokens;
    return response;
  };

  it('nudges the model to continue until 90% of a token budget is used', async () => {
    const { terminal, transitions, requests, yielded } = await run([withOutput(400), withOutput(400), withOutput(300)], { tokenBudget: 1_000 });
    expect(transitions).toEqual(['token_budget_continuation', 'token_budget_continuation']);
    expect(JSON.stringify(requests[1].messages.at(-1))).toContain('Stopped at 40% of token target (400 / 1,000)');
    expect(terminal.reason).toBe('completed');
    expect(yielded).toContainEqual(expect.objectContaining({ type: 'system', content: expect.stringContaining('Token budget: 1100 of 1000') }));
  });

  it('refuses to send a request past the blocking limit', async () => {
    const { terminal, requests } = await run([], { contextWindowTokens: 30_000, prompt: 'x'.repeat(4 * 20_000) });
    expect(requests).toHaveLength(0);
    expect(terminal.reason).toBe('blocking_limit');
    expect((terminal as Terminal).error).toContain('too long');
  });
});

describe('queryLoop suspension (mid-query continue-as-new)', () => {
  it('suspends only at an iteration boundary after progress, and resumes where it stopped', async () => {
    const first = await run([reply([toolUse('a')], 'tool_use'), reply([toolUse('b')], 'tool_use')], { shouldSuspend: () => true, tokenBudget: 10_000 });
    expect(first.requests).toHaveLength(1);
    expect(first.terminal.reason).toBe('suspended');
    const checkpoint = (first.terminal as Suspended).checkpoint;
    expect(checkpoint.state).toMatchObject({ turnCount: 2, transition: { type: 'tool_use' } });
    expect(checkpoint.queryOutputTokens).toBe(1);

    // The new run gets the transcript the session kept, and makes progress before it may suspend again.
    const transcript = [
      { type: 'user' as const, uuid: 'first', message: { role: 'user' as const, content: 'go' } },
      ...first.yielded.filter(
        (message): message is Extract<Message, { type: 'user' | 'assistant' }> => message.type === 'user' || message.type === 'assistant',
      ),
    ];
    const second = await run([reply([{ type: 'text', text: 'done' }])], { shouldSuspend: () => true, resume: { checkpoint, messages: transcript } });
    expect(second.requests).toHaveLength(1);
    expect(second.requests[0].messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(second.terminal.reason).toBe('completed');
  });
});

describe('queryLoop session limits (budget, structured-output retries)', () => {
  it('stops after the reply that reached the limit; its tool calls get error results and do not run', async () => {
    const checked: string[] = [];
    const { terminal, yielded, requests } = await run([reply([toolUse('t1'), toolUse('t2')], 'tool_use')], {
      checkLimits: (after) => {
        checked.push(after);
        return { reason: 'budget_exhausted', error: 'Reached the maximum budget of $0.01.' };
      },
    });
    expect(terminal).toEqual({ reason: 'budget_exhausted', error: 'Reached the maximum budget of $0.01.' });
    expect(requests).toHaveLength(1);
    expect(checked).toEqual(['assistant']);
    const results = yielded
      .filter((message): message is UserMessage => message.type === 'user')
      .flatMap((message) => (Array.isArray(message.message.content) ? message.message.content : []));
    expect(results).toEqual([
      expect.objectContaining({ type: 'tool_result', tool_use_id: 't1', is_error: true, content: 'Reached the maximum budget of $0.01.' }),
      expect.objectContaining({ type: 'tool_result', tool_use_id: 't2', is_error: true }),
    ]);
    // None of them ran: the executor's "ok" never appears.
    expect(JSON.stringify(yielded)).not.toContain('"content":"ok"');
  });

  it('checks again after the tool results and ends there, before max turns', async () => {
    const { terminal, requests } = await run([reply([toolUse('t1')], 'tool_use'), reply([{ type: 'text', text: 'never' }])], {
      maxTurns: 1,
      checkLimits: (after) => (after === 'tool_results' ? { reason: 'structured_output_retry_exhausted', error: 'no valid output' } : undefined),
    });
    expect(terminal.reason).toBe('structured_output_retry_exhausted');
    expect(requests).toHaveLength(1);
  });

  it('checks before a further request of a recovery path (a Stop hook that keeps blocking)', async () => {
    let spent = 0;
    const { terminal, requests } = await run(
      [() => reply([{ type: 'text', text: 'one' }]), () => reply([{ type: 'text', text: 'two' }]), () => reply([{ type: 'text', text: 'three' }])],
      {
        hooks: () => {
          spent++;
          return { blockingErrors: ['keep going'], preventContinuation: false, notices: [] };
        },
        checkLimits: () => (spent >= 2 ? { reason: 'budget_exhausted', error: 'over budget' } : undefined),
      },
    );
    expect(terminal).toEqual({ reason: 'budget_exhausted', error: 'over budget' });
    expect(requests).toHaveLength(2);
  });

  it('changes nothing while under the limits', async () => {
    const { terminal, requests } = await run([reply([toolUse('t1')], 'tool_use'), reply([{ type: 'text', text: 'done' }])], { checkLimits: () => undefined });
    expect(terminal.reason).toBe('completed');
    expect(requests).toHaveLength(2);
  });
});

describe('prependUserContext', () => {
  it('puts the reminder in the first user turn, after any tool results', () => {
    const messages = prependUserContext([{ role: 'user', content: 'hello' }], 'date: today');
    expect(messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: '<system-reminder>\ndate: today\n</system-reminder>' },
          { type: 'text', text: 'hello' },
        ],
      },
    ]);
    expect(prependUserContext([{ role: 'user', content: 'x' }], undefined)).toEqual([{ role: 'user', content: 'x' }]);
  });
});
