/**
 * Context management's pure parts (seed §2.6–2.7): model limits and thresholds, the compact
 * boundary and the window after it, snip and microcompact keeping every tool_use answered, the
 * summary's extraction, files restored after a compaction, the fallback for a compaction that is
 * itself too long, the breaker, and the request the compaction activity sends.
 */
import { describe, expect, it } from 'vitest';
import { OMITTED_ROUNDS_NOTE, buildCompactMessages, compactInstruction } from '../../activities/compact-conversation';
import {
  type AssistantMessage,
  type CompactBoundaryMessage,
  type TranscriptMessage,
  type UserMessage,
  getMessagesAfterCompactBoundary,
  normalizeMessagesForApi,
} from '../../common/messages';
import { modelLimits } from '../../common/models';
import {
  MIN_FITTED_MAX_TOKENS,
  calculateThresholds,
  contextLevel,
  fitMaxTokens,
  isBreakerOpen,
  shouldAutoCompact,
  thresholdsForModel,
  tokenCountWithEstimation,
} from '../../workflows/compaction/auto';
import {
  POST_COMPACT_MAX_FILES_TO_RESTORE,
  buildPostCompactMessages,
  compactWindow,
  dropOldestRounds,
  extractSummary,
  recentlyReadFiles,
} from '../../workflows/compaction/summary';
import { CLEARED_TOOL_RESULT, isMicrocompactDue, microcompactMessages } from '../../workflows/compaction/micro';
import { planSnip, roundCutPoints } from '../../workflows/compaction/snip';
import { MIN_TOOL_RESULT_BUDGET_CHARS, toolResultBudget } from '../../common/tool-result-budget';
import { Transcript } from '../../workflows/transcript';

