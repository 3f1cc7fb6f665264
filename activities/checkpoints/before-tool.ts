/**
 * Issue 31: the checkpoint of the workspace before a tool call that may change it (runTool's
 * mutating calls, an MCP tool not marked read-only). A failure (no git, a store error, an
 * unreadable setting) never fails the tool: it runs without one, and the worker says why in its log.
 */
import { Context } from '@temporalio/activity';
import { checkpointsDisabled, createCheckpointStore } from './store';

export interface ToolCheckpoint {
  checkpointId: string;
  /** Nothing skipped, no warning: a restore puts back every file and the git state. */
  checkpointComplete: boolean;
  checkpointMs: number;
}

/** The checkpoint, or undefined when checkpoints are off (`DURABLE_AGENT_CHECKPOINTS=0`) or it failed. */
export async function checkpointBeforeTool(call: {
  stateDir: string;
  cwd: string;
  conversationId: string;
  toolUseId: string;
  tool: string;
}): Promise<ToolCheckpoint | undefined> {
  if (checkpointsDisabled()) return undefined;
  const { log } = Context.current();
  try {
    const taken = await createCheckpointStore({ stateDir: call.stateDir, cwd: call.cwd }).take({
      conversationId: call.conversationId,
      reason: 'before-tool',
      toolUseId: call.toolUseId,
    });
    const complete = taken.skipped.length === 0 && taken.warnings.length === 0;
    log.debug('checkpoint before tool', { toolUseId: call.toolUseId, checkpointId: taken.id, ms: taken.ms, files: taken.files, complete });
    return { checkpointId: taken.id, checkpointComplete: complete, checkpointMs: taken.ms };
  } catch (error) {
    log.warn('no checkpoint before the tool call (it runs without one)', {
      toolUseId: call.toolUseId,
      tool: call.tool,
      error: error instanceof Error ? error.message : String(error),
    });
    return undefined;
  }
}
