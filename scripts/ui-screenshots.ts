/**
 * `npm run ui:screenshots` — the screenshots of docs/ui.md, taken from a real conversation: an
 * in-memory dev server with its Web UI, a worker, the `npm start` demo's scripted model, and
 * headless Chromium over the DevTools protocol (infra/headless-chromium.ts). Run it again after
 * changing what the UI shows, so the docs stay true. Writes docs/images/ui-*.png.
 *
 * Needs Chromium (`apt-get install -y chromium`, or CHROMIUM_PATH); compresses with pngquant when
 * installed (`apt-get install -y pngquant`).
 */
import type { Client } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConversationClient } from '../client/api';
import { REPO_ROOT } from '../infra/dev-server';
import { HeadlessPage } from '../infra/headless-chromium';
import { conversationUiUrl } from '../infra/ui-url';
import type { Responder } from '../testing/scripted-model-server';
import { demoResponder } from './demo';
import { startScreenshotStack } from './screenshot-stack';

const OUT_DIR = path.join(REPO_ROOT, 'docs', 'images');
const TASK_QUEUE = 'durable-agent';
const FIRST_PROMPT = 'The test in test.js fails. Find the bug in math.js, fix it, and run `node test.js` to verify.';
const SECOND_PROMPT = 'Does average() still work for an empty list?';
const LONG_PROMPT = 'Run the slow integration suite.';

/** The demo's conversation, a follow-up, and a long-running Bash for the pending-activity view. */
const responder: Responder = (request) => {
  const messages = request.body.messages as Array<{ role: string; content: unknown }>;
  const first = messages[0]?.content;
  const firstText = typeof first === 'string' ? first : JSON.stringify(first);
  if (firstText.includes(LONG_PROMPT)) {
    const assistantTurns = messages.filter((message) => message.role === 'assistant').length;
    if (assistantTurns === 0) {
      return {
        deltaDelayMs: 10,
        content: [
          { type: 'text', text: 'Starting the suite.' },
          {
            type: 'tool_use',
            name: 'Bash',
            input: { command: 'for i in $(seq 1 300); do echo "suite: test $i passed"; sleep 1; done', description: 'Run the slow suite' },
          },
        ],
      };
    }
    return { content: [{ type: 'text', text: 'Stopped.' }] };
  }
  if (JSON.stringify(messages.at(-1)?.content).includes(SECOND_PROMPT)) {
    return { deltaDelayMs: 10, content: [{ type: 'text', text: 'Yes: `average([])` returns 0 before it calls `sum`, so the fix does not change it.' }] };
  }
  return demoResponder(request);
};

/** How many history events the conversation's prompts cost, and how many were the live channel's (docs/ui.md). */
async function printEventCounts(client: Client, conversationId: string, prompts: number): Promise<void> {
  const { events } = await client.workflow.getHandle(conversationId).fetchHistory();
  const all = events ?? [];
  const named = (name: string) =>
    all.filter(
      (event) =>
        event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === name ||
        event.workflowExecutionSignaledEventAttributes?.signalName === name,
    ).length;
  console.log(
    `${conversationId}: ${all.length} events for ${prompts} prompts (${(all.length / prompts).toFixed(0)} a prompt); ` +
      `live channel: ${named('__temporal_workflow_stream_poll')} poll updates, ${named('__temporal_workflow_stream_publish')} publish signals`,
  );
}

