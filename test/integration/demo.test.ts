/**
 * `npm start` (scripts/demo.ts) as a newcomer meets it (issue 19, item 8; issue 32, item 4): one line
 * per step — server, worker, model, the conversation with its UI link, its events, the result, how
 * to continue — no server command line, no SDK warnings, no bundler output; the demo's fix really
 * lands in its workspace; it exits within a second of its result; afterwards `transcript` of the
 * demo conversation works with a worker.
 */
import { readFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, REPO_ROOT, createHarness, keylessProcessEnvironment } from '../helpers/harness';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Runs a command; `lines` has each line of its output (stdout and stderr) with when it came, ms after the start. */
function run(h: Harness, args: string[]): Promise<{ code: number; out: string; err: string; ms: number; lines: Array<{ at: number; line: string }> }> {
  const env = keylessProcessEnvironment(h);
  const started = Date.now();
  const lines: Array<{ at: number; line: string }> = [];
  return new Promise((resolve) => {
    const child = execFile(process.execPath, args, { cwd: REPO_ROOT, env, timeout: 120_000 }, (error, out, err) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out, err, ms: Date.now() - started, lines }),
    );
    for (const stream of [child.stdout!, child.stderr!])
      stream.on('data', (chunk: Buffer) => {
        for (const line of String(chunk).split('\n')) if (line) lines.push({ at: Date.now() - started, line });
      });
  });
}

describe('npm start', () => {
  it('prints the conversation and how to continue, nothing else; its transcript reads afterwards', async () => {
    harness = await createHarness();
    const demo = await run(harness, ['--import', 'tsx', path.join(REPO_ROOT, 'scripts', 'demo.ts')]);
    expect(demo.code, demo.out + demo.err).toBe(0);
    const output = demo.out + demo.err;
    expect(output).not.toMatch(/\[WARN\]|No workflows registered|webpack|Starting Temporal dev server|Using the cached Temporal CLI/);
    // One line per step, in order.
    const steps = [
      /^durable-agent demo: .*Loading…$/,
      /^Temporal server: using the one at \S+/,
      /^Worker: starting/,
      /^Worker: ready in \d+\.\d s, on task queue /,
      /^No ANTHROPIC_API_KEY: the model is scripted/,
      /^Conversation \S+ started in /,
      /^● Edit\(math\.js\)/,
      /^✓ done/,
      /^Continue:$/,
    ];
    const at = steps.map((step) => demo.lines.findIndex(({ line }) => step.test(line)));
    expect(at.every((index) => index >= 0) && at.every((index, i) => i === 0 || index > at[i - 1]), output).toBe(true);
    const conversationId = /^Conversation (\S+) started in (\S+)$/m.exec(output)![1];
    const workspace = /^Conversation \S+ started in (\S+)$/m.exec(output)![1];
    // The tools acted: the fix is in the workspace's file, and the second test run passed.
    expect(await readFile(path.join(workspace, 'math.js'), 'utf8')).toContain('let i = 0;');
    expect(output).toContain('all tests passed');
    expect(output).not.toMatch(/Tool execution failed|keeps its own credentials/);
    // Exits within a second of its result (was ~10 s, then 1.2–1.3 s waiting for the dev server to stop).
    const result = demo.lines.find(({ line }) => line.startsWith('✓ done'))!;
    expect(demo.ms - result.at, 'ms from the result to the exit').toBeLessThan(1_000);
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
