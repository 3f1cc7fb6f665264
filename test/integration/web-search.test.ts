/**
 * WebSearch (issue 33): the Messages API's server-side web search tool in a real conversation, on
 * the dev server with a real worker and the real SDK (streaming) against the scripted model server,
 * which runs the search as the API does and refuses (400) any request whose server_tool_use,
 * web_search_tool_result or citations differ from what it produced. The harness fails on any such
 * refusal, so the follow-up being answered at all proves the blocks went back verbatim.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatEvent } from '../../client/format';
import { formatTranscript } from '../../client/commands/transcript';
import type { RecordedRequest } from '../../testing/scripted-model-server';
import { withoutCacheControl } from '../../testing/prompt-cache';
import { type Harness, createHarness, eventually, runToResult } from '../helpers/harness';
import { cliAgainst, isolateEnvironment } from '../helpers/cli';
import { chatReady, killTerminals, screen, startChat, tmux } from '../helpers/tmux';

isolateEnvironment();
let harness: Harness | undefined;
afterEach(async () => {
  killTerminals();
  await harness?.close();
  harness = undefined;
});

const QUERY = 'temporal workflow durability';
const CITED = 'A Workflow Execution is durable, reliable, and scalable.';

function webSearchTool(request: RecordedRequest): Record<string, unknown> | undefined {
  return (request.body.tools as Array<Record<string, unknown>>).find((tool) => tool.type === 'web_search_20250305');
}

describe('WebSearch through the server-side web search tool', () => {
  it('searches, shows the citations, sends the blocks back verbatim and counts the search in usage and cost', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'text', text: 'Let me search for that.' },
            {
              type: 'web_search',
              query: QUERY,
              results: [
                { url: 'https://docs.temporal.io/workflows', title: 'Temporal Workflows', page_age: 'April 30, 2025' },
                { url: 'https://spam.example.com/durable', title: 'Blocked result' },
              ],
            },
            { type: 'text', text: 'Temporal workflows are durable: ', citations: [] },
            { type: 'text', text: 'their execution survives crashes.', citations: [{ url: 'https://docs.temporal.io/workflows', cited_text: CITED }] },
          ],
        },
        { content: [{ type: 'text', text: 'Yes, as the page says.' }] },
      ],
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Are Temporal workflows durable? Search the web.', {
      webSearch: { maxUses: 3, blockedDomains: ['spam.example.com'] },
    });

    // Offered with its filter and max_uses.
    const [first] = harness.model.requests;
    expect(webSearchTool(first)).toEqual({ type: 'web_search_20250305', name: 'web_search', max_uses: 3, blocked_domains: ['spam.example.com'] });

    // One billed search: in the usage, the per-model usage and the cost ($10 per 1,000 searches).
    expect(result).toMatchObject({ subtype: 'success', result: expect.stringContaining('their execution survives crashes.') });
    expect(result.usage.server_tool_use).toEqual({ web_search_requests: 1 });
    const modelUsage = Object.values(result.modelUsage ?? {});
    expect(modelUsage.map((usage) => usage.webSearchRequests)).toEqual([1]);
    const tokenCost = modelUsage[0].costUSD - 0.01;
    expect(tokenCost).toBeGreaterThan(0);
    expect(result.total_cost_usd).toBeCloseTo(modelUsage[0].costUSD, 10);

    // The transcript keeps the blocks as the API gave them (the blocked domain's result was left out by the API).
    const transcript = await harness.api.transcript(conversationId);
    const reply = transcript.find((message) => message.type === 'assistant');
    if (reply?.type !== 'assistant') throw new Error('no assistant reply');
    const types = reply.message.content.map((block) => block.type);
    expect(types).toEqual(['text', 'server_tool_use', 'web_search_tool_result', 'text', 'text']);
    const searchResult = reply.message.content[2];
    if (searchResult.type !== 'web_search_tool_result' || !Array.isArray(searchResult.content)) throw new Error('no search results');
    expect(searchResult.content.map((entry) => entry.url)).toEqual(['https://docs.temporal.io/workflows']);
    expect(searchResult.content[0].encrypted_content).not.toBe('');

    // Citations shown: the search's line and the sources after the answer (chat's and `transcript`'s formatting).
    const { events } = await harness.api.events(conversationId);
    const shown = events
      .map((event) => formatEvent(event))
      .filter((line): line is string => line !== undefined)
      .join('\n');
    expect(shown).toContain(`Web Search("${QUERY}")`);
    expect(shown).toContain('Did 1 search: 1 result');
    expect(shown).toContain('Sources:\n  - Temporal Workflows: https://docs.temporal.io/workflows');
    expect(formatTranscript(transcript)).toContain('Sources:\n  - Temporal Workflows: https://docs.temporal.io/workflows');

    // The follow-up sends the server tool blocks and the citations back verbatim: the server checks
    // every one against what it produced (a changed encrypted_content would be a 400, failing close()).
    const inputUuid = await harness.api.send(conversationId, 'Sure?');
    const second = await harness.api.waitForResult(conversationId, inputUuid);
    expect(second).toMatchObject({ subtype: 'success', result: 'Yes, as the page says.' });
    const followUp = harness.model.requests[1];
    const sentBack = followUp.body.messages.find((message: { role: string }) => message.role === 'assistant');
    expect(withoutCacheControl(sentBack.content)).toEqual(reply.message.content);
    expect(harness.model.rejections).toEqual([]);
    // The follow-up made no search: the query's usage has none, the conversation's cost still has the first.
    expect(second.usage.server_tool_use).toBeUndefined();
  });

  it('pause_turn after a search continues the turn by sending the paused content back as it came', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'web_search', query: QUERY, results: [{ url: 'https://docs.temporal.io/workflows', title: 'Temporal Workflows' }] },
            { type: 'text', text: 'Still searching.' },
          ],
          stop_reason: 'pause_turn',
        },
        { content: [{ type: 'text', text: 'Done searching.' }] },
      ],
    });
    await harness.startWorker();
    const { result, conversationId } = await runToResult(harness, 'Search at length.', { webSearch: {} });
    expect(result).toMatchObject({ subtype: 'success', transitions: ['pause_turn'], num_turns: 1 });
    expect(result.usage.server_tool_use).toEqual({ web_search_requests: 1 });
    const transcript = await harness.api.transcript(conversationId);
    const paused = transcript.find((message) => message.type === 'assistant');
    if (paused?.type !== 'assistant') throw new Error('no paused reply');
    const continuation = harness.model.requests[1].body.messages;
    expect(continuation).toHaveLength(2);
    expect(continuation[1].role).toBe('assistant');
    expect(withoutCacheControl(continuation[1].content)).toEqual(paused.message.content);
    expect(webSearchTool(harness.model.requests[1])).toEqual({ type: 'web_search_20250305', name: 'web_search', max_uses: 8 });
  });

  it('`ask --web-search` offers it and prints the cited sources after the answer', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'web_search', query: QUERY, results: [{ url: 'https://docs.temporal.io/workflows', title: 'Temporal Workflows' }] },
            { type: 'text', text: 'Durable, as documented.', citations: [{ url: 'https://docs.temporal.io/workflows', cited_text: CITED }] },
          ],
        },
      ],
    });
    await harness.startWorker();
    const { code, out } = await cliAgainst(harness, 'ask', '--cwd', harness.workspace, '--web-search', '{"allowedDomains":["docs.temporal.io"]}', 'Durable?');
    expect(code).toBe(0);
    expect(out).toBe('Durable, as documented.\nSources:\n  - Temporal Workflows: https://docs.temporal.io/workflows\n');
    expect(webSearchTool(harness.model.requests[0])).toEqual({
      type: 'web_search_20250305',
      name: 'web_search',
      max_uses: 8,
      allowed_domains: ['docs.temporal.io'],
    });
  });

  it('chat shows the search as a line and the cited sources after the answer', async () => {
    harness = await createHarness({
      script: [
        {
          content: [
            { type: 'web_search', query: QUERY, results: [{ url: 'https://docs.temporal.io/workflows', title: 'Temporal Workflows' }] },
            { type: 'text', text: 'Durable, says the page.', citations: [{ url: 'https://docs.temporal.io/workflows', cited_text: CITED }] },
          ],
          // Streamed slowly, so the text reaches the chat through the live channel before the message.
          chunkSize: 4,
          deltaDelayMs: 60,
        },
      ],
    });
    await harness.startWorker();
    const terminal = startChat(harness, 'chat-web-search', '--cwd', harness.workspace, '--web-search');
    await eventually(async () => screen(terminal), chatReady, 90_000);
    tmux('send-keys', '-t', terminal, 'is it durable', 'Enter');
    const shown = await eventually(
      async () => screen(terminal),
      (text) => text.includes('Durable, says the page.') && text.includes('https://docs.temporal.io/workflows'),
      60_000,
    );
    // The search's line, then the answer, then its sources.
    expect(shown).toMatch(
      /Web Search\("temporal workflow durability"\)\n\s*⎿\s+Did 1 search: 1 result\nDurable, says the page\.\nSources:\n\s*- Temporal Workflows: https:\/\/docs\.temporal\.io\/workflows/,
    );
  });

  it("a conversation's agents get it too", async () => {
    const isChild = (request: RecordedRequest) => !(request.body.tools as Array<{ name: string }>).some((tool) => tool.name === 'Agent');
    harness = await createHarness({
      respond: (request) => {
        if (isChild(request)) return { content: [{ type: 'text', text: 'child done' }] };
        const last = request.body.messages[request.body.messages.length - 1];
        const answered = Array.isArray(last.content) && last.content.some((block: { type: string }) => block.type === 'tool_result');
        if (answered) return { content: [{ type: 'text', text: 'parent done' }] };
        return {
          content: [{ type: 'tool_use', name: 'Agent', input: { description: 'look it up', prompt: 'Search the web.', subagent_type: 'general-purpose' } }],
        };
      },
    });
    await harness.startWorker();
    const { result } = await runToResult(harness, 'Delegate.', { webSearch: { maxUses: 4 }, permissions: { mode: 'bypassPermissions' } });
    expect(result).toMatchObject({ subtype: 'success', result: 'parent done' });
    const child = harness.model.requests.find(isChild);
    expect(child && webSearchTool(child)).toEqual({ type: 'web_search_20250305', name: 'web_search', max_uses: 4 });
  });

  it('a deny rule on WebSearch stops offering it', async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'No search.' }] }] });
    await harness.startWorker();
    const { result } = await runToResult(harness, 'Search?', {
      webSearch: { maxUses: 2 },
      permissions: { mode: 'default', deny: ['WebSearch'] },
    });
    expect(result.subtype).toBe('success');
    expect(webSearchTool(harness.model.requests[0])).toBeUndefined();
  });

  it("a deny rule on WebSearch in the workspace's settings stops offering it too", async () => {
    harness = await createHarness({ script: [{ content: [{ type: 'text', text: 'No search.' }] }, { content: [{ type: 'text', text: 'Searching.' }] }] });
    await harness.startWorker();
    // Offered without the rule (so the check below can fail), then not offered with it.
    await runToResult(harness, 'Search?', { webSearch: { maxUses: 2 }, permissions: { mode: 'default' } });
    expect(webSearchTool(harness.model.requests[0])).toBeDefined();
    mkdirSync(path.join(harness.workspace, '.claude'), { recursive: true });
    writeFileSync(path.join(harness.workspace, '.claude', 'settings.json'), JSON.stringify({ permissions: { deny: ['WebSearch'] } }));
    const { result } = await runToResult(harness, 'Search?', { webSearch: { maxUses: 2 }, permissions: { mode: 'default' } });
    expect(result.subtype).toBe('success');
    expect(webSearchTool(harness.model.requests[1])).toBeUndefined();
  });
});
