/**
 * Benchmark (issue 21): what a conversation costs while it only holds background work.
 *
 *   npm run bench:idle-background [-- --commands N] [--wakeups W] [--minutes M] [--note TEXT]
 *
 * One conversation whose first turn starts N background commands (`sleep 86400`, default 20) and,
 * with --wakeups, W ScheduleWakeup calls one hour out (default 0: ScheduleWakeup is wired by the
 * timers work; the run refuses W > 0 where the tool is not offered). Then it waits M minutes of
 * real time (default 3) with nothing else happening, and samples once a minute: the history's
 * events and bytes (every run of the continue-as-new chain), the worker's RSS (the worker runs in
 * this process) and CPU (this process: the worker and the SDK core; the dev server's). The target
 * while waiting is ~0 history events per minute: supervisors heartbeat (not history events) and
 * the conversation waits in one `condition` with no timer. At the end `end` stops every command.
 * Everything is real (dev server, worker, processes, the scripted model on loopback). Results are
 * appended to bench/results/idle-background.md.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { getToolSpec } from '../common/tool-specs';
import type { ScriptedTurn } from '../testing/scripted-model-server';
import { cpuSnapshot } from './cpu';
import { BENCH_PERMISSIONS, formatBytes, markdownTable, progress, publishResults, runBench, runContext, summarizeHistory, withBenchStack } from './support';

/** A unique-enough duration: the bench counts its own sleepers by it. */
const SLEEP_SECONDS = '86400';

function args(): { commands: number; wakeups: number; minutes: number; note?: string } {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { commands: { type: 'string' }, wakeups: { type: 'string' }, minutes: { type: 'string' }, note: { type: 'string' } },
  });
  const commands = Number(values.commands ?? 20);
  const wakeups = Number(values.wakeups ?? 0);
  const minutes = Number(values.minutes ?? 3);
  if (!Number.isInteger(commands) || commands < 0 || !Number.isInteger(wakeups) || wakeups < 0 || !(minutes > 0)) {
    throw new Error('--commands and --wakeups take whole numbers >= 0, --minutes a positive number');
  }
  if (wakeups > 0 && !getToolSpec('ScheduleWakeup')) throw new Error('--wakeups needs the ScheduleWakeup tool, which this build does not offer');
  return { commands, wakeups, minutes, note: values.note };
}

function liveSleepers(): number {
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8') === `sleep\0${SLEEP_SECONDS}\0`) count++;
    } catch {
      // gone meanwhile
    }
  }
  return count;
}

