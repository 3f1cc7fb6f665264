/**
 * Issue 24: the conversation engine on the Temporal that production runs — the PostgreSQL stack of
 * `durable-agent server --postgres` (infra/postgres-stack.ts: the Temporal server 1.31 built from the module
 * proxy, on PostgreSQL with SQL visibility, the project's dynamic config and search attributes). One stack for the
 * whole file (each start costs time); the tests run in order on it:
 *  - a Text value with a colon vanishes from SQL visibility as it was stored before, and lists as stored now;
 *  - the foundation conversation (Read, Edit, Bash) with such a prompt, and `durable-agent list` filters on it;
 *  - a worker SIGKILLed mid-tool (a contained command: restored and run once more);
 *  - the Temporal server SIGKILLed during a model call and during a Bash command, restarted on the same database;
 *  - encrypted history.
 * Skipped, with the reason in the suite's name, only when the stack cannot be built here (no PostgreSQL, or no Go
 * and no cached server build). The first run on a machine builds the server (minutes; cached afterwards).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_PROMPT_SEARCH_ATTRIBUTE, STATUS_SEARCH_ATTRIBUTE, WORKSPACE_SEARCH_ATTRIBUTE, sqlSafeSearchAttributes } from '../../common/search-attributes';
import { encryptionDataConverter, parseKeyRing } from '../../infra/encryption-codec';
import { type PostgresStack, postgresUnavailable, startPostgresStack } from '../../infra/postgres-stack';
import { serverBinariesUnavailable } from '../../infra/temporal-server';
import { cli, isolateEnvironment } from '../helpers/cli';
import { type Harness, createHarness, eventually, expectValidApiOrder, runToResult } from '../helpers/harness';
import { liveSleepers } from '../helpers/processes';
import { bashCommandAcrossServerKill, modelCallAcrossServerKill } from '../helpers/server-kill';

const unavailable = postgresUnavailable() ?? serverBinariesUnavailable();
const quiet = (): void => {};

isolateEnvironment();
let stateDir: string;
let stack: PostgresStack | undefined;
let harness: Harness | undefined;

beforeAll(async () => {
  if (unavailable) return;
  stateDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-pg-'));
  // PostgreSQL runs as the postgres user when we are root: it must reach its data directory.
  await chmod(stateDir, 0o755);
  stack = await startPostgresStack({ stateDir, noFsync: true, log: process.env.DURABLE_AGENT_STACK_LOG ? undefined : quiet });
}, 45 * 60_000);

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

afterAll(async () => {
  await stack?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 60_000);

/** The stack for the shared server-kill scenarios (test/helpers/server-kill.ts). */
function serverKillContext() {
  return { address: stack!.address, killAndRestart: killAndRestartServer, track: (created: Harness) => (harness = created) };
}

/** kill -9 the Temporal server, then start it again on the same database and ports. */

async function killAndRestartServer(): Promise<void> {
  const old = stack!.server.pid;
  await stack!.killServer();
  await stack!.startServer();
  expect(stack!.server.pid).not.toBe(old);
}

async function listedIds(query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of harness!.client.workflow.list({ query })) ids.push(execution.workflowId);
  return ids;
}

const COLON_PROMPT = 'Fix the typo in greeting.txt [[scenario:foundation-edit]]';

