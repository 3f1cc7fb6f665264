/**
 * Benchmark: how the Temporal history of one long query grows with its iterations.
 *
 *   npm run bench:history [-- [N ...] [--note TEXT]]     (or: npx tsx bench/history-growth.ts [N ...])
 *
 * For each N (default 100 and 300): one one-shot conversation whose single query makes N model
 * iterations; in iteration i the scripted model asks to `Read` f<i>.txt, a distinct 4 KB file of
 * random hex, and after N tool results it answers with text. Once the conversation has closed,
 * the history of every run (it continues-as-new) is fetched and measured: protobuf-encoded bytes
 * of each `History`, summed, against the N × 4096 bytes of unique content the query read.
 * Everything is real (dev server, worker, SDK, scripted model server on loopback). Results are
 * appended to bench/results/history-growth.md.
 */
import { randomBytes } from 'node:crypto';
import {
  PER_ITERATION_HEADERS,
  PER_ITERATION_LEGEND,
  benchArgs,
  formatBytes,
  markdownTable,
  perIterationCounts,
  progress,
  publishResults,
  readFilesLoop,
  runBench,
  runContext,
  summarizeHistory,
  withBenchStack,
} from './support';

const FILE_BYTES = 4096;
const LINE_BYTES = 64; // 63 hex digits and a newline: 64 lines per file
/** Event types listed in the bytes breakdown, heaviest first. */
const TYPES_SHOWN = 5;

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

async function main(): Promise<void> {
  const { positionals, note } = benchArgs();
  const sizes = (positionals.length ? positionals : ['100', '300']).map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`iteration counts must be positive integers: ${positionals.join(' ')}`);
  const context = runContext();
  const files: Record<string, string> = {};
  for (let index = 0; index < Math.max(...sizes); index++) files[`f${index}.txt`] = uniqueFileContent();

  const loop = readFilesLoop((index) => `f${index}.txt`);

  const rows: Array<Array<string | number>> = [];
  const byType: Array<Array<string | number>> = [];
  await withBenchStack({ respond: loop.respond, files }, async (stack) => {
    for (const n of sizes) {
      progress(`N=${n}: running…`);
      const query = await loop.run(stack, n);
      const history = await summarizeHistory(stack.client, query.conversationId, query.firstRunId);
      const unique = n * FILE_BYTES;
      const outcome = query.result.is_error ? `${query.result.subtype} (${query.result.num_turns} turns)` : `${query.result.num_turns} turns`;
      progress(`N=${n}: ${outcome}, ${history.runs} runs, ${formatBytes(history.bytes)}, ${(query.wallMs / 1000).toFixed(1)} s`);
      rows.push([
        n,
        outcome,
        history.runs,
        history.events,
        `${formatBytes(history.bytes)} (${history.bytes})`,
        `${formatBytes(unique)} (${unique})`,
        `${(history.bytes / unique).toFixed(1)}×`,
        formatBytes(history.bytes / n),
        ...perIterationCounts(history, n),
        `${formatBytes(history.largestEvent.bytes)} (${history.largestEvent.type.replace(/^EVENT_TYPE_/, '')})`,
        (query.wallMs / 1000).toFixed(1),
        (query.result.duration_ms / 1000).toFixed(1),
      ]);
      const heaviest = Object.entries(history.eventBytes).sort(([, a], [, b]) => b - a);
      for (const [type, bytes] of heaviest.slice(0, TYPES_SHOWN)) {
        byType.push([n, type.replace(/^EVENT_TYPE_/, ''), history.eventCounts[type], formatBytes(bytes), `${((100 * bytes) / history.bytes).toFixed(1)}%`]);
      }
    }
  });

  await publishResults('history-growth', {
    title: 'history growth of one long query',
    context,
    note,
    body: [
      markdownTable(
        [
          'N iterations',
          'result',
          'runs',
          'events',
          'history bytes (all runs)',
          'unique content',
          'history / unique',
          'bytes / iteration',
          ...PER_ITERATION_HEADERS,
          'largest event',
          'wall s',
          'duration_ms / 1000',
        ],
        rows,
      ),
      '',
      'History bytes: `temporal.api.history.v1.History.encode(h).finish().length` summed over every run of the ' +
        `continue-as-new chain. ${PER_ITERATION_LEGEND} Wall: client side, from start until the one-shot conversation closed.`,
      '',
      `Where the bytes are (the ${TYPES_SHOWN} heaviest event types, each event protobuf-encoded on its own):`,
      '',
      markdownTable(['N iterations', 'event type', 'events', 'bytes', 'share of history'], byType),
    ],
  });
}

runBench(main);
