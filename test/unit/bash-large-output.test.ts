/**
 * Issue 12, defect 10: Bash output over 10 MB lost its tail (capture just stopped). Now the first
 * and last 5 MB are kept, with a marker where the middle was, and the result — and so the preview
 * of a result over the budget — starts by saying so.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunToolResult } from '../../common/activity-types';
import { createRunTool } from '../../activities/run-tool';
import { MAX_CAPTURE_BYTES, OutputCapture, omittedOutputMarker } from '../../activities/shell';
import { executeTool } from '../../activities/tools';

let root: string;
let workspace: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'durable-agent-bash-output-'));
  workspace = path.join(root, 'workspace');
  await mkdir(workspace);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** 12 MB of `x` between a first and a last line, then a line on stderr: 12,582,944 bytes in all. */
const HUGE_COMMAND = "echo HEAD-MARK; head -c 12582912 /dev/zero | tr '\\0' x; echo; echo TAIL-MARK; echo err-at-end >&2";

describe('OutputCapture', () => {
  const add = (capture: OutputCapture, stream: 'stdout' | 'stderr', text: string) => capture.add(stream, text, Buffer.byteLength(text));

  it('keeps everything within the limit', () => {
    const capture = new OutputCapture(10, 10);
    add(capture, 'stdout', 'abc');
    add(capture, 'stderr', 'def');
    add(capture, 'stdout', 'ghi');
    expect(capture.truncated).toBe(false);
    expect(capture.text('stdout')).toBe('abcghi');
    expect(capture.text('stderr')).toBe('def');
  });

  it('past it, keeps the head and the most recent output, marking what each stream lost', () => {
    const capture = new OutputCapture(6, 6);
    for (const chunk of ['aa', 'bb', 'cc', 'dd', 'ee', 'ff', 'gg']) add(capture, 'stdout', chunk);
    add(capture, 'stderr', 'E1');
    add(capture, 'stdout', 'hh');
    expect(capture.totalBytes).toBe(18);
    expect(capture.omittedBytes).toBe(6); // dd ee ff
    expect(capture.text('stdout')).toBe(`aabbcc${omittedOutputMarker(6)}gghh`);
    expect(capture.text('stderr')).toBe('E1'); // nothing of stderr was dropped: no marker
  });

  it('stays bounded with many small chunks', () => {
    const capture = new OutputCapture(100, 100);
    for (let index = 0; index < 100_000; index++) add(capture, 'stdout', `${index % 10}`);
    expect(capture.omittedBytes).toBe(100_000 - 200);
    const text = capture.text('stdout');
    expect(text.startsWith('0123456789')).toBe(true);
    expect(text.endsWith('0123456789')).toBe(true);
    expect(text.length).toBe(200 + omittedOutputMarker(99_800).length);
  });
});

describe('Bash output over 10 MB', () => {
  it('keeps the head and the tail (stderr too) and starts the result by saying so', async () => {
    const result = await executeTool('Bash', { command: HUGE_COMMAND }, { cwd: workspace, signal: new AbortController().signal });
    expect(result.isError).toBe(false);
    expect(result.content).toMatch(
      /^\[Output too large: the command printed 12582944 bytes; only about its first and its last 5 MB are kept\. The \d+ bytes in between are omitted/,
    );
    expect(result.content).toContain('HEAD-MARK');
    expect(result.content).toMatch(/\[\.\.\. \d+ bytes of output omitted here \.\.\.\]/);
    expect(result.content).toMatch(/TAIL-MARK\nerr-at-end$/);
    expect(result.content.length).toBeLessThanOrEqual(MAX_CAPTURE_BYTES + 1_000);
  });

  it('through runTool: the preview of the persisted result says the middle was omitted; the file has the tail', async () => {
    const runTool = createRunTool({ stateDir: path.join(root, 'state'), executeTool });
    const result: RunToolResult = await new MockActivityEnvironment().run(runTool, {
      conversationId: 'conversation-huge',
      toolUseId: 'toolu_huge',
      name: 'Bash',
      input: { command: HUGE_COMMAND },
      cwd: workspace,
      maxResultSizeChars: 30_000,
    });
    expect(result.persistedPath).toBeDefined();
    expect(result.content.length).toBeLessThan(30_000);
    expect(result.content).toMatch(/Preview \(first \d+ characters\):\n\[Output too large: the command printed 12582944 bytes/);
    const saved = await readFile(result.persistedPath!, 'utf8');
    expect(saved).toMatch(/TAIL-MARK\nerr-at-end$/);
  });
});
