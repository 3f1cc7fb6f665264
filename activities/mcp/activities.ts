/**
 * The MCP activities (issue 22 §2), run on the workspace's worker where the connections live:
 * `loadMcpConfig` reads Claude Code's files, `listMcpServers` connects and lists (a server that
 * fails to start is an entry with its error, never a thrown failure), `callMcpTool` makes one call
 * with a timeout and progress heartbeats. Tool failures are data (style §9): only cancellation
 * throws.
 */
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type {
  CallMcpToolInput,
  CallMcpToolResult,
  ListMcpServersInput,
  ListMcpServersResult,
  LoadMcpConfigInput,
  LoadMcpConfigResult,
  McpServerStatus,
  McpToolListing,
} from '../../common/activity-types';
import {
  type McpApprovalSettings,
  type McpConfigProblem,
  type McpServerConfig,
  type McpServerEntry,
  mergeMcpServers,
  parseMcpConfigText,
  parseMcpServers,
  transportOf,
} from '../../common/mcp-config';
import {
  assignMcpToolNames,
  decideMcpCallAttempt,
  isMcpToolConcurrencySafe,
  mapMcpCallResult,
  mcpMayHaveRunMessage,
  type McpToolAnnotations,
} from '../../common/mcp-tools';
import { SETTING_SOURCES } from '../../common/permissions';
import { readJsonObjectFile, settingsFiles } from '../settings';
import { saveMcpApprovals } from './approvals';
import { loadPlugins } from '../plugins';
import { McpConnectionManager } from './connections';
import { checkpointBeforeTool } from '../checkpoints/before-tool';

/** Claude Code caps a tool's description at 2,048 characters. */
export const MAX_MCP_DESCRIPTION_CHARS = 2_048;
/** A server's instructions kept for the system prompt. */
export const MAX_MCP_INSTRUCTIONS_CHARS = 8_192;
/** A call's default timeout, below the 11-minute start-to-close timeout the tool activities get. */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 10 * 60 * 1000;
/** Tools listed per server at most (pages of `tools/list`). */
const MAX_TOOLS_PER_SERVER = 1_000;

export interface McpActivitiesDeps {
  connections: McpConnectionManager;
  /** The worker's state directory: a checkpoint of the workspace before a tool not marked read-only (issue 31). Absent: none. */
  stateDir?: string;
  /** Where `~/.claude.json` and `~/.claude/settings.json` are (default the worker user's home). */
  home?: string;
}

/** The three activities, closing over the worker's connections (style §8). */
export function createMcpActivities(deps: McpActivitiesDeps) {
  const home = deps.home ?? os.homedir();
  return {
    loadMcpConfig: (input: LoadMcpConfigInput) => loadMcpConfig(input, home),
    listMcpServers: (input: ListMcpServersInput) => listMcpServers(deps.connections, input),
    callMcpTool: (input: CallMcpToolInput) => callMcpTool(deps.connections, input, deps.stateDir),
    saveMcpApprovals,
  };
}

function problemText(problem: McpConfigProblem): string {
  return `${problem.file}${problem.server ? `: server "${problem.server}"` : ''}: ${problem.message}; ${problem.server ? 'that server was' : 'its servers were'} ignored.`;
}

