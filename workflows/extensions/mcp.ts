/**
 * MCP servers as tools in the conversation (issue 22 items 1–3): the session's MCP state and its
 * wiring. At session start `loadMcpConfig` then `listMcpServers` run on the workspace's queue and
 * their results (the unexpanded config, the listing: names, schemas, annotations, instructions,
 * states) are recorded and carried across continue-as-new. The model is offered the listed tools
 * (`mcp__server__tool`) and the servers' instructions; a call is a `callMcpTool` activity through
 * the session's tool route; a call that reports `tools/list_changed` and `/mcp` list again.
 * Failed servers are warnings in the feed: the conversation goes on without them.
 */
import type { McpServerEntry } from '../../common/mcp-config';
import { ApplicationFailure, isCancellation, setHandler, uuid4, workflowInfo } from '@temporalio/workflow';
import type { LoadMcpConfigResult, McpServerStatus } from '../../common/activity-types';
import { type McpToolDefinition, mcpInstructionsSection, mcpListingIsStale, mcpStatusLines } from '../../common/mcp-context';
import { MAX_MCP_RESULT_CHARS, isMcpToolName } from '../../common/mcp-tools';
import type { ToolUseBlock } from '../../common/messages';
import type { ToolFacts } from '../../common/permissions';
import { toolResultBudget } from '../../common/tool-result-budget';
import { type ConversationStatus, approveMcpServersUpdate } from '../definitions';
import { MCP_CONFIG_LOCAL_OPTIONS, activities, localActivities, mcpListingOptions } from '../deps/activity-options';
import { failureMessage } from '../deps/failures';
import type { ToolPermissions } from '../deps/query-host';
import type { ToolOutcome, ToolRoute, ToolRouteCall } from '../deps/tool-routes';
import type { PartContext, PartDetails, SessionPart } from '../session/session-part';
import {
  type McpApprovalOutcome,
  type McpApprovalRequest,
  type McpCarried,
  findMcpTool,
  inheritedMcpState,
  mcpApprovalOutcome,
  mcpApprovalProblem,
  mcpServersNeedingApproval,
  mcpCallFacts,
  mcpCommandText,
  mcpListingWarnings,
  mcpResultText,
  mcpToolsChangedLine,
  mightBeListedLater,
  offeredMcpTools,
  unknownMcpToolText,
} from './mcp-state';

export type { McpCarried } from './mcp-state';

/** What the MCP servers use of the conversation (session/session-part.ts): the gate re-checks a tool listed only after its call was checked; the session context's trust decides whether `.mcp.json` servers load (issue 29). */
type McpContext = Pick<PartContext, 'conversationId' | 'config' | 'subagent' | 'sessionContext' | 'pushEvent' | 'refreshDetails'> & {
  readonly toolPermissions: Pick<ToolPermissions, 'check'>;
};

/** The conversation's MCP servers: state (one object, carried whole), the tool route, the prompt parts. */
export class McpServers implements SessionPart {
  readonly name = 'MCP servers';
  private state: McpCarried | undefined;
  /** The offered tools' definitions: a new array only when the listing changes (the request context's digest follows it). */
  private definitions: McpToolDefinition[] = [];
  private instructions: string | undefined;
  /** A listing in progress (several calls may report list_changed at once): one at a time. */
  private listing: Promise<void> | undefined;

  constructor(
    private readonly host: McpContext,
    carried: McpCarried | undefined,
    /** A subagent's: its parent's listing of the servers whose tools it gets (no listing of its own). */
    inherited?: McpCarried,
  ) {
    this.state = carried ?? inherited;
    this.derive();
  }

  /** The connections' scope: this conversation's, or (a subagent) its parent's. */
  private get scope(): string {
    return this.state?.scope ?? this.host.conversationId;
  }

  /** The API names of the MCP tools this conversation offers (a subagent may get them). */
  get offeredToolNames(): string[] {
    return this.definitions.map((tool) => tool.name);
  }

  /** A subagent's share of the state: the servers of `toolNames`, their listing, this conversation's connections. */
  inheritable(toolNames: readonly string[]): McpCarried | undefined {
    return inheritedMcpState(this.state, this.scope, toolNames);
  }

  /** Whether this run should load the servers: never loaded (or tried), and not a subagent. */
  get needsLoad(): boolean {
    return this.state === undefined && !this.host.subagent;
  }

  /** The servers `mcp_tool` hooks may call (issue 33), with their connections' scope; undefined before they are loaded. */
  hookServers(): { scope: string; servers: McpServerEntry[] } | undefined {
    return this.state ? { scope: this.scope, servers: this.state.servers } : undefined;
  }

  /** Tools the model is offered beyond the built-in ones. */
  get toolDefinitions(): readonly McpToolDefinition[] {
    return this.definitions;
  }

  /** The "# MCP Server Instructions" system section, when a connected server gave instructions. */
  get instructionsSection(): string | undefined {
    return this.instructions;
  }