const usage = (input = 0) => ({ input_tokens: input, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
const user = (uuid: string, content: UserMessage['message']['content']): UserMessage => ({ type: 'user', uuid, message: { role: 'user', content } });
const assistant = (uuid: string, content: AssistantMessage['message']['content'], timestamp?: number, input = 0): AssistantMessage => ({
  type: 'assistant',
  uuid,
  timestamp,
  message: {
    id: uuid,
    role: 'assistant',
    model: 'm',
    content,
    stop_reason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
    usage: usage(input),
  },
});
const read = (id: string, file: string) => ({ type: 'tool_use' as const, id, name: 'Read', input: { file_path: file } });
const result = (uuid: string, id: string, content: string): UserMessage => user(uuid, [{ type: 'tool_result', tool_use_id: id, content }]);
const boundary = (uuid: string): CompactBoundaryMessage => ({
  type: 'compact_boundary',
  uuid,
  trigger: 'auto',
  preTokens: 100,
  postTokens: 10,
  messagesSummarized: 4,
  timestamp: 0,
});

/** Every tool_use of the messages is answered in the next API turn (what the API demands). */
function expectPairsValid(messages: readonly TranscriptMessage[]): void {
  const api = normalizeMessagesForApi(messages);
  expect(api[0]?.role).toBe('user');
  api.forEach((turn, index) => {
    if (turn.role !== 'assistant' || typeof turn.content === 'string') return;
    const ids = turn.content.filter((block) => block.type === 'tool_use').map((block) => (block as { id: string }).id);
    if (ids.length === 0) return;
    const next = api[index + 1];
    const answered = Array.isArray(next?.content)
      ? next.content.filter((block) => block.type === 'tool_result').map((block) => (block as { tool_use_id: string }).tool_use_id)
      : [];
    expect(answered).toEqual(ids);
  });
}

describe('model limits and thresholds (seed §2.6)', () => {
  it('knows context windows and max outputs, overridable per conversation', () => {
    expect(modelLimits('claude-sonnet-4-6')).toEqual({ contextWindow: 200_000, maxOutputTokens: 64_000 });
    expect(modelLimits('claude-opus-4-1')).toEqual({ contextWindow: 200_000, maxOutputTokens: 32_000 });
    expect(modelLimits('claude-sonnet-5').contextWindow).toBe(1_000_000);
    expect(modelLimits('claude-3-5-haiku-latest').maxOutputTokens).toBe(8_192);
    expect(modelLimits('some-new-model', { contextWindowTokens: 500_000, modelMaxOutputTokens: 16_000 })).toEqual({
      contextWindow: 500_000,
      maxOutputTokens: 16_000,
    });
  });

  it('measures every threshold from the effective window: window − min(model max output, 20k)', () => {
    // 200k, 64k max output: the reserve is capped at 20k.
    expect(thresholdsForModel('claude-sonnet-4-6')).toEqual({
      contextWindow: 200_000,
      effectiveContextWindow: 180_000,
      autoCompactThreshold: 167_000,
      warningThreshold: 160_000,
      errorThreshold: 160_000,
      blockingLimit: 177_000,
    });
    // An 8k-output model reserves only 8k.
    expect(thresholdsForModel('claude-3-5-haiku').effectiveContextWindow).toBe(191_808);
    // 1M window.
    expect(thresholdsForModel('claude-sonnet-5')).toMatchObject({ effectiveContextWindow: 980_000, autoCompactThreshold: 967_000, blockingLimit: 977_000 });
    expect(calculateThresholds(1_000_000, 32_000).effectiveContextWindow).toBe(980_000);
    expect(calculateThresholds(1_000_000, 4_096).effectiveContextWindow).toBe(995_904);
  });

  it('names the level crossed; blocking only when autocompact is off', () => {
    const thresholds = thresholdsForModel('claude-sonnet-4-6');
    expect(contextLevel(100_000, thresholds, true)).toBe('ok');
    expect(contextLevel(161_000, thresholds, true)).toBe('error');
    expect(contextLevel(168_000, thresholds, true)).toBe('autocompact');
    expect(contextLevel(178_000, thresholds, true)).toBe('autocompact');
    expect(contextLevel(178_000, thresholds, false)).toBe('blocking');
  });

  it('autocompacts past the threshold, unless off, tripped, or snip freed enough', () => {
    const thresholds = thresholdsForModel('claude-sonnet-4-6');
    expect(shouldAutoCompact({ tokenCount: 167_000, thresholds, enabled: true, consecutiveFailures: 0 })).toBe(true);
    expect(shouldAutoCompact({ tokenCount: 166_999, thresholds, enabled: true, consecutiveFailures: 0 })).toBe(false);
    expect(shouldAutoCompact({ tokenCount: 170_000, thresholds, enabled: false, consecutiveFailures: 0 })).toBe(false);
    expect(shouldAutoCompact({ tokenCount: 170_000, thresholds, enabled: true, consecutiveFailures: 3 })).toBe(false);
    expect(shouldAutoCompact({ tokenCount: 170_000, thresholds, enabled: true, consecutiveFailures: 2 })).toBe(true);
    expect(shouldAutoCompact({ tokenCount: 170_000, thresholds, enabled: true, consecutiveFailures: 0, snipTokensFreed: 5_000 })).toBe(false);
    expect([0, 1, 2, 3, 4].map(isBreakerOpen)).toEqual([false, false, false, true, true]);
  });

  it('counts tokens from the last reply (input + cache + output) plus an estimate of what came after; a boundary starts over', () => {
    const messages: TranscriptMessage[] = [user('u', 'go'), assistant('a', [{ type: 'text', text: 'hi' }], 0, 1_000), user('u2', 'x'.repeat(400))];
    expect(tokenCountWithEstimation(messages)).toBe(1_010 + Math.ceil(JSON.stringify('x'.repeat(400)).length / 4));
    const afterBoundary = [...messages, boundary('b'), user('s', 'summary')];
    expect(tokenCountWithEstimation(afterBoundary)).toBe(Math.ceil(JSON.stringify('summary').length / 4));
  });
});

describe('compact boundary and the window after it', () => {
  it('sends only what follows the last boundary, and carries only that across continue-as-new', () => {
    const transcript = new Transcript([user('u1', 'old'), assistant('a1', [{ type: 'text', text: 'old answer' }]), boundary('b1'), user('s1', 'summary one')]);
    expect(transcript.windowStart).toBe(3);
    transcript.append(assistant('a2', [{ type: 'text', text: 'new' }]), boundary('b2'), user('s2', 'summary two'));
    expect(transcript.windowStart).toBe(6);
    expect(transcript.window().map((message) => message.uuid)).toEqual(['s2']);
    expect(transcript.carried().map((message) => message.uuid)).toEqual(['b2', 's2']);
    expect(transcript.ref().from).toBe(6);
    expect(getMessagesAfterCompactBoundary(transcript.messages).map((message) => message.uuid)).toEqual(['s2']);
    // A new run built from the carried part has its window at the same place.
    expect(new Transcript(transcript.carried()).window().map((message) => message.uuid)).toEqual(['s2']);
    expect(normalizeMessagesForApi(transcript.messages)).not.toContainEqual(expect.objectContaining({ type: 'compact_boundary' }));
  });
});

describe('snip', () => {
  const window: TranscriptMessage[] = [
    user('task', 'the task'),
    assistant('a1', [read('t1', 'a.txt')]),
    result('r1', 't1', 'A'.repeat(4_000)),
    assistant('a2', [read('t2', 'b.txt'), read('t3', 'c.txt')]),
    result('r2', 't2', 'B'.repeat(4_000)),
    result('r3', 't3', 'C'.repeat(4_000)),
    assistant('a3', [{ type: 'text', text: 'done' }]),
  ];

  it('cuts only between whole rounds', () => {
    expect(roundCutPoints(window)).toEqual([1, 3, 6]);
  });

  it('drops the oldest rounds, keeps the task and the latest round, and leaves every pair valid', () => {
    const plan = planSnip(window, 500);
    expect(plan).toMatchObject({ from: 1, to: 3 });
    expect(plan.tokensFreed).toBeGreaterThan(1_000);
    const transcript = new Transcript(window);
    transcript.removeFromWindow(plan.from, plan.to);
    expect(transcript.messages.map((message) => message.uuid)).toEqual(['task', 'a2', 'r2', 'r3', 'a3']);
    expectPairsValid(transcript.messages);
    // Asked for more than there is, it still keeps the last round.
    const most = planSnip(window, 1_000_000);
    expect(most.to).toBe(6);
    expect(planSnip([user('task', 'only')], 100)).toMatchObject({ from: 0, to: 0, tokensFreed: 0 });
  });
});

describe('microcompact (time-based)', () => {
  it('is due only when the last reply is older than the gap', () => {
    const messages = [user('u', 'go'), assistant('a', [{ type: 'text', text: 'x' }], 1_000)];
    expect(isMicrocompactDue(messages, 1_000 + 60_000, 60_000)).toBe(false);
    expect(isMicrocompactDue(messages, 1_000 + 60_001, 60_000)).toBe(true);
    expect(isMicrocompactDue([user('u', 'go'), assistant('a', [{ type: 'text', text: 'x' }])], 1e12, 1)).toBe(false); // no timestamp
  });

  it('clears all but the most recent compactable results, keeping ids and structure', () => {
    const messages: TranscriptMessage[] = [user('u', 'go')];
    for (let i = 0; i < 5; i++) messages.push(assistant(`a${i}`, [read(`t${i}`, `f${i}`)]), result(`r${i}`, `t${i}`, `content ${i} ${'z'.repeat(400)}`));
    messages.push(assistant('x', [{ type: 'tool_use', id: 'other', name: 'Agent', input: {} }]), result('rx', 'other', 'not compactable'));
    const { messages: out, cleared, tokensFreed } = microcompactMessages(messages, 3);
    expect(cleared).toBe(2);
    expect(tokensFreed).toBeGreaterThan(150);
    const contents = out
      .filter((message): message is UserMessage => message.type === 'user' && Array.isArray(message.message.content))
      .map((message) => (message.message.content[0] as { content: string }).content);
    expect(contents.slice(0, 2)).toEqual([CLEARED_TOOL_RESULT, CLEARED_TOOL_RESULT]);
    expect(contents[2]).toContain('content 2');
    expect(contents[5]).toBe('not compactable');
    expect(out[1]).toBe(messages[1]); // untouched messages stay the same objects
    expectPairsValid(out);
    // Idempotent.
    expect(microcompactMessages(out, 3).cleared).toBe(0);
  });
});

describe('compaction request and result', () => {
  it("asks for text only and the summary sections, with the user's instructions", () => {
    const instruction = compactInstruction('focus on tests');
    expect(instruction).toMatch(/Do not call any tools/);
    for (const section of [
      'Primary request and intent',
      'Files and code sections',
      'Errors and fixes',
      'Pending tasks',
      'Current work',
      'Optional next step',
    ]) {
      expect(instruction).toContain(section);
    }
    expect(instruction).toContain('focus on tests');
  });

  it('reads the summary without the analysis', () => {
    expect(extractSummary('<analysis>thinking</analysis>\n<summary>\nThe gist.\n</summary>')).toBe('The gist.');
    expect(extractSummary('<analysis>only thinking</analysis>')).toBeUndefined();
    expect(extractSummary('  ')).toBeUndefined();
    expect(extractSummary('Untagged summary.')).toBe('Untagged summary.');
  });

  it('restores the latest content of the most recently read files, within the caps', () => {
    const window: TranscriptMessage[] = [user('u', 'go')];
    for (let i = 0; i < 7; i++) window.push(assistant(`a${i}`, [read(`t${i}`, `f${i % 6}.txt`)]), result(`r${i}`, `t${i}`, `version ${i}`));
    window.push(assistant('big', [read('tb', 'huge.txt')]), result('rb', 'tb', 'h'.repeat(100_000)));
    const restored = recentlyReadFiles(window);
    expect(restored).toHaveLength(POST_COMPACT_MAX_FILES_TO_RESTORE);
    expect(restored[0].path).toBe('huge.txt');
    expect(restored[0].content.length).toBeLessThan(25_000); // capped per file
    expect(restored.find((file) => file.path === 'f0.txt')?.content).toBe('version 6'); // the latest read wins
  });

  it('replaces the window with a boundary and a summary message that keeps the latest request', () => {
    let n = 0;
    const window: TranscriptMessage[] = [user('u', 'Fix the parser'), assistant('a', [read('t', 'p.ts')]), result('r', 't', 'parser source')];
    const { boundary: marker, summaryMessage } = buildPostCompactMessages({
      summary: 'We looked at p.ts.',
      window,
      trigger: 'manual',
      preTokens: 5_000,
      now: 42,
      uuid: () => `id${n++}`,
    });
    expect(marker).toMatchObject({ type: 'compact_boundary', trigger: 'manual', preTokens: 5_000, messagesSummarized: 3, timestamp: 42 });
    expect(marker.postTokens).toBeGreaterThan(0);
    const text = JSON.stringify(summaryMessage.message.content);
    expect(text).toContain('We looked at p.ts.');
    expect(text).toContain('Fix the parser');
    expect(text).toContain('parser source');
    expect(summaryMessage).toMatchObject({ isCompactSummary: true, isMeta: true });
  });

  it('falls back to leaving out the oldest rounds when the compaction request is too long', async () => {
    const window: TranscriptMessage[] = [user('u', 'task')];
    for (let i = 0; i < 10; i++) window.push(assistant(`a${i}`, [read(`t${i}`, 'f')]), result(`r${i}`, `t${i}`, 'x'));
    window.push(assistant('end', [{ type: 'text', text: 'done' }]));
    const first = dropOldestRounds(window, 0)!;
    expect(first).toBeGreaterThan(0);
    expect(window[first].type).toBe('assistant'); // a round boundary: no result loses its call
    const second = dropOldestRounds(window, first)!;
    expect(second).toBeGreaterThan(first);

    const transcript = new Transcript(window);
    const skips: number[] = [];
    let n = 0;
    const generator = compactWindow(
      transcript,
      {
        uuid: () => `id${n++}`,
        now: () => 0,
        compactConversation: async (request) => {
          skips.push(request.skip);
          return skips.length < 3 ? { type: 'prompt_too_long', errorMessage: 'too long' } : { type: 'summary', text: '<summary>ok</summary>' };
        },
      },
      { trigger: 'auto', preTokens: 1_000 },
    );
    const yielded: TranscriptMessage[] = [];
    let step = await generator.next();
    while (!step.done) {
      yielded.push(step.value);
      step = await generator.next();
    }
    expect(skips[0]).toBe(0);
    expect(skips[1]).toBeGreaterThan(0);
    expect(skips[2]).toBeGreaterThan(skips[1]);
    expect(step.value).toMatchObject({ compacted: true });
    expect(yielded.map((message) => message.type)).toEqual(['compact_boundary', 'user']);
  });

  it('builds a compaction request that opens with a user turn and ends with the instruction', () => {
    const api = normalizeMessagesForApi([assistant('a', [{ type: 'text', text: 'mid-way' }]), user('u', 'continue')]);
    const messages = buildCompactMessages(api, 'SUMMARISE');
    expect(messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: OMITTED_ROUNDS_NOTE }] });
    expect(messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'continue' },
        { type: 'text', text: 'SUMMARISE' },
      ],
    });
    const endingWithAssistant = buildCompactMessages(
      normalizeMessagesForApi([user('u', 'q'), assistant('a', [{ type: 'text', text: 'answer' }])]),
      'SUMMARISE',
    );
    expect(endingWithAssistant.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'SUMMARISE' }] });
  });
});

describe('tool-result budget (seed §2.7 layer 1)', () => {
  it('gives each call its tool cap, or its share of the message budget when many run together', () => {
    expect(toolResultBudget(100_000, 1)).toBe(100_000);
    expect(toolResultBudget(100_000, 4)).toBe(50_000);
    expect(toolResultBudget(20_000, 4)).toBe(20_000);
    expect(toolResultBudget(100_000, 500)).toBe(MIN_TOOL_RESULT_BUDGET_CHARS);
  });
});

describe('fitMaxTokens', () => {
  it('lowers the output cap to what fits after the input, never below the floor', () => {
    expect(fitMaxTokens(8_192, 200_000, 10_000)).toBe(8_192);
    expect(fitMaxTokens(32_000, 200_000, 167_650)).toBe(200_000 - 167_650 - 1_000 - Math.ceil(167_650 * 0.02));
    expect(fitMaxTokens(64_000, 200_000, 199_000)).toBe(MIN_FITTED_MAX_TOKENS);
  });
});
