/**
 * `durable-agent cron list [--json] [conversation]`: the cron jobs (CronCreate, `/loop <interval>`)
 * on the server, read from their Temporal Schedules' memos through the client's ScheduleClient —
 * no worker needed, and durable jobs of ended conversations are listed too (issue 21 §5). The same
 * jobs are on the Temporal UI's Schedules page as `cron-<conversation>-<job>`.
 */
import type { Client, ScheduleSummary } from '@temporalio/client';
import { oneLine } from '../../common/cut-text';
import type { CommandInput, Io } from '../command-line';
import { withConnection } from '../connect';
import { sanitizeForTerminal } from '../format';
import { formatTable } from './list';

/** One job as `cron list` shows it. */
export interface CronListEntry {
  id: string;
  scheduleId: string;
  conversationId: string;
  cron: string;
  timeZone?: string;
  recurring: boolean;
  durable: boolean;
  prompt: string;
  /** ISO 8601, absent when the Schedule will not fire again. */
  nextFire?: string;
  expiresAt?: string;
  paused: boolean;
}

/** A Schedule made for a cron job (its memo says so), as an entry; undefined for any other Schedule. */
export function cronEntryOf(schedule: Pick<ScheduleSummary, 'scheduleId' | 'memo' | 'info' | 'state'>): CronListEntry | undefined {
  const memo = schedule.memo as Record<string, unknown> | undefined;
  if (memo?.kind !== 'durable-agent-cron' || typeof memo.conversationId !== 'string' || typeof memo.jobId !== 'string') return undefined;
  const next = schedule.info?.nextActionTimes?.[0];
  return {
    id: memo.jobId,
    scheduleId: schedule.scheduleId,
    conversationId: memo.conversationId,
    cron: String(memo.cron ?? '?'),
    ...(typeof memo.timeZone === 'string' ? { timeZone: memo.timeZone } : {}),
    recurring: memo.recurring !== false,
    durable: memo.durable === true,
    prompt: String(memo.prompt ?? ''),
    ...(next ? { nextFire: next.toISOString() } : {}),
    ...(typeof memo.expiresAt === 'string' ? { expiresAt: memo.expiresAt } : {}),
    paused: schedule.state?.paused === true,
  };
}

/** Every cron job on the server (or one conversation's), soonest next fire first. */
export async function listCronJobs(client: Client, conversationId?: string): Promise<CronListEntry[]> {
  const entries: CronListEntry[] = [];
  for await (const schedule of client.schedule.list()) {
    const entry = cronEntryOf(schedule);
    if (entry && (conversationId === undefined || entry.conversationId === conversationId)) entries.push(entry);
  }
  return entries.sort((a, b) => (a.nextFire ?? '~').localeCompare(b.nextFire ?? '~'));
}

export const CRON_HEADER = ['ID', 'CRON', 'NEXT FIRE', 'KIND', 'CONVERSATION', 'PROMPT'];

export function cronRow(entry: CronListEntry): string[] {
  const kind = `${entry.recurring ? 'recurring' : 'one-shot'}${entry.durable ? ', durable' : ''}${entry.paused ? ', paused' : ''}`;
  return [
    entry.id,
    `${entry.cron}${entry.timeZone ? ` (${entry.timeZone})` : ''}`,
    entry.nextFire?.replace(/\.\d+Z$/, 'Z') ?? '-',
    kind,
    entry.conversationId,
    JSON.stringify(oneLine(entry.prompt, 60)),
  ];
}

export async function cronCommand({ values, positionals }: CommandInput, io: Io): Promise<number> {
  return withConnection(async (api) => {
    const entries = await listCronJobs(api.client, positionals[0]);
    if (values.json) {
      io.out(JSON.stringify(entries));
      return 0;
    }
    if (entries.length === 0)
      io.out(positionals[0] ? `No cron jobs for ${positionals[0]}.` : 'No cron jobs. A conversation makes one with CronCreate or /loop <interval> <prompt>.');
    else for (const line of formatTable([CRON_HEADER, ...entries.map(cronRow)])) io.out(sanitizeForTerminal(line));
    return 0;
  });
}
