/**
 * How a tool call presents itself in the Temporal UI, on both sides: its one-line summary (the
 * activity's summary, the heartbeat details), and the failure a tool error is reported as.
 * Pure: imported by the workflow bundle.
 */
import { getToolSpec } from './tool-specs';
import { shorten } from './cut-text';

/**
 * Failure type of a tool call that ended in error. The runTool activity fails with it
 * (non-retryable, BENIGN: no warning logs, no failure metrics) so the UI shows the call in red
 * at a glance, instead of a green "completed" whose result says `isError: true`; the workflow
 * turns it back into the `is_error` tool_result the model gets (style §9: tool failures are data).
 */
export const TOOL_ERROR_FAILURE_TYPE = 'ToolError';

/** What a ToolError failure carries in its details: the result the model gets. */
export interface ToolErrorDetails {
  content: string;
  persistedPath?: string;
}

/** "Bash: node test.js", "Read math.js"; the tool's name when its input does not parse. */
export function toolCallSummary(name: string, input: unknown): string {
  const spec = getToolSpec(name);
  if (!spec) return name;
  const parsed = spec.inputSchema.safeParse(input);
  if (!parsed.success) return `${spec.name} (invalid input)`;
  try {
    return spec.summarize(parsed.data);
  } catch {
    return spec.name;
  }
}

/** The failure message: "Bash: node test.js failed: Error: expected 6, got 5" (one line, short). */
export function toolErrorMessage(summary: string, content: string): string {
  const firstLine = content.split('\n').find((line) => line.trim() !== '')?.trim() ?? 'no output';
  const line = shorten(firstLine, 200);
  return `${summary} failed: ${line}`;
}

/** Heartbeat details of a running tool (the UI's pending activity): which tool, and its output's tail. */
export interface ToolHeartbeatDetails {
  tool: string;
  summary: string;
  outputTail: string;
}
