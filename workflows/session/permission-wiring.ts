/**
 * The session's permission owners, wired (seed §2.10 canUseTool): the gate (rules, modes, durable
 * approvals; permissions/gate.ts) reading the config and the session context as they are now and
 * gathering facts where the tool acts, and the gate as the tools use it (tool-permissions.ts),
 * with what a waiting request does to the session. Made by the session (conversation-session.ts).
 */
import type { SessionContext } from '../../common/activity-types';
import type { ConversationConfig } from '../../common/config';
import type { ConversationEvent, Phase } from '../definitions';
import { gatherCallFacts, gatherCallsFacts } from '../deps/facts-call';
import { PermissionGate } from '../permissions/gate';
import type { CarriedPermissions } from '../permissions/types';
import type { SessionParts } from './parts';
import { SessionPermissions } from './tool-permissions';

export interface PermissionWiring {
  conversationId: string;
  config(): ConversationConfig;
  sessionContext(): SessionContext | undefined;
  /** Made after the gate: read when a call is checked. */
  parts(): SessionParts;
  setPhase(phase: Phase): void;
  pushEvent(message: ConversationEvent['message']): void;
  reportToParent(line: string): void;
}

export function sessionPermissions(
  wiring: PermissionWiring,
  carried: CarriedPermissions | undefined,
): { permissions: PermissionGate; toolPermissions: SessionPermissions } {
  const permissions = new PermissionGate(
    wiring.config,
    carried,
    () => wiring.sessionContext()?.permissionSettings,
    (block, homeDir) => gatherCallFacts(wiring.config(), block, homeDir),
    (block) => wiring.parts().mcp.permissionFacts(block),
    (blocks, homeDir) => gatherCallsFacts(wiring.config(), blocks, homeDir),
  );
  const toolPermissions = new SessionPermissions(permissions, {
    conversationId: wiring.conversationId,
    checked: wiring.config().permissions !== undefined,
    setPhase: wiring.setPhase,
    pushEvent: wiring.pushEvent,
    reportToParent: wiring.reportToParent,
    onPermissionPrompt: (toolName) => wiring.parts().hooks.notifyPermissionPrompt(toolName),
    permissionHooks: () => wiring.parts().hooks.permissionHooks(),
  });
  return { permissions, toolPermissions };
}