describe.skipIf(unavailable)(`on the PostgreSQL stack${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  it('a first prompt with a colon: stored as it was, the conversation vanishes from list; stored as now, it lists and is found by its words', async () => {
    harness = await createHarness({}, { address: stack!.address });
    // No worker: only the start and its visibility record matter here.
    const start = (id: string, prompt: string, sanitize: boolean) => {
      const pairs = [
        { key: STATUS_SEARCH_ATTRIBUTE, value: 'running' },
        { key: FIRST_PROMPT_SEARCH_ATTRIBUTE, value: prompt },
        { key: WORKSPACE_SEARCH_ATTRIBUTE, value: harness!.workspace },
      ];
      return harness!.client.workflow.start('conversationWorkflow', {
        workflowId: id,
        taskQueue: harness!.taskQueue,
        args: [{ config: harness!.config() }],
        typedSearchAttributes: sanitize ? sqlSafeSearchAttributes(pairs) : pairs,
      });
    };
    const raw = await start(`raw-${randomUUID()}`, COLON_PROMPT, false);
    const safe = await start(`safe-${randomUUID()}`, COLON_PROMPT, true);
    try {
      const inWorkspace = `${WORKSPACE_SEARCH_ATTRIBUTE.name} = '${harness.workspace}'`;
      await eventually(
        () => listedIds(inWorkspace),
        (ids) => ids.includes(safe.workflowId),
        30_000,
      );
      // Both were started before: had the raw one's visibility write worked, it would be listed by now too.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const ids = await listedIds(inWorkspace);
      expect(ids).toEqual([safe.workflowId]);
      // The Text attribute's words are searchable: on PostgreSQL, a word is what whitespace separates, as written
      // (`::tsvector`: "greeting.txt" is one word; the colon's right side "foundation-edit]]" another).
      for (const word of ['typo', 'greeting.txt', 'foundation-edit]]']) {
        expect(await listedIds(`${inWorkspace} AND ${FIRST_PROMPT_SEARCH_ATTRIBUTE.name} = '${word}'`)).toEqual([safe.workflowId]);
      }
      expect(await listedIds(`${inWorkspace} AND ${FIRST_PROMPT_SEARCH_ATTRIBUTE.name} = 'unrelated'`)).toEqual([]);
      // Described, the raw one is there: it is only missing from visibility.
      expect((await raw.describe()).status.name).toBe('RUNNING');
    } finally {
      await raw.terminate('test over').catch(() => undefined);
      await safe.terminate('test over').catch(() => undefined);
    }
  });

  it('the foundation conversation (Read, Edit, Bash) completes, and `durable-agent list` filters it on SQL visibility', async () => {
    harness = await createHarness(
      {
        script: [
          {
            content: [
              { type: 'text', text: 'Reading the notes.' },
              { type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } },
            ],
          },
          { content: [{ type: 'tool_use', name: 'Edit', input: { file_path: 'app.txt', old_string: 'version=1', new_string: 'version=2' } }] },
          { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'cat app.txt > built.txt && echo built' } }] },
          { content: [{ type: 'text', text: 'Bumped the version and built it.' }] },
        ],
      },
      { address: stack!.address },
    );
    await writeFile(path.join(harness.workspace, 'notes.txt'), 'Bump the version.\n');
    await writeFile(path.join(harness.workspace, 'app.txt'), 'name=demo\nversion=1\n');
    await harness.startWorker();

    const { result, conversationId } = await runToResult(harness, `Do what notes.txt says, then build: ${COLON_PROMPT}`);
    expect(result).toMatchObject({
      subtype: 'success',
      is_error: false,
      result: 'Bumped the version and built it.',
      num_turns: 4,
      transitions: ['tool_use', 'tool_use', 'tool_use'],
    });
    expect(await readFile(path.join(harness.workspace, 'app.txt'), 'utf8')).toBe('name=demo\nversion=2\n');
    expect(await readFile(path.join(harness.workspace, 'built.txt'), 'utf8')).toBe('name=demo\nversion=2\n');
    for (const request of harness.model.requests) expectValidApiOrder(request);

    process.env.TEMPORAL_ADDRESS = stack!.address;
    process.env.TEMPORAL_NAMESPACE = 'default';
    const listed = await eventually(
      () => cli('list', '--workspace', harness!.workspace, '--status', 'awaiting_input'),
      (run) => run.code === 0 && run.out.includes(conversationId),
      30_000,
    );
    expect(listed.out).toContain('Do what notes.txt says');
    const ended = await cli('list', '--workspace', harness.workspace, '--status', 'ended');
    expect(ended.code).toBe(0);
    expect(ended.out).not.toContain(conversationId);
    const otherModel = await cli('list', '--workspace', harness.workspace, '--model', 'claude-opus-4-1');
    expect(otherModel.out).not.toContain(conversationId);
    const sameModel = await cli('list', '--workspace', harness.workspace, '--model', 'claude-sonnet-4-6');
    expect(sameModel.out).toContain(conversationId);
  });

  it('a subagent whose prompt has a colon: the child conversation lists on SQL visibility too (its start attributes are made safe in the workflow)', async () => {
    const isChild = (request: { body: { tools: Array<{ name: string }> } }) => !request.body.tools.some((tool) => tool.name === 'Agent');
    harness = await createHarness(
      {
        respond: (request) => {
          if (isChild(request)) return { content: [{ type: 'text', text: 'Counted: 0 files.' }] };
          if (JSON.stringify(request.body.messages.at(-1)?.content ?? '').includes('tool_result'))
            return { content: [{ type: 'text', text: 'The agent counted.' }] };
          return {
            content: [
              {
                type: 'tool_use',
                id: 'toolu_pg_agent',
                name: 'Agent',
                input: { description: 'count', prompt: "Count files: report as 'n:files' [[x:y]]", subagent_type: 'general-purpose' },
              },
            ],
          };
        },
      },
      { address: stack!.address },
    );
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'How many files? Use an agent: [[scenario:subagent]]');
    expect(result).toMatchObject({ subtype: 'success', result: 'The agent counted.' });
    const listed = await eventually(
      () => listedIds(`${WORKSPACE_SEARCH_ATTRIBUTE.name} = '${harness!.workspace}' AND ${FIRST_PROMPT_SEARCH_ATTRIBUTE.name} = 'files'`),
      (ids) => ids.length >= 1,
      30_000,
    );
    expect(listed).toHaveLength(1);
    expect(listed[0]).not.toBe(conversationId);
    expect(listed[0]).toContain(conversationId);
  });

  it('a worker SIGKILLed mid-tool: the command dies with it; contained (sandboxed, network off), it is restored and run once more, and the conversation completes', async () => {
    harness = await createHarness(
      {
        script: [
          { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo started >> log.txt; sleep 4.625; echo ran >> log.txt' } }] },
          { content: [{ type: 'text', text: 'I will check the workspace first.' }] },
        ],
      },
      { address: stack!.address },
    );
    const first = await harness.spawnWorkerProcess();
    const started = await harness.api.start({ prompt: 'run the job', config: harness.config(), taskQueue: harness.taskQueue });
    await eventually(
      async () => liveSleepers('4.625').length,
      (count) => count === 1,
    );
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    await eventually(
      async () => liveSleepers('4.625').length,
      (count) => count === 0,
      10_000,
    );
    // Half-run: the first line is there, the second never came.
    expect(await readFile(path.join(harness.workspace, 'log.txt'), 'utf8')).toBe('started\n');

    await harness.spawnWorkerProcess();
    const result = await harness.api.waitForResult(started.conversationId, started.inputUuid!);
    expect(result).toMatchObject({ subtype: 'success', result: 'I will check the workspace first.' });
    const toolResult = harness.model.requests[1].body.messages.at(-1).content[0];
    expect(toolResult).toMatchObject({ type: 'tool_result' });
    // Says what the model got when it fails (once under a loaded full suite in session 22; not reproduced alone).
    expect(toolResult.is_error, JSON.stringify(toolResult.content)).not.toBe(true);
    // Issue 31: the retry put the workspace back to the checkpoint before the call and ran it again: each line once.
    expect(await readFile(path.join(harness.workspace, 'log.txt'), 'utf8')).toBe('started\nran\n');
    expect(harness.model.requests).toHaveLength(2);
  });

  it('the Temporal server SIGKILLed during a model call and restarted on the same database: the answer once', () =>
    modelCallAcrossServerKill(serverKillContext()));

  it('the Temporal server SIGKILLed during a Bash command and restarted on the same database: the command ran once', () =>
    bashCommandAcrossServerKill(serverKillContext(), 30_000));

  it('encrypted history: only ciphertext in what PostgreSQL stores and serves; the conversation lists without its prompt', async () => {
    const marker = randomUUID().slice(0, 8);
    const prompt = `PROMPT-${marker}: write secret.txt`;
    const content = `CONTENT-${marker}: the merger closes on Friday`;
    const answer = `ANSWER-${marker}: done`;
    const ring = parseKeyRing(`pg-key-1:${randomBytes(32).toString('base64')}`, 'test');
    harness = await createHarness(
      {
        script: [
          { content: [{ type: 'tool_use', name: 'Write', input: { file_path: 'secret.txt', content } }] },
          { content: [{ type: 'text', text: answer }] },
        ],
      },
      { address: stack!.address, dataConverter: encryptionDataConverter(ring) },
    );
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, prompt);
    expect(result.result).toBe(answer);
    expect(await readFile(path.join(harness.workspace, 'secret.txt'), 'utf8')).toBe(content);

    // The raw history, as the server returns it from PostgreSQL, without the key.
    const history = await harness.client.workflowService.getWorkflowExecutionHistory({ namespace: 'default', execution: { workflowId: conversationId } });
    const bytes = Buffer.from(JSON.stringify(history)).toString('latin1');
    const raw = Buffer.concat(
      (history.history?.events ?? []).flatMap((event) => {
        const found: Buffer[] = [];
        const walk = (value: unknown) => {
          if (value instanceof Uint8Array) found.push(Buffer.from(value));
          else if (value && typeof value === 'object') for (const child of Object.values(value)) walk(child);
        };
        walk(event);
        return found;
      }),
    ).toString('utf8');
    for (const secret of [`PROMPT-${marker}`, `CONTENT-${marker}`, `ANSWER-${marker}`]) {
      expect(bytes).not.toContain(secret);
      expect(raw).not.toContain(secret);
    }
    // Listed by status; no first prompt or workspace in its (clear-text) search attributes.
    const execution = await eventually(
      async () => {
        for await (const found of harness!.client.workflow.list({
          query: `WorkflowId = '${conversationId}' AND ${STATUS_SEARCH_ATTRIBUTE.name} = 'awaiting_input'`,
        }))
          return found;
        return undefined;
      },
      (found) => found !== undefined,
      30_000,
    );
    expect(execution!.typedSearchAttributes.get(FIRST_PROMPT_SEARCH_ATTRIBUTE)).toBeUndefined();
    expect(execution!.typedSearchAttributes.get(WORKSPACE_SEARCH_ATTRIBUTE)).toBeUndefined();
  });
});
