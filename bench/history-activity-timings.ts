/**
 * Activity timings from a recorded conversation history: for each activity, the time from its
 * scheduling to its completion as the server recorded them (queueing, the worker's work and the
 * round trips). Used for the MCP wiring's cost at session start (bench/results/mcp-conversation.md).
 *
 *   npx tsx bench/history-activity-timings.ts test/histories/mcp-tools.json
 */
import { readFile } from 'node:fs/promises';

interface HistoryEvent {
  eventId: string;
  eventTime: string;
  activityTaskScheduledEventAttributes?: { activityType: { name: string } };
  activityTaskCompletedEventAttributes?: { scheduledEventId: string };
}

async function main(): Promise<void> {
  const file = process.argv[2];
  if (!file) throw new Error('usage: npx tsx bench/history-activity-timings.ts <history.json>');
  const { events } = JSON.parse(await readFile(file, 'utf8')) as { events: HistoryEvent[] };
  const scheduled = new Map<string, { name: string; at: number }>();
  console.log('| # | activity | scheduled → completed (ms) |\n| --- | --- | --- |');
  let index = 0;
  for (const event of events) {
    const at = Date.parse(event.eventTime);
    if (event.activityTaskScheduledEventAttributes)
      scheduled.set(String(event.eventId), { name: event.activityTaskScheduledEventAttributes.activityType.name, at });
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const start = scheduled.get(String(completed.scheduledEventId));
      if (start) console.log(`| ${++index} | ${start.name} | ${at - start.at} |`);
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
