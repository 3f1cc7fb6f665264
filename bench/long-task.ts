/**
 * Benchmark: one long task whose context crosses the autocompact threshold several times.
 *
 *   npm run bench:long [-- [N] [--note TEXT]]     (or: npx tsx bench/long-task.ts [N])
 *
 * One one-shot conversation, default model and context window (200k: autocompact at 167k), whose
 * single query makes N model iterations (default 500): in each the scripted model asks to `Read`
 * a distinct 4 KB file of random hex (~1.2k tokens with the Read tool's line numbers). The
 * scripted server reports `usage.input_tokens` as chars/4 of the real request, so the reported
 * context grows with the transcript and crosses the threshold every ~130 files; the workflow
 * then compacts (a `compactConversation` call, answered with a `<summary>` naming the files read
 * so far) and continues-as-new once the run is past 500 events. After N files the model answers
 * with text.
 *
 * The responder decides each answer from the request alone (so a retried call gets the same one):
 * files read = the count named by the last summary message ("This session is being continued …
 * Read files f0..fK") plus the tool_result blocks after it.
 *
 * Reported: compactions (the workflow's status, queried right after the result, and the
 * compaction requests the model saw), continue-as-new runs, history bytes over all runs and per
 * run, the largest event, bytes and events per iteration, wall time and the SDK's payload-size
 * warnings. Appended to bench/results/long-task.md.
 */
import { randomBytes } from 'node:crypto';
import type { ResultMessage } from '../common/result';
import { type RecordedRequest, type ScriptedTurn, estimateInputTokens } from '../testing/scripted-model-server';
import type { ConversationEvent, ConversationStatus } from '../workflows/definitions';
import { shorten } from '../common/cut-text';
import {
  PER_ITERATION_HEADERS,
  PER_ITERATION_LEGEND,
  type BenchStack,
  type RunSummary,
  benchArgs,
  formatBytes,
  largePayloadWarningCount,
  markdownTable,
  perIterationCounts,
  progress,
  publishResults,
  runBench,
  runContext,
  summarizeHistory,
  withBenchStack,
  BENCH_PERMISSIONS,
} from './support';

const FILE_BYTES = 4096;
const LINE_BYTES = 64; // 63 hex digits and a newline: 64 lines per file
/** Temporal's limit on one payload (a single event must stay far below it). */
const TEMPORAL_PAYLOAD_LIMIT = 2 * 1024 * 1024;
/** How a compaction request is recognised: the instruction `activities/compact-conversation.ts` appends. */
const COMPACTION_MARKER = 'write a detailed summary of the conversation';
/** Opens the user message that replaces a compacted window (`buildPostCompactMessages`). */
const SUMMARY_MARKER = 'This session is being continued';
const SUMMARY_COUNT = /Read files f0\.\.f(\d+) so far/;
/** Events shown when the conversation did not end well. */
const LAST_EVENTS_SHOWN = 12;

const fileName = (index: number) => `f${index}.txt`;

/** 4096 bytes of random hex in 64 lines, unique to each file. */
function uniqueFileContent(): string {
  const lines: string[] = [];
  for (let line = 0; line < FILE_BYTES / LINE_BYTES; line++)
    lines.push(
      randomBytes(LINE_BYTES / 2)
        .toString('hex')
        .slice(0, LINE_BYTES - 1),
    );
  return `${lines.join('\n')}\n`;
}

type RequestMessage = { role: string; content: unknown };

function blocksOf(message: RequestMessage | undefined): Array<{ type?: string; text?: string }> {
  return Array.isArray(message?.content) ? (message.content as Array<{ type?: string; text?: string }>) : [];
}

function textOf(message: RequestMessage | undefined): string {
  if (typeof message?.content === 'string') return message.content;
  return blocksOf(message)
    .map((block) => (block.type === 'text' ? (block.text ?? '') : ''))
    .join('\n');
}

/** Files read so far, from the request: the last summary's count plus the tool results after it. */
function filesRead(messages: RequestMessage[]): number {
  let start = 0;
  let base = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const text = messages[i].role === 'user' ? textOf(messages[i]) : '';
    if (!text.includes(SUMMARY_MARKER)) continue;
    const named = SUMMARY_COUNT.exec(text);
    base = named ? Number(named[1]) + 1 : 0;
    start = i + 1;
    break;
  }
  let results = 0;
  for (const message of messages.slice(start)) for (const block of blocksOf(message)) if (block.type === 'tool_result') results++;
  return base + results;
}

