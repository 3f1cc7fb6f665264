/**
 * The session's side of canUseTool (seed §2.10): the permission gate (workflows/permissions/gate.ts)
 * with what a waiting request does to the session — the phase while it waits, a line in the feed
 * saying how to answer, and the same line to a subagent's parent.
 */
import type { RuleWithSource } from '../../common/permission-rules';
import { uuid4 } from '@temporalio/workflow';
import type { ToolUseBlock } from '../../common/messages';
import type { NetworkRequest, NetworkRequestAnswer } from '../../common/network-request';
import type { CallFacts } from '../../common/permission-facts';
import type { PermissionContext } from '../../common/permissions';
import type { ConversationEvent, Phase } from '../definitions';
import type { ToolPermissions } from '../deps/query-host';
import type { HookPermission } from '../extensions/hooks-decisions';
import type { PermissionGate } from '../permissions/gate';
import type { GateVerdict, PendingPermission, PermissionGateHost } from '../permissions/types';

export class SessionPermissions implements ToolPermissions {
  constructor(
    private readonly gate: PermissionGate,
    private readonly session: {
      readonly conversationId: string;
      /** The conversation has a permissions config (else tools run unchecked). */
      readonly checked: boolean;
      setPhase(phase: Phase): void;
      pushEvent(message: ConversationEvent['message']): void;
      /** A line to a subagent's parent (nothing for a top-level conversation). */
      reportToParent(line: string): void;
      /** Notification hooks (permission_prompt): a request started waiting. */
      onPermissionPrompt?(toolName: string): void;
      /** Issue 33: PermissionRequest / PermissionDenied hooks (the gate's host, see PermissionGateHost). */
      permissionHooks?(): Pick<PermissionGateHost, 'permissionRequest' | 'permissionDenied'>;
    },
  ) {}

  /** Before every tool run (may wait for a person), with the phase and the feed kept up to date while a request waits. */
  check(block: ToolUseBlock, hook?: HookPermission): Promise<GateVerdict> {
    return this.gate.check(
      block,
      {
        onWaitingChanged: (waiting) => this.session.setPhase(waiting ? 'awaiting_permission' : 'running_tools'),
        onRequest: (request) => this.onRequest(request),
        ...this.session.permissionHooks?.(),
      },
      hook,
    );
  }

  /** A sandboxed command asks to reach a domain (the `requestNetworkAccess` update): answered like a tool call's request. */
  networkRequest(request: NetworkRequest): Promise<NetworkRequestAnswer> {
    return this.gate.networkRequest(request, {
      onWaitingChanged: (waiting) => this.session.setPhase(waiting ? 'awaiting_permission' : 'running_tools'),
      onRequest: (pending) => this.onRequest(pending),
    });
  }

  /** Facts a model call gathered where the tool acts (the gate need not gather them again). */
  rememberFacts(block: { id: string; input: unknown }, facts: CallFacts): void {
    this.gate.rememberFacts(block, facts);
  }

  /** Issue 29: the facts of a reply's Bash calls, gathered together before the reply is partitioned (the gate's check reuses them). */
  factsForReply(blocks: readonly ToolUseBlock[]): Promise<Map<string, CallFacts>> {
    return this.gate.factsForReply(blocks);
  }

  /** A large result the tool saved (outside the workspace): the model may read it back. */
  allowReadOf(file: string): void {
    this.gate.allowReadOf(file);
  }

  setQueryAllowRules(rules: readonly RuleWithSource[]): void {
    this.gate.setQueryAllowRules(rules);
  }

  /** What the gate decides with (undefined: tools run unchecked, as `allowsWithoutAsking`). */
  context(): PermissionContext | undefined {
    return this.session.checked ? this.gate.context() : undefined;
  }

  /** Tells people (and a subagent's parent) how to answer a waiting request. */
  private onRequest(request: PendingPermission): void {
    const { conversationId } = this.session;
    const line =
      `Waiting for permission: ${request.toolName} ${(JSON.stringify(request.input) ?? '').slice(0, 200)} (${request.reason}). ` +
      `Approve: durable-agent approve ${conversationId} ${request.toolUseId} [--always]; deny: durable-agent deny ${conversationId} ${request.toolUseId} [message]`;
    this.session.pushEvent({ type: 'system', uuid: uuid4(), level: 'warning', content: line });
    this.session.reportToParent(line);
    this.session.onPermissionPrompt?.(request.toolName);
  }
}
