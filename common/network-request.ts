/**
 * A sandboxed command asks to reach a domain that `sandbox.network.allowedDomains` does not list
 * (issue 29), as Claude Code's "Network request outside of sandbox" prompt: the sandbox's proxy
 * (activities/sandbox-network.ts) holds the connection, the Bash activity sends this update to its
 * conversation, and the conversation's permission gate answers — at once from the session's
 * "don't ask again" answers, by asking the person like any permission request (approve/deny, chat's
 * y/n/a), or with a denial when nobody can answer (`-p`, dontAsk, bypassPermissions). Pure: both
 * sides import it.
 */
import type { PermissionMode } from './permission-rules';

/** The update a Bash activity sends to its own conversation. */
export const NETWORK_REQUEST_UPDATE = 'requestNetworkAccess';

/** The name a waiting network request carries among the permission requests (status, approve, chat). */
export const NETWORK_REQUEST_TOOL = 'SandboxNetworkAccess';

export interface NetworkRequest {
  /** The Bash call whose command asks. */
  toolUseId: string;
  /** The host as the proxy normalized it (lower case, no trailing dot; an address as dotted decimal or compressed IPv6). */
  host: string;
  port: number;
}

export interface NetworkRequestAnswer {
  behavior: 'allow' | 'deny';
  /** Who answered: the session's earlier "don't ask again", a person, a timeout, or nobody to ask. */
  decidedBy: 'session' | 'user' | 'timeout' | 'no-approver';
}

/** The permission request's id: one per call and host, so `approve <id> <request id>` names it. */
export function networkRequestId(request: Pick<NetworkRequest, 'toolUseId' | 'host'>): string {
  return `${request.toolUseId}:network:${request.host}`;
}

/** The session rule "Yes, and don't ask again for <host>" adds. */
export function networkAllowRule(host: string): string {
  return `${NETWORK_REQUEST_TOOL}(domain:${host})`;
}

/** Whether someone can be asked about a new domain: a person can answer and the mode asks at all. */
export function canAskForDomains(mode: PermissionMode, canApprove: boolean): boolean {
  return canApprove && mode !== 'dontAsk' && mode !== 'bypassPermissions';
}

/** The gate's answer before anyone is asked: allow (asked before, "don't ask again"), deny (nobody to ask), or ask. */
export function decideNetworkRequest(
  request: Pick<NetworkRequest, 'host'>,
  context: { mode: PermissionMode; canApprove: boolean; sessionAllow: readonly string[] },
): 'allow' | 'deny' | 'ask' {
  if (context.sessionAllow.includes(networkAllowRule(request.host))) return 'allow';
  return canAskForDomains(context.mode, context.canApprove) ? 'ask' : 'deny';
}

/** Validates an update's argument (a malformed one is refused, not asked about). */
export function networkRequestProblem(request: unknown): string | undefined {
  if (typeof request !== 'object' || request === null) return 'requestNetworkAccess takes {"toolUseId": string, "host": string, "port": number}';
  const { toolUseId, host, port } = request as Record<string, unknown>;
  if (typeof toolUseId !== 'string' || toolUseId === '') return 'requestNetworkAccess: toolUseId must be a non-empty string';
  if (typeof host !== 'string' || host === '' || /[\s/()]/.test(host))
    return `requestNetworkAccess: host must be a host name or address, got ${JSON.stringify(host)}`;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65_535)
    return `requestNetworkAccess: port must be 1–65535, got ${JSON.stringify(port)}`;
  return undefined;
}