/** Reads `.mcp.json` (a trusted workspace's), `~/.claude.json` (user and local scopes), `--mcp-config` and the approval settings. */
export async function loadMcpConfig(input: LoadMcpConfigInput, home = os.homedir()): Promise<LoadMcpConfigResult> {
  const sources = input.settingSources ?? [...SETTING_SOURCES];
  const warnings: string[] = [];
  const read = async (file: string) => readFile(file, 'utf8').catch(() => undefined);
  const collect = (parsed: { servers: Record<string, McpServerConfig>; problems: McpConfigProblem[] }) => {
    warnings.push(...parsed.problems.map(problemText));
    return parsed.servers;
  };

  let project: { file: string; servers: Record<string, McpServerConfig> } | undefined;
  // Issue 29: a workspace's `.mcp.json` (and its local approvals) only once the session context recorded it as trusted.
  const trusted = input.trusted === true;
  if (sources.includes('project') && trusted) {
    const file = path.join(input.cwd, '.mcp.json');
    const text = await read(file);
    if (text !== undefined && text.trim() !== '') project = { file, servers: collect(parseMcpConfigText(text, file)) };
  }

  let user: typeof project;
  let local: typeof project;
  const claudeJson = path.join(home, '.claude.json');
  if (sources.includes('user') || sources.includes('local')) {
    const text = await read(claudeJson);
    if (text !== undefined && text.trim() !== '') {
      let json: any;
      try {
        json = JSON.parse(text);
      } catch (error) {
        warnings.push(`${claudeJson}: not valid JSON (${(error as Error).message}); its MCP servers were ignored.`);
      }
      if (json && typeof json === 'object') {
        if (sources.includes('user')) user = { file: claudeJson, servers: collect(parseMcpServers(json.mcpServers, claudeJson, 'mcpServers')) };
        const projectEntry = json.projects?.[input.cwd];
        if (sources.includes('local') && projectEntry && typeof projectEntry === 'object') {
          local = { file: claudeJson, servers: collect(parseMcpServers(projectEntry.mcpServers, claudeJson, `projects["${input.cwd}"].mcpServers`)) };
        }
      }
    }
  }

  const dynamic: Array<{ file: string; servers: Record<string, McpServerConfig> }> = [];
  for (const [index, value] of (input.mcpConfig ?? []).entries()) {
    // Claude Code's --mcp-config takes a file or a JSON string.
    const inline = value.trim().startsWith('{');
    const file = inline ? `--mcp-config #${index + 1}` : path.resolve(input.cwd, value);
    const text = inline ? value : await read(file);
    if (text === undefined) {
      warnings.push(`--mcp-config ${file}: the file could not be read; its servers were ignored.`);
      continue;
    }
    dynamic.push({ file, servers: collect(parseMcpConfigText(text, file)) });
  }

  const approvals = await readApprovals(input.cwd, trusted ? sources : sources.filter((source) => source === 'user'), home, warnings);
  const servers = mergeMcpServers({ user, project, local, dynamic }, approvals, input.strictMcpConfig === true);
  if (input.strictMcpConfig !== true) servers.push(...(await pluginServers(input, home, warnings)));
  return { servers: servers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)), warnings };
}

/**
 * Issue 33: a plugin's MCP servers (its .mcp.json or the manifest's `mcpServers`), named as Claude
 * Code names them, `plugin:<plugin>:<server>` (tools `mcp__plugin_<plugin>_<server>__<tool>`). The
 * user chose the plugin, so they are the user's servers: no project approval, started as the user's.
 */
async function pluginServers(input: LoadMcpConfigInput, home: string, warnings: string[]): Promise<McpServerEntry[]> {
  const loaded = await loadPlugins({ cwd: input.cwd, pluginDirs: input.pluginDirs, home, trusted: input.trusted === true });
  const entries: McpServerEntry[] = [];
  for (const plugin of loaded.plugins) {
    if (plugin.mcpServers === undefined) continue;
    const file = `plugin ${plugin.name} (${plugin.root})`;
    for (const [server, config] of Object.entries(collectPlugin(parseMcpServers(plugin.mcpServers, file, 'mcpServers'), warnings)))
      entries.push({ name: `plugin:${plugin.name}:${server}`, scope: 'user', file, config, approval: 'approved' });
  }
  return entries;
}

function collectPlugin(
  parsed: { servers: Record<string, McpServerConfig>; problems: McpConfigProblem[] },
  warnings: string[],
): Record<string, McpServerConfig> {
  warnings.push(...parsed.problems.map(problemText));
  return parsed.servers;
}

/**
 * The approval keys from the user's and the local settings. A project's shared
 * `.claude/settings.json` cannot approve the same project's `.mcp.json` servers (it would approve
 * itself: a cloned repository would start its own programs); that is reported and ignored.
 */