/** What the model saw of one compaction. */
interface CompactionSeen {
  filesRead: number;
  /** chars/4 of the compaction request (what the server reports as its input tokens). */
  requestTokens: number;
  /** The largest main-loop request before it (the context that crossed the threshold). */
  contextBefore: number;
  atMs: number;
}

function longTaskResponder(iterations: number, startedAt: () => number) {
  const compactions: CompactionSeen[] = [];
  let modelCalls = 0;
  let largestRequestTokens = 0;
  let contextSinceCompaction = 0;
  const respond = (request: RecordedRequest): ScriptedTurn => {
    const messages = (request.body.messages ?? []) as RequestMessage[];
    const tokens = estimateInputTokens(request.body);
    largestRequestTokens = Math.max(largestRequestTokens, tokens);
    const done = filesRead(messages);
    if (textOf(messages.at(-1)).includes(COMPACTION_MARKER)) {
      compactions.push({ filesRead: done, requestTokens: tokens, contextBefore: contextSinceCompaction, atMs: performance.now() - startedAt() });
      contextSinceCompaction = 0;
      const summary = done > 0 ? `Read files f0..f${done - 1} so far; keep reading.` : 'Read no files so far; keep reading.';
      return { content: [{ type: 'text', text: `<analysis>Files are read one per turn, in order.</analysis>\n<summary>${summary}</summary>` }] };
    }
    modelCalls++;
    contextSinceCompaction = Math.max(contextSinceCompaction, tokens);
    if (done < iterations) return { content: [{ type: 'tool_use', name: 'Read', input: { file_path: fileName(done) } }] };
    return { content: [{ type: 'text', text: `Read all ${done} files.` }] };
  };
  return { respond, compactions, modelCalls: () => modelCalls, largestRequestTokens: () => largestRequestTokens };
}

interface Outcome {
  conversationId: string;
  firstRunId: string;
  wallMs: number;
  result?: ResultMessage;
  /** The workflow failed, or ended without a result. */
  failure?: string;
  status?: ConversationStatus;
  statusError?: string;
  events?: ConversationEvent[];
  /** JSON bytes of the `events` query's answer. */
  eventsPageBytes?: number;
  /** The SDK's payload-size warnings counted when the conversation had closed (before the queries). */
  warningsAtClose: number;
}

/** Starts the one-shot conversation, waits for it to close, then queries its status and events. */
async function runLongTask(stack: BenchStack, iterations: number, markStart: () => void): Promise<Outcome> {
  markStart();
  const startedAt = performance.now();
  const { conversationId, handle } = await stack.api.start({
    prompt: `Read ${fileName(0)} to ${fileName(iterations - 1)}, one file per turn.`,
    taskQueue: stack.taskQueue,
    // Default model and window: only the turn limit is raised above the task.
    config: { cwd: stack.workspace, oneShot: true, maxTurns: iterations + 10, permissions: BENCH_PERMISSIONS },
  });
  const outcome: Outcome = { conversationId, firstRunId: handle.firstExecutionRunId, wallMs: 0, warningsAtClose: 0 };
  try {
    const summary = await stack.api.summary(conversationId);
    outcome.result = summary.lastResult;
    if (!summary.lastResult) outcome.failure = `ended (${summary.endedBy}) without a result`;
  } catch (error) {
    outcome.failure = `workflow failed: ${error instanceof Error ? `${error.message}${error.cause instanceof Error ? ` — ${error.cause.message}` : ''}` : String(error)}`;
  }
  outcome.wallMs = performance.now() - startedAt;
  outcome.warningsAtClose = largePayloadWarningCount();
  // The run has closed; the worker still answers queries by replaying its (short) last run.
  try {
    outcome.status = await stack.api.status(conversationId);
  } catch (error) {
    outcome.statusError = error instanceof Error ? error.message : String(error);
  }
  const page = await stack.api.events(conversationId).catch(() => undefined);
  outcome.events = page?.events;
  outcome.eventsPageBytes = page ? Buffer.byteLength(JSON.stringify(page)) : undefined;
  return outcome;
}

/**
 * What each continue-as-new input carries: JSON bytes of each field of `carried` in the
 * WorkflowExecutionStarted event of every run after the first (the 3 largest, and the total).
 */
