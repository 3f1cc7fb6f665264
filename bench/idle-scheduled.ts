/**
 * Benchmark: what a conversation costs while it only waits on scheduled work (issue 21 §4–5).
 *
 *   npx tsx bench/idle-scheduled.ts [MINUTES] [--note TEXT]     (default 3 minutes of real waiting)
 *
 * One conversation whose first answer schedules 20 wakeups (ScheduleWakeup, 3600 s each: durable
 * timers in the conversation) and 5 recurring cron jobs (CronCreate: Temporal Schedules that fire
 * on weekdays at 09:xx, so not while measured). Then nothing happens for MINUTES: every minute
 * the conversation's history length and size (describe) and this process's CPU time and RSS (the
 * worker runs in it; the dev server and the model server are elsewhere or idle) are sampled. At
 * the end `end` cancels the timers and deletes the session-only Schedules: the events that took.
 * Real dev server, real worker, scripted model on loopback. Results: bench/results/idle-scheduled.md.
 */
import { promptResponder } from '../testing/prompt-responder';
import { BENCH_PERMISSIONS, benchArgs, markdownTable, progress, publishResults, runBench, runContext, withBenchStack } from './support';

const WAKEUPS = 20;
const CRON_JOBS = 5;

async function main(): Promise<void> {
  const { positionals, note } = benchArgs();
  const minutes = Number(positionals[0] ?? '3');
  if (!Number.isFinite(minutes) || minutes <= 0) throw new Error(`MINUTES must be a positive number: ${positionals[0]}`);
  const context = runContext();
  const calls = [
    ...Array.from({ length: WAKEUPS }, (_, index) => ({
      name: 'ScheduleWakeup',
      input: { delaySeconds: 3600, reason: `wakeup ${index}`, prompt: `WAKE ${index}` },
    })),
    ...Array.from({ length: CRON_JOBS }, (_, index) => ({ name: 'CronCreate', input: { cron: `${7 + index} 9 * * 1-5`, prompt: `CRON ${index}` } })),
  ];
  const respond = promptResponder([['SCHEDULE', calls]]);
  const rows: Array<Array<string | number>> = [];
  let endEvents = 0;
  await withBenchStack({ respond }, async (stack) => {
    const started = await stack.api.start({
      prompt: 'SCHEDULE everything',
      taskQueue: stack.taskQueue,
      config: { cwd: stack.workspace, permissions: BENCH_PERMISSIONS },
    });
    await stack.api.waitForResult(started.conversationId, started.inputUuid!);
    const status = await stack.api.status(started.conversationId);
    if (status.wakeups?.length !== WAKEUPS || status.cronJobs?.length !== CRON_JOBS)
      throw new Error(`scheduled ${status.wakeups?.length} wakeups, ${status.cronJobs?.length} jobs`);
    const handle = stack.client.workflow.getHandle(started.conversationId);
    const sample = async (minute: number) => {
      const described = await handle.describe();
      const memory = process.memoryUsage();
      const cpu = process.cpuUsage();
      return { minute, events: described.historyLength, bytes: described.historySize ?? 0, rssMb: memory.rss / 1e6, cpuMs: (cpu.user + cpu.system) / 1000 };
    };
    const first = await sample(0);
    let previous = first;
    rows.push([0, first.events, first.bytes, '-', '-', first.rssMb.toFixed(0), '-']);
    for (let minute = 1; minute <= minutes; minute++) {
      progress(`waiting: minute ${minute} of ${minutes}`);
      await new Promise((resolve) => setTimeout(resolve, 60_000));
      const now = await sample(minute);
      rows.push([
        minute,
        now.events,
        now.bytes,
        now.events - previous.events,
        now.bytes - previous.bytes,
        now.rssMb.toFixed(0),
        (now.cpuMs - previous.cpuMs).toFixed(0),
      ]);
      previous = now;
    }
    await stack.api.end(started.conversationId);
    await stack.api.summary(started.conversationId);
    endEvents = (await handle.describe()).historyLength - previous.events;
  });
  await publishResults('idle-scheduled', {
    title: `${WAKEUPS} wakeups and ${CRON_JOBS} cron jobs pending, ${minutes} min of waiting`,
    context,
    note,
    body: [
      markdownTable(
        ['minute', 'history events', 'history bytes', 'events in the minute', 'bytes in the minute', 'process RSS MB', 'process CPU ms in the minute'],
        rows,
      ),
      '',
      `- \`end\` with all of it pending: ${endEvents} more events (timer cancellations, one deleteSessionCronSchedules activity, completion).`,
      '- "process" is the bench process: the worker, the client and the scripted model server (idle while waiting); the dev server is a child process and not counted.',
    ],
  });
}

runBench(main);
