/**
 * The Temporal UI, and what a person sees through the stock `temporal` CLI: search attributes
 * as columns and filters (`durable-agent list --status/--workspace`), summaries of the idle
 * timer and of every activity, a failed tool shown as failed, heartbeat details that name the
 * tool, only user-facing signals offered, and an ended conversation (the `npm start` demo's)
 * that still answers `status` once no worker polls its queue.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureTemporalCli } from '../../infra/temporal-cli';
import { cli, isolateEnvironment } from '../helpers/cli';
import { type Harness, REPO_ROOT, createHarness, eventually, workerProcessBundle } from '../helpers/harness';

const execFileAsync = promisify(execFile);

isolateEnvironment();
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** `temporal <args…> --address … --namespace default --output json`, parsed. */
async function temporalJson(address: string, ...args: string[]): Promise<any> {
  const temporal = await ensureTemporalCli({ log: () => undefined });
  const { stdout } = await execFileAsync(temporal.path, [...args, '--address', address, '--namespace', 'default', '--output', 'json'], {
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout);
}

/** A payload as the CLI prints it in JSON (`{metadata, data}` base64), decoded. */
function decodePayload(payload: any): unknown {
  if (!payload?.data) return undefined;
  return defaultPayloadConverter.fromPayload({
    metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(String(value), 'base64')])),
    data: Buffer.from(String(payload.data), 'base64'),
  });
}

/** Events of a given attribute key in a `temporal workflow show --output json` history. */
function eventsWith(history: any, key: string): any[] {
  return (history.events ?? []).filter((event: any) => event[key]);
}

