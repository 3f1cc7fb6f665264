/**
 * The input of a tool the workflow answers itself (issue 21: the task list, ScheduleWakeup, cron
 * jobs), checked against its spec's schema: invalid input is a tool error the model can act on
 * (style §9), never an exception.
 */
import type { ToolUseBlock } from '../../common/messages';
import { getToolSpec } from '../../common/tool-specs';
import type { ToolOutcome } from '../deps/query-host';

/** The parsed input, or the error result to return. */
export function parseRouteInput<T>(block: ToolUseBlock): { ok: true; input: T } | { ok: false; outcome: ToolOutcome } {
  const spec = getToolSpec(block.name);
  if (!spec) return { ok: false, outcome: { isError: true, content: `No such tool available: ${block.name}` } };
  const parsed = spec.inputSchema.safeParse(block.input);
  if (parsed.success) return { ok: true, input: parsed.data as T };
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`).join('; ');
  return { ok: false, outcome: { isError: true, content: `Invalid ${block.name} input: ${problems}` } };
}
