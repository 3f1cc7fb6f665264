/**
 * CPU time of the processes a benchmark runs (Linux /proc): this process per thread (the worker:
 * main thread, workflow thread, the SDK core's tokio threads), the dev server, the model server
 * when it runs in its own process. Tells whether an iteration waits or computes, and where.
 */
import { readFileSync, readdirSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux). */
const TICK_MS = 10;

export interface CpuSnapshot {
  at: number;
  /** This process in all, threads that have exited included. */
  self: number;
  threads: Map<string, { name: string; ticks: number }>;
  processes: Map<string, number>;
}

/** utime + stime (fields 14 and 15 of /proc/<pid>/stat), in ticks. */
function ticksOf(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** This process's threads and the named processes (label → pid), now. */
export function cpuSnapshot(processes: Record<string, number | undefined>): CpuSnapshot {
  const threads = new Map<string, { name: string; ticks: number }>();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = read(`/proc/self/task/${tid}/stat`);
    if (stat === undefined) continue;
    const name = tid === String(process.pid) ? 'main' : (read(`/proc/self/task/${tid}/comm`)?.trim() ?? '?');
    threads.set(tid, { name, ticks: ticksOf(stat) });
  }
  const totals = new Map<string, number>();
  for (const [label, pid] of Object.entries(processes)) {
    const stat = pid === undefined ? undefined : read(`/proc/${pid}/stat`);
    if (stat !== undefined) totals.set(label, ticksOf(stat));
  }
  return { at: performance.now(), self: ticksOf(read('/proc/self/stat') ?? ''), threads, processes: totals };
}

export interface CpuUsage {
  /** Wall time between the snapshots, per unit. */
  wallMs: number;
  /** This process (threads that have exited included), per unit. */
  selfMs: number;
  /** This process's threads by name, busiest first (main; node = a Node worker thread, V8 or libuv helper; tokio-runtime-w = the SDK core), per unit. */
  threadsMs: Array<[string, number]>;
  /** The other processes, per unit. */
  processesMs: Array<[string, number]>;
}

/** CPU between two snapshots, divided by `units` (iterations). */
export function cpuUsage(before: CpuSnapshot, after: CpuSnapshot, units: number): CpuUsage {
  const threads: Array<[string, number]> = [];
  for (const [tid, thread] of after.threads) threads.push([thread.name, thread.ticks - (before.threads.get(tid)?.ticks ?? 0)]);
  const per = (ticks: number) => (ticks * TICK_MS) / units;
  return {
    wallMs: (after.at - before.at) / units,
    selfMs: per(after.self - before.self),
    threadsMs: threads.map(([name, ticks]): [string, number] => [name, per(ticks)]).sort((a, b) => b[1] - a[1]),
    processesMs: [...after.processes].map(([label, ticks]): [string, number] => [label, per(ticks - (before.processes.get(label) ?? 0))]),
  };
}
