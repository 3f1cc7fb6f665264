/**
 * Durable approvals (seed §2.10 canUseTool): before every tool run the session asks the gate;
 * the rule engine (common/permissions.ts) allows, denies, or asks. An ask waits in the workflow
 * for the `decidePermission` update — phase `awaiting_permission` — so a decision survives worker
 * crashes (the update is in history) and continue-as-new (decisions and session rules are
 * carried). Each request is decided exactly once: a duplicate decision returns the recorded one.
 * A wait longer than `approvalTimeoutMs` ends in a denial; an abort cancels the wait with the
 * tool's scope. Every denial is kept for the result's `permission_denials`.
 */
import { ApplicationFailure, condition } from '@temporalio/workflow';
import type { PermissionSettings } from '../../common/activity-types';
import type { ConversationConfig } from '../../common/config';
import {
  type PermissionContext,
  type PermissionMode,
  type RuleWithSource,
  decidePermission,
  noApproverMessage,
  rejectionMessage,
  ruleForAlways,
  timeoutMessage,
} from '../../common/permissions';
import type { ToolUseBlock } from '../../common/messages';
import type { CallFacts, ToolAccess } from '../../common/permission-facts';
import { toolFacts } from '../../common/tool-facts';
import { toolAccessFor } from '../../common/tool-access';
import {
  NETWORK_REQUEST_TOOL,
  type NetworkRequest,
  type NetworkRequestAnswer,
  canAskForDomains,
  decideNetworkRequest,
  networkAllowRule,
  networkRequestId,
} from '../../common/network-request';
import { toolNamesWhere } from '../../common/tool-specs';
import { bashAlwaysRule } from '../../common/bash-permissions';
import { toolCallSummary } from '../../common/tool-ui';
import { permissionWaitSummary } from '../ui/details';
import { cutText } from '../../common/cut-text';
import { type HookPermission, decideUnderHook } from '../extensions/hooks-decisions';
// Issue 29: a reply's Bash calls are judged on their facts before it is partitioned (factsForReply).
import { concurrencyNeedsFacts, isToolUseStartableEarly } from '../../common/tool-specs';
import type {
  CarriedPermissions,
  ExtensionFacts,
  GateVerdict,
  GatherFacts,
  GatherReplyFacts,
  PendingPermission,
  PermissionDecisionRequest,
  PermissionDenial,
  PermissionGateHost,
  RecordedPermissionDecision,
} from './types';

/** Tools whose decision depends on facts only the workspace's host has: the file tools and the shell. */
const TOOLS_WITH_FACTS = toolNamesWhere((spec) => spec.fileAccess !== undefined || spec.shellCommandField !== undefined);

export function needsFacts(toolName: string): boolean {
  return TOOLS_WITH_FACTS.has(toolName);
}

/** Decisions kept (and carried across continue-as-new) for duplicate decisions. */
const DECISIONS_KEPT = 200;
/** String fields of a waiting call's input are cut to this in `status` (a Write's whole file would not fit a query answer). */
const STATUS_INPUT_CHARS = 1_000;

export class PermissionGate {
  private readonly pending = new Map<string, PendingPermission>();
  /** The full inputs of waiting calls (the status shows them cut). */
  private readonly pendingInputs = new Map<string, unknown>();
  /** The facts waiting calls were asked about (what "always" makes a rule of). */
  private readonly pendingFacts = new Map<string, CallFacts>();
  private readonly decisions: Map<string, RecordedPermissionDecision>;
  readonly sessionAllow: string[];
  /** The running query's grants (an active skill's, the command's `allowed-tools`); set per query, not carried. */
  private queryAllow: RuleWithSource[] = [];
  private denials: PermissionDenial[];
  /** Facts a model call gathered already (a streamed report, a prefetch), by tool_use id, with the input they were gathered for. */
  private readonly knownFacts = new Map<string, { input: string; facts: CallFacts }>();