async function carriedBreakdown(stack: BenchStack, conversationId: string, runs: RunSummary[]): Promise<Array<Array<string | number>>> {
  const rows: Array<Array<string | number>> = [];
  for (const [index, run] of runs.entries()) {
    if (index === 0) continue;
    const history = await stack.client.workflow.getHandle(conversationId, run.runId).fetchHistory();
    const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    const input = payload?.data ? (JSON.parse(Buffer.from(payload.data).toString('utf8')) as { carried?: Record<string, unknown> }) : undefined;
    const carried = input?.carried ?? {};
    const fields = Object.entries(carried)
      .map(([key, value]) => [key, Buffer.byteLength(JSON.stringify(value) ?? '')] as const)
      .sort(([, a], [, b]) => b - a);
    const recentEvents = Array.isArray(carried.recentEvents) ? carried.recentEvents.length : 0;
    const messages = Array.isArray(carried.messages) ? carried.messages.length : 0;
    rows.push([
      index + 1,
      formatBytes(payload?.data?.length ?? 0),
      fields
        .slice(0, 3)
        .map(([key, bytes]) => `${key} ${formatBytes(bytes)}`)
        .join(', '),
      messages,
      recentEvents,
    ]);
  }
  return rows;
}

function describeEvent(event: ConversationEvent): string {
  const message = event.message as {
    type: string;
    subtype?: string;
    content?: unknown;
    level?: string;
    result?: string;
    trigger?: string;
    preTokens?: number;
    postTokens?: number;
    message?: { content?: unknown };
  };
  const brief = (value: unknown) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    return shorten(text, 160);
  };
  switch (message.type) {
    case 'compact_boundary':
      return `compact_boundary (${message.trigger}, ${message.preTokens} → ${message.postTokens} tokens)`;
    case 'result':
      return `result ${message.subtype}: ${brief(message.result)}`;
    case 'system':
      return `system ${message.level ?? ''}: ${brief(message.content)}`;
    default:
      return `${message.type}: ${brief(message.message?.content ?? message.content ?? '')}`;
  }
}