async function readApprovals(
  cwd: string,
  sources: readonly (typeof SETTING_SOURCES)[number][],
  home: string,
  warnings: string[],
): Promise<McpApprovalSettings> {
  const approvals: McpApprovalSettings = {};
  for (const { source, file } of settingsFiles(cwd, sources, home)) {
    const read = await readJsonObjectFile(file);
    if (read.kind !== 'object') continue; // a file that cannot be read stops the session context first
    const settings = read.value as any;
    const keys = ['enableAllProjectMcpServers', 'enabledMcpjsonServers', 'disabledMcpjsonServers'] as const;
    if (source === 'project') {
      const present = keys.filter((key) => key in settings && key !== 'disabledMcpjsonServers');
      if (present.length > 0) {
        warnings.push(
          `${file}: ${present.join(', ')} ignored: a project's shared settings cannot approve its own .mcp.json servers. ` +
            'Approve them in .claude/settings.local.json or ~/.claude/settings.json.',
        );
      }
      // Disabling is always honoured (it only takes power away).
      if (Array.isArray(settings.disabledMcpjsonServers))
        approvals.disabledMcpjsonServers = [
          ...(approvals.disabledMcpjsonServers ?? []),
          ...settings.disabledMcpjsonServers.filter((name: unknown) => typeof name === 'string'),
        ];
      continue;
    }
    if (typeof settings.enableAllProjectMcpServers === 'boolean') approvals.enableAllProjectMcpServers = settings.enableAllProjectMcpServers;
    for (const key of ['enabledMcpjsonServers', 'disabledMcpjsonServers'] as const) {
      if (settings[key] === undefined) continue;
      if (!Array.isArray(settings[key]) || settings[key].some((name: unknown) => typeof name !== 'string')) {
        warnings.push(`${file}: ${key} must be an array of server names; it was ignored.`);
        continue;
      }
      approvals[key] = [...(approvals[key] ?? []), ...settings[key]];
    }
  }
  return approvals;
}

