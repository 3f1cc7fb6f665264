/**
 * WebFetch on the worker (issue 33): the page is fetched over HTTP(S), HTML converted to Markdown
 * (turndown), and read with the call's prompt by a small fast model (`context.readWithSmallModel`;
 * without one the Markdown itself is the answer). A fetched page is kept 15 minutes, per URL.
 *
 * The worker's own network is not the model's to explore (no server-side request forgery): every
 * address the host resolves to is checked before connecting — loopback, link-local (cloud
 * metadata at 169.254.169.254), private, shared (CGNAT), unique-local, multicast and reserved
 * ranges, this host's interface addresses and the worker's Temporal server are refused — and the
 * connection goes to the address that was checked (no second lookup a DNS server could answer
 * differently). Each redirect is checked again; one to another host is reported to the model, not
 * followed. Only the user's own settings (`~/.claude/settings.json`, `webFetch.allowedPrivateHosts`)
 * can open a private host; a workspace's settings cannot.
 */
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import TurndownService from 'turndown';
import { WEB_FETCH_MAX_RESULT_CHARS, type WebFetchInput } from '../../common/tools/web-fetch';
import { addressesOf, containsAddress, hostInterfaceAddresses, isHostLocalAddress, normalizeHost, temporalServerEndpoints } from '../sandbox-network';
import type { ToolExecutionContext, ToolExecutionResult } from './types';

/** A response body larger than this is refused (Claude Code's limit is of this order). */
export const WEB_FETCH_MAX_BODY_BYTES = 10 * 1024 * 1024;
/** Redirects followed on the same host before giving up. */
export const WEB_FETCH_MAX_REDIRECTS = 10;
/** A fetched page is reused this long (Claude Code's cache: 15 minutes). */
export const WEB_FETCH_CACHE_MS = 15 * 60 * 1000;
const FETCH_TIMEOUT_MS = 60_000;
/** The Markdown handed to the small model is cut to this many characters. */
const MAX_MARKDOWN_CHARS = 100_000;
const CACHE_ENTRIES = 64;

/**
 * Ranges the worker's own network answers on, besides isHostLocalAddress's (loopback, link-local,
 * unspecified): private (RFC 1918), shared address space (CGNAT), benchmarking, multicast,
 * reserved and broadcast; IPv6 unique-local, multicast, and the forms that embed an IPv4 address
 * (NAT64, 6to4, Teredo) — refused rather than unpacked.
 */
