/** Types shared by the tool implementations and their dispatcher (own module, so neither imports the other). */

/** What a tool needs from its caller. */
export interface ToolExecutionContext {
  /** Directory relative paths resolve against and Bash runs in. */
  cwd: string;
  /** Aborting cancels the tool; executeTool then throws the signal's reason. */
  signal: AbortSignal;
  /** Streamed output (Bash), e.g. for heartbeats and live status. */
  onProgress?: (chunk: string) => void;
  /**
   * Environment variables every process the tool starts inherits (Bash). The journal marks
   * commands with the tool_use id, so a retry can find what a dead worker left running.
   */
  processEnv?: Record<string, string>;
}

/** A tool_result's content and is_error flag. */
export interface ToolExecutionResult {
  content: string;
  isError: boolean;
}
