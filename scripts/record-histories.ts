/**
 * Records workflow histories into test/histories/ for the replay test (test/integration/replay.test.ts).
 *
 *   npx tsx scripts/record-histories.ts [scenario ...]     (default: all)
 *
 * Each scenario runs a real conversation (ephemeral dev server, real worker, the scripted model
 * server) and saves its event history. The replay test then proves that today's workflow code is
 * deterministic: it replays, command for command, what it recorded.
 *
 * Re-record the histories whenever the workflow code changes (all of them: `npx tsx
 * scripts/record-histories.ts`, a few minutes). They prove determinism of today's code, not
 * compatibility with yesterday's: upgrades are carried by Worker Versioning (docs/deployment.md,
 * "Upgrades with Worker Versioning": a conversation stays on the build it started on), so a
 * replay failure after a change only means these files are stale. The exception is a hotfix to
 * code that pinned conversations run (workflows/patches.ts): check that it replays the histories
 * recorded before it, then re-record.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createActivities } from '../activities';
import { McpConnectionManager } from '../activities/mcp/connections';
import { ConversationClient } from '../client/api';
import type { ConversationConfigInput } from '../common/config';
import { promptResponder } from '../testing/prompt-responder';
import { type ScriptedModelServerOptions, startScriptedModelServer } from '../testing/scripted-model-server';
import { createWorker } from '../worker/worker';
import { startDevServer } from '../infra/dev-server';

const HISTORIES_DIR = path.resolve(__dirname, '..', 'test', 'histories');

interface Scenario {
  name: string;
  model: ScriptedModelServerOptions;
  config?: Partial<ConversationConfigInput>;
  files?: Record<string, string>;
  /** Drives the conversation after it started with `prompt`; must end it. */
  drive(api: ConversationClient, id: string, firstInput: string): Promise<void>;
  prompt: string;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'tools-follow-up-end',
    prompt: 'Read notes.txt, update app.txt, build, then tell me.',
    files: { 'notes.txt': 'bump version\n', 'app.txt': 'version=1\n' },
    model: {
      script: [
        {
          content: [
            { type: 'text', text: 'Looking.' },
            { type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } },
            { type: 'tool_use', name: 'Glob', input: { pattern: '*.txt' } },
          ],
        },
        { content: [{ type: 'tool_use', name: 'Edit', input: { file_path: 'app.txt', old_string: 'version=1', new_string: 'version=2' } }] },
        { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'cat app.txt' } }] },
        { content: [{ type: 'text', text: 'Done: version=2.' }] },
        { content: [{ type: 'text', text: 'It was version=1 before.' }] },
      ],
    },
    async drive(api, id, firstInput) {
      await api.waitForResult(id, firstInput);
      const second = await api.send(id, 'What was it before?');
      await api.waitForResult(id, second);
      await api.end(id);
    },
  },
  {
    name: 'abort-tools',
    prompt: 'Run the long job.',
    model: {
      script: [{ content: [{ type: 'tool_use', name: 'Bash', input: { command: 'sleep 30' } }] }, { content: [{ type: 'text', text: 'Stopped as asked.' }] }],
    },
    async drive(api, id, firstInput) {
      for (let i = 0; i < 200; i++) {
        const status = await api.status(id);
        if (status.toolsInFlight.length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await api.abort(id);
      await api.waitForResult(id, firstInput);
      const second = await api.send(id, 'Never mind, just say so.');
      await api.waitForResult(id, second);
      await api.end(id);
    },
  },
  {
    name: 'streaming-tools-fallback',
    prompt: 'Look around, then summarize.',
    files: { 'a.txt': 'a\n', 'b.txt': 'b\n' },
    config: { fallbackModel: 'claude-haiku-4-5', modelMaximumAttempts: 5 },
    model: {
      // Two safe calls start while the reply streams; the next call is overloaded until the
      // fallback model takes over.
      respond: (request) => {
        const turn = request.body.messages.filter((message: { role: string }) => message.role === 'assistant').length;
        if (turn === 0) {
          return {
            deltaDelayMs: 20,
            content: [
              { type: 'tool_use', name: 'Read', input: { file_path: 'a.txt' } },
              { type: 'tool_use', name: 'Grep', input: { pattern: 'b' } },
              { type: 'text', text: 'Reading both files while I keep talking about what I will do next.' },
            ],
          };
        }
        if (request.body.model !== 'claude-haiku-4-5') return { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } };
        return { content: [{ type: 'text', text: 'a and b.' }] };
      },
    },
    async drive(api, id, firstInput) {
      await api.waitForResult(id, firstInput);
      await api.end(id);
    },
  },
  {
    name: 'mid-query-continue-as-new',
    prompt: 'Write two files.',
    config: { continueAsNewAfterEvents: 10 },
    model: {
      script: [
        { content: [{ type: 'tool_use', name: 'Write', input: { file_path: 'one.txt', content: '1' } }] },
        { content: [{ type: 'tool_use', name: 'Write', input: { file_path: 'two.txt', content: '2' } }] },
        { content: [{ type: 'text', text: 'Wrote both.' }] },
      ],
    },
    async drive(api, id, firstInput) {
      await api.waitForResult(id, firstInput);
      await api.end(id);
    },
  },
  {
    // Today's shapes: model calls by reference, a local-activity Read, a subagent (child
    // workflow), an autocompaction, a manual compaction through the update.
    name: 'reference-local-tools-subagent-compaction',
    prompt: 'Read notes.txt, ask an agent, then finish.',
    files: { 'notes.txt': 'the notes\n' },
    model: {
      respond: (request) => {
        const text = JSON.stringify(request.body.messages);
        const tools = (request.body.tools as Array<{ name: string }>).map((tool) => tool.name);
        if (text.includes('write a detailed summary of the conversation'))
          return { content: [{ type: 'text', text: '<summary>Read the notes; an agent answered.</summary>' }] };
        if (!tools.includes('Agent')) return { content: [{ type: 'text', text: 'The agent found nothing odd.' }] };
        if (text.includes('This session is being continued')) return { content: [{ type: 'text', text: 'Finished after compacting.' }] };
        if (text.includes('nothing odd')) return { content: [{ type: 'text', text: 'Done.' }], usage: { input_tokens: 170_000 } };
        if (text.includes('the notes')) {
          return {
            content: [
              { type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: { description: 'check', prompt: 'Check the workspace', subagent_type: 'Explore' } },
            ],
          };
        }
        return { content: [{ type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'notes.txt' } }] };
      },
    },
    async drive(api, id, firstInput) {
      await api.waitForResult(id, firstInput);
      const second = await api.send(id, 'One more thing.');
      await api.waitForResult(id, second);
      await api.compact(id, 'keep it short');
      await api.end(id);
    },
  },
  {
    // Slash commands: local ones (no model call), a custom command, /model, /clear and /compact
    // with the session context read again after each; a slash command queued into a running query.
    name: 'slash-commands',
    prompt: '/greet the team',
    files: { 'CLAUDE.md': 'Be brief.\n', '.claude/commands/greet.md': '---\ndescription: Greet\n---\nSay hello to $ARGUMENTS.' },
    model: {
      respond: (request) => {
        const text = JSON.stringify(request.body.messages);
        if (text.includes('write a detailed summary of the conversation'))
          return { content: [{ type: 'text', text: '<summary>Greeted; then a question.</summary>' }] };
        if (JSON.stringify(request.body.messages.at(-1)).includes('slow one'))
          return { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'sleep 2' } }] };
        return { content: [{ type: 'text', text: 'OK.' }] };
      },
    },
    async drive(api, id, firstInput) {
      await api.waitForResult(id, firstInput);
      for (const prompt of ['/cost', '/model opus', 'A question', '/clear', 'Another question', 'And one more', '/compact keep questions']) {
        await api.waitForResult(id, await api.send(id, prompt));
      }
      const slow = await api.send(id, 'The slow one');
      await new Promise((resolve) => setTimeout(resolve, 500));
      const queued = await api.send(id, '/status');
      await api.waitForResult(id, slow);
      await api.waitForResult(id, queued);
      await api.end(id);
    },
  },
  {
    // Permissions: an approval with --always, a denial with a message, a wait that times out,
    // and a call the --always rule allows without asking.
    name: 'permissions-approve-deny-timeout',
    prompt: 'Write, remove, touch.',
    config: { permissions: { approvalTimeoutMs: 2_000 } },
    model: {
      script: [
        { content: [{ type: 'tool_use', id: 'toolu_perm_write', name: 'Write', input: { file_path: 'a.txt', content: 'a' } }] },
        { content: [{ type: 'tool_use', id: 'toolu_perm_rm', name: 'Bash', input: { command: 'rm a.txt' } }] },
        { content: [{ type: 'tool_use', id: 'toolu_perm_touch', name: 'Bash', input: { command: 'touch b.txt' } }] },
        { content: [{ type: 'tool_use', id: 'toolu_perm_write2', name: 'Write', input: { file_path: 'a2.txt', content: 'a' } }] },
        { content: [{ type: 'text', text: 'Done with what I was allowed.' }] },
      ],
    },
    async drive(api, id, firstInput) {
      const waitFor = async (toolUseId: string) => {
        for (let i = 0; i < 300; i++) {
          const status = await api.status(id);
          if ((status.pendingPermissions ?? []).some((pending) => pending.toolUseId === toolUseId)) return;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        throw new Error(`${toolUseId} never waited for permission`);
      };
      await waitFor('toolu_perm_write');
      await api.decidePermission(id, { toolUseId: 'toolu_perm_write', behavior: 'allow', remember: true });
      await waitFor('toolu_perm_rm');
      await api.decidePermission(id, { toolUseId: 'toolu_perm_rm', behavior: 'deny', message: 'keep it' });
      await api.waitForResult(id, firstInput);
      await api.decidePermission(id, { toolUseId: 'toolu_perm_write', behavior: 'deny' }); // a duplicate
      await api.end(id);
    },
  },
  {
    // Local-first model calls: a quick call answered in the local phase (with a local Read), a
    // slow stream handed over to the worker's handoff queue, and a 529 in the local phase that
    // the handed-over activity reports and its retry answers.
    name: 'local-model-calls-handoff',
    prompt: 'Read notes.txt, think slowly, then try again.',
    files: { 'notes.txt': 'quick\n' },
    model: {
      script: [
        { content: [{ type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } }] },
        { content: [{ type: 'text', text: 'A slow answer, streamed over more than the local budget.' }], chunkSize: 4, deltaDelayMs: 80 },
        { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
        { content: [{ type: 'text', text: 'And a quick one after the overload.' }] },
      ],
    },
    async drive(api, id, firstInput) {
      await api.waitForResult(id, firstInput);
      const second = await api.send(id, 'Once more.');
      await api.waitForResult(id, second);
      await api.end(id);
    },
  },
  {
    // Issue 23: StructuredOutput checked in the checkStructuredOutput local activity (its verdict
    // recorded), with a schema that needs a full 2020-12 validator (if/then/else): one invalid call, one valid.
    name: 'structured-output',
    prompt: 'Where should the parcel go?',
    config: {
      jsonSchema: {
        type: 'object',
        properties: { country: { enum: ['US', 'CA'] }, postal_code: { type: 'string' } },
        required: ['country', 'postal_code'],
        if: { properties: { country: { const: 'US' } } },
        then: { properties: { postal_code: { pattern: '^[0-9]{5}$' } } },
        else: { properties: { postal_code: { pattern: '^[A-Z][0-9][A-Z] [0-9][A-Z][0-9]$' } } },
      },
    },
    model: {
      script: [
        { content: [{ type: 'tool_use', name: 'StructuredOutput', input: { country: 'US', postal_code: 'K1M 1M4' } }] },
        { content: [{ type: 'tool_use', name: 'StructuredOutput', input: { country: 'CA', postal_code: 'K1M 1M4' } }] },
        { content: [{ type: 'text', text: 'Ottawa.' }] },
      ],
    },
    async drive(api, id, firstInput) {
      const result = await api.waitForResult(id, firstInput);
      if (JSON.stringify(result.structured_output) !== JSON.stringify({ country: 'CA', postal_code: 'K1M 1M4' })) {
        throw new Error(`structured-output: unexpected result ${JSON.stringify(result)}`);
      }
      await api.end(id);
    },
  },
  {
    // Issue 21 §4–6: the task list, two wakeups (one fires; the other is still pending in the last
    // run, which started its timer again after continue-as-new and cancels it at the end), a
    // one-shot cron job fired by trigger, CronList, and the end deleting the session-only job.
    name: 'wakeup-cron-tasks',
    prompt: 'PLAN the week',
    config: { wakeupMinimumSeconds: 2, continueAsNewAfterEvents: 10, timeZone: 'Europe/Paris' },
    model: {
      respond: promptResponder([
        ['WAKE-R', 'Woke.'],
        ['CRON-R', 'Cron fired.'],
        [
          'PLAN',
          [
            { name: 'TaskCreate', input: { subject: 'Check the build', description: 'green on main' } },
            { name: 'TaskUpdate', input: { taskId: '1', status: 'in_progress' } },
            { name: 'ScheduleWakeup', input: { delaySeconds: 2, reason: 'build check', prompt: 'WAKE-R check the build' } },
            { name: 'ScheduleWakeup', input: { delaySeconds: 3600, reason: 'weekly review', prompt: 'review the week' } },
            { name: 'CronCreate', input: { cron: '15 10 1 1 *', prompt: 'CRON-R once', recurring: false } },
            { name: 'CronCreate', input: { cron: '0 9 * * 1-5', prompt: 'standup' } },
          ],
        ],
        [
          'LIST',
          [
            { name: 'CronList', input: {} },
            { name: 'TaskList', input: {} },
          ],
        ],
      ]),
    },
    async drive(api, id, firstInput) {
      await api.waitForResult(id, firstInput);
      const until = async (done: (status: Awaited<ReturnType<ConversationClient['status']>>) => boolean) => {
        for (let attempt = 0; attempt < 600; attempt++) {
          const status = await api.status(id).catch(() => undefined);
          if (status && done(status)) return status;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        throw new Error('wakeup-cron-tasks: timed out');
      };
      const woke = await until((status) => status.lastResult?.result === 'Woke.');
      const once = woke.cronJobs?.find((job) => !job.recurring);
      if (!once) throw new Error('wakeup-cron-tasks: no one-shot job');
      await api.client.schedule.getHandle(`cron-${id}-${once.id}`).trigger();
      await until((status) => status.lastResult?.result === 'Cron fired.' && status.phase === 'awaiting_input');
      const listed = await api.send(id, 'LIST jobs and tasks');
      await api.waitForResult(id, listed);
      await api.end(id);
    },
  },
  {
    // Issue 22: MCP servers as tools — the config and listing at session start (one server fails to
    // start: a warning), an allowed read-only call and a name no server lists, then `/mcp`.
    name: 'mcp-tools',
    prompt: 'Add 2 and 40 with the MCP server',
    files: {
      '.mcp.json': JSON.stringify({
        mcpServers: {
          everything: {
            command: process.execPath,
            args: [path.resolve(__dirname, '..', 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
          },
          broken: { command: 'no-such-mcp-program-xyz' },
        },
      }),
      '.claude/settings.local.json': JSON.stringify({ enableAllProjectMcpServers: true }),
    },
    config: { permissions: { mode: 'default', allow: ['mcp__everything'], canApprove: false } },
    model: {
      script: [
        {
          content: [
            { type: 'tool_use', name: 'mcp__everything__get-sum', input: { a: 2, b: 40 } },
            { type: 'tool_use', name: 'mcp__everything__no-such-tool', input: {} },
          ],
        },
        { content: [{ type: 'text', text: 'The sum is 42.' }] },
      ],
    },
    async drive(api, id, firstInput) {
      const result = await api.waitForResult(id, firstInput);
      if (result.result !== 'The sum is 42.') throw new Error(`mcp-tools: unexpected result ${JSON.stringify(result)}`);
      const listed = await api.waitForResult(id, await api.send(id, '/mcp'));
      if (!listed.result.includes('everything (project, stdio): ✔ connected')) throw new Error(`mcp-tools: unexpected /mcp ${listed.result}`);
      await api.end(id);
    },
  },
  {
    // Issue 21 item 3: a background agent (child started without waiting, its answer a
    // notification that starts a query), SendMessage to it (its answer as the tool result),
    // TaskOutput on its id, and `end` cancelling it.
    name: 'background-agent',
    prompt: 'Count the files in the background.',
    model: {
      respond: (request) => {
        const last = JSON.stringify(request.body.messages.at(-1)?.content ?? '');
        const tools = (request.body.tools as Array<{ name: string }>).map((tool) => tool.name);
        if (!tools.includes('Agent'))
          return { content: [{ type: 'text', text: last.includes('And the .md files?') ? 'One .md file as well.' : 'Two .txt files.' }] };
        if (last.includes('<task-notification>')) return { content: [{ type: 'text', text: 'The agent counted two .txt files.' }] };
        if (last.includes('Async agent launched')) return { content: [{ type: 'text', text: 'Started.' }] };
        if (last.includes('Ask it about .md'))
          return { content: [{ type: 'tool_use', id: 'toolu_send', name: 'SendMessage', input: { to: 'count files', message: 'And the .md files?' } }] };
        const agentId = /agentId: (a[0-9a-f]{8})/.exec(JSON.stringify(request.body.messages))?.[1] ?? 'unknown';
        if (last.includes('Check on it'))
          return { content: [{ type: 'tool_use', id: 'toolu_peek', name: 'TaskOutput', input: { task_id: agentId, block: false } }] };
        if (last.includes('toolu_send') || last.includes('toolu_peek')) return { content: [{ type: 'text', text: 'Noted.' }] };
        return {
          content: [
            {
              type: 'tool_use',
              id: 'toolu_bg',
              name: 'Agent',
              input: { description: 'count files', prompt: 'Count the files.', subagent_type: 'general-purpose', run_in_background: true, model: 'haiku' },
            },
          ],
        };
      },
    },
    async drive(api, id, firstInput) {
      await api.waitForResult(id, firstInput);
      for (let i = 0; i < 300 && (await api.status(id)).queryCount < 2; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      for (let i = 0; i < 300 && (await api.status(id)).phase !== 'awaiting_input'; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      const ask = await api.send(id, 'Ask it about .md files.');
      await api.waitForResult(id, ask);
      const check = await api.send(id, 'Check on it.');
      await api.waitForResult(id, check);
      await api.end(id);
    },
  },
  {
    // Issue 22: every hook event a conversation runs (each run an activity, recorded: a replay runs none).
    name: 'hooks-lifecycle',
    prompt: 'Write notes.txt, then clean up.',
    files: {
      '.claude/settings.json': JSON.stringify({
        hooks: {
          SessionStart: [{ hooks: [{ type: 'command', command: 'echo run >> hook-runs.txt; echo "Deploys go to release-7."' }] }],
          UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'echo run >> hook-runs.txt; echo "Ticket ABC-12 is open."' }] }],
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo run >> hook-runs.txt; echo "no rm here" >&2; exit 2' }] }],
          PostToolUse: [
            {
              matcher: 'Write',
              hooks: [
                {
                  type: 'command',
                  command: 'echo run >> hook-runs.txt; echo \'{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"Lint passed."}}\'',
                },
              ],
            },
          ],
          PreCompact: [{ hooks: [{ type: 'command', command: 'echo run >> hook-runs.txt' }] }],
          SessionEnd: [{ hooks: [{ type: 'command', command: 'echo run >> hook-runs.txt' }] }],
        },
      }),
    },
    model: {
      respond: (request) => {
        const text = JSON.stringify(request.body.messages);
        if (text.includes('write a detailed summary of the conversation')) return { content: [{ type: 'text', text: '<summary>Wrote notes.txt.</summary>' }] };
        if (text.includes('Anything left?')) return { content: [{ type: 'text', text: 'Nothing left.' }] };
        if (text.includes('tool_result')) return { content: [{ type: 'text', text: 'Done.' }] };
        return {
          content: [
            { type: 'tool_use', name: 'Write', input: { file_path: 'notes.txt', content: 'n' } },
            { type: 'tool_use', name: 'Bash', input: { command: 'rm -f notes.txt' } },
          ],
        };
      },
    },
    async drive(api, id, firstInput) {
      await api.waitForResult(id, firstInput);
      await api.waitForResult(id, await api.send(id, '/compact'));
      await api.waitForResult(id, await api.send(id, 'Anything left?'));
      await api.end(id);
    },
  },
  {
    // Issue 21: background Bash (workflows/background/commands.ts): two commands started in one
    // turn, the short one's notification re-invokes the model, TaskOutput reads it, and `end`
    // stops the long one (stopBackgroundCommand).
    name: 'background-bash',
    prompt: 'Start the two jobs in the background.',
    model: {
      respond: (() => {
        let step = 0;
        const taskId = (request: { body: { messages: unknown[] } }) =>
          /Command running in background with ID: (b[0-9a-f]{8})/.exec(JSON.stringify(request.body.messages))?.[1] ?? 'bmissing0';
        return (request) => {
          const last = JSON.stringify(request.body.messages[request.body.messages.length - 1]);
          if (last.includes('<task-notification>') && !last.includes('tool_result'))
            return { content: [{ type: 'text', text: 'Noted: the short job finished.' }] };
          switch (step++) {
            case 0:
              return {
                content: [
                  { type: 'tool_use', name: 'Bash', input: { command: 'echo hi; sleep 1; echo bye', description: 'Short job', run_in_background: true } },
                  { type: 'tool_use', name: 'Bash', input: { command: 'sleep 300', description: 'Long job', run_in_background: true } },
                ],
              };
            case 1:
              return { content: [{ type: 'text', text: 'Both started.' }] };
            case 2:
              return { content: [{ type: 'tool_use', name: 'TaskOutput', input: { task_id: taskId(request), block: false } }] };
            default:
              return { content: [{ type: 'text', text: 'It said hi and bye.' }] };
          }
        };
      })(),
    },
    async drive(api, id, firstInput) {
      await api.waitForResult(id, firstInput);
      for (let i = 0; i < 300; i++) {
        const status = await api.status(id);
        if (status.queryCount >= 2 && status.phase === 'awaiting_input' && status.queuedInputs === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const second = await api.send(id, 'What did the first one print?');
      await api.waitForResult(id, second);
      await api.end(id);
    },
  },
  {
    // Issue 21 item 3: a foreground Agent answers; SendMessage to it reads its transcript and continues it in a new child.
    name: 'send-message-finished-agent',
    prompt: 'Count the files.',
    model: {
      respond: (request) => {
        const last = JSON.stringify(request.body.messages.at(-1)?.content ?? '');
        const tools = (request.body.tools as Array<{ name: string }>).map((tool) => tool.name);
        if (!tools.includes('Agent'))
          return { content: [{ type: 'text', text: last.includes('And the .md files?') ? 'One .md file as well.' : 'Two .txt files.' }] };
        if (last.includes('toolu_send') || last.includes('toolu_fg')) return { content: [{ type: 'text', text: 'Noted.' }] };
        const agentId = /agentId: (a[0-9a-f]{8})/.exec(JSON.stringify(request.body.messages))?.[1] ?? 'unknown';
        if (last.includes('Ask it about .md'))
          return { content: [{ type: 'tool_use', id: 'toolu_send', name: 'SendMessage', input: { to: agentId, message: 'And the .md files?' } }] };
        return {
          content: [
            {
              type: 'tool_use',
              id: 'toolu_fg',
              name: 'Agent',
              input: { description: 'count files', prompt: 'Count the files.', subagent_type: 'general-purpose' },
            },
          ],
        };
      },
    },
    async drive(api, id, firstInput) {
      await api.waitForResult(id, firstInput);
      const ask = await api.send(id, 'Ask it about .md files.');
      await api.waitForResult(id, ask);
      await api.end(id);
    },
  },
  {
    // Issue 22: a `.mcp.json` server waiting for approval, approved by the approveMcpServers update
    // (saved in settings.local.json, listed again), then a general-purpose subagent that inherits
    // and calls its tool.
    name: 'mcp-approval-subagent',
    prompt: 'What tools do you have?',
    files: {
      '.mcp.json': JSON.stringify({
        mcpServers: {
          everything: {
            command: process.execPath,
            args: [path.resolve(__dirname, '..', 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
          },
        },
      }),
    },
    model: {
      respond: (request) => {
        const tools = (request.body.tools as Array<{ name: string }>).map((tool) => tool.name);
        const last = JSON.stringify(request.body.messages.at(-1)?.content ?? '');
        if (!tools.includes('Agent')) {
          if (last.includes('tool_result')) return { content: [{ type: 'text', text: 'The child added them.' }] };
          return { content: [{ type: 'tool_use', id: 'toolu_child_sum', name: 'mcp__everything__get-sum', input: { a: 2, b: 40 } }] };
        }
        if (last.includes('tool_result')) return { content: [{ type: 'text', text: 'Done with the agent.' }] };
        if (last.includes('Use an agent'))
          return {
            content: [
              {
                type: 'tool_use',
                id: 'toolu_agent_mcp',
                name: 'Agent',
                input: { description: 'add', prompt: 'Add 2 and 40 with MCP', subagent_type: 'general-purpose' },
              },
            ],
          };
        return { content: [{ type: 'text', text: 'No MCP tools yet.' }] };
      },
    },
    async drive(api, id, firstInput) {
      await api.waitForResult(id, firstInput);
      const approved = await api.approveMcpServers(id, { servers: ['everything'], decision: 'approve' });
      if (!approved.states.some((server) => server.name === 'everything' && server.state === 'connected'))
        throw new Error(`mcp-approval-subagent: not connected ${JSON.stringify(approved)}`);
      const result = await api.waitForResult(id, await api.send(id, 'Use an agent'));
      if (result.result !== 'Done with the agent.') throw new Error(`mcp-approval-subagent: unexpected result ${JSON.stringify(result)}`);
      await api.end(id);
    },
  },
];

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const server = await startDevServer({ ephemeral: true, headless: true, log: (line) => console.log(line) });
  await mkdir(HISTORIES_DIR, { recursive: true });
  try {
    const connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection, namespace: 'default' });
    const api = new ConversationClient(client);
    const only = process.argv.slice(2);
    for (const scenario of SCENARIOS.filter((candidate) => only.length === 0 || only.includes(candidate.name))) {
      const model = await startScriptedModelServer(scenario.model);
      const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-record-'));
      for (const [file, content] of Object.entries(scenario.files ?? {})) {
        await mkdir(path.dirname(path.join(workspace, file)), { recursive: true });
        await writeFile(path.join(workspace, file), content);
      }
      const taskQueue = `record-${randomUUID()}`;
      const workerConnection = await NativeConnection.connect({ address: server.address });
      // Stdio MCP servers are this process's children: closed after the scenario, or the script never exits.
      const mcpConnections = new McpConnectionManager();
      const worker = await createWorker({
        connection: workerConnection,
        namespace: 'default',
        taskQueue,
        activities: createActivities({
          anthropic: new Anthropic({ apiKey: 'record', baseURL: model.url, maxRetries: 0 }),
          stateDir: workspace + '-state',
          temporalClient: client,
          mcpConnections,
        }),
      });
      const id = `history-${scenario.name}`;
      let firstRunId: string | undefined;
      await worker.runUntil(async () => {
        const started = await api.start({
          id,
          prompt: scenario.prompt,
          taskQueue,
          // Issue 29: a trusted workspace, as the test harness starts them (its settings, hooks and .mcp.json apply).
          config: { cwd: workspace, trusted: true, modelInitialRetryIntervalMs: 100, permissions: { mode: 'bypassPermissions' }, ...scenario.config },
        });
        firstRunId = started.handle.firstExecutionRunId;
        await scenario.drive(api, started.conversationId, started.inputUuid!);
        await api.summary(started.conversationId);
      });
      // The first run, and the last one when the conversation continued-as-new in between.
      const lastRunId = (await client.workflow.getHandle(id).describe()).runId;
      const runs: Array<[string, string | undefined]> = [[`${scenario.name}.json`, firstRunId]];
      if (lastRunId !== firstRunId) runs.push([`${scenario.name}-last-run.json`, lastRunId]);
      for (const [name, runId] of runs) {
        const history = await client.workflow.getHandle(id, runId).fetchHistory();
        const file = path.join(HISTORIES_DIR, name);
        await writeFile(file, historyToJSON(history));
        console.log(`recorded ${history.events?.length ?? 0} events -> ${path.relative(process.cwd(), file)}`);
      }
      await mcpConnections.close();
      await workerConnection.close();
      await model.close();
      await rm(workspace, { recursive: true, force: true });
      await rm(workspace + '-state', { recursive: true, force: true });
    }
    await connection.close();
  } finally {
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