const PRIVATE_ADDRESSES = new net.BlockList();
for (const [subnet, prefix] of [
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['100.64.0.0', 10],
  ['192.0.0.0', 24],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  PRIVATE_ADDRESSES.addSubnet(subnet, prefix, 'ipv4');
for (const [subnet, prefix] of [
  ['fc00::', 7],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['2002::', 16],
  ['2001::', 32],
  ['100::', 64],
] as const)
  PRIVATE_ADDRESSES.addSubnet(subnet, prefix, 'ipv6');

/** Whether `address` (an IP literal) is one the worker's own network answers on: refused unless the user opened its host. */
export function isPrivateAddress(address: string, ownAddresses: ReadonlySet<string> = hostInterfaceAddresses()): boolean {
  const normalized = normalizeHost(address);
  const family = normalized === undefined ? 0 : net.isIP(normalized);
  if (family === 0 || isHostLocalAddress(normalized!)) return true;
  if (containsAddress(ownAddresses, normalized!)) return true;
  return PRIVATE_ADDRESSES.check(normalized!, family === 4 ? 'ipv4' : 'ipv6');
}

/** Where to connect for a URL's host, or why not. */
export type FetchTarget = { address: string; family: 4 | 6 } | { refused: string };

/** An `allowedPrivateHosts` entry: `host` (every port) or `host:port` (that port), IPv6 in brackets with a port. */
export function openedHost(entry: string): { name: string; port?: number } | undefined {
  const trimmed = entry.trim();
  const match = /^\[([^\]]+)\](?::(\d+))?$/.exec(trimmed) ?? /^([^:]+):(\d+)$/.exec(trimmed);
  const name = normalizeHost(match ? match[1] : trimmed);
  if (name === undefined) return undefined;
  return match?.[2] !== undefined ? { name, port: Number(match[2]) } : { name };
}

/**
 * The checked address to connect to for `host:port`. `allowedPrivateHosts`: hosts the user opened
 * (`host` every port, `host:port` that port). The worker's Temporal server is refused even then:
 * its gRPC port always, and every other port of its host (the Web UI, the HTTP API on a port
 * nobody knows) unless the user opened that exact `host:port`.
 */
export async function resolveFetchTarget(
  host: string,
  port: number,
  allowedPrivateHosts: readonly string[],
  temporal: ReadonlySet<string>,
  resolve: (name: string) => Promise<string[]> = addressesOf,
): Promise<FetchTarget> {
  const name = normalizeHost(host);
  if (name === undefined) return { refused: `${host} is not a valid host name` };
  const addresses = await resolve(name);
  if (addresses.length === 0) return { refused: `${name} does not resolve` };
  const entries = allowedPrivateHosts.map(openedHost).filter((entry) => entry !== undefined && entry.name === name);
  const opened = entries.some((entry) => entry!.port === undefined || entry!.port === port);
  const openedThisPort = entries.some((entry) => entry!.port === port);
  const blocked = addresses.find((address) => isPrivateAddress(address));
  if (blocked !== undefined && !opened) {
    return {
      refused: `${name} resolves to ${blocked}, an address of the worker's own network (loopback, link-local, private or reserved), which WebFetch does not reach. The user can allow it with "webFetch": {"allowedPrivateHosts": ["${name}:${port}"]} in ~/.claude/settings.json.`,
    };
  }
  // "address:port" of the server → its host's addresses, and whether this port is its gRPC port.
  const endpoints = [...temporal].map((endpoint) => ({
    address: endpoint.slice(0, endpoint.lastIndexOf(':')),
    port: Number(endpoint.slice(endpoint.lastIndexOf(':') + 1)),
  }));
  const serverOf = (address: string) => endpoints.filter((endpoint) => containsAddress(new Set([endpoint.address]), address));
  const onServerHost = addresses.flatMap(serverOf);
  if (onServerHost.some((endpoint) => endpoint.port === port)) return { refused: `${name}:${port} is the worker's Temporal server` };
  if (onServerHost.length > 0 && !openedThisPort) {
    return {
      refused: `${name} is the host of the worker's Temporal server, whose Web UI and HTTP API WebFetch does not reach. To fetch another service on it, the user opens that port: "webFetch": {"allowedPrivateHosts": ["${name}:${port}"]} in ~/.claude/settings.json.`,
    };
  }
  const address = addresses[0];
  return { address, family: net.isIP(address) === 6 ? 6 : 4 };
}

/** What the user's settings open for WebFetch; settings that cannot be read open nothing and say why. */
export async function readWebFetchSettings(home: string = os.homedir()): Promise<{ allowedPrivateHosts: string[]; problem?: string }> {
  const file = path.join(home, '.claude', 'settings.json');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { allowedPrivateHosts: [] };
    return { allowedPrivateHosts: [], problem: `${file} cannot be read (${(error as Error).message})` };
  }
  try {
    const value = (JSON.parse(text) as { webFetch?: { allowedPrivateHosts?: unknown } } | null)?.webFetch?.allowedPrivateHosts;
    if (value === undefined) return { allowedPrivateHosts: [] };
    if (!Array.isArray(value) || !value.every((entry) => typeof entry === 'string')) {
      return { allowedPrivateHosts: [], problem: `${file}: webFetch.allowedPrivateHosts must be a list of host names` };
    }
    return { allowedPrivateHosts: value };
  } catch (error) {
    return { allowedPrivateHosts: [], problem: `${file} is not valid JSON (${(error as Error).message})` };
  }
}

/**
 * Same host for a redirect: the same name on the same port; http → https is an upgrade, not a move.
 * Anything else — `www.` added or dropped too — is another host: the model is told, and its next
 * call is judged by the rules again (a deny rule on one name must not be passed through the other).
 */
export function sameHostRedirect(from: URL, to: URL): boolean {
  if (from.hostname.toLowerCase() !== to.hostname.toLowerCase()) return false;
  if (from.protocol === to.protocol) return from.port === to.port;
  return from.protocol === 'http:' && to.protocol === 'https:' && to.port === '';
}

