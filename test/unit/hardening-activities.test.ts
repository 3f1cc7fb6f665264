/** Issue 12 regression tests for activities: bounded Stop hook output (5), a per-conversation tool journal (8). */
import { MockActivityEnvironment } from '@temporalio/testing';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunStopHooksResult, RunToolInput, RunToolResult } from '../../common/activity-types';
import { createRunTool } from '../../activities/run-tool';
import { HOOK_OUTPUT_PREVIEW_CHARS, runStopHooks } from '../../activities/hooks/stop-hooks';
import { executeTool } from '../../activities/tools';

let root: string;
let workspace: string;
let stateDir: string;
const savedStateDir = process.env.DURABLE_AGENT_STATE_DIR;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'durable-agent-hardening-'));
  workspace = path.join(root, 'workspace');
  stateDir = path.join(root, 'state');
  await mkdir(workspace);
  process.env.DURABLE_AGENT_STATE_DIR = stateDir;
});

afterEach(async () => {
  if (savedStateDir === undefined) delete process.env.DURABLE_AGENT_STATE_DIR;
  else process.env.DURABLE_AGENT_STATE_DIR = savedStateDir;
  await rm(root, { recursive: true, force: true });
});

describe('defect 5: Stop hook output is bounded', () => {
  it('a hook printing ~3 MB yields a head and tail preview and the full output in a file', async () => {
    const environment = new MockActivityEnvironment();
    const result: RunStopHooksResult = await environment.run(runStopHooks, {
      conversationId: 'conversation-hooks',
      cwd: workspace,
      stopHookActive: false,
      lastAssistantMessage: 'done',
      hooks: [
        {
          hooks: [
            {
              type: 'command' as const,
              command: `node -e "process.stdout.write('HEAD' + 'x'.repeat(3 * 1024 * 1024) + 'TAIL'); process.stderr.write('e'.repeat(100000)); process.exitCode = 2"`,
            },
          ],
        },
      ],
    });
    const [outcome] = result.outcomes;
    expect(outcome.exitCode).toBe(2);
    expect(outcome.stdout.length).toBeLessThan(HOOK_OUTPUT_PREVIEW_CHARS + 1_000);
    expect(outcome.stdout.startsWith('HEAD')).toBe(true);
    expect(outcome.stdout.endsWith('TAIL')).toBe(true);
    const saved = /Full output saved to: (\S+) \.\.\.\]/.exec(outcome.stdout)?.[1];
    expect(saved).toBeDefined();
    expect(saved!.startsWith(stateDir)).toBe(true);
    expect((await readFile(saved!, 'utf8')).length).toBe(3 * 1024 * 1024 + 8);
    expect(outcome.stderr.length).toBeLessThan(HOOK_OUTPUT_PREVIEW_CHARS + 1_000);
    expect(outcome.blockingError!.length).toBeLessThanOrEqual(10_000);
    // The whole result stays far below Temporal's payload limits.
    expect(JSON.stringify(result).length).toBeLessThan(100_000);
  }, 30_000);
});

describe('defect 8: the tool journal is keyed by conversation', () => {
  it('two conversations reusing a tool_use id both run their own Write', async () => {
    const runTool = createRunTool({ stateDir, executeTool });
    const call = (conversationId: string, file: string): RunToolInput => ({
      conversationId,
      toolUseId: 'toolu_reused_01',
      name: 'Write',
      input: { file_path: file, content: `from ${conversationId}` },
      cwd: workspace,
      maxResultSizeChars: 100_000,
    });
    const first: RunToolResult = await new MockActivityEnvironment().run(runTool, call('conversation-1', 'new1.txt'));
    const second: RunToolResult = await new MockActivityEnvironment().run(runTool, call('conversation-2', 'new2.txt'));
    expect(first).toMatchObject({ isError: false, content: `File created successfully at: ${path.join(workspace, 'new1.txt')}` });
    expect(second).toMatchObject({ isError: false, content: `File created successfully at: ${path.join(workspace, 'new2.txt')}` });
    expect(second.fromJournal).toBeUndefined();
    expect(await readFile(path.join(workspace, 'new2.txt'), 'utf8')).toBe('from conversation-2');

    // A retry within one conversation is still answered by the journal.
    const retried: RunToolResult = await new MockActivityEnvironment({ attempt: 2 }).run(runTool, call('conversation-1', 'new1.txt'));
    expect(retried).toMatchObject({ fromJournal: true, content: first.content });
  }, 30_000);
});
