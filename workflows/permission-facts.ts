/**
 * Facts for a permission decision, gathered where the tool acts (issue 17, style §20): the
 * workflow cannot parse Bash with a real grammar nor resolve a symbolic link, so the
 * `gatherPermissionFacts` activity does, on the workspace's host, and its recorded result is what
 * the gate decides on (replay reads it back). A local activity when tools run on the workflow's
 * own queue (no server round trip); a regular one on the workspace's queue otherwise.
 */
import { workflowInfo } from '@temporalio/workflow';
import type { ConversationConfig } from '../common/config';
import type { ToolUseBlock } from '../common/messages';
import type { CallFacts } from '../common/permission-facts';
import { toolCallSummary } from '../common/tool-ui';
import { LOCAL_TOOL_OPTIONS, activities, localActivities } from './deps/activity-options';

/** The call's facts, from the activity on the workspace's host. */
export async function gatherCallFacts(config: ConversationConfig, block: ToolUseBlock, homeDir: string | undefined): Promise<CallFacts | undefined> {
  const local = config.toolTaskQueue === undefined || config.toolTaskQueue === workflowInfo().taskQueue;
  const summary = `Check permission: ${toolCallSummary(block.name, block.input)}`;
  const proxy = local
    ? localActivities({ ...LOCAL_TOOL_OPTIONS, summary })
    : activities({ ...LOCAL_TOOL_OPTIONS, taskQueue: config.toolTaskQueue, summary });
  const { facts } = await proxy.gatherPermissionFacts({ cwd: config.cwd, homeDir, calls: [{ toolUseId: block.id, name: block.name, input: block.input }] });
  return facts.find((fact) => fact.toolUseId === block.id);
}