interface FetchedPage {
  url: string;
  status: number;
  statusText: string;
  bytes: number;
  markdown: string;
}

type FetchOutcome = FetchedPage | { redirect: { from: string; to: string; status: number } } | { error: string };

const cache = new Map<string, { at: number; page: FetchedPage }>();

/** For tests: forget every cached page. */
export function clearWebFetchCache(): void {
  cache.clear();
}

function cached(url: string, now: number): FetchedPage | undefined {
  const entry = cache.get(url);
  if (!entry) return undefined;
  if (now - entry.at > WEB_FETCH_CACHE_MS) {
    cache.delete(url);
    return undefined;
  }
  return entry.page;
}

function remember(url: string, page: FetchedPage, now: number): void {
  cache.delete(url);
  cache.set(url, { at: now, page });
  while (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
}

/** The URL to fetch: http upgraded to https, unless the host is one the user opened (a local service). */
function upgradedUrl(url: URL, allowedPrivateHosts: readonly string[]): URL {
  if (url.protocol !== 'http:') return url;
  const name = normalizeHost(url.hostname);
  const port = Number(url.port || 80);
  const opened = allowedPrivateHosts.map(openedHost);
  if (opened.some((entry) => entry !== undefined && entry.name === name && (entry.port ?? port) === port)) return url;
  const upgraded = new URL(url.href);
  upgraded.protocol = 'https:';
  return upgraded;
}

/** One GET to a checked address; resolves with the status, headers and body (capped). */
function get(
  url: URL,
  target: { address: string; family: 4 | 6 },
  signal: AbortSignal,
): Promise<{ status: number; statusText: string; headers: http.IncomingHttpHeaders; body: Buffer } | { error: string }> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const request = client.get(
      url,
      {
        // Connect to the address that was checked, whatever a second lookup would say.
        lookup: (_hostname, options, callback) => {
          if ((options as { all?: boolean }).all) (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [target]);
          else (callback as (e: null, a: string, f: number) => void)(null, target.address, target.family);
        },
        headers: { 'user-agent': 'durable-agent WebFetch', accept: 'text/html, text/markdown, text/plain, application/json, */*;q=0.5' },
        signal,
        timeout: FETCH_TIMEOUT_MS,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > WEB_FETCH_MAX_BODY_BYTES) {
            request.destroy();
            resolve({ error: `the response is larger than ${WEB_FETCH_MAX_BODY_BYTES / 1024 / 1024} MB` });
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, statusText: response.statusMessage ?? '', headers: response.headers, body: Buffer.concat(chunks) }),
        );
        response.on('error', (error) => resolve({ error: error.message }));
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${FETCH_TIMEOUT_MS / 1000} s`)));
    request.on('error', (error) => resolve({ error: error.message }));
  });
}

/** HTML longer than this is cut before conversion (turndown is synchronous and recursive: 250 KB of nested divs blocked the worker 15 s). */
const MAX_HTML_CHARS = 1_000_000;

/** A page's HTML as Markdown, cut first; HTML turndown cannot convert (too deeply nested) becomes its text without tags. */
function pageMarkdown(html: string): string {
  const cut = html.length > MAX_HTML_CHARS ? html.slice(0, MAX_HTML_CHARS) : html;
  try {
    return htmlToMarkdown(cut);
  } catch {
    return cut
      .replace(/<(script|style)[\s\S]*?<\/\1>/gi, '')
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
  }
}

/** HTML as Markdown (turndown); scripts, styles and the like dropped. */
export function htmlToMarkdown(html: string): string {
  const service = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  service.remove(['script', 'style', 'noscript', 'iframe', 'template', 'head']);
  return service.turndown(html).trim();
}

async function fetchPage(start: URL, allowedPrivateHosts: readonly string[], signal: AbortSignal): Promise<FetchOutcome> {
  const temporal = await temporalServerEndpoints();
  let url = upgradedUrl(start, allowedPrivateHosts);
  for (let hop = 0; ; hop++) {
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const target = await resolveFetchTarget(url.hostname, port, allowedPrivateHosts, temporal);
    if ('refused' in target) return { error: target.refused };
    const response = await get(url, target, signal);
    signal.throwIfAborted();
    if ('error' in response) return { error: `fetching ${url.href} failed: ${response.error}` };
    const location = response.headers.location;
    if ([301, 302, 303, 307, 308].includes(response.status) && location) {
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        return { error: `${url.href} redirected to an address that is not a URL (${JSON.stringify(location.slice(0, 200))})` };
      }
      if (!sameHostRedirect(url, next)) return { redirect: { from: url.href, to: next.href, status: response.status } };
      if (hop >= WEB_FETCH_MAX_REDIRECTS) return { error: `${start.href} redirected more than ${WEB_FETCH_MAX_REDIRECTS} times` };
      url = next;
      continue;
    }
    const type = String(response.headers['content-type'] ?? '').toLowerCase();
    if (type !== '' && !/^(text\/|application\/(json|xml|xhtml\+xml|javascript|ld\+json)|[^;]*\+xml)/.test(type)) {
      return { error: `${url.href} is not text (content-type ${type}); WebFetch reads web pages and other text` };
    }
    const text = response.body.toString('utf8');
    const markdown = /html/.test(type) || (type === '' && /^\s*<(!doctype html|html)/i.test(text)) ? pageMarkdown(text) : text;
    return { url: url.href, status: response.status, statusText: response.statusText, bytes: response.body.length, markdown };
  }
}

function sizeText(bytes: number): string {
  return bytes < 1024 ? `${bytes} bytes` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)}KB` : `${(bytes / 1024 / 1024).toFixed(1)}MB`;
}

