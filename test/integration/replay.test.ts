/**
 * Determinism guard: today's workflow code replays the histories it recorded (test/histories,
 * written by `npx tsx scripts/record-histories.ts`): every command it issues on replay is the one
 * in the history. They are re-recorded whenever the workflow code changes; upgrades of running
 * conversations are carried by Worker Versioning (each stays on the build it started on,
 * docs/deployment.md), not by replaying old histories on new code. A failure after a workflow
 * change means the histories are stale (re-record them); a failure without one is nondeterminism.
 */
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { readFileSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { TranscriptCache } from '../../activities/transcript-cache';
import { transcriptCacheSinks } from '../../worker/worker';
import { workflowBundle } from '../helpers/harness';

const HISTORIES_DIR = path.resolve(__dirname, '..', 'histories');

describe('replay of recorded histories', async () => {
  const files = (await readdir(HISTORIES_DIR)).filter((file) => file.endsWith('.json')).sort();

  it('has recorded histories to replay', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  // The shape sdk-core writes when a query is answered while a local activity runs: the local
  // activity's marker closes a workflow task, and its result reaches the workflow only in the next
  // one (on replay, one task earlier). Anything the workflow decides right after that result must
  // not depend on which task it lands in. The pair was recorded by
  // test/integration/background-conversation.test.ts ("across continue-as-new") with DA_NO_CACHE=1
  // and DA_DUMP_HISTORIES (re-run it until the last run has this shape; scripts/record-histories.ts
  // cannot time a query that way).
  it('replays a run whose local activity result reached the workflow a task after its marker', () => {
    const events = (
      JSON.parse(readFileSync(path.join(HISTORIES_DIR, 'background-continue-as-new-last-run.json'), 'utf8')) as { events: Array<Record<string, any>> }
    ).events;
    const splitAt = events.findIndex(
      (event, index) =>
        event.markerRecordedEventAttributes?.markerName === 'core_local_activity' && events[index + 1]?.eventType === 'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED',
    );
    expect(splitAt).toBeGreaterThan(0);
    expect(files).toContain('background-continue-as-new-last-run.json'); // replayed below
  });

  // One replay worker replays every history in turn (as runReplayHistory does for one, each on a
  // worker of its own that loads the bundle again: about a second apiece); each test reads its result.
  const results = new Map<string, { error?: Error }>();
  beforeAll(async () => {
    // The workflow feeds the worker's transcript cache on replay too (model calls by reference);
    // the workflow never reads it, and its entries are keyed by workflow id and content digest.
    const cache = new TranscriptCache();
    const histories = async function* () {
      for (const file of files) {
        const history = historyFromJSON(JSON.parse(await readFile(path.join(HISTORIES_DIR, file), 'utf8')));
        // The recorded workflow id (scripts/record-histories.ts): subagent child ids derive from it.
        yield { history, workflowId: `history-${file.replace(/(-last-run)?\.json$/, '')}` };
      }
    };
    // One result per history, in the order given (a history and its -last-run share a workflow id).
    let index = 0;
    for await (const result of Worker.runReplayHistories({ workflowBundle: workflowBundle(), sinks: transcriptCacheSinks(cache) }, histories())) {
      results.set(files[index++], { error: result.error });
    }
  }, 300_000);

  for (const file of files) {
    it(`replays ${file}`, () => {
      const result = results.get(file);
      expect(result, `${file} was not replayed`).toBeDefined();
      if (result!.error) throw result!.error;
    });
  }
});