  constructor(
    /** The conversation's config as it is now (its working directory moves with EnterWorktree / ExitWorktree). */
    private readonly currentConfig: () => ConversationConfig,
    carried: CarriedPermissions | undefined,
    /** The settings files' rules (from the session context, loaded after construction). */
    private readonly settings: () => PermissionSettings | undefined,
    private readonly gather?: GatherFacts,
    private readonly extensionFacts?: ExtensionFacts,
    private readonly gatherReply?: GatherReplyFacts,
  ) {
    this.sessionAllow = [...(carried?.sessionAllow ?? [])];
    this.decisions = new Map((carried?.decisions ?? []).map((decision) => [decision.toolUseId, decision]));
    this.denials = [...(carried?.denials ?? [])];
  }

  private get config(): ConversationConfig {
    return this.currentConfig();
  }

  /** The mode in effect: the conversation's, else the settings' `defaultMode`, else `default`. */
  get mode(): PermissionMode {
    return this.config.permissions?.mode ?? this.settings()?.defaultMode ?? 'default';
  }

  /** Everything the rule engine decides with. */
  context(): PermissionContext {
    const permissions = this.config.permissions;
    const settings = this.settings();
    const cli = (rules: string[] | undefined): RuleWithSource[] => (rules ?? []).map((rule) => ({ rule, source: 'cliArg' }));
    return {
      mode: this.mode,
      rules: {
        deny: [...cli(permissions?.deny), ...(settings?.deny ?? [])],
        ask: [...cli(permissions?.ask), ...(settings?.ask ?? [])],
        allow: [
          ...cli(permissions?.allow),
          ...this.sessionAllow.map((rule): RuleWithSource => ({ rule, source: 'session' })),
          ...this.queryAllow,
          ...(settings?.allow ?? []),
        ],
      },
      workingDirectories: [this.config.cwd, ...(permissions?.additionalDirectories ?? []), ...(settings?.additionalDirectories ?? [])],
      homeDir: settings?.homeDir,
    };
  }

  /** Issue 33 §3: the running query's allow rules (workflows/session/skills.ts); deny and ask rules still come first. */
  setQueryAllowRules(rules: readonly RuleWithSource[]): void {
    this.queryAllow = [...rules];
  }

  /**
   * A tool result this conversation saved outside the workspace (a large output's file) may be
   * read back without asking, as Claude Code lets the model read its own tool-results files.
   * Session state only: carried with the session rules, no workflow command.
   */
  allowReadOf(file: string): void {
    if (!file.startsWith('/') || /[()*?[\]]/.test(file)) return;
    const rule = `Read(/${file})`;
    if (!this.sessionAllow.includes(rule)) this.sessionAllow.push(rule);
  }

  /** Requests waiting for a decision, oldest first. */
  pendingRequests(): PendingPermission[] {
    return [...this.pending.values()];
  }

  /** The update's validator: rejects malformed decisions and ids that were never asked about. */
  validate(request: PermissionDecisionRequest): void {
    const invalid = (message: string) => ApplicationFailure.nonRetryable(message, 'InvalidPermissionDecision');
    if (typeof request !== 'object' || request === null)
      throw invalid('decidePermission takes {"toolUseId": string, "behavior": "allow"|"deny", "message"?: string, "remember"?: boolean}');
    if (typeof request.toolUseId !== 'string' || request.toolUseId === '') throw invalid('decidePermission: toolUseId must be a non-empty string');
    if (request.behavior !== 'allow' && request.behavior !== 'deny')
      throw invalid(`decidePermission: behavior must be "allow" or "deny", got ${JSON.stringify(request.behavior)}`);
    if (request.message !== undefined && typeof request.message !== 'string') throw invalid('decidePermission: message must be a string');
    if (request.remember !== undefined && typeof request.remember !== 'boolean') throw invalid('decidePermission: remember must be a boolean');
    if (this.pending.has(request.toolUseId) || this.decisions.has(request.toolUseId)) return;
    const waiting = this.pendingRequests().map((pending) => `${pending.toolUseId} (${pending.toolName})`);
    throw ApplicationFailure.nonRetryable(
      `No permission request for tool_use_id "${request.toolUseId}" in this conversation. ${waiting.length > 0 ? `Waiting: ${waiting.join(', ')}.` : 'Nothing is waiting for a decision.'}`,
      'UnknownPermissionRequest',
    );
  }

