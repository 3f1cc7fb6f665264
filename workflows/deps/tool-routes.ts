/**
 * Tools that do not run as `runTool` on the workspace (issues 21, 22): the workflow answers them
 * itself (the task list, ScheduleWakeup, cron jobs) or routes them to their own activities
 * (background commands, MCP servers, background agents). Each of the session's parts lists its
 * routes, in the parts' order (session/parts.ts); the first route that takes a call runs it,
 * after the permission check passed, instead of the default path in tool-run.ts.
 */
import type { ToolUseBlock } from '../../common/messages';
import type { ToolRoute } from './query-host';

export type { ToolOutcome, ToolRoute, ToolRouteCall } from './query-host';

/** The route that runs this call, if any. */
export function routeFor(routes: readonly ToolRoute[], block: ToolUseBlock): ToolRoute | undefined {
  return routes.find((route) => route.takes(block));
}