  /** Session start: the config, then the servers' listing; problems go to the feed, never stop the conversation. */
  async load(): Promise<void> {
    if (!this.needsLoad) return;
    const loaded = await this.loadConfig();
    this.state = { servers: loaded?.servers ?? [], listing: [] };
    if (this.state.servers.length > 0) await this.list();
  }

  /** `/mcp`: the config is read again (a server approved since) and every server listed again; the answer lists them. */
  async command(): Promise<string> {
    if (this.state === undefined) return mcpCommandText(undefined);
    const loaded = await this.loadConfig();
    if (loaded)
      this.state = { servers: loaded.servers, listing: this.state.listing.filter((status) => loaded.servers.some((server) => server.name === status.name)) };
    if (this.state.servers.length > 0) await this.list();
    else this.derive();
    return mcpCommandText(this.state);
  }

  /** The `approveMcpServers` validator: unknown names, servers not waiting for approval, bad shapes are rejected. */
  validateApproval(request: unknown): void {
    const problem = mcpApprovalProblem(request, this.state);
    if (problem) throw ApplicationFailure.nonRetryable(problem, 'InvalidMcpApproval');
  }

  /**
   * "Use the MCP server … from .mcp.json?" answered: the choice is saved in the workspace's
   * `.claude/settings.local.json` (an activity on its host), then the config is read and the servers
   * listed again (as `/mcp`); the next model call offers an approved server's tools.
   */
  async approve(request: McpApprovalRequest): Promise<McpApprovalOutcome> {
    const { config } = this.host;
    let file: string;
    try {
      ({ file } = await activities(mcpListingOptions(config, `Save MCP approval (${request.decision}: ${request.servers.join(', ')})`, false)).saveMcpApprovals(
        {
          cwd: config.cwd,
          servers: [...request.servers],
          decision: request.decision,
        },
      ));
    } catch (error) {
      throw ApplicationFailure.nonRetryable(`The MCP approval was not saved: ${failureMessage(error)}`, 'McpApprovalNotSaved');
    }
    const verb = request.decision === 'reject' ? 'rejected' : request.decision === 'approve-all' ? 'approved (with all future project servers)' : 'approved';
    this.host.pushEvent({
      type: 'system',
      uuid: uuid4(),
      level: 'info',
      content: `MCP server${request.servers.length > 1 ? 's' : ''} ${request.servers.map((name) => `"${name}"`).join(', ')} ${verb}; saved in ${file}.`,
    });
    await this.command();
    return mcpApprovalOutcome(request, file, this.state ?? { servers: [], listing: [] });
  }

  /** The UI's current details: each server's name, state and tool count (none when there are none). */
  details(): Pick<PartDetails, 'mcpServers'> {
    const listing = this.state?.listing ?? [];
    return { mcpServers: listing.length > 0 ? listing.map((server) => ({ name: server.name, state: server.state, tools: server.tools.length })) : undefined };
  }

  /** `status`: one line per server, and the project servers waiting for a person's approval (chat asks about each); absent when none. */
  status(): Pick<ConversationStatus, 'mcpServers' | 'mcpNeedsApproval'> {
    const lines = this.state && this.state.listing.length > 0 ? mcpStatusLines(this.state.listing) : undefined;
    const needing = mcpServersNeedingApproval(this.state);
    return { ...(lines && { mcpServers: lines }), ...(needing.length > 0 && { mcpNeedsApproval: needing }) };
  }

  /** The permission engine's facts of a listed MCP tool (its server, for `mcp__server` rules). */
  permissionFacts(block: ToolUseBlock): ToolFacts | undefined {
    return this.state && isMcpToolName(block.name) ? mcpCallFacts(this.state.listing, block.name) : undefined;
  }

  /** What continue-as-new carries (nothing in runs that never loaded the servers). */
  carried(): { mcp?: McpCarried } {
    return this.state ? { mcp: this.state } : {};
  }

  /** The route of `mcp__…` calls: listed tools run on their server; any other is "No such tool available". */
  readonly routes: readonly ToolRoute[] = [
    {
      name: 'MCP servers',
      takes: (block) => this.state !== undefined && isMcpToolName(block.name),
      // Claude Code runs an MCP tool beside others only when its server annotates it read-only.
      concurrencySafe: (block) => (this.state ? findMcpTool(this.state.listing, block.name)?.concurrencySafe === true : false),
      run: (call) => this.call(call),
    },
  ];

  /** Issue 22: "Use the MCP server … from .mcp.json?" answered (saved in settings.local.json, then listed again). */
  setHandlers(): void {
    setHandler(approveMcpServersUpdate, (request) => this.approve(request), {
      description: 'Approve or reject .mcp.json servers: {"servers": ["name"], "decision": "approve"|"approve-all"|"reject"}',
      validator: (request) => this.validateApproval(request),
    });
  }

