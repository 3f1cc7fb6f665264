/**
 * Benchmark: K subagents of one message run side by side (Claude Code's Agent tool as child
 * workflows, `workflows/subagents.ts`).
 *
 *   npm run bench:subagents [-- [rounds] [agents] [delayMs] [--note TEXT]]
 *   (or: npx tsx bench/parallel-subagents.ts [rounds] [agents] [delayMs]), default 5 3 1000
 *
 * Two one-shot queries per round, after one warm-up of each:
 *  - parallel: the parent's first answer is one message with K `Agent` calls (general-purpose);
 *    each child's model answers with text after D ms (`delayMs`); then the parent answers with text.
 *  - serial: the same K calls as K messages of one `Agent` call each, then the text answer.
 * A request that does not offer the `Agent` tool is a child's; the parent's does. The mode is in
 * the prompt and the turn is decided from the request (tool results so far), so a retried model
 * call gets the same answer. Measured: the query's wall time (client side, start until the
 * one-shot conversation closed with its result) and its `duration_ms`, against the sum of the
 * children's delays (K × D) and the slowest (D); from the parent's history, each child's
 * Initiated → Started and Started → Completed; from the scripted server, how far apart the
 * children's model requests arrived. Everything is real (dev server, worker, SDK, scripted model
 * server on loopback). Results are appended to bench/results/parallel-subagents.md.
 */
import { tsToMs } from '@temporalio/common/lib/time';
import type { RecordedRequest, Responder, ScriptedBlock } from '../testing/scripted-model-server';
import { type BenchStack, benchArgs, markdownTable, median, progress, publishResults, runBench, runContext, runOneShotQuery, withBenchStack } from './support';

type Mode = 'parallel' | 'serial';
const MODES: readonly Mode[] = ['parallel', 'serial'];

interface Round {
  mode: Mode;
  wallMs: number;
  durationMs: number;
  /** First to last arrival of the children's model requests at the scripted server. */
  childRequestSpreadMs: number;
  /** Per child, from the parent's history: ChildWorkflowExecutionInitiated → Started. */
  childStartMs: number[];
  /** Per child: ChildWorkflowExecutionStarted → Completed (D plus the child's own loop). */
  childRunMs: number[];
}

const toolNames = (request: RecordedRequest): string[] => (request.body.tools ?? []).map((tool: { name: string }) => tool.name);
/** A child's requests do not offer Agent; the parent's do. */
const isChild = (request: RecordedRequest): boolean => !toolNames(request).includes('Agent');

/** tool_result blocks in a request: how many Agent calls the parent has had answered. */
function toolResults(request: RecordedRequest): number {
  let count = 0;
  for (const message of request.body.messages ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) if ((block as { type?: string }).type === 'tool_result') count++;
  }
  return count;
}

const agentCall = (index: number, mode: Mode): ScriptedBlock => ({
  type: 'tool_use',
  id: `toolu_${mode}_${index}`,
  name: 'Agent',
  input: { description: `task ${index}`, prompt: `Do task ${index} and report back in one line.`, subagent_type: 'general-purpose' },
});

function responder(agents: number, delayMs: number): Responder {
  return (request) => {
    if (isChild(request)) return { content: [{ type: 'text', text: 'Task done.' }], delayMs };
    const mode = /mode=(parallel|serial)/.exec(JSON.stringify(request.body.messages?.[0]?.content ?? ''))?.[1] as Mode | undefined;
    if (!mode) throw new Error('parent request without mode=parallel|serial in its first message');
    const done = toolResults(request);
    if (done >= agents) return { content: [{ type: 'text', text: `All ${agents} agents reported.` }] };
    if (mode === 'parallel') return { content: Array.from({ length: agents }, (_, index) => agentCall(index, mode)) };
    return { content: [agentCall(done, mode)] };
  };
}

/** Child timings from the parent's history (one run: these queries never continue-as-new). */
async function childTimings(stack: BenchStack, conversationId: string, runId: string): Promise<{ startMs: number[]; runMs: number[] }> {
  const history = await stack.client.workflow.getHandle(conversationId, runId).fetchHistory();
  const time = new Map<number, number>();
  const startMs: number[] = [];
  const runMs: number[] = [];
  for (const event of history.events ?? []) {
    const at = tsToMs(event.eventTime);
    time.set(Number(event.eventId), at);
    const started = event.childWorkflowExecutionStartedEventAttributes;
    if (started) startMs.push(at - time.get(Number(started.initiatedEventId))!);
    const completed = event.childWorkflowExecutionCompletedEventAttributes;
    if (completed) runMs.push(at - time.get(Number(completed.startedEventId))!);
  }
  return { startMs, runMs };
}

async function runRound(stack: BenchStack, mode: Mode, agents: number): Promise<Round> {
  const firstRequest = stack.model!.requests.length;
  const query = await runOneShotQuery(stack, `Run ${agents} general-purpose agents (mode=${mode}).`, { maxTurns: agents + 5 });
  if (query.result.is_error) throw new Error(`${mode} query failed: ${query.result.subtype}: ${query.result.result}`);
  const children = stack.model!.requests.slice(firstRequest).filter(isChild);
  if (children.length !== agents) throw new Error(`${mode}: expected ${agents} child model requests, saw ${children.length}`);
  const arrivals = children.map((request) => request.receivedAt);
  const { startMs, runMs } = await childTimings(stack, query.conversationId, query.firstRunId);
  if (runMs.length !== agents) throw new Error(`${mode}: expected ${agents} completed children in the history, saw ${runMs.length}`);
  return {
    mode,
    wallMs: query.wallMs,
    durationMs: query.result.duration_ms,
    childRequestSpreadMs: Math.max(...arrivals) - Math.min(...arrivals),
    childStartMs: startMs,
    childRunMs: runMs,
  };
}

