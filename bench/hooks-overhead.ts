/**
 * Benchmark: what Claude Code's tool hooks add to a tool call (issue 22 §4).
 *
 *   npx tsx bench/hooks-overhead.ts [rounds] [iterations]
 *
 * One conversation per round and setting: `iterations` (default 20) Write calls, one per model
 * turn, against an instant scripted model, then an answer. Settings: no hooks (one
 * loadHookSettings at the start, nothing else), and a PreToolUse + PostToolUse command hook
 * (`true`) matching Write (two runHooks activities per call, each spawning a shell in the
 * sandbox). Measured per iteration: the query's wall time (start → result), history events and
 * activities scheduled. Medians over `rounds` (default 3), after one warm-up. Results are appended
 * to bench/results/hooks-overhead.md.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  BENCH_PERMISSIONS,
  type BenchStack,
  benchArgs,
  markdownTable,
  median,
  progress,
  publishResults,
  runBench,
  runContext,
  withBenchStack,
} from './support';

interface Round {
  wallMs: number;
  events: number;
  activities: number;
}

const SETTINGS: Array<{ name: string; hooks?: object }> = [
  { name: 'no hooks' },
  {
    name: 'PreToolUse + PostToolUse (`true`) on Write',
    hooks: {
      PreToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: 'true' }] }],
      PostToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: 'true' }] }],
    },
  },
];

async function oneRound(stack: BenchStack, hooks: object | undefined, iterations: number): Promise<Round> {
  const settings = path.join(stack.workspace, '.claude', 'settings.json');
  await rm(settings, { force: true });
  if (hooks) {
    await mkdir(path.dirname(settings), { recursive: true });
    await writeFile(settings, JSON.stringify({ hooks }));
  }
  const startedAt = performance.now();
  const started = await stack.api.start({
    prompt: `write ${iterations} files`,
    config: { cwd: stack.workspace, permissions: BENCH_PERMISSIONS, oneShot: true },
    taskQueue: stack.taskQueue,
  });
  const result = await stack.api.waitForResult(started.conversationId, started.inputUuid!);
  const wallMs = performance.now() - startedAt;
  if (result.is_error) throw new Error(`the query failed: ${result.result}`);
  await stack.client.workflow.getHandle(started.conversationId).result();
  const history = await stack.client.workflow.getHandle(started.conversationId).fetchHistory();
  const events = history.events ?? [];
  return { wallMs, events: events.length, activities: events.filter((event) => event.activityTaskScheduledEventAttributes).length };
}

async function main(): Promise<void> {
  const { positionals, note } = benchArgs();
  const rounds = Number(positionals[0] ?? 3);
  const iterations = Number(positionals[1] ?? 20);
  const rows: Array<Array<string | number>> = [];
  await withBenchStack(
    {
      respond: (request) => {
        const done = JSON.stringify(request.body.messages).split('"tool_result"').length - 1;
        if (done >= iterations) return { content: [{ type: 'text', text: 'Done.' }] };
        return { content: [{ type: 'tool_use', name: 'Write', input: { file_path: `t${done}.txt`, content: `${done}\n` } }] };
      },
    },
    async (stack) => {
      for (const setting of SETTINGS) {
        await oneRound(stack, setting.hooks, iterations); // warm-up
        const measured: Round[] = [];
        for (let round = 0; round < rounds; round++) {
          measured.push(await oneRound(stack, setting.hooks, iterations));
          progress(`${setting.name}: round ${round + 1}/${rounds}: ${measured.at(-1)!.wallMs.toFixed(0)} ms`);
        }
        const perIteration = (values: number[]) => (median(values) / iterations).toFixed(1);
        rows.push([
          setting.name,
          median(measured.map((round) => round.wallMs)).toFixed(0),
          perIteration(measured.map((round) => round.wallMs)),
          perIteration(measured.map((round) => round.events)),
          perIteration(measured.map((round) => round.activities)),
        ]);
      }
    },
  );
  await publishResults('hooks-overhead', {
    title: `${iterations} Write calls per query, ${rounds} rounds (medians)`,
    context: runContext(),
    note,
    body: [markdownTable(['setting', 'query wall (ms)', 'wall per call (ms)', 'history events per call', 'activities per call'], rows)],
  });
}

runBench(main);