function bounded(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… [truncated]`;
}

/** Connects to each approved server (in parallel) and lists its tools; failures are entries, not throws. */
export async function listMcpServers(connections: McpConnectionManager, input: ListMcpServersInput): Promise<ListMcpServersResult> {
  const context = Context.current();
  const heartbeat = setInterval(() => context.heartbeat(), 1_000);
  try {
    const statuses = await Promise.all(input.servers.map((entry) => listOne(connections, input, entry)));
    // Names across every server at once, so they are unique and stable (issue 22 §3).
    const all = statuses.flatMap((status) => status.tools);
    const names = assignMcpToolNames(all.map((tool) => ({ server: tool.server, tool: tool.originalName })));
    all.forEach((tool, index) => (tool.name = names[index]));
    return { servers: statuses };
  } finally {
    clearInterval(heartbeat);
  }
}

async function listOne(connections: McpConnectionManager, input: ListMcpServersInput, entry: ListMcpServersInput['servers'][number]): Promise<McpServerStatus> {
  const base = { name: entry.name, scope: entry.scope, transport: transportOf(entry.config), tools: [] as McpToolListing[], listChangedCount: 0 };
  if (entry.approval === 'pending') {
    return {
      ...base,
      state: 'needs-approval',
      error: `project server from ${entry.file} is not approved (enableAllProjectMcpServers or enabledMcpjsonServers in your settings)`,
    };
  }
  if (entry.approval === 'rejected') return { ...base, state: 'disabled', error: 'listed in disabledMcpjsonServers' };
  const connection = await connections.get(input.scope, entry.name, entry.config, input.cwd, entry.scope);
  if (connection.state !== 'connected' || !connection.client) {
    return { ...base, state: 'failed', error: connection.error ?? 'not connected', listChangedCount: connection.listChangedCount };
  }
  const client = connection.client;
  try {
    return await connections.using(connection, async () => {
      // Counted before listing: a change that lands during the listing is seen as a change next time.
      const listChangedCount = connection.listChangedCount;
      const tools: McpToolListing[] = [];
      if (client.getServerCapabilities()?.tools) {
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor ? { cursor } : undefined);
          for (const tool of page.tools) {
            const annotations = tool.annotations as McpToolAnnotations | undefined;
            tools.push({
              name: '',
              server: entry.name,
              originalName: tool.name,
              description: bounded(tool.description ?? '', MAX_MCP_DESCRIPTION_CHARS),
              inputSchema: tool.inputSchema as Record<string, unknown>,
              ...(annotations ? { annotations } : {}),
              concurrencySafe: isMcpToolConcurrencySafe(annotations),
            });
          }
          cursor = page.nextCursor;
        } while (cursor && tools.length < MAX_TOOLS_PER_SERVER);
      }
      const version = client.getServerVersion();
      const instructions = client.getInstructions();
      return {
        ...base,
        state: 'connected' as const,
        ...(version ? { serverInfo: { name: version.name, version: version.version } } : {}),
        ...(instructions ? { instructions: bounded(instructions, MAX_MCP_INSTRUCTIONS_CHARS) } : {}),
        tools,
        listChangedCount,
      };
    });
  } catch (error) {
    await connections.invalidate(connection, (error as Error).message);
    return { ...base, state: 'failed', error: `listing tools failed: ${(error as Error).message}`, listChangedCount: connection.listChangedCount };
  }
}

/**
 * One `tools/call`. Progress notifications become heartbeats (with the progress as details); a
 * retried attempt of a tool that is neither read-only nor idempotent reports "may have run"
 * instead of calling again (decideMcpCallAttempt).
 */
export async function callMcpTool(connections: McpConnectionManager, input: CallMcpToolInput, stateDir?: string): Promise<CallMcpToolResult> {
  const context = Context.current();
  const started = Date.now();
  // Issue 31: the checkpoint an earlier attempt took before calling, from its heartbeats.
  const earlier = (context.info.heartbeatDetails as { checkpointId?: string } | undefined)?.checkpointId;
  let checkpointId = typeof earlier === 'string' ? earlier : undefined;
  const error = (text: string, listChangedCount = 0): CallMcpToolResult => ({
    content: [{ type: 'text', text }],
    isError: true,
    listChangedCount,
    durationMs: Date.now() - started,
    ...(checkpointId && { checkpointId }),
  });
  if (decideMcpCallAttempt(input.annotations, context.info.attempt).action === 'report-may-have-run') {
    const undo = checkpointId
      ? ` The workspace checkpoint ${checkpointId} taken before it holds the workspace as it was (a rewind to it undoes what the call changed in the workspace's files).`
      : '';
    return { ...error(mcpMayHaveRunMessage(input.toolName) + undo), mayHaveRun: true };
  }
  if (input.server.approval !== 'approved') return error(`MCP server "${input.server.name}" is not approved, so ${input.toolName} cannot run.`);
  if (checkpointId === undefined && stateDir && input.annotations?.readOnlyHint !== true) {
    // What a tool that may change things finds: a checkpoint of the workspace (its files only; the server's own effects are not captured).
    const taken = await checkpointBeforeTool({
      stateDir,
      cwd: input.cwd,
      conversationId: input.scope,
      toolUseId: `mcp:${input.toolName}`,
      tool: input.toolName,
    });
    checkpointId = taken?.checkpointId;
  }
  const beat = () => context.heartbeat(checkpointId ? { checkpointId } : undefined);
  beat();
  const heartbeat = setInterval(beat, 1_000);
  try {
    const connection = await connections.get(input.scope, input.server.name, input.server.config, input.cwd, input.server.scope);
    if (connection.state !== 'connected' || !connection.client) {
      return error(`MCP server "${input.server.name}" is not connected: ${connection.error ?? 'unknown error'}`, connection.listChangedCount);
    }
    const client = connection.client;
    const timeout = Math.min(input.timeoutMs ?? DEFAULT_MCP_CALL_TIMEOUT_MS, DEFAULT_MCP_CALL_TIMEOUT_MS);
    try {
      const result = await connections.using(connection, () =>
        client.callTool({ name: input.originalName, arguments: input.arguments }, undefined, {
          timeout,
          signal: context.cancellationSignal,
          onprogress: (progress) =>
            context.heartbeat({ progress: progress.progress, total: progress.total, message: progress.message, ...(checkpointId && { checkpointId }) }),
        }),
      );
      const mapped = mapMcpCallResult(result as Parameters<typeof mapMcpCallResult>[0]);
      return {
        content: mapped.content,
        isError: mapped.isError,
        listChangedCount: connection.listChangedCount,
        durationMs: Date.now() - started,
        ...(checkpointId && { checkpointId }),
      };
    } catch (callError) {
      if (context.cancellationSignal.aborted) throw new CancelledFailure(`${input.toolName} cancelled`);
      const message = (callError as Error).message;
      // A broken transport: reconnect on the next use. A protocol error (unknown tool, bad arguments) leaves the connection alone.
      if (connection.state !== 'connected' || /closed|ECONNREFUSED|EPIPE|fetch failed/i.test(message)) await connections.invalidate(connection, message);
      return error(`MCP tool ${input.toolName} failed: ${message}`, connection.listChangedCount);
    }
  } finally {
    clearInterval(heartbeat);
  }
}

/** Re-exported for the worker's wiring. */
export { McpConnectionManager };
