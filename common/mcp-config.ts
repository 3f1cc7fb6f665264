/**
 * MCP server configuration in Claude Code's formats (issue 22 §1), pure: `.mcp.json` (project
 * scope), `~/.claude.json` (user scope, and local scope under `projects[<cwd>]`) and `--mcp-config`
 * files all hold `{ "mcpServers": { <name>: <server> } }`, where a server is stdio
 * `{command, args, env}`, streamable HTTP `{type:"http", url, headers}` or legacy SSE
 * `{type:"sse", url, headers}`. Values may use `${VAR}` and `${VAR:-default}`; they are expanded on
 * the worker when it connects (expandServerConfig), so a secret from the worker's environment never
 * lands in workflow history.
 */
import { z } from 'zod';

/** Where a server was configured (Claude Code's scopes, plus `--mcp-config`). */
export const MCP_SCOPES = ['project', 'user', 'local', 'dynamic'] as const;
export type McpScope = (typeof MCP_SCOPES)[number];

const stringRecord = z.record(z.string(), z.string());

const stdioServerSchema = z.strictObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1, 'must not be empty'),
  args: z.array(z.string()).optional(),
  env: stringRecord.optional(),
});
const httpServerSchema = z.strictObject({
  type: z.literal('http'),
  url: z.string().min(1, 'must not be empty'),
  headers: stringRecord.optional(),
});
const sseServerSchema = z.strictObject({
  type: z.literal('sse'),
  url: z.string().min(1, 'must not be empty'),
  headers: stringRecord.optional(),
});

/** One server's configuration, as written (before `${VAR}` expansion). */
export const mcpServerConfigSchema = z.union([stdioServerSchema, httpServerSchema, sseServerSchema]);
export type McpServerConfig = z.infer<typeof mcpServerConfigSchema>;
export type McpTransportKind = 'stdio' | 'http' | 'sse';

export function transportOf(config: McpServerConfig): McpTransportKind {
  return config.type === 'http' || config.type === 'sse' ? config.type : 'stdio';
}

/** A configured server with where it came from and whether it may be started. */
export interface McpServerEntry {
  name: string;
  scope: McpScope;
  /** The file it was read from. */
  file: string;
  config: McpServerConfig;
  /**
   * `approved`: may run. `pending`: a project server nobody approved yet (Claude Code prompts; we
   * list it and do not start it). `rejected`: in `disabledMcpjsonServers`.
   */
  approval: 'approved' | 'pending' | 'rejected';
}

/** A problem with one file or server: the file, the server (when there is one), what is wrong. */
export interface McpConfigProblem {
  file: string;
  server?: string;
  message: string;
}

/** Claude Code's server-name rule (`claude mcp add` refuses other names). */
const SERVER_NAME = /^[a-zA-Z0-9_.-]+$/;

/**
 * Parses one file's text (`{mcpServers:{…}}`). Each bad server is a problem naming the file, the
 * server and the field; the good servers of the same file are kept.
 */
export function parseMcpConfigText(text: string, file: string): { servers: Record<string, McpServerConfig>; problems: McpConfigProblem[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { servers: {}, problems: [{ file, message: `not valid JSON: ${(error as Error).message}` }] };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { servers: {}, problems: [{ file, message: 'must contain a JSON object with "mcpServers"' }] };
  }
  return parseMcpServers((json as { mcpServers?: unknown }).mcpServers, file, 'mcpServers');
}

/** Parses an `mcpServers` object (from any file); `at` names its place in the file for messages. */
export function parseMcpServers(value: unknown, file: string, at = 'mcpServers'): { servers: Record<string, McpServerConfig>; problems: McpConfigProblem[] } {
  const servers: Record<string, McpServerConfig> = {};
  const problems: McpConfigProblem[] = [];
  if (value === undefined) return { servers, problems };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { servers, problems: [{ file, message: `"${at}" must be an object of servers by name` }] };
  }
  for (const [name, raw] of Object.entries(value)) {
    if (!SERVER_NAME.test(name)) {
      problems.push({ file, server: name, message: `server name ${JSON.stringify(name)} may only contain letters, digits, "_", "-" and "."` });
      continue;
    }
    const parsed = mcpServerConfigSchema.safeParse(raw);
    if (parsed.success) {
      servers[name] = parsed.data;
      continue;
    }
    problems.push({ file, server: name, message: describeServerProblem(raw, parsed.error) });
  }
  return { servers, problems };
}