async function main(): Promise<void> {
  const { positionals, note } = benchArgs();
  const iterations = Number(positionals[0] ?? 500);
  if (!Number.isInteger(iterations) || iterations < 1) throw new Error(`the iteration count must be a positive integer: ${positionals[0]}`);
  const context = runContext();
  const files: Record<string, string> = {};
  for (let index = 0; index < iterations; index++) files[fileName(index)] = uniqueFileContent();

  let startedAt = 0;
  const model = longTaskResponder(iterations, () => startedAt);
  const { outcome, history, carried } = await withBenchStack({ respond: model.respond, files }, async (stack) => {
    progress(`N=${iterations}: running…`);
    const outcome = await runLongTask(stack, iterations, () => (startedAt = performance.now()));
    progress(
      `N=${iterations}: ${outcome.result ? `${outcome.result.subtype} (${outcome.result.terminal_reason})` : outcome.failure}, ${(outcome.wallMs / 1000).toFixed(1)} s; reading the history…`,
    );
    const history = await summarizeHistory(stack.client, outcome.conversationId, outcome.firstRunId);
    const carried = await carriedBreakdown(stack, outcome.conversationId, history.perRun);
    return { outcome, history, carried };
  });
  const warnings = largePayloadWarningCount();

  const { result, status } = outcome;
  const unique = iterations * FILE_BYTES;
  const ok = result?.subtype === 'success' && !outcome.failure;
  const outcomeText = result
    ? `${result.subtype} (terminal_reason ${result.terminal_reason}, ${result.num_turns} turns)${result.is_error ? `: ${result.result}` : ''}`
    : (outcome.failure ?? 'no result');
  const compactionsInHistory = history.perRun.reduce(
    (total, run) => total + (run.activities.compactConversation ?? 0) + (run.localActivities.compactConversation ?? 0),
    0,
  );
  const boundariesInFeed = outcome.events?.filter((event) => event.message.type === 'compact_boundary').length;
  const statusCompactions = status ? String(status.context.compactions) : `unavailable (${outcome.statusError})`;
  const largest = history.largestEvent;

  const summaryRows: Array<[string, string | number]> = [
    ['iterations (files read)', iterations],
    ['result', outcomeText],
    ['compactions (status.context.compactions)', statusCompactions],
    ['compaction requests the model saw / compactConversation activities in history', `${model.compactions.length} / ${compactionsInHistory}`],
    ['compact_boundary events in the feed (its tail only)', boundariesInFeed ?? 'unavailable'],
    ['main-loop model calls', model.modelCalls()],
    ['largest request (chars/4, reported input tokens)', model.largestRequestTokens()],
    [
      'context at the end (status.context.tokens / autocompact threshold)',
      status ? `${status.context.tokens} / ${status.context.autoCompactThreshold} (window ${status.context.contextWindow})` : 'unavailable',
    ],
    ['continue-as-new runs', history.runs],
    ['history events (all runs)', history.events],
    ['history bytes (all runs)', `${formatBytes(history.bytes)} (${history.bytes})`],
    ['unique file content', `${formatBytes(unique)} (${unique})`],
    ['history ÷ unique content', `${(history.bytes / unique).toFixed(2)}×`],
    ['history bytes / iteration', formatBytes(history.bytes / iterations)],
    [
      'largest event',
      `${formatBytes(largest.bytes)} (${largest.type.replace(/^EVENT_TYPE_/, '')}), ${((100 * largest.bytes) / TEMPORAL_PAYLOAD_LIMIT).toFixed(1)}% of 2 MB`,
    ],
    ['wall time (start → closed)', `${(outcome.wallMs / 1000).toFixed(1)} s`],
    ['ms / iteration (wall)', (outcome.wallMs / iterations).toFixed(1)],
    ['result duration_ms / 1000', result ? (result.duration_ms / 1000).toFixed(1) : '–'],
    ['SDK payload-size warnings (TMPRL1103, > 512 KB): all / by the time the conversation closed', `${warnings} / ${outcome.warningsAtClose}`],
    [
      '`events` query answer (JSON, asked after the close)',
      outcome.eventsPageBytes === undefined ? 'unavailable' : `${formatBytes(outcome.eventsPageBytes)}, ${outcome.events?.length} events`,
    ],
  ];
  const perIteration = perIterationCounts(history, iterations);

  const compactionRows = model.compactions.map((seen, index) => [
    index + 1,
    seen.filesRead,
    seen.contextBefore,
    seen.requestTokens,
    (seen.atMs / 1000).toFixed(1),
  ]);
  /** Activities of a type in a run, local or not. */
  const ran = (run: RunSummary, type: string) => (run.activities[type] ?? 0) + (run.localActivities[type] ?? 0);
  const runRows = history.perRun.map((run, index) => [
    index + 1,
    ran(run, 'runTool'),
    ran(run, 'callModel'),
    ran(run, 'compactConversation'),
    run.events,
    `${formatBytes(run.bytes)} (${run.bytes})`,
    ran(run, 'runTool') ? formatBytes(run.bytes / ran(run, 'runTool')) : '–',
    `${formatBytes(run.largestEvent.bytes)} (${run.largestEvent.type.replace(/^EVENT_TYPE_/, '')})`,
  ]);
  const heaviest = Object.entries(history.eventBytes)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 5)
    .map(([type, bytes]) => [
      type.replace(/^EVENT_TYPE_/, ''),
      history.eventCounts[type],
      formatBytes(bytes),
      `${((100 * bytes) / history.bytes).toFixed(1)}%`,
    ]);

  const body = [
    markdownTable(['measure', 'value'], summaryRows),
    '',
    markdownTable(PER_ITERATION_HEADERS, [perIteration]),
    '',
    `History bytes: \`temporal.api.history.v1.History.encode(h).finish().length\` summed over every run of the continue-as-new chain. ${PER_ITERATION_LEGEND} Wall: client side, from start until the one-shot conversation closed.`,
    '',
    'Compactions as the model saw them (files read when asked for the summary; the largest main-loop request before it; the compaction request; seconds since start):',
    '',
    markdownTable(['#', 'files read', 'context before (tokens)', 'compaction request (tokens)', 's'], compactionRows),
    '',
    'History per run (activities and local activities in it; runTool = iterations):',
    '',
    markdownTable(['run', 'runTool', 'callModel', 'compactConversation', 'events', 'history bytes', 'bytes / iteration', 'largest event'], runRows),
    '',
    'What each continue-as-new input carries (the WorkflowExecutionStarted payload of each later run; JSON bytes of its largest `carried` fields):',
    '',
    markdownTable(['run', 'input payload', 'largest fields', 'transcript messages', 'feed events'], carried),
    '',
    'Where the bytes are (the 5 heaviest event types):',
    '',
    markdownTable(['event type', 'events', 'bytes', 'share of history'], heaviest),
  ];
  if (!ok) {
    body.push('', `**The task did not complete.** ${outcomeText}`);
    if (result) body.push('', `Result text: ${JSON.stringify(result.result)}; transitions: ${result.transitions.join(', ') || 'none'}`);
    if (outcome.events?.length) {
      body.push(
        '',
        `Last ${LAST_EVENTS_SHOWN} events of the feed:`,
        '',
        ...outcome.events.slice(-LAST_EVENTS_SHOWN).map((event) => `- #${event.seq} ${describeEvent(event)}`),
      );
    }
  }
  await publishResults('long-task', { title: `one ${iterations}-iteration task across autocompactions`, context, note, body });
  if (!ok) process.exitCode = 1;
}

runBench(main);
