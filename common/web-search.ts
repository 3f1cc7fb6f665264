/**
 * WebSearch (issue 33): the Messages API's server-side web search tool (`web_search_20250305`).
 * The API runs the search; the model's reply carries a `server_tool_use` block, its
 * `web_search_tool_result` and text blocks with `citations`, all kept in the transcript and sent
 * back verbatim (the API checks `encrypted_content` and `encrypted_index`). No tool_result answers
 * a server_tool_use, so the tool loop never sees it as a call of ours.
 *
 * Where Claude Code has a client tool named `WebSearch` (its own side request with the server tool),
 * we offer the server tool in the conversation's own requests: the searches, their results and
 * citations are the conversation's, durable in its history. Permission rules name it `WebSearch`
 * as Claude Code's do: a deny rule on `WebSearch` (the whole tool) stops offering it, and a
 * `tools` list without `WebSearch` does not offer it. A server tool cannot be asked about call by
 * call (the API runs it inside the model's turn), so offering it is the permission.
 *
 * Pure: imported by the workflow bundle, the activities and the client.
 */
import { z } from 'zod';
import type { AssistantContentBlock, Usage, WebSearchCitation } from './messages';

/** Claude Code's tool name: permission rules and `tools` lists use it. */
export const WEB_SEARCH_TOOL_NAME = 'WebSearch';
/** The server tool's name and type on the wire. */
export const WEB_SEARCH_SERVER_TOOL_NAME = 'web_search';
export const WEB_SEARCH_TOOL_TYPE = 'web_search_20250305';
/** Searches one request may make, as Claude Code's WebSearch allows (`max_uses: 8`). */
export const DEFAULT_WEB_SEARCH_MAX_USES = 8;
/** The API's price: $10 per 1,000 searches. */
export const WEB_SEARCH_PRICE_USD = 10 / 1_000;

const domainList = z.array(z.string().min(1)).min(1);

/**
 * The conversation's `webSearch` setting: present turns the tool on. `allowedDomains` and
 * `blockedDomains` filter the results (the API takes one or the other, never both).
 */
export const webSearchConfigSchema = z
  .object({
    maxUses: z.number().int().min(1).default(DEFAULT_WEB_SEARCH_MAX_USES),
    allowedDomains: domainList.optional(),
    blockedDomains: domainList.optional(),
  })
  .refine((config) => !(config.allowedDomains && config.blockedDomains), {
    message: 'webSearch: allowedDomains and blockedDomains cannot be used together (the API takes one or the other)',
  });
export type WebSearchConfig = z.output<typeof webSearchConfigSchema>;

/** The server tool as the request offers it. */
export interface WebSearchToolDefinition {
  type: typeof WEB_SEARCH_TOOL_TYPE;
  name: typeof WEB_SEARCH_SERVER_TOOL_NAME;
  max_uses: number;
  allowed_domains?: string[];
  blocked_domains?: string[];
}

/** What `webSearchOffer` decides from: the parts of the conversation's config it reads. */
export interface WebSearchOfferInput {
  webSearch?: WebSearchConfig;
  tools?: readonly string[];
  permissions?: { deny: readonly string[] };
}

/**
 * The web search tool the conversation's requests offer, or undefined: on when `webSearch` is
 * configured, off when a `tools` list leaves `WebSearch` out or a deny rule names the whole tool.
 */
export function webSearchOffer(config: WebSearchOfferInput): WebSearchToolDefinition | undefined {
  const settings = config.webSearch;
  if (!settings) return undefined;
  if (config.tools && !config.tools.includes(WEB_SEARCH_TOOL_NAME)) return undefined;
  if (config.permissions?.deny.some((rule) => rule.trim() === WEB_SEARCH_TOOL_NAME || rule.trim() === `${WEB_SEARCH_TOOL_NAME}()`)) return undefined;
  return {
    type: WEB_SEARCH_TOOL_TYPE,
    name: WEB_SEARCH_SERVER_TOOL_NAME,
    max_uses: settings.maxUses,
    ...(settings.allowedDomains ? { allowed_domains: [...settings.allowedDomains] } : {}),
    ...(settings.blockedDomains ? { blocked_domains: [...settings.blockedDomains] } : {}),
  };
}

/** The cost of the searches billed in `usage`. */
export function webSearchCostUsd(usage: Partial<Usage>): number {
  return (usage.server_tool_use?.web_search_requests ?? 0) * WEB_SEARCH_PRICE_USD;
}

/** A cited source, once per URL, in the order first cited. */
export interface CitedSource {
  url: string;
  title: string;
}

/** The web pages a reply's text cites. */
export function citedSources(content: readonly AssistantContentBlock[]): CitedSource[] {
  const seen = new Map<string, CitedSource>();
  for (const block of content) {
    if (block.type !== 'text') continue;
    for (const citation of (block.citations ?? []) as WebSearchCitation[]) {
      if (citation.type !== 'web_search_result_location' || seen.has(citation.url)) continue;
      seen.set(citation.url, { url: citation.url, title: citation.title ?? citation.url });
    }
  }
  return [...seen.values()];
}

/** Claude Code's line for a search: `Web Search("query")`; an unreadable input shows as `Web Search`. */
export function webSearchLine(input: unknown): string {
  const query = (input as { query?: unknown } | null)?.query;
  return typeof query === 'string' ? `Web Search(${JSON.stringify(query)})` : 'Web Search';
}

/** How a search ended, in a line: the number of results, or the API's error code. */
export function webSearchOutcomeLine(content: readonly AssistantContentBlock[], toolUseId: string): string | undefined {
  const result = content.find((block) => block.type === 'web_search_tool_result' && block.tool_use_id === toolUseId);
  if (!result || result.type !== 'web_search_tool_result') return undefined;
  if (!Array.isArray(result.content)) return `Web search failed: ${result.content.error_code}`;
  return `Did 1 search: ${result.content.length} ${result.content.length === 1 ? 'result' : 'results'}`;
}

/**
 * What a person sees of a reply's web searches besides its text: a line per search (and its
 * outcome) and, after the text, the sources it cites.
 */
export function webSearchDisplay(content: readonly AssistantContentBlock[]): { searches: string[]; sources: string[] } {
  const searches: string[] = [];
  for (const block of content) {
    if (block.type !== 'server_tool_use' || block.name !== WEB_SEARCH_SERVER_TOOL_NAME) continue;
    const outcome = webSearchOutcomeLine(content, block.id);
    searches.push(outcome ? `${webSearchLine(block.input)}\n  ⎿  ${outcome}` : webSearchLine(block.input));
  }
  const cited = citedSources(content);
  const sources = cited.length === 0 ? [] : ['Sources:', ...cited.map((source) => `  - ${source.title}: ${source.url}`)];
  return { searches, sources };
}