/** The field that is wrong, in the user's terms (the union's own message names no field). */
function describeServerProblem(raw: unknown, error: z.ZodError): string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'must be an object ({command, args, env} or {type:"http"|"sse", url, headers})';
  const type = (raw as { type?: unknown }).type;
  if (type !== undefined && type !== 'stdio' && type !== 'http' && type !== 'sse') {
    return `type ${JSON.stringify(type)} is not one of "stdio", "http", "sse"`;
  }
  const schema = type === 'http' ? httpServerSchema : type === 'sse' ? sseServerSchema : stdioServerSchema;
  const result = schema.safeParse(raw);
  const issues = result.success ? error.issues : result.error.issues;
  return issues
    .map((issue) => {
      const field = issue.path.join('.');
      if (issue.code === 'unrecognized_keys')
        return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}`;
      if (issue.code === 'invalid_type' && issue.input === undefined) return `${field}: required`;
      return `${field || 'server'}: ${issue.message}`;
    })
    .join('; ');
}

/** The approval settings (Claude Code's settings keys), merged over the files that may approve. */
export interface McpApprovalSettings {
  enableAllProjectMcpServers?: boolean;
  enabledMcpjsonServers?: string[];
  disabledMcpjsonServers?: string[];
}

/**
 * A project (`.mcp.json`) server's approval as Claude Code decides it: disabled wins, then
 * enable-all, then the enabled list; anything else waits for the user (fails closed).
 */
export function projectServerApproval(name: string, settings: McpApprovalSettings): McpServerEntry['approval'] {
  if (settings.disabledMcpjsonServers?.includes(name)) return 'rejected';
  if (settings.enableAllProjectMcpServers === true) return 'approved';
  if (settings.enabledMcpjsonServers?.includes(name)) return 'approved';
  return 'pending';
}

/**
 * The servers of every scope, merged by name with Claude Code's precedence (local over project
 * over user; `--mcp-config` over all). `strict` (`--strict-mcp-config`): only `--mcp-config` servers.
 */
export function mergeMcpServers(
  sources: {
    user?: { file: string; servers: Record<string, McpServerConfig> };
    project?: { file: string; servers: Record<string, McpServerConfig> };
    local?: { file: string; servers: Record<string, McpServerConfig> };
    dynamic?: Array<{ file: string; servers: Record<string, McpServerConfig> }>;
  },
  approvals: McpApprovalSettings,
  strict = false,
): McpServerEntry[] {
  const byName = new Map<string, McpServerEntry>();
  const add = (scope: McpScope, source: { file: string; servers: Record<string, McpServerConfig> } | undefined) => {
    if (!source) return;
    for (const [name, config] of Object.entries(source.servers)) {
      byName.set(name, { name, scope, file: source.file, config, approval: scope === 'project' ? projectServerApproval(name, approvals) : 'approved' });
    }
  };
  if (!strict) {
    add('user', sources.user);
    add('project', sources.project);
    add('local', sources.local);
  }
  for (const source of sources.dynamic ?? []) add('dynamic', source);
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** `${VAR}` / `${VAR:-default}` (Claude Code's expansion; `$VAR` without braces is left alone). */
const VARIABLE = /\$\{([^}:]+)(?::-([^}]*))?\}/g;

/**
 * Expands `${VAR}` and `${VAR:-default}` in `text` from `env`. Variables that are unset and have
 * no default are collected in `missing` (the server then does not start: Claude Code's rule).
 */
export function expandVariables(text: string, env: Readonly<Record<string, string | undefined>>, missing: Set<string>): string {
  return text.replace(VARIABLE, (whole, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined) return value;
    if (fallback !== undefined) return fallback;
    missing.add(name);
    return whole;
  });
}

/**
 * The server's configuration with every string expanded (command, args, env values, url, header
 * values). `env` is what expansion may read: the worker passes its environment WITHOUT its
 * credentials, so `${ANTHROPIC_API_KEY}` in a project's `.mcp.json` is a missing variable.
 */
export function expandServerConfig(config: McpServerConfig, env: Readonly<Record<string, string | undefined>>): { config: McpServerConfig; missing: string[] } {
  const missing = new Set<string>();
  const expand = (text: string) => expandVariables(text, env, missing);
  const expandRecord = (record: Record<string, string> | undefined) =>
    record === undefined ? undefined : Object.fromEntries(Object.entries(record).map(([key, value]) => [key, expand(value)]));
  let expanded: McpServerConfig;
  if (config.type === 'http' || config.type === 'sse') {
    expanded = { ...config, url: expand(config.url), ...(config.headers ? { headers: expandRecord(config.headers) } : {}) };
  } else {
    expanded = {
      ...config,
      command: expand(config.command),
      ...(config.args ? { args: config.args.map(expand) } : {}),
      ...(config.env ? { env: expandRecord(config.env) } : {}),
    };
  }
  return { config: expanded, missing: [...missing].sort() };
}