  /** The update's handler: decides a waiting request, or returns the decision already recorded. */
  decide(request: PermissionDecisionRequest): RecordedPermissionDecision {
    const recorded = this.decisions.get(request.toolUseId);
    if (recorded) return recorded;
    const pending = this.pending.get(request.toolUseId)!;
    const decision: RecordedPermissionDecision = {
      toolUseId: request.toolUseId,
      toolName: pending.toolName,
      behavior: request.behavior,
      decidedBy: 'user',
      decidedAt: Date.now(),
      ...(request.message?.trim() ? { message: request.message.trim() } : {}),
    };
    if (request.behavior === 'allow' && request.remember) {
      const rule = this.alwaysRule(pending.toolName, request.toolUseId);
      if (rule) {
        decision.addedRule = rule;
        if (!this.sessionAllow.includes(rule)) this.sessionAllow.push(rule);
      }
    }
    this.record(decision);
    return decision;
  }

  /**
   * The allow rule "always" adds (issue 17 §7). For a parsed Bash command: its program and
   * subcommand with `:*`, or the exact command — none when no rule that narrow exists (several
   * commands, a substitution), so approving `rm -f *.o` always never lets `rm -f -r / x.o` through.
   */
  private alwaysRule(toolName: string, toolUseId: string): string | undefined {
    if (toolName === NETWORK_REQUEST_TOOL) {
      const host = (this.pendingInputs.get(toolUseId) as { host?: unknown } | undefined)?.host;
      return typeof host === 'string' ? networkAllowRule(host) : undefined;
    }
    const bash = this.pendingFacts.get(toolUseId)?.bash;
    if (toolName === 'Bash' && bash) {
      const content = bashAlwaysRule(bash);
      return content === undefined ? undefined : `Bash(${content})`;
    }
    return ruleForAlways(toolName, this.pendingInputs.get(toolUseId), this.config.cwd);
  }

  /**
   * seed §2.10 canUseTool: allow, or the tool_result the model gets instead. Waits for a person
   * when the rules ask and someone can answer. Throws a cancellation when the tool's scope is
   * cancelled while it waits (abort).
   */
  async check(block: ToolUseBlock, host: PermissionGateHost, hook?: HookPermission): Promise<GateVerdict> {
    if (!this.config.permissions) return { behavior: 'allow' };
    const facts = this.extensionFacts?.(block) ?? toolFacts(block);
    const context = this.context();
    if (facts.validInput && needsFacts(block.name) && this.gather) {
      facts.gathered = this.factsKnown(block) ?? (await this.gather(block, context.homeDir));
    }
    const decision = decideUnderHook({ toolName: block.name, input: block.input }, facts, context, hook);
    const allow = (): GateVerdict => (facts.gathered ? { behavior: 'allow', access: this.accessFor(block, facts.gathered) } : { behavior: 'allow' });
    if (decision.behavior === 'allow') return allow();
    if (decision.behavior === 'deny') return this.deniedWithoutPerson(block, decision.message, host);
    // Issue 33: PermissionRequest hooks may answer the ask before a person is asked (a call decided already is not asked again).
    if (host.permissionRequest && !this.decisions.has(block.id)) {
      const answer = await host.permissionRequest(block);
      if (answer?.behavior === 'allow') return allow();
      if (answer?.behavior === 'deny') return this.deny(block, answer.message ?? `Permission to use ${block.name} was denied by a PermissionRequest hook.`);
    }
    if (!this.config.permissions.canApprove) return this.deniedWithoutPerson(block, noApproverMessage(block.name), host);
    if (facts.gathered) this.pendingFacts.set(block.id, facts.gathered);
    const verdict = await this.waitForDecision(block, decision.reason, host).finally(() => this.pendingFacts.delete(block.id));
    return verdict.behavior === 'allow' ? allow() : verdict;
  }

