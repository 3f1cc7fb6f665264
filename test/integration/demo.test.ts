/**
 * `npm start` (scripts/demo.ts) as a newcomer meets it (issue 19, item 8): the conversation, the
 * UI link and how to continue — no server command line, no SDK warnings, no bundler output — and
 * it exits promptly; afterwards `transcript` of the demo conversation works with a worker.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, REPO_ROOT, createHarness, keylessProcessEnvironment } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function run(h: Harness, args: string[]): Promise<{ code: number; out: string; err: string; ms: number }> {
  const env = keylessProcessEnvironment(h);
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: REPO_ROOT, env, timeout: 120_000 }, (error, out, err) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out, err, ms: Date.now() - started }),
    );
  });
}

describe('npm start', () => {
  it('prints the conversation and how to continue, nothing else; its transcript reads afterwards', async () => {
    harness = await createHarness();
    const demo = await run(harness, ['--import', 'tsx', path.join(REPO_ROOT, 'scripts', 'demo.ts')]);
    expect(demo.code, demo.out + demo.err).toBe(0);
    const output = demo.out + demo.err;
    expect(output).not.toMatch(/\[WARN\]|No workflows registered|webpack|Starting Temporal dev server|Using the cached Temporal CLI/);
    expect(output).toMatch(/^No ANTHROPIC_API_KEY: the model is scripted/);
    const conversationId = /^Conversation (\S+) in /m.exec(output)![1];
    expect(output).toContain('● Edit(math.js)');
    expect(output).toMatch(/✓ done/);
    expect(output).toContain(`npm run cli -- transcript ${conversationId}`);
    expect(output.trim().split('\n').length).toBeLessThan(30);
    for (const line of output.split('\n')) expect(line.length, line).toBeLessThan(200);

    // Afterwards: `npm run worker` on the main queue answers for the demo conversation. The demo's worker was
    // versioned (issue 30) and its conversation is pinned to that version: this worker, built from the same
    // source, has the same bundle, so the same build id, and serves it.
    await harness.spawnWorkerProcess({ env: { DURABLE_AGENT_UNVERSIONED: '', DURABLE_AGENT_DEPLOYMENT_NAME: harness.deploymentName } });
    const transcript = await run(harness, [path.join(REPO_ROOT, 'bin', 'durable-agent.js'), 'transcript', conversationId]);
    expect(transcript.code, transcript.err).toBe(0);
    expect(transcript.out).toContain('Find the bug in math.js');
    expect(transcript.out).toContain('now starts at 0');
  });
});
