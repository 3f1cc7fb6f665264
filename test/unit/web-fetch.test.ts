/** WebFetch's pure parts and worker-side checks (issue 33): addresses refused, rules, redirects, HTML to Markdown. */
import { describe, expect, it } from 'vitest';
import { isPrivateAddress, resolveFetchTarget, sameHostRedirect, htmlToMarkdown, readWebFetchSettings } from '../../activities/tools/web-fetch';
import { decidePermission, ruleForAlways } from '../../common/permissions';
import { webFetchRuleMatches } from '../../common/tools/web-fetch';
import { getToolSpec } from '../../common/tool-specs';
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const none = new Set<string>();

describe('WebFetch addresses', () => {
  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '0.0.0.0',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '64:ff9b::a00:1',
    '2002:7f00:1::',
  ])('%s is the worker’s own network', (address) => {
    expect(isPrivateAddress(address, none)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111'])('%s is public', (address) => {
    expect(isPrivateAddress(address, none)).toBe(false);
  });

  it("an interface's own address counts as the host's", () => {
    expect(isPrivateAddress('93.184.216.34', new Set(['93.184.216.34']))).toBe(true);
  });

  it('every resolved address is checked; only the user can open a host, never the Temporal server', async () => {
    const resolve = async (name: string) => (name === 'mixed.example' ? ['93.184.216.34', '10.0.0.5'] : name === 'intranet' ? ['10.0.0.7'] : ['93.184.216.34']);
    expect(await resolveFetchTarget('mixed.example', 443, [], none, resolve)).toEqual({ refused: expect.stringContaining('10.0.0.5') });
    expect(await resolveFetchTarget('public.example', 443, [], none, resolve)).toEqual({ address: '93.184.216.34', family: 4 });
    expect(await resolveFetchTarget('intranet', 80, ['intranet'], none, resolve)).toEqual({ address: '10.0.0.7', family: 4 });
    expect(await resolveFetchTarget('intranet', 7233, ['intranet'], new Set(['10.0.0.7:7233']), resolve)).toEqual({
      refused: "intranet:7233 is the worker's Temporal server",
    });
    // The Temporal server in another spelling (IPv4-mapped) is still it.
    expect(await resolveFetchTarget('mapped', 7233, ['mapped'], new Set(['10.0.0.7:7233']), async () => ['::ffff:10.0.0.7'])).toEqual({
      refused: "mapped:7233 is the worker's Temporal server",
    });
    expect(await resolveFetchTarget('nowhere', 80, [], none, async () => [])).toEqual({ refused: 'nowhere does not resolve' });
  });

  it("the Temporal server's host is refused on every port (its Web UI, its HTTP API) unless that exact host:port is opened; host:port opens one port", async () => {
    const resolve = async () => ['127.0.0.1'];
    const server = new Set(['127.0.0.1:7233']);
    // `localhost` opened, and the dev server on localhost: its UI (8233) and an HTTP API on any port stay closed.
    expect(await resolveFetchTarget('localhost', 8233, ['localhost'], server, resolve)).toEqual({
      refused: expect.stringMatching(/host of the worker's Temporal server.*"localhost:8233"/),
    });
    expect(await resolveFetchTarget('localhost', 41234, ['localhost'], server, resolve)).toMatchObject({ refused: expect.stringContaining('Temporal server') });
    // The user's own app on localhost:3000, opened by port.
    expect(await resolveFetchTarget('localhost', 3000, ['localhost:3000'], server, resolve)).toEqual({ address: '127.0.0.1', family: 4 });
    expect(await resolveFetchTarget('localhost', 3001, ['localhost:3000'], server, resolve)).toMatchObject({
      refused: expect.stringContaining("worker's own network"),
    });
    // The gRPC port never, even named.
    expect(await resolveFetchTarget('localhost', 7233, ['localhost:7233'], server, resolve)).toEqual({
      refused: "localhost:7233 is the worker's Temporal server",
    });
    // Without a Temporal server there, `localhost` opens every port.
    expect(await resolveFetchTarget('localhost', 8233, ['localhost'], none, resolve)).toEqual({ address: '127.0.0.1', family: 4 });
    expect(await resolveFetchTarget('::1', 3000, ['[::1]:3000'], none, async () => ['::1'])).toEqual({ address: '::1', family: 6 });
  });

  it("settings that cannot be read open nothing and say why; a workspace's cannot open anything (only ~/.claude/settings.json is read)", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'web-fetch-settings-'));
    expect(await readWebFetchSettings(home)).toEqual({ allowedPrivateHosts: [] });
    await mkdir(path.join(home, '.claude'));
    await writeFile(path.join(home, '.claude', 'settings.json'), '{ not json');
    expect(await readWebFetchSettings(home)).toMatchObject({ allowedPrivateHosts: [], problem: expect.stringContaining('is not valid JSON') });
    await writeFile(path.join(home, '.claude', 'settings.json'), JSON.stringify({ webFetch: { allowedPrivateHosts: 'localhost' } }));
    expect(await readWebFetchSettings(home)).toMatchObject({ allowedPrivateHosts: [], problem: expect.stringContaining('must be a list') });
    await writeFile(path.join(home, '.claude', 'settings.json'), JSON.stringify({ webFetch: { allowedPrivateHosts: ['localhost'] } }));
    expect(await readWebFetchSettings(home)).toEqual({ allowedPrivateHosts: ['localhost'] });
  });
});

