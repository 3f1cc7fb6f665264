/**
 * Facts for a permission decision, gathered where the tool acts (issue 17, style §20): the
 * workflow cannot parse Bash with a real grammar nor resolve a symbolic link, so the
 * `gatherPermissionFacts` activity does, on the workspace's host, and its recorded result is what
 * the gate decides on (replay reads it back). A local activity when tools run on the workflow's
 * own queue (no server round trip); a regular one on the workspace's queue otherwise.
 */
import { workflowInfo } from '@temporalio/workflow';
import type { ConversationConfig } from '../../common/config';
import type { ToolUseBlock } from '../../common/messages';
import type { CallFacts } from '../../common/permission-facts';
import { toolCallSummary } from '../../common/tool-ui';
import { LOCAL_TOOL_OPTIONS, activities, localActivities } from './activity-options';

/** The call's facts, from the activity on the workspace's host. */
export async function gatherCallFacts(config: ConversationConfig, block: ToolUseBlock, homeDir: string | undefined): Promise<CallFacts | undefined> {
  return (await gatherCallsFacts(config, [block], homeDir)).find((fact) => fact.toolUseId === block.id);
}

/** Several calls' facts from one activity (issue 29: a reply's Bash calls, gathered before the reply is partitioned). */
export async function gatherCallsFacts(config: ConversationConfig, blocks: readonly ToolUseBlock[], homeDir: string | undefined): Promise<CallFacts[]> {
  if (blocks.length === 0) return [];
  const local = config.toolTaskQueue === undefined || config.toolTaskQueue === workflowInfo().taskQueue;
  const more = blocks.length > 1 ? ` (and ${blocks.length - 1} more)` : '';
  const summary = `Check permission: ${toolCallSummary(blocks[0].name, blocks[0].input)}${more}`;
  const proxy = local ? localActivities({ ...LOCAL_TOOL_OPTIONS, summary }) : activities({ ...LOCAL_TOOL_OPTIONS, taskQueue: config.toolTaskQueue, summary });
  const { facts } = await proxy.gatherPermissionFacts({
    cwd: config.cwd,
    homeDir,
    calls: blocks.map((block) => ({ toolUseId: block.id, name: block.name, input: block.input })),
  });
  return facts;
}