  /** What runTool enforces where the call acts; a Bash call's sandbox may ask for new domains when someone can answer. */
  private accessFor(block: ToolUseBlock, facts: CallFacts): ToolAccess {
    const access = toolAccessFor(this.context(), facts);
    return block.name === 'Bash' && canAskForDomains(this.mode, this.config.permissions?.canApprove ?? false) ? { ...access, askForDomains: true } : access;
  }

  /**
   * A sandboxed command asks to reach a domain its allow-list does not name (the `requestNetworkAccess`
   * update, sent by the Bash activity while the command runs): allowed at once after "don't ask
   * again", denied when nobody can answer, else asked like a tool call (approve/deny, chat's y/n/a).
   */
  async networkRequest(request: NetworkRequest, host: PermissionGateHost): Promise<NetworkRequestAnswer> {
    const decision = decideNetworkRequest(request, {
      mode: this.mode,
      canApprove: this.config.permissions?.canApprove ?? false,
      sessionAllow: this.sessionAllow,
    });
    if (decision !== 'ask') return { behavior: decision, decidedBy: decision === 'allow' ? 'session' : 'no-approver' };
    const block: ToolUseBlock = {
      type: 'tool_use',
      id: networkRequestId(request),
      name: NETWORK_REQUEST_TOOL,
      input: { host: request.host, port: request.port },
    };
    const verdict = await this.waitForDecision(
      block,
      `Network request outside of sandbox: ${request.host}:${request.port} is not in sandbox.network.allowedDomains`,
      host,
    );
    const decidedBy = this.decisions.get(block.id)?.decidedBy === 'timeout' ? 'timeout' : 'user';
    return { behavior: verdict.behavior, decidedBy };
  }

  /**
   * Facts a model call gathered for this call on the workspace's host (recorded in its result or
   * its streamed report): the gate decides on them instead of asking the activity again.
   */
  rememberFacts(block: { id: string; input: unknown }, facts: CallFacts): void {
    if (facts.toolUseId !== block.id) return;
    this.knownFacts.set(block.id, { input: JSON.stringify(block.input) ?? '', facts });
    while (this.knownFacts.size > DECISIONS_KEPT) this.knownFacts.delete(this.knownFacts.keys().next().value as string);
  }

  /**
   * Issue 29 (one Bash analysis): the facts of a reply's calls whose concurrency depends on them
   * (Bash: its parsed command), by tool_use id, before the reply is partitioned — those the gate
   * knows (a streamed report, a prefetch), the rest gathered in one activity. The check reuses
   * the facts of a call no unsafe call precedes (nothing run before it could change what they
   * saw); a later call is checked on facts gathered when its turn comes.
   */
  async factsForReply(blocks: readonly ToolUseBlock[]): Promise<Map<string, CallFacts>> {
    const facts = new Map<string, CallFacts>();
    const missing: ToolUseBlock[] = [];
    for (const block of blocks) {
      if (!concurrencyNeedsFacts(block.name)) continue;
      const known = this.factsKnown(block);
      if (known) facts.set(block.id, known);
      else missing.push(block);
    }
    if (missing.length === 0 || !this.gatherReply) return facts;
    for (const fact of await this.gatherReply(missing, this.context().homeDir)) facts.set(fact.toolUseId, fact);
    for (const block of blocks) {
      const fact = facts.get(block.id);
      if (fact && missing.includes(block)) this.rememberFacts(block, fact);
      if (!isToolUseStartableEarly(block, fact)) break;
    }
    return facts;
  }