async function main(): Promise<void> {
  const { positionals, note } = benchArgs();
  const rounds = Number(positionals[0] ?? 5);
  const agents = Number(positionals[1] ?? 3);
  const delayMs = Number(positionals[2] ?? 1_000);
  if (![rounds, agents].every((value) => Number.isInteger(value) && value > 0) || !Number.isInteger(delayMs) || delayMs < 0) {
    throw new Error(`rounds and agents must be positive integers, delayMs a non-negative integer: ${positionals.join(' ')}`);
  }
  const context = runContext();
  const ideal: Record<Mode, number> = { parallel: delayMs, serial: agents * delayMs };

  const measured: Round[] = [];
  await withBenchStack({ respond: responder(agents, delayMs) }, async (stack) => {
    // One warm-up of each mode, then alternate so drift affects both equally.
    for (let round = 0; round <= rounds; round++) {
      for (const mode of MODES) {
        const result = await runRound(stack, mode, agents);
        const label = round === 0 ? 'warm-up' : `round ${round}/${rounds}`;
        progress(
          `${label} ${mode}: wall ${result.wallMs.toFixed(0)} ms, duration_ms ${result.durationMs}, children's requests within ${result.childRequestSpreadMs} ms`,
        );
        if (round > 0) measured.push(result);
      }
    }
  });

  const of = (mode: Mode) => measured.filter((round) => round.mode === mode);
  const ms = (value: number) => value.toFixed(0);
  const summaryRow = (mode: Mode) => {
    const rows = of(mode);
    const wall = rows.map((round) => round.wallMs);
    const wallMedian = median(wall);
    return [
      mode,
      mode === 'parallel' ? `1 message × ${agents} Agent calls` : `${agents} messages × 1 Agent call`,
      rows.length,
      `${ms(wallMedian)} (${ms(Math.min(...wall))}–${ms(Math.max(...wall))})`,
      ms(median(rows.map((round) => round.durationMs))),
      `${ideal[mode]} (${mode === 'parallel' ? 'D' : 'K × D'})`,
      ms(wallMedian - ideal[mode]),
      `${(wallMedian / delayMs).toFixed(2)}× D, ${(wallMedian / (agents * delayMs)).toFixed(2)}× K·D`,
      ms(median(rows.map((round) => round.childRequestSpreadMs))),
      ms(median(rows.flatMap((round) => round.childStartMs))),
      ms(median(rows.flatMap((round) => round.childRunMs))),
    ];
  };
  const perRound = measured.map((round, index) => [
    Math.floor(index / MODES.length) + 1,
    round.mode,
    ms(round.wallMs),
    round.durationMs,
    ms(round.wallMs - ideal[round.mode]),
    round.childRequestSpreadMs,
    round.childStartMs.map(ms).join(' / '),
    round.childRunMs.map(ms).join(' / '),
  ]);
  const parallelWall = median(of('parallel').map((round) => round.wallMs));
  const serialWall = median(of('serial').map((round) => round.wallMs));

  await publishResults('parallel-subagents', {
    title: `${agents} subagents in one message vs one per message (D = ${delayMs} ms)`,
    context,
    note,
    body: [
      `K = ${agents} general-purpose Agent calls, each child's model answering after D = ${delayMs} ms: sum of the delays K × D = ` +
        `${agents * delayMs} ms, slowest D = ${delayMs} ms. ${rounds} rounds after one warm-up of each mode, alternating.`,
      '',
      markdownTable(
        [
          'mode',
          'shape',
          'rounds',
          'median wall ms (min–max)',
          'median duration_ms',
          'ideal ms',
          'median wall − ideal ms',
          'median wall in D and K·D',
          "children's model requests within ms (median)",
          'child Initiated → Started ms (median)',
          'child Started → Completed ms (median)',
        ],
        MODES.map(summaryRow),
      ),
      '',
      `Parallel took ${ms(parallelWall)} ms against ${agents * delayMs} ms of summed delays and ${delayMs} ms for the slowest; ` +
        `serial ${ms(serialWall)} ms: ${(serialWall / parallelWall).toFixed(2)}× the parallel time ` +
        `(${ms(serialWall - parallelWall)} ms saved, ideal ${(agents - 1) * delayMs} ms).`,
      '',
      "Wall: client side, from `start` until the one-shot conversation closed with its result. duration_ms: the result message's. " +
        "Children's model requests within: first to last arrival of the children's model requests at the scripted server " +
        '(parallel: how close together they started; serial: the chain of children). Child Initiated → Started / Started → ' +
        "Completed: event times of the ChildWorkflowExecution* events in the parent's history, over all children of all rounds.",
      '',
      'Per round:',
      '',
      markdownTable(
        [
          'round',
          'mode',
          'wall ms',
          'duration_ms',
          'wall − ideal ms',
          "children's requests within ms",
          'child Initiated → Started ms',
          'child Started → Completed ms',
        ],
        perRound,
      ),
    ],
  });
}

runBench(main);