async function main(): Promise<void> {
  const { commands, wakeups, minutes, note } = args();
  const context = runContext();
  const firstTurn: ScriptedTurn = {
    content: [
      ...Array.from({ length: commands }, (_, index) => ({
        type: 'tool_use' as const,
        name: 'Bash',
        input: { command: `sleep ${SLEEP_SECONDS}`, description: `Idle job ${index + 1}`, run_in_background: true },
      })),
      ...Array.from({ length: wakeups }, (_, index) => ({
        type: 'tool_use' as const,
        name: 'ScheduleWakeup',
        input: { delaySeconds: 3600, reason: `idle wakeup ${index + 1}`, prompt: 'Check again.' },
      })),
    ],
  };
  let answered = 0;
  const waiting: ScriptedTurn = { content: [{ type: 'text', text: 'All started; waiting.' }] };
  // --commands 0: the baseline, a conversation that holds nothing.
  const respond = () => (answered++ === 0 && firstTurn.content!.length > 0 ? firstTurn : waiting);

  const rows: Array<Array<string | number>> = [];
  let summaryLine = '';
  await withBenchStack({ respond }, async (stack) => {
    const started = await stack.api.start({
      prompt: `Start ${commands} background jobs${wakeups ? ` and ${wakeups} wakeups` : ''}.`,
      taskQueue: stack.taskQueue,
      config: { cwd: stack.workspace, permissions: BENCH_PERMISSIONS },
    });
    const firstRunId = started.handle.firstExecutionRunId;
    const result = await stack.api.waitForResult(started.conversationId, started.inputUuid!);
    const status = await stack.api.status(started.conversationId);
    const running = (status.backgroundTasks ?? []).filter((task) => task.status === 'running').length;
    progress(
      `first query: ${result.subtype}; ${running} background commands running, ${liveSleepers()} sleepers, ${status.wakeups?.length ?? 0} wakeups pending`,
    );
    if (running !== commands) throw new Error(`expected ${commands} running commands, status says ${running}`);
    const pendingWakeups = status.wakeups?.length ?? 0;
    if (pendingWakeups !== wakeups) throw new Error(`expected ${wakeups} pending wakeups, status says ${pendingWakeups}`);

    // Let the supervisors' first attempts settle before the clock starts.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const sample = async () => ({
      history: await summarizeHistory(stack.client, started.conversationId, firstRunId),
      cpu: cpuSnapshot({ server: stack.processes.server }),
      rss: process.memoryUsage().rss,
    });
    const begin = await sample();
    let previous = begin;
    rows.push(['0', begin.history.events, formatBytes(begin.history.bytes), '', '', formatBytes(begin.rss), '', '', liveSleepers()]);
    for (let minute = 1; minute <= Math.ceil(minutes); minute++) {
      const waitMs = (Math.min(minute, minutes) - (minute - 1)) * 60_000;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      const now = await sample();
      const cpuMs = (now.cpu.self - previous.cpu.self) * 10;
      const serverMs = ((now.cpu.processes.get('server') ?? 0) - (previous.cpu.processes.get('server') ?? 0)) * 10;
      rows.push([
        String(minute),
        now.history.events,
        formatBytes(now.history.bytes),
        now.history.events - previous.history.events,
        now.history.bytes - previous.history.bytes,
        formatBytes(now.rss),
        `${cpuMs} ms (${((100 * cpuMs) / waitMs).toFixed(2)}%)`,
        `${serverMs} ms (${((100 * serverMs) / waitMs).toFixed(2)}%)`,
        liveSleepers(),
      ]);
      progress(`minute ${minute}: +${now.history.events - previous.history.events} events, rss ${formatBytes(now.rss)}, worker cpu ${cpuMs} ms`);
      previous = now;
    }
    const totalEvents = previous.history.events - begin.history.events;
    const totalBytes = previous.history.bytes - begin.history.bytes;

    const endedAt = performance.now();
    await stack.api.end(started.conversationId);
    await stack.api.summary(started.conversationId);
    const stopMs = performance.now() - endedAt;
    summaryLine =
      `While waiting ${minutes} min: ${totalEvents} history events (${(totalEvents / minutes).toFixed(2)} / min), ${totalBytes} bytes (${(totalBytes / minutes).toFixed(0)} / min). ` +
      `\`end\` stopped the ${commands} commands in ${(stopMs / 1000).toFixed(1)} s; sleepers left afterwards: ${liveSleepers()}.`;
    progress(summaryLine);
  });

  await publishResults('idle-background', {
    title: `one conversation holding ${commands} background commands${wakeups ? ` and ${wakeups} wakeups` : ''}, ${minutes} min of real waiting`,
    context,
    note,
    body: [
      markdownTable(
        [
          'minute',
          'history events',
          'history bytes',
          'events this minute',
          'bytes this minute',
          'worker RSS',
          'worker process CPU this minute',
          'dev server CPU this minute',
          'commands alive',
        ],
        rows,
      ),
      '',
      summaryLine,
      '',
      'History: every run of the continue-as-new chain, protobuf-encoded. Worker: this process (the in-process worker, ' +
        'the SDK core and the bench itself, which fetches the history once a minute); CPU from /proc (utime + stime). ' +
        'Each command is supervised by one heartbeating activity (heartbeats are not history events).',
    ],
  });
}

runBench(main);