/** The request the small model reads a page with: the page, then the prompt. */
export function smallModelPrompt(markdown: string, prompt: string): string {
  const cut = markdown.length > MAX_MARKDOWN_CHARS ? `${markdown.slice(0, MAX_MARKDOWN_CHARS)}\n\n[… the page was cut here]` : markdown;
  return `Web page content:\n---\n${cut}\n---\n\n${prompt}\n\nAnswer from the content above only. Quote sparingly (a sentence at most at a time) and say so when the page does not answer.`;
}

export async function executeWebFetch(input: WebFetchInput, context: ToolExecutionContext): Promise<ToolExecutionResult> {
  const settings = await readWebFetchSettings();
  const start = new URL(input.url);
  const now = Date.now();
  let page = cached(start.href, now);
  if (!page) {
    // One deadline for the whole fetch (lookups, every redirect, a server that trickles bytes), beside the call's own cancellation.
    const deadline = AbortSignal.timeout(FETCH_TIMEOUT_MS);
    const outcome = await fetchPage(start, settings.problem ? [] : settings.allowedPrivateHosts, AbortSignal.any([context.signal, deadline])).catch(
      (error: unknown): FetchOutcome => {
        context.signal.throwIfAborted();
        if (deadline.aborted) return { error: `no complete answer within ${FETCH_TIMEOUT_MS / 1000} s` };
        throw error;
      },
    );
    if ('error' in outcome) {
      const why = settings.problem ? `\n(The user's WebFetch settings were not applied: ${settings.problem}.)` : '';
      return { isError: true, content: `WebFetch failed: ${outcome.error}${why}` };
    }
    if ('redirect' in outcome) {
      const { from, to, status } = outcome.redirect;
      return {
        isError: false,
        content: `REDIRECT DETECTED: ${from} redirects to a different host (${status}).\nRedirect URL: ${to}\n\nTo read it, call WebFetch again with url "${to}" and the same prompt.`,
      };
    }
    page = outcome;
    remember(start.href, page, now);
  }
  const header = `Received ${sizeText(page.bytes)} (${page.status} ${page.statusText})`.trim();
  if (page.status >= 400) return { isError: true, content: `${header} from ${page.url}\n\n${page.markdown.slice(0, 2_000)}` };
  const answer = context.readWithSmallModel
    ? await context.readWithSmallModel(smallModelPrompt(page.markdown, input.prompt), context.signal)
    : page.markdown.slice(0, WEB_FETCH_MAX_RESULT_CHARS - 200);
  return { isError: false, content: `${header} from ${page.url}\n\n${answer}` };
}
