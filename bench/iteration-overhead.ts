/**
 * Benchmark: the fixed cost of one iteration of the query loop (model call → tool → model call).
 *
 *   npm run bench:overhead [-- [rounds] [iterations] [--model-process] [--note TEXT]]
 *   (or: npx tsx bench/iteration-overhead.ts [rounds] [iterations] [--model-process])
 *
 * One query of 50 iterations (default) against an instant scripted model (no delays); in
 * iteration i the model asks to `Read` t<i>.txt, a one-line file, and then answers with text.
 * Repeated for R rounds (default 5) after one warm-up. Measured, per iteration: the loop's time on
 * the worker (its first model request to its last, through the Anthropic client's fetch), the
 * client's wall time to the conversation's close, and the query's duration_ms; and from
 * the history, tasks and signals per iteration and where the time goes: the gaps between
 * Scheduled → Started → Completed of workflow tasks and of activities (per activity type), from
 * the events' timestamps, and the time callModel spent inside its function (its result's
 * durationMs); and the CPU time per iteration of the worker (per thread), the dev server and (with
 * --model-process, the scripted model server in its own process) the model server.
 * Results are appended to bench/results/iteration-overhead.md.
 */
import { cpuSnapshot, cpuUsage } from './cpu';
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
  /** First model request → last, on the worker: `iterations` loop iterations (n tool rounds, then the answer). */
  loopMs: number;
  history: HistorySummary;
}

async function main(): Promise<void> {
  const { positionals, note, modelProcess } = benchArgs();
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
  let cpu: ReturnType<typeof cpuUsage> | undefined;
  await withBenchStack({ respond: loop.respond, files, modelProcess }, async (stack) => {
    const queries: Array<Awaited<ReturnType<typeof loop.run>>> = [];
    let before = cpuSnapshot(stack.processes);
    for (let round = 0; round <= rounds; round++) {
      if (round === 1) before = cpuSnapshot(stack.processes);
      const query = await loop.run(stack, iterations);
      if (query.result.is_error) throw new Error(`round ${round} failed: ${query.result.subtype}: ${query.result.result}`);
      const label = round === 0 ? 'warm-up' : `round ${round}/${rounds}`;
      progress(`${label}: ${(query.loopMs / iterations).toFixed(1)} ms per iteration (loop), ${(query.wallMs / iterations).toFixed(1)} (wall)`);
      if (round > 0) queries.push(query);
    }
    cpu = cpuUsage(before, cpuSnapshot(stack.processes), iterations * rounds);
    for (const query of queries) {
      const history = await summarizeHistory(stack.client, query.conversationId, query.firstRunId);
      measured.push({ wallMs: query.wallMs, durationMs: query.result.duration_ms, loopMs: query.loopMs, history });
    }
  });

  const roundRows = measured.map((round, index) => [
    index + 1,
    round.durationMs,
    round.wallMs.toFixed(0),
    round.loopMs.toFixed(0),
    (round.loopMs / iterations).toFixed(1),
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
    for (const [type, values] of Object.entries(history.gaps.activityInside)) addPhase(`activity ${type}: inside the function (its durationMs)`, values);
  }
  const totalIterations = iterations * measured.length;
  const phaseRows = [...phases]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, values]) => [
      name,
      (values.length / totalIterations).toFixed(2),
      median(values).toFixed(0),
      percentile(values, 90).toFixed(0),
      Math.max(...values).toFixed(0),
      (sum(values) / totalIterations).toFixed(1),
    ]);

  const perIterationSum = (suffix: string) => sum([...phases].filter(([name]) => name.endsWith(suffix)).map(([, values]) => sum(values))) / totalIterations;

  const durations = measured.map((round) => round.durationMs / iterations);
  const walls = measured.map((round) => round.wallMs / iterations);
  const loops = measured.map((round) => round.loopMs / iterations);
  await publishResults('iteration-overhead', {
    title: `overhead per iteration (${iterations} iterations × ${rounds} rounds, instant model)`,
    context,
    note,
    body: [
      `Median per iteration: **${median(loops).toFixed(1)} ms** in the loop (the worker's first model request to its last), ` +
        `${median(walls).toFixed(1)} ms from the client's wall time (start to close, the query's fixed costs included), ` +
        `${median(durations).toFixed(1)} ms from duration_ms.`,
      '',
      markdownTable(
        [
          'round',
          'duration_ms',
          'wall ms',
          'loop ms',
          'ms / iteration (loop)',
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
      ...(cpu ? cpuLines(cpu, modelProcess) : []),
      'Phases overlap (a streamed tool runs while its model call is still open), so the sums need not add up to the ' +
        'iteration time; local activities run inside workflow tasks (their time is in Started → Completed). ' +
        `${PER_ITERATION_LEGEND} Wall: client side, from start until the one-shot conversation closed. Loop: worker side, ` +
        "from the first model request to the last, through the Anthropic client's fetch — the headline, because it is " +
        "free of the workflow clock: inside one workflow task that clock advances only by each local activity's own run time.",
    ],
  });
}

/** CPU per iteration over the measured rounds (wall clock of the rounds, not of the histories' reads). */
function cpuLines(cpu: NonNullable<ReturnType<typeof cpuUsage>>, modelProcess: boolean): string[] {
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  const processes = cpu.processesMs.map(([label, value]) => `${label === 'server' ? 'dev server' : 'model server (own process)'} ${ms(value)}`);
  const total = cpu.selfMs + cpu.processesMs.reduce((acc, [, value]) => acc + value, 0);
  return [
    `CPU per iteration (wall ${ms(cpu.wallMs)}, 2 cores = ${ms(2 * cpu.wallMs)} available): ${ms(total)} in all — ` +
      `bench process ${ms(cpu.selfMs)} (the worker${modelProcess ? '' : ', the model server'} and the client), ${processes.join(', ')}.`,
    `Bench process, busiest threads: ${cpu.threadsMs
      .slice(0, 8)
      .filter(([, value]) => value >= 0.1)
      .map(([name, value]) => `${name} ${ms(value)}`)
      .join(
        ', ',
      )} (main: activities, ${modelProcess ? '' : 'model server, '}client, SDK bridge; the busiest node: the workflow thread; tokio-runtime-w: SDK core).`,
    '',
  ];
}

runBench(main);
