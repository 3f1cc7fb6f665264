/**
 * The session as a composition root (issue 30, style §23): its parts — background agents, the
 * scheduled work, the MCP servers, the hooks, background commands — are listed once, in order
 * (session/parts.ts). Each owns its slice of the carried state, its tool routes, its background
 * work, its handlers and its lines in `status` and the UI's current details; the session loops
 * over the list. A part never holds the session: it gets a `PartContext`, the few narrow services
 * every part may use.
 */
import type { SessionContext } from '../../common/activity-types';
import type { ConversationConfig } from '../../common/config';
import type { Usage } from '../../common/messages';
import type { ModelUsage } from '../../common/result';
import type { CarriedState, ConversationEvent, ConversationStatus, InputOrigin, SubagentOrigin } from '../definitions';
import type { ToolPermissions, ToolRoute } from '../deps/query-host';
import type { InternalMessageHandlers } from '../internal-messages';
import type { CurrentDetailsInput } from '../ui/details';

/** One kind of work that outlives a turn (issue 21), as the session sees it. */
export interface BackgroundWorkKind {
  /** For messages: "background commands", "wakeups"… */
  readonly name: string;
  /** Something of this kind is running or due: the conversation is not idle-timed out. */
  pending(): boolean;
  /** The conversation ends (`end`, idle timeout, one-shot): stop or delete what belongs to it. */
  onEnd(): Promise<void>;
}

/** What a part may use of the conversation: values and callbacks the session builds, never the session. */
export interface PartContext {
  readonly conversationId: string;
  /** The conversation's settings as they are now (`/model` replaces the model). */
  readonly config: ConversationConfig;
  /** Set when this conversation is a subagent. */
  readonly subagent?: SubagentOrigin;
  /** The session context as it is now (loaded after the parts are made). */
  readonly sessionContext: SessionContext | undefined;
  /** seed §2.10 canUseTool, as the tools use it. */
  readonly toolPermissions: ToolPermissions;
  /** A prompt queued once per key (session.notify): a task's end, a wakeup, a cron fire. */
  notify(key: string, prompt: string, origin: InputOrigin): boolean;
  /** A line in the events feed. */
  pushEvent(message: ConversationEvent['message']): void;
  /** The UI's current details changed. */
  refreshDetails(): void;
  /** The permission mode hooks are told (none when tools run unchecked). */
  permissionMode(): string | undefined;
  /** A subagent's usage and cost count in this conversation's totals. */
  recordChildUsage(usage: Usage, costUsd: number, modelUsage?: Record<string, ModelUsage>): void;
  /** Allow rules added during the session (`approve --always`): a subagent inherits them. */
  sessionAllowRules(): string[];
  /** EnterWorktree / ExitWorktree (issue 33): the conversation works in `cwd` from now on. */
  moveWorkingDirectory(cwd: string): void;
}

/** The details lines a part adds to the UI's current details. */
export type PartDetails = Pick<CurrentDetailsInput, 'tasks' | 'scheduled' | 'background' | 'mcpServers'>;

/** The internal signals a part answers (internal-messages.ts). */
export type PartInternalHandlers = Pick<InternalMessageHandlers, 'backgroundAgentFinished' | 'cronFired'>;

/** One part of the session, as the session composes it. */
export interface SessionPart {
  readonly name: string;
  /** Tools with their own route, in precedence order (the parts' order decides between parts). */
  readonly routes?: readonly ToolRoute[];
  /** Kinds of work that outlive a turn (no idle timeout while one is pending; stopped at the end). */
  readonly backgroundWork?: readonly BackgroundWorkKind[];
  /** Internal signals this part answers. */
  readonly internalHandlers?: PartInternalHandlers;
  /** Named handlers (updates) this part answers: registered with the workflow's other handlers. */
  setHandlers?(): void;
  /** Its slice of what continue-as-new carries (fields absent when unused). */
  carried(): Partial<CarriedState>;
  /** Its fields of the `status` query (absent when empty). */
  status?(): Partial<ConversationStatus>;
  /** Its lines in the UI's current details. */
  details?(): PartDetails;
}