  private async call(call: ToolRouteCall): Promise<ToolOutcome> {
    const { block } = call;
    // A name of a connected server that the listing lacks: its tools may have changed since (a
    // list_changed that reached the worker after the call that caused it), so list once more.
    const listedWhenChecked = findMcpTool(this.state?.listing ?? [], block.name) !== undefined;
    if (!listedWhenChecked && mightBeListedLater(this.state?.listing ?? [], block.name)) await this.list();
    const listing = this.state?.listing ?? [];
    const tool = findMcpTool(listing, block.name);
    const server = tool && this.state?.servers.find((entry) => entry.name === tool.server);
    if (!tool || !server) return { isError: true, content: unknownMcpToolText(block.name, listing) };
    if (!listedWhenChecked) {
      // The permission check ran before the tool was listed (without its server's rules): check it again.
      const verdict = await this.host.toolPermissions.check(block);
      if (verdict.behavior === 'deny') return { isError: true, content: verdict.message };
    }
    const input = block.input !== null && typeof block.input === 'object' && !Array.isArray(block.input) ? (block.input as Record<string, unknown>) : {};
    // As Bash: a timeout, heartbeats, and retries — the activity answers "may have run" on a retried
    // attempt of a tool that is neither read-only nor idempotent, instead of calling it again.
    const result = await activities({ ...call.options.tool, summary: call.summary }).callMcpTool({
      scope: this.scope,
      cwd: this.host.config.cwd,
      server,
      toolName: tool.name,
      originalName: tool.originalName,
      arguments: input,
      ...(tool.annotations && { annotations: tool.annotations }),
    });
    // seed §2.7 layer 1: the result's share of the message's budget.
    const content = mcpResultText(result.content, toolResultBudget(MAX_MCP_RESULT_CHARS, call.siblings));
    if (mcpListingIsStale(this.state?.listing ?? [], tool.server, result.listChangedCount)) await this.list();
    return { content, isError: result.isError };
  }

  private async loadConfig(): Promise<LoadMcpConfigResult | undefined> {
    const { config } = this.host;
    try {
      // A few file reads: a local activity when the workspace is this worker's host (no server round trip), as permission facts are.
      const local = config.toolTaskQueue === undefined || config.toolTaskQueue === workflowInfo().taskQueue;
      const proxy = local
        ? localActivities({ ...MCP_CONFIG_LOCAL_OPTIONS, summary: 'Load MCP config' })
        : activities(mcpListingOptions(config, 'Load MCP config', false));
      const loaded = await proxy.loadMcpConfig({
        cwd: config.cwd,
        ...(config.settingSources && { settingSources: config.settingSources }),
        ...(config.mcpConfig && { mcpConfig: config.mcpConfig }),
        ...(config.strictMcpConfig && { strictMcpConfig: true }),
        ...(this.host.sessionContext?.workspaceTrust?.trusted && { trusted: true }),
        ...(config.pluginDirs && { pluginDirs: config.pluginDirs }),
      });
      for (const warning of loaded.warnings) this.warn(warning);
      return loaded;
    } catch (error) {
      if (isCancellation(error)) throw error;
      this.warn(`MCP servers not loaded (the conversation goes on without them): ${failureMessage(error)}`);
      return undefined;
    }
  }

  /** Lists every configured server (connections are reused); one listing at a time. */
  private async list(): Promise<void> {
    while (this.listing) await this.listing;
    this.listing = this.listOnce().finally(() => (this.listing = undefined));
    await this.listing;
  }

  private async listOnce(): Promise<void> {
    const state = this.state;
    if (!state) return;
    let servers: McpServerStatus[];
    try {
      ({ servers } = await activities(mcpListingOptions(this.host.config, 'List MCP servers', true)).listMcpServers({
        scope: this.scope,
        cwd: this.host.config.cwd,
        servers: state.servers,
      }));
    } catch (error) {
      // An abort of the query whose call asked for the listing: the call ends, as any cancelled tool.
      if (isCancellation(error)) throw error;
      this.warn(`Could not list the MCP servers (their tools stay as they were): ${failureMessage(error)}`);
      return;
    }
    const before = state.listing;
    this.state = { servers: state.servers, listing: servers };
    for (const warning of mcpListingWarnings(servers, before)) this.warn(warning);
    const changed = before.length > 0 ? mcpToolsChangedLine(before, servers) : undefined;
    if (changed) this.host.pushEvent({ type: 'system', uuid: uuid4(), level: 'info', content: changed });
    this.derive();
    this.host.refreshDetails();
  }

  /** The offered definitions and instructions from the listing (new values only when they changed). */
  private derive(): void {
    const listing = this.state?.listing ?? [];
    const definitions = offeredMcpTools(listing, this.host.config.tools);
    if (JSON.stringify(definitions) !== JSON.stringify(this.definitions)) this.definitions = definitions;
    this.instructions = mcpInstructionsSection(listing);
  }

  private warn(content: string): void {
    this.host.pushEvent({ type: 'system', uuid: uuid4(), level: 'warning', content });
  }
}
