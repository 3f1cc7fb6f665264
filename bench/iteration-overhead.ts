/**
 * Benchmark: the fixed cost of one iteration of the query loop (model call → tool → model call).
 *
 *   npm run bench:overhead [-- [rounds] [iterations] [--note TEXT]]
 *   (or: npx tsx bench/iteration-overhead.ts [rounds] [iterations])
 *
 * One query of 50 iterations (default) against an instant scripted model (no delays); in
 * iteration i the model asks to `Read` t<i>.txt, a one-line file, and then answers with text.
 * Repeated for R rounds (default 5) after one warm-up. Measured: the query's duration_ms (from the
 * result message) and the client's wall time to the conversation's close, per iteration; and from
 * the history, tasks and signals per iteration and where the time goes: the gaps between
 * Scheduled → Started → Completed of workflow tasks and of activities (per activity type), from
 * the events' timestamps. Results are appended to bench/results/iteration-overhead.md.
 */
import {
  type HistorySummary,
  PER_ITERATION_HEADERS,
  PER_ITERATION_LEGEND,
  benchArgs,
  formatBytes,
  markdownTable,
  median,
  perIterationCounts,
  percentile,
  progress,
  publishResults,
  readFilesLoop,
  runBench,
  runContext,
  sum,
  summarizeHistory,
  withBenchStack,
} from './support';

interface Round {
  wallMs: number;
  durationMs: number;
  history: HistorySummary;
}

async function main(): Promise<void> {
  const { positionals, note } = benchArgs();
  const rounds = Number(positionals[0] ?? 5);
  const iterations = Number(positionals[1] ?? 50);
  if (![rounds, iterations].every((value) => Number.isInteger(value) && value > 0)) {
    throw new Error(`rounds and iterations must be positive integers: ${positionals.join(' ')}`);
  }
  const context = runContext();
  const files: Record<string, string> = {};
  for (let index = 0; index < iterations; index++) files[`t${index}.txt`] = `tiny file ${index}\n`;
  const loop = readFilesLoop((index) => `t${index}.txt`);

  const measured: Round[] = [];
  await withBenchStack({ respond: loop.respond, files }, async (stack) => {
    for (let round = 0; round <= rounds; round++) {
      const query = await loop.run(stack, iterations);
      if (query.result.is_error) throw new Error(`round ${round} failed: ${query.result.subtype}: ${query.result.result}`);
      const label = round === 0 ? 'warm-up' : `round ${round}/${rounds}`;
      progress(`${label}: ${(query.result.duration_ms / iterations).toFixed(0)} ms per iteration`);
      if (round === 0) continue;
      const history = await summarizeHistory(stack.client, query.conversationId, query.firstRunId);
      measured.push({ wallMs: query.wallMs, durationMs: query.result.duration_ms, history });
    }
  });

  const roundRows = measured.map((round, index) => [
    index + 1,
    round.durationMs,
    round.wallMs.toFixed(0),
    (round.durationMs / iterations).toFixed(1),
    (round.wallMs / iterations).toFixed(1),
    ...perIterationCounts(round.history, iterations),
    round.history.runs,
    formatBytes(round.history.bytes),
  ]);

  // Gaps of all measured rounds together; "ms / iteration" is their sum divided by the iterations.
  const phases = new Map<string, number[]>();
  const addPhase = (name: string, values: number[]) => phases.set(name, [...(phases.get(name) ?? []), ...values]);
  for (const { history } of measured) {
    addPhase('workflow task: Scheduled → Started', history.gaps.workflowTaskScheduleToStart);
    addPhase('workflow task: Started → Completed', history.gaps.workflowTaskStartToComplete);
    for (const [type, values] of Object.entries(history.gaps.activityScheduleToStart)) addPhase(`activity ${type}: Scheduled → Started`, values);
    for (const [type, values] of Object.entries(history.gaps.activityStartToClose)) addPhase(`activity ${type}: Started → Completed`, values);
  }
  const totalIterations = iterations * measured.length;
  const phaseRows = [...phases].sort(([a], [b]) => a.localeCompare(b)).map(([name, values]) => [
    name,
    (values.length / totalIterations).toFixed(2),
    median(values).toFixed(0),
    percentile(values, 90).toFixed(0),
    Math.max(...values).toFixed(0),
    (sum(values) / totalIterations).toFixed(1),
  ]);

  const perIterationSum = (suffix: string) =>
    sum([...phases].filter(([name]) => name.endsWith(suffix)).map(([, values]) => sum(values))) / totalIterations;

  const durations = measured.map((round) => round.durationMs / iterations);
  const walls = measured.map((round) => round.wallMs / iterations);
  await publishResults('iteration-overhead', {
    title: `overhead per iteration (${iterations} iterations × ${rounds} rounds, instant model)`,
    context,
    note,
    body: [
      `Median per iteration: **${median(durations).toFixed(1)} ms** from duration_ms, ${median(walls).toFixed(1)} ms from the client's wall time.`,
      '',
      markdownTable(
        [
          'round',
          'duration_ms',
          'wall ms',
          'ms / iteration (duration)',
          'ms / iteration (wall)',
          ...PER_ITERATION_HEADERS,
          'runs',
          'history bytes',
        ],
        roundRows,
      ),
      '',
      'Where the time goes (event timestamps, all measured rounds):',
      '',
      markdownTable(['phase', 'count / iteration', 'median ms', 'p90 ms', 'max ms', 'ms / iteration (sum)'], phaseRows),
      '',
      `Per iteration, waiting in task queues (all Scheduled → Started) sums to ${perIterationSum('Scheduled → Started').toFixed(1)} ms; ` +
        `running (all Started → Completed) to ${perIterationSum('Started → Completed').toFixed(1)} ms.`,
      '',
      'Phases overlap (a streamed tool runs while its model call is still open), so the sums need not add up to the ' +
        'iteration time; local activities run inside workflow tasks (their time is in Started → Completed). ' +
        `${PER_ITERATION_LEGEND} Wall: client side, from start until the one-shot conversation closed.`,
    ],
  });
}

runBench(main);
