/**
 * Determinism guard: today's workflow code must replay the histories recorded by earlier code
 * (test/histories, written by `npx tsx scripts/record-histories.ts`). A failure here means a
 * workflow change would break running conversations: use `patched()` instead of re-recording.
 */
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TranscriptCache } from '../../activities/transcript-cache';
import { transcriptCacheSinks } from '../../worker/worker';
import { workflowBundle } from '../helpers/harness';

const HISTORIES_DIR = path.resolve(__dirname, '..', 'histories');

describe('replay of recorded histories', async () => {
  const files = (await readdir(HISTORIES_DIR)).filter((file) => file.endsWith('.json')).sort();

  it('has recorded histories to replay', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  for (const file of files) {
    it(`replays ${file}`, async () => {
      const history = historyFromJSON(JSON.parse(await readFile(path.join(HISTORIES_DIR, file), 'utf8')));
      // The workflow feeds the worker's transcript cache on replay too (model calls by reference).
      const cache = new TranscriptCache();
      // The recorded workflow id (scripts/record-histories.ts): subagent child ids derive from it.
      const workflowId = `history-${file.replace(/(-last-run)?\.json$/, '')}`;
      await Worker.runReplayHistory({ workflowBundle: workflowBundle(), sinks: transcriptCacheSinks(cache) }, history, workflowId);
    });
  }
});
