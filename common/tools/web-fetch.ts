/**
 * WebFetch tool spec (issue 33; pure, the workflow bundle imports it): Claude Code's tool — a URL
 * and a prompt; the page is fetched on the worker, converted to Markdown and read with the prompt
 * by a small fast model (activities/tools/web-fetch.ts). Permission rules name its domain:
 * `WebFetch(domain:example.com)` (`*.example.com` its subdomains); with no rule it asks.
 */
import { z } from 'zod';
import { defineTool } from '../tool-spec';

/** The result the model gets is cut to this many characters. */
export const WEB_FETCH_MAX_RESULT_CHARS = 100_000;

/** A host rules can name: DNS labels of letters, digits and hyphens, or an IPv4 address (no `*`, `(`, empty labels). */
const PLAIN_HOST = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

/** The refinement runs on a URL the check before it refused too: that one is left to the check's own message. */
function plainHostOrUnparsed(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return true;
  }
  return PLAIN_HOST.test(host) || /^\[[0-9a-f:.]+\]$/.test(host);
}

export const webFetchInputSchema = z.strictObject({
  url: z
    .url({ protocol: /^https?$/, error: 'must be a fully-formed http(s) URL' })
    .refine(plainHostOrUnparsed, { error: 'the host must be a plain host name (letters, digits, hyphens and dots) or an IP address' })
    .describe('The URL to fetch content from'),
  prompt: z.string().min(1).describe('The prompt to run on the fetched content'),
});

export type WebFetchInput = z.infer<typeof webFetchInputSchema>;

/** The host a call fetches, lower case (no port), or undefined for a URL that does not parse. */
export function webFetchHost(input: { url?: unknown }): string | undefined {
  if (typeof input.url !== 'string') return undefined;
  try {
    return new URL(input.url).hostname
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '')
      .toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * Whether a rule's specifier covers the call: `domain:example.com` that host exactly,
 * `domain:*.example.com` its subdomains; any other specifier covers nothing (a rule we do not
 * understand never allows).
 */
export function webFetchRuleMatches(input: { url?: unknown }, content: string): boolean {
  const host = webFetchHost(input);
  const match = /^domain:(.+)$/.exec(content.trim());
  if (host === undefined || !match) return false;
  const written = match[1].trim();
  const wildcard = written.startsWith('*.');
  // Spelled as the URL's host is: an IDN as punycode (`münchen.de` → `xn--mnchen-3ya.de`), an IPv6 address without brackets.
  const domain = ruleDomain(wildcard ? written.slice(2) : written);
  if (domain === undefined) return false;
  if (wildcard) return host.endsWith(`.${domain}`);
  return host === domain;
}

/** A rule's domain as a URL's hostname spells it (lower case, punycode, no brackets or trailing dot); undefined when it is no host. */
function ruleDomain(written: string): string | undefined {
  const bare = written.replace(/\.$/, '');
  if (bare === '' || /[\s/?#@\\*]/.test(bare)) return undefined;
  try {
    const ipv6 = bare.includes(':') && !bare.startsWith('[');
    return new URL(`http://${ipv6 ? `[${bare}]` : bare}/`).hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  } catch {
    return undefined;
  }
}

export const webFetchToolSpec = defineTool({
  name: 'WebFetch',
  description: `- Fetches the content of a URL and answers a prompt about it
- Takes a URL and a prompt: the page is fetched, HTML is converted to Markdown, and a small fast model reads it with the prompt; you get that model's answer, not the raw page
- Use it to read web pages, documentation and other public text
- The URL must be fully formed (http:// or https://); http:// is upgraded to https:// for public hosts
- Read-only: it changes nothing
- The prompt should say what you want from the page, e.g. "List the configuration options with their defaults"
- Answers are cached for 15 minutes, so asking again about the same URL is quick
- When the URL redirects to another host (www. added or dropped too), you are told the new URL and not sent there: call WebFetch again with it
- Addresses of the worker's own network (loopback, link-local, private) are refused unless the user's settings allow them
- If an MCP-provided web fetch tool is available, prefer it`,
  inputSchema: webFetchInputSchema,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  maxResultSizeChars: WEB_FETCH_MAX_RESULT_CHARS,
  summarize: (input) => `Fetch ${input.url}`,
  ruleMatches: webFetchRuleMatches,
  // Only a plain host name becomes a rule (an IP literal or anything else: no "don't ask again").
  alwaysRule: (input) => {
    const host = webFetchHost(input);
    return host !== undefined && PLAIN_HOST.test(host) && !/^[\d.]+$/.test(host) ? `WebFetch(domain:${host})` : undefined;
  },
  describeResult: (_input, content) => /^Received [^\n]+/.exec(content)?.[0],
});