async function main(): Promise<void> {
  const stack = await startScreenshotStack({ name: 'ui', taskQueue: TASK_QUEUE, responder, headless: false, log: (line) => console.log(line) });
  const { server, client, worker, workspace } = stack;
  const api = new ConversationClient(client);
  // Permissions as `chat` sets them (default mode: Edit and Bash ask); a person answers below.
  const config = { cwd: workspace, model: 'claude-sonnet-4-6', maxTurns: 20, permissions: { mode: 'default' as const, canApprove: true } };
  /** Answers every permission request of a conversation, as a person at `chat` would, until stopped. */
  const answer = (conversationId: string, decide: (toolName: string) => 'allow' | 'deny') => {
    let stopped = false;
    const done = (async () => {
      const decided = new Set<string>();
      while (!stopped) {
        for (const request of (await api.status(conversationId)).pendingPermissions ?? []) {
          if (decided.has(request.toolUseId)) continue;
          decided.add(request.toolUseId);
          const behavior = decide(request.toolName);
          await api.decidePermission(conversationId, { toolUseId: request.toolUseId, behavior, ...(behavior === 'deny' ? { message: 'Not now.' } : {}) });
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    return async () => {
      stopped = true;
      await done;
    };
  };
  let page: HeadlessPage | undefined;
  try {
    await worker.runUntil(async () => {
      // A conversation that fixed the bug and answered a follow-up: it waits for input.
      const fix = await api.start({ id: 'conversation-fix-the-sum-bug', prompt: FIRST_PROMPT, config, taskQueue: TASK_QUEUE });
      const stopAnswering = answer(fix.conversationId, () => 'allow');
      await api.waitForResult(fix.conversationId, fix.inputUuid!);
      const followUp = await api.send(fix.conversationId, SECOND_PROMPT);
      await api.waitForResult(fix.conversationId, followUp);
      await stopAnswering();
      await printEventCounts(client, fix.conversationId, 2);
      // One that has ended (its Bash denied), and one running a long Bash command.
      const ended = await api.start({ id: 'conversation-ended-example', prompt: FIRST_PROMPT, config, taskQueue: TASK_QUEUE });
      const stopDenying = answer(ended.conversationId, (toolName) => (toolName === 'Bash' ? 'deny' : 'allow'));
      await api.waitForResult(ended.conversationId, ended.inputUuid!);
      await stopDenying();
      await api.end(ended.conversationId);
      await api.summary(ended.conversationId);
      const running = await api.start({
        id: 'conversation-slow-suite',
        prompt: LONG_PROMPT,
        config: { ...config, permissions: { mode: 'bypassPermissions' as const } },
        taskQueue: TASK_QUEUE,
      });

      page = await HeadlessPage.launch({ width: 1400, height: 1000 });
      await mkdir(OUT_DIR, { recursive: true });
      const shoot = async (name: string, options?: Parameters<HeadlessPage['screenshot']>[0]) => {
        // Let the last poll's rendering settle.
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const file = path.join(OUT_DIR, name);
        await writeFile(file, await page!.screenshot(options));
        // Smaller files in git: pngquant (Debian package) when installed.
        await promisify(execFile)('pngquant', ['--quality=60-90', '--strip', '--force', '--output', file, file]).catch(() =>
          console.log('(pngquant not found: PNG left uncompressed)'),
        );
        console.log(`docs/images/${name}: ${Math.round((await stat(file)).size / 1024)} kB`);
      };

      // 1. The list, filtered on a search attribute.
      // The list's columns live in the browser's local storage: add the search attributes.
      await page.navigate(`${server.uiUrl}/namespaces/${server.namespace}/workflows`);
      await page.waitForText(['Workflows']);
      const columns = [
        'Status',
        'Workflow ID',
        'DurableAgentStatus',
        'DurableAgentTurns',
        'DurableAgentCostUsd',
        'DurableAgentLastActivity',
        'DurableAgentFirstPrompt',
      ];
      await page.evaluate(
        `localStorage.setItem('namespace-workflow-table-columns', ${JSON.stringify(JSON.stringify({ [server.namespace]: columns.map((label) => ({ label })) }))})`,
      );
      const query = `DurableAgentWorkspace = "${workspace}"`;
      await page.navigate(`${server.uiUrl}/namespaces/${server.namespace}/workflows?query=${encodeURIComponent(query)}`);
      await page.waitForText(['conversation-fix-the-sum-bug', 'conversation-ended-example', 'conversation-slow-suite']);
      await shoot('ui-list.png');

      // 2. The conversation: summary, details, current details, the timeline of model calls and tools.
      await page.navigate(conversationUiUrl(server.uiUrl!, server.namespace, fix.conversationId));
      await page.waitForText(['Bash: node test.js', 'Waiting for input; ends the conversation after 1d idle']);
      // UI_DUMP=file: the page's text, to see what the timeline shows without the picture.
      if (process.env.UI_DUMP) await writeFile(process.env.UI_DUMP, await page.evaluate<string>('document.body.innerText'));
      // The timeline (the header and the workflow's input box are in the other pictures), in a
      // page tall enough for the whole conversation: the UI fits the timeline to the viewport.
      await page.resize(1400, 2300);
      await shoot('ui-timeline.png', { fullPage: true, top: (await page.topOf('Event History')) - 10, maxHeight: 700 });
      // The history's compact view: one row per model call, tool, timer, signal and update, with its summary.
      await page.clickText('Compact');
      await page.waitForText(['userInput', 'decidePermission']);
      await shoot('ui-history-compact.png', { fullPage: true, top: (await page.topOf('Event History')) - 10, maxHeight: 1900 });
      await page.resize(1400, 1000);

      // 3. Its summary, static details and current details (with cost and the last answer).
      await page.clickText('User Metadata');
      // (The Markdown is rendered in sandboxed frames, outside the page's text.)
      await page.waitForText(['Summary', 'Details', 'Events with Metadata']);
      await shoot('ui-details.png', { fullPage: true, maxHeight: 1400 });

      // 4. Its search attributes.
      await page.clickText('Search Attributes');
      await page.waitForText(['DurableAgentTurns', 'DurableAgentCostUsd']);
      await shoot('ui-search-attributes.png');

      // 5. A running tool: its heartbeat names it and carries the output's tail.
      while (!(await api.status(running.conversationId)).toolsInFlight.length) await new Promise((resolve) => setTimeout(resolve, 200));
      await new Promise((resolve) => setTimeout(resolve, 4000));
      await page.navigate(conversationUiUrl(server.uiUrl!, server.namespace, running.conversationId));
      await page.waitForText(['Pending Activities']);
      await page.clickText('Pending Activities');
      await page.waitForText(['outputTail', 'suite: test']);
      await shoot('ui-pending-tool.png');

      await api.abort(running.conversationId);
      await api.end(running.conversationId);
      await api.summary(running.conversationId);
      await api.end(fix.conversationId);
      await api.summary(fix.conversationId);
    });
  } finally {
    await page?.close();
    await stack.close();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  });
}
