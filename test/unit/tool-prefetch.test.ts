/**
 * Tool prefetch (common/tool-prefetch.ts, workflows/query/prefetched-calls.ts, activities/prefetch-reads.ts):
 * which calls of an answer the local phase of a model call runs — tool, permission allow/ask/deny,
 * tool queue, calls after an unsafe one — with the budget the workflow would give them, and that
 * a prefetched call's result is the runTool activity's.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createToolRunner } from '../../activities/run-tool';
import { mapWithConcurrency, prefetchTools } from '../../activities/prefetch-reads';
import { executeTool } from '../../activities/tools';
import type { RunToolInput, RunToolResult } from '../../common/activity-types';
import type { AssistantApiMessage, AssistantContentBlock, ToolUseBlock } from '../../common/messages';
import type { PermissionContext } from '../../common/permissions';
import { gatherCallFacts } from '../../activities/permission-facts/gather';
import { type PrefetchedToolResult, type ToolPrefetchPlan, callsJudgedOnFacts, toolsToPrefetch } from '../../common/tool-prefetch';
import { toolResultBudget } from '../../common/tool-result-budget';
import { LOCAL_TOOLS } from '../../workflows/deps/tool-run';
import { prefetchedCalls, takePrefetched, toolPrefetchPlan } from '../../workflows/query/prefetched-calls';

const CWD = '/work/project';

function permission(rules: { allow?: string[]; deny?: string[]; ask?: string[] } = {}, mode: PermissionContext['mode'] = 'default'): PermissionContext {
  const list = (values: string[] = []) => values.map((rule) => ({ rule, source: 'cliArg' as const }));
  return { mode, rules: { allow: list(rules.allow), deny: list(rules.deny), ask: list(rules.ask) }, workingDirectories: [CWD] };
}

const plan = (overrides: Partial<ToolPrefetchPlan> = {}): ToolPrefetchPlan => ({
  tools: ['Read', 'Glob', 'Grep'],
  cwd: CWD,
  maxResultSizeChars: { Read: 100_000, Glob: 20_000, Grep: 20_000 },
  ...overrides,
});

let ids = 0;
const use = (name: string, input: unknown): ToolUseBlock => ({ type: 'tool_use', id: `toolu_${++ids}`, name, input });
const read = (file: string) => use('Read', { file_path: file });
const ids_ = (calls: Array<{ id: string }>) => calls.map((call) => call.id);

describe('which calls are prefetched (toolsToPrefetch)', () => {
  it('only tools of the plan; text and unknown tools are skipped', () => {
    const blocks: AssistantContentBlock[] = [
      { type: 'text', text: 'Looking.' },
      read('a.txt'),
      use('Glob', { pattern: '*.ts' }),
      use('Grep', { pattern: 'x' }),
      use('WebFetch', { url: 'x' }),
    ];
    expect(toolsToPrefetch(blocks, plan()).map((call) => call.name)).toEqual(['Read', 'Glob', 'Grep']);
    expect(toolsToPrefetch(blocks, plan({ tools: ['Read'] })).map((call) => call.name)).toEqual(['Read']);
    expect(toolsToPrefetch(blocks, plan({ tools: [] }))).toEqual([]);
  });

  it('nothing after an unsafe call (it runs first and may change what a read sees); a read-only Bash is no barrier', async () => {
    const [a, edit, b] = [read('a.txt'), use('Edit', { file_path: 'b.txt', old_string: 'x', new_string: 'y' }), read('b.txt')];
    expect(ids_(toolsToPrefetch([a, edit, b], plan()))).toEqual([a.id]);
    // A Bash call is judged on its facts (issue 29): the reads after it wait without them.
    const [c, ls, d] = [read('c.txt'), use('Bash', { command: 'ls' }), read('d.txt')];
    const lsFacts = await gatherCallFacts({ toolUseId: ls.id, name: 'Bash', input: ls.input }, CWD);
    expect(ids_(toolsToPrefetch([c, ls, d], plan(), new Map([[ls.id, lsFacts]])))).toEqual([c.id, d.id]);
    expect(ids_(toolsToPrefetch([c, ls, d], plan()))).toEqual([c.id]);
    expect(callsJudgedOnFacts([c, ls, d], plan()).map((call) => call.id)).toEqual([ls.id]);
    expect(callsJudgedOnFacts([c, d, ls], plan())).toEqual([]);
    const [e, rm, f] = [read('e.txt'), use('Bash', { command: 'rm -rf build' }), read('f.txt')];
    const rmFacts = await gatherCallFacts({ toolUseId: rm.id, name: 'Bash', input: rm.input }, CWD);
    expect(ids_(toolsToPrefetch([e, rm, f], plan(), new Map([[rm.id, rmFacts]])))).toEqual([e.id]);
    // Invalid input is not concurrency-safe: a serial call of its own.
    const [bad, g] = [use('Read', { path: 'nope' }), read('g.txt')];
    expect(toolsToPrefetch([bad, g], plan())).toEqual([]);
  });

  it('permission: allow runs, ask and deny do not (the gate’s own engine and context)', () => {
    const inside = read('src/a.ts');
    const outside = read('/etc/passwd');
    const secret = read('.env');
    const blocks = [inside, outside, secret];
    // No permissions config: tools run unchecked, as the gate's allowsWithoutAsking.
    expect(ids_(toolsToPrefetch(blocks, plan()))).toEqual([inside.id, outside.id, secret.id]);
    // Default mode: a read outside the working directories asks; a deny rule denies.
    expect(ids_(toolsToPrefetch(blocks, plan({ permission: permission({ deny: ['Read(.env)'] }) })))).toEqual([inside.id]);
    // An ask rule asks even inside the workspace; an allow rule lets the outside read run.
    expect(ids_(toolsToPrefetch(blocks, plan({ permission: permission({ ask: ['Read(src/**)'], allow: ['Read(//etc/**)'] }) })))).toEqual([
      outside.id,
      secret.id,
    ]);
    // dontAsk turns the ask into a denial: still not run.
    expect(ids_(toolsToPrefetch(blocks, plan({ permission: permission({}, 'dontAsk') })))).toEqual([inside.id, secret.id]);
  });

  it('the budget runTool would give: the tool’s cap or its share among all tool_use blocks of the message', () => {
    const reads = Array.from({ length: 4 }, (_, index) => read(`r${index}.txt`));
    const blocks = [...reads, use('Bash', { command: 'rm x' })];
    const calls = toolsToPrefetch(blocks, plan());
    expect(calls).toHaveLength(4);
    for (const call of calls) expect(call.maxResultSizeChars).toBe(toolResultBudget(100_000, 5));
    expect(toolsToPrefetch([read('one.txt')], plan())[0].maxResultSizeChars).toBe(100_000);
    expect(toolsToPrefetch([use('Grep', { pattern: 'x' })], plan())[0].maxResultSizeChars).toBe(20_000);
  });
});

describe('the workflow’s plan (toolPrefetchPlan)', () => {
  const config = { cwd: CWD, tools: undefined, toolTaskQueue: undefined, localReadOnlyTools: true, prefetchReadOnlyTools: true, maxToolUseConcurrency: 10 };
  const sources = (overrides: Partial<Parameters<typeof toolPrefetchPlan>[0]> = {}) => ({
    config,
    taskQueue: 'main',
    localTools: LOCAL_TOOLS,
    permission: () => undefined,
    ...overrides,
  });

  it('the local tools, with each tool’s own cap and the gate’s context', () => {
    expect(toolPrefetchPlan(sources())).toEqual({
      tools: ['Read', 'Glob', 'Grep'],
      cwd: CWD,
      maxResultSizeChars: { Read: 100_000, Glob: 20_000, Grep: 20_000 },
      maxConcurrency: 10,
    });
    const context = permission({ deny: ['Read(.env)'] });
    expect(toolPrefetchPlan(sources({ permission: () => context, stream: { workflowId: 'c' } }))).toMatchObject({
      permission: context,
      stream: { workflowId: 'c' },
    });
  });

  it('none when tools run on another queue, local read-only tools are off, prefetch is off, or the host cannot tell the permissions', () => {
    expect(toolPrefetchPlan(sources({ config: { ...config, toolTaskQueue: 'workspace-host' } }))).toBeUndefined();
    expect(toolPrefetchPlan(sources({ config: { ...config, toolTaskQueue: 'main' } }))).toBeDefined();
    expect(toolPrefetchPlan(sources({ config: { ...config, localReadOnlyTools: false } }))).toBeUndefined();
    expect(toolPrefetchPlan(sources({ config: { ...config, prefetchReadOnlyTools: false } }))).toBeUndefined();
    expect(toolPrefetchPlan(sources({ permission: undefined }))).toBeUndefined();
  });

  it('only tools the conversation offers', () => {
    expect(toolPrefetchPlan(sources({ config: { ...config, tools: ['Read', 'Bash'] } }))?.tools).toEqual(['Read']);
    expect(toolPrefetchPlan(sources({ config: { ...config, tools: ['Bash'] } }))).toBeUndefined();
  });
});

describe('prefetched results on the workflow side', () => {
  const a = read('a.txt');
  const b = read('b.txt');
  const message = (content: AssistantContentBlock[]): AssistantApiMessage => ({
    id: 'msg',
    role: 'assistant',
    model: 'm',
    content,
    stop_reason: 'tool_use',
    usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  });

  it('used once, only for the same call with the same number of siblings', () => {
    const calls = prefetchedCalls({
      type: 'message',
      message: message([a, b]),
      durationMs: 1,
      attempt: 1,
      prefetched: [
        { toolUseId: a.id, result: { content: 'A', isError: false } },
        { toolUseId: b.id, result: { content: 'B', isError: false } },
      ],
    });
    expect(takePrefetched(calls, a, 2)).toEqual({ content: 'A', isError: false });
    expect(takePrefetched(calls, a, 2)).toBeUndefined();
    // Started early from a streamed report (another budget): run as ever.
    expect(takePrefetched(calls, b, 1)).toBeUndefined();
    expect(takePrefetched(calls, b, 2)).toBeUndefined();
  });

  it('a call whose input differs from the one run is not served', () => {
    const calls = prefetchedCalls({
      type: 'message',
      message: message([a]),
      durationMs: 1,
      attempt: 1,
      prefetched: [{ toolUseId: a.id, result: { content: 'A', isError: false } }],
    });
    expect(takePrefetched(calls, { ...a, input: { file_path: 'other.txt' } }, 1)).toBeUndefined();
  });

  it('none from an answer without prefetched results (a regular call)', () => {
    expect(prefetchedCalls({ type: 'message', message: message([a]), durationMs: 1, attempt: 1 })).toBeUndefined();
    expect(prefetchedCalls({ type: 'prompt_too_long', errorMessage: 'x', durationMs: 1, attempt: 1 })).toBeUndefined();
  });
});

describe('the local phase runs them through runTool’s own function (prefetchTools)', () => {
  let root: string;
  let workspace: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'durable-agent-prefetch-'));
    workspace = path.join(root, 'workspace');
    await mkdir(workspace);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const answer = (content: AssistantContentBlock[], stop: AssistantApiMessage['stop_reason'] = 'tool_use'): AssistantApiMessage => ({
    id: 'msg',
    role: 'assistant',
    model: 'm',
    content,
    stop_reason: stop,
    usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  });

  it('the same results as the runTool activity, a large one persisted the same way; denied and missing calls left out', async () => {
    await writeFile(path.join(workspace, 'small.txt'), 'hello\n');
    await writeFile(path.join(workspace, 'big.txt'), `${'x'.repeat(99)}\n`.repeat(1_500));
    const runner = createToolRunner({ stateDir: path.join(root, 'state'), executeTool });
    const small = read('small.txt');
    const big = read('big.txt');
    const missing = read('missing.txt');
    const denied = read('.env');
    const message = answer([small, big, missing, denied]);
    const prefetchPlan = plan({ cwd: workspace, permission: { ...permission({ deny: ['Read(.env)'] }), workingDirectories: [workspace] } });
    const prefetched: PrefetchedToolResult[] | undefined = await new MockActivityEnvironment().run(() =>
      prefetchTools(message, prefetchPlan, 'conv-1', runner.runToolToResult),
    );
    expect(prefetched?.map((entry) => entry.toolUseId)).toEqual([small.id, big.id, missing.id]);

    // What the runTool activity returns for each, with the budget the workflow gives it (4 calls in the message).
    for (const block of [small, big, missing]) {
      const input: RunToolInput = {
        conversationId: 'conv-1',
        toolUseId: block.id,
        name: 'Read',
        input: block.input,
        cwd: workspace,
        maxResultSizeChars: toolResultBudget(100_000, 4),
      };
      const direct: RunToolResult = await new MockActivityEnvironment().run(runner.runToolToResult, input);
      const entry = prefetched!.find((candidate) => candidate.toolUseId === block.id)!;
      expect(entry.result).toEqual({ content: direct.content, isError: direct.isError, ...(direct.persistedPath && { persistedPath: direct.persistedPath }) });
    }
    expect(prefetched!.find((entry) => entry.toolUseId === big.id)!.result.persistedPath).toBeDefined();
    expect(prefetched!.find((entry) => entry.toolUseId === missing.id)!.result.isError).toBe(true);
  });

  it('nothing for an answer that does not stop for tools, or asks for none of the plan’s', async () => {
    const runner = createToolRunner({ stateDir: path.join(root, 'state'), executeTool });
    const env = new MockActivityEnvironment();
    expect(await env.run(() => prefetchTools(answer([read('a.txt')], 'max_tokens'), plan({ cwd: workspace }), 'c', runner.runToolToResult))).toBeUndefined();
    expect(await env.run(() => prefetchTools(answer([use('Bash', { command: 'ls' })]), plan({ cwd: workspace }), 'c', runner.runToolToResult))).toBeUndefined();
  });

  it('a Bash call before a read is judged on its parsed command where the prefetch runs (issue 29): read-only lets the read run, a write stops it', async () => {
    const runTool = async (input: RunToolInput) => ({ toolUseId: input.toolUseId, content: `read ${input.toolUseId}`, isError: false, durationMs: 0 });
    const after = read('a.txt');
    const readOnly = await prefetchTools(answer([use('Bash', { command: 'ls | wc -l' }), after]), plan({ cwd: workspace }), 'c', runTool);
    expect(readOnly?.map((entry) => entry.toolUseId)).toEqual([after.id]);
    const later = read('b.txt');
    expect(await prefetchTools(answer([use('Bash', { command: 'ls > listing.txt' }), later]), plan({ cwd: workspace }), 'c', runTool)).toBeUndefined();
    const last = read('c.txt');
    expect(
      await prefetchTools(answer([use('Bash', { command: 'echo ${PATH:=/tmp/evil}; ls' }), last]), plan({ cwd: workspace }), 'c', runTool),
    ).toBeUndefined();
  });

  it('a call not done by the deadline, or that throws, is left to the workflow', async () => {
    const fast = read('fast.txt');
    const slow = read('slow.txt');
    const broken = read('broken.txt');
    const runTool = async (input: RunToolInput, signal?: AbortSignal) => {
      if (input.toolUseId === broken.id) throw new Error('disk on fire');
      if (input.toolUseId === slow.id) await new Promise((resolve) => signal!.addEventListener('abort', resolve));
      return { toolUseId: input.toolUseId, content: `read ${input.toolUseId}`, isError: false, durationMs: 0 };
    };
    const prefetched = await prefetchTools(answer([fast, slow, broken]), plan(), 'c', runTool, 50);
    expect(prefetched).toEqual([{ toolUseId: fast.id, result: { content: `read ${fast.id}`, isError: false } }]);
  });
});

describe('prefetched calls respect maxToolUseConcurrency', () => {
  it('the plan carries the conversation’s limit', () => {
    const plan = toolPrefetchPlan({
      config: { cwd: '/w', tools: undefined, toolTaskQueue: undefined, localReadOnlyTools: true, prefetchReadOnlyTools: true, maxToolUseConcurrency: 3 },
      taskQueue: 'q',
      localTools: LOCAL_TOOLS,
      permission: () => undefined,
    });
    expect(plan?.maxConcurrency).toBe(3);
  });

  it('mapWithConcurrency runs at most `limit` at once and keeps the order', async () => {
    let running = 0;
    let most = 0;
    const results = await mapWithConcurrency([5, 1, 4, 2, 3, 0], 2, async (ms) => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, ms * 5));
      running--;
      return ms * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30, 0]);
    expect(most).toBe(2);
  });
});
