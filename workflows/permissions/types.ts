/**
 * What crosses the permission gate's boundary (gate.ts): a waiting request as `status`
 * shows it, the `decidePermission` update's argument and its recorded answer, the result's
 * denials, what the gate carries across continue-as-new, its verdict, and the fact gatherers it is
 * given.
 */
import type { ToolFacts } from '../../common/permissions';
import type { ToolUseBlock } from '../../common/messages';
import type { CallFacts, ToolAccess } from '../../common/permission-facts';

/** A tool call waiting for a person (`status` lists them). */
export interface PendingPermission {
  toolUseId: string;
  toolName: string;
  input: unknown;
  /** Workflow time the request started waiting (ms since epoch). */
  since: number;
  /** Why it asks (a rule, a path outside the workspace, the tool changes files). */
  reason: string;
}

/** The `decidePermission` update's argument. */
export interface PermissionDecisionRequest {
  toolUseId: string;
  behavior: 'allow' | 'deny';
  /** For a denial: told to the model ("use the staging database instead"). */
  message?: string;
  /** For an allow: add an allow rule for the rest of the session (`approve --always`). */
  remember?: boolean;
}

/** How a request was decided: the update's answer, the same for every duplicate. */
export interface RecordedPermissionDecision {
  toolUseId: string;
  toolName: string;
  behavior: 'allow' | 'deny';
  decidedBy: 'user' | 'timeout';
  message?: string;
  /** The allow rule added for the session (`remember`). */
  addedRule?: string;
  decidedAt: number;
}

/** One entry of the result's `permission_denials` (the Agent SDK's shape). */
export interface PermissionDenial {
  tool_name: string;
  tool_use_id: string;
  tool_input: unknown;
}

/** What the gate carries across continue-as-new. */
export interface CarriedPermissions {
  sessionAllow: string[];
  decisions: RecordedPermissionDecision[];
  /** Denials of the query in progress (a query suspended mid-way keeps them for its result). */
  denials: PermissionDenial[];
}

/** What the gate needs from the session while a request waits. */
export interface PermissionGateHost {
  /** Phase `awaiting_permission` while any request waits, back to `running_tools` after. */
  onWaitingChanged(waiting: boolean): void;
  /** A new request started waiting (a subagent tells its parent's feed how to approve it). */
  onRequest?(request: PendingPermission): void;
  /** Issue 33, PermissionRequest hooks: may answer an ask for the person (undefined: they did not). */
  permissionRequest?(block: ToolUseBlock): Promise<{ behavior: 'allow' } | { behavior: 'deny'; message?: string } | undefined>;
  /** Issue 33, PermissionDenied hooks: a call denied without a person; returns the denial the model gets. */
  permissionDenied?(block: ToolUseBlock, message: string): Promise<string>;
}

/**
 * The gate's verdict: run the tool (with what runTool enforces where it acts, when the decision
 * was made on gathered facts), or give the model this result instead.
 */
export type GateVerdict = { behavior: 'allow'; access?: ToolAccess } | { behavior: 'deny'; message: string };

/** Gathers a call's facts on the workspace's host (workflows/deps/facts-call.ts). */
export type GatherFacts = (block: ToolUseBlock, homeDir: string | undefined) => Promise<CallFacts | undefined>;
/** Gathers several calls' facts on the workspace's host in one activity (issue 29: a reply's Bash calls). */
export type GatherReplyFacts = (blocks: readonly ToolUseBlock[], homeDir: string | undefined) => Promise<CallFacts[]>;
/** Facts of a tool the conversation offers beyond the built-in ones (issue 22: an MCP tool of the listing), or undefined. */
export type ExtensionFacts = (block: ToolUseBlock) => ToolFacts | undefined;