describe('the Temporal UI explains a conversation', () => {
  it('search attributes, summaries, a failed tool, the offered signals and current details', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'text', text: 'Running the tests.' },
            { type: 'tool_use', name: 'Bash', input: { command: 'echo checking; exit 3' } },
          ],
        },
        { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo fine' } }] },
        { content: [{ type: 'text', text: 'First answer.' }] },
        { content: [{ type: 'text', text: 'Second answer.' }] },
      ],
    });
    process.env.TEMPORAL_ADDRESS = harness.address;
    process.env.DURABLE_AGENT_TASK_QUEUE = harness.taskQueue;
    await harness.startWorker();
    const prompt = 'Make the failing test pass';
    const { conversationId, inputUuid } = await harness.api.start({ prompt, config: harness.config(), taskQueue: harness.taskQueue });
    expect((await harness.api.waitForResult(conversationId, inputUuid!)).result).toBe('First answer.');
    const second = await harness.api.send(conversationId, 'And again');
    expect((await harness.api.waitForResult(conversationId, second)).result).toBe('Second answer.');

    // The tool that failed went back to the model as an is_error tool_result…
    const toolResult = harness.model.requests[1].body.messages.at(-1).content[0];
    expect(toolResult).toMatchObject({ type: 'tool_result', is_error: true });
    expect(JSON.stringify(toolResult.content)).toContain('checking');

    const history = await temporalJson(harness.address, 'workflow', 'show', '--workflow-id', conversationId);
    // …and shows as a failed activity, its message naming the call.
    const failed = eventsWith(history, 'activityTaskFailedEventAttributes').map((event) => event.activityTaskFailedEventAttributes.failure);
    expect(failed).toHaveLength(1);
    expect(failed[0].message).toMatch(/^Bash: echo checking; exit 3 failed: /);
    expect(failed[0].applicationFailureInfo).toMatchObject({ type: 'ToolError', nonRetryable: true });

    // Every activity has a summary — local ones (quick model calls, Read) on their markers; the
    // model calls' labels are unique over the conversation.
    const summaries = [
      ...eventsWith(history, 'activityTaskScheduledEventAttributes'),
      ...eventsWith(history, 'markerRecordedEventAttributes').filter((event) => event.markerRecordedEventAttributes.markerName === 'core_local_activity'),
    ]
      .sort((a, b) => Number(a.eventId) - Number(b.eventId))
      .map((event) => decodePayload(event.userMetadata?.summary));
    expect(summaries.every((summary) => typeof summary === 'string' && summary !== '')).toBe(true);
    const modelCalls = summaries.filter((summary) => String(summary).startsWith('claude-sonnet-4-6: '));
    expect(modelCalls).toEqual([
      'claude-sonnet-4-6: turn 1 (query 1)',
      'claude-sonnet-4-6: turn 2 (query 1)',
      'claude-sonnet-4-6: turn 3 (query 1)',
      'claude-sonnet-4-6: turn 4 (query 2)',
    ]);
    expect(summaries).toContain('Bash: echo checking; exit 3');
    // The idle timer says what it waits for.
    const timers = eventsWith(history, 'timerStartedEventAttributes').map((event) => decodePayload(event.userMetadata?.summary));
    expect(timers.length).toBeGreaterThan(0);
    expect(timers.every((summary) => summary === 'Waiting for input; ends the conversation after 10m idle')).toBe(true);
    // Search attributes are upserted when the listed status changes (end of query 1, start and
    // end of query 2), not per loop iteration: 4 model calls, 3 upserts.
    // (The SDK's TemporalChangeVersion upserts, once per patch and run, are left aside.)
    const upserts = eventsWith(history, 'upsertWorkflowSearchAttributesEventAttributes')
      .map((event) => event.upsertWorkflowSearchAttributesEventAttributes.searchAttributes.indexedFields)
      .filter((fields) => !('TemporalChangeVersion' in fields));
    expect(upserts.map((fields) => Object.keys(fields).sort().join())).toEqual(
      Array(3).fill('DurableAgentCostUsd,DurableAgentLastActivity,DurableAgentModel,DurableAgentStatus,DurableAgentTurns'),
    );
    expect(upserts.map((fields) => decodePayload(fields.DurableAgentStatus))).toEqual(['awaiting_input', 'running', 'awaiting_input']);

    // `temporal workflow describe`: the search attributes and the static summary and details (a
    // pending activity's heartbeat details: next test; summaries of timers and activities are
    // history events, shown above by `temporal workflow show`).
    const described = await temporalJson(harness.address, 'workflow', 'describe', '--workflow-id', conversationId);
    const attributes = Object.fromEntries(
      Object.entries(described.workflowExecutionInfo.searchAttributes.indexedFields).map(([name, payload]) => [name, decodePayload(payload)]),
    );
    expect(attributes).toMatchObject({
      DurableAgentStatus: 'awaiting_input',
      DurableAgentModel: 'claude-sonnet-4-6',
      DurableAgentFirstPrompt: prompt,
      DurableAgentWorkspace: harness.workspace,
      DurableAgentTurns: 4,
    });
    expect(attributes.DurableAgentCostUsd).toBeGreaterThan(0);
    expect(Number.isNaN(Date.parse(String(attributes.DurableAgentLastActivity)))).toBe(false);
    // The CLI prints the static summary and details decoded.
    expect(described.executionConfig.userMetadata.summary).toBe(`durable-agent: ${prompt}`);
    expect(described.executionConfig.userMetadata.details).toContain(`- **workspace:** \`${harness.workspace}\``);

    // The UI's metadata: only user-facing signals and queries are offered; current details carry cost and the last answer.
    const metadata: any = await harness.client.workflow.getHandle(conversationId).query('__temporal_workflow_metadata');
    const signals = metadata.definition.signalDefinitions.map((definition: { name: string }) => definition.name).sort();
    // (@temporalio/workflow-streams registers its own `__temporal_workflow_stream_publish`, reserved-prefixed.)
    expect(signals.filter((name: string) => !name.startsWith('__temporal_'))).toEqual(['abort', 'end', 'userInput']);
    expect(signals).not.toContain('toolUseStreamed');
    expect(signals).not.toContain('subagentProgress');
    const queries = metadata.definition.queryDefinitions.map((definition: { name: string }) => definition.name);
    expect(queries).not.toContain('requestContext');
    expect(queries).not.toContain('transcriptSlice');
    expect(metadata.currentDetails).toMatch(
      /^\*\*awaiting_input\*\* · turn 4 · query 2 · claude-sonnet-4-6 · \$\d+\.\d{4}\n\n\*\*Asked:\*\* And again\n\n\*\*Last answer:\*\* Second answer\.$/,
    );

    // `durable-agent list` filters on the attributes (visibility is eventually consistent).
    const listed = await eventually(
      () => cli('list', '--status', 'awaiting_input', '--workspace', harness!.workspace),
      (output) => output.out.includes(conversationId),
    );
    expect(listed.out).toMatch(new RegExp(`${conversationId}\\s+awaiting_input\\s+4\\s+\\$\\d+\\.\\d{4}\\s+\\S+Z\\s+\\S+\\s+"${prompt}"`));
    expect((await cli('list', '--status', 'ended', '--workspace', harness.workspace)).out).toContain('No conversation matches.');
    expect(await cli('list', '--status', 'sleeping')).toMatchObject({
      code: 2,
      err: expect.stringContaining('--status must be one of running, awaiting_input'),
    });

    await harness.api.end(conversationId);
    await harness.api.summary(conversationId);
    const ended = await eventually(
      () => cli('list', '--status', 'ended', '--workspace', harness!.workspace),
      (output) => output.out.includes(conversationId),
    );
    expect(ended.code).toBe(0);
  });

  it('the timeline: a reader writes few poll updates, a permission wait names its call, reads by query are not offered', async () => {
    // A streamed answer in many small deltas, then a Bash that asks, then the answer.
    const longText = Array.from({ length: 60 }, (_, index) => `word${index}`).join(' ');
    harness = await createHarness({
      script: [
        {
          deltaDelayMs: 20,
          content: [
            { type: 'text', text: longText },
            { type: 'tool_use', name: 'Bash', input: { command: 'touch timeline-check.txt' } },
          ],
        },
        { deltaDelayMs: 20, content: [{ type: 'text', text: longText }] },
      ],
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await harness.api.start({
      prompt: 'Check the timeline',
      config: harness.config({ permissions: { mode: 'default' } }),
      taskQueue: harness.taskQueue,
    });
    // A person approves the Bash (as chat does), while the result is read from the live channel.
    let approved = false;
    let answered = false;
    const approver = (async () => {
      while (!approved && !answered) {
        const [request] = (await harness!.api.status(conversationId)).pendingPermissions ?? [];
        if (request) {
          await harness!.api.decidePermission(conversationId, { toolUseId: request.toolUseId, behavior: 'allow' });
          approved = true;
        } else await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const deltas: unknown[] = [];
    const result = await harness.api.waitForResult(conversationId, inputUuid!, { onLive: (entry) => entry.kind === 'model' && deltas.push(entry) });
    answered = true;
    await approver;
    expect(approved).toBe(true);
    expect(result.result).toBe(longText);
    expect(deltas.length).toBeGreaterThan(4); // the reader saw the answer stream, batch by batch

    const history = await temporalJson(harness.address, 'workflow', 'show', '--workflow-id', conversationId);
    const events = history.events as any[];
    // The reader long-polls (an update: two events and a workflow task) only while the
    // conversation is quiet; while it streams, it reads by query, which writes no history.
    const polls = events.filter(
      (event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === '__temporal_workflow_stream_poll',
    );
    const publishes = events.filter((event) => event.workflowExecutionSignaledEventAttributes?.signalName === '__temporal_workflow_stream_publish');
    expect(publishes.length).toBeGreaterThan(4);
    expect(polls.length).toBeLessThanOrEqual(4);
    // The permission wait names the call and what ends it (the UI shows its timer "Canceled" then).
    const timers = eventsWith(history, 'timerStartedEventAttributes').map((event) => decodePayload(event.userMetadata?.summary));
    expect(timers).toContain('Permission asked: Bash: touch timeline-check.txt — until decidePermission; denied if none in 1d');
    // The query readers use is not offered in the UI.
    const metadata: any = await harness.client.workflow.getHandle(conversationId).query('__temporal_workflow_metadata');
    expect(metadata.definition.queryDefinitions.map((definition: { name: string }) => definition.name)).not.toContain('liveRead');
    expect(metadata.currentDetails).toContain('**Permissions:** Bash allowed');
  });

  it('a running tool heartbeats its name and output tail', async () => {
    harness = await createHarness({
      script: [
        { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo heartbeat-marker-42; sleep 60' } }] },
        { content: [{ type: 'text', text: 'Stopped.' }] },
      ],
    });
    await harness.startWorker();
    const { conversationId, inputUuid } = await harness.api.start({ prompt: 'Run it', config: harness.config(), taskQueue: harness.taskQueue });
    const pending = await eventually(
      async () => (await temporalJson(harness!.address, 'workflow', 'describe', '--workflow-id', conversationId)).pendingActivities ?? [],
      // The CLI prints heartbeat details decoded.
      (activities: any[]) => activities.some((activity) => String(activity.heartbeatDetails?.[0]?.outputTail ?? '').includes('heartbeat-marker-42')),
    );
    const bash = pending.find((activity: any) => activity.activityType.name === 'runTool');
    expect(bash.heartbeatDetails[0]).toEqual({
      tool: 'Bash',
      summary: 'Bash: echo heartbeat-marker-42; sleep 60',
      outputTail: 'heartbeat-marker-42\n',
    });
    await harness.api.abort(conversationId);
    expect((await harness.api.waitForResult(conversationId, inputUuid!)).subtype).toBe('error_during_execution');
  });
});

describe('npm start', () => {
  it("the demo's conversation answers status after the demo has exited", async () => {
    harness = await createHarness();
    const environment: NodeJS.ProcessEnv = { ...process.env, TEMPORAL_ADDRESS: harness.address, TEMPORAL_NAMESPACE: 'default', ...workerProcessBundle() };
    delete environment.ANTHROPIC_API_KEY;
    delete environment.ANTHROPIC_BASE_URL;
    const demo = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'scripts', 'demo.ts')], {
      cwd: REPO_ROOT,
      env: environment,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    demo.stdout!.on('data', (chunk) => (output += chunk));
    demo.stderr!.on('data', (chunk) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => demo.on('exit', resolve));
    expect(code, output).toBe(0);
    const hint = /^Conversation (\S+) (?:started )?in /m.exec(output);
    expect(hint, output).not.toBeNull();
    const conversationId = hint![1];

    // No worker polls the demo's queue any more: status answers from the conversation's result.
    process.env.TEMPORAL_ADDRESS = harness.address;
    const status = await cli('status', conversationId);
    expect(status.code, status.err).toBe(0);
    expect(status.out).toContain('phase         ended');
    expect(status.out).toContain('Fixed: `sum` started its loop at index 1');
    expect(status.out).toMatch(/closed {8}completed at \S+ \(from its result; no worker needed\)/);
    const json = JSON.parse((await cli('status', '--json', conversationId)).out);
    expect(json).toMatchObject({ conversationId, phase: 'ended', ended: true, queryCount: 1, lastResult: { subtype: 'success' } });
    expect(json.totalCostUsd).toBeGreaterThan(0);
  }, 180_000);
});
