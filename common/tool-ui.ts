/**
 * How a tool call presents itself in the Temporal UI, on both sides: its one-line summary (the
 * activity's summary, the heartbeat details), and the failure a tool error is reported as.
 * Pure: imported by the workflow bundle.
 */
import { NETWORK_REQUEST_TOOL } from './network-request';
import { getToolSpec } from './tool-specs';
import { oneLine, shorten } from './cut-text';
import { resultSummary } from './stream-items';

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
  /** The workspace checkpoint taken before the call (issue 31), as on RunToolResult. */
  checkpointId?: string;
}

/** "Bash: node test.js", "Read math.js"; the tool's name when its input does not parse. */
export function toolCallSummary(name: string, input: unknown): string {
  const spec = getToolSpec(name);
  if (name === NETWORK_REQUEST_TOOL) {
    const { host, port } = (input ?? {}) as { host?: unknown; port?: unknown };
    return `Network request outside of sandbox: ${String(host)}:${String(port)}`;
  }
  // A tool without a spec of ours (an MCP server's): its fields, `mcp__github__get_issue: owner: a, number: 7`.
  if (!spec) {
    const fields = inputFields(input);
    return fields ? `${name}: ${fields}` : name;
  }
  const parsed = spec.inputSchema.safeParse(input);
  if (!parsed.success) return `${spec.name} (invalid input)`;
  try {
    return spec.summarize(parsed.data);
  } catch {
    return spec.name;
  }
}

/**
 * The one line a finished call's live `tool_end` item carries: its descriptor's words for the
 * result when they fit one line (`Read 11 lines`, `Found 4 files`), else the result's first line
 * (`resultSummary`: a command's output, an error).
 */
export function toolEndSummary(name: string, input: unknown, content: string, isError: boolean): string {
  const spec = getToolSpec(name);
  const parsed = !isError && spec?.describeResult ? spec.inputSchema.safeParse(input) : undefined;
  if (spec?.describeResult && parsed?.success) {
    try {
      const body = content.replace(/\n*<system-reminder>[\s\S]*?<\/system-reminder>\s*/g, '\n').replace(/\s+$/, '');
      const described = spec.describeResult(parsed.data, body);
      if (described !== undefined && !described.includes('\n')) return shorten(described, 120);
    } catch {
      /* the first line below */
    }
  }
  return resultSummary(content);
}

/** A call's input in a few words: `key: value, …` on one line (100 characters at most). */
export function inputFields(input: unknown, maxLength = 100): string {
  if (input === null || typeof input !== 'object') return input === undefined ? '' : oneLine(JSON.stringify(input) ?? '', maxLength);
  const fields = Object.entries(input as Record<string, unknown>).map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  return oneLine(fields.join(', '), maxLength);
}

/** The failure message: "Bash: node test.js failed: Error: expected 6, got 5" (one line, short). */
export function toolErrorMessage(summary: string, content: string): string {
  const firstLine =
    content
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim() ?? 'no output';
  const line = shorten(firstLine, 200);
  return `${summary} failed: ${line}`;
}

/** Heartbeat details of a running tool (the UI's pending activity): which tool, and its output's tail. */
export interface ToolHeartbeatDetails {
  tool: string;
  summary: string;
  outputTail: string;
}
