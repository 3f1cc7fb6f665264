/**
 * WebSearch (issue 33): the pure parts (when the server tool is offered, its cost, what a person
 * sees of a search), the blocks kept and sent back verbatim, and the scripted model server running
 * searches as the API does — driven by the real SDK, JSON and SSE — and refusing altered blocks.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toAssistantMessage } from '../../activities/call-model';
import { requestTools } from '../../activities/tool-definitions';
import { conversationConfigSchema } from '../../common/config';
import { costOfUsage } from '../../common/cost';
import { type AssistantContentBlock, type AssistantMessage, EMPTY_USAGE, addUsage, buildApiMessages, subtractUsage } from '../../common/messages';
import { addModelUsage } from '../../common/model-usage';
import { citedSources, webSearchConfigSchema, webSearchDisplay, webSearchOffer } from '../../common/web-search';
import { validateMessagesRequest } from '../../testing/messages-api-validator';
import { type ScriptedModelServer, type ScriptedWebSearch, startScriptedModelServer } from '../../testing/scripted-model-server';

const MODEL = 'claude-sonnet-4-6';
const SEARCH_TOOL = { type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 2 };

describe('webSearchOffer', () => {
  const settings = webSearchConfigSchema.parse({ allowedDomains: ['docs.temporal.io'] });

  it('offers the server tool with its filters and max_uses when the conversation turns it on', () => {
    expect(webSearchOffer({})).toBeUndefined();
    expect(webSearchOffer({ webSearch: settings })).toEqual({
      type: 'web_search_20250305',
      name: 'web_search',
      max_uses: 8,
      allowed_domains: ['docs.temporal.io'],
    });
    expect(webSearchOffer({ webSearch: webSearchConfigSchema.parse({ maxUses: 3, blockedDomains: ['a.example'] }) })).toEqual({
      type: 'web_search_20250305',
      name: 'web_search',
      max_uses: 3,
      blocked_domains: ['a.example'],
    });
  });

  it('is not offered to a tools list without WebSearch, nor against a deny rule on the whole tool', () => {
    expect(webSearchOffer({ webSearch: settings, tools: ['Read', 'WebSearch'] })).toBeDefined();
    expect(webSearchOffer({ webSearch: settings, tools: ['Read'] })).toBeUndefined();
    expect(webSearchOffer({ webSearch: settings, permissions: { deny: ['WebSearch'] } })).toBeUndefined();
    expect(webSearchOffer({ webSearch: settings, permissions: { deny: ['WebFetch', 'Bash(rm:*)'] } })).toBeDefined();
  });

  it('refuses settings the API would refuse: both domain lists, max_uses below 1', () => {
    expect(webSearchConfigSchema.safeParse({ allowedDomains: ['a.example'], blockedDomains: ['b.example'] }).error?.issues[0].message).toMatch(
      /allowedDomains and blockedDomains cannot be used together/,
    );
    expect(webSearchConfigSchema.safeParse({ maxUses: 0 }).success).toBe(false);
    expect(conversationConfigSchema.safeParse({ cwd: '/w', webSearch: { maxUses: 0 } }).success).toBe(false);
    expect(conversationConfigSchema.parse({ cwd: '/w', webSearch: {} }).webSearch).toEqual({ maxUses: 8 });
  });

  it('goes last in the request tools, after the client tools', () => {
    const tools = requestTools({ toolNames: ['Read'], webSearch: SEARCH_TOOL });
    expect(tools.map((tool) => (tool as { name: string }).name)).toEqual(['Read', 'web_search']);
    expect(tools[1]).toEqual(SEARCH_TOOL);
    expect(validateMessagesRequest({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], tools }, 'messages')).toBeUndefined();
  });
});

describe('usage and cost of searches', () => {
  const usage = { ...EMPTY_USAGE, input_tokens: 1_000_000, server_tool_use: { web_search_requests: 3 } };

  it('bills $10 per 1,000 searches on top of the tokens', () => {
    expect(costOfUsage(MODEL, usage)).toBeCloseTo(3 + 0.03, 10);
    expect(costOfUsage(MODEL, { ...usage, server_tool_use: undefined })).toBeCloseTo(3, 10);
  });

  it('sums and subtracts searches, leaving the field out when there are none', () => {
    expect(addUsage(usage, usage).server_tool_use).toEqual({ web_search_requests: 6 });
    expect(addUsage(EMPTY_USAGE, EMPTY_USAGE)).toEqual(EMPTY_USAGE);
    expect(subtractUsage(addUsage(usage, EMPTY_USAGE), usage)).toEqual(EMPTY_USAGE);
    const modelUsage = addModelUsage(addModelUsage({}, MODEL, usage, 1), MODEL, usage, 1);
    expect(modelUsage[MODEL].webSearchRequests).toBe(6);
  });
});

const SEARCH: AssistantContentBlock[] = [
  { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'durable execution' } },
  {
    type: 'web_search_tool_result',
    tool_use_id: 'srvtoolu_1',
    content: [
      { type: 'web_search_result', url: 'https://a.example/1', title: 'A', encrypted_content: 'EA', page_age: null },
      { type: 'web_search_result', url: 'https://b.example/2', title: 'B', encrypted_content: 'EB', page_age: '2 days ago' },
    ],
  },
  {
    type: 'text',
    text: 'Durable.',
    citations: [
      { type: 'web_search_result_location', url: 'https://a.example/1', title: 'A', cited_text: 'x', encrypted_index: 'I1' },
      { type: 'web_search_result_location', url: 'https://a.example/1', title: 'A', cited_text: 'y', encrypted_index: 'I2' },
    ],
  },
  {
    type: 'text',
    text: ' Really.',
    citations: [{ type: 'web_search_result_location', url: 'https://b.example/2', title: null, cited_text: 'z', encrypted_index: 'I3' }],
  },
];

describe('what a person sees of a search', () => {
  it('a line per search with its outcome, and each cited source once after the answer', () => {
    expect(citedSources(SEARCH)).toEqual([
      { url: 'https://a.example/1', title: 'A' },
      { url: 'https://b.example/2', title: 'https://b.example/2' },
    ]);
    expect(webSearchDisplay(SEARCH)).toEqual({
      searches: ['Web Search("durable execution")\n  ⎿  Did 1 search: 2 results'],
      sources: ['Sources:', '  - A: https://a.example/1', '  - https://b.example/2: https://b.example/2'],
    });
    const failed: AssistantContentBlock[] = [
      SEARCH[0],
      { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' } },
    ];
    expect(webSearchDisplay(failed)).toEqual({ searches: ['Web Search("durable execution")\n  ⎿  Web search failed: max_uses_exceeded'], sources: [] });
  });
});

describe('the blocks are kept and sent back verbatim', () => {
  it('toAssistantMessage keeps server_tool_use, web_search_tool_result, citations and the billed searches', () => {
    const apiMessage = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [
        { ...SEARCH[0], caller: { type: 'direct' } },
        { ...SEARCH[1], caller: { type: 'direct' } },
        { ...SEARCH[2] },
        { type: 'text', text: 'Plain.', citations: null },
      ],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, server_tool_use: { web_search_requests: 1 } },
    } as unknown as Anthropic.Message;
    const message = toAssistantMessage(apiMessage);
    expect(message.content).toEqual([
      { ...SEARCH[0], caller: { type: 'direct' } },
      { ...SEARCH[1], caller: { type: 'direct' } },
      SEARCH[2],
      { type: 'text', text: 'Plain.' },
    ]);
    expect(message.usage.server_tool_use).toEqual({ web_search_requests: 1 });
  });

  it('the request carries them unchanged, and a server_tool_use is no client tool call', () => {
    const reply: AssistantMessage = {
      type: 'assistant',
      uuid: 'a',
      message: { id: 'm', role: 'assistant', model: MODEL, content: SEARCH, stop_reason: 'end_turn', usage: EMPTY_USAGE },
    };
    const messages = buildApiMessages(
      [
        { type: 'user', uuid: 'u', message: { role: 'user', content: 'search' } },
        reply,
        { type: 'user', uuid: 'v', message: { role: 'user', content: 'more' } },
      ],
      undefined,
    );
    expect(messages[1]).toEqual({ role: 'assistant', content: SEARCH });
    const body = { model: MODEL, max_tokens: 100, messages, tools: [SEARCH_TOOL] };
    expect(validateMessagesRequest(body, 'messages')).toBeUndefined();
  });
});

describe('the validator on web search', () => {
  const body = (tools: unknown[], content: unknown[] = [{ type: 'text', text: 'hi' }]) => ({
    model: MODEL,
    max_tokens: 100,
    tools,
    messages: [
      { role: 'user', content: 'search' },
      { role: 'assistant', content },
      { role: 'user', content: 'more' },
    ],
  });

  it('checks the tool definition as the API does', () => {
    expect(validateMessagesRequest(body([{ ...SEARCH_TOOL, name: 'search' }]), 'messages')).toBe(
      "tools.0.web_search_20250305.name: Input should be 'web_search'",
    );
    expect(validateMessagesRequest(body([{ ...SEARCH_TOOL, max_uses: 0 }]), 'messages')).toBe(
      'tools.0.web_search_20250305.max_uses: Input should be greater than or equal to 1',
    );
    expect(validateMessagesRequest(body([{ ...SEARCH_TOOL, allowed_domains: ['a.example'], blocked_domains: ['b.example'] }]), 'messages')).toMatch(
      /allowed_domains and blocked_domains cannot be used together/,
    );
    expect(validateMessagesRequest(body([{ ...SEARCH_TOOL, input_schema: { type: 'object' } }]), 'messages')).toBe(
      'tools.0.web_search_20250305.input_schema: Extra inputs are not permitted',
    );
    expect(validateMessagesRequest(body([{ type: 'web_fetch_20250910', name: 'web_fetch' }]), 'messages')).toMatch(
      /expected tags: 'custom', 'web_search_20250305'/,
    );
    expect(validateMessagesRequest(body([SEARCH_TOOL, SEARCH_TOOL]), 'messages')).toBe('tools: Tool names must be unique.');
  });

  it('wants each server_tool_use answered by its result in the same turn, and well-formed citations', () => {
    expect(validateMessagesRequest(body([SEARCH_TOOL], SEARCH), 'messages')).toBeUndefined();
    expect(validateMessagesRequest(body([SEARCH_TOOL], [SEARCH[0], { type: 'text', text: 'x' }]), 'messages')).toBe(
      'messages.1: `web_search` tool use with id `srvtoolu_1` was found without a corresponding `web_search_tool_result` block',
    );
    expect(validateMessagesRequest(body([SEARCH_TOOL], [SEARCH[1]]), 'messages')).toMatch(/has no corresponding `server_tool_use` block before it/);
    expect(validateMessagesRequest(body([SEARCH_TOOL], [{ ...SEARCH[0], id: 'toolu_1' }, SEARCH[1]]), 'messages')).toMatch(
      /server_tool_use\.id: String should match pattern/,
    );
    expect(
      validateMessagesRequest(body([SEARCH_TOOL], [{ type: 'text', text: 'x', citations: [{ type: 'web_search_result_location', url: 'u' }] }]), 'messages'),
    ).toBe('messages.1.content.0.text.citations.0.web_search_result_location.cited_text: Field required');
  });
});

describe('the scripted model server runs web searches', () => {
  let server: ScriptedModelServer;
  let client: Anthropic;
  beforeEach(async () => {
    server = await startScriptedModelServer();
    client = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
  });
  afterEach(async () => {
    await server.close();
  });

  const searchTurn = {
    content: [
      {
        type: 'web_search' as const,
        query: 'q',
        results: [
          { url: 'https://docs.example.com/a', title: 'Docs' },
          { url: 'https://other.example.org/b', title: 'Other' },
        ],
      },
      { type: 'text' as const, text: 'Cited.', citations: [{ url: 'https://docs.example.com/a', cited_text: 'the text' }] },
    ],
  };
  const ask = (tools: Anthropic.ToolUnion[], messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'search' }]) => ({
    model: MODEL,
    max_tokens: 1024,
    tools,
    messages,
  });

  it('answers with the blocks and the billed search, filters by domain, and takes them back only unchanged', async () => {
    server.enqueue(searchTurn);
    const tools = [{ ...SEARCH_TOOL, allowed_domains: ['example.com'] }];
    const message = await client.messages.create(ask(tools));
    expect(message.content.map((block) => block.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'text']);
    const result = message.content[1] as Anthropic.WebSearchToolResultBlock;
    expect((result.content as Anthropic.WebSearchResultBlock[]).map((entry) => entry.url)).toEqual(['https://docs.example.com/a']);
    expect((message.content[2] as Anthropic.TextBlock).citations).toMatchObject([
      { type: 'web_search_result_location', url: 'https://docs.example.com/a', title: 'Docs', cited_text: 'the text' },
    ]);
    expect(message.usage.server_tool_use).toEqual({ web_search_requests: 1 });

    const back = (content: unknown[]): Anthropic.MessageParam[] => [
      { role: 'user', content: 'search' },
      { role: 'assistant', content: content as Anthropic.ContentBlockParam[] },
      { role: 'user', content: 'more' },
    ];
    server.enqueue({ content: [{ type: 'text', text: 'Again.' }] });
    await expect(client.messages.create(ask(tools, back(message.content)))).resolves.toMatchObject({ content: [{ type: 'text', text: 'Again.' }] });

    const changedContent = structuredClone(message.content) as any[];
    changedContent[1].content[0].encrypted_content = 'forged';
    await expect(client.messages.create(ask(tools, back(changedContent)))).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('Invalid `encrypted_content` in `web_search_tool_result` block'),
    });
    const changedCitation = structuredClone(message.content) as any[];
    changedCitation[2].citations[0].cited_text = 'something else';
    await expect(client.messages.create(ask(tools, back(changedCitation)))).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('Invalid `encrypted_index` in `web_search_result_location` citation'),
    });
    const changedQuery = structuredClone(message.content) as any[];
    changedQuery[0].input.query = 'another';
    await expect(client.messages.create(ask(tools, back(changedQuery)))).rejects.toMatchObject({ status: 400 });
    expect(server.rejections).toHaveLength(3);
  });

  it('streams the same blocks (citations as citations_delta), as the SDK accumulates them', async () => {
    server.enqueue(searchTurn);
    const streamed = await client.messages.stream(ask([SEARCH_TOOL])).finalMessage();
    server.enqueue(searchTurn);
    const whole = await client.messages.create(ask([SEARCH_TOOL]));
    const strip = (content: unknown) =>
      JSON.parse(
        JSON.stringify(content)
          .replace(/scripted_\d+/g, 'N')
          .replace(/"encrypted_(content|index)":"[^"]+"/g, '"encrypted_$1":"E"'),
      );
    expect(strip(streamed.content)).toEqual(strip(whole.content));
    expect(streamed.usage.server_tool_use).toEqual({ web_search_requests: 1 });
  });

  it('a search past max_uses is the max_uses_exceeded error, not billed; a search the request does not offer is a script error', async () => {
    const search: ScriptedWebSearch = { type: 'web_search', query: 'q', results: [{ url: 'https://docs.example.com/a', title: 'Docs' }] };
    server.enqueue({ content: [search, { ...search, query: 'q2' }, { type: 'text', text: 'Done.' }] });
    const message = await client.messages.create(ask([{ ...SEARCH_TOOL, max_uses: 1 }]));
    expect((message.content[3] as Anthropic.WebSearchToolResultBlock).content).toEqual({
      type: 'web_search_tool_result_error',
      error_code: 'max_uses_exceeded',
    });
    expect(message.usage.server_tool_use).toEqual({ web_search_requests: 1 });
    server.enqueue(searchTurn);
    await expect(client.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 500 });
  });
});

describe('--web-search', () => {
  it('alone turns the tool on with its defaults; JSON settings are checked before anything starts', async () => {
    const { configFrom } = await import('../../client/command-line');
    const cwd = process.cwd();
    expect(configFrom({ cwd }, true).webSearch).toBeUndefined();
    expect(configFrom({ cwd, 'web-search': true }, true).webSearch).toEqual({});
    expect(configFrom({ cwd, 'web-search': '{"maxUses":2,"allowedDomains":["docs.temporal.io"]}' }, true).webSearch).toEqual({
      maxUses: 2,
      allowedDomains: ['docs.temporal.io'],
    });
    expect(() => configFrom({ cwd, 'web-search': 'docs.temporal.io' }, true)).toThrow(/--web-search takes JSON settings/);
    expect(() => configFrom({ cwd, 'web-search': '{"allowedDomains":["a.example"],"blockedDomains":["b.example"]}' }, true)).toThrow(/cannot be used together/);
  });
});

describe('/cost', () => {
  it('counts the billed web searches when there were any', async () => {
    const { costText } = await import('../../workflows/input/slash-commands');
    expect(costText(0.05, { ...EMPTY_USAGE, server_tool_use: { web_search_requests: 2 } }, 1)).toContain('Web searches:  2');
    expect(costText(0.04, EMPTY_USAGE, 1)).not.toContain('Web searches');
  });
});