  private factsKnown(block: ToolUseBlock): CallFacts | undefined {
    const known = this.knownFacts.get(block.id);
    return known && known.input === (JSON.stringify(block.input) ?? '') ? known.facts : undefined;
  }

  /**
   * Whether the call would run without a person or a denial. Only such calls start while the
   * model still streams: a streamed call may belong to an attempt that is then discarded, and
   * neither a request nor a denial may come from a call the final answer does not contain.
   */
  allowsWithoutAsking(block: ToolUseBlock): boolean {
    if (!this.config.permissions) return true;
    const facts = this.extensionFacts?.(block) ?? toolFacts(block);
    if (facts.validInput && needsFacts(block.name) && this.gather) {
      // Without the facts of where it acts, a call waits for the final answer (and the gate's full check).
      facts.gathered = this.factsKnown(block);
      if (!facts.gathered) return false;
    }
    return decidePermission({ toolName: block.name, input: block.input }, facts, this.context()).behavior === 'allow';
  }

  private async waitForDecision(block: ToolUseBlock, reason: string, host: PermissionGateHost): Promise<GateVerdict> {
    // A replayed or retried call that was decided already (a duplicate id) is not asked again.
    let decision = this.decisions.get(block.id);
    if (!decision) {
      const request: PendingPermission = { toolUseId: block.id, toolName: block.name, input: trimInput(block.input), since: Date.now(), reason };
      this.pending.set(block.id, request);
      this.pendingInputs.set(block.id, block.input);
      host.onWaitingChanged(true);
      host.onRequest?.(request);
      const timeoutMs = this.config.permissions!.approvalTimeoutMs;
      try {
        const decided = await condition(() => this.decisions.has(block.id), timeoutMs, {
          summary: permissionWaitSummary(toolCallSummary(block.name, block.input), timeoutMs),
        });
        if (!decided) {
          this.record({
            toolUseId: block.id,
            toolName: block.name,
            behavior: 'deny',
            decidedBy: 'timeout',
            decidedAt: Date.now(),
            message: timeoutMessage(block.name, timeoutMs),
          });
        }
      } finally {
        this.pending.delete(block.id);
        this.pendingInputs.delete(block.id);
        host.onWaitingChanged(this.pending.size > 0);
      }
      decision = this.decisions.get(block.id)!;
    }
    if (decision.behavior === 'allow') return { behavior: 'allow' };
    return this.deny(block, decision.decidedBy === 'timeout' ? decision.message! : rejectionMessage(decision.message));
  }

  /** A denial no person made (a deny rule, nobody to ask): PermissionDenied hooks hear of it (issue 33). */
  private async deniedWithoutPerson(block: ToolUseBlock, message: string, host: PermissionGateHost): Promise<GateVerdict> {
    return this.deny(block, host.permissionDenied ? await host.permissionDenied(block, message) : message);
  }

  private deny(block: ToolUseBlock, message: string): GateVerdict {
    this.denials.push({ tool_name: block.name, tool_use_id: block.id, tool_input: block.input });
    return { behavior: 'deny', message };
  }

  private record(decision: RecordedPermissionDecision): void {
    this.decisions.set(decision.toolUseId, decision);
    while (this.decisions.size > DECISIONS_KEPT) this.decisions.delete(this.decisions.keys().next().value as string);
  }

  /** The denials of the query that just ended (and starts the next query's list). */
  takeDenials(): PermissionDenial[] {
    const denials = this.denials;
    this.denials = [];
    return denials;
  }

  toCarried(): CarriedPermissions {
    return { sessionAllow: [...this.sessionAllow], decisions: [...this.decisions.values()], denials: [...this.denials] };
  }
}

function trimInput(input: unknown): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  return Object.fromEntries(
    Object.entries(input).map(([key, value]) =>
      typeof value === 'string' && value.length > STATUS_INPUT_CHARS ? [key, cutText(value, STATUS_INPUT_CHARS)] : [key, value],
    ),
  );
}
