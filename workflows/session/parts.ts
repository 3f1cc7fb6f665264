/**
 * The session's parts in one ordered list (issue 30, style §23). The order is the tool routes'
 * precedence (background agents' TaskOutput/TaskStop on agent ids before the background
 * commands'), the order background work is stopped in at the end, and the order the parts are
 * made in (what a new run restarts — timers, supervisors, watchers — it restarts in this order).
 * The session loops over `list` for carried state, `status`, the UI's details and handlers; none
 * of the parts holds the session.
 */
import { BackgroundAgents } from '../background/agents';
import { BackgroundCommands } from '../background/commands';
import { ScheduledWork } from '../background/scheduled-work';
import type { CarriedState, ConversationStatus, SubagentOrigin } from '../definitions';
import type { ToolRoute } from '../deps/query-host';
import { SessionHooks } from '../extensions/hooks';
import { McpServers } from '../extensions/mcp';
import { SkillSession } from './skills';
import { WorktreeSession } from './worktree-session';
import type { BackgroundWorkKind, PartContext, PartDetails, PartInternalHandlers, SessionPart } from './session-part';

export class SessionParts {
  readonly backgroundAgents: BackgroundAgents;
  readonly scheduled: ScheduledWork;
  readonly mcp: McpServers;
  readonly hooks: SessionHooks;
  readonly backgroundCommands: BackgroundCommands;
  readonly worktree: WorktreeSession;
  readonly skills: SkillSession;
  /** Every part, in the order above. */
  readonly list: SessionPart[] = [];
  /** Tools with their own route (workflows/deps/tool-routes.ts), in precedence order. */
  readonly routes: readonly ToolRoute[];
  /** Kinds of work that outlive a turn (issue 21), in the order `end` stops them. */
  readonly backgroundWork: readonly BackgroundWorkKind[];

  constructor(context: PartContext, carried: CarriedState | undefined, subagent: SubagentOrigin | undefined) {
    // Background agents are made first (their routes come first) and reach the hooks and MCP servers made after them when they launch a child.
    const hooks = () => this.hooks;
    const mcp = () => this.mcp;
    this.backgroundAgents = this.add(
      new BackgroundAgents(
        {
          conversationId: context.conversationId,
          get config() {
            return context.config;
          },
          get sessionContext() {
            return context.sessionContext;
          },
          get hooks() {
            return hooks();
          },
          get mcp() {
            return mcp();
          },
          recordChildUsage: (usage, costUsd, modelUsage) => context.recordChildUsage(usage, costUsd, modelUsage),
          sessionAllowRules: () => context.sessionAllowRules(),
          notify: (key, prompt, origin) => context.notify(key, prompt, origin),
        },
        carried?.backgroundAgents,
      ),
    );
    this.scheduled = this.add(new ScheduledWork(context, carried));
    // Issue 22: MCP servers' tools (workflows/extensions/mcp.ts), and the hooks besides Stop.
    this.mcp = this.add(new McpServers(context, carried?.mcp, subagent?.mcp));
    this.hooks = this.add(new SessionHooks(context, carried?.hooks, subagent?.hookSettings));
    // Issue 33: mcp_tool hooks call the conversation's MCP servers.
    this.hooks.mcpServers = () => this.mcp.hookServers();
    // Issue 33: TaskCreated / TaskCompleted hooks before the task list changes.
    this.scheduled.tasks.hooks = this.hooks;
    this.backgroundCommands = this.add(new BackgroundCommands(context, carried?.backgroundTasks));
    // Issue 33: EnterWorktree / ExitWorktree and --worktree.
    this.worktree = this.add(new WorktreeSession(context, carried?.worktreeSession, this.hooks));
    // Issue 33 §3: the Skill tool, a person's /<skill>, and what an active skill allows.
    this.skills = this.add(new SkillSession(context, (rules) => context.toolPermissions.setQueryAllowRules(rules)));
    this.routes = this.list.flatMap((part) => part.routes ?? []);
    this.backgroundWork = this.list.flatMap((part) => part.backgroundWork ?? []);
  }

  /** Something of the background work is still pending: the idle timeout waits. */
  get hasBackgroundWork(): boolean {
    return this.backgroundWork.some((work) => work.pending());
  }

  /** `end`: each kind stops its work (background commands, agents, session-only jobs); `abort` never does. A kind that fails is reported and the rest still stop. */
  async endBackgroundWork(onFailure: (name: string, error: unknown) => void): Promise<void> {
    for (const work of this.backgroundWork) {
      try {
        await work.onEnd();
      } catch (error) {
        onFailure(work.name, error);
      }
    }
  }

  private add<T extends SessionPart>(part: T): T {
    this.list.push(part);
    return part;
  }

  internalHandlers(): PartInternalHandlers {
    return Object.assign({}, ...this.list.map((part) => part.internalHandlers ?? {})) as PartInternalHandlers;
  }

  setHandlers(): void {
    for (const part of this.list) part.setHandlers?.();
  }

  carried(): Partial<CarriedState> {
    return Object.assign({}, ...this.list.map((part) => part.carried())) as Partial<CarriedState>;
  }

  status(): Partial<ConversationStatus> {
    return Object.assign({}, ...this.list.map((part) => part.status?.() ?? {})) as Partial<ConversationStatus>;
  }

  details(): PartDetails {
    return Object.assign({}, ...this.list.map((part) => part.details?.() ?? {})) as PartDetails;
  }
}