describe('WebFetch redirects and content', () => {
  it('follows the same host (http → https too), not another host, port, or the name with www. added or dropped', () => {
    const from = new URL('http://example.com/a');
    expect(sameHostRedirect(from, new URL('http://example.com/b'))).toBe(true);
    expect(sameHostRedirect(from, new URL('https://example.com/b'))).toBe(true);
    expect(sameHostRedirect(from, new URL('https://www.example.com/b'))).toBe(false);
    expect(sameHostRedirect(new URL('https://www.example.com/'), new URL('https://example.com/b'))).toBe(false);
    expect(sameHostRedirect(from, new URL('http://example.com:8080/b'))).toBe(false);
    expect(sameHostRedirect(from, new URL('http://evil.example/b'))).toBe(false);
    expect(sameHostRedirect(new URL('https://example.com/a'), new URL('http://example.com/b'))).toBe(false);
  });

  it('converts HTML to Markdown without scripts and styles', () => {
    expect(htmlToMarkdown('<h1>T</h1><style>p{}</style><script>x()</script><p>a <b>b</b></p><ul><li>c</li></ul>')).toBe('# T\n\na **b**\n\n-   c');
  });
});

describe('WebFetch permission rules', () => {
  const context = (rules: { allow?: string[]; deny?: string[]; ask?: string[] }) => ({
    mode: 'default' as const,
    rules: {
      allow: (rules.allow ?? []).map((rule) => ({ rule, source: 'cliArg' as const })),
      deny: (rules.deny ?? []).map((rule) => ({ rule, source: 'cliArg' as const })),
      ask: (rules.ask ?? []).map((rule) => ({ rule, source: 'cliArg' as const })),
    },
    workingDirectories: ['/work'],
  });
  const call = (url: string) => ({ toolName: 'WebFetch', input: { url, prompt: 'p' } });
  const facts = { readOnly: true, validInput: true };

  it('domain:host matches that host; *.host its subdomains; other specifiers nothing', () => {
    expect(webFetchRuleMatches({ url: 'https://example.com/x' }, 'domain:example.com')).toBe(true);
    expect(webFetchRuleMatches({ url: 'https://docs.example.com/x' }, 'domain:example.com')).toBe(false);
    expect(webFetchRuleMatches({ url: 'https://docs.example.com/x' }, 'domain:*.example.com')).toBe(true);
    expect(webFetchRuleMatches({ url: 'https://example.com/x' }, 'domain:*.example.com')).toBe(false);
    expect(webFetchRuleMatches({ url: 'https://example.com/x' }, 'example.com')).toBe(false);
  });

  it('a rule is spelled as the URL host is: IDN as punycode, any case, a trailing dot, IPv6 with or without brackets', () => {
    // A deny rule written in Unicode still denies the host the URL standard turns into punycode.
    expect(webFetchRuleMatches({ url: 'https://münchen.de/x' }, 'domain:münchen.de')).toBe(true);
    expect(webFetchRuleMatches({ url: 'https://xn--mnchen-3ya.de/x' }, 'domain:MÜNCHEN.de')).toBe(true);
    expect(webFetchRuleMatches({ url: 'https://www.xn--mnchen-3ya.de/x' }, 'domain:*.münchen.de')).toBe(true);
    expect(webFetchRuleMatches({ url: 'https://Example.COM./x' }, 'domain:example.com.')).toBe(true);
    expect(webFetchRuleMatches({ url: 'http://[2001:db8::1]/x' }, 'domain:2001:db8::1')).toBe(true);
    expect(webFetchRuleMatches({ url: 'http://[2001:db8::1]/x' }, 'domain:[2001:DB8:0::1]')).toBe(true);
    expect(webFetchRuleMatches({ url: 'https://example.com/x' }, 'domain:*')).toBe(false);
    expect(webFetchRuleMatches({ url: 'https://example.com/x' }, 'domain:exa mple.com')).toBe(false);
  });

  it('asks with no rule, runs with an allow rule for its domain, is refused by a deny rule', () => {
    expect(decidePermission(call('https://example.com/'), facts, context({})).behavior).toBe('ask');
    expect(decidePermission(call('https://example.com/'), facts, context({ allow: ['WebFetch(domain:example.com)'] })).behavior).toBe('allow');
    expect(decidePermission(call('https://other.example/'), facts, context({ allow: ['WebFetch(domain:example.com)'] })).behavior).toBe('ask');
    expect(decidePermission(call('https://example.com/'), facts, context({ allow: ['WebFetch'], deny: ['WebFetch(domain:example.com)'] })).behavior).toBe(
      'deny',
    );
  });

  it('"don\'t ask again" allows the domain, never every fetch', () => {
    expect(ruleForAlways('WebFetch', { url: 'https://Docs.Example.com/a', prompt: 'p' }, '/work')).toBe('WebFetch(domain:docs.example.com)');
    // Hosts no rule should name: refused as input (so no rule is made of them), or no rule for an address.
    for (const url of ['https://a(b).example.com/', 'https://*.com/', 'https://exa%2A.com/', 'https://example.com../', 'https://example.com./']) {
      expect(ruleForAlways('WebFetch', { url, prompt: 'p' }, '/work'), url).toBeUndefined();
      expect(getToolSpec('WebFetch')!.inputSchema.safeParse({ url, prompt: 'p' }).success, url).toBe(false);
    }
    expect(ruleForAlways('WebFetch', { url: 'https://93.184.216.34/', prompt: 'p' }, '/work')).toBeUndefined();
    expect(getToolSpec('WebFetch')!.inputSchema.safeParse({ url: 'http://[::ffff:127.0.0.1]:8080/', prompt: 'p' }).success).toBe(true);
  });

  it('refuses malformed input from the model with a clear error', () => {
    const spec = getToolSpec('WebFetch')!;
    expect(spec.inputSchema.safeParse({ url: 'ftp://example.com', prompt: 'p' }).success).toBe(false);
    // Not a URL at all: the URL check's own message, not a crash of the host check after it.
    expect(spec.inputSchema.safeParse({ url: 'x', prompt: 'p' }).error?.issues.map((issue) => issue.message)).toEqual(['must be a fully-formed http(s) URL']);
    expect(spec.inputSchema.safeParse({ url: 'https://example.com' }).success).toBe(false);
    expect(spec.describeResult!({ url: 'https://a', prompt: 'p' }, 'Received 1.2KB (200 OK) from https://a\n\nanswer')).toBe(
      'Received 1.2KB (200 OK) from https://a',
    );
  });
});
